// SPDX-License-Identifier: Apache-2.0
// Cost model: kernel, library-call (GEMM, attention), copy and memset durations from a measured table,
// fitted family rules and a floor.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "genie/common/sim_time.hpp"
#include "genie/common/status.hpp"
#include "genie/fakecuda/device_spec.hpp"

namespace genie::fakecuda {

enum class CopyKind { kHostToHost, kHostToDevice, kDeviceToHost, kDeviceToDevice, kPeer };
const char* copy_kind_name(CopyKind k);

/// A kernel launch configuration.
struct KernelShape {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  size_t shared_mem = 0;
  /// Row length of a row-wise kernel whose row is a launch argument (CostModel::row_argument), read from the
  /// arguments at launch; 0 when unknown.
  int64_t row_length = 0;
  /// Bytes of device memory the kernel's operands span, estimated at launch from its pointer and integer arguments
  /// (CostModel::operand_rule, operand_bytes); 0 when unknown.
  double operand_bytes = 0;
  /// M, N, K and batch of a template GEMM estimated at launch from its operands' extents (template_gemm); 0 when
  /// the kernel is none.
  int64_t operand_gemm[4] = {0, 0, 0, 0};
  uint64_t threads() const {
    return uint64_t{grid[0]} * grid[1] * grid[2] * block[0] * block[1] * block[2];
  }
  bool operator==(const KernelShape& o) const {
    return std::tie(grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_mem, row_length, operand_bytes,
                    operand_gemm[0], operand_gemm[1], operand_gemm[2], operand_gemm[3]) ==
           std::tie(o.grid[0], o.grid[1], o.grid[2], o.block[0], o.block[1], o.block[2], o.shared_mem, o.row_length,
                    o.operand_bytes, o.operand_gemm[0], o.operand_gemm[1], o.operand_gemm[2], o.operand_gemm[3]);
  }
};

/// The arithmetic a GEMM runs on; selects the peak rate (DeviceSpec::peak_flops key) and efficiency curve.
enum class GemmMath : uint8_t { kFp64, kFp32, kTf32, kBf16, kFp16, kFp8, kInt8 };
inline constexpr int kGemmMathCount = 7;
/// "fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8" (the peak_flops keys of the presets).
const char* gemm_math_name(GemmMath m);
/// Parses a name of gemm_math_name(); false when unknown.
bool parse_gemm_math(std::string_view s, GemmMath* out);

/// One GEMM as a library call describes it: D[m,n] = op(A)[m,k] * op(B)[k,n] (+ C), `batch` times.
struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;
  GemmMath math = GemmMath::kFp32;
  uint8_t ab_bytes = 4;     ///< element size of A and B in bytes
  uint8_t c_bytes = 4;      ///< element size of C and D in bytes
  bool trans_a = false, trans_b = false;
  bool complex = false;     ///< complex data: 4 real multiply-adds per product (element sizes count both parts)
  bool reads_c = true;      ///< C is read (beta may be non-zero; device-side beta is unknown)
  double extra_bytes = 0;   ///< epilogue traffic beyond A, B, C and D (auxiliary outputs, bias gradients)
  /// Floating-point operations (2 per multiply-add, 8 per complex multiply-add).
  double flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
           static_cast<double>(batch) * (complex ? 4.0 : 1.0);
  }
  /// Compulsory HBM traffic: A and B read once, D written, C read when reads_c, plus extra_bytes.
  double bytes() const {
    double mn = static_cast<double>(m) * static_cast<double>(n);
    double ab = (static_cast<double>(m) * static_cast<double>(k) + static_cast<double>(k) * static_cast<double>(n)) *
                ab_bytes;
    return (ab + mn * c_bytes * (reads_c ? 2.0 : 1.0)) * static_cast<double>(batch) + extra_bytes;
  }
};

/// One scaled-dot-product attention (flash-style kernel or cuDNN's graph): softmax(Q K^T / sqrt(d)) V.
struct AttentionShape {
  int64_t batch = 1;
  int64_t heads_q = 1, heads_kv = 1;   ///< query heads; key/value heads (grouped-query attention when fewer)
  int64_t seq_q = 0, seq_kv = 0;
  int64_t head_dim = 0, head_dim_v = 0;  ///< head_dim_v 0 means head_dim
  bool causal = false;
  bool backward = false;                 ///< the backward pass (dQ, dK, dV)
  GemmMath math = GemmMath::kBf16;
  uint8_t elem_bytes = 2;
};

