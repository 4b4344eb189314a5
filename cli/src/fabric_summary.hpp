// SPDX-License-Identifier: Apache-2.0
// The real fabric's per-collective records (fabric-rank<R>.jsonl, written by the shim): clearing them before
// a job and summarising real against simulated time per collective type and size after it.
#pragma once

#include <string>

#include "genie/common/status.hpp"

namespace genie::cli {

/// Removes fabric-rank*.jsonl from `dir` (creating `dir` if needed).
Status clear_fabric_records(const std::string& dir);
/// Prints, per (collective, bytes): calls, mean real and simulated time (a call's time is the slowest
/// rank's) and their difference. Returns the number of collectives read; InvalidArgument names a bad line.
Result<int> print_fabric_summary(const std::string& dir);

}  // namespace genie::cli
