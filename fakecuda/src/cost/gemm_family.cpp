// SPDX-License-Identifier: Apache-2.0
// GEMM family: candidate tiles and split-K factors timed with wave quantisation; the fastest is kept.
#include "cost/gemm_family.hpp"

#include <algorithm>
#include <cmath>

namespace genie::fakecuda::cost {
namespace {

struct Tile {
  int m, n;
};
// CTA tiles cuBLAS and CUTLASS use for tensor-core GEMMs on sm80/sm90 (CUTLASS's default sm90 TMA warp-specialised
// configurations are 128x128, 128x256 and 256x128 with 64-element K slices; cuBLAS's heuristics also pick 64-wide
// tiles for small problems: CUTLASS profiler kernel names, e.g. cutlass3x_sm90_tensorop_gemm_bf16_..._128x256x64).
constexpr Tile kTiles[] = {{256, 128}, {128, 256}, {128, 128}, {128, 64}, {64, 128}, {64, 64}};
// Split-K factors tried when the grid does not fill the device (cuBLAS splits K over CTAs and reduces the partials).
constexpr int kSplits[] = {1, 2, 3, 4, 6, 8, 12, 16};
// Split-K reduction: every split writes an fp32 partial of its D tile and the reduction reads them back.
constexpr double kPartialBytes = 4.0;

double reuse(const Tile& t) { return static_cast<double>(t.m) * t.n / (t.m + t.n); }

double peak_of(const DeviceSpec& spec, GemmMath math) {
  auto it = spec.peak_flops.find(gemm_math_name(math));
  if (it != spec.peak_flops.end() && it->second > 0) return it->second;
  // A part without this dtype's tensor cores (fp8 on A100) runs it at the next wider type's rate.
  if (math == GemmMath::kFp8) return peak_of(spec, GemmMath::kFp16);
  auto fp32 = spec.peak_flops.find("fp32");
  return fp32 != spec.peak_flops.end() ? fp32->second : 1e12;
}

}  // namespace

GemmPlan plan_gemm(const DeviceSpec& spec, const GemmParams& params, const GemmShape& shape) {
  GemmPlan best;
  if (shape.m <= 0 || shape.n <= 0 || shape.batch <= 0) return best;
  const GemmMathParams& mp = params.math[static_cast<int>(shape.math)];
  const double sms = std::max(1, spec.sm_count);
  const double peak_per_sm = peak_of(spec, shape.math) / sms * (shape.complex ? 0.25 : 1.0);
  const double bw = std::max(1.0, spec.hbm_bw_bytes_per_s * params.mem_efficiency);
  const double memory_ns = shape.bytes() / bw * 1e9;
  const double best_reuse = reuse(kTiles[0]) / (reuse(kTiles[0]) + params.tile_reuse_a0);
  const double k = static_cast<double>(std::max<int64_t>(shape.k, 0));
  best.total_ns = -1;
  for (const Tile& t : kTiles) {
    const double f = reuse(t) / (reuse(t) + params.tile_reuse_a0) / best_reuse;
    const double rate = peak_per_sm * mp.efficiency * f;  // FLOP/s of one SM on this tile
    const double base_ctas = std::ceil(shape.m / static_cast<double>(t.m)) *
                             std::ceil(shape.n / static_cast<double>(t.n)) * static_cast<double>(shape.batch);
    for (int s : kSplits) {
      if (s > 1 && (base_ctas * s > 2 * sms || k / s < 256)) break;  // split only to fill the device
      const double ctas = base_ctas * s;
      const double waves = ctas / sms;
      const double waves_eff = mp.wave_quantization * std::ceil(waves) + (1 - mp.wave_quantization) * waves;
      const double t_tile = 2.0 * t.m * t.n * (std::ceil(k / s) + mp.k_overhead) / rate * 1e9;
      double compute = std::max(1.0, waves_eff) * t_tile;
      double mem = memory_ns;
      if (s > 1) mem += 2.0 * s * static_cast<double>(shape.m) * shape.n * shape.batch * kPartialBytes / bw * 1e9;
      double total = std::max(compute, mem) + params.fixed_ns;
      if (best.total_ns < 0 || total < best.total_ns) {
        best = GemmPlan{t.m, t.n, s, waves, compute, mem, total};
      }
    }
  }
  return best;
}

SimTime gemm_time(const DeviceSpec& spec, const GemmParams& params, const GemmShape& shape) {
  GemmPlan p = plan_gemm(spec, params, shape);
  return SimTime::from_ns_double(p.total_ns);
}

}  // namespace genie::fakecuda::cost
