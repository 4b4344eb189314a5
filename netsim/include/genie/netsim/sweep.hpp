// SPDX-License-Identifier: Apache-2.0
// nccl-tests style sweeps on a simulated topology: the logic behind `genie sim`.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "genie/common/status.hpp"
#include "genie/netsim/schedule.hpp"
#include "genie/netsim/simulator.hpp"
#include "genie/netsim/topology.hpp"

namespace genie::netsim {

/// Parses a byte size with an optional K/M/G/T suffix (powers of 1024, as nccl-tests): "8G", "1K", "512".
/// Errors: InvalidArgument naming the text.
Result<uint64_t> parse_size(const std::string& text);

/// How far a sweep is: size `row` (0-based) of `rows`, and that size's simulation.
struct SweepProgress {
  size_t row = 0;
  size_t rows = 0;
  uint64_t size_bytes = 0;
  SimProgress sim;
};

/// One `genie sim` run.
struct SweepOptions {
  std::string topology = "hgx-h100";  ///< preset, shape or file (load_topology)
  TopologyOptions topology_options;
  Collective collective = Collective::kAllReduce;
  uint64_t min_bytes = 32 * 1024 * 1024;   ///< nccl-tests -b
  uint64_t max_bytes = 32 * 1024 * 1024;   ///< -e
  double step_factor = 2;                  ///< -f (used when > 1)
  uint64_t step_bytes = 0;                 ///< -i (used when step_factor <= 1)
  DataType datatype = DataType::kFloat32;  ///< -d
  RedOp redop = RedOp::kSum;               ///< -o
  int root = 0;                            ///< -r
  EngineKind engine = EngineKind::kFlow;
  NcclEnv env;
  /// GPUs one host thread launches per collective (nccl-tests -g); 0: all GPUs of a server. Sets the host
  /// launch floor of each iteration.
  int gpus_per_thread = 0;
  /// Memory the simulation of one size may use, in bytes (0: no limit): SimulatorOptions::max_memory_bytes and
  /// build_schedule's `max_bytes`. A size that does not fit stops the sweep with OutOfMemory and the reason.
  uint64_t max_memory_bytes = 0;
  /// Print NCCL's choice for every size (algorithm, protocol, channels, NCCL's own time estimate) as `#` lines
  /// after the table (`genie sim` sets it with NCCL_DEBUG=INFO).
  bool show_tuning = false;
  /// Called about every `progress_interval_s` of wall time while a size is simulated (SimulatorOptions::progress).
  std::function<void(const SweepProgress&)> progress;
  double progress_interval_s = 1.0;
};

/// The memory limit `genie sim` uses unless told otherwise: 90% of what the system has available now
/// (MemAvailable in /proc/meminfo), 0 (no limit) when that cannot be read.
uint64_t default_memory_limit();

/// One row of the table (out-of-place and in-place are simulated identically).
struct SweepRow {
  uint64_t size_bytes = 0;  ///< nccl-tests "size": max(send, recv) bytes
  uint64_t count = 0;       ///< count passed to NCCL
  Tuning tuning;
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
};

struct SweepResult {
  std::vector<SweepRow> rows;
  int nranks = 0;
  std::string topology_name;
};

/// Runs the sweep: sizes from min to max (x factor or + step), per-rank counts rounded as nccl-tests does,
/// each size planned with select_tuning(env) and timed by the engine; time = max(host launch floor,
/// simulated collective). Errors from loading the topology, planning or simulating are returned as is.
Result<SweepResult> run_sweep(const SweepOptions& opts);

/// nccl-tests busbw factor for a collective on n ranks (all_reduce 2(n-1)/n, all_gather (n-1)/n, ...).
double busbw_factor(Collective c, int n) noexcept;

/// nccl-tests' number formatting (getFloatStr): %.2f, else %.1f, %.0f or %.1e to fit `width`.
std::string nccl_tests_float(double value, int width);

/// The complete nccl-tests output (preamble, device lines, table header, rows, footer) for a sweep.
std::string format_nccl_tests(const SweepOptions& opts, const SweepResult& result);

}  // namespace genie::netsim
