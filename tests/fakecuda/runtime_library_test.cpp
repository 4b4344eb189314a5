// SPDX-License-Identifier: Apache-2.0
// Tests of code libraries (fakecuda/src/runtime_library.cpp): kernels with handles, variables, unload.
#include <gtest/gtest.h>

#include <cstring>

#include "genie/fakecuda/graph.hpp"
#include "genie/fakecuda/runtime.hpp"

namespace genie::fakecuda {
namespace {

RuntimeOptions library_test_options() {
  RuntimeOptions o;
  o.spec = load_device_spec("h200").value();
  o.device_count = 1;
  o.clock = {sched::ClockMode::kVirtual, SimTime::ms(100000)};
  return o;
}

constexpr char kLibraryPtx[] = R"(.version 9.0
.target sm_90
.global .align 4 .b8 counter[16];
.visible .entry add_one(.param .u64 p0) { ret; }
.visible .entry _Z8scale_itPffi(.param .u64 p0) { ret; }
)";

TEST(RuntimeLibrary, KernelsExistFromTheLoadAndLaunchLikeRegisteredOnes) {
  Runtime rt(library_test_options());
  auto lib = rt.load_library(kLibraryPtx);
  ASSERT_TRUE(lib.is_ok()) << lib.status().to_string();
  EXPECT_EQ(rt.resolve_library(lib.value()), lib.value());
  std::vector<const Kernel*> all = rt.library_kernels(*lib.value());
  ASSERT_EQ(all.size(), 2u);
  auto k = rt.library_kernel(*lib.value(), "add_one");
  ASSERT_TRUE(k.is_ok());
  EXPECT_EQ(k.value()->name, "add_one");
  // The handle is what cudaLaunchKernel (by "host stub") and __cudaLaunchKernel (by cudaKernel_t) look up.
  EXPECT_EQ(ModuleRegistry::from_handle(k.value()), k.value());
  EXPECT_EQ(ModuleRegistry::instance().find_kernel(k.value()), k.value());
  auto missing = rt.library_kernel(*lib.value(), "not_there");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), Errc::kNotFound);
  // Launched, it takes the cost model's time for its name.
  Stream* s = rt.create_stream(0, kStreamNonBlocking, 0);
  KernelShape shape;
  shape.grid[0] = 4096;
  shape.block[0] = 256;
  Event* e0 = rt.create_event(0);
  Event* e1 = rt.create_event(0);
  sched::OpSpec backlog;  // the launch starts when this ends, its host cost hidden
  backlog.duration = SimTime::ms(1);
  ASSERT_TRUE(rt.submit(*s, backlog).is_ok());
  ASSERT_TRUE(rt.record_event(*e0, *s).is_ok());
  ASSERT_TRUE(rt.launch_kernel(*k.value(), shape, *s).is_ok());
  ASSERT_TRUE(rt.record_event(*e1, *s).is_ok());
  ASSERT_TRUE(rt.synchronize_event(*e1).is_ok());
  const double expect_ms = rt.cost_model().kernel("add_one", shape).to_ms();
  EXPECT_GT(expect_ms, 0.0);
  EXPECT_NEAR(rt.elapsed_ms(*e0, *e1).value(), expect_ms, 1e-6);
}

TEST(RuntimeLibrary, UnloadInvalidatesKernelsAndFreesVariables) {
  Runtime rt(library_test_options());
  CodeLibrary* lib = rt.load_library(kLibraryPtx).value();
  const Kernel* k = rt.library_kernel(*lib, "add_one").value();
  auto g = rt.library_global(*lib, "counter");
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  EXPECT_EQ(g->second, 16u);
  EXPECT_EQ(rt.device(0).used_bytes() > 0, true);
  unsigned char zeros[16] = {};
  EXPECT_EQ(std::memcmp(g->first, zeros, 16), 0);
  // The same variable again: the same memory.
  EXPECT_EQ(rt.library_global(*lib, "counter")->first, g->first);
  EXPECT_EQ(rt.library_global(*lib, "nothing").status().code(), Errc::kNotFound);
  ASSERT_TRUE(rt.unload_library(lib).is_ok());
  EXPECT_EQ(rt.resolve_library(lib), nullptr);
  EXPECT_EQ(ModuleRegistry::from_handle(k), nullptr);
  EXPECT_EQ(ModuleRegistry::instance().find_kernel(k), nullptr);
  EXPECT_EQ(rt.device(0).used_bytes(), 0u);
  EXPECT_FALSE(rt.unload_library(lib).is_ok());
}

/// Duration of one launch of `k` with `args` on a fresh stream (a backlog hides the host's launch cost), in ms.
double launch_ms(Runtime& rt, const Kernel& k, const KernelShape& shape, void* const* args) {
  Stream* s = rt.create_stream(0, kStreamNonBlocking, 0);
  Event* e0 = rt.create_event(0);
  Event* e1 = rt.create_event(0);
  sched::OpSpec backlog;
  backlog.duration = SimTime::ms(1);
  EXPECT_TRUE(rt.submit(*s, backlog).is_ok());
  EXPECT_TRUE(rt.record_event(*e0, *s).is_ok());
  EXPECT_TRUE(rt.launch_kernel(k, shape, *s, args).is_ok());
  EXPECT_TRUE(rt.record_event(*e1, *s).is_ok());
  EXPECT_TRUE(rt.synchronize_event(*e1).is_ok());
  return rt.elapsed_ms(*e0, *e1).value();
}

