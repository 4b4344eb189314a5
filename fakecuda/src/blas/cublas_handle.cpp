// SPDX-License-Identifier: Apache-2.0
// cuBLAS ABI: handle life cycle and modes, version queries, status strings, logging, and the host<->device
// vector/matrix helpers (real, stream-ordered copies of the bytes).
#include <algorithm>
#include <mutex>

#include "blas_common.hpp"

using namespace genie::fakecuda;
using namespace genie::fakecuda::blas;

namespace {

// Set/Get{Vector,Matrix}: `count` runs of `width` bytes, `spitch`/`dpitch` bytes apart, as one stream op (the copy
// model times it by its total bytes, like cudaMemcpy2D). Every run's ends are checked against the allocation
// registry before anything is queued.
cublasStatus_t strided_copy(const char* fn, void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                            size_t count, const void* stream, bool sync) {
  Runtime* r = runtime_or_log(fn);
  if (r == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (count == 0 || width == 0) return CUBLAS_STATUS_SUCCESS;
  Stream* s = r->resolve_stream(stream, false);
  if (s == nullptr) return reject(fn, "stream", CUBLAS_STATUS_MAPPING_ERROR);
  MemoryRegistry& mem = r->memory();
  for (size_t i = 0; i < count; i += std::max<size_t>(1, count - 1)) {
    const char* sp = static_cast<const char*>(src) + i * spitch;
    char* dp = static_cast<char*>(dst) + i * dpitch;
    if (!mem.find(dp, width) || !mem.find(sp, width)) {
      // One side must be device memory and both ranges must be mapped; cuBLAS reports a failed copy this way.
      auto d = mem.find(dp);
      auto sr = mem.find(sp);
      if ((d && !mem.find(dp, width)) || (sr && !mem.find(sp, width)) || (!d && !sr))
        return reject(fn, "device pointer range", CUBLAS_STATUS_MAPPING_ERROR);
    }
  }
  auto d = mem.find(dst);
  auto sr = mem.find(src);
  const bool dst_dev = d && d->is_device();
  const bool src_dev = sr && sr->is_device();
  CopyKind kind = dst_dev ? (src_dev ? CopyKind::kDeviceToDevice : CopyKind::kHostToDevice)
                          : (src_dev ? CopyKind::kDeviceToHost : CopyKind::kHostToHost);
  const bool pinned = (!dst_dev && d) || (!src_dev && sr);
  genie::sched::OpSpec op;
  op.label = copy_kind_name(kind);
  op.duration = r->cost_model().copy(kind, width * count, pinned);
  MemoryRegistry* mp = &mem;
  // Timing only (GENIE_DATA=none): nothing read or written, unless both sides are the program's host memory.
  if (kind == CopyKind::kHostToHost || r->moves_bytes(width * count))
    op.action = [=] {
      for (size_t i = 0; i < count; ++i)
        (void)mp->copy(static_cast<char*>(dst) + i * dpitch, static_cast<const char*>(src) + i * spitch, width);
    };
  r->api_call();
  genie::Status st = r->submit(*s, std::move(op)).status();
  if (st.is_ok() && sync) st = r->synchronize(*s);
  return to_cublas(st);
}

cublasStatus_t vector_copy(const char* fn, int64_t n, int64_t elem, const void* x, int64_t incx, void* y,
                           int64_t incy, const void* stream, bool sync) {
  if (n < 0) return reject(fn, "n");
  if (elem <= 0) return reject(fn, "elemSize");
  if (incx <= 0) return reject(fn, "incx");
  if (incy <= 0) return reject(fn, "incy");
  if (n > 0 && (x == nullptr || y == nullptr)) return reject(fn, x == nullptr ? "x" : "y");
  return strided_copy(fn, y, static_cast<size_t>(incy * elem), x, static_cast<size_t>(incx * elem),
                      static_cast<size_t>(elem), static_cast<size_t>(n), stream, sync);
}

cublasStatus_t matrix_copy(const char* fn, int64_t rows, int64_t cols, int64_t elem, const void* a, int64_t lda,
                           void* b, int64_t ldb, const void* stream, bool sync) {
  if (rows < 0) return reject(fn, "rows");
  if (cols < 0) return reject(fn, "cols");
  if (elem <= 0) return reject(fn, "elemSize");
  if (lda <= 0) return reject(fn, "lda");
  if (ldb <= 0) return reject(fn, "ldb");
  // A leading dimension below rows is no argument error for cuBLAS: the strided copy it makes is refused, and it
  // answers MAPPING_ERROR (cuBLAS 13.0 on an H200, docs/validation.md).
  if (lda < rows) return reject(fn, "lda (less than rows: the strided copy is refused)", CUBLAS_STATUS_MAPPING_ERROR);
  if (ldb < rows) return reject(fn, "ldb (less than rows: the strided copy is refused)", CUBLAS_STATUS_MAPPING_ERROR);
  if (rows > 0 && cols > 0 && (a == nullptr || b == nullptr)) return reject(fn, a == nullptr ? "A" : "B");
  return strided_copy(fn, b, static_cast<size_t>(ldb * elem), a, static_cast<size_t>(lda * elem),
                      static_cast<size_t>(rows * elem), static_cast<size_t>(cols), stream, sync);
}

std::mutex g_logger_mu;
cublasLogCallback g_logger_callback = nullptr;

}  // namespace

// --- handles ---------------------------------------------------------------------------------------------------
GENIE_CUBLAS_EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  return guard(__func__, [&]() -> cublasStatus_t {
    if (handle == nullptr) return reject(__func__, "handle");
    Runtime* r = runtime_or_log("cublasCreate_v2");
    if (r == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    *handle = reinterpret_cast<cublasHandle_t>(BlasRegistry::instance().create(r->current_device(), false));
    return CUBLAS_STATUS_SUCCESS;
  });
}

GENIE_CUBLAS_EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  return guard(__func__, [&]() -> cublasStatus_t {
    if (!BlasRegistry::instance().destroy(handle)) return reject(__func__, "handle", CUBLAS_STATUS_NOT_INITIALIZED);
    return CUBLAS_STATUS_SUCCESS;
  });
}

