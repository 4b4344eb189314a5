// SPDX-License-Identifier: Apache-2.0
// GilRelease: the CPython API is looked up in the process (dlsym), never linked: a CUDA program without Python has
// none, and Python programs bring their own libpython (or a static interpreter that exports it).
#include "python_gil.hpp"

#include <dlfcn.h>

namespace genie::fakecuda {
namespace {

struct PythonApi {
  int (*is_initialized)() = nullptr;     // Py_IsInitialized
  int (*gil_check)() = nullptr;          // PyGILState_Check: 1 when this thread holds the GIL
  void* (*save_thread)() = nullptr;      // PyEval_SaveThread: releases it, returns the thread state
  void (*restore_thread)(void*) = nullptr;  // PyEval_RestoreThread: takes it back
  bool ok() const { return is_initialized && gil_check && save_thread && restore_thread; }
};

const PythonApi& python_api() {
  static const PythonApi api = [] {
    PythonApi a;
    a.is_initialized = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "Py_IsInitialized"));
    a.gil_check = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "PyGILState_Check"));
    a.save_thread = reinterpret_cast<void* (*)()>(dlsym(RTLD_DEFAULT, "PyEval_SaveThread"));
    a.restore_thread = reinterpret_cast<void (*)(void*)>(dlsym(RTLD_DEFAULT, "PyEval_RestoreThread"));
    return a;
  }();
  return api;
}

}  // namespace

GilRelease::GilRelease() {
  const PythonApi& py = python_api();
  if (!py.ok() || py.is_initialized() == 0 || py.gil_check() == 0) return;
  state_ = py.save_thread();
}

GilRelease::~GilRelease() {
  if (state_ != nullptr) python_api().restore_thread(state_);
}

}  // namespace genie::fakecuda
