// SPDX-License-Identifier: Apache-2.0
// Chakra execution traces of a finished job: one file per rank, DIR/<prefix>.<rank>.et, built from the coordinator's
// records (stream ops, host waits and ranges, resolved collectives and messages, communicators). docs/chakra.md says
// what the nodes, attributes and dependencies are; `genie sim --workload DIR` replays them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "genie/common/status.hpp"
#include "genie/netsim/chakra_et.hpp"
#include "genie/netsim/schedule.hpp"
#include "genie/sched/coordinator.hpp"

namespace genie::sched {

/// How the job ran, for the traces' GlobalMetadata: what a replay needs to rebuild the same cluster and choices.
struct ChakraJob {
  std::string topology;  ///< what netsim::load_topology takes: preset, shape or file ("hgx-h200")
  int nodes = 1;         ///< servers of `topology` the job used
  std::string fabric = "rail";
  std::string device;  ///< device preset
  std::string engine = "flow";
  netsim::NcclEnv nccl_env;  ///< the job's NCCL_* choices
  std::vector<std::string> command;
};

/// What was written.
struct ChakraSummary {
  int ranks = 0;
  uint64_t nodes = 0;
  uint64_t collectives = 0, messages = 0;
  /// Communication ops whose resolved call was not found (beyond --report-max-calls, a failed call): kept as compute
  /// delays of their recorded duration.
  uint64_t unmatched = 0;
  /// Host waits whose awaited op was not found on the rank: kept as host time.
  uint64_t unmatched_waits = 0;
  uint64_t dropped_records = 0;  ///< op records the coordinator did not keep: the traces miss them
  std::vector<std::string> files;
};

/// The traces, in ET rank order (for tests and tools; write_chakra_traces writes them). The ET rank of a (process,
/// CUDA device) is its rank in the job's largest communicator when that covers every device that ran an op; else
/// devices are numbered by (process rank, device). InvalidArgument when the records hold no op at all.
Result<std::vector<netsim::chakra::Trace>> build_chakra_traces(const JobRecord& job, const ChakraJob& info,
                                                               ChakraSummary* summary);

/// Writes DIR/<prefix>.<rank>.et for every rank and DIR/<prefix>.comm_groups.json (ASTRA-sim's communicator-group
/// file: {"<pg_name>": [ranks], ...} for every group but the world's). Errors: kSystem naming the path.
Result<ChakraSummary> write_chakra_traces(const std::string& dir, const std::string& prefix, const JobRecord& job,
                                          const ChakraJob& info);

/// The `chakra_dir` parameter (GENIE_CHAKRA_DIR): where `genie run` writes the traces when --chakra is not given
/// ("" : nowhere).
std::string configured_chakra_dir();

/// Default file prefix: DIR/genie.<rank>.et.
inline constexpr const char* kChakraPrefix = "genie";

}  // namespace genie::sched
