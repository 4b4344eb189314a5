// SPDX-License-Identifier: Apache-2.0
// Cost model v1: kernel, copy and memset durations from a measured table, family defaults and a floor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "genie/common/sim_time.hpp"
#include "genie/common/status.hpp"
#include "genie/fakecuda/device_spec.hpp"

namespace genie::fakecuda {

enum class CopyKind { kHostToHost, kHostToDevice, kDeviceToHost, kDeviceToDevice, kPeer };
const char* copy_kind_name(CopyKind k);

/// A kernel launch configuration.
struct KernelShape {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  size_t shared_mem = 0;
  uint64_t threads() const {
    return uint64_t{grid[0]} * grid[1] * grid[2] * block[0] * block[1] * block[2];
  }
  bool operator==(const KernelShape& o) const {
    return std::tie(grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_mem) ==
           std::tie(o.grid[0], o.grid[1], o.grid[2], o.block[0], o.block[1], o.block[2], o.shared_mem);
  }
};

/// Turns GPU work into durations. Implementations are thread-safe.
class CostModel {
 public:
  virtual ~CostModel() = default;
  /// GPU duration of kernel `name` (mangled) launched with `shape`.
  virtual SimTime kernel(std::string_view name, const KernelShape& shape) const = 0;
  /// Duration of a copy of `bytes`; `pinned` says whether the host side is page-locked.
  virtual SimTime copy(CopyKind kind, size_t bytes, bool pinned) const = 0;
  virtual SimTime memset(size_t bytes) const = 0;
  /// Host CPU cost of launching one kernel (the API overhead of a launch).
  virtual SimTime launch_overhead() const = 0;
};

/// One measured entry of the kernel table.
struct KernelTableEntry {
  bool has_shape = false;  ///< false: applies to any launch shape of the kernel
  KernelShape shape;
  SimTime duration;
};

/// The v1 model (DESIGN.md "Cost model", layers 1 and 3 plus a default rule):
/// 1. the measured table, exact (name, shape) match first, then a name-only entry;
/// 2. the default for unknown kernels: every launched thread moves kDefaultBytesPerThread bytes of HBM
///    traffic at the preset's bandwidth;
/// 3. never below the preset's kernel floor.
class TableCostModel final : public CostModel {
 public:
  /// Bytes of HBM traffic assumed per launched thread of an unknown kernel: one 4-byte load and one
  /// 4-byte store per element with 2 elements per thread, the shape of PyTorch's vectorised
  /// elementwise kernels (aten/src/ATen/native/cuda/CUDALoops.cuh, thread_work_size 4 for 4-byte
  /// types would give 32; 16 is the midpoint we use until the cost-model issue (#6) fits families).
  static constexpr double kDefaultBytesPerThread = 16.0;

  TableCostModel(const DeviceSpec& spec, std::multimap<std::string, KernelTableEntry, std::less<>> table);
  /// Loads a table file: {"kernels": [{"name": "...", "grid": [x,y,z], "block": [x,y,z],
  /// "shared_mem": n, "duration_us": t}, ...]} ("grid"/"block"/"shared_mem" optional).
  static Result<std::multimap<std::string, KernelTableEntry, std::less<>>> load_table(const std::string& path);
  static Result<std::multimap<std::string, KernelTableEntry, std::less<>>> parse_table(const std::string& text,
                                                                                        const std::string& origin);

  SimTime kernel(std::string_view name, const KernelShape& shape) const override;
  SimTime copy(CopyKind kind, size_t bytes, bool pinned) const override;
  SimTime memset(size_t bytes) const override;
  SimTime launch_overhead() const override { return spec_.launch_overhead; }

 private:
  DeviceSpec spec_;
  std::multimap<std::string, KernelTableEntry, std::less<>> table_;
};

}  // namespace genie::fakecuda
