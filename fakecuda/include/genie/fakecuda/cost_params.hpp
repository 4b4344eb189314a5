// SPDX-License-Identifier: Apache-2.0
// Parameters of the cost-model families. The values per device preset live in fakecuda/cost/<preset>.json (the
// H200's written by `genie calibrate --fit`, the others derived from it and their datasheets), embedded into the
// library; docs/costmodel.md describes each parameter and where it comes from.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "genie/common/status.hpp"
#include "genie/fakecuda/cost_model.hpp"
#include "genie/fakecuda/device_spec.hpp"

namespace genie::fakecuda {

/// GEMM parameters of one math type (formula in fakecuda/src/cost/gemm_family.hpp).
struct GemmMathParams {
  double efficiency = 0.70;        ///< fraction of the dtype's dense peak the best tile's main loop sustains
  double k_overhead = 256;         ///< k0: per-tile prologue/epilogue, in units of K
  double wave_quantization = 0.5;  ///< q: 1 = a partial wave costs a whole wave, 0 = perfectly balanced
};

struct GemmParams {
  std::array<GemmMathParams, kGemmMathCount> math{};  ///< indexed by GemmMath
  double tile_reuse_a0 = 16;       ///< a0 of the tile-reuse factor f(tile)
  double mem_efficiency = 0.88;    ///< fraction of HBM bandwidth for the memory roofline
  double fixed_ns = 2000;          ///< GPU time of an empty GEMM kernel
};

/// Bandwidth-bound kernels: time = fixed + bytes / (HBM bandwidth * efficiency).
struct MemoryParams {
  double copy_efficiency = 0.88;         ///< copies and casts (one read and one write stream)
  double elementwise_efficiency = 0.90;  ///< elementwise and other bandwidth-bound kernels (several streams)
  double fixed_ns = 2300;                ///< per-kernel fixed GPU cost (launch, ramp-up, tail)
};

/// Attention kernels: time = fixed + max(flops / (peak * efficiency * f(head dim) * wave utilisation), bytes / bw).
struct AttentionParams {
  double forward_efficiency = 0.30;   ///< of the bf16/fp16 dense peak at head dim 128
  double backward_efficiency = 0.26;
  double head_dim_exponent = 0.25;    ///< f(d) = (d / 128)^exponent, clamped to [0.6, 1.05]
  double wave_quantization = 1.0;     ///< FlashAttention-2 grids are not persistent: whole waves
  double fixed_ns = 4000;
};

/// Copies: time = latency + bytes / (link bandwidth * efficiency); D2D counts read + write of every byte.
struct CopyParams {
  double pinned_efficiency = 0.86;     ///< of the preset's PCIe bandwidth, page-locked host memory
  double pinned_latency_ns = 4000;
  double pageable_efficiency = 0.30;   ///< staged through a pinned bounce buffer by the driver
  double pageable_latency_ns = 60000;
  double device_efficiency = 0.86;     ///< of HBM bandwidth, device-to-device (and memset, write only)
  double device_latency_ns = 2000;
  double nvlink_efficiency = 0.82;     ///< of the preset's NVLink bandwidth, peer copies
};

/// What the calibration harness itself contributed to its measurements (not used by the runtime): the host issue
/// interval of a PyTorch op in the back-to-back benchmark loops, below which the GPU time cannot be seen.
struct FitInfo {
  double gemm_host_floor_us = 0;      ///< torch.mm
  double membound_host_floor_us = 0;  ///< torch.add / copy_
};

/// Everything the families need beyond the device preset.
struct CostParams {
  std::string device;                                     ///< preset the parameters are for ("h200")
  std::string source = "built-in defaults (not fitted)";  ///< how the values were obtained
  GemmParams gemm;
  MemoryParams memory;
  AttentionParams attention;
  CopyParams copy;
  FitInfo fit;  ///< "fit" object of the file: the floors, plus informational error tables
};

/// Parses a parameter document (fakecuda/cost/*.json schema); `origin` names it in errors, which name the JSON
/// path. A document with "derived_from" starts from that preset's parameters and applies its own values.
Result<CostParams> parse_cost_params(const std::string& text, const std::string& origin);
/// Reads a parameter file (the output of `genie calibrate --fit`); errors name the file and JSON path.
Result<CostParams> load_cost_params(const std::string& path);
/// The document parse_cost_params reads back (pretty-printed JSON).
std::string cost_params_json(const CostParams& p);
/// The embedded parameters of preset `name` ("h200"), resolving "derived_from".
Result<CostParams> preset_cost_params(const std::string& name);
/// Parameters for a device: its preset's, or the H200 fit for a device file without its own (the fitted values
/// are fractions of the preset's peaks, so they carry over).
CostParams cost_params_for(const DeviceSpec& spec);
/// Names of the presets with embedded parameter files.
std::vector<std::string> cost_param_presets();

}  // namespace genie::fakecuda
