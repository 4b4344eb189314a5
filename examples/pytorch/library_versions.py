# SPDX-License-Identifier: Apache-2.0
"""library_versions.py: the library versions a PyTorch program sees on Genie are those of the wheels it brought.

torch checks at `torch.backends.cudnn.version()` that the cuDNN it finds has the major and at least the minor it was
compiled against ("cuDNN version incompatibility: PyTorch was compiled against (9, 26, 0) but found runtime version
(9, 19, 0)"), so Genie's libcudnn.so.9 reports the version of the nvidia-cudnn wheel next to torch, and its cuBLAS
that of the nvidia-cublas wheel. The CUDA runtime and driver report 13.2 (torch 2.15 is the CUDA 13.2 build; 2.11
the 13.0 one, which a 13.2 driver serves too). Prints one golden line per check and "library_versions: N failed".
"""
import ctypes
import importlib.metadata as md
import sys

import torch

failures = 0


def expect(what, expected, actual):
    global failures
    ok = expected == actual
    failures += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {what}: Expectation {expected} / Actual {actual}")


def wheel_version(*names):
    """(major, minor, patch) of the first installed distribution of `names`, or None."""
    for name in names:
        try:
            parts = md.version(name).split(".")
        except md.PackageNotFoundError:
            continue
        return tuple(int(p) for p in (parts + ["0", "0"])[:3])
    return None


def encoded(v):
    return v[0] * 10000 + v[1] * 100 + v[2]


cudnn_wheel = wheel_version("nvidia-cudnn-cu13", "nvidia-cudnn-cu12")
cublas_wheel = wheel_version("nvidia-cublas", "nvidia-cublas-cu13")
print("torch", torch.__version__, "CUDA", torch.version.cuda, "cuDNN wheel", cudnn_wheel, "cuBLAS wheel", cublas_wheel)

expect("CUDA is available", True, torch.cuda.is_available())
# The compatibility check runs here; it raises when the versions disagree.
try:
    cudnn = torch.backends.cudnn.version()
except RuntimeError as e:
    cudnn = f"RuntimeError: {e}"
expect("torch.backends.cudnn.version() is the wheel's", encoded(cudnn_wheel), cudnn)
expect("torch.backends.cudnn.is_available()", True, torch.backends.cudnn.is_available())

# The preloaded libraries answer by soname.
cublaslt = ctypes.CDLL("libcublasLt.so.13")
cublaslt.cublasLtGetVersion.restype = ctypes.c_size_t
expect("cublasLtGetVersion is the wheel's", encoded(cublas_wheel), cublaslt.cublasLtGetVersion())
cudart = ctypes.CDLL("libcudart.so.13")
rt, drv = ctypes.c_int(), ctypes.c_int()
cudart.cudaRuntimeGetVersion(ctypes.byref(rt))
cudart.cudaDriverGetVersion(ctypes.byref(drv))
expect("cudaRuntimeGetVersion (CUDA 13.2)", 13020, rt.value)
expect("cudaDriverGetVersion (CUDA 13.2)", 13020, drv.value)
expect("torch sees a driver at least as new as its CUDA", True,
       drv.value >= int(torch.version.cuda.split(".")[0]) * 1000 + int(torch.version.cuda.split(".")[1]) * 10)

# A little work through cuBLAS and a CUDA graph, so the versions are those of a working stack (kernels are timed, not
# run, on Genie: the checks are that the calls succeed, not the values).
a = torch.randn(64, 64, device="cuda")
b = a @ a
g = torch.cuda.CUDAGraph()
static = torch.zeros(8, device="cuda")
with torch.cuda.graph(g):
    static.add_(1)
g.replay()
g.replay()
torch.cuda.synchronize()
expect("matmul and a captured graph ran", (64, 64), tuple(b.shape))

print(f"library_versions: {failures} failed")
sys.exit(1 if failures else 0)