GENIE_CUBLAS_EXPORT cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int* version) {
  return guard(__func__, [&]() -> cublasStatus_t {
    GENIE_BLAS_HANDLE(h, handle);
    GENIE_BLAS_CHECK(version == nullptr, "version");
    *version = reported_version().encoded();
    return CUBLAS_STATUS_SUCCESS;
  });
}

GENIE_CUBLAS_EXPORT cublasStatus_t cublasGetProperty(libraryPropertyType type, int* value) {
  return guard(__func__, [&]() -> cublasStatus_t {
    GENIE_BLAS_CHECK(value == nullptr, "value");
    switch (enum_raw(type)) {
      case MAJOR_VERSION: *value = reported_version().major; return CUBLAS_STATUS_SUCCESS;
      case MINOR_VERSION: *value = reported_version().minor; return CUBLAS_STATUS_SUCCESS;
      case PATCH_LEVEL: *value = reported_version().patch; return CUBLAS_STATUS_SUCCESS;
      default: return reject(__func__, "type");
    }
  });
}

GENIE_CUBLAS_EXPORT size_t cublasGetCudartVersion(void) { return kCudartVersion; }

GENIE_CUBLAS_EXPORT cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void* workspace, size_t bytes) {
  return guard(__func__, [&]() -> cublasStatus_t {
    GENIE_BLAS_HANDLE(h, handle);
    // cuBLAS documents 256-byte alignment for the workspace but accepts less (cuBLAS 13.0 on an H200,
    // docs/validation.md), so Genie does too.
    GENIE_BLAS_CHECK(bytes > 0 && workspace == nullptr, "workspace");
    h->workspace = workspace;
    h->workspace_bytes = workspace == nullptr ? 0 : bytes;
    return CUBLAS_STATUS_SUCCESS;
  });
}

GENIE_CUBLAS_EXPORT cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  return guard(__func__, [&]() -> cublasStatus_t {
    GENIE_BLAS_HANDLE(h, handle);
    h->stream = stream;
    // cuBLAS documentation (cublasSetStream): the user workspace is reset to the default workspace pool.
    h->workspace = nullptr;
    h->workspace_bytes = 0;
    return CUBLAS_STATUS_SUCCESS;
  });
}

GENIE_CUBLAS_EXPORT cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t* stream) {
  return guard(__func__, [&]() -> cublasStatus_t {
    GENIE_BLAS_HANDLE(h, handle);
    GENIE_BLAS_CHECK(stream == nullptr, "streamId");
    *stream = static_cast<cudaStream_t>(const_cast<void*>(h->stream));
    return CUBLAS_STATUS_SUCCESS;
  });
}

