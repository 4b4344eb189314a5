// SPDX-License-Identifier: Apache-2.0
// FamilyCostModel: table, families, floor; per-thread caches keyed by kernel name and launch shape (GEMMs by their
// shape) so a repeated launch costs one hashed probe.
#include "genie/fakecuda/family_cost_model.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>

#include "cost/gemm_family.hpp"
#include "cost/kernel_family.hpp"

namespace genie::fakecuda {

struct FamilyCostModel::NameInfo {
  cost::KernelInfo info;
  std::vector<KernelTableEntry> shaped;  ///< table entries with a launch shape
  bool has_any_shape = false;
  SimTime any_shape;
};

namespace {

std::atomic<uint64_t> g_next_model_id{1};

double peak_of(const DeviceSpec& spec, GemmMath math) {
  auto it = spec.peak_flops.find(gemm_math_name(math));
  if (it != spec.peak_flops.end() && it->second > 0) return it->second;
  if (math == GemmMath::kFp8) return peak_of(spec, GemmMath::kFp16);  // no FP8 tensor cores (A100): fp16 rate
  auto fp32 = spec.peak_flops.find("fp32");
  return fp32 != spec.peak_flops.end() ? fp32->second : 1e12;
}

SimTime ns(double v) { return SimTime::from_ns_double(v); }

// --- per-thread caches -----------------------------------------------------------------------------------------
// Direct-mapped, 1024 kernel slots and 256 GEMM slots per thread. A hit compares the model id, the launch shape,
// the name's address and length and then its bytes (a caller's temporary string may reuse an address).
constexpr size_t kKernelSlots = 1024;
constexpr size_t kGemmSlots = 256;

struct KernelSlot {
  uint64_t model = 0;
  const char* ptr = nullptr;
  size_t len = 0;
  KernelShape shape;
  SimTime value;
  std::string name;
};

struct GemmSlot {
  uint64_t model = 0;
  GemmShape shape;
  SimTime value;
};

// row_argument() per name, direct-mapped like the kernel slots (names of registered kernels live for the process).
struct RowSlot {
  uint64_t model = 0;
  const char* ptr = nullptr;
  size_t len = 0;
  CostModel::RowArgument value;
  CostModel::OperandRule operands = CostModel::OperandRule::kNone;
  std::string name;
};
constexpr size_t kRowSlots = 256;

struct ThreadCache {
  std::array<KernelSlot, kKernelSlots> kernels;
  std::array<GemmSlot, kGemmSlots> gemms;
  std::array<RowSlot, kRowSlots> rows;
};

ThreadCache& thread_cache() {
  thread_local std::unique_ptr<ThreadCache> cache = std::make_unique<ThreadCache>();
  return *cache;
}

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

bool same_gemm(const GemmShape& a, const GemmShape& b) {
  return a.m == b.m && a.n == b.n && a.k == b.k && a.batch == b.batch && a.math == b.math &&
         a.ab_bytes == b.ab_bytes && a.c_bytes == b.c_bytes && a.trans_a == b.trans_a && a.trans_b == b.trans_b &&
         a.complex == b.complex && a.reads_c == b.reads_c && a.extra_bytes == b.extra_bytes;
}

}  // namespace

FamilyCostModel::FamilyCostModel(const DeviceSpec& spec, KernelTable table, CostParams params)
    : spec_(spec), table_(std::move(table)), params_(std::move(params)), id_(g_next_model_id.fetch_add(1)) {}

FamilyCostModel::~FamilyCostModel() = default;

const FamilyCostModel::NameInfo& FamilyCostModel::info_for(std::string_view name) const {
  {
    std::shared_lock lk(names_mu_);
    auto it = names_.find(std::string(name));
    if (it != names_.end()) return *it->second;
  }
  auto ni = std::make_unique<NameInfo>();
  ni->info = cost::classify_kernel(name);
  // Entries under the registered (mangled) name, then under the demangled one (tables from profiler traces).
  std::vector<std::string_view> keys = {name};
  if (ni->info.demangled != name) keys.push_back(ni->info.demangled);
  for (std::string_view key : keys) {
    auto [lo, hi] = table_.equal_range(key);
    for (auto it = lo; it != hi; ++it) {
      if (it->second.has_shape) {
        ni->shaped.push_back(it->second);
      } else if (!ni->has_any_shape) {
        ni->has_any_shape = true;
        ni->any_shape = it->second.duration;
      }
    }
  }
  std::unique_lock lk(names_mu_);
  auto [it, inserted] = names_.emplace(std::string(name), std::move(ni));
  return *it->second;
}

KernelEstimate FamilyCostModel::explain_kernel(std::string_view name, const KernelShape& shape) const {
  const NameInfo& ni = info_for(name);
  KernelEstimate e;
  e.family = cost::kernel_family_name(ni.info.family);
  for (const KernelTableEntry& t : ni.shaped) {
    if (t.matches(shape)) {
      e.duration = max(t.duration, spec_.kernel_floor);
      e.source = "table (exact shape)";
      return e;
    }
  }
  if (ni.has_any_shape) {
    e.duration = max(ni.any_shape, spec_.kernel_floor);
    e.source = "table (any shape)";
    return e;
  }
  using cost::KernelFamily;
  const cost::KernelInfo& k = ni.info;
  SimTime t;
  if (k.operands == OperandRule::kTritonTemplate && shape.operand_gemm[0] > 0) {
    // An Inductor template GEMM: the GEMM family on the M, N, K its operands imply (template_gemm), bf16.
    GemmShape g;
    g.m = shape.operand_gemm[0], g.n = shape.operand_gemm[1], g.k = shape.operand_gemm[2];
    g.batch = std::max<int64_t>(shape.operand_gemm[3], 1);
    g.math = GemmMath::kBf16;
    g.ab_bytes = g.c_bytes = static_cast<uint8_t>(kTemplateElemBytes);
    g.reads_c = false;
    t = gemm(g);
    e.flops = g.flops();
    e.bytes = g.bytes();
    e.from_operands = true;
  } else if ((k.family == KernelFamily::kAttentionForward || k.family == KernelFamily::kAttentionBackward) &&
             !k.aux) {
    AttentionShape a = cost::attention_shape(k, shape);
    t = attention(a);
    double pairs = static_cast<double>(a.seq_q) * a.seq_kv * (a.causal ? 0.5 : 1.0);
    e.flops = 4.0 * a.batch * a.heads_q * pairs * a.head_dim * (a.backward ? 2.5 : 1.0);
  } else {
    if (k.aux) {
      // FlashAttention helpers (dot(dO, O), dQ/dKV conversion, split-KV combine): one pass over the rows of
      // their blocks, reading two head-dim vectors per row and writing an fp32 one.
      const double rows = static_cast<double>(shape.grid[0]) * shape.grid[1] * shape.grid[2] *
                          std::max(1, k.block_m > 0 ? k.block_m : 64);
      e.bytes = rows * std::max(64, k.head_dim) * (2.0 * k.elem_bytes + 4.0);
    } else if (k.operands != OperandRule::kNone && shape.operand_bytes > 0) {
      e.bytes = shape.operand_bytes;  // what its pointer arguments reach (CostModel::operand_rule)
      e.from_operands = true;
    } else {
      e.bytes = cost::kernel_bytes(k, shape);
    }
    const double eff = k.family == KernelFamily::kCopy ? params_.memory.copy_efficiency
                                                        : params_.memory.elementwise_efficiency;
    t = ns(params_.memory.fixed_ns + e.bytes / (spec_.hbm_bw_bytes_per_s * eff) * 1e9);
  }
  e.source = t < spec_.kernel_floor ? "floor" : "family";
  e.duration = max(t, spec_.kernel_floor);
  return e;
}

SimTime FamilyCostModel::uncached_kernel(std::string_view name, const KernelShape& shape) const {
  return explain_kernel(name, shape).duration;
}

SimTime FamilyCostModel::kernel(std::string_view name, const KernelShape& shape) const {
  ThreadCache& c = thread_cache();
  uint64_t h = mix(reinterpret_cast<uintptr_t>(name.data()), name.size());
  h = mix(h, (uint64_t{shape.grid[0]} << 32) | shape.block[0]);
  h = mix(h, (uint64_t{shape.grid[1]} << 40) ^ (uint64_t{shape.grid[2]} << 20) ^ shape.block[1] ^
                 (uint64_t{shape.block[2]} << 10));
  h = mix(h, shape.shared_mem ^ (static_cast<uint64_t>(shape.row_length) << 24));
  h = mix(h, static_cast<uint64_t>(shape.operand_bytes));
  h = mix(h, static_cast<uint64_t>(shape.operand_gemm[0]) * 31 + static_cast<uint64_t>(shape.operand_gemm[1]) * 17 +
                 static_cast<uint64_t>(shape.operand_gemm[2]));
  KernelSlot& s = c.kernels[h & (kKernelSlots - 1)];
  if (s.model == id_ && s.ptr == name.data() && s.len == name.size() && s.shape == shape &&
      std::memcmp(s.name.data(), name.data(), name.size()) == 0)
    return s.value;
  SimTime v = uncached_kernel(name, shape);
  s.model = id_;
  s.ptr = name.data();
  s.len = name.size();
  s.shape = shape;
  s.name.assign(name.data(), name.size());
  s.value = v;
  return v;
}

// What the launch arguments of `name` are read for (row_argument, operand_rule), cached per thread and name.
FamilyCostModel::ArgumentUse FamilyCostModel::argument_use(std::string_view name) const {
  ThreadCache& c = thread_cache();
  RowSlot& s = c.rows[mix(reinterpret_cast<uintptr_t>(name.data()), name.size()) & (kRowSlots - 1)];
  if (s.model == id_ && s.ptr == name.data() && s.len == name.size() &&
      std::memcmp(s.name.data(), name.data(), name.size()) == 0)
    return {s.value, s.operands};
  const NameInfo& ni = info_for(name);
  RowArgument v;
  OperandRule o = OperandRule::kNone;
  // A measured table entry for the name wins over the family, so its launches need no argument.
  const bool tabled = ni.has_any_shape || !ni.shaped.empty();
  if (!tabled) {
    if (ni.info.row_arg_index >= 0) v = {ni.info.row_arg_index, ni.info.row_arg_bytes};
    o = ni.info.operands;
  }
  s.model = id_;
  s.ptr = name.data();
  s.len = name.size();
  s.name.assign(name.data(), name.size());
  s.value = v;
  s.operands = o;
  return {v, o};
}

CostModel::RowArgument FamilyCostModel::row_argument(std::string_view name) const {
  return argument_use(name).row;
}

CostModel::OperandRule FamilyCostModel::operand_rule(std::string_view name) const {
  return argument_use(name).operands;
}

SimTime FamilyCostModel::uncached_gemm(const GemmShape& shape) const {
  return max(cost::gemm_time(spec_, params_.gemm, shape), spec_.kernel_floor);
}

SimTime FamilyCostModel::gemm(const GemmShape& shape) const {
  ThreadCache& c = thread_cache();
  uint64_t h = mix(static_cast<uint64_t>(shape.m), static_cast<uint64_t>(shape.n));
  h = mix(h, static_cast<uint64_t>(shape.k));
  h = mix(h, static_cast<uint64_t>(shape.batch) * 131 + static_cast<uint64_t>(shape.math) * 7 + shape.ab_bytes +
                 (uint64_t{shape.c_bytes} << 8) + (shape.reads_c ? 1 << 16 : 0));
  GemmSlot& s = c.gemms[h & (kGemmSlots - 1)];
  if (s.model == id_ && same_gemm(s.shape, shape)) return s.value;
  SimTime v = uncached_gemm(shape);
  s.model = id_;
  s.shape = shape;
  s.value = v;
  return v;
}

SimTime FamilyCostModel::attention(const AttentionShape& a) const {
  const AttentionParams& p = params_.attention;
  if (a.batch <= 0 || a.heads_q <= 0 || a.seq_q <= 0 || a.seq_kv <= 0 || a.head_dim <= 0) return spec_.kernel_floor;
  const double d = static_cast<double>(a.head_dim);
  const double dv = a.head_dim_v > 0 ? static_cast<double>(a.head_dim_v) : d;
  const double sq = static_cast<double>(a.seq_q), sk = static_cast<double>(a.seq_kv);
  // Query-key pairs that are computed: all of them, or under a causal mask (query i sees keys 0..i, top-left
  // aligned as torch's is_causal) the lower triangle.
  double pairs = sq * sk;
  if (a.causal) pairs = sq <= sk ? sq * (sq + 1) / 2 : sk * (sk + 1) / 2 + (sq - sk) * sk;
  // Forward: S = Q K^T and O = P V, 2 flops per multiply-add. Backward: 2.5x the forward's matmul flops (it
  // recomputes S and computes dV, dP, dQ, dK: FlashAttention-2 paper, arXiv 2307.08691, section 4.1).
  const double fwd_flops = 2.0 * a.batch * a.heads_q * pairs * (d + dv);
  const double flops = a.backward ? 2.5 * fwd_flops : fwd_flops;
  const double hd_factor = std::clamp(std::pow(d / 128.0, p.head_dim_exponent), 0.6, 1.05);
  const double eff = (a.backward ? p.backward_efficiency : p.forward_efficiency) * hd_factor;
  // One CTA per 128 queries (keys for the backward) per batch and head (FlashAttention-2 kBlockM = 128 at head
  // dim <= 128): partial waves leave SMs idle.
  const double ctas = std::ceil((a.backward ? sk : sq) / 128.0) * a.batch * a.heads_q;
  const double waves = ctas / std::max(1, spec_.sm_count);
  const double util = waves / (p.wave_quantization * std::ceil(waves) + (1 - p.wave_quantization) * waves);
  const double compute_ns = flops / (peak_of(spec_, a.math) * eff * util) * 1e9;
  const double io = (a.batch * (a.heads_q * sq + a.heads_kv * sk) * (d + dv)) * a.elem_bytes;
  const double memory_ns =
      io * (a.backward ? 2.5 : 1.0) / (spec_.hbm_bw_bytes_per_s * params_.memory.elementwise_efficiency) * 1e9;
  return max(ns(p.fixed_ns + std::max(compute_ns, memory_ns)), spec_.kernel_floor);
}

SimTime FamilyCostModel::convolution(const ConvShape& s) const {
  const GemmShape g = s.implicit_gemm();
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) return spec_.kernel_floor;
  // Compute: the implicit GEMM as the GEMM family would tile it (tile quantisation, waves, split-K for the small
  // grids of weight gradients), scaled by the engine's multiplies per direct multiply. A grouped convolution with
  // few channels per group (depthwise) runs per-channel kernels, not tiles: its compute is its flops at the peak.
  double compute_ns;
  const int64_t groups = std::max<int64_t>(s.groups, 1);
  if (groups > 1 && (s.c / groups < 16 || s.k / groups < 16))
    compute_ns = 2 * s.macs() * s.flop_scale / peak_of(spec_, s.math) * 1e9;
  else
    compute_ns = cost::plan_gemm(spec_, params_.gemm, g).compute_ns * s.flop_scale;
  // Memory: the tensors once each (an implicit GEMM forms its im2col tiles on chip) plus the engine's extra traffic.
  const double memory_ns =
      (s.tensor_bytes() + s.extra_bytes) / (spec_.hbm_bw_bytes_per_s * params_.gemm.mem_efficiency) * 1e9;
  return max(ns(params_.gemm.fixed_ns + std::max(compute_ns, memory_ns)), spec_.kernel_floor);
}

