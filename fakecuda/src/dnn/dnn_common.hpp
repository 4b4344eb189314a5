// SPDX-License-Identifier: Apache-2.0
// What the cuDNN drop-in's sources share: the error path (cudnnGetLastErrorString's text, a logged warning), the
// exception guard of every entry point, and the live handles.
#pragma once

#include <cudnn.h>

#include <memory>
#include <new>
#include <shared_mutex>
#include <unordered_map>

#include "genie/common/log.hpp"

#define GENIE_CUDNN_EXPORT extern "C" __attribute__((visibility("default")))

namespace genie::fakecuda::dnn {

/// Records "fn: what" as the thread's last error (cudnnGetLastErrorString), logs it, and returns `st`.
cudnnStatus_t fail(const char* fn, const char* what, cudnnStatus_t st);
/// Same with a formatted message.
cudnnStatus_t fail(const char* fn, const std::string& what, cudnnStatus_t st);
/// The thread's last error text (cleared by cudnnGetLastErrorString).
char* last_error_buffer();
size_t last_error_capacity();

/// Runs an entry point's body; exceptions become cuDNN statuses with the reason recorded.
template <class F>
cudnnStatus_t guard(const char* fn, F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(fn, "out of host memory", CUDNN_STATUS_ALLOC_FAILED);
  } catch (const std::exception& e) {
    return fail(fn, e.what(), CUDNN_STATUS_INTERNAL_ERROR);
  } catch (...) {
    return fail(fn, "internal error", CUDNN_STATUS_INTERNAL_ERROR);
  }
}

/// A cudnnHandle_t: the stream its work goes to.
struct DnnHandle {
  static constexpr uint32_t kMagic = 0x63646e6eu;  // "cdnn"
  uint32_t magic = kMagic;
  cudaStream_t stream = nullptr;
};

/// The live handle at `h` or nullptr (null, destroyed or foreign pointers).
DnnHandle* find_handle(const void* h);

}  // namespace genie::fakecuda::dnn