// Mode getters and setters: the value is checked against the enum's members and stored.
#define GENIE_BLAS_MODE(Name, Type, field, valid)                                               \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublasGet##Name(cublasHandle_t handle, Type* mode) {        \
    return guard(__func__, [&]() -> cublasStatus_t {                                             \
      GENIE_BLAS_HANDLE(h, handle);                                                              \
      GENIE_BLAS_CHECK(mode == nullptr, "mode");                                                 \
      int v = h->field;                                                                          \
      std::memcpy(mode, &v, sizeof(v));                                                          \
      return CUBLAS_STATUS_SUCCESS;                                                              \
    });                                                                                          \
  }                                                                                              \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublasSet##Name(cublasHandle_t handle, Type mode) {         \
    return guard(__func__, [&]() -> cublasStatus_t {                                             \
      GENIE_BLAS_HANDLE(h, handle);                                                              \
      int v = enum_raw(mode);                                                                    \
      GENIE_BLAS_CHECK(!(valid), "mode");                                                        \
      h->field = v;                                                                              \
      return CUBLAS_STATUS_SUCCESS;                                                              \
    });                                                                                          \
  }

GENIE_BLAS_MODE(PointerMode_v2, cublasPointerMode_t, pointer_mode,
                v == CUBLAS_POINTER_MODE_HOST || v == CUBLAS_POINTER_MODE_DEVICE)
GENIE_BLAS_MODE(AtomicsMode, cublasAtomicsMode_t, atomics_mode,
                v == CUBLAS_ATOMICS_NOT_ALLOWED || v == CUBLAS_ATOMICS_ALLOWED)
// cublasMath_t: one base mode, optionally with the DISALLOW_REDUCED_PRECISION_REDUCTION flag.
GENIE_BLAS_MODE(MathMode, cublasMath_t, math_mode,
                ((v & ~CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) == CUBLAS_DEFAULT_MATH ||
                 (v & ~CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) == CUBLAS_TENSOR_OP_MATH ||
                 (v & ~CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) == CUBLAS_PEDANTIC_MATH ||
                 (v & ~CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) == CUBLAS_TF32_TENSOR_OP_MATH ||
                 (v & ~CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) == CUBLAS_FP32_EMULATED_BF16X9_MATH ||
                 (v & ~CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) == CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH))
GENIE_BLAS_MODE(EmulationStrategy, cublasEmulationStrategy_t, emulation_strategy,
                v >= CUBLAS_EMULATION_STRATEGY_DEFAULT && v <= CUBLAS_EMULATION_STRATEGY_EAGER)
GENIE_BLAS_MODE(EmulationSpecialValuesSupport, cudaEmulationSpecialValuesSupport, emulation_special_values,
                (v & ~0xFFFF) == 0)
GENIE_BLAS_MODE(FixedPointEmulationMantissaControl, cudaEmulationMantissaControl, mantissa_control,
                v == CUDA_EMULATION_MANTISSA_CONTROL_DYNAMIC || v == CUDA_EMULATION_MANTISSA_CONTROL_FIXED)
GENIE_BLAS_MODE(SmCountTarget, int, sm_count_target, v >= 0)
GENIE_BLAS_MODE(FixedPointEmulationMaxMantissaBitCount, int, max_mantissa_bits, v >= 0)
GENIE_BLAS_MODE(FixedPointEmulationMantissaBitOffset, int, mantissa_bit_offset, true)
#undef GENIE_BLAS_MODE

GENIE_CUBLAS_EXPORT cublasStatus_t cublasGetFixedPointEmulationMantissaBitCountPointer(cublasHandle_t handle,
                                                                                       int** p) {
  return guard(__func__, [&]() -> cublasStatus_t {
    GENIE_BLAS_HANDLE(h, handle);
    GENIE_BLAS_CHECK(p == nullptr, "mantissaBitCount");
    *p = h->mantissa_bit_count_pointer;
    return CUBLAS_STATUS_SUCCESS;
  });
}

GENIE_CUBLAS_EXPORT cublasStatus_t cublasSetFixedPointEmulationMantissaBitCountPointer(cublasHandle_t handle, int* p) {
  return guard(__func__, [&]() -> cublasStatus_t {
    GENIE_BLAS_HANDLE(h, handle);
    h->mantissa_bit_count_pointer = p;
    return CUBLAS_STATUS_SUCCESS;
  });
}

// --- status strings and logging --------------------------------------------------------------------------------
GENIE_CUBLAS_EXPORT const char* cublasGetStatusName(cublasStatus_t status) { return status_name(status); }

