// SPDX-License-Identifier: Apache-2.0
// Rank 0 hosting the coordinator for ranks started by another launcher (GENIE_COORDINATOR=auto).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "genie/common/status.hpp"

namespace genie::sched {

/// GENIE_COORDINATOR=auto or auto:HOST:PORT: the address every rank connects to (default MASTER_ADDR and
/// MASTER_PORT + 1, as torchrun sets them, else 127.0.0.1:29499). Rank 0 also starts a coordinator there,
/// for WORLD_SIZE processes on the cluster of GENIE_TOPOLOGY/GENIE_DEVICE, that writes the report to
/// GENIE_REPORT_DIR (./genie-report) when rank 0 exits, after waiting for the others.
Result<std::string> resolve_auto_coordinator(const std::string& spec, int32_t process_rank,
                                             const std::array<uint8_t, 16>& secret);

}  // namespace genie::sched
