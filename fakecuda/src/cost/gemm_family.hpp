// SPDX-License-Identifier: Apache-2.0
// The GEMM family: tile quantisation, waves over the SMs, split-K for small grids, a K-loop prologue and a
// memory roofline, per math type. Parameters are fitted (cost_params.hpp); the device's peaks come from the preset.
#pragma once

#include "genie/fakecuda/cost_params.hpp"
#include "genie/common/sim_time.hpp"
#include "genie/fakecuda/cost_model.hpp"
#include "genie/fakecuda/device_spec.hpp"

namespace genie::fakecuda::cost {

/// How the model would run a GEMM: the tile and split it picked and the resulting times.
struct GemmPlan {
  int tile_m = 0, tile_n = 0;
  int split_k = 1;
  double waves = 0;         ///< CTAs / SMs (fractional)
  double compute_ns = 0;    ///< tensor/CUDA-core time of the chosen plan
  double memory_ns = 0;     ///< compulsory HBM traffic time
  double total_ns = 0;      ///< max(compute, memory) + fixed cost
};

/// Predicts a GEMM's GPU time as cuBLAS's heuristic would run it: every candidate tile (and split-K factor
/// when the grid is smaller than the device) is timed and the fastest is kept.
///
/// Per candidate (tile tm x tn, split s):
///   ctas  = ceil(m/tm) * ceil(n/tn) * batch * s,   waves = ctas / SMs
///   waves_eff = q * ceil(waves) + (1 - q) * waves                 (q: wave quantisation, 1 = whole waves)
///   t_tile = 2 tm tn (ceil(k/s) + k0) / (peak / SMs * eff * f(tile))   (k0: prologue/epilogue in K units)
///   f(tile) = ai/(ai + a0) / (ai_max/(ai_max + a0)),  ai = tm tn / (tm + tn)   (operand reuse of the tile)
///   compute = waves_eff * t_tile;  split-K adds a pass over s fp32 partial tiles of D
///   memory  = bytes / (HBM bandwidth * mem_eff)
///   time    = max(compute, memory) + fixed
GemmPlan plan_gemm(const DeviceSpec& spec, const GemmParams& params, const GemmShape& shape);

/// plan_gemm(...).total_ns as a SimTime (0 for an empty GEMM: m, n or batch 0).
SimTime gemm_time(const DeviceSpec& spec, const GemmParams& params, const GemmShape& shape);

}  // namespace genie::fakecuda::cost