GENIE_CUBLAS_EXPORT const char* cublasGetStatusString(cublasStatus_t status) { return status_string(status); }

GENIE_CUBLAS_EXPORT cublasStatus_t cublasLoggerConfigure(int, int, int, const char*) {
  return CUBLAS_STATUS_SUCCESS;  // cuBLAS's own API log: Genie logs through GENIE_LOG_LEVEL instead
}

GENIE_CUBLAS_EXPORT cublasStatus_t cublasSetLoggerCallback(cublasLogCallback cb) {
  std::lock_guard lk(g_logger_mu);
  g_logger_callback = cb;
  return CUBLAS_STATUS_SUCCESS;
}

GENIE_CUBLAS_EXPORT cublasStatus_t cublasGetLoggerCallback(cublasLogCallback* cb) {
  if (cb == nullptr) return reject(__func__, "userCallback");
  std::lock_guard lk(g_logger_mu);
  *cb = g_logger_callback;
  return CUBLAS_STATUS_SUCCESS;
}

// --- host <-> device helpers ------------------------------------------------------------------------------------
GENIE_CUBLAS_EXPORT cublasStatus_t cublasSetVector(int n, int elemSize, const void* x, int incx, void* y, int incy) {
  return guard(__func__, [&] { return vector_copy("cublasSetVector", n, elemSize, x, incx, y, incy, nullptr, true); });
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasGetVector(int n, int elemSize, const void* x, int incx, void* y, int incy) {
  return guard(__func__, [&] { return vector_copy("cublasGetVector", n, elemSize, x, incx, y, incy, nullptr, true); });
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasSetVectorAsync(int n, int elemSize, const void* x, int incx, void* y,
                                                        int incy, cudaStream_t s) {
  return guard(__func__, [&] { return vector_copy("cublasSetVectorAsync", n, elemSize, x, incx, y, incy, s, false); });
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasGetVectorAsync(int n, int elemSize, const void* x, int incx, void* y,
                                                        int incy, cudaStream_t s) {
  return guard(__func__, [&] { return vector_copy("cublasGetVectorAsync", n, elemSize, x, incx, y, incy, s, false); });
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasSetMatrix(int rows, int cols, int elemSize, const void* A, int lda, void* B,
                                                   int ldb) {
  return guard(__func__, [&] { return matrix_copy("cublasSetMatrix", rows, cols, elemSize, A, lda, B, ldb, nullptr, true); });
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasGetMatrix(int rows, int cols, int elemSize, const void* A, int lda, void* B,
                                                   int ldb) {
  return guard(__func__, [&] { return matrix_copy("cublasGetMatrix", rows, cols, elemSize, A, lda, B, ldb, nullptr, true); });
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasSetMatrixAsync(int rows, int cols, int elemSize, const void* A, int lda,
                                                        void* B, int ldb, cudaStream_t s) {
  return guard(__func__, [&] { return matrix_copy("cublasSetMatrixAsync", rows, cols, elemSize, A, lda, B, ldb, s, false); });
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasGetMatrixAsync(int rows, int cols, int elemSize, const void* A, int lda,
                                                        void* B, int ldb, cudaStream_t s) {
  return guard(__func__, [&] { return matrix_copy("cublasGetMatrixAsync", rows, cols, elemSize, A, lda, B, ldb, s, false); });
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasSetVector_64(int64_t n, int64_t elemSize, const void* x, int64_t incx,
                                                      void* y, int64_t incy) {
  return guard(__func__, [&] { return vector_copy("cublasSetVector_64", n, elemSize, x, incx, y, incy, nullptr, true); });
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasGetVector_64(int64_t n, int64_t elemSize, const void* x, int64_t incx,
                                                      void* y, int64_t incy) {
  return guard(__func__, [&] { return vector_copy("cublasGetVector_64", n, elemSize, x, incx, y, incy, nullptr, true); });
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasSetMatrix_64(int64_t rows, int64_t cols, int64_t elemSize, const void* A,
                                                      int64_t lda, void* B, int64_t ldb) {
  return guard(__func__, [&] { return matrix_copy("cublasSetMatrix_64", rows, cols, elemSize, A, lda, B, ldb, nullptr, true); });
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasGetMatrix_64(int64_t rows, int64_t cols, int64_t elemSize, const void* A,
                                                      int64_t lda, void* B, int64_t ldb) {
  return guard(__func__, [&] { return matrix_copy("cublasGetMatrix_64", rows, cols, elemSize, A, lda, B, ldb, nullptr, true); });
}
