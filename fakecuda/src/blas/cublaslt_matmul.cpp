// SPDX-License-Identifier: Apache-2.0
// cuBLASLt ABI: handles, versions, heuristics (one plausible algorithm per problem), algorithm objects, matmul (one
// timed op on the given stream, shape from the descriptors), matrix transform, logging.
#include <library_types.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <vector>

#include "cublaslt_desc.hpp"

using namespace genie::fakecuda;
using namespace genie::fakecuda::blas;

namespace {

// The CTA tiles the heuristic reports (cublasLtMatmulTile_t), the shapes CUTLASS's sm90 kernels use.
struct TileChoice {
  int m, n;
  uint32_t id;
};
constexpr TileChoice kTiles[] = {{256, 128, CUBLASLT_MATMUL_TILE_256x128},
                                 {128, 256, CUBLASLT_MATMUL_TILE_128x256},
                                 {128, 128, CUBLASLT_MATMUL_TILE_128x128},
                                 {64, 128, CUBLASLT_MATMUL_TILE_64x128},
                                 {64, 64, CUBLASLT_MATMUL_TILE_64x64}};
// Algorithm id our heuristic hands out (any value; cublasLtMatmulAlgoGetIds lists it).
constexpr int kAlgoId = 66;

const TileChoice& tile_for(int64_t m, int64_t n) {
  for (const TileChoice& t : kTiles)
    if (m >= t.m && n >= t.n) return t;
  return kTiles[std::size(kTiles) - 1];
}

void fill_algo(cublasLtMatmulAlgo_t* algo, int compute, int scale, int a, int b, int c, int d, uint32_t tile) {
  std::memset(algo, 0, sizeof(*algo));
  LtAlgo* s = reinterpret_cast<LtAlgo*>(algo);
  s->magic = LtAlgo::kMagic;
  s->algo_id = kAlgoId;
  s->tile_id = tile;
  s->splitk = 1;
  s->stages_id = CUBLASLT_MATMUL_STAGES_64xAUTO;
  s->compute_type = compute;
  s->scale_type = scale;
  s->a_type = a;
  s->b_type = b;
  s->c_type = c;
  s->d_type = d;
}

int sm_count() {
  Runtime* r = Runtime::instance();
  return r != nullptr ? std::max(1, r->options().spec.sm_count) : 132;
}

struct Descs {
  LtMatmulDesc* op;
  LtLayout *a, *b, *c, *d;
};

cublasStatus_t resolve(const char* fn, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                       cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d, Descs* out) {
  out->op = state_of<LtMatmulDesc>(op);
  out->a = state_of<LtLayout>(a);
  out->b = state_of<LtLayout>(b);
  out->c = state_of<LtLayout>(c);
  out->d = state_of<LtLayout>(d);
  if (out->op == nullptr) return reject(fn, "operationDesc");
  if (out->a == nullptr) return reject(fn, "Adesc");
  if (out->b == nullptr) return reject(fn, "Bdesc");
  if (out->c == nullptr) return reject(fn, "Cdesc");
  if (out->d == nullptr) out->d = out->c;  // cublasLtMatmul: Ddesc may equal Cdesc; heuristics accept either
  return CUBLAS_STATUS_SUCCESS;
}

std::mutex g_log_mu;
cublasLtLoggerCallback_t g_log_callback = nullptr;
size_t g_heuristics_cache_capacity = 8192;  // cuBLASLt documentation: default heuristics cache capacity

}  // namespace

// --- handles and versions ---------------------------------------------------------------------------------------
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  return guard(__func__, [&]() -> cublasStatus_t {
    if (handle == nullptr) return reject(__func__, "lightHandle");
    Runtime* r = runtime_or_log("cublasLtCreate");
    if (r == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    *handle = reinterpret_cast<cublasLtHandle_t>(BlasRegistry::instance().create(r->current_device(), true));
    return CUBLAS_STATUS_SUCCESS;
  });
}

GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  return guard(__func__, [&]() -> cublasStatus_t {
    if (!BlasRegistry::instance().destroy(handle)) return reject(__func__, "lightHandle", CUBLAS_STATUS_NOT_INITIALIZED);
    return CUBLAS_STATUS_SUCCESS;
  });
}

