// SPDX-License-Identifier: Apache-2.0
// State shared by the drop-in cuBLAS and cuBLASLt libraries: library handles (a cublasHandle_t is also a valid
// cublasLtHandle_t, as with NVIDIA's libraries: PyTorch casts one to the other) and the enqueueing of timed
// library work on a stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <shared_mutex>
#include <unordered_map>

#include "genie/common/sim_time.hpp"
#include "genie/common/status.hpp"

namespace genie::fakecuda {

class Runtime;

/// A cuBLAS or cuBLASLt context. Its address is the C handle. Fields are plain state read and written by the
/// ABI layers; like NVIDIA's handles, one handle must not be configured from two threads at once.
struct BlasHandle {
  static constexpr uint32_t kMagic = 0x626c6173u;  // "blas"
  uint32_t magic = kMagic;
  bool lt = false;                 ///< created by cublasLtCreate (still usable by either library)
  int device = 0;                  ///< current device at creation
  const void* stream = nullptr;    ///< cudaStream_t set by cublasSetStream (nullptr: legacy default stream)
  void* workspace = nullptr;       ///< cublasSetWorkspace (nullptr: the library's own)
  size_t workspace_bytes = 0;
  int math_mode = 0;               ///< cublasMath_t bits (CUBLAS_DEFAULT_MATH)
  int pointer_mode = 0;            ///< CUBLAS_POINTER_MODE_HOST
  int atomics_mode = 0;            ///< CUBLAS_ATOMICS_NOT_ALLOWED
  int sm_count_target = 0;
  int emulation_strategy = 0;
  int emulation_special_values = 0;
  int mantissa_control = 0;
  int max_mantissa_bits = 0;
  int mantissa_bit_offset = 0;
  int* mantissa_bit_count_pointer = nullptr;
};

/// Live library handles of the process. Thread-safe.
class BlasRegistry {
 public:
  static BlasRegistry& instance();
  /// A new handle bound to `device`; owned by the registry until destroy().
  BlasHandle* create(int device, bool lt);
  /// Destroys a live handle; false when `h` is not one.
  bool destroy(const void* h);
  /// The live handle at `h`, or nullptr (null, destroyed or foreign pointers).
  BlasHandle* find(const void* h) const;
  size_t live() const;

 private:
  mutable std::shared_mutex mu_;
  std::unordered_map<const void*, std::unique_ptr<BlasHandle>> handles_;
};

/// Enqueues `duration` of GPU work labelled `label` (a static string) on `stream` (a cudaStream_t; nullptr is
/// the legacy default stream of the current device) of the process runtime, charging the calling host thread one
/// kernel launch (the cost model's launch overhead: a library call launches its kernel like any other). When
/// `blocking`, the host then waits for the work (a result returned in host memory). kNotFound for an invalid
/// stream; the runtime's init error when it cannot start.
/// `action`, when set, runs in stream order (writes of small results such as LAPACK info arrays).
Status enqueue_library_work(Runtime& rt, const void* stream, const char* label, SimTime duration,
                            bool blocking = false, std::function<void()> action = {});

/// The process runtime (nullptr with the reason in *status when it cannot start).
Runtime* library_runtime(Status* status);

}  // namespace genie::fakecuda
