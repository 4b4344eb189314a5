// SPDX-License-Identifier: Apache-2.0
// Tests of the cost-model vocabulary: math-type names and the measured kernel table (parsing and its errors).
#include "genie/fakecuda/cost_model.hpp"

#include <gtest/gtest.h>

namespace genie::fakecuda {
namespace {

TEST(GemmMath, NamesRoundTrip) {
  for (int i = 0; i < kGemmMathCount; ++i) {
    GemmMath m = GemmMath::kFp64;
    ASSERT_TRUE(parse_gemm_math(gemm_math_name(static_cast<GemmMath>(i)), &m));
    EXPECT_EQ(static_cast<int>(m), i);
  }
  GemmMath m;
  EXPECT_FALSE(parse_gemm_math("fp12", &m));
}

TEST(GemmShape, FlopsAndBytes) {
  // System: D[64,32] = A[64,16] B[16,32] in bf16, C read. Expectations: 2*64*32*16 flops;
  // bytes = (64*16 + 16*32) * 2 (A, B) + 64*32 * 2 * 2 (C read, D written).
  GemmShape s;
  s.m = 64;
  s.n = 32;
  s.k = 16;
  s.ab_bytes = s.c_bytes = 2;
  s.reads_c = true;
  EXPECT_DOUBLE_EQ(s.flops(), 2.0 * 64 * 32 * 16);
  EXPECT_DOUBLE_EQ(s.bytes(), (64 * 16 + 16 * 32) * 2.0 + 64 * 32 * 4.0);
  s.complex = true;
  EXPECT_DOUBLE_EQ(s.flops(), 8.0 * 64 * 32 * 16);
}

TEST(KernelTable, ParsesShapesAndNameOnlyEntries) {
  auto t = parse_kernel_table(R"({"kernels": [
      {"name": "k", "duration_us": 50},
      {"name": "k", "grid": [4], "block": [128, 2], "shared_mem": 1024, "duration_us": 20.5, "calls": 3}]})",
                              "t.json");
  ASSERT_TRUE(t.is_ok()) << t.status().to_string();
  ASSERT_EQ(t->count("k"), 2u);
  int shaped = 0;
  for (auto [it, end] = t->equal_range("k"); it != end; ++it) {
    if (!it->second.has_shape) {
      EXPECT_EQ(it->second.duration, SimTime::us(50));
      continue;
    }
    ++shaped;
    EXPECT_EQ(it->second.duration, SimTime::ns(20500));
    EXPECT_EQ(it->second.shape.grid[0], 4u);
    EXPECT_EQ(it->second.shape.grid[1], 1u);
    EXPECT_EQ(it->second.shape.block[1], 2u);
    EXPECT_EQ(it->second.shape.shared_mem, 1024u);
  }
  EXPECT_EQ(shaped, 1);
}

TEST(KernelTable, BadTablesNameTheFileAndPath) {
  auto r = parse_kernel_table(R"({"kernels": [{"name": "k"}]})", "t.json");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("t.json: /kernels/0/duration_us"), std::string::npos);
  r = parse_kernel_table(R"({"kernels": [{"name": "k", "duration_us": 1, "grid": [0], "block": [1]}]})", "t.json");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("/kernels/0/grid"), std::string::npos);
  r = parse_kernel_table(R"({"kernels": [{"name": "k", "duration_us": 1, "colour": 1}]})", "t.json");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("/kernels/0/colour: unknown key"), std::string::npos);
  EXPECT_FALSE(parse_kernel_table("[", "t.json").is_ok());
  EXPECT_FALSE(parse_kernel_table(R"({"kernel": []})", "t.json").is_ok());
  auto missing = load_kernel_table("/nonexistent.json");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.status().message().find("/nonexistent.json"), std::string::npos);
}

TEST(OperandBytes, EachOperandReachesItsExtentOrTheElementsTheArgumentsGive) {
  using Rule = CostModel::OperandRule;
  KernelShape shape;
  shape.grid[0] = 100;
  shape.block[0] = 128;  // 12800 threads
  const uint64_t big = uint64_t{1} << 30;
  // Pointwise: elements = the last integer argument (a size symbol ks0 = 7 before it is not one).
  EXPECT_EQ(operand_bytes(Rule::kTritonPointwise, shape, {big, big}, {7, 1000}), 2 * 1000 * kOperandElemBytes);
  EXPECT_EQ(operand_bytes(Rule::kTritonPointwise, shape, {big, 100}, {1000}), 1000 * kOperandElemBytes + 100);
  // On a 2-D grid, ynumel x xnumel.
  KernelShape grid2 = shape;
  grid2.grid[1] = 4;
  EXPECT_EQ(operand_bytes(Rule::kTritonPointwise, grid2, {big}, {64, 1000}), 64 * 1000 * kOperandElemBytes);
  // Reduction: xnumel x r0_numel for every operand (the output is bounded by its allocation).
  EXPECT_EQ(operand_bytes(Rule::kTritonReduction, shape, {big, 4096}, {64, 1000}),
            64 * 1000 * kOperandElemBytes + 4096);
  // No integer argument, or another kernel: elements from the launch shape.
  EXPECT_EQ(operand_bytes(Rule::kTritonPointwise, shape, {big}, {}), 12800 * kOperandElemsPerThread * kOperandElemBytes);
  EXPECT_EQ(operand_bytes(Rule::kLaunchShape, shape, {big, big}, {5}),
            2 * 12800 * kOperandElemsPerThread * kOperandElemBytes);
  // No device pointer, or a model that does not use operands: unknown.
  EXPECT_EQ(operand_bytes(Rule::kTritonPointwise, shape, {}, {1000}), 0.0);
  EXPECT_EQ(operand_bytes(Rule::kNone, shape, {big}, {1000}), 0.0);
}

}  // namespace
TEST(TemplateGemm, MNKFromTheExtentsOfABAndTheOutput) {
  // System: an Inductor mm template (arg_A, arg_B, out_ptr0) with A 4096 x 768, B 768 x 3072, C 4096 x 3072, bf16,
  // each alone in its allocation; an addmm template with its bias first; a bmm template of 12 batches (grid y).
  // Expectation: M, N, K recovered exactly, the bias ignored, the batch from the grid; fewer than three operands: none.
  KernelShape shape;
  int64_t g[4];
  const uint64_t a = 4096ull * 768 * 2, b = 768ull * 3072 * 2, c = 4096ull * 3072 * 2;
  ASSERT_TRUE(template_gemm(shape, {a, b, c}, g));
  EXPECT_EQ(g[0], 4096);
  EXPECT_EQ(g[1], 3072);
  EXPECT_EQ(g[2], 768);
  EXPECT_EQ(g[3], 1);
  ASSERT_TRUE(template_gemm(shape, {3072 * 2, a, b, c}, g));
  EXPECT_EQ(g[0] * g[1] * g[2], 4096ll * 3072 * 768);
  KernelShape batched;
  batched.grid[1] = 12;
  ASSERT_TRUE(template_gemm(batched, {12 * 1024ull * 64 * 2, 12 * 64ull * 1024 * 2, 12 * 1024ull * 1024 * 2}, g));
  EXPECT_EQ(g[0], 1024);
  EXPECT_EQ(g[1], 1024);
  EXPECT_EQ(g[2], 64);
  EXPECT_EQ(g[3], 12);
  EXPECT_FALSE(template_gemm(shape, {a, c}, g));
  EXPECT_EQ(g[0], 0);
}

}  // namespace genie::fakecuda
