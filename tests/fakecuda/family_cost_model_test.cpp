// SPDX-License-Identifier: Apache-2.0
// Tests of FamilyCostModel: table precedence, the bandwidth-bound and attention families from kernel names,
// copies against the calibration, the per-thread cache, and GEMM/attention monotonicity.
#include "genie/fakecuda/family_cost_model.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace genie::fakecuda {
namespace {

DeviceSpec h200() { return load_device_spec("h200").value(); }

KernelShape shape(uint32_t grid, uint32_t block, uint32_t gy = 1, uint32_t gz = 1) {
  KernelShape s;
  s.grid[0] = grid;
  s.grid[1] = gy;
  s.grid[2] = gz;
  s.block[0] = block;
  return s;
}

FamilyCostModel model(KernelTable table = {}) { return FamilyCostModel(h200(), std::move(table), cost_params_for(h200())); }

// torch.add on fp32 tensors (mangled as nvcc registers it; CUDALoops.cuh launch_vectorized_kernel).
constexpr const char* kAddFloat =
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_";

TEST(FamilyCostModel, ExactShapeBeatsNameOnlyBeatsFamily) {
  auto table = parse_kernel_table(R"({"kernels": [
      {"name": "k", "duration_us": 50},
      {"name": "k", "grid": [4], "block": [128], "duration_us": 20}]})", "t.json");
  ASSERT_TRUE(table.is_ok());
  FamilyCostModel m = model(table.value());
  EXPECT_EQ(m.kernel("k", shape(4, 128)), SimTime::us(20));
  EXPECT_EQ(m.kernel("k", shape(8, 128)), SimTime::us(50));
  EXPECT_EQ(m.explain_kernel("k", shape(4, 128)).source, "table (exact shape)");
  // A tiny launch of an unknown kernel: the per-kernel fixed cost (at least the preset's floor).
  SimTime tiny = m.kernel("other", shape(1, 32));
  EXPECT_GE(tiny, h200().kernel_floor);
  EXPECT_NEAR(tiny.to_us(), m.params().memory.fixed_ns / 1e3, 0.01);
  EXPECT_EQ(m.explain_kernel("other", shape(1, 32)).family, "unknown");
}

TEST(FamilyCostModel, ElementwiseBytesFromTheLaunchShape) {
  // System: a vectorized fp32 add launched as torch does for N = 2^24 elements: grid N / (128 threads * 8
  // elements), block 128. Expectation: 3 tensors * 4 bytes * N of traffic at the fitted elementwise efficiency,
  // plus the fixed cost.
  FamilyCostModel m = model();
  const double n = double(1 << 24);
  KernelEstimate e = m.explain_kernel(kAddFloat, shape((1 << 24) / 1024, 128));
  EXPECT_EQ(e.family, "elementwise");
  EXPECT_DOUBLE_EQ(e.bytes, n * 3 * 4);
  const MemoryParams& p = m.params().memory;
  double expected_ns = p.fixed_ns + n * 12 / (h200().hbm_bw_bytes_per_s * p.elementwise_efficiency) * 1e9;
  EXPECT_NEAR(double(e.duration.count_ns()), expected_ns, 1.0);
  // Twice the elements: about twice the bandwidth term.
  double twice = double(m.kernel(kAddFloat, shape((1 << 25) / 1024, 128)).count_ns()) - p.fixed_ns;
  EXPECT_NEAR(twice / (expected_ns - p.fixed_ns), 2.0, 1e-4);
}

