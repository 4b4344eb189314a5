// SPDX-License-Identifier: Apache-2.0
// Cost-model vocabulary: math-type and copy-kind names, and the measured kernel table (loading and validation).
#include "genie/fakecuda/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>


namespace genie::fakecuda {
namespace {

bool read_dim3(const nlohmann::json& j, uint32_t out[3]) {
  if (!j.is_array() || j.empty() || j.size() > 3) return false;
  for (size_t i = 0; i < 3; ++i) {
    if (i >= j.size()) { out[i] = 1; continue; }
    if (!j[i].is_number_unsigned() || j[i].get<uint64_t>() == 0 || j[i].get<uint64_t>() > 0xffffffffu) return false;
    out[i] = j[i].get<uint32_t>();
  }
  return true;
}

}  // namespace

const char* gemm_math_name(GemmMath m) {
  switch (m) {
    case GemmMath::kFp64: return "fp64";
    case GemmMath::kFp32: return "fp32";
    case GemmMath::kTf32: return "tf32";
    case GemmMath::kBf16: return "bf16";
    case GemmMath::kFp16: return "fp16";
    case GemmMath::kFp8: return "fp8";
    case GemmMath::kInt8: return "int8";
  }
  return "?";
}

bool parse_gemm_math(std::string_view s, GemmMath* out) {
  for (int i = 0; i < kGemmMathCount; ++i) {
    if (s == gemm_math_name(static_cast<GemmMath>(i))) {
      *out = static_cast<GemmMath>(i);
      return true;
    }
  }
  return false;
}

const char* copy_kind_name(CopyKind k) {
  switch (k) {
    case CopyKind::kHostToHost: return "HtoH";
    case CopyKind::kHostToDevice: return "HtoD";
    case CopyKind::kDeviceToHost: return "DtoH";
    case CopyKind::kDeviceToDevice: return "DtoD";
    case CopyKind::kPeer: return "PtoP";
  }
  return "?";
}

double operand_bytes(CostModel::OperandRule rule, const KernelShape& shape, const std::vector<uint64_t>& extents,
                     const std::vector<int64_t>& ints) {
  using Rule = CostModel::OperandRule;
  if (rule == Rule::kNone || extents.empty()) return 0;
  // Elements per operand. Inductor's Triton kernels take their element counts last among the integer arguments
  // (pointers, size symbols ks0..., then xnumel [, r0_numel]: torch/_inductor/codegen/triton.py); a 2-D pointwise
  // kernel (ynumel, xnumel) launches a 2-D grid.
  auto last = [&](size_t i) -> double {  // the i-th integer argument from the end (0: the last), 1 when absent
    return i < ints.size() ? static_cast<double>(std::max<int64_t>(ints[ints.size() - 1 - i], 1)) : 1.0;
  };
  double elements;
  switch (rule) {
    case Rule::kTritonPointwise:
      elements = ints.empty() ? 0 : last(0) * (shape.grid[1] > 1 ? last(1) : 1.0);
      break;
    case Rule::kTritonReduction:
      elements = ints.empty() ? 0 : last(0) * last(1);
      break;
    default:
      elements = 0;
      break;
  }
  if (elements <= 0) elements = static_cast<double>(shape.threads()) * kOperandElemsPerThread;
  const double cap = elements * kOperandElemBytes;
  double bytes = 0;
  for (uint64_t e : extents) bytes += std::min(static_cast<double>(e), cap);
  return bytes;
}

bool template_gemm(const KernelShape& shape, const std::vector<uint64_t>& extents, int64_t out[4]) {
  for (int i = 0; i < 4; ++i) out[i] = 0;
  if (extents.size() < 3) return false;
  const double batch = shape.grid[1] > 1 ? static_cast<double>(shape.grid[1]) : 1.0;
  const double c = static_cast<double>(extents.back()) / batch;
  // The two largest operands before the output, in parameter order (an addmm's bias comes first and is small).
  std::vector<size_t> inputs(extents.size() - 1);
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = i;
  std::stable_sort(inputs.begin(), inputs.end(), [&](size_t x, size_t y) { return extents[x] > extents[y]; });
  const size_t ia = std::min(inputs[0], inputs[1]), ib = std::max(inputs[0], inputs[1]);
  const double a = static_cast<double>(extents[ia]) / batch, b = static_cast<double>(extents[ib]) / batch;
  if (a <= 0 || b <= 0 || c <= 0) return false;
  const double e = kTemplateElemBytes;
  const double m = std::max(1.0, std::sqrt(a * c / (b * e)));
  const double n = std::max(1.0, c / (m * e)), k = std::max(1.0, a / (m * e));
  out[0] = std::llround(m);
  out[1] = std::llround(n);
  out[2] = std::llround(k);
  out[3] = static_cast<int64_t>(batch);
  return true;
}

Result<KernelTable> parse_kernel_table(const std::string& text, const std::string& origin) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    return invalid_argument(origin + ": not valid JSON: " + e.what());
  }
  if (!doc.is_object() || !doc.contains("kernels") || !doc["kernels"].is_array())
    return invalid_argument(origin + ": expected an object with a \"kernels\" array at /kernels");
  KernelTable table;
  for (size_t i = 0; i < doc["kernels"].size(); ++i) {
    const auto& k = doc["kernels"][i];
    std::string path = origin + ": /kernels/" + std::to_string(i);
    if (!k.is_object()) return invalid_argument(path + " must be an object");
    for (auto it = k.begin(); it != k.end(); ++it) {
      static const char* kKeys[] = {"name", "grid", "block", "shared_mem", "duration_us", "calls", "min_us", "max_us"};
      if (std::none_of(std::begin(kKeys), std::end(kKeys), [&](const char* s) { return it.key() == s; }))
        return invalid_argument(path + "/" + it.key() + ": unknown key");
    }
    if (!k.contains("name") || !k["name"].is_string() || k["name"].get<std::string>().empty())
      return invalid_argument(path + "/name: a non-empty string is required");
    if (!k.contains("duration_us") || !k["duration_us"].is_number() || !(k["duration_us"].get<double>() >= 0) ||
        k["duration_us"].get<double>() > kMaxKernelDurationUs)
      return invalid_argument(path + "/duration_us: a number of microseconds in [0, 3.6e9] (one hour) is required");
    KernelTableEntry e;
    e.duration = SimTime::from_ns_double(k["duration_us"].get<double>() * 1e3);
    if (k.contains("grid") || k.contains("block")) {
      if (!k.contains("grid") || !read_dim3(k["grid"], e.shape.grid))
        return invalid_argument(path + "/grid: an array of 1-3 positive integers is required with block");
      if (!k.contains("block") || !read_dim3(k["block"], e.shape.block))
        return invalid_argument(path + "/block: an array of 1-3 positive integers is required with grid");
      e.has_shape = true;
    }
    if (k.contains("shared_mem")) {
      if (!k["shared_mem"].is_number_unsigned()) return invalid_argument(path + "/shared_mem: a non-negative integer");
      e.shape.shared_mem = k["shared_mem"].get<size_t>();
      e.has_shared_mem = true;
    }
    table.emplace(k["name"].get<std::string>(), e);
  }
  return table;
}

