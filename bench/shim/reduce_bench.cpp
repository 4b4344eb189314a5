// SPDX-License-Identifier: Apache-2.0
// Benchmark: the shim's CPU reduction kernel on all-reduce-sized buffers, with memcpy of the output as reference.
//
// A 4-rank ring all-reduce of 64 MB reduces 16 MiB chunks; here 4 sources of 16 MiB each are summed into a
// 16 MiB destination (separate, or in place: dst == srcs[0]), and memcpy copies 16 MiB. bytes_per_second counts
// all memory traffic, bytes read plus bytes written ((4 + 1) x 16 MiB per reduction, 2 x 16 MiB per memcpy), so
// it compares directly with memcpy as a fraction of memory bandwidth; out_bytes_per_second counts the output
// only. Buffers are 64 MiB+ in total, far beyond the caches, so this measures the DRAM-bound regime.
//   reduce_bench --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "reduce/float_formats.hpp"
#include "reduce/reduce_kernels.hpp"

namespace {

using genie::netsim::DataType;
using genie::shim::ReduceOp;

constexpr size_t kBytesPerSource = size_t{16} << 20;
constexpr int kSources = 4;

/// Fills a buffer with finite values of the type in [1, 2), so the kernel never sees subnormals, infinities or
/// NaNs (which would measure slow paths of the FPU rather than the kernel); every page gets touched.
std::vector<uint8_t> make_buffer(DataType dt, int seed) {
  const size_t size = genie::shim::reduce_element_size(dt);
  const size_t count = kBytesPerSource / size;
  std::vector<uint8_t> buf(kBytesPerSource);
  for (size_t i = 0; i < count; ++i) {
    const float v = 1.0f + static_cast<float>((i * 7 + static_cast<size_t>(seed)) % 128) / 128.0f;
    switch (dt) {
      case DataType::kFloat32:
        std::memcpy(&buf[i * size], &v, size);
        break;
      case DataType::kFloat16: {
        const uint16_t h = genie::shim::float_to_half(v);
        std::memcpy(&buf[i * size], &h, size);
        break;
      }
      case DataType::kBfloat16: {
        const uint16_t b = genie::shim::float_to_bfloat16(v);
        std::memcpy(&buf[i * size], &b, size);
        break;
      }
      default:
        buf[i * size] = static_cast<uint8_t>(i);
        break;
    }
  }
  return buf;
}

void reduce_sum(benchmark::State& state, DataType dt, bool in_place) {
  const size_t count = kBytesPerSource / genie::shim::reduce_element_size(dt);
  std::vector<std::vector<uint8_t>> src;
  for (int k = 0; k < kSources; ++k) src.push_back(make_buffer(dt, k));
  std::vector<uint8_t> dst(kBytesPerSource, 0);
  const void* srcs[kSources];
  for (int k = 0; k < kSources; ++k) srcs[k] = src[k].data();
  void* out = in_place ? src[0].data() : dst.data();
  for (auto _ : state) {
    // In place, each iteration reduces into srcs[0] again: values grow, but stay finite and normal (1 + 3 * 2
    // per iteration), and the memory traffic is the same.
    genie::shim::reduce_arrays(out, srcs, nullptr, kSources, count, dt, ReduceOp::kSum);
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
  const auto iters = static_cast<int64_t>(state.iterations());
  state.SetBytesProcessed(iters * static_cast<int64_t>((kSources + 1) * kBytesPerSource));
  state.counters["out_bytes_per_second"] = benchmark::Counter(static_cast<double>(iters) * kBytesPerSource,
                                                              benchmark::Counter::kIsRate, benchmark::Counter::kIs1024);
}

void memcpy_output(benchmark::State& state) {
  std::vector<uint8_t> src(kBytesPerSource, 1), dst(kBytesPerSource, 0);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), kBytesPerSource);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  const auto iters = static_cast<int64_t>(state.iterations());
  state.SetBytesProcessed(iters * static_cast<int64_t>(2 * kBytesPerSource));
  state.counters["out_bytes_per_second"] = benchmark::Counter(static_cast<double>(iters) * kBytesPerSource,
                                                              benchmark::Counter::kIsRate, benchmark::Counter::kIs1024);
}

BENCHMARK(memcpy_output)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(reduce_sum, float32, DataType::kFloat32, false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(reduce_sum, float32_in_place, DataType::kFloat32, true)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(reduce_sum, bfloat16, DataType::kBfloat16, false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(reduce_sum, float16, DataType::kFloat16, false)->Unit(benchmark::kMillisecond);

}  // namespace
