# SPDX-License-Identifier: Apache-2.0
"""Genie's Python start-up hook. `genie run` and `genie env` put this folder first on PYTHONPATH, so Python imports
this file at start-up (the `site` module imports `sitecustomize`). It does two things:

1. It runs the sitecustomize that this one hides (Debian's, a virtual environment's), if there is one.
2. When the program imports torch, it installs genie_small_values (docs/pytorch.md, "Small values"), unless
   GENIE_TORCH_SMALL_VALUES=0. A program that never imports torch pays for one import hook and nothing else.
3. With GENIE_APP_CLOCK=python (`genie run --app-clock python`), time.time, time.time_ns, time.perf_counter and
   time.perf_counter_ns read the calling thread's virtual time (libcudart's genie_app_clock_ns) once the CUDA
   emulation has started, and the real clock before; time.monotonic and every C clock stay real, so timeouts keep
   working (docs/pytorch.md, "Clocks").
"""
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))


def _chain():
    """Runs the next sitecustomize on sys.path after this folder (the one this file hides)."""
    rest = [p for p in sys.path if os.path.abspath(p or ".") != _here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None or os.path.abspath(spec.origin or "") == os.path.abspath(__file__):
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


class _TorchHook(importlib.abc.MetaPathFinder):
    """Waits for `import torch` to finish, then installs the small-value mechanism once."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        exec_module = loader.exec_module

        def exec_and_install(module):
            exec_module(module)
            try:
                import genie_small_values
                genie_small_values.install()
            except Exception as e:  # noqa: BLE001 - never break the program's import of torch
                print(f"[genie] small values not installed: {type(e).__name__}: {e}", file=sys.stderr)

        loader.exec_module = exec_and_install
        return spec


def _install_python_clock():
    """Python's own time-of-day and performance counters on the virtual clock (GENIE_APP_CLOCK=python)."""
    import ctypes
    import time

    lib = None
    for name in ("libcudart.so.13", "libcudart.so.12"):
        try:
            lib = ctypes.CDLL(name)
            if hasattr(lib, "genie_app_clock_ns"):
                break
        except OSError:
            lib = None
    if lib is None or not hasattr(lib, "genie_app_clock_ns"):
        print("[genie] GENIE_APP_CLOCK=python: Genie's libcudart is not loaded; Python's clocks stay real",
              file=sys.stderr)
        return
    now = lib.genie_app_clock_ns
    now.restype = ctypes.c_int64
    now.argtypes = [ctypes.c_int]
    real_time_ns, real_perf_ns = time.time_ns, time.perf_counter_ns

    def time_ns():
        v = now(1)
        return v if v >= 0 else real_time_ns()

    def perf_counter_ns():
        v = now(0)
        return v if v >= 0 else real_perf_ns()

    time.time_ns = time_ns
    time.perf_counter_ns = perf_counter_ns
    time.time = lambda: time_ns() / 1e9
    time.perf_counter = lambda: perf_counter_ns() / 1e9


try:
    _chain()
except Exception as e:  # noqa: BLE001 - a broken sitecustomize elsewhere must not stop the program
    print(f"[genie] the next sitecustomize failed: {type(e).__name__}: {e}", file=sys.stderr)

if os.environ.get("GENIE_TORCH_SMALL_VALUES", "1").lower() not in ("0", "false", "off", "no"):
    sys.meta_path.insert(0, _TorchHook())

if os.environ.get("GENIE_APP_CLOCK", "") == "python":
    try:
        _install_python_clock()
    except Exception as e:  # noqa: BLE001 - never break the program's start
        print(f"[genie] GENIE_APP_CLOCK=python not installed: {type(e).__name__}: {e}", file=sys.stderr)
