// SPDX-License-Identifier: Apache-2.0
// FamilyCostModel: the runtime's cost model (DESIGN.md "Cost model"): a measured table, then family rules fitted
// per device (GEMM, attention, bandwidth-bound kernels by name and launch shape, copies), then a floor. Results
// are cached per thread by kernel and launch shape.
#pragma once

#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "genie/fakecuda/cost_model.hpp"
#include "genie/fakecuda/cost_params.hpp"
#include "genie/fakecuda/device_spec.hpp"

namespace genie::fakecuda {

/// How the model arrived at a kernel's duration (`genie cost kernel` prints it).
struct KernelEstimate {
  SimTime duration;
  std::string source;   ///< "table (exact shape)", "table (any shape)", "family", "floor"
  std::string family;   ///< kernel family name (cost::kernel_family_name)
  double bytes = 0;     ///< bandwidth-bound families: HBM bytes estimated from the launch shape or the operands
  bool from_operands = false;  ///< bytes are KernelShape::operand_bytes (CostModel::operand_rule)
  double flops = 0;     ///< attention: floating-point operations
};

class FamilyCostModel final : public CostModel {
 public:
  FamilyCostModel(const DeviceSpec& spec, KernelTable table, CostParams params);
  ~FamilyCostModel() override;

  SimTime kernel(std::string_view name, const KernelShape& shape) const override;
  RowArgument row_argument(std::string_view name) const override;
  OperandRule operand_rule(std::string_view name) const override;
  SimTime gemm(const GemmShape& shape) const override;
  SimTime attention(const AttentionShape& shape) const override;
  SimTime convolution(const ConvShape& shape) const override;
  SimTime streaming(double bytes, double flops, GemmMath math) const override;
  SimTime copy(CopyKind kind, size_t bytes, bool pinned) const override;
  SimTime memset(size_t bytes) const override;
  SimTime launch_overhead() const override { return spec_.launch_overhead; }

  /// kernel() with its reasoning; not cached.
  KernelEstimate explain_kernel(std::string_view name, const KernelShape& shape) const;
  const CostParams& params() const { return params_; }
  const DeviceSpec& spec() const { return spec_; }

 private:
  struct NameInfo;
  const NameInfo& info_for(std::string_view name) const;
  struct ArgumentUse {
    RowArgument row;
    OperandRule operands = OperandRule::kNone;
  };
  /// What the launch arguments of `name` are read for (row_argument, operand_rule); cached per thread and name.
  ArgumentUse argument_use(std::string_view name) const;
  SimTime uncached_kernel(std::string_view name, const KernelShape& shape) const;
  SimTime uncached_gemm(const GemmShape& shape) const;

  DeviceSpec spec_;
  KernelTable table_;
  CostParams params_;
  uint64_t id_;  ///< distinguishes this model in the per-thread caches (never reused)
  mutable std::shared_mutex names_mu_;
  mutable std::unordered_map<std::string, std::unique_ptr<NameInfo>> names_;
};

}  // namespace genie::fakecuda