GENIE_CUBLAS_EXPORT size_t cublasLtGetVersion(void) { return static_cast<size_t>(reported_version().encoded()); }
GENIE_CUBLAS_EXPORT size_t cublasLtGetCudartVersion(void) { return kCudartVersion; }

GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtGetProperty(libraryPropertyType type, int* value) {
  if (value == nullptr) return reject(__func__, "value");
  switch (enum_raw(type)) {
    case MAJOR_VERSION: *value = reported_version().major; return CUBLAS_STATUS_SUCCESS;
    case MINOR_VERSION: *value = reported_version().minor; return CUBLAS_STATUS_SUCCESS;
    case PATCH_LEVEL: *value = reported_version().patch; return CUBLAS_STATUS_SUCCESS;
    default: return reject(__func__, "type");
  }
}

GENIE_CUBLAS_EXPORT const char* cublasLtGetStatusName(cublasStatus_t status) { return status_name(status); }
GENIE_CUBLAS_EXPORT const char* cublasLtGetStatusString(cublasStatus_t status) { return status_string(status); }

GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtHeuristicsCacheGetCapacity(size_t* capacity) {
  if (capacity == nullptr) return reject(__func__, "capacity");
  std::lock_guard lk(g_log_mu);
  *capacity = g_heuristics_cache_capacity;
  return CUBLAS_STATUS_SUCCESS;
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtHeuristicsCacheSetCapacity(size_t capacity) {
  std::lock_guard lk(g_log_mu);
  g_heuristics_cache_capacity = capacity;
  return CUBLAS_STATUS_SUCCESS;
}
GENIE_CUBLAS_EXPORT unsigned cublasLtDisableCpuInstructionsSetMask(unsigned mask) { return mask; }

// --- logging: cuBLASLt's API log is replaced by GENIE_LOG_LEVEL; the settings are accepted --------------------
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtLoggerSetCallback(cublasLtLoggerCallback_t cb) {
  std::lock_guard lk(g_log_mu);
  g_log_callback = cb;
  return CUBLAS_STATUS_SUCCESS;
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtLoggerSetFile(FILE*) { return CUBLAS_STATUS_SUCCESS; }
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtLoggerOpenFile(const char* path) {
  return path == nullptr ? reject(__func__, "logFile") : CUBLAS_STATUS_SUCCESS;
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtLoggerSetLevel(int level) {
  return level < 0 || level > 5 ? reject(__func__, "level") : CUBLAS_STATUS_SUCCESS;  // levels 0-5 (cublasLt.h)
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtLoggerSetMask(int mask) {
  return mask < 0 || mask > 31 ? reject(__func__, "mask") : CUBLAS_STATUS_SUCCESS;  // bits 0-4 (cublasLt.h)
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtLoggerForceDisable() { return CUBLAS_STATUS_SUCCESS; }

// --- heuristics and algorithms ----------------------------------------------------------------------------------
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t handle, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
    cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d, cublasLtMatmulPreference_t pref, int requested,
    cublasLtMatmulHeuristicResult_t results[], int* returned) {
  return guard(__func__, [&]() -> cublasStatus_t {
    GENIE_BLAS_HANDLE(h, handle);
    (void)h;
    Descs ds;
    if (cublasStatus_t st = resolve("cublasLtMatmulAlgoGetHeuristic", op, a, b, c, d, &ds); st != CUBLAS_STATUS_SUCCESS)
      return st;
    LtPreference* p = state_of<LtPreference>(pref);
    GENIE_BLAS_CHECK(p == nullptr, "preference");
    GENIE_BLAS_CHECK(requested <= 0, "requestedAlgoCount");
    GENIE_BLAS_CHECK(results == nullptr, "heuristicResultsArray");
    GENIE_BLAS_CHECK(returned == nullptr, "returnAlgoCount");
    *returned = 0;
    LtProblem prob;
    if (cublasStatus_t st = lt_problem("cublasLtMatmulAlgoGetHeuristic", *ds.op, *ds.a, *ds.b, *ds.c, *ds.d, &prob);
        st != CUBLAS_STATUS_SUCCESS)
      return st;
    const TileChoice& t = tile_for(prob.shape.m, prob.shape.n);
    const double ctas = std::ceil(prob.shape.m / static_cast<double>(t.m)) *
                        std::ceil(prob.shape.n / static_cast<double>(t.n)) * static_cast<double>(prob.shape.batch);
    const float waves = static_cast<float>(ctas / sm_count());
    if (p->max_waves > 0 && waves > p->max_waves) return CUBLAS_STATUS_NOT_SUPPORTED;  // no algorithm qualifies
    std::memset(&results[0], 0, sizeof(results[0]));
    fill_algo(&results[0].algo, ds.op->compute_type, ds.op->scale_type, prob.a_type, prob.b_type, prob.c_type,
              prob.d_type, t.id);
    results[0].workspaceSize = 0;  // no split-K: the algorithm needs no workspace, whatever the preference allows
    results[0].state = CUBLAS_STATUS_SUCCESS;
    results[0].wavesCount = waves;
    *returned = 1;
    return CUBLAS_STATUS_SUCCESS;
  });
}

GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatmulAlgoGetIds(cublasLtHandle_t handle, cublasComputeType_t compute,
                                                            cudaDataType_t scale, cudaDataType_t a, cudaDataType_t b,
                                                            cudaDataType_t c, cudaDataType_t d, int requested,
                                                            int ids[], int* returned) {
  return guard(__func__, [&]() -> cublasStatus_t {
    GENIE_BLAS_HANDLE(h, handle);
    (void)h; (void)scale; (void)d;
    GENIE_BLAS_CHECK(requested <= 0, "requestedAlgoCount");
    GENIE_BLAS_CHECK(ids == nullptr || returned == nullptr, "algoIdsArray/returnAlgoCount");
    GemmMath math;
    *returned = 0;
    const bool fp8 = enum_raw(a) == CUDA_R_8F_E4M3 || enum_raw(a) == CUDA_R_8F_E5M2;
    if (!fp8 && !gemm_math_for(enum_raw(a), enum_raw(b), enum_raw(c), enum_raw(compute), 0, &math))
      return CUBLAS_STATUS_SUCCESS;  // no algorithm for this type combination
    ids[0] = kAlgoId;
    *returned = 1;
    return CUBLAS_STATUS_SUCCESS;
  });
}

GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatmulAlgoInit(cublasLtHandle_t handle, cublasComputeType_t compute,
                                                          cudaDataType_t scale, cudaDataType_t a, cudaDataType_t b,
                                                          cudaDataType_t c, cudaDataType_t d, int algo_id,
                                                          cublasLtMatmulAlgo_t* algo) {
  return guard(__func__, [&]() -> cublasStatus_t {
    GENIE_BLAS_HANDLE(h, handle);
    (void)h;
    GENIE_BLAS_CHECK(algo == nullptr, "algo");
    if (algo_id != kAlgoId) return reject(__func__, "algoId", CUBLAS_STATUS_NOT_SUPPORTED);
    fill_algo(algo, enum_raw(compute), enum_raw(scale), enum_raw(a), enum_raw(b), enum_raw(c), enum_raw(d),
              CUBLASLT_MATMUL_TILE_UNDEFINED);
    return CUBLAS_STATUS_SUCCESS;
  });
}

GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatmulAlgoCheck(cublasLtHandle_t handle, cublasLtMatmulDesc_t op,
                                                           cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                                           cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                                           const cublasLtMatmulAlgo_t* algo,
                                                           cublasLtMatmulHeuristicResult_t* result) {
  return guard(__func__, [&]() -> cublasStatus_t {
    GENIE_BLAS_HANDLE(h, handle);
    (void)h;
    Descs ds;
    if (cublasStatus_t st = resolve("cublasLtMatmulAlgoCheck", op, a, b, c, d, &ds); st != CUBLAS_STATUS_SUCCESS)
      return st;
    const LtAlgo* al = algo != nullptr ? reinterpret_cast<const LtAlgo*>(algo) : nullptr;
    GENIE_BLAS_CHECK(al == nullptr || al->magic != LtAlgo::kMagic, "algo");
    GENIE_BLAS_CHECK(result == nullptr, "result");
    LtProblem prob;
    if (cublasStatus_t st = lt_problem("cublasLtMatmulAlgoCheck", *ds.op, *ds.a, *ds.b, *ds.c, *ds.d, &prob);
        st != CUBLAS_STATUS_SUCCESS)
      return st;
    cublasLtMatmulAlgo_t copy = *algo;  // `algo` may point into *result
    std::memset(result, 0, sizeof(*result));
    result->algo = copy;
    result->state = CUBLAS_STATUS_SUCCESS;
    const TileChoice& t = tile_for(prob.shape.m, prob.shape.n);
    result->wavesCount = static_cast<float>(std::ceil(prob.shape.m / double(t.m)) * std::ceil(prob.shape.n / double(t.n)) *
                                            prob.shape.batch / sm_count());
    return CUBLAS_STATUS_SUCCESS;
  });
}

GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatmulAlgoCapGetAttribute(const cublasLtMatmulAlgo_t* algo,
                                                                     cublasLtMatmulAlgoCapAttributes_t attr,
                                                                     void* buf, size_t size, size_t* written) {
  const LtAlgo* al = algo != nullptr ? reinterpret_cast<const LtAlgo*>(algo) : nullptr;
  if (al == nullptr || al->magic != LtAlgo::kMagic) return reject(__func__, "algo");
  // Capabilities of Genie's one algorithm: strided and pointer-array batches, out-of-place results, every
  // epilogue and pointer mode, the heuristic's tiles, 256-byte alignment like the cublasLt.h defaults.
  uint64_t value = 0;
  size_t bytes = 4;
  std::vector<uint32_t> array;
  switch (enum_raw(attr)) {
    case CUBLASLT_ALGO_CAP_SPLITK_SUPPORT: value = 1; break;
    case CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK: value = CUBLASLT_REDUCTION_SCHEME_MASK; break;
    case CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT: value = 1; break;
    case CUBLASLT_ALGO_CAP_STRIDED_BATCH_SUPPORT: value = 1; break;
    case CUBLASLT_ALGO_CAP_OUT_OF_PLACE_RESULT_SUPPORT: value = 1; break;
    case CUBLASLT_ALGO_CAP_UPLO_SUPPORT: value = 0; break;
    case CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX: value = 0; break;
    case CUBLASLT_ALGO_CAP_CUSTOM_MEMORY_ORDER: value = 0; break;
    case CUBLASLT_ALGO_CAP_POINTER_MODE_MASK: value = 0x1f; break;
    case CUBLASLT_ALGO_CAP_EPILOGUE_MASK: value = 0xffffffffu; break;
    case CUBLASLT_ALGO_CAP_LD_NEGATIVE: value = 0; break;
    case CUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS: value = ~uint64_t{0}; bytes = 8; break;
    case CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES:
    case CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_B_BYTES:
    case CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_C_BYTES:
    case CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_D_BYTES: value = 16; break;
    case CUBLASLT_ALGO_CAP_POINTER_ARRAY_BATCH_SUPPORT: value = 1; break;
    case CUBLASLT_ALGO_CAP_FLOATING_POINT_EMULATION_SUPPORT: value = 0; break;
    case CUBLASLT_ALGO_CAP_TILE_IDS:
      for (const TileChoice& t : kTiles) array.push_back(t.id);
      break;
    case CUBLASLT_ALGO_CAP_STAGES_IDS: array.push_back(CUBLASLT_MATMUL_STAGES_64xAUTO); break;
    default: return reject(__func__, "attr");
  }
  if (!array.empty()) {  // variable-length attributes: sizeInBytes 0 asks for the size, else fill what fits
    bytes = array.size() * sizeof(uint32_t);
    if (size == 0) {
      if (written == nullptr) return reject(__func__, "sizeWritten");
      *written = bytes;
      return CUBLAS_STATUS_SUCCESS;
    }
    if (buf == nullptr) return reject(__func__, "buf");
    size_t n = std::min(size, bytes) / sizeof(uint32_t) * sizeof(uint32_t);
    std::memcpy(buf, array.data(), n);
    if (written != nullptr) *written = n;
    return CUBLAS_STATUS_SUCCESS;
  }
  if (size == 0) {
    if (written == nullptr) return reject(__func__, "sizeWritten");
    *written = bytes;
    return CUBLAS_STATUS_SUCCESS;
  }
  if (buf == nullptr) return reject(__func__, "buf");
  if (size != bytes) return reject(__func__, "sizeInBytes");
  std::memcpy(buf, &value, bytes);  // little-endian: the low bytes of value
  if (written != nullptr) *written = bytes;
  return CUBLAS_STATUS_SUCCESS;
}

namespace {
struct ConfigAttr {
  int id;
  size_t offset, size;
};
#define GENIE_CFG(id, field) {id, offsetof(LtAlgo, field), sizeof(LtAlgo::field)}
const ConfigAttr kConfigAttrs[] = {
    GENIE_CFG(CUBLASLT_ALGO_CONFIG_ID, algo_id),
    GENIE_CFG(CUBLASLT_ALGO_CONFIG_TILE_ID, tile_id),
    GENIE_CFG(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, splitk),
    GENIE_CFG(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, reduction_scheme),
    GENIE_CFG(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, swizzle),
    GENIE_CFG(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, custom_option),
    GENIE_CFG(CUBLASLT_ALGO_CONFIG_STAGES_ID, stages_id),
    GENIE_CFG(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, inner_shape),
    GENIE_CFG(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, cluster_shape),
};
#undef GENIE_CFG
const ConfigAttr* find_config(int id) {
  for (const ConfigAttr& a : kConfigAttrs)
    if (a.id == id) return &a;
  return nullptr;
}
}  // namespace

GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatmulAlgoConfigSetAttribute(cublasLtMatmulAlgo_t* algo,
                                                                        cublasLtMatmulAlgoConfigAttributes_t attr,
                                                                        const void* buf, size_t size) {
  LtAlgo* al = algo != nullptr ? reinterpret_cast<LtAlgo*>(algo) : nullptr;
  if (al == nullptr || al->magic != LtAlgo::kMagic) return reject(__func__, "algo");
  const ConfigAttr* a = find_config(enum_raw(attr));
  if (a == nullptr) return reject(__func__, "attr");
  if (a->id == CUBLASLT_ALGO_CONFIG_ID) return reject(__func__, "attr (CUBLASLT_ALGO_CONFIG_ID is read-only)");
  if (buf == nullptr) return reject(__func__, "buf");
  if (size != a->size) return reject(__func__, "sizeInBytes");
  std::memcpy(reinterpret_cast<char*>(al) + a->offset, buf, size);
  return CUBLAS_STATUS_SUCCESS;
}

GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatmulAlgoConfigGetAttribute(const cublasLtMatmulAlgo_t* algo,
                                                                        cublasLtMatmulAlgoConfigAttributes_t attr,
                                                                        void* buf, size_t size, size_t* written) {
  const LtAlgo* al = algo != nullptr ? reinterpret_cast<const LtAlgo*>(algo) : nullptr;
  if (al == nullptr || al->magic != LtAlgo::kMagic) return reject(__func__, "algo");
  const ConfigAttr* a = find_config(enum_raw(attr));
  if (a == nullptr) return reject(__func__, "attr");
  if (size == 0) {
    if (written == nullptr) return reject(__func__, "sizeWritten");
    *written = a->size;
    return CUBLAS_STATUS_SUCCESS;
  }
  if (buf == nullptr) return reject(__func__, "buf");
  if (size != a->size) return reject(__func__, "sizeInBytes");
  std::memcpy(buf, reinterpret_cast<const char*>(al) + a->offset, size);
  if (written != nullptr) *written = a->size;
  return CUBLAS_STATUS_SUCCESS;
}

// --- matmul and transform ---------------------------------------------------------------------------------------
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t op, const void* alpha,
                                                  const void* A, cublasLtMatrixLayout_t a, const void* B,
                                                  cublasLtMatrixLayout_t b, const void* beta, const void* C,
                                                  cublasLtMatrixLayout_t c, void* D, cublasLtMatrixLayout_t d,
                                                  const cublasLtMatmulAlgo_t* algo, void* workspace,
                                                  size_t workspace_bytes, cudaStream_t stream) {
  return guard(__func__, [&]() -> cublasStatus_t {
    (void)A; (void)B; (void)C; (void)D; (void)workspace_bytes;
    GENIE_BLAS_HANDLE(h, handle);
    (void)h;
    Descs ds;
    if (cublasStatus_t st = resolve("cublasLtMatmul", op, a, b, c, d, &ds); st != CUBLAS_STATUS_SUCCESS) return st;
    GENIE_BLAS_CHECK(alpha == nullptr, "alpha");
    GENIE_BLAS_CHECK(beta == nullptr, "beta");
    GENIE_BLAS_CHECK(workspace == nullptr && workspace_bytes > 0, "workspace");
    if (algo != nullptr && reinterpret_cast<const LtAlgo*>(algo)->magic != LtAlgo::kMagic)
      return reject(__func__, "algo (not from cublasLtMatmulAlgoGetHeuristic/AlgoInit)");
    LtProblem prob;
    if (cublasStatus_t st = lt_problem("cublasLtMatmul", *ds.op, *ds.a, *ds.b, *ds.c, *ds.d, &prob);
        st != CUBLAS_STATUS_SUCCESS)
      return st;
    if (prob.shape.m == 0 || prob.shape.n == 0 || prob.shape.batch == 0) return CUBLAS_STATUS_SUCCESS;
    // C is read unless beta is a host zero (scale type float or double for the types we time).
    if (ds.op->pointer_mode == CUBLASLT_POINTER_MODE_HOST) {
      const bool dbl = ds.op->scale_type == CUDA_R_64F || ds.op->scale_type == CUDA_C_64F;
      const unsigned char* bb = static_cast<const unsigned char*>(beta);
      bool zero = true;
      const int bytes = ds.op->scale_type == CUDA_R_16F ? 2 : dbl ? 8 : 4;
      for (int i = 0; i < bytes; ++i) zero = zero && (bb[i] & (i == bytes - 1 ? 0x7f : 0xff)) == 0;
      prob.shape.reads_c = !zero;
    }
    Runtime* r = runtime_or_log("cublasLtMatmul");
    if (r == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    return submit_on("cublasLtMatmul", stream, "gemm", r->cost_model().gemm(prob.shape));
  });
}

GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatrixTransform(cublasLtHandle_t handle,
                                                           cublasLtMatrixTransformDesc_t desc, const void* alpha,
                                                           const void* A, cublasLtMatrixLayout_t a, const void* beta,
                                                           const void* B, cublasLtMatrixLayout_t b, void* C,
                                                           cublasLtMatrixLayout_t c, cudaStream_t stream) {
  return guard(__func__, [&]() -> cublasStatus_t {
    (void)A; (void)B; (void)C;
    GENIE_BLAS_HANDLE(h, handle);
    (void)h;
    LtTransformDesc* t = state_of<LtTransformDesc>(desc);
    LtLayout* la = state_of<LtLayout>(a);
    LtLayout* lb = state_of<LtLayout>(b);
    LtLayout* lc = state_of<LtLayout>(c);
    GENIE_BLAS_CHECK(t == nullptr, "transformDesc");
    GENIE_BLAS_CHECK(lc == nullptr, "Cdesc");
    GENIE_BLAS_CHECK(alpha == nullptr || beta == nullptr, "alpha/beta");
    // C = alpha op(A) + beta op(B): a bandwidth-bound pass reading A (and B) and writing C.
    const double elems = static_cast<double>(lc->rows) * lc->cols * lc->batch_count;
    double bytes = elems * data_type_bytes(static_cast<int>(lc->type));
    if (la != nullptr) bytes += elems * data_type_bytes(static_cast<int>(la->type));
    if (lb != nullptr) bytes += elems * data_type_bytes(static_cast<int>(lb->type));
    if (elems == 0) return CUBLAS_STATUS_SUCCESS;
    Runtime* r = runtime_or_log("cublasLtMatrixTransform");
    if (r == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    return submit_on("cublasLtMatrixTransform", stream, "blas",
                     r->cost_model().streaming(bytes, 3 * elems, GemmMath::kFp32));
  });
}
