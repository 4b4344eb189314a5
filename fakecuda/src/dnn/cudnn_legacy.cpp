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
#include "dnn/legacy_descriptors.hpp"
#include "genie/common/enum_raw.hpp"
#include "genie/fakecuda/blas_handle.hpp"
#include "genie/fakecuda/runtime.hpp"

using genie::enum_raw;
namespace dnn = genie::fakecuda::dnn;
using dnn::fail;
using dnn::guard;

namespace genie::fakecuda::dnn {
namespace {

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

cudnnStatus_t workspace_size(const char* fn, cudnnHandle_t handle, ConvPass pass, const void* x_desc,
                             const void* w_desc, const void* conv_desc, const void* y_desc, int algo, size_t* size) {
  if (find_handle(handle) == nullptr) return fail(fn, "handle is not a live cuDNN handle", CUDNN_STATUS_BAD_PARAM);
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
    return dnn::workspace_size("cudnnGetConvolutionForwardWorkspaceSize", h, ConvPass::kForward, x, w, c, y,
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
    return dnn::workspace_size("cudnnGetConvolutionBackwardDataWorkspaceSize", h, ConvPass::kBackwardData, dx, w, c, dy,
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
    return dnn::workspace_size("cudnnGetConvolutionBackwardFilterWorkspaceSize", h, ConvPass::kBackwardFilter, x, dw, c,
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
