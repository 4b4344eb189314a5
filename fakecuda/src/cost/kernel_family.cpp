// SPDX-License-Identifier: Apache-2.0
// Kernel families from names: the PyTorch (ATen), FlashAttention, CUTLASS memory-efficient attention and Triton
// kernel names a training step launches, and how much work their launch shapes imply.
#include "cost/kernel_family.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <vector>

namespace genie::fakecuda::cost {
namespace {

// --- launch facts of the kernels, each from the launch code that sizes its grid --------------------------------
// ATen vectorized elementwise kernels (aten/src/ATen/native/cuda/CUDALoops.cuh, launch_vectorized_kernel): 128
// threads per block (num_threads() = 4 warps), elems_per_thread<io_size>() = 8 elements per thread (16 when
// every operand is one byte; the classification below takes 16 only for a single one-byte operand).
constexpr double kVectorizedElemsPerThread = 8;
constexpr double kVectorizedElemsPerThreadBytes = 16;
// launch_unrolled_kernel / launch_legacy_kernel: thread_work_size() = 4 elements per thread unless the template
// says otherwise (elementwise_kernel<nt, vt, ...>: vt elements).
constexpr double kUnrolledElemsPerThread = 4;
// multi_tensor_apply (aten/src/ATen/native/cuda/MultiTensorApply.cuh): one block of kBlockSize = 512 threads per
// chunk of kChunkSize = 65536 elements: 128 elements per thread (an upper bound: tensors smaller than a chunk
// still take a block).
constexpr double kMultiTensorElemsPerThread = 65536.0 / 512.0;
// ATen reductions (aten/src/ATen/native/cuda/Reduce.cuh, setReduceConfig): the input is split across warps and
// blocks only while each thread keeps at least min_values_per_thread = 16 values; 16 is therefore the least work
// per thread (a lower bound for very long reductions, whose grids are capped to fill the device).
constexpr double kReductionElemsPerThread = 16;
// Row-wise kernels whose row length the launch shape does not carry (layer norm: one block of 128 threads per
// row; cunn_SoftMax with full 1024-thread blocks): assumed 32 elements per thread, a 4096-wide row over 128
// threads (4096 is the middle hidden size of the calibration's transformer shapes; an assumption, not a
// measurement: a measured table from `genie calibrate` replaces it).
constexpr double kRowElemsPerThread = 32;
// Triton pointwise kernels (torch.compile): Inductor's default pointwise block XBLOCK = 1024 over num_warps = 4,
// 8 elements per thread (torch/_inductor/runtime/triton_heuristics.py, pointwise configs; an assumption for the
// kernels that were autotuned to another block).
constexpr double kTritonElemsPerThread = 8;
// Unknown kernels: one 4-byte load and one 4-byte store per element, 2 elements per thread (TableCostModel's
// historical 16 bytes per thread).
constexpr double kDefaultElemsPerThread = 2;

bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// Position of `token` in `s` as a whole word (not part of a longer identifier), npos otherwise.
size_t find_word(std::string_view s, std::string_view token, size_t from = 0) {
  for (size_t p = s.find(token, from); p != std::string_view::npos; p = s.find(token, p + 1)) {
    bool left = p == 0 || !is_ident(s[p - 1]);
    bool right = p + token.size() >= s.size() || !is_ident(s[p + token.size()]);
    if (left && right) return p;
  }
  return std::string_view::npos;
}

bool contains(std::string_view s, std::string_view t) { return s.find(t) != std::string_view::npos; }

bool contains_nocase(std::string_view s, std::string_view t) {
  auto it = std::search(s.begin(), s.end(), t.begin(), t.end(),
                        [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
  return it != s.end();
}

/// Size of the first scalar type named in `s` (4 when none).
int scalar_bytes(std::string_view s) {
  struct Type {
    std::string_view token;
    int bytes;
  };
  static const Type kTypes[] = {
      {"c10::complex<double>", 16}, {"c10::complex<float>", 8}, {"c10::complex<c10::Half>", 4},
      {"c10::BFloat16", 2},         {"cutlass::bfloat16_t", 2}, {"__nv_bfloat16", 2},
      {"c10::Half", 2},             {"cutlass::half_t", 2},     {"__half", 2},
      {"c10::Float8_e4m3fn", 1},    {"c10::Float8_e5m2", 1},    {"double", 8},
      {"float", 4},                 {"long", 8},                {"int", 4},
      {"short", 2},                 {"bool", 1},                {"unsigned char", 1},
      {"signed char", 1},
  };
  size_t best = std::string_view::npos;
  int bytes = 4;
  for (const Type& t : kTypes) {
    size_t p = t.token.find("::") != std::string_view::npos || t.token[0] == '_' ? s.find(t.token)
                                                                                : find_word(s, t.token);
    if (p < best) {
      best = p;
      bytes = t.bytes;
    }
  }
  return bytes;
}

/// Top-level template arguments of the template whose '<' is at `open` (brackets, parentheses and braces nest).
std::vector<std::string_view> template_args(std::string_view s, size_t open) {
  std::vector<std::string_view> out;
  if (open >= s.size() || s[open] != '<') return out;
  int depth = 0;
  size_t start = open + 1;
  for (size_t i = open; i < s.size(); ++i) {
    char c = s[i];
    if (c == '<' || c == '(' || c == '{' || c == '[') {
      ++depth;
    } else if (c == '>' || c == ')' || c == '}' || c == ']') {
      if (--depth == 0) {
        out.push_back(s.substr(start, i - start));
        return out;
      }
    } else if (c == ',' && depth == 1) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;  // unbalanced: what was found
}

std::string_view trim(std::string_view v) {
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  return v;
}

int to_int(std::string_view v, int fallback) {
  v = trim(v);
  if (v.empty()) return fallback;
  std::string t(v);
  char* end = nullptr;
  long x = std::strtol(t.c_str(), &end, 10);
  return end != t.c_str() ? static_cast<int>(x) : fallback;
}

/// Arguments of the first template named `name` ("Flash_fwd_kernel_traits<" style prefix without '<').
std::vector<std::string_view> args_of(std::string_view s, std::string_view name) {
  size_t p = s.find(name);
  if (p == std::string_view::npos) return {};
  size_t open = s.find('<', p + name.size());
  if (open != p + name.size()) return {};
  return template_args(s, open);
}

/// The parameter types of a demangled function signature `...>(T0, T1, ...)`: the last top-level parenthesised list.
std::vector<std::string_view> params_of(std::string_view s) {
  if (s.empty() || s.back() != ')') return {};
  int depth = 0;
  size_t open = std::string_view::npos;
  for (size_t i = s.size(); i-- > 0;) {
    const char c = s[i];
    if (c == ')' || c == '>') ++depth;
    if (c == '(' || c == '<') --depth;
    if (depth == 0 && c == '(') {
      open = i;
      break;
    }
  }
  if (open == std::string_view::npos) return {};
  std::vector<std::string_view> out;
  depth = 0;
  size_t start = open + 1;
  for (size_t i = open + 1; i + 1 < s.size(); ++i) {
    const char c = s[i];
    if (c == '(' || c == '<') ++depth;
    if (c == ')' || c == '>') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (s.size() - 1 > start) out.push_back(trim(s.substr(start, s.size() - 1 - start)));
  return out;
}

/// Bytes of an integer parameter type as a demangled signature spells it; 0 for anything else.
int integer_param_bytes(std::string_view t) {
  if (t == "int" || t == "unsigned int") return 4;
  if (t == "long" || t == "unsigned long" || t == "long long" || t == "unsigned long long") return 8;
  return 0;
}

std::string demangle(std::string_view name) {
  if (name.size() < 2 || name[0] != '_' || name[1] != 'Z') return std::string(name);
  std::string n(name);
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(n.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : n;
}

bool is_backward(std::string_view d) {
  return contains_nocase(d, "backward") || contains_nocase(d, "_bwd") || contains(d, "grad") ||
         contains(d, "Grad");
}

void classify_attention(std::string_view d, KernelInfo* k) {
  // FlashAttention 2 as vendored by PyTorch (aten/src/ATen/native/transformers/cuda/flash_attn): traits
  // Flash_fwd_kernel_traits<kHeadDim, kBlockM, kBlockN, ...>; flash_fwd_kernel<Traits, Is_dropout, Is_causal, ...>,
  // flash_fwd_splitkv_kernel<Traits, Is_causal, ...>; Flash_bwd_kernel_traits<kHeadDim, kBlockM, kBlockN, ...>,
  // flash_bwd_dq_dk_dv_loop(_seqk_parallel)_kernel<Traits, Is_dropout, Is_causal, ...>.
  const bool fwd = contains(d, "flash_fwd");
  auto traits = args_of(d, fwd ? "Flash_fwd_kernel_traits" : "Flash_bwd_kernel_traits");
  if (traits.size() >= 3) {
    k->head_dim = to_int(traits[0], 128);
    k->block_m = to_int(traits[1], 128);
    k->block_n = to_int(traits[2], 64);
  }
  const char* kernel = fwd ? (contains(d, "flash_fwd_splitkv_kernel") ? "flash_fwd_splitkv_kernel" : "flash_fwd_kernel")
                           : (contains(d, "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel")
                                  ? "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel"
                                  : "flash_bwd_dq_dk_dv_loop_kernel");
  auto args = args_of(d, kernel);
  const size_t causal_index = std::string_view(kernel) == "flash_fwd_splitkv_kernel" ? 1 : 2;
  if (args.size() > causal_index) k->causal = trim(args[causal_index]) == "true";
}

void classify_mem_efficient(std::string_view d, KernelInfo* k, bool backward) {
  // CUTLASS memory-efficient attention as vendored by PyTorch (transformers/cuda/mem_eff_attention):
  // AttentionKernel<scalar, Arch, isAligned, kQueriesPerBlock, kKeysPerBlock, kMaxK, ...>, grid (query blocks,
  // heads, batch); AttentionBackwardKernel<Arch, scalar, isAligned, dropout, preload, kBlockSizeI, kBlockSizeJ,
  // kMaxK, ...>, grid (key blocks, heads, batch). Causality is a run-time parameter: taken as non-causal.
  auto a = args_of(d, backward ? "AttentionBackwardKernel" : "AttentionKernel");
  if (!backward && a.size() >= 6) {
    k->block_m = to_int(a[3], 64);
    k->block_n = to_int(a[4], 128);
    k->head_dim = to_int(a[5], 128);
  } else if (backward && a.size() >= 8) {
    k->block_m = to_int(a[5], 64);
    k->block_n = to_int(a[6], 64);
    k->head_dim = to_int(a[7], 128);
  } else {
    k->block_m = 64;
    k->block_n = 64;
    k->head_dim = 128;
  }
  // kMaxK of the "gmem" variants is 65536 (any head dimension): use 128.
  if (k->head_dim > 512) k->head_dim = 128;
}

}  // namespace

const char* kernel_family_name(KernelFamily f) {
  switch (f) {
    case KernelFamily::kUnknown: return "unknown";
    case KernelFamily::kElementwise: return "elementwise";
    case KernelFamily::kCopy: return "copy";
    case KernelFamily::kReduction: return "reduction";
    case KernelFamily::kNormalization: return "normalization";
    case KernelFamily::kSoftmax: return "softmax";
    case KernelFamily::kOptimizer: return "optimizer";
    case KernelFamily::kIndexing: return "indexing";
    case KernelFamily::kAttentionForward: return "attention-forward";
    case KernelFamily::kAttentionBackward: return "attention-backward";
  }
  return "?";
}

namespace {
KernelInfo classify_by_name(std::string_view name);
}  // namespace

KernelInfo classify_kernel(std::string_view name) {
  KernelInfo k = classify_by_name(name);
  // Costed by their operands when the launch's parameter layout is known (CostModel::operand_rule): Inductor's
  // Triton kernels by their prefix (a fused layer norm is still a Triton reduction), and every kernel no rule knows.
  using Rule = CostModel::OperandRule;
  const std::string_view d = k.demangled;
  if (d.rfind("triton_poi_", 0) == 0)
    k.operands = Rule::kTritonPointwise;
  else if (d.rfind("triton_red_", 0) == 0 || d.rfind("triton_per_", 0) == 0)
    k.operands = Rule::kTritonReduction;
  else if (d.rfind("triton_tem_", 0) == 0)
    k.operands = Rule::kTritonTemplate;
  else if (k.family == KernelFamily::kUnknown)
    k.operands = Rule::kLaunchShape;
  return k;
}

namespace {
KernelInfo classify_by_name(std::string_view name) {
  KernelInfo k;
  k.demangled = demangle(name);
  std::string_view d = k.demangled;
  k.elem_bytes = scalar_bytes(d);
  k.streams = 2;
  k.elems_per_thread = kDefaultElemsPerThread;

  // Attention first: its helpers also contain words the other rules look for.
  if (contains(d, "flash_fwd_splitkv_combine_kernel") || contains(d, "flash_bwd_dot_do_o_kernel") ||
      contains(d, "flash_bwd_convert_dq_kernel") || contains(d, "flash_bwd_convert_dkv_kernel")) {
    k.family = contains(d, "flash_fwd") ? KernelFamily::kAttentionForward : KernelFamily::kAttentionBackward;
    k.aux = true;
    classify_attention(d, &k);
    return k;
  }
  if (contains(d, "flash_fwd_kernel") || contains(d, "flash_fwd_splitkv_kernel")) {
    k.family = KernelFamily::kAttentionForward;
    classify_attention(d, &k);
    return k;
  }
  if (contains(d, "flash_bwd_dq_dk_dv_loop")) {
    k.family = KernelFamily::kAttentionBackward;
    classify_attention(d, &k);
    return k;
  }
  if (contains(d, "fmha_cutlassF") || contains(d, "AttentionKernel<")) {
    k.family = KernelFamily::kAttentionForward;
    classify_mem_efficient(d, &k, false);
    return k;
  }
  if (contains(d, "fmha_cutlassB") || contains(d, "AttentionBackwardKernel<")) {
    k.family = KernelFamily::kAttentionBackward;
    classify_mem_efficient(d, &k, true);
    return k;
  }

  if (contains(d, "multi_tensor_apply_kernel")) {
    // TensorListMetadata<depth>: `depth` tensors per element are read, depth - 1 written (the gradient is
    // read-only in the fused optimizers; foreach ops of depth 1 write in place).
    k.family = KernelFamily::kOptimizer;
    auto meta = args_of(d, "TensorListMetadata");
    int depth = meta.empty() ? 2 : std::max(1, to_int(meta[0], 2));
    k.streams = depth + std::max(1, depth - 1);
    k.elems_per_thread = kMultiTensorElemsPerThread;
    return k;
  }

  if (contains(d, "softmax_warp_forward") || contains(d, "softmax_warp_backward")) {
    // aten/src/ATen/native/cuda/PersistentSoftmax.cuh: softmax_warp_{forward,backward}<input_t, output_t, acc_t,
    // log2_elements, ...>; rows of at most 2^log2_elements, handled by launch code that dispatch_softmax_* sizes.
    k.family = KernelFamily::kSoftmax;
    auto a = args_of(d, contains(d, "softmax_warp_forward") ? "softmax_warp_forward" : "softmax_warp_backward");
    int log2 = a.size() >= 4 ? to_int(a[3], 10) : 10;
    k.block_n = 1 << std::clamp(log2, 0, 20);  // row length
    k.streams = contains(d, "backward") ? 3 : 2;
    return k;
  }
  if (contains_nocase(d, "softmax")) {
    // cunn_SoftMax{Forward,Backward}<ILP, ...>: block size ~ row length / ILP (SoftMax_getBlockSize), so a thread
    // handles ILP elements of its row; blocks of 1024 threads may hold longer rows (kRowElemsPerThread).
    k.family = KernelFamily::kSoftmax;
    auto a = args_of(d, contains(d, "cunn_SoftMaxForward") ? "cunn_SoftMaxForward" : "cunn_SoftMaxBackward");
    k.elems_per_thread = a.empty() ? kRowElemsPerThread : std::max(1, to_int(a[0], 8));
    k.streams = is_backward(d) ? 3 : 2;
    // Its last parameter is the row length (`classes`: cunn_SoftMaxForward(out*, in const*, int),
    // cunn_SoftMaxBackward(gradIn*, out const*, gradOut const*, long)), one block per row. Rows longer than the
    // block's threads x ILP are looped over in three passes (aten/src/ATen/native/cuda/SoftMax.cu): forward reads
    // the input for the maximum, for the sum of exponentials and to write the output; log-softmax backward reads
    // gradOutput for its sum, then gradOutput and the output to write gradInput. 4 streams either way.
    auto p = params_of(d);
    if (!p.empty() && integer_param_bytes(p.back()) > 0) {
      k.row_arg_index = static_cast<int>(p.size()) - 1;
      k.row_arg_bytes = integer_param_bytes(p.back());
      k.row_streams = 4;
    }
    return k;
  }
  if (contains(d, "distribution_elementwise") || contains(d, "normal_kernel") || contains(d, "uniform_kernel")) {
    k.family = KernelFamily::kElementwise;  // random number generation: one write per element
    k.streams = 1;
    k.elems_per_thread = kUnrolledElemsPerThread;
    return k;
  }
  if (contains_nocase(d, "layer_norm") || contains_nocase(d, "layernorm") || contains_nocase(d, "rms_norm") ||
      contains_nocase(d, "rmsnorm") || contains_nocase(d, "batch_norm") || contains_nocase(d, "batchnorm") ||
      contains_nocase(d, "group_norm") || contains(d, "GammaBetaBackward") || contains(d, "RowwiseMoments") ||
      contains(d, "ComputeInternalGradients")) {
    k.family = KernelFamily::kNormalization;
    k.streams = is_backward(d) ? 3 : 2;  // forward: X read, Y written; backward: dY and X read, dX written
    k.elems_per_thread = kRowElemsPerThread;
    return k;
  }
  if (contains(d, "reduce_kernel") || contains(d, "triton_red_") || contains(d, "triton_per_") ||
      contains(d, "DeviceReduce") || contains(d, "DeviceSegmentedReduce")) {
    k.family = KernelFamily::kReduction;
    k.streams = 1;  // the input; outputs are a small fraction
    k.elems_per_thread = kReductionElemsPerThread;
    return k;
  }
  if (contains_nocase(d, "index_select") || contains(d, "indexSelect") || contains_nocase(d, "embedding") ||
      contains(d, "gather") || contains(d, "scatter") || contains(d, "index_put") || contains(d, "indexing_backward")) {
    k.family = KernelFamily::kIndexing;
    k.streams = 2;
    k.elems_per_thread = kUnrolledElemsPerThread;
    return k;
  }

  // Copies and casts: ATen's direct_copy_kernel_cuda (dtype conversions included), copy_kernel, CatArrayBatchedCopy,
  // transposes. ("cast" alone would match gpu_kernel_impl_nocast and broadcast.)
  const bool copy = contains(d, "copy") || contains(d, "Copy") || contains(d, "transpose");
  // The operand pointers: std::array<char*, ntensors> (CUDALoops.cuh, gpu_kernel_impl) or at::detail::Array in
  // older releases; ntensors = inputs + 1 output.
  auto array = args_of(d, "std::array");
  if (array.size() != 2 || trim(array[0]) != "char*") array = args_of(d, "at::detail::Array");
  if (array.size() != 2 || trim(array[0]) != "char*") array.clear();
  if (contains(d, "vectorized_elementwise_kernel")) {
    k.family = copy ? KernelFamily::kCopy : KernelFamily::kElementwise;
    k.streams = array.size() >= 2 ? std::max(1, to_int(array[1], 3)) : 3;
    k.elems_per_thread =
        k.streams * k.elem_bytes == 1 ? kVectorizedElemsPerThreadBytes : kVectorizedElemsPerThread;
    return k;
  }
  if (contains(d, "unrolled_elementwise_kernel")) {
    // unrolled_elementwise_kernel<func_t, array_t, elems_per_thread, ...>
    k.family = copy ? KernelFamily::kCopy : KernelFamily::kElementwise;
    k.streams = array.size() >= 2 ? std::max(1, to_int(array[1], 3)) : 3;
    auto a = args_of(d, "unrolled_elementwise_kernel");
    k.elems_per_thread = a.size() >= 3 ? std::max(1, to_int(a[2], 4)) : kUnrolledElemsPerThread;
    return k;
  }
  if (contains(d, "elementwise_kernel")) {
    // elementwise_kernel<nt, vt, func_t> (launch_legacy_kernel): vt elements per thread; operands unknown.
    k.family = copy ? KernelFamily::kCopy : KernelFamily::kElementwise;
    auto a = args_of(d, "elementwise_kernel");
    k.elems_per_thread = a.size() >= 2 ? std::max(1, to_int(a[1], 4)) : kUnrolledElemsPerThread;
    k.streams = copy ? 2 : 3;
    return k;
  }
  if (contains(d, "triton_poi_")) {
    k.family = KernelFamily::kElementwise;
    k.streams = 3;
    k.elems_per_thread = kTritonElemsPerThread;
    return k;
  }
  if (copy || contains(d, "CatArray")) {
    k.family = KernelFamily::kCopy;
    k.streams = 2;
    k.elems_per_thread = kUnrolledElemsPerThread;
    return k;
  }
  return k;
}

}  // namespace

double kernel_bytes(const KernelInfo& info, const KernelShape& shape) {
  if (info.row_arg_index >= 0 && shape.row_length > 0) {  // one block per row, the row read from the arguments
    const double rows = static_cast<double>(shape.grid[0]) * shape.grid[1] * shape.grid[2];
    return rows * static_cast<double>(shape.row_length) * info.row_streams * info.elem_bytes;
  }
  if (info.family == KernelFamily::kSoftmax && info.block_n > 0) {
    // dispatch_softmax_forward: warp_size = min(row length rounded up to a power of two, 32), two rows per warp
    // when rows are at most 128 long; blocks of (warp_size, warps_per_block).
    const double rows_per_warp = info.block_n <= 128 ? 2 : 1;
    const double rows = static_cast<double>(shape.grid[0]) * shape.grid[1] * shape.grid[2] * shape.block[1] *
                        shape.block[2] * rows_per_warp;
    return rows * info.block_n * info.streams * info.elem_bytes;
  }
  return static_cast<double>(shape.threads()) * info.elems_per_thread * info.streams * info.elem_bytes;
}

AttentionShape attention_shape(const KernelInfo& info, const KernelShape& shape) {
  AttentionShape a;
  const bool fwd = info.family == KernelFamily::kAttentionForward;
  const bool flash = contains(info.demangled, "flash_");
  a.backward = !fwd;
  a.head_dim = info.head_dim > 0 ? info.head_dim : 128;
  a.causal = info.causal;
  a.elem_bytes = static_cast<uint8_t>(info.elem_bytes);
  a.math = info.elem_bytes >= 4 ? GemmMath::kFp32 : GemmMath::kBf16;
  const int64_t block = fwd ? (info.block_m > 0 ? info.block_m : 128) : (info.block_n > 0 ? info.block_n : 64);
  a.seq_q = a.seq_kv = static_cast<int64_t>(shape.grid[0]) * block;
  if (flash) {  // grid (blocks, batch, heads)
    a.batch = shape.grid[1];
    a.heads_q = a.heads_kv = shape.grid[2];
  } else {  // CUTLASS: grid (blocks, heads, batch)
    a.heads_q = a.heads_kv = shape.grid[1];
    a.batch = shape.grid[2];
  }
  return a;
}

}  // namespace genie::fakecuda::cost