SimTime FamilyCostModel::streaming(double bytes, double flops, GemmMath math) const {
  const double t = std::max(bytes / (spec_.hbm_bw_bytes_per_s * params_.memory.elementwise_efficiency),
                            flops / peak_of(spec_, math));
  return max(ns(params_.memory.fixed_ns + t * 1e9), spec_.kernel_floor);
}

SimTime FamilyCostModel::copy(CopyKind kind, size_t bytes, bool pinned) const {
  const CopyParams& c = params_.copy;
  const double b = static_cast<double>(bytes);
  auto over = [](double n, double bw) { return bw > 0 ? n / bw * 1e9 : 0.0; };
  switch (kind) {
    case CopyKind::kHostToHost:
      return SimTime::zero();  // a host memcpy: the CPU time is the caller's
    case CopyKind::kHostToDevice:
    case CopyKind::kDeviceToHost:
      if (pinned) return ns(c.pinned_latency_ns + over(b, spec_.pcie_bw_bytes_per_s * c.pinned_efficiency));
      return ns(c.pageable_latency_ns + over(b, spec_.pcie_bw_bytes_per_s * c.pageable_efficiency));
    case CopyKind::kDeviceToDevice:  // read + write of every byte
      return ns(c.device_latency_ns + over(2 * b, spec_.hbm_bw_bytes_per_s * c.device_efficiency));
    case CopyKind::kPeer:
      return ns(c.device_latency_ns + over(b, spec_.nvlink_bw_bytes_per_s * c.nvlink_efficiency));
  }
  return SimTime::zero();
}

SimTime FamilyCostModel::memset(size_t bytes) const {
  const CopyParams& c = params_.copy;
  return max(ns(c.device_latency_ns +
                static_cast<double>(bytes) / (spec_.hbm_bw_bytes_per_s * c.device_efficiency) * 1e9),
             spec_.kernel_floor);
}

std::unique_ptr<CostModel> make_cost_model(const DeviceSpec& spec, KernelTable table) {
  return std::make_unique<FamilyCostModel>(spec, std::move(table), cost_params_for(spec));
}

}  // namespace genie::fakecuda
