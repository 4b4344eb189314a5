// SPDX-License-Identifier: Apache-2.0
// Tests of code libraries (fakecuda/src/runtime_library.cpp): kernels with handles, variables, unload.
#include <gtest/gtest.h>

#include <cstring>

#include "genie/fakecuda/graph.hpp"
#include "genie/fakecuda/runtime.hpp"

namespace genie::fakecuda {
namespace {

RuntimeOptions test_options() {
  RuntimeOptions o;
  o.spec = load_device_spec("h200").value();
  o.device_count = 1;
  o.clock = {sched::ClockMode::kVirtual, SimTime::ms(100000)};
  return o;
}

constexpr char kPtx[] = R"(.version 9.0
.target sm_90
.global .align 4 .b8 counter[16];
.visible .entry add_one(.param .u64 p0) { ret; }
.visible .entry _Z8scale_itPffi(.param .u64 p0) { ret; }
)";

TEST(RuntimeLibrary, KernelsExistFromTheLoadAndLaunchLikeRegisteredOnes) {
  Runtime rt(test_options());
  auto lib = rt.load_library(kPtx);
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
  Runtime rt(test_options());
  CodeLibrary* lib = rt.load_library(kPtx).value();
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

TEST(RuntimeLibrary, ImageOfUnknownNamesTakesAnyKernelName) {
  Runtime rt(test_options());
  std::string linked = std::string(kLinkedImageTag) + '\0' + "inputs";
  CodeLibrary* lib = rt.load_library(linked.data()).value();
  EXPECT_TRUE(rt.library_kernels(*lib).empty());
  ASSERT_TRUE(rt.library_kernel(*lib, "triton_poi_0").is_ok());
  EXPECT_EQ(rt.library_kernels(*lib).size(), 1u);  // the count is what was asked for
  EXPECT_FALSE(rt.load_library("not code").is_ok());
}

}  // namespace
}  // namespace genie::fakecuda
