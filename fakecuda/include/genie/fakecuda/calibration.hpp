// SPDX-License-Identifier: Apache-2.0
// Calibration of the cost model: loading a measurement directory (tests/data/calibration/<device>/ layout),
// fitting the family parameters to it with part of the data held out, the per-family error report and the
// predicted-versus-measured plot. Used by `genie calibrate --fit` and by the accuracy tests.
#pragma once

#include <string>
#include <vector>

#include "genie/common/status.hpp"
#include "genie/fakecuda/cost_params.hpp"
#include "genie/fakecuda/device_spec.hpp"

namespace genie::fakecuda {

/// One measured GEMM (gemm.csv: torch.mm of row-major X[M,K] W[K,N], i.e. cuBLAS m = N, n = M column-major).
struct GemmMeasurement {
  std::string dtype;  ///< bf16, fp16, fp32, tf32
  std::string kind;   ///< fwd or square
  int64_t m = 0, n = 0, k = 0;
  double time_us = 0;
};

/// One measured bandwidth-bound op (membound.csv: torch copy_ or add on 1-D tensors).
struct MemboundMeasurement {
  std::string dtype;  ///< bf16, fp32
  std::string op;     ///< copy (a device-to-device cudaMemcpyAsync in PyTorch) or add (a vectorized kernel)
  int64_t elements = 0;
  double time_us = 0;
};

/// One measured host<->device or device-to-device copy (device.json measurements).
struct CopyMeasurement {
  std::string kind;  ///< h2d_pinned, d2h_pinned, h2d_pageable, d2d
  int64_t bytes = 0;
  double time_us = 0;
};

struct CalibrationData {
  std::string dir;
  std::vector<GemmMeasurement> gemm;
  std::vector<MemboundMeasurement> membound;
  std::vector<CopyMeasurement> copies;
  double tiny_kernel_launch_us = 0;  ///< host cost of a tiny PyTorch op launch (device.json)
};

/// Reads gemm.csv, membound.csv and device.json of `dir`. Errors name the file, and the line or JSON path.
Result<CalibrationData> load_calibration(const std::string& dir);
/// Same, from the three files' contents; `dir` names them in errors (dir/gemm.csv, ...).
Result<CalibrationData> parse_calibration(const std::string& gemm_csv, const std::string& membound_csv,
                                          const std::string& device_json, const std::string& dir);

/// Which terms of the GEMM model are fitted (the others are switched off): compared on held-out data to choose
/// the model form (docs/costmodel.md).
struct GemmModelForm {
  std::string name = "full";
  bool k_overhead = true;          ///< per-tile prologue/epilogue k0
  bool wave_quantization = true;   ///< partial waves cost more than their share
  bool tile_reuse = true;          ///< smaller tiles are less efficient
};

/// One point of the comparison.
struct FitPoint {
  std::string family;   ///< "gemm bf16", "add fp32", "copy d2d", "h2d pinned", ...
  std::string label;    ///< the shape or size
  double measured_us = 0;
  double predicted_us = 0;   ///< what the benchmark would measure: max(GPU time, host issue interval)
  double gpu_us = 0;         ///< the model's GPU time alone
  bool held_out = false;     ///< not used to fit (the validation split)
  bool launch_bound = false; ///< measured within 25% of the fitted host issue interval
  double rel_error() const { return (predicted_us - measured_us) / measured_us; }
};

/// Error statistics of one family over a set of points.
struct FamilyError {
  std::string family;
  int points = 0;
  double median_abs = 0, p90_abs = 0, max_abs = 0;  ///< |predicted - measured| / measured
};

struct FitResult {
  CostParams params;                     ///< fitted on all the data (what is shipped)
  double gemm_host_floor_us = 0;         ///< fitted torch.mm issue interval of the benchmark (launch-bound regime)
  double membound_host_floor_us = 0;     ///< fitted torch.add issue interval
  std::vector<FitPoint> points;          ///< every measurement with the shipped parameters' prediction
  std::vector<FamilyError> in_sample;    ///< per family, all points, shipped parameters
  std::vector<FamilyError> gpu_bound;    ///< per family, points that are not launch-bound
  std::vector<FamilyError> held_out;     ///< per family, held-out points, parameters fitted without them
  /// Held-out GEMM median error per model form (the comparison that chose the form).
  std::vector<std::pair<std::string, double>> form_comparison;
};

/// Fits `spec`'s parameters to `data`, starting from `start`. Held out for validation: the forward GEMMs with
/// M = 4096 tokens (a third of them: other shapes of the same layers) and the 2^27-element bandwidth points.
Result<FitResult> fit_cost_model(const CalibrationData& data, const DeviceSpec& spec, const CostParams& start);

/// Evaluates `params` on `data` (no fitting): the points and error tables of FitResult (held_out empty).
FitResult evaluate_cost_model(const CalibrationData& data, const DeviceSpec& spec, const CostParams& params,
                              double gemm_host_floor_us, double membound_host_floor_us);

/// Markdown: the per-family error tables and the model-form comparison.
std::string fit_report_markdown(const FitResult& r);
/// A self-contained SVG: predicted versus measured on log axes, per family, held-out points hollow.
std::string fit_plot_svg(const FitResult& r, const std::string& title);
/// The same plot as a PNG (no text: axes at powers of ten, y = x and +-10% lines, the SVG's colours), for viewers
/// without SVG support.
std::string fit_plot_png(const FitResult& r);

}  // namespace genie::fakecuda
