// SPDX-License-Identifier: Apache-2.0
// ReportModel: what the report files and the exit summary show, computed once from the job's records.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "genie/sched/report.hpp"

namespace genie::sched::report {

/// A span of a rank's stream activity, in microseconds.
struct Span {
  double start_us, end_us;
};

/// One rank (a process's device) of the job.
struct RankSummary {
  int rank = 0;     ///< rank in the largest communicator it belongs to (the world), else its process rank
  int process = 0;  ///< coordinator process index
  int pid = 0;
  int device = 0;
  std::string node;
  double begin_us = 0, end_us = 0;  ///< first and last op on its streams
  double compute_us = 0;            ///< union of kernels and memsets
  double copy_us = 0;               ///< union of memory copies
  double communication_us = 0;      ///< union of collectives and point-to-point
  double exposed_us = 0;            ///< communication while no compute ran
  double idle_us = 0;               ///< span with neither compute, copies nor communication
  uint64_t kernels = 0, copies = 0, calls = 0;
  std::vector<Span> compute, communication;  ///< merged and thinned, for the timeline chart
};

/// One annotated range (NVTX push/pop or start/end) of a rank's host thread, with the breakdown of the rank's
/// stream activity inside it: the per-step view of a training loop that wraps each step in a range.
struct RangeSummary {
  int rank = 0;
  std::string name;
  int index = 0;                  ///< occurrence of this name on this rank, from 0
  uint32_t thread = 0;            ///< host thread number
  double start_us = 0, end_us = 0;
  double compute_us = 0, copy_us = 0, communication_us = 0, exposed_us = 0, idle_us = 0;
  uint64_t kernels = 0, calls = 0;  ///< ops that start inside the range
};

/// Sums over every occurrence of one range name on every rank.
struct RangeTotal {
  std::string name;
  /// A library's own range (is_library_range): the summaries fold these into one row after the program's.
  bool library = false;
  int ranks = 0;
  uint64_t count = 0;
  double time_us = 0, compute_us = 0, copy_us = 0, communication_us = 0, exposed_us = 0, idle_us = 0;
};

/// True for a range a library annotates for itself rather than the program: the NVTX domains of CUDA's libraries
/// (`CCCL: cub::DeviceRadixSort...`, NCCL, cuBLAS, cuDNN, CUTLASS, ...), named `<domain>: <message>` by Genie's
/// NVTX tool.
bool is_library_range(const std::string& name);

/// Totals of one collective type or communicator.
struct Total {
  std::string name;
  uint64_t calls = 0;
  uint64_t bytes = 0;
  double time_us = 0;      ///< sum of call durations
  double busbw_sum = 0;    ///< for the mean
  uint64_t failed = 0;
};

/// Per-link utilisation over the job's span, in bins.
struct LinkUse {
  std::string name;
  double peak = 0;
  std::vector<double> bins;  ///< fraction of the link's rate, 0..1
};

struct Model {
  std::vector<RankSummary> ranks;
  std::map<std::string, Total> per_op;
  std::map<std::string, Total> per_comm;
  std::map<uint64_t, std::string> comm_names;  ///< key -> "c0", "c1", ... in order of first call
  std::map<std::pair<int, int>, int> rank_of;  ///< (process, device) -> rank
  std::vector<LinkUse> links;
  std::vector<RangeSummary> ranges;  ///< by (rank, start)
  std::vector<RangeTotal> range_totals;  ///< by name
  double span_us = 0;  ///< virtual end of the last op or call
  double bin_us = 0;   ///< link bin width
};

/// nccl-tests' bus-bandwidth factor for a collective of n ranks.
double busbw_factor(netsim::Collective c, int n);

Model build_model(const ReportInput& in);

}  // namespace genie::sched::report
