// SPDX-License-Identifier: Apache-2.0
// Per-collective records of the real fabric (real time, and netsim's time for the same Schedule with
// --compare sim): one JSON line per collective per rank in $GENIE_REPORT_DIR/fabric-rank<R>.jsonl.
#pragma once

#include <cstdint>
#include <string>

namespace genie::shim {

/// One collective as run on the real fabric by one rank. Fields as written (docs/fabric.md).
struct FabricRecord {
  uint64_t comm = 0;
  uint64_t seq = 0;
  int rank = 0;
  int nranks = 0;
  std::string op;  ///< "all_reduce" (nccl-tests spelling)
  uint64_t count = 0;
  uint64_t bytes = 0;  ///< payload (what nccl-tests prints as size)
  std::string datatype, algorithm, protocol, provider;
  int channels = 0;
  double start_us = 0;  ///< when every rank had arrived (this rank's clock, dilated)
  double real_us = 0;   ///< measured on the fabric, divided by the dilation
  double sim_us = -1;   ///< netsim's time for the same Schedule (< 0: not simulated)
};

/// True with GENIE_COMPARE=sim: every collective's Schedule is also timed by netsim.
bool fabric_compare_sim();
/// True when records are written (GENIE_COMPARE=sim or GENIE_REPORT_DIR set).
bool fabric_records_enabled();
/// The process's rank for the file name (the first communicator's rank when one rank runs per process).
void fabric_report_set_rank(int rank);
/// Appends `r` as one line (a single write, so ranks sharing a file never interleave). Never throws; a
/// directory that cannot be written is logged once.
void fabric_record(const FabricRecord& r);

}  // namespace genie::shim