Result<KernelTable> load_kernel_table(const std::string& path) {
  std::ifstream in(path);
  if (!in) return invalid_argument("cost table: cannot read file '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_kernel_table(ss.str(), path);
}

double ConvShape::macs() const {
  double m = static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(c / std::max<int64_t>(groups, 1));
  for (int d = 0; d < 3; ++d) m *= static_cast<double>(out[d]) * static_cast<double>(filter[d]);
  return m;
}

double ConvShape::tensor_bytes() const {
  double x = static_cast<double>(n) * static_cast<double>(c), y = static_cast<double>(n) * static_cast<double>(k);
  double w = static_cast<double>(k) * static_cast<double>(c / std::max<int64_t>(groups, 1));
  for (int d = 0; d < 3; ++d) {
    x *= static_cast<double>(in[d]);
    y *= static_cast<double>(out[d]);
    w *= static_cast<double>(filter[d]);
  }
  return (x + y + w) * elem_bytes;
}

GemmShape ConvShape::implicit_gemm() const {
  const int64_t g = std::max<int64_t>(groups, 1);
  const int64_t mult = std::max<int64_t>(channel_multiple, 1);
  auto pad = [mult](int64_t v) { return (v + mult - 1) / mult * mult; };
  const int64_t cg = pad(c / g), kg = pad(k / g);
  int64_t pq = n, rs = 1;
  for (int d = 0; d < 3; ++d) {
    pq *= out[d];
    rs *= filter[d];
  }
  GemmShape s;
  s.batch = g;
  s.math = math;
  s.ab_bytes = elem_bytes;
  s.c_bytes = elem_bytes;
  s.reads_c = false;
  switch (pass) {
    case ConvPass::kForward: s.m = pq, s.n = kg, s.k = cg * rs; break;
    case ConvPass::kBackwardData: s.m = pq, s.n = cg, s.k = kg * rs; break;
    case ConvPass::kBackwardFilter: s.m = kg, s.n = cg * rs, s.k = pq; break;
  }
  return s;
}

}  // namespace genie::fakecuda
