// SPDX-License-Identifier: Apache-2.0
// cuDNN's legacy descriptor API: tensor, filter, convolution and activation descriptors (legacy_descriptors.hpp),
// checked when set and read back as cuDNN answers; the convolution and batch-norm calls that use them are in
// cudnn_legacy.cpp.
#include <cudnn.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dnn/legacy_descriptors.hpp"
#include "genie/common/enum_raw.hpp"

using genie::enum_raw;
namespace dnn = genie::fakecuda::dnn;
using dnn::fail;
using dnn::guard;

namespace genie::fakecuda::dnn {

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

}  // namespace genie::fakecuda::dnn

// --- tensor descriptors -----------------------------------------------------------------------------------------
GENIE_CUDNN_EXPORT cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* d) {
  return dnn::create_in(dnn::tensors(), d, __func__, "tensorDesc");
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d) {
  return dnn::destroy_in(dnn::tensors(), d, __func__, "tensorDesc");
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
  return dnn::create_in(dnn::filters(), d, __func__, "filterDesc");
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d) {
  return dnn::destroy_in(dnn::filters(), d, __func__, "filterDesc");
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
  return dnn::create_in(dnn::convs(), d, __func__, "convDesc");
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d) {
  return dnn::destroy_in(dnn::convs(), d, __func__, "convDesc");
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
  return dnn::create_in(dnn::activations(), d, __func__, "activationDesc");
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnDestroyActivationDescriptor(cudnnActivationDescriptor_t d) {
  return dnn::destroy_in(dnn::activations(), d, __func__, "activationDesc");
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
