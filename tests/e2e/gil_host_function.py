#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""e2e test: a CUDA wait by a thread that holds Python's GIL, on a stream whose host function is Python code.

Genie runs host functions (cudaLaunchHostFunc) on its own stream threads; a Python callback (ctypes, as the
small-value mode's flushes are) needs the GIL there. PyTorch synchronizes streams while holding the GIL (a
synchronous copy); on a GPU that is harmless, on Genie the wait could be for the callback waiting for the GIL. This
script does exactly that: a Python host function, then cudaStreamSynchronize through ctypes.PyDLL (which keeps the
GIL during the call), with the interpreter told not to hand the GIL over on its own. Expectation: the wait returns
and the callback ran once ("gil_host_function: 0 failed"); before the fix (fakecuda/src/python_gil.hpp) it hung.

    LD_LIBRARY_PATH=BUILD/lib python3 gil_host_function.py
"""
import ctypes
import sys

failures = 0


def expect(what, ok, expected, actual):
    global failures
    print(f"{'ok  ' if ok else 'FAIL'} {what}: Expectation {expected} / Actual {actual}", flush=True)
    failures += 0 if ok else 1


def main():
    sys.setswitchinterval(100.0)  # the main thread keeps the GIL between its two calls below
    cudart = ctypes.CDLL("libcudart.so.13")  # releases the GIL during calls
    held = ctypes.PyDLL("libcudart.so.13")   # keeps it, as a C++ extension's call would
    stream = ctypes.c_void_p()
    expect("cudaStreamCreate", cudart.cudaStreamCreate(ctypes.byref(stream)) == 0, 0, "see above")
    ran = []
    hostfn_t = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

    @hostfn_t
    def host_fn(_):
        ran.append(1)

    cudart.cudaLaunchHostFunc.argtypes = [ctypes.c_void_p, hostfn_t, ctypes.c_void_p]
    rc = cudart.cudaLaunchHostFunc(stream, host_fn, None)
    held.cudaStreamSynchronize.argtypes = [ctypes.c_void_p]
    sync = held.cudaStreamSynchronize(stream)
    expect("cudaLaunchHostFunc, then cudaStreamSynchronize holding the GIL", rc == 0 and sync == 0, "0 and 0",
           f"{rc} and {sync}")
    expect("the Python host function ran before the wait returned", len(ran) == 1, 1, len(ran))
    print(f"gil_host_function: {failures} failed")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
