// SPDX-License-Identifier: Apache-2.0
// Memory budget and progress of long simulations (SimulatorOptions::max_memory_bytes, ::progress).
#pragma once

#include <cstdint>
#include <string>

#include "genie/netsim/schedule.hpp"

namespace genie::netsim {

/// Bytes of the simulator's state per unit (an op, or a symmetry class of a compact op) and per dependency: its
/// dependency count, CSR offset, state and timing, the model's entry while it runs and the route cache's share; the
/// dependents list. Measured on NVLSTree all-reduce (4.3 dependencies per op): 113 (analytical) to 120 (flow) bytes
/// per op. estimate_state_bytes and the explicit-DAG projection (DagBuilder) both use them.
inline constexpr uint64_t kStateBytesPerUnit = 64, kStateBytesPerDep = 12;

/// Resident set of this process in bytes (/proc/self/statm), 0 when it cannot be read.
uint64_t resident_bytes();

/// "1.5 GiB"-style rendering of a byte count.
std::string format_bytes(uint64_t bytes);

/// One line naming a collective as the user asked for it and as it is simulated: "NVLSTree/Simple all_reduce of
/// 1073741824 bytes on 4096 ranks, 16 channels, 25.1 M ops".
std::string describe_schedule(const Schedule& s);

/// What helps when a simulation of `s` does not fit: the switches that make it smaller ("smaller simulations:
/// --engine analytical ..."). An algorithm netsim times by symmetry is suggested only when `s` is not one already.
std::string too_big_help(const Schedule& s);

}  // namespace genie::netsim
