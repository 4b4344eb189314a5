// SPDX-License-Identifier: Apache-2.0
// cuDNN's legacy (v7-style) API that frameworks still call: tensor, filter, convolution and activation
// descriptors; convolution algorithms (Get*_v7 ranks them by modelled time, Find* runs each on the handle's stream
// as cuDNN does, and the convolution calls run the chosen one), all on the engines of conv_engines.hpp; and batch
// normalization (training, inference, backward) as bandwidth-bound kernels. Algorithms map to engines:
// IMPLICIT_GEMM / BWD_*_ALGO_0 -> engine 0 (CUDA cores), IMPLICIT_PRECOMP_GEMM / BWD_*_ALGO_1 -> engine 1 (tensor
// cores) unless the math type is CUDNN_FMA_MATH, WINOGRAD_NONFUSED -> engine 2; the rest (explicit GEMM, direct,
// FFT, fused Winograd) answer CUDNN_STATUS_NOT_SUPPORTED in their perf results and when asked to run.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <cudnn.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "dnn/conv_engines.hpp"
#include "dnn/dnn_common.hpp"
#include "genie/common/enum_raw.hpp"
#include "genie/fakecuda/blas_handle.hpp"
#include "genie/fakecuda/runtime.hpp"

using genie::enum_raw;
namespace dnn = genie::fakecuda::dnn;
using dnn::fail;
using dnn::guard;

namespace genie::fakecuda::dnn {
namespace {

struct LegacyTensor {
  TensorInfo info;
  bool set = false;
};
struct LegacyFilter {
  TensorInfo info;  ///< dims [K, C/groups, spatial...], strides from the format
  int format = CUDNN_TENSOR_NCHW;
  bool set = false;
};
struct LegacyConv {
  ConvParams params;
  int mode = CUDNN_CROSS_CORRELATION;
  int compute_type = CUDNN_DATA_FLOAT;
  int groups = 1;
  int math = CUDNN_DEFAULT_MATH;
  int reorder = CUDNN_DEFAULT_REORDER;
  bool set = false;
};
struct LegacyActivation {
  int mode = CUDNN_ACTIVATION_RELU;
  int nan = CUDNN_NOT_PROPAGATE_NAN;
  double coef = 0;
};

/// Live descriptors of one kind (pointer identity; never dereferenced before lookup).
template <class T>
class Live {
 public:
  T* create() {
    auto p = std::make_unique<T>();
    T* raw = p.get();
    std::lock_guard lk(mu_);
    objects_.emplace(raw, std::move(p));
    return raw;
  }
  bool destroy(const void* p) {
    std::lock_guard lk(mu_);
    return objects_.erase(p) > 0;
  }
  T* find(const void* p) {
    std::lock_guard lk(mu_);
    auto it = objects_.find(p);
    return it == objects_.end() ? nullptr : it->second.get();
  }

