// SPDX-License-Identifier: Apache-2.0
#include "dnn/conv_engines.hpp"

#include <algorithm>
#include <mutex>
#include <set>

namespace genie::fakecuda::dnn {

int dtype_bytes(int dtype) {
  switch (dtype) {
    case CUDNN_DATA_FLOAT: return 4;
    case CUDNN_DATA_DOUBLE: return 8;
    case CUDNN_DATA_HALF: case CUDNN_DATA_BFLOAT16: return 2;
    case CUDNN_DATA_INT8: case CUDNN_DATA_UINT8: case CUDNN_DATA_BOOLEAN: case CUDNN_DATA_FP8_E4M3:
    case CUDNN_DATA_FP8_E5M2: return 1;
    case CUDNN_DATA_INT32: return 4;
    case CUDNN_DATA_INT64: return 8;
    default: return 0;
  }
}

int64_t TensorInfo::extent_bytes() const {
  if (dims.empty() || dims.size() != strides.size()) return 0;
  int64_t last = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] <= 0) return 0;
    last += (dims[i] - 1) * strides[i];
  }
  return (last + 1) * dtype_bytes(dtype);
}

bool TensorInfo::channels_last() const {
  if (dims.size() < 3 || strides.size() != dims.size() || dims[1] == 1) return false;
  return strides[1] == 1;
}