TEST(FamilyCostModel, TritonAndUnknownKernelsAreCostedByTheirOperandsWhenKnown) {
  // System: Triton kernels by prefix (a fused layer norm is a Triton reduction, not ATen's normalization family), an
  // unknown kernel, a known ATen one and a tabled name. Expectation: the first three read their operands and take
  // fixed + operand bytes / (HBM x elementwise efficiency); ATen's and the tabled one's launches ignore them.
  using Rule = CostModel::OperandRule;
  auto table = parse_kernel_table(R"({"kernels": [{"name": "triton_poi_tabled", "duration_us": 7}]})", "t.json");
  ASSERT_TRUE(table.is_ok());
  FamilyCostModel m = model(table.value());
  EXPECT_EQ(m.operand_rule("triton_poi_fused_gelu_view_9"), Rule::kTritonPointwise);
  EXPECT_EQ(m.operand_rule("triton_per_fused_native_layer_norm_0"), Rule::kTritonReduction);
  EXPECT_EQ(m.operand_rule("triton_red_fused_sum_2"), Rule::kTritonReduction);
  EXPECT_EQ(m.operand_rule("my_jit_kernel"), Rule::kLaunchShape);
  EXPECT_EQ(m.operand_rule(kAddFloat), Rule::kNone);
  EXPECT_EQ(m.operand_rule("triton_poi_tabled"), Rule::kNone);
  KernelShape s = shape(1024, 128);
  s.operand_bytes = 100e6;
  KernelEstimate e = m.explain_kernel("triton_poi_fused_gelu_view_9", s);
  EXPECT_TRUE(e.from_operands);
  EXPECT_EQ(e.bytes, 100e6);
  const CostParams& p = m.params();
  const double want_ns =
      p.memory.fixed_ns + 100e6 / (h200().hbm_bw_bytes_per_s * p.memory.elementwise_efficiency) * 1e9;
  EXPECT_NEAR(static_cast<double>(m.kernel("triton_poi_fused_gelu_view_9", s).count_ns()), want_ns, 1.0);
  // The cache tells launches apart by their operands.
  KernelShape half = s;
  half.operand_bytes = 50e6;
  EXPECT_LT(m.kernel("triton_poi_fused_gelu_view_9", half), m.kernel("triton_poi_fused_gelu_view_9", s));
  EXPECT_FALSE(m.explain_kernel(kAddFloat, s).from_operands);
}

TEST(FamilyCostModel, CopiesFollowTheCalibration) {
  // tests/data/calibration/h200/device.json: pinned H2D of 256 MiB took 4863 us, D2D of 256 MiB 131.3 us,
  // pageable H2D of 256 MiB 13996 us (pinned is always faster).
  FamilyCostModel m = model();
  EXPECT_NEAR(m.copy(CopyKind::kHostToDevice, 256u << 20, true).to_us(), 4863.3, 4863.3 * 0.05);
  EXPECT_NEAR(m.copy(CopyKind::kDeviceToDevice, 256u << 20, true).to_us(), 131.3, 131.3 * 0.05);
  EXPECT_NEAR(m.copy(CopyKind::kHostToDevice, 256u << 20, false).to_us(), 13995.6, 13995.6 * 0.10);
  EXPECT_GT(m.copy(CopyKind::kHostToDevice, 1 << 20, false), m.copy(CopyKind::kHostToDevice, 1 << 20, true));
  EXPECT_EQ(m.copy(CopyKind::kHostToHost, 1 << 20, true), SimTime::zero());
  EXPECT_GE(m.memset(1), h200().kernel_floor);
}

TEST(FamilyCostModel, CacheDistinguishesNamesThatShareAnAddress) {
  // A caller's buffer reused for another name must not return the first name's cached duration.
  auto table = parse_kernel_table(R"({"kernels": [{"name": "kernelA", "duration_us": 7},
                                                   {"name": "kernelB", "duration_us": 9}]})", "t.json");
  ASSERT_TRUE(table.is_ok());
  FamilyCostModel m = model(table.value());
  char buf[] = "kernelA";
  EXPECT_EQ(m.kernel(std::string_view(buf), shape(1, 1)), SimTime::us(7));
  EXPECT_EQ(m.kernel(std::string_view(buf), shape(1, 1)), SimTime::us(7));  // hit
  buf[6] = 'B';
  EXPECT_EQ(m.kernel(std::string_view(buf), shape(1, 1)), SimTime::us(9));
  // Two models never share entries: without the table, kernelB is an unknown kernel again.
  FamilyCostModel other = model();
  EXPECT_EQ(other.kernel("kernelB", shape(1, 1)), other.explain_kernel("kernelB", shape(1, 1)).duration);
  EXPECT_NE(other.kernel("kernelB", shape(1, 1)), SimTime::us(9));
}

