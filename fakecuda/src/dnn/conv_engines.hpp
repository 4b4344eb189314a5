// SPDX-License-Identifier: Apache-2.0
// The convolution engines of Genie's cuDNN: what a convolution is (ConvProblem, from the tensors of a graph or of the
// legacy API), which engines can run it, with what numerical notes and workspace, and as which timed kernels
// (docs/costmodel.md "Convolutions"). Shared by the backend (graph) API and the legacy v7 API.
#pragma once

#include <cudnn.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "genie/common/sim_time.hpp"
#include "genie/fakecuda/cost_model.hpp"

namespace genie::fakecuda::dnn {

/// A tensor as cuDNN describes it: data type, dimensions and strides in elements (dimension 1 is channels).
struct TensorInfo {
  int64_t uid = 0;
  int dtype = CUDNN_DATA_FLOAT;  ///< cudnnDataType_t
  std::vector<int64_t> dims, strides;
  bool is_virtual = false;
  /// Bytes from the first to one past the last element (0 for an unknown data type).
  int64_t extent_bytes() const;
  /// Channels-last (NHWC, NDHWC): the channel dimension is the innermost.
  bool channels_last() const;
};

/// Element size of a cudnnDataType_t; 0 for a type no engine takes.
int dtype_bytes(int dtype);

/// The convolution's parameters (cuDNN's convolution descriptor).
struct ConvParams {
  int spatial = 2;
  std::array<int64_t, 3> stride{1, 1, 1}, pre_pad{0, 0, 0}, post_pad{0, 0, 0}, dilation{1, 1, 1};
};

/// One convolution: x [N, C, in...], w [K, C/groups, filter...], y [N, K, out...] whichever are inputs
/// (forward: x and w; backward data: y (dy) and w; backward filter: x and y (dy)).
struct ConvProblem {
  ConvPass pass = ConvPass::kForward;
  int spatial = 2;
  int64_t n = 0, c = 0, k = 0, groups = 1;
  std::array<int64_t, 3> in{1, 1, 1}, filter{1, 1, 1}, out{1, 1, 1};
  ConvParams params;
  int dtype = CUDNN_DATA_FLOAT;
  uint8_t elem_bytes = 4;
  bool channels_last = false;  ///< of x and y
  double x_bytes = 0, w_bytes = 0, y_bytes = 0;
  double epilogue_bytes = 0;   ///< fused pointwise operands read (bias, residual)
};

/// Checks that x, w and y form a convolution with `params` (ranks, groups, output sizes) and fills *out; false with
/// the reason in *error (naming the tensor and dimension) and the status in *status otherwise.
bool make_conv_problem(ConvPass pass, const TensorInfo& x, const TensorInfo& w, const TensorInfo& y,
                       const ConvParams& params, ConvProblem* out, std::string* error, cudnnStatus_t* status);

/// One kernel an engine launches.
struct ConvKernel {
  const char* name = "";  ///< static storage (a kernel name for traces)
  SimTime duration;
};

/// An engine as it would run one problem.
struct ConvEngine {
  int index = 0;
  const char* name = "";
  bool supported = false;
  const char* why_not = "";  ///< when not supported
  std::vector<cudnnBackendNumericalNote_t> notes;
  int64_t workspace = 0;
  std::vector<ConvKernel> kernels;
  SimTime total;
};

/// Engines 0..kConvEngineCount-1: 0 implicit GEMM on CUDA cores (every problem: the fallback), 1 implicit GEMM on
/// tensor cores (NCHW tensors go through layout transforms), 2 non-fused Winograd F(2x2, 3x3) on CUDA cores.
inline constexpr int kConvEngineCount = 3;
ConvEngine conv_engine(const ConvProblem& p, int index, const CostModel& cost);
/// The supported engines, fastest modelled time first (ties by index): cuDNN's heuristics modes A, B and INSTANT.
std::vector<ConvEngine> ranked_conv_engines(const ConvProblem& p, const CostModel& cost);

}  // namespace genie::fakecuda::dnn