namespace {

const char* intern(const std::string& s) {
  static std::mutex mu;
  static auto* names = new std::set<std::string>();  // never freed: names live as long as the traces that hold them
  std::lock_guard lk(mu);
  return names->insert(s).first->c_str();
}

std::string dims_text(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

const char* pass_word(ConvPass p) {
  switch (p) {
    case ConvPass::kForward: return "fprop";
    case ConvPass::kBackwardData: return "dgrad";
    case ConvPass::kBackwardFilter: return "wgrad";
  }
  return "fprop";
}

const char* dtype_word(int dtype) {
  switch (dtype) {
    case CUDNN_DATA_HALF: return "f16f16_f16f32_f32";
    case CUDNN_DATA_BFLOAT16: return "bf16bf16_bf16f32_f32";
    case CUDNN_DATA_FLOAT: return "tf32f32_tf32f32_f32";
    default: return "f64f64_f64f64_f64";
  }
}

ConvShape base_shape(const ConvProblem& p) {
  ConvShape s;
  s.pass = p.pass;
  s.n = p.n, s.c = p.c, s.k = p.k, s.groups = p.groups;
  s.in = p.in, s.filter = p.filter, s.out = p.out;
  s.elem_bytes = p.elem_bytes;
  s.extra_bytes = p.epilogue_bytes;
  return s;
}

int64_t round_up(double bytes) { return (static_cast<int64_t>(bytes) + 255) / 256 * 256; }

}  // namespace

bool make_conv_problem(ConvPass pass, const TensorInfo& x, const TensorInfo& w, const TensorInfo& y,
                       const ConvParams& cp, ConvProblem* out, std::string* error, cudnnStatus_t* status) {
  auto reject = [&](std::string why, cudnnStatus_t st) {
    *error = std::move(why);
    *status = st;
    return false;
  };
  if (cp.spatial < 1 || cp.spatial > 3)
    return reject("the convolution has " + std::to_string(cp.spatial) + " spatial dimensions (1 to 3 are supported)",
                  CUDNN_STATUS_NOT_SUPPORTED_SHAPE);
  const size_t rank = static_cast<size_t>(cp.spatial) + 2;
  const TensorInfo* t[3] = {&x, &w, &y};
  const char* names[3] = {"x", "w", "y"};
  for (int i = 0; i < 3; ++i) {
    if (t[i]->dims.size() != rank || t[i]->strides.size() != rank)
      return reject(std::string(names[i]) + " has dimensions " + dims_text(t[i]->dims) + " and strides " +
                        dims_text(t[i]->strides) + "; a convolution with " + std::to_string(cp.spatial) +
                        " spatial dimensions needs " + std::to_string(rank),
                    CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH);
    for (int64_t d : t[i]->dims)
      if (d <= 0) return reject(std::string(names[i]) + " has dimensions " + dims_text(t[i]->dims), CUDNN_STATUS_BAD_PARAM);
  }
  if (x.dtype != w.dtype || x.dtype != y.dtype)
    return reject("x, w and y have different data types (" + std::to_string(x.dtype) + ", " + std::to_string(w.dtype) +
                      ", " + std::to_string(y.dtype) + ")",
                  CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE);
  if (x.dtype != CUDNN_DATA_FLOAT && x.dtype != CUDNN_DATA_HALF && x.dtype != CUDNN_DATA_BFLOAT16 &&
      x.dtype != CUDNN_DATA_DOUBLE)
    return reject("data type " + std::to_string(x.dtype) + " (engines take float, double, half and bfloat16)",
                  CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE);
  ConvProblem p;
  p.pass = pass;
  p.spatial = cp.spatial;
  p.params = cp;
  p.n = x.dims[0], p.c = x.dims[1], p.k = w.dims[0];
  if (y.dims[0] != p.n)
    return reject("y has batch " + std::to_string(y.dims[0]) + ", x " + std::to_string(p.n), CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH);
  if (y.dims[1] != p.k)
    return reject("y has " + std::to_string(y.dims[1]) + " channels, w " + std::to_string(p.k) + " filters",
                  CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH);
  if (p.c % w.dims[1] != 0)
    return reject("x has " + std::to_string(p.c) + " channels, not a multiple of w's " + std::to_string(w.dims[1]),
                  CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH);
  p.groups = p.c / w.dims[1];
  if (p.k % p.groups != 0)
    return reject(std::to_string(p.k) + " filters do not divide into " + std::to_string(p.groups) + " groups",
                  CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH);
  for (int d = 0; d < cp.spatial; ++d) {
    if (cp.stride[d] < 1 || cp.dilation[d] < 1 || cp.pre_pad[d] < 0 || cp.post_pad[d] < 0)
      return reject("spatial dimension " + std::to_string(d) + ": stride " + std::to_string(cp.stride[d]) +
                        ", dilation " + std::to_string(cp.dilation[d]) + ", padding " + std::to_string(cp.pre_pad[d]) +
                        "/" + std::to_string(cp.post_pad[d]),
                    CUDNN_STATUS_BAD_PARAM);
    const int64_t in = x.dims[2 + d], f = w.dims[2 + d];
    const int64_t span = in + cp.pre_pad[d] + cp.post_pad[d] - cp.dilation[d] * (f - 1) - 1;
    const int64_t o = span < 0 ? 0 : span / cp.stride[d] + 1;
    if (o != y.dims[2 + d])
      return reject("y's spatial dimension " + std::to_string(d) + " is " + std::to_string(y.dims[2 + d]) +
                        "; x " + std::to_string(in) + ", filter " + std::to_string(f) + ", padding " +
                        std::to_string(cp.pre_pad[d]) + "/" + std::to_string(cp.post_pad[d]) + ", stride " +
                        std::to_string(cp.stride[d]) + " and dilation " + std::to_string(cp.dilation[d]) + " give " +
                        std::to_string(o),
                    CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH);
    p.in[d] = in, p.filter[d] = f, p.out[d] = o;
  }
  p.dtype = x.dtype;
  p.elem_bytes = static_cast<uint8_t>(dtype_bytes(x.dtype));
  p.channels_last = x.channels_last() || (p.c == 1 && y.channels_last());
  p.x_bytes = static_cast<double>(x.extent_bytes());
  p.w_bytes = static_cast<double>(w.extent_bytes());
  p.y_bytes = static_cast<double>(y.extent_bytes());
  *out = p;
  return true;
}

ConvEngine conv_engine(const ConvProblem& p, int index, const CostModel& cost) {
  ConvEngine e;
  e.index = index;
  ConvShape s = base_shape(p);
  const char* pass = pass_word(p.pass);
  switch (index) {
    case 0: {  // implicit GEMM on CUDA cores: any layout, any data type, no workspace
      e.name = "implicit_gemm";
      e.supported = true;
      s.math = p.dtype == CUDNN_DATA_DOUBLE ? GemmMath::kFp64 : GemmMath::kFp32;
      const char* kernel = p.pass == ConvPass::kForward        ? "implicit_convolve_sgemm"
                           : p.pass == ConvPass::kBackwardData ? "cudnn::detail::dgrad_engine"
                                                               : "cudnn::detail::wgrad_alg0_engine";
      e.kernels.push_back({kernel, cost.convolution(s)});
      break;
    }
    case 1: {  // implicit GEMM on tensor cores (NHWC kernels; NCHW tensors are transposed around them)
      e.name = "implicit_gemm_tensor_core";
      if (p.dtype == CUDNN_DATA_DOUBLE) {
        e.why_not = "no tensor-core convolution for double";
        break;
      }
      e.supported = true;
      e.notes.push_back(CUDNN_NUMERICAL_NOTE_TENSOR_CORE);
      if (p.dtype == CUDNN_DATA_FLOAT) e.notes.push_back(CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS);  // TF32
      s.math = p.dtype == CUDNN_DATA_HALF ? GemmMath::kFp16 : p.dtype == CUDNN_DATA_BFLOAT16 ? GemmMath::kBf16 : GemmMath::kTf32;
      s.channel_multiple = p.dtype == CUDNN_DATA_FLOAT ? 4 : 8;
      // The operands read and the one written, in the pass's roles.
      double in_a = p.x_bytes, in_b = p.w_bytes, outb = p.y_bytes;
      if (p.pass == ConvPass::kBackwardData) in_a = p.y_bytes, outb = p.x_bytes;
      if (p.pass == ConvPass::kBackwardFilter) in_b = p.y_bytes, outb = p.w_bytes;
      if (!p.channels_last) {
        for (double b : {in_a, in_b})
          e.kernels.push_back({"nchwToNhwcKernel", cost.copy(CopyKind::kDeviceToDevice, static_cast<size_t>(b), false)});
        e.workspace = round_up(in_a) + round_up(in_b) + round_up(outb);
      }
      e.kernels.push_back({intern(std::string("xmma_") + pass + "_implicit_gemm_" + dtype_word(p.dtype) +
                                  "_nhwckrsc_nhwc_cudnn"),
                           cost.convolution(s)});
      if (!p.channels_last)
        e.kernels.push_back({"nhwcToNchwKernel", cost.copy(CopyKind::kDeviceToDevice, static_cast<size_t>(outb), false)});
      break;
    }
    case 2: {  // non-fused Winograd F(2x2, 3x3): 2.25x fewer multiplies, tiles through a workspace
      e.name = "winograd_nonfused";
      const bool shape_ok = p.spatial == 2 && p.filter[0] == 3 && p.filter[1] == 3 && p.params.stride[0] == 1 &&
                            p.params.stride[1] == 1 && p.params.dilation[0] == 1 && p.params.dilation[1] == 1 &&
                            p.groups == 1;
      if (!shape_ok) {
        e.why_not = "Winograd takes 2-D 3x3 filters with stride 1, dilation 1 and one group";
        break;
      }
      if (p.pass == ConvPass::kBackwardFilter) {
        e.why_not = "no Winograd weight gradient";
        break;
      }
      if (p.dtype != CUDNN_DATA_FLOAT && p.dtype != CUDNN_DATA_HALF) {
        e.why_not = "Winograd takes float and half";
        break;
      }
      e.supported = true;
      e.notes.push_back(CUDNN_NUMERICAL_NOTE_WINOGRAD);
      s.math = GemmMath::kFp32;
      s.flop_scale = 1.0 / 2.25;
      // fp32 transforms: a 4x4 input tile and a 4x4 output tile per 2x2 outputs, and 4x4 per 3x3 filter.
      const double pq = static_cast<double>(p.n) * static_cast<double>(p.out[0]) * static_cast<double>(p.out[1]);
      const double ws = (4 * pq * static_cast<double>(p.c) + 4 * pq * static_cast<double>(p.k) +
                         16 * static_cast<double>(p.c) * static_cast<double>(p.k)) * 4;
      e.workspace = round_up(ws);
      s.extra_bytes += 2 * ws;  // written by the transforms, read back
      e.kernels.push_back({intern(std::string("cudnn::winograd_nonfused::winograd_") + pass + "_4x4"), cost.convolution(s)});
      break;
    }
    default:
      e.name = "unknown";
      e.why_not = "no such engine";
      return e;
  }
  for (const ConvKernel& k : e.kernels) e.total = e.total + k.duration;
  return e;
}

std::vector<ConvEngine> ranked_conv_engines(const ConvProblem& p, const CostModel& cost) {
  std::vector<ConvEngine> all;
  for (int i = 0; i < kConvEngineCount; ++i) {
    ConvEngine e = conv_engine(p, i, cost);
    if (e.supported) all.push_back(std::move(e));
  }
  std::stable_sort(all.begin(), all.end(), [](const ConvEngine& a, const ConvEngine& b) { return a.total < b.total; });
  return all;
}

}  // namespace genie::fakecuda::dnn
