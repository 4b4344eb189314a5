// SPDX-License-Identifier: Apache-2.0
// ncclGroupStart/End: the calling thread's pending work (communicator inits, collectives, sends and
// receives), launched together when the outermost group ends.
#pragma once

#include <nccl.h>

#include <functional>
#include <memory>
#include <vector>

#include "comm_handle.hpp"
#include "communicator.hpp"

namespace genie::fakecuda {
class Stream;
}

namespace genie::shim {

/// Inside ncclGroupStart/End on this thread?
bool in_group();
Status group_start();
/// Ends one nesting level; at the outermost, runs pending inits, then enqueues collectives and p2p batches.
/// `sim_us`, when given, receives netsim's estimate instead of executing (ncclGroupSimulateEnd); it is left as
/// it was when the group holds no call of a communicator of two or more ranks.
/// `launch_overhead` is charged to the calling thread's host time before each launched op (virtual mode).
Status group_end(float* sim_us = nullptr, SimTime launch_overhead = SimTime::zero());

/// Inside a group, remembers the first failed call's error (not kNotReady): the outermost ncclGroupEnd then
/// returns it and launches none of the group's collectives and p2p, as NCCL does. Returns `st`.
Status note_call_error(Status st);

/// Defers a communicator init to the end of the group (its handle exists already).
void defer_init(ncclComm* handle, std::function<Result<std::shared_ptr<Communicator>>()> init);
/// Adds a collective or a p2p call; outside a group it is launched at once.
Status submit_collective(Communicator& comm, CollCall call, fakecuda::Stream& s);
Status submit_p2p(Communicator& comm, P2PCall call, fakecuda::Stream& s);

}  // namespace genie::shim