/// The gradient a convolution kernel computes.
enum class ConvPass : uint8_t { kForward, kBackwardData, kBackwardFilter };

/// One convolution as an engine runs it (cuDNN): y[n, k, out] = sum over c/groups channels and the filter window of
/// x * w. Spatial sizes are in[] (x), filter[] (w) and out[] (y); unused dimensions are 1. The engine decides
/// `math` (tensor cores or CUDA cores), `channel_multiple`, `flop_scale` and `extra_bytes`
/// (docs/costmodel.md "Convolutions").
struct ConvShape {
  ConvPass pass = ConvPass::kForward;
  int64_t n = 1, c = 1, k = 1, groups = 1;
  std::array<int64_t, 3> in{1, 1, 1}, filter{1, 1, 1}, out{1, 1, 1};
  GemmMath math = GemmMath::kFp32;  ///< the arithmetic the engine runs on
  uint8_t elem_bytes = 4;           ///< element size of x, w and y
  int64_t channel_multiple = 1;     ///< C/groups and K/groups are padded up to this (a tensor-core MMA's K and N)
  double flop_scale = 1;            ///< multiplies per direct-convolution multiply (Winograd F(2x2,3x3): 1/2.25)
  double extra_bytes = 0;           ///< HBM traffic beyond reading the inputs and writing the output once

  /// Multiply-adds of the direct convolution (the same for all three passes).
  double macs() const;
  /// Bytes of x, w and y, each read or written once.
  double tensor_bytes() const;
  /// The GEMM an implicit-GEMM engine runs, per group (batch = groups), channels padded to channel_multiple:
  /// forward M = N*P*Q, N = K/g, K = C/g*R*S; backward data M = N*P*Q, N = C/g, K = K/g*R*S (the forward's
  /// multiply-adds); backward filter M = K/g, N = C/g*R*S, K = N*P*Q.
  GemmShape implicit_gemm() const;
};

/// Turns GPU work into durations. Implementations are thread-safe.
class CostModel {
 public:
  virtual ~CostModel() = default;
  /// GPU duration of kernel `name` (mangled) launched with `shape`.
  virtual SimTime kernel(std::string_view name, const KernelShape& shape) const = 0;
  /// Which launch argument of kernel `name` is its row length (KernelShape::row_length): index in the argument
  /// array and its size in bytes (4 or 8); index -1 when the model reads none.
  struct RowArgument {
    int index = -1;
    int bytes = 0;
  };
  virtual RowArgument row_argument(std::string_view name) const {
    (void)name;
    return {};
  }
  /// How kernel `name` is costed from its operands (KernelShape::operand_bytes); kNone when its launch shape (or a
  /// table entry) decides.
  enum class OperandRule : uint8_t {
    kNone,
    kTritonPointwise,  ///< Triton pointwise: elements = the last integer argument (x the one before on a 2-D grid)
    kTritonReduction,  ///< Triton reduction: elements = the last two integer arguments (xnumel x r0_numel)
    kLaunchShape,      ///< any other kernel: elements = threads x kOperandElemsPerThread
    kTritonTemplate,   ///< Inductor's template GEMMs (triton_tem_*): a GEMM estimated from the extents (template_gemm)
  };
  virtual OperandRule operand_rule(std::string_view name) const {
    (void)name;
    return OperandRule::kNone;
  }
  /// GPU duration of a library GEMM (cuBLAS, cuBLASLt).
  virtual SimTime gemm(const GemmShape& shape) const = 0;
  /// GPU duration of an attention problem (the FlashAttention and memory-efficient attention kernel families; Genie's
  /// cuDNN has no engines, docs/costmodel.md "cuDNN").
  virtual SimTime attention(const AttentionShape& shape) const = 0;
  /// GPU duration of one convolution kernel (a cuDNN engine's main kernel; layout transforms are separate copies).
  virtual SimTime convolution(const ConvShape& shape) const = 0;
  /// GPU duration of a library kernel bounded by `bytes` of HBM traffic and `flops` on `math` (BLAS level 1
  /// and 2, solvers): a roofline with the per-kernel fixed cost.
  virtual SimTime streaming(double bytes, double flops, GemmMath math) const = 0;
  /// Duration of a copy of `bytes`; `pinned` says whether the host side is page-locked.
  virtual SimTime copy(CopyKind kind, size_t bytes, bool pinned) const = 0;
  virtual SimTime memset(size_t bytes) const = 0;
  /// Host CPU cost of launching one kernel (the API overhead of a launch).
  virtual SimTime launch_overhead() const = 0;
};