 private:
  std::mutex mu_;
  std::map<const void*, std::unique_ptr<T>> objects_;
};

Live<LegacyTensor>& tensors() { static auto* l = new Live<LegacyTensor>(); return *l; }
Live<LegacyFilter>& filters() { static auto* l = new Live<LegacyFilter>(); return *l; }
Live<LegacyConv>& convs() { static auto* l = new Live<LegacyConv>(); return *l; }
Live<LegacyActivation>& activations() { static auto* l = new Live<LegacyActivation>(); return *l; }

std::vector<int64_t> packed_strides(const std::vector<int64_t>& dims, bool channels_last) {
  std::vector<int64_t> s(dims.size(), 1);
  if (!channels_last || dims.size() < 3) {
    for (size_t i = dims.size() - 1; i-- > 0;) s[i] = s[i + 1] * dims[i + 1];
    return s;
  }
  // N, C, spatial... stored as N, spatial..., C
  s[1] = 1;
  int64_t acc = dims[1];
  for (size_t i = dims.size() - 1; i >= 2; --i) {
    s[i] = acc;
    acc *= dims[i];
  }
  s[0] = acc;
  return s;
}

bool known_dtype(int t) { return dtype_bytes(t) > 0; }

Runtime* runtime_or_fail(const char* fn, cudnnStatus_t* st) {
  Runtime* r = Runtime::instance();
  if (r == nullptr) *st = fail(fn, "the CUDA emulation cannot start", CUDNN_STATUS_NOT_INITIALIZED);
  return r;
}

cudnnStatus_t run_kernels(const char* fn, const DnnHandle& h, Runtime& rt, const std::vector<ConvKernel>& ks,
                          bool blocking = false) {
  for (size_t i = 0; i < ks.size(); ++i) {
    Status s = enqueue_library_work(rt, h.stream, ks[i].name, ks[i].duration, blocking && i + 1 == ks.size());
    if (!s.is_ok()) return fail(fn, s.message(), CUDNN_STATUS_EXECUTION_FAILED);
  }
  return CUDNN_STATUS_SUCCESS;
}

// --- convolutions --------------------------------------------------------------------------------------------
/// The engine a legacy algorithm runs on, or -1 when Genie does not model it.
int engine_of(ConvPass pass, int algo, int math) {
  const bool tensor_ops = math != CUDNN_FMA_MATH;
  switch (pass) {
    case ConvPass::kForward:
      if (algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM) return 0;
      if (algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM) return tensor_ops ? 1 : 0;
      if (algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED) return 2;
      return -1;
    case ConvPass::kBackwardData:
      if (algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_0) return 0;
      if (algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_1) return tensor_ops ? 1 : 0;
      if (algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED) return 2;
      return -1;
    case ConvPass::kBackwardFilter:
      if (algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0) return 0;
      if (algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1) return tensor_ops ? 1 : 0;
      return -1;
  }
  return -1;
}

int algo_count(ConvPass pass) {
  switch (pass) {
    case ConvPass::kForward: return CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
    case ConvPass::kBackwardData: return CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
    case ConvPass::kBackwardFilter: return CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
  }
  return 0;
}

bool nondeterministic(ConvPass pass, int algo) {
  return (pass == ConvPass::kBackwardData && algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_0) ||
         (pass == ConvPass::kBackwardFilter &&
          (algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0 || algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3));
}

/// The problem of a legacy convolution call in its pass's roles (x, w, y), or a failed status.
cudnnStatus_t legacy_problem(const char* fn, ConvPass pass, const void* x_desc, const void* w_desc,
                             const void* conv_desc, const void* y_desc, ConvProblem* p, LegacyConv** conv_out) {
  LegacyTensor* x = tensors().find(x_desc);
  LegacyTensor* y = tensors().find(y_desc);
  LegacyFilter* w = filters().find(w_desc);
  LegacyConv* c = convs().find(conv_desc);
  const char* xname = pass == ConvPass::kBackwardData ? "dxDesc" : "xDesc";
  const char* yname = pass == ConvPass::kForward ? "yDesc" : "dyDesc";
  if (x == nullptr || !x->set) return fail(fn, std::string(xname) + " is not a set tensor descriptor", CUDNN_STATUS_BAD_PARAM);
  if (y == nullptr || !y->set) return fail(fn, std::string(yname) + " is not a set tensor descriptor", CUDNN_STATUS_BAD_PARAM);
  if (w == nullptr || !w->set) return fail(fn, "the filter descriptor is not a set filter descriptor", CUDNN_STATUS_BAD_PARAM);
  if (c == nullptr || !c->set) return fail(fn, "convDesc is not a set convolution descriptor", CUDNN_STATUS_BAD_PARAM);
  if (c->params.spatial + 2 != static_cast<int>(x->info.dims.size()))
    return fail(fn, "convDesc has " + std::to_string(c->params.spatial) + " spatial dimensions, " + xname + " " +
                        std::to_string(x->info.dims.size()) + " dimensions",
                CUDNN_STATUS_BAD_PARAM);
  std::string why;
  cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
  if (!make_conv_problem(pass, x->info, w->info, y->info, c->params, p, &why, &st)) return fail(fn, why, st);
  if (p->groups != c->groups)
    return fail(fn, "the tensors make " + std::to_string(p->groups) + " groups, convDesc's group count is " +
                        std::to_string(c->groups),
                CUDNN_STATUS_BAD_PARAM);
  if (conv_out) *conv_out = c;
  return CUDNN_STATUS_SUCCESS;
}

template <class Perf>
cudnnStatus_t rank_algorithms(const char* fn, cudnnHandle_t handle, ConvPass pass, const void* x_desc,
                              const void* w_desc, const void* conv_desc, const void* y_desc, int requested,
                              int* returned, Perf* perf, bool run) {
  DnnHandle* h = find_handle(handle);
  if (h == nullptr) return fail(fn, "handle is not a live cuDNN handle", CUDNN_STATUS_BAD_PARAM);
  if (returned == nullptr || perf == nullptr)
    return fail(fn, "returnedAlgoCount or perfResults is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
  if (requested <= 0) return fail(fn, "requestedAlgoCount " + std::to_string(requested), CUDNN_STATUS_BAD_PARAM);
  ConvProblem p;
  LegacyConv* c = nullptr;
  cudnnStatus_t st = legacy_problem(fn, pass, x_desc, w_desc, conv_desc, y_desc, &p, &c);
  if (st != CUDNN_STATUS_SUCCESS) return st;
  Runtime* rt = runtime_or_fail(fn, &st);
  if (rt == nullptr) return st;
  std::vector<Perf> all;
  for (int a = 0; a < algo_count(pass); ++a) {
    Perf r{};
    r.algo = static_cast<decltype(r.algo)>(a);
    r.determinism = nondeterministic(pass, a) ? CUDNN_NON_DETERMINISTIC : CUDNN_DETERMINISTIC;
    const int e = engine_of(pass, a, c->math);
    ConvEngine eng = e >= 0 ? conv_engine(p, e, rt->cost_model()) : ConvEngine{};
    if (e < 0 || !eng.supported) {
      r.status = CUDNN_STATUS_NOT_SUPPORTED;
      r.time = -1;
      r.memory = 0;
      r.mathType = static_cast<cudnnMathType_t>(c->math);
    } else {
      if (run) {  // Find runs each algorithm, as cuDNN's does, and waits for it
        st = run_kernels(fn, *h, *rt, eng.kernels, /*blocking=*/true);
        if (st != CUDNN_STATUS_SUCCESS) return st;
      }
      r.status = CUDNN_STATUS_SUCCESS;
      r.time = static_cast<float>(eng.total.to_ms());
      r.memory = static_cast<size_t>(eng.workspace);
      r.mathType = e == 1 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
    }
    all.push_back(r);
  }
  // Fastest first; unsupported last in algorithm order.
  std::stable_sort(all.begin(), all.end(), [](const Perf& a, const Perf& b) {
    if ((a.status == CUDNN_STATUS_SUCCESS) != (b.status == CUDNN_STATUS_SUCCESS)) return a.status == CUDNN_STATUS_SUCCESS;
    return a.status == CUDNN_STATUS_SUCCESS && a.time < b.time;
  });
  const int n = std::min<int>(requested, static_cast<int>(all.size()));
  std::copy(all.begin(), all.begin() + n, perf);
  *returned = n;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t workspace_size(const char* fn, ConvPass pass, const void* x_desc, const void* w_desc,
                             const void* conv_desc, const void* y_desc, int algo, size_t* size) {
  if (size == nullptr) return fail(fn, "sizeInBytes is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
  ConvProblem p;
  LegacyConv* c = nullptr;
  cudnnStatus_t st = legacy_problem(fn, pass, x_desc, w_desc, conv_desc, y_desc, &p, &c);
  if (st != CUDNN_STATUS_SUCCESS) return st;
  const int e = engine_of(pass, algo, c->math);
  if (e < 0) return fail(fn, "algo " + std::to_string(algo) + " is not emulated by Genie", CUDNN_STATUS_NOT_SUPPORTED);
  Runtime* rt = runtime_or_fail(fn, &st);
  if (rt == nullptr) return st;
  ConvEngine eng = conv_engine(p, e, rt->cost_model());
  if (!eng.supported) return fail(fn, std::string(eng.name) + ": " + eng.why_not, CUDNN_STATUS_NOT_SUPPORTED);
  *size = static_cast<size_t>(eng.workspace);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t run_convolution(const char* fn, cudnnHandle_t handle, ConvPass pass, const void* x_desc, const void* x,
                              const void* w_desc, const void* w, const void* conv_desc, int algo, void* workspace,
                              size_t workspace_bytes, const void* y_desc, const void* y, double epilogue_bytes) {
  DnnHandle* h = find_handle(handle);
  if (h == nullptr) return fail(fn, "handle is not a live cuDNN handle", CUDNN_STATUS_BAD_PARAM);
  if (x == nullptr || w == nullptr || y == nullptr)
    return fail(fn, "a tensor pointer is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
  ConvProblem p;
  LegacyConv* c = nullptr;
  cudnnStatus_t st = legacy_problem(fn, pass, x_desc, w_desc, conv_desc, y_desc, &p, &c);
  if (st != CUDNN_STATUS_SUCCESS) return st;
  p.epilogue_bytes = epilogue_bytes;
  const int e = engine_of(pass, algo, c->math);
  if (e < 0) return fail(fn, "algo " + std::to_string(algo) + " is not emulated by Genie", CUDNN_STATUS_NOT_SUPPORTED);
  Runtime* rt = runtime_or_fail(fn, &st);
  if (rt == nullptr) return st;
  ConvEngine eng = conv_engine(p, e, rt->cost_model());
  if (!eng.supported) return fail(fn, std::string(eng.name) + ": " + eng.why_not, CUDNN_STATUS_NOT_SUPPORTED);
  if (static_cast<int64_t>(workspace_bytes) < eng.workspace || (eng.workspace > 0 && workspace == nullptr))
    return fail(fn, "the algorithm needs " + std::to_string(eng.workspace) + " bytes of workspace, " +
                        std::to_string(workspace_bytes) + " given",
                CUDNN_STATUS_BAD_PARAM);
  return run_kernels(fn, *h, *rt, eng.kernels);
}

// --- batch normalization ---------------------------------------------------------------------------------------
/// A batch-norm kernel: `passes` reads of x-sized tensors and `writes` writes, ~10 flops per element.
cudnnStatus_t run_batch_norm(const char* fn, cudnnHandle_t handle, int mode, const void* x_desc, const void* x,
                             const void* param_desc, double passes, const char* nchw_kernel,
                             const char* nhwc_kernel) {
  DnnHandle* h = find_handle(handle);
  if (h == nullptr) return fail(fn, "handle is not a live cuDNN handle", CUDNN_STATUS_BAD_PARAM);
  if (mode != CUDNN_BATCHNORM_PER_ACTIVATION && mode != CUDNN_BATCHNORM_SPATIAL &&
      mode != CUDNN_BATCHNORM_SPATIAL_PERSISTENT)
    return fail(fn, "mode " + std::to_string(mode), CUDNN_STATUS_BAD_PARAM);
  LegacyTensor* xt = tensors().find(x_desc);
  if (xt == nullptr || !xt->set) return fail(fn, "xDesc is not a set tensor descriptor", CUDNN_STATUS_BAD_PARAM);
  LegacyTensor* pt = tensors().find(param_desc);
  if (pt == nullptr || !pt->set)
    return fail(fn, "the scale/bias/mean/variance descriptor is not a set tensor descriptor", CUDNN_STATUS_BAD_PARAM);
  if (x == nullptr) return fail(fn, "x is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
  const auto& d = xt->info.dims;
  if (d.size() < 3 || pt->info.dims.size() != d.size() || pt->info.dims[1] != d[1])
    return fail(fn, "the parameter descriptor must be 1 x C x 1 ... with C = " + std::to_string(d.size() > 1 ? d[1] : 0),
                CUDNN_STATUS_BAD_PARAM);
  cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
  Runtime* rt = runtime_or_fail(fn, &st);
  if (rt == nullptr) return st;
  const double bytes = static_cast<double>(xt->info.extent_bytes()) * passes;
  double elems = 1;
  for (int64_t v : d) elems *= static_cast<double>(v);
  SimTime t = rt->cost_model().streaming(bytes, 10 * elems, GemmMath::kFp32);
  return run_kernels(fn, *h, *rt, {{xt->info.channels_last() ? nhwc_kernel : nchw_kernel, t}});
}

}  // namespace
}  // namespace genie::fakecuda::dnn

using genie::fakecuda::ConvPass;

// --- tensor descriptors -----------------------------------------------------------------------------------------
GENIE_CUDNN_EXPORT cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* d) {
  return guard(__func__, [&] {
    if (d == nullptr) return fail("cudnnCreateTensorDescriptor", "tensorDesc is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    *d = reinterpret_cast<cudnnTensorDescriptor_t>(dnn::tensors().create());
    return CUDNN_STATUS_SUCCESS;
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d) {
  if (d == nullptr) return CUDNN_STATUS_SUCCESS;  // as cuDNN: destroying null is a no-op
  return dnn::tensors().destroy(d) ? CUDNN_STATUS_SUCCESS
                                   : fail(__func__, "tensorDesc is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
}

namespace {
cudnnStatus_t set_tensor(const char* fn, cudnnTensorDescriptor_t d, int dtype, std::vector<int64_t> dims,
                         std::vector<int64_t> strides) {
  dnn::LegacyTensor* t = dnn::tensors().find(d);
  if (t == nullptr) return fail(fn, "tensorDesc is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
  if (!dnn::known_dtype(dtype)) return fail(fn, "dataType " + std::to_string(dtype), CUDNN_STATUS_BAD_PARAM);
  if (dims.empty() || dims.size() > CUDNN_DIM_MAX || dims.size() != strides.size())
    return fail(fn, "nbDims " + std::to_string(dims.size()), CUDNN_STATUS_BAD_PARAM);
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] <= 0 || strides[i] <= 0)
      return fail(fn, "dimension " + std::to_string(i) + " is " + std::to_string(dims[i]) + " with stride " +
                          std::to_string(strides[i]),
                  CUDNN_STATUS_BAD_PARAM);
  t->info.dtype = dtype;
  t->info.dims = std::move(dims);
  t->info.strides = std::move(strides);
  t->set = true;
  return CUDNN_STATUS_SUCCESS;
}
}  // namespace

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t d, cudnnDataType_t dtype, int nb,
                                                            const int dims[], const int strides[]) {
  return guard(__func__, [&] {
    if (nb <= 0 || nb > CUDNN_DIM_MAX) return fail("cudnnSetTensorNdDescriptor", "nbDims " + std::to_string(nb), CUDNN_STATUS_BAD_PARAM);
    if (dims == nullptr || strides == nullptr)
      return fail("cudnnSetTensorNdDescriptor", "dimA or strideA is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    return set_tensor("cudnnSetTensorNdDescriptor", d, enum_raw(dtype), std::vector<int64_t>(dims, dims + nb),
                      std::vector<int64_t>(strides, strides + nb));
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnSetTensorNdDescriptorEx(cudnnTensorDescriptor_t d, cudnnTensorFormat_t format,
                                                              cudnnDataType_t dtype, int nb, const int dims[]) {
  return guard(__func__, [&] {
    if (nb < 3 || nb > CUDNN_DIM_MAX) return fail("cudnnSetTensorNdDescriptorEx", "nbDims " + std::to_string(nb), CUDNN_STATUS_BAD_PARAM);
    if (dims == nullptr) return fail("cudnnSetTensorNdDescriptorEx", "dimA is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    if (format != CUDNN_TENSOR_NCHW && format != CUDNN_TENSOR_NHWC)
      return fail("cudnnSetTensorNdDescriptorEx", "format " + std::to_string(enum_raw(format)), CUDNN_STATUS_NOT_SUPPORTED);
    std::vector<int64_t> dv(dims, dims + nb);
    return set_tensor("cudnnSetTensorNdDescriptorEx", d, enum_raw(dtype), dv,
                      dnn::packed_strides(dv, format == CUDNN_TENSOR_NHWC));
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnSetTensor4dDescriptorEx(cudnnTensorDescriptor_t d, cudnnDataType_t dtype, int n,
                                                              int c, int h, int w, int ns, int cs, int hs, int ws) {
  return guard(__func__, [&] {
    return set_tensor("cudnnSetTensor4dDescriptorEx", d, enum_raw(dtype), {n, c, h, w}, {ns, cs, hs, ws});
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d, cudnnTensorFormat_t format,
                                                            cudnnDataType_t dtype, int n, int c, int h, int w) {
  const int dims[4] = {n, c, h, w};
  return cudnnSetTensorNdDescriptorEx(d, format, dtype, 4, dims);
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGetTensorNdDescriptor(const cudnnTensorDescriptor_t d, int requested,
                                                            cudnnDataType_t* dtype, int* nb, int dims[], int strides[]) {
  return guard(__func__, [&] {
    dnn::LegacyTensor* t = dnn::tensors().find(d);
    if (t == nullptr || !t->set) return fail("cudnnGetTensorNdDescriptor", "tensorDesc is not a set descriptor", CUDNN_STATUS_BAD_PARAM);
    if (dtype == nullptr || nb == nullptr)
      return fail("cudnnGetTensorNdDescriptor", "dataType or nbDims is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    *dtype = static_cast<cudnnDataType_t>(t->info.dtype);
    *nb = static_cast<int>(t->info.dims.size());
    for (int i = 0; i < std::min(requested, *nb); ++i) {
      if (dims) dims[i] = static_cast<int>(t->info.dims[static_cast<size_t>(i)]);
      if (strides) strides[i] = static_cast<int>(t->info.strides[static_cast<size_t>(i)]);
    }
    return CUDNN_STATUS_SUCCESS;
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGetTensorSizeInBytes(const cudnnTensorDescriptor_t d, size_t* size) {
  dnn::LegacyTensor* t = dnn::tensors().find(d);
  if (t == nullptr || !t->set) return fail(__func__, "tensorDesc is not a set descriptor", CUDNN_STATUS_BAD_PARAM);
  if (size == nullptr) return fail(__func__, "size is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
  *size = static_cast<size_t>(t->info.extent_bytes());
  return CUDNN_STATUS_SUCCESS;
}

// --- filter descriptors -----------------------------------------------------------------------------------------
GENIE_CUDNN_EXPORT cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t* d) {
  return guard(__func__, [&] {
    if (d == nullptr) return fail("cudnnCreateFilterDescriptor", "filterDesc is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    *d = reinterpret_cast<cudnnFilterDescriptor_t>(dnn::filters().create());
    return CUDNN_STATUS_SUCCESS;
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d) {
  if (d == nullptr) return CUDNN_STATUS_SUCCESS;
  return dnn::filters().destroy(d) ? CUDNN_STATUS_SUCCESS
                                   : fail(__func__, "filterDesc is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t dtype,
                                                            cudnnTensorFormat_t format, int nb, const int dims[]) {
  return guard(__func__, [&] {
    const char* fn = "cudnnSetFilterNdDescriptor";
    dnn::LegacyFilter* f = dnn::filters().find(d);
    if (f == nullptr) return fail(fn, "filterDesc is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
    if (nb < 3 || nb > CUDNN_DIM_MAX) return fail(fn, "nbDims " + std::to_string(nb), CUDNN_STATUS_BAD_PARAM);
    if (dims == nullptr) return fail(fn, "filterDimA is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    if (!dnn::known_dtype(enum_raw(dtype))) return fail(fn, "dataType " + std::to_string(enum_raw(dtype)), CUDNN_STATUS_BAD_PARAM);
    if (format != CUDNN_TENSOR_NCHW && format != CUDNN_TENSOR_NHWC)
      return fail(fn, "format " + std::to_string(enum_raw(format)), CUDNN_STATUS_NOT_SUPPORTED);
    std::vector<int64_t> dv(dims, dims + nb);
    for (int i = 0; i < nb; ++i)
      if (dv[static_cast<size_t>(i)] <= 0) return fail(fn, "filterDimA[" + std::to_string(i) + "] is " + std::to_string(dims[i]), CUDNN_STATUS_BAD_PARAM);
    f->info.dtype = enum_raw(dtype);
    f->info.strides = dnn::packed_strides(dv, format == CUDNN_TENSOR_NHWC);
    f->info.dims = std::move(dv);
    f->format = enum_raw(format);
    f->set = true;
    return CUDNN_STATUS_SUCCESS;
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t dtype,
                                                            cudnnTensorFormat_t format, int k, int c, int h, int w) {
  const int dims[4] = {k, c, h, w};
  return cudnnSetFilterNdDescriptor(d, dtype, format, 4, dims);
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGetFilterNdDescriptor(const cudnnFilterDescriptor_t d, int requested,
                                                            cudnnDataType_t* dtype, cudnnTensorFormat_t* format,
                                                            int* nb, int dims[]) {
  return guard(__func__, [&] {
    dnn::LegacyFilter* f = dnn::filters().find(d);
    if (f == nullptr || !f->set) return fail("cudnnGetFilterNdDescriptor", "filterDesc is not a set descriptor", CUDNN_STATUS_BAD_PARAM);
    if (dtype == nullptr || format == nullptr || nb == nullptr)
      return fail("cudnnGetFilterNdDescriptor", "an output is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    *dtype = static_cast<cudnnDataType_t>(f->info.dtype);
    *format = static_cast<cudnnTensorFormat_t>(f->format);
    *nb = static_cast<int>(f->info.dims.size());
    for (int i = 0; dims != nullptr && i < std::min(requested, *nb); ++i) dims[i] = static_cast<int>(f->info.dims[static_cast<size_t>(i)]);
    return CUDNN_STATUS_SUCCESS;
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGetFilterSizeInBytes(const cudnnFilterDescriptor_t d, size_t* size) {
  dnn::LegacyFilter* f = dnn::filters().find(d);
  if (f == nullptr || !f->set) return fail(__func__, "filterDesc is not a set descriptor", CUDNN_STATUS_BAD_PARAM);
  if (size == nullptr) return fail(__func__, "size is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
  *size = static_cast<size_t>(f->info.extent_bytes());
  return CUDNN_STATUS_SUCCESS;
}

// --- convolution descriptors ------------------------------------------------------------------------------------
GENIE_CUDNN_EXPORT cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t* d) {
  return guard(__func__, [&] {
    if (d == nullptr) return fail("cudnnCreateConvolutionDescriptor", "convDesc is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    *d = reinterpret_cast<cudnnConvolutionDescriptor_t>(dnn::convs().create());
    return CUDNN_STATUS_SUCCESS;
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d) {
  if (d == nullptr) return CUDNN_STATUS_SUCCESS;
  return dnn::convs().destroy(d) ? CUDNN_STATUS_SUCCESS
                                 : fail(__func__, "convDesc is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t d, int n,
                                                                 const int pad[], const int stride[],
                                                                 const int dilation[], cudnnConvolutionMode_t mode,
                                                                 cudnnDataType_t compute) {
  return guard(__func__, [&] {
    const char* fn = "cudnnSetConvolutionNdDescriptor";
    dnn::LegacyConv* c = dnn::convs().find(d);
    if (c == nullptr) return fail(fn, "convDesc is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
    if (n < 1 || n > 3) return fail(fn, "arrayLength " + std::to_string(n) + " (1 to 3)", CUDNN_STATUS_NOT_SUPPORTED);
    if (pad == nullptr || stride == nullptr || dilation == nullptr)
      return fail(fn, "padA, filterStrideA or dilationA is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    if (mode != CUDNN_CONVOLUTION && mode != CUDNN_CROSS_CORRELATION)
      return fail(fn, "mode " + std::to_string(enum_raw(mode)), CUDNN_STATUS_BAD_PARAM);
    for (int i = 0; i < n; ++i)
      if (pad[i] < 0 || stride[i] <= 0 || dilation[i] <= 0)
        return fail(fn, "dimension " + std::to_string(i) + ": padding " + std::to_string(pad[i]) + ", stride " +
                            std::to_string(stride[i]) + ", dilation " + std::to_string(dilation[i]),
                    CUDNN_STATUS_BAD_PARAM);
    c->params = dnn::ConvParams{};
    c->params.spatial = n;
    for (int i = 0; i < n; ++i) {
      c->params.pre_pad[static_cast<size_t>(i)] = c->params.post_pad[static_cast<size_t>(i)] = pad[i];
      c->params.stride[static_cast<size_t>(i)] = stride[i];
      c->params.dilation[static_cast<size_t>(i)] = dilation[i];
    }
    c->mode = enum_raw(mode);
    c->compute_type = enum_raw(compute);
    c->set = true;
    return CUDNN_STATUS_SUCCESS;
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d, int pad_h, int pad_w,
                                                                 int u, int v, int dil_h, int dil_w,
                                                                 cudnnConvolutionMode_t mode, cudnnDataType_t compute) {
  const int pad[2] = {pad_h, pad_w}, stride[2] = {u, v}, dil[2] = {dil_h, dil_w};
  return cudnnSetConvolutionNdDescriptor(d, 2, pad, stride, dil, mode, compute);
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int groups) {
  dnn::LegacyConv* c = dnn::convs().find(d);
  if (c == nullptr) return fail(__func__, "convDesc is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
  if (groups <= 0) return fail(__func__, "groupCount " + std::to_string(groups), CUDNN_STATUS_BAD_PARAM);
  c->groups = groups;
  return CUDNN_STATUS_SUCCESS;
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int* groups) {
  dnn::LegacyConv* c = dnn::convs().find(d);
  if (c == nullptr) return fail(__func__, "convDesc is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
  if (groups == nullptr) return fail(__func__, "groupCount is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
  *groups = c->groups;
  return CUDNN_STATUS_SUCCESS;
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t math) {
  dnn::LegacyConv* c = dnn::convs().find(d);
  if (c == nullptr) return fail(__func__, "convDesc is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
  if (enum_raw(math) < CUDNN_DEFAULT_MATH || enum_raw(math) > CUDNN_FMA_MATH)
    return fail(__func__, "mathType " + std::to_string(enum_raw(math)), CUDNN_STATUS_BAD_PARAM);
  c->math = enum_raw(math);
  return CUDNN_STATUS_SUCCESS;
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t* math) {
  dnn::LegacyConv* c = dnn::convs().find(d);
  if (c == nullptr) return fail(__func__, "convDesc is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
  if (math == nullptr) return fail(__func__, "mathType is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
  *math = static_cast<cudnnMathType_t>(c->math);
  return CUDNN_STATUS_SUCCESS;
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnSetConvolutionReorderType(cudnnConvolutionDescriptor_t d, cudnnReorderType_t t) {
  dnn::LegacyConv* c = dnn::convs().find(d);
  if (c == nullptr) return fail(__func__, "convDesc is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
  c->reorder = enum_raw(t);
  return CUDNN_STATUS_SUCCESS;
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGetConvolutionReorderType(cudnnConvolutionDescriptor_t d, cudnnReorderType_t* t) {
  dnn::LegacyConv* c = dnn::convs().find(d);
  if (c == nullptr) return fail(__func__, "convDesc is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
  if (t == nullptr) return fail(__func__, "reorderType is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
  *t = static_cast<cudnnReorderType_t>(c->reorder);
  return CUDNN_STATUS_SUCCESS;
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGetConvolutionNdForwardOutputDim(const cudnnConvolutionDescriptor_t cd,
                                                                       const cudnnTensorDescriptor_t xd,
                                                                       const cudnnFilterDescriptor_t wd, int nb,
                                                                       int out[]) {
  return guard(__func__, [&] {
    const char* fn = "cudnnGetConvolutionNdForwardOutputDim";
    dnn::LegacyConv* c = dnn::convs().find(cd);
    dnn::LegacyTensor* x = dnn::tensors().find(xd);
    dnn::LegacyFilter* w = dnn::filters().find(wd);
    if (c == nullptr || !c->set || x == nullptr || !x->set || w == nullptr || !w->set)
      return fail(fn, "convDesc, inputTensorDesc or filterDesc is not a set descriptor", CUDNN_STATUS_BAD_PARAM);
    if (out == nullptr) return fail(fn, "tensorOuputDimA is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    const size_t rank = static_cast<size_t>(c->params.spatial) + 2;
    if (static_cast<size_t>(nb) != rank || x->info.dims.size() != rank || w->info.dims.size() != rank)
      return fail(fn, "nbDims " + std::to_string(nb) + " for a convolution of " + std::to_string(rank) + " dimensions",
                  CUDNN_STATUS_BAD_PARAM);
    out[0] = static_cast<int>(x->info.dims[0]);
    out[1] = static_cast<int>(w->info.dims[0]);
    for (size_t d = 0; d + 2 < rank; ++d) {
      const int64_t span = x->info.dims[d + 2] + 2 * c->params.pre_pad[d] -
                           c->params.dilation[d] * (w->info.dims[d + 2] - 1) - 1;
      if (span < 0) return fail(fn, "the filter is larger than the padded input", CUDNN_STATUS_BAD_PARAM);
      out[d + 2] = static_cast<int>(span / c->params.stride[d] + 1);
    }
    return CUDNN_STATUS_SUCCESS;
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(const cudnnConvolutionDescriptor_t cd,
                                                                       const cudnnTensorDescriptor_t xd,
                                                                       const cudnnFilterDescriptor_t wd, int* n, int* c,
                                                                       int* h, int* w) {
  int out[4] = {};
  cudnnStatus_t st = cudnnGetConvolutionNdForwardOutputDim(cd, xd, wd, 4, out);
  if (st != CUDNN_STATUS_SUCCESS) return st;
  if (n == nullptr || c == nullptr || h == nullptr || w == nullptr)
    return fail(__func__, "an output is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
  *n = out[0], *c = out[1], *h = out[2], *w = out[3];
  return CUDNN_STATUS_SUCCESS;
}

// --- activation descriptors ---------------------------------------------------------------------------------
GENIE_CUDNN_EXPORT cudnnStatus_t cudnnCreateActivationDescriptor(cudnnActivationDescriptor_t* d) {
  return guard(__func__, [&] {
    if (d == nullptr) return fail("cudnnCreateActivationDescriptor", "activationDesc is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    *d = reinterpret_cast<cudnnActivationDescriptor_t>(dnn::activations().create());
    return CUDNN_STATUS_SUCCESS;
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnDestroyActivationDescriptor(cudnnActivationDescriptor_t d) {
  if (d == nullptr) return CUDNN_STATUS_SUCCESS;
  return dnn::activations().destroy(d) ? CUDNN_STATUS_SUCCESS
                                       : fail(__func__, "activationDesc is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t d, cudnnActivationMode_t mode,
                                                              cudnnNanPropagation_t nan, double coef) {
  dnn::LegacyActivation* a = dnn::activations().find(d);
  if (a == nullptr) return fail(__func__, "activationDesc is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
  if (enum_raw(mode) < CUDNN_ACTIVATION_SIGMOID || enum_raw(mode) > CUDNN_ACTIVATION_SWISH)
    return fail(__func__, "mode " + std::to_string(enum_raw(mode)), CUDNN_STATUS_BAD_PARAM);
  a->mode = enum_raw(mode);
  a->nan = enum_raw(nan);
  a->coef = coef;
  return CUDNN_STATUS_SUCCESS;
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGetActivationDescriptor(const cudnnActivationDescriptor_t d,
                                                              cudnnActivationMode_t* mode, cudnnNanPropagation_t* nan,
                                                              double* coef) {
  dnn::LegacyActivation* a = dnn::activations().find(d);
  if (a == nullptr) return fail(__func__, "activationDesc is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
  if (mode == nullptr || nan == nullptr || coef == nullptr)
    return fail(__func__, "an output is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
  *mode = static_cast<cudnnActivationMode_t>(a->mode);
  *nan = static_cast<cudnnNanPropagation_t>(a->nan);
  *coef = a->coef;
  return CUDNN_STATUS_SUCCESS;
}

// --- convolution algorithms and execution ---------------------------------------------------------------------
GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGetConvolutionForwardAlgorithmMaxCount(cudnnHandle_t h, int* count) {
  if (dnn::find_handle(h) == nullptr) return fail(__func__, "handle is not a live cuDNN handle", CUDNN_STATUS_BAD_PARAM);
  if (count == nullptr) return fail(__func__, "count is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
  *count = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
  return CUDNN_STATUS_SUCCESS;
}
GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithmMaxCount(cudnnHandle_t h, int* count) {
  if (dnn::find_handle(h) == nullptr) return fail(__func__, "handle is not a live cuDNN handle", CUDNN_STATUS_BAD_PARAM);
  if (count == nullptr) return fail(__func__, "count is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
  *count = CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
  return CUDNN_STATUS_SUCCESS;
}
GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(cudnnHandle_t h, int* count) {
  if (dnn::find_handle(h) == nullptr) return fail(__func__, "handle is not a live cuDNN handle", CUDNN_STATUS_BAD_PARAM);
  if (count == nullptr) return fail(__func__, "count is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
  *count = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
  return CUDNN_STATUS_SUCCESS;
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t h, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
    const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t y, const int requested, int* returned,
    cudnnConvolutionFwdAlgoPerf_t* perf) {
  return guard(__func__, [&] {
    return dnn::rank_algorithms("cudnnGetConvolutionForwardAlgorithm_v7", h, ConvPass::kForward, x, w, c, y, requested,
                                returned, perf, false);
  });
}
GENIE_CUDNN_EXPORT cudnnStatus_t cudnnFindConvolutionForwardAlgorithm(
    cudnnHandle_t h, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
    const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t y, const int requested, int* returned,
    cudnnConvolutionFwdAlgoPerf_t* perf) {
  return guard(__func__, [&] {
    return dnn::rank_algorithms("cudnnFindConvolutionForwardAlgorithm", h, ConvPass::kForward, x, w, c, y, requested,
                                returned, perf, true);
  });
}
GENIE_CUDNN_EXPORT cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(
    cudnnHandle_t h, const cudnnTensorDescriptor_t x, const void*, const cudnnFilterDescriptor_t w, const void*,
    const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t y, void*, const int requested, int* returned,
    cudnnConvolutionFwdAlgoPerf_t* perf, void*, size_t) {
  return guard(__func__, [&] {
    return dnn::rank_algorithms("cudnnFindConvolutionForwardAlgorithmEx", h, ConvPass::kForward, x, w, c, y, requested,
                                returned, perf, true);
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cudnnHandle_t h, const cudnnFilterDescriptor_t w, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t dx, const int requested, int* returned,
    cudnnConvolutionBwdDataAlgoPerf_t* perf) {
  return guard(__func__, [&] {
    return dnn::rank_algorithms("cudnnGetConvolutionBackwardDataAlgorithm_v7", h, ConvPass::kBackwardData, dx, w, c, dy,
                                requested, returned, perf, false);
  });
}
GENIE_CUDNN_EXPORT cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithm(
    cudnnHandle_t h, const cudnnFilterDescriptor_t w, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t dx, const int requested, int* returned,
    cudnnConvolutionBwdDataAlgoPerf_t* perf) {
  return guard(__func__, [&] {
    return dnn::rank_algorithms("cudnnFindConvolutionBackwardDataAlgorithm", h, ConvPass::kBackwardData, dx, w, c, dy,
                                requested, returned, perf, true);
  });
}
GENIE_CUDNN_EXPORT cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithmEx(
    cudnnHandle_t h, const cudnnFilterDescriptor_t w, const void*, const cudnnTensorDescriptor_t dy, const void*,
    const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t dx, void*, const int requested, int* returned,
    cudnnConvolutionBwdDataAlgoPerf_t* perf, void*, size_t) {
  return guard(__func__, [&] {
    return dnn::rank_algorithms("cudnnFindConvolutionBackwardDataAlgorithmEx", h, ConvPass::kBackwardData, dx, w, c, dy,
                                requested, returned, perf, true);
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    cudnnHandle_t h, const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t c, const cudnnFilterDescriptor_t dw, const int requested, int* returned,
    cudnnConvolutionBwdFilterAlgoPerf_t* perf) {
  return guard(__func__, [&] {
    return dnn::rank_algorithms("cudnnGetConvolutionBackwardFilterAlgorithm_v7", h, ConvPass::kBackwardFilter, x, dw,
                                c, dy, requested, returned, perf, false);
  });
}
GENIE_CUDNN_EXPORT cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithm(
    cudnnHandle_t h, const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t c, const cudnnFilterDescriptor_t dw, const int requested, int* returned,
    cudnnConvolutionBwdFilterAlgoPerf_t* perf) {
  return guard(__func__, [&] {
    return dnn::rank_algorithms("cudnnFindConvolutionBackwardFilterAlgorithm", h, ConvPass::kBackwardFilter, x, dw, c,
                                dy, requested, returned, perf, true);
  });
}
GENIE_CUDNN_EXPORT cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithmEx(
    cudnnHandle_t h, const cudnnTensorDescriptor_t x, const void*, const cudnnTensorDescriptor_t dy, const void*,
    const cudnnConvolutionDescriptor_t c, const cudnnFilterDescriptor_t dw, void*, const int requested, int* returned,
    cudnnConvolutionBwdFilterAlgoPerf_t* perf, void*, size_t) {
  return guard(__func__, [&] {
    return dnn::rank_algorithms("cudnnFindConvolutionBackwardFilterAlgorithmEx", h, ConvPass::kBackwardFilter, x, dw,
                                c, dy, requested, returned, perf, true);
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t h,
                                                                         const cudnnTensorDescriptor_t x,
                                                                         const cudnnFilterDescriptor_t w,
                                                                         const cudnnConvolutionDescriptor_t c,
                                                                         const cudnnTensorDescriptor_t y,
                                                                         cudnnConvolutionFwdAlgo_t algo, size_t* size) {
  return guard(__func__, [&] {
    if (dnn::find_handle(h) == nullptr)
      return fail("cudnnGetConvolutionForwardWorkspaceSize", "handle is not a live cuDNN handle", CUDNN_STATUS_BAD_PARAM);
    return dnn::workspace_size("cudnnGetConvolutionForwardWorkspaceSize", ConvPass::kForward, x, w, c, y,
                               enum_raw(algo), size);
  });
}
GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(cudnnHandle_t h,
                                                                              const cudnnFilterDescriptor_t w,
                                                                              const cudnnTensorDescriptor_t dy,
                                                                              const cudnnConvolutionDescriptor_t c,
                                                                              const cudnnTensorDescriptor_t dx,
                                                                              cudnnConvolutionBwdDataAlgo_t algo,
                                                                              size_t* size) {
  return guard(__func__, [&] {
    if (dnn::find_handle(h) == nullptr)
      return fail("cudnnGetConvolutionBackwardDataWorkspaceSize", "handle is not a live cuDNN handle", CUDNN_STATUS_BAD_PARAM);
    return dnn::workspace_size("cudnnGetConvolutionBackwardDataWorkspaceSize", ConvPass::kBackwardData, dx, w, c, dy,
                               enum_raw(algo), size);
  });
}
GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(cudnnHandle_t h,
                                                                                const cudnnTensorDescriptor_t x,
                                                                                const cudnnTensorDescriptor_t dy,
                                                                                const cudnnConvolutionDescriptor_t c,
                                                                                const cudnnFilterDescriptor_t dw,
                                                                                cudnnConvolutionBwdFilterAlgo_t algo,
                                                                                size_t* size) {
  return guard(__func__, [&] {
    if (dnn::find_handle(h) == nullptr)
      return fail("cudnnGetConvolutionBackwardFilterWorkspaceSize", "handle is not a live cuDNN handle", CUDNN_STATUS_BAD_PARAM);
    return dnn::workspace_size("cudnnGetConvolutionBackwardFilterWorkspaceSize", ConvPass::kBackwardFilter, x, dw, c,
                               dy, enum_raw(algo), size);
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void*, const cudnnTensorDescriptor_t xd,
                                                         const void* x, const cudnnFilterDescriptor_t wd, const void* w,
                                                         const cudnnConvolutionDescriptor_t c,
                                                         cudnnConvolutionFwdAlgo_t algo, void* ws, size_t ws_bytes,
                                                         const void*, const cudnnTensorDescriptor_t yd, void* y) {
  return guard(__func__, [&] {
    return dnn::run_convolution("cudnnConvolutionForward", h, ConvPass::kForward, xd, x, wd, w, c, enum_raw(algo), ws,
                                ws_bytes, yd, y, 0);
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t h, const void*,
                                                              const cudnnFilterDescriptor_t wd, const void* w,
                                                              const cudnnTensorDescriptor_t dyd, const void* dy,
                                                              const cudnnConvolutionDescriptor_t c,
                                                              cudnnConvolutionBwdDataAlgo_t algo, void* ws,
                                                              size_t ws_bytes, const void*,
                                                              const cudnnTensorDescriptor_t dxd, void* dx) {
  return guard(__func__, [&] {
    return dnn::run_convolution("cudnnConvolutionBackwardData", h, ConvPass::kBackwardData, dxd, dx, wd, w, c,
                                enum_raw(algo), ws, ws_bytes, dyd, dy, 0);
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t h, const void*,
                                                                const cudnnTensorDescriptor_t xd, const void* x,
                                                                const cudnnTensorDescriptor_t dyd, const void* dy,
                                                                const cudnnConvolutionDescriptor_t c,
                                                                cudnnConvolutionBwdFilterAlgo_t algo, void* ws,
                                                                size_t ws_bytes, const void*,
                                                                const cudnnFilterDescriptor_t dwd, void* dw) {
  return guard(__func__, [&] {
    return dnn::run_convolution("cudnnConvolutionBackwardFilter", h, ConvPass::kBackwardFilter, xd, x, dwd, dw, c,
                                enum_raw(algo), ws, ws_bytes, dyd, dy, 0);
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnConvolutionBiasActivationForward(
    cudnnHandle_t h, const void*, const cudnnTensorDescriptor_t xd, const void* x, const cudnnFilterDescriptor_t wd,
    const void* w, const cudnnConvolutionDescriptor_t c, cudnnConvolutionFwdAlgo_t algo, void* ws, size_t ws_bytes,
    const void*, const cudnnTensorDescriptor_t zd, const void* z, const cudnnTensorDescriptor_t bd, const void* bias,
    const cudnnActivationDescriptor_t ad, const cudnnTensorDescriptor_t yd, void* y) {
  return guard(__func__, [&] {
    const char* fn = "cudnnConvolutionBiasActivationForward";
    dnn::LegacyTensor* zt = dnn::tensors().find(zd);
    dnn::LegacyTensor* bt = dnn::tensors().find(bd);
    if (zt == nullptr || !zt->set || bt == nullptr || !bt->set)
      return fail(fn, "zDesc or biasDesc is not a set tensor descriptor", CUDNN_STATUS_BAD_PARAM);
    if (ad != nullptr && dnn::activations().find(ad) == nullptr)
      return fail(fn, "activationDesc is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
    if (bias == nullptr) return fail(fn, "bias is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    // The fused epilogue reads the bias and (when alpha2 may be non-zero: a z pointer) the residual z.
    const double epilogue = static_cast<double>(bt->info.extent_bytes()) +
                            (z != nullptr && z != y ? static_cast<double>(zt->info.extent_bytes()) : 0.0);
    return dnn::run_convolution(fn, h, ConvPass::kForward, xd, x, wd, w, c, enum_raw(algo), ws, ws_bytes, yd, y,
                                epilogue);
  });
}

// --- batch normalization --------------------------------------------------------------------------------------
GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
    cudnnHandle_t h, cudnnBatchNormMode_t, cudnnBatchNormOps_t, const cudnnTensorDescriptor_t x,
    const cudnnTensorDescriptor_t, const cudnnTensorDescriptor_t, const cudnnTensorDescriptor_t,
    const cudnnActivationDescriptor_t, size_t* size) {
  if (dnn::find_handle(h) == nullptr) return fail(__func__, "handle is not a live cuDNN handle", CUDNN_STATUS_BAD_PARAM);
  if (dnn::tensors().find(x) == nullptr) return fail(__func__, "xDesc is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
  if (size == nullptr) return fail(__func__, "sizeInBytes is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
  *size = 0;  // the modelled kernels keep their partial sums on chip
  return CUDNN_STATUS_SUCCESS;
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGetBatchNormalizationBackwardExWorkspaceSize(
    cudnnHandle_t h, cudnnBatchNormMode_t, cudnnBatchNormOps_t, const cudnnTensorDescriptor_t x,
    const cudnnTensorDescriptor_t, const cudnnTensorDescriptor_t, const cudnnTensorDescriptor_t,
    const cudnnTensorDescriptor_t, const cudnnTensorDescriptor_t, const cudnnActivationDescriptor_t, size_t* size) {
  if (dnn::find_handle(h) == nullptr) return fail(__func__, "handle is not a live cuDNN handle", CUDNN_STATUS_BAD_PARAM);
  if (dnn::tensors().find(x) == nullptr) return fail(__func__, "xDesc is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
  if (size == nullptr) return fail(__func__, "sizeInBytes is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
  *size = 0;
  return CUDNN_STATUS_SUCCESS;
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGetBatchNormalizationTrainingExReserveSpaceSize(
    cudnnHandle_t h, cudnnBatchNormMode_t, cudnnBatchNormOps_t, const cudnnActivationDescriptor_t,
    const cudnnTensorDescriptor_t x, size_t* size) {
  if (dnn::find_handle(h) == nullptr) return fail(__func__, "handle is not a live cuDNN handle", CUDNN_STATUS_BAD_PARAM);
  if (dnn::tensors().find(x) == nullptr) return fail(__func__, "xDesc is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
  if (size == nullptr) return fail(__func__, "sizeInBytes is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
  *size = 0;
  return CUDNN_STATUS_SUCCESS;
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx(
    cudnnHandle_t h, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const void*, const void*,
    const cudnnTensorDescriptor_t xd, const void* x, const cudnnTensorDescriptor_t, const void* z,
    const cudnnTensorDescriptor_t, void* y, const cudnnTensorDescriptor_t pd, const void*, const void*, double,
    void*, void*, double, void*, void*, cudnnActivationDescriptor_t, void*, size_t, void*, size_t) {
  return guard(__func__, [&] {
    if (y == nullptr) return fail("cudnnBatchNormalizationForwardTrainingEx", "yData is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    // Statistics pass (read x), normalize pass (read x, write y), plus the added tensor z when fused.
    const double passes = 3 + (enum_raw(ops) == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION && z != nullptr ? 1 : 0);
    return dnn::run_batch_norm("cudnnBatchNormalizationForwardTrainingEx", h, enum_raw(mode), xd, x, pd, passes,
                               "cudnn::bn_fw_tr_1C11_kernel_NCHW", "cudnn::bn_fw_tr_1C11_singleread_NHWC");
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnBatchNormalizationForwardInference(
    cudnnHandle_t h, cudnnBatchNormMode_t mode, const void*, const void*, const cudnnTensorDescriptor_t xd,
    const void* x, const cudnnTensorDescriptor_t, void* y, const cudnnTensorDescriptor_t pd, const void*, const void*,
    const void*, const void*, double) {
  return guard(__func__, [&] {
    if (y == nullptr) return fail("cudnnBatchNormalizationForwardInference", "y is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    return dnn::run_batch_norm("cudnnBatchNormalizationForwardInference", h, enum_raw(mode), xd, x, pd, 2,
                               "cudnn::bn_fw_inf_1C11_kernel_NCHW", "cudnn::bn_fw_inf_1C11_kernel_NHWC");
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnBatchNormalizationBackwardEx(
    cudnnHandle_t h, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t, const void*, const void*, const void*,
    const void*, const cudnnTensorDescriptor_t xd, const void* x, const cudnnTensorDescriptor_t, const void*,
    const cudnnTensorDescriptor_t, const void* dy, const cudnnTensorDescriptor_t, void*,
    const cudnnTensorDescriptor_t, void* dx, const cudnnTensorDescriptor_t pd, const void*, const void*, void*, void*,
    double, const void*, const void*, cudnnActivationDescriptor_t, void*, size_t, void*, size_t) {
  return guard(__func__, [&] {
    if (dy == nullptr || dx == nullptr)
      return fail("cudnnBatchNormalizationBackwardEx", "dyData or dxData is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    // Reduction pass (read x and dy), then read x and dy again and write dx.
    return dnn::run_batch_norm("cudnnBatchNormalizationBackwardEx", h, enum_raw(mode), xd, x, pd, 5,
                               "cudnn::bn_bw_1C11_kernel_new", "cudnn::bn_bw_1C11_singleread_NHWC");
  });
}