TEST(RuntimeLibrary, AKernelWithAKnownParameterLayoutIsCostedByItsOperands) {
  // System: a Triton pointwise kernel (in_ptr0, out_ptr0, xnumel, scratch) whose layout the cubin gave, launched
  // over 2^20 elements of two 2 MiB bf16 tensors (each alone in its allocation) with a grid of 1024 x 128 threads.
  // Expectation: it moves 2 x 2 MiB (each operand bounded by its allocation, below 2^20 x 4 bytes), so it takes the
  // family's time for 4 MiB; the launch-shape rule (8 elements x 3 streams x 4 bytes per thread: 12 MiB) gives
  // another. A launch without arguments, a kernel without a layout and a pointer outside device memory fall back to
  // the launch shape; an integer argument changes the elements (a smaller xnumel caps each operand).
  Runtime rt(library_test_options());
  Kernel k;
  k.name = "triton_poi_fused_add_0";
  k.params = {{0, 8}, {8, 8}, {16, 4}, {24, 8}};
  constexpr size_t kBytes = size_t{2} << 20;
  void* in = rt.device_alloc(0, kBytes).value();
  void* out = rt.device_alloc(0, kBytes).value();
  int32_t xnumel = 1 << 20;
  void* scratch = nullptr;
  void* args[4] = {&in, &out, &xnumel, &scratch};
  KernelShape shape;
  shape.grid[0] = 1024;
  shape.block[0] = 128;
  KernelShape by_operands = shape;
  by_operands.operand_bytes = 2.0 * kBytes;
  const double want = rt.cost_model().kernel(k.name, by_operands).to_ms();
  const double by_shape = rt.cost_model().kernel(k.name, shape).to_ms();
  EXPECT_EQ(rt.launch_operand_bytes(k, shape, args), 2.0 * kBytes);
  EXPECT_NEAR(launch_ms(rt, k, shape, args), want, 1e-6);
  EXPECT_GT(by_shape - want, 0.0015);  // 12 MiB against 4 MiB: about 1.9 us more at the fitted bandwidth
  EXPECT_NEAR(launch_ms(rt, k, shape, nullptr), by_shape, 1e-6);
  Kernel bare = k;
  bare.params.clear();
  EXPECT_NEAR(launch_ms(rt, bare, shape, args), by_shape, 1e-6);
  int host = 0;
  void* host_ptr = &host;
  void* host_args[4] = {&host_ptr, &host_ptr, &xnumel, &scratch};
  EXPECT_EQ(rt.launch_operand_bytes(k, shape, host_args), 0.0);
  xnumel = 1000;
  EXPECT_EQ(rt.launch_operand_bytes(k, shape, args), 2.0 * 1000 * kOperandElemBytes);
  // The same pointer twice is one operand.
  void* same_args[4] = {&in, &in, &xnumel, &scratch};
  EXPECT_EQ(rt.launch_operand_bytes(k, shape, same_args), 1000 * kOperandElemBytes);
  ASSERT_TRUE(rt.free_memory(in, false).is_ok());
  ASSERT_TRUE(rt.free_memory(out, false).is_ok());
  // An Inductor template GEMM (arg_A, arg_B, out_ptr0): A 4096 x 768, B 768 x 3072, C 4096 x 3072 bf16 are a GEMM of
  // 19 GFLOP, compute-bound: the GEMM family's time for that shape, not the memory time of its 36 MiB.
  Kernel tem;
  tem.name = "triton_tem_fused_mm_0";
  tem.params = {{0, 8}, {8, 8}, {16, 8}};
  void* a = rt.device_alloc(0, 4096 * 768 * 2).value();
  void* b = rt.device_alloc(0, 768 * 3072 * 2).value();
  void* c = rt.device_alloc(0, 4096 * 3072 * 2).value();
  void* tem_args[3] = {&a, &b, &c};
  KernelShape tem_shape;
  tem_shape.grid[0] = 32 * 24;
  tem_shape.block[0] = 256;
  KernelShape read = tem_shape;
  rt.launch_operand_bytes(tem, read, tem_args);
  EXPECT_EQ(read.operand_gemm[0], 4096);
  EXPECT_EQ(read.operand_gemm[1], 3072);
  EXPECT_EQ(read.operand_gemm[2], 768);
  GemmShape g;
  g.m = 4096, g.n = 3072, g.k = 768, g.math = GemmMath::kBf16, g.ab_bytes = g.c_bytes = 2, g.reads_c = false;
  const double gemm_ms = rt.cost_model().gemm(g).to_ms();
  EXPECT_NEAR(launch_ms(rt, tem, tem_shape, tem_args), gemm_ms, 1e-6);
  EXPECT_GT(gemm_ms, 2 * rt.cost_model().kernel(tem.name, tem_shape).to_ms());  // the launch shape alone: far less
  for (void* p : {a, b, c}) ASSERT_TRUE(rt.free_memory(p, false).is_ok());
}

TEST(RuntimeLibrary, ImageOfUnknownNamesTakesAnyKernelName) {
  Runtime rt(library_test_options());
  std::string linked = std::string(kLinkedImageTag) + '\0' + "inputs";
  CodeLibrary* lib = rt.load_library(linked.data()).value();
  EXPECT_TRUE(rt.library_kernels(*lib).empty());
  ASSERT_TRUE(rt.library_kernel(*lib, "triton_poi_0").is_ok());
  EXPECT_EQ(rt.library_kernels(*lib).size(), 1u);  // the count is what was asked for
  EXPECT_FALSE(rt.load_library("not code").is_ok());
}

}  // namespace
}  // namespace genie::fakecuda
