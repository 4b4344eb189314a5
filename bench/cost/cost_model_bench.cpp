// SPDX-License-Identifier: Apache-2.0
// Cost of a launch's duration lookup in FamilyCostModel: a repeated launch (cache hit), a training step's worth of
// distinct kernels and shapes in rotation (the amortised cost the runtime pays), and the uncached family rules
// (the first launch of a kernel and shape). GEMMs likewise. Reference in the same run: a mutex lock/unlock.
#include <benchmark/benchmark.h>

#include <mutex>
#include <string>
#include <vector>

#include "genie/fakecuda/family_cost_model.hpp"

namespace {

using namespace genie::fakecuda;

const FamilyCostModel& model() {
  static const DeviceSpec spec = load_device_spec("h200").value();
  static const FamilyCostModel m(spec, {}, cost_params_for(spec));
  return m;
}

// Kernel names of the families a transformer training step launches (mangled as registered, or unknown).
const std::vector<std::string>& names() {
  static const std::vector<std::string> n = [] {
    std::vector<std::string> v = {
        "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_",
        "_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_11FillFunctorIN3c108BFloat16EEESt5arrayIPcLm1EEEEviT0_T1_",
        "_ZN13pytorch_flash16flash_fwd_kernelINS_23Flash_fwd_kernel_traitsILi128ELi128ELi64ELi4ELb0ELb0EN3c108BFloat16EE"
        "ELb0ELb1ELb0ELb1ELb1ELb0EEEvNS_16Flash_fwd_paramsE",
    };
    for (int i = 0; i < 47; ++i) v.push_back("_Z12other_kernelILi" + std::to_string(i) + "EEvPfi");
    return v;
  }();
  return n;
}

// 200 distinct (kernel, shape) launches: 50 kernels x 4 grid sizes.
struct Launch {
  const std::string* name;
  KernelShape shape;
};
const std::vector<Launch>& launches() {
  static const std::vector<Launch> l = [] {
    std::vector<Launch> v;
    for (const std::string& n : names())
      for (uint32_t g : {64u, 1024u, 16384u, 131072u}) {
        Launch x{&n, {}};
        x.shape.grid[0] = g;
        x.shape.block[0] = 128;
        v.push_back(x);
      }
    return v;
  }();
  return l;
}

void BM_KernelLookupRepeated(benchmark::State& state) {
  const Launch& l = launches()[0];
  for (auto _ : state) benchmark::DoNotOptimize(model().kernel(*l.name, l.shape));
}
BENCHMARK(BM_KernelLookupRepeated);

void BM_KernelLookupStepRotation(benchmark::State& state) {
  const auto& ls = launches();
  size_t i = 0;
  for (auto _ : state) {
    const Launch& l = ls[i];
    benchmark::DoNotOptimize(model().kernel(*l.name, l.shape));
    if (++i == ls.size()) i = 0;
  }
  state.counters["distinct"] = static_cast<double>(ls.size());
}
BENCHMARK(BM_KernelLookupStepRotation);

void BM_KernelFamilyUncached(benchmark::State& state) {
  const auto& ls = launches();
  size_t i = 0;
  for (auto _ : state) {
    const Launch& l = ls[i];
    benchmark::DoNotOptimize(model().explain_kernel(*l.name, l.shape));
    if (++i == ls.size()) i = 0;
  }
}
BENCHMARK(BM_KernelFamilyUncached);

std::vector<GemmShape> gemms() {
  std::vector<GemmShape> v;
  for (int64_t m : {1024, 4096, 16384})
    for (int64_t n : {1024, 3072, 4096, 12288})
      for (int64_t k : {1024, 4096, 12288}) {
        GemmShape s;
        s.m = m;
        s.n = n;
        s.k = k;
        s.math = GemmMath::kBf16;
        s.ab_bytes = s.c_bytes = 2;
        v.push_back(s);
      }
  return v;
}

void BM_GemmLookupStepRotation(benchmark::State& state) {
  static const std::vector<GemmShape> g = gemms();
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(model().gemm(g[i]));
    if (++i == g.size()) i = 0;
  }
  state.counters["distinct"] = static_cast<double>(g.size());
}
BENCHMARK(BM_GemmLookupStepRotation);

void BM_GemmFamilyUncached(benchmark::State& state) {
  // A fresh model per batch of lookups would measure construction; instead vary k so every shape is new.
  GemmShape s = gemms()[10];
  int64_t k = 1;
  for (auto _ : state) {
    s.k = 1024 + (k++ & 0xffff);
    benchmark::DoNotOptimize(model().gemm(s));
  }
}
BENCHMARK(BM_GemmFamilyUncached);

void BM_ReferenceMutex(benchmark::State& state) {
  std::mutex mu;
  for (auto _ : state) {
    mu.lock();
    mu.unlock();
  }
}
BENCHMARK(BM_ReferenceMutex);

}  // namespace

BENCHMARK_MAIN();