/// kLaunchShape's elements per thread and operand: 16 bytes per thread over two 4-byte operands, as the launch-shape
/// rule of an unknown kernel (docs/costmodel.md).
inline constexpr double kOperandElemsPerThread = 2;
/// The element size an operand is taken to have when its allocation does not bound it (fp32).
inline constexpr double kOperandElemBytes = 4;

/// The bytes a launch's operands span (KernelShape::operand_bytes): each distinct pointer argument that lies in
/// device memory reaches min(its extent to the end of its allocation, elements x kOperandElemBytes), elements from
/// `rule` and the integer arguments `ints` (in parameter order). `extents`: one per distinct device pointer. 0 when
/// there is no device pointer (the launch-shape rule applies).
double operand_bytes(CostModel::OperandRule rule, const KernelShape& shape, const std::vector<uint64_t>& extents,
                     const std::vector<int64_t>& ints);

/// The GEMM of an Inductor template kernel (triton_tem_*) from its operands' extents in parameter order: the last
/// is the output C (M x N), the two largest before it A (M x K) and B (K x N), `kTemplateElemBytes` per element
/// (bf16 under autocast); a grid with y > 1 is a batched GEMM of grid.y (Inductor's bmm template). Then
/// M = sqrt(|A| |C| / (|B| e)), N = |C| / (M e), K = |A| / (M e). Extents reach to the end of their allocations,
/// so a tensor that shares one is overestimated. Writes {M, N, K, batch}; false (and zeros) with fewer than three
/// operands.
bool template_gemm(const KernelShape& shape, const std::vector<uint64_t>& extents, int64_t out[4]);
inline constexpr double kTemplateElemBytes = 2;

/// Longest kernel duration a kernel table or an imported trace may give: one hour. Longer is a unit mistake
/// (ns taken for us) or a corrupt file, and far longer would not fit SimTime's int64 nanoseconds.
inline constexpr double kMaxKernelDurationUs = 3.6e9;

/// One measured entry of the kernel table.
struct KernelTableEntry {
  bool has_shape = false;       ///< false: applies to any launch shape of the kernel
  bool has_shared_mem = false;  ///< false: matches launches with any dynamic shared memory
  KernelShape shape;
  SimTime duration;
  /// True when a launch of `s` is this entry's shape (grid, block, and shared memory when given).
  bool matches(const KernelShape& s) const {
    if (!has_shape) return true;
    KernelShape t = shape;
    if (!has_shared_mem) t.shared_mem = s.shared_mem;
    return t == s;
  }
};

/// The measured kernel table: kernel name -> entries. Names are matched as registered (mangled) or demangled (as
/// profilers show them).
using KernelTable = std::multimap<std::string, KernelTableEntry, std::less<>>;

/// Loads a table file: {"kernels": [{"name": "...", "grid": [x,y,z], "block": [x,y,z], "shared_mem": n,
/// "duration_us": t}, ...]} ("grid"/"block"/"shared_mem" optional; `genie calibrate` writes such files, with
/// informational keys "calls", "min_us", "max_us" in each entry and others beside "kernels"; any other key in an
/// entry is an error). Errors name the file and the JSON path.
Result<KernelTable> load_kernel_table(const std::string& path);
Result<KernelTable> parse_kernel_table(const std::string& text, const std::string& origin);

/// The cost model the runtime uses for a device (FamilyCostModel, family_cost_model.hpp): the measured `table`
/// first, then the families with the parameters fitted for the preset (docs/costmodel.md), then the floor.
std::unique_ptr<CostModel> make_cost_model(const DeviceSpec& spec, KernelTable table = {});

}  // namespace genie::fakecuda
