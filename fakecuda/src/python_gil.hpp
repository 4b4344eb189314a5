// SPDX-License-Identifier: Apache-2.0
// Letting go of Python's GIL while a CUDA wait blocks (fakecuda/src/python_gil.cpp).
#pragma once

namespace genie::fakecuda {

/// For its lifetime, releases the GIL if the calling thread holds it (a Python program's thread inside a CUDA call),
/// and takes it back at the end. Does nothing in a process without Python or on a thread that does not hold it.
///
/// Why: Genie runs Python code on its stream threads (the small-value mode's host functions, ctypes callbacks that
/// take the GIL). A GPU's stream never needs the GIL, so PyTorch calls cudaStreamSynchronize while holding it (a
/// synchronous copy, `torch.tensor(x, device="cuda")`); on Genie that wait could be for a host function waiting for
/// the GIL, a deadlock. Held across a blocking wait only (Runtime::wait_point).
class GilRelease {
 public:
  GilRelease();
  ~GilRelease();
  GilRelease(const GilRelease&) = delete;
  GilRelease& operator=(const GilRelease&) = delete;

 private:
  void* state_ = nullptr;  ///< the PyThreadState PyEval_SaveThread returned
};

}  // namespace genie::fakecuda
