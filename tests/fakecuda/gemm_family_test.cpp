// SPDX-License-Identifier: Apache-2.0
// Tests of the GEMM family's plan: tile choice, wave quantisation, split-K for small grids, the memory roofline.
#include "cost/gemm_family.hpp"

#include <gtest/gtest.h>

namespace genie::fakecuda::cost {
namespace {

DeviceSpec h200() { return load_device_spec("h200").value(); }

GemmShape bf16(int64_t m, int64_t n, int64_t k) {
  GemmShape s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.math = GemmMath::kBf16;
  s.ab_bytes = s.c_bytes = 2;
  s.reads_c = false;
  return s;
}

GemmParams whole_waves() {
  GemmParams p;
  for (auto& m : p.math) {
    m.efficiency = 0.7;
    m.k_overhead = 0;
    m.wave_quantization = 1.0;
  }
  p.fixed_ns = 0;
  return p;
}

TEST(GemmFamily, OneTileMoreThanTheDeviceCostsAWave) {
  // System: 132 SMs, whole-wave quantisation, no fixed cost or prologue. A grid of exactly 132 tiles of 256x128
  // takes one wave; 133 tiles take two. Expectation: the 133-tile GEMM is planned differently (smaller tiles) or
  // costs about twice as much; either way it is not faster and the 132-tile one runs in one full wave.
  GemmParams p = whole_waves();
  GemmPlan one = plan_gemm(h200(), p, bf16(256 * 12, 128 * 11, 8192));  // 12 x 11 = 132 tiles
  EXPECT_EQ(one.tile_m * one.tile_n, 256 * 128);
  EXPECT_NEAR(one.waves, 1.0, 1e-9);
  // One wave: every SM computes one 256x128x8192 tile at 0.7 of its share of the peak.
  double per_sm = h200().peak_flops.at("bf16") / 132 * 0.7;
  EXPECT_NEAR(one.compute_ns, 2.0 * 256 * 128 * 8192 / per_sm * 1e9, 1.0);
  GemmPlan more = plan_gemm(h200(), p, bf16(256 * 12 + 1, 128 * 11, 8192));
  EXPECT_GE(more.total_ns, one.total_ns);
}

TEST(GemmFamily, SmallGridsSplitK) {
  // A 256x256x16384 GEMM has 2 tiles of 256x128: without splitting 130 SMs idle. Expectation: the plan splits K.
  GemmPlan p = plan_gemm(h200(), whole_waves(), bf16(256, 256, 16384));
  EXPECT_GT(p.split_k, 1);
}

TEST(GemmFamily, SkinnyShapesAreMemoryBound) {
  // D[8, 16384] = A[8, 16384] B[16384, 16384]: B alone is 512 MiB of bf16; the compute is tiny.
  GemmParams p = whole_waves();
  GemmPlan plan = plan_gemm(h200(), p, bf16(8, 16384, 16384));
  double b_bytes = 16384.0 * 16384 * 2;
  EXPECT_GE(plan.memory_ns, b_bytes / (h200().hbm_bw_bytes_per_s * p.mem_efficiency) * 1e9);
  EXPECT_NEAR(plan.total_ns, std::max(plan.compute_ns, plan.memory_ns), 1e-6);
}

TEST(GemmFamily, EmptyGemmIsFree) {
  EXPECT_EQ(gemm_time(h200(), GemmParams{}, bf16(0, 128, 128)), SimTime::zero());
  EXPECT_GT(gemm_time(h200(), GemmParams{}, bf16(1, 1, 0)), SimTime::zero());  // k = 0: C is still written
}

}  // namespace
}  // namespace genie::fakecuda::cost