GemmShape bf16_gemm(int64_t m, int64_t n, int64_t k, int64_t batch = 1) {
  GemmShape s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.batch = batch;
  s.math = GemmMath::kBf16;
  s.ab_bytes = s.c_bytes = 2;
  s.reads_c = false;
  return s;
}

TEST(FamilyCostModel, GemmScalesWithWorkAndDtype) {
  FamilyCostModel m = model();
  SimTime base = m.gemm(bf16_gemm(8192, 8192, 8192));
  // A large GEMM runs near the fitted fraction of the bf16 peak.
  double tflops = bf16_gemm(8192, 8192, 8192).flops() / base.to_seconds() / 1e12;
  EXPECT_GT(tflops, 0.5 * 989.5);
  EXPECT_LT(tflops, 0.9 * 989.5);
  EXPECT_GT(m.gemm(bf16_gemm(8192, 8192, 16384)), base);
  // Batch 4 of a device-filling GEMM: four times the work, within wave effects.
  EXPECT_NEAR(double(m.gemm(bf16_gemm(4096, 4096, 4096, 4)).count_ns()) / m.gemm(bf16_gemm(4096, 4096, 4096)).count_ns(),
              4.0, 0.4);
  GemmShape tf32 = bf16_gemm(8192, 8192, 8192);
  tf32.math = GemmMath::kTf32;
  tf32.ab_bytes = tf32.c_bytes = 4;
  GemmShape fp32 = tf32;
  fp32.math = GemmMath::kFp32;
  EXPECT_LT(base, m.gemm(tf32));
  EXPECT_LT(m.gemm(tf32), m.gemm(fp32));
  // A skinny GEMM (decode-like, m = 16) is bound by reading B: at least its bytes at HBM bandwidth.
  GemmShape skinny = bf16_gemm(16, 12288, 12288);
  EXPECT_GE(m.gemm(skinny).to_seconds(), 12288.0 * 12288 * 2 / h200().hbm_bw_bytes_per_s);
}

TEST(FamilyCostModel, AttentionCausalAndBackward) {
  FamilyCostModel m = model();
  AttentionShape a;
  a.batch = 4;
  a.heads_q = a.heads_kv = 32;
  a.seq_q = a.seq_kv = 8192;
  a.head_dim = 128;
  SimTime full = m.attention(a);
  // Forward of a long sequence: compute-bound at the fitted efficiency.
  double flops = 4.0 * 4 * 32 * 8192.0 * 8192 * 128;
  EXPECT_NEAR(flops / full.to_seconds() / 1e12, 989.5 * m.params().attention.forward_efficiency, 20);
  a.causal = true;
  EXPECT_NEAR(double(m.attention(a).count_ns()) / full.count_ns(), 0.5, 0.02);
  a.causal = false;
  a.backward = true;
  const AttentionParams& p = m.params().attention;
  EXPECT_NEAR(double(m.attention(a).count_ns()) / full.count_ns(), 2.5 * p.forward_efficiency / p.backward_efficiency, 0.1);
}

TEST(FamilyCostModel, FlashAttentionKernelFromItsName) {
  // flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, ...>, Is_dropout=false, Is_causal=true, ...> with grid
  // (seq/128, batch, heads) = (64, 4, 32): the AttentionShape batch 4, 32 heads, seq 8192, causal.
  FamilyCostModel m = model();
  const char* fa =
      "_ZN13pytorch_flash16flash_fwd_kernelINS_23Flash_fwd_kernel_traitsILi128ELi128ELi64ELi4ELb0ELb0EN3c108BFloat16EEE"
      "Lb0ELb1ELb0ELb1ELb1ELb0EEEvNS_16Flash_fwd_paramsE";
  KernelShape s = shape(64, 128, 4, 32);
  KernelEstimate e = m.explain_kernel(fa, s);
  EXPECT_EQ(e.family, "attention-forward");
  AttentionShape a;
  a.batch = 4;
  a.heads_q = a.heads_kv = 32;
  a.seq_q = a.seq_kv = 8192;
  a.head_dim = 128;
  a.causal = true;
  EXPECT_EQ(e.duration, m.attention(a));
}

}  // namespace
}  // namespace genie::fakecuda
