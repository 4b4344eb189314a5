// SPDX-License-Identifier: Apache-2.0
// The three CallTimers: netsim in this process, the job's coordinator, the wall clock of the real fabric.
#include "call_timer.hpp"

#include <algorithm>
#include <cstring>

#include "comm_timing.hpp"
#include "genie/common/log.hpp"
#include "nccl_debug.hpp"

namespace genie::shim {
namespace {

// What the coordinator times: a PreMulSum moves the bytes of a sum.
netsim::RedOp timing_redop(netsim::RedOp op) { return op == netsim::RedOp::kPreMulSum ? netsim::RedOp::kSum : op; }

}  // namespace

SimTime NetsimTimer::finish_time(SimTime start, SimTime duration) {
  if (clock_.is_virtual()) return start + duration;
  SimTime end = max(start, clock_.wall_now()) + duration;
  clock_.sleep_until(end);
  return max(end, clock_.wall_now());
}

Result<SimTime> NetsimTimer::end_collective(const CollCall& c, SimTime /*ready*/, SimTime start, const WaitWhat& what) {
  auto cost = owner_->timing().collective(c.collective, c.count, c.datatype, c.root, c.tuning);
  if (!cost.is_ok()) {
    GENIE_LOG_ERROR("shim", "netsim cannot time {}: {}", what_string(what), cost.status().message());
    return Status(Errc::kInternal, "netsim cannot time " + what_string(what) + ": " + cost.status().message());
  }
  return finish_time(start, cost->duration);
}

Result<SimTime> NetsimTimer::end_p2p(const std::vector<P2PMessage>& msgs, SimTime ready) {
  // Each message starts when both its sides were ready and takes netsim's time for its bytes on its path.
  const int me = owner_->rank();
  SimTime end = ready;
  for (const P2PMessage& m : msgs) {
    const int src = m.call.is_send ? me : m.call.peer;
    const int dst = m.call.is_send ? m.call.peer : me;
    GENIE_ASSIGN_OR_RETURN(SimTime d, owner_->timing().p2p(src, dst, m.moved));
    end = max(end, max(ready, m.peer_ready) + d);
  }
  return finish_time(end, SimTime::zero());
}

Status CoordinatorTimer::begin_collective(const CollCall& c, uint64_t seq, SimTime ready,
                                          const sched::ExternalOp& lane) {
  sched::coord::Coll m;
  m.comm = owner_->key();
  m.seq = seq;
  m.comm_rank = owner_->rank();
  m.ready_ns = ready.count_ns();
  m.collective = static_cast<uint8_t>(c.collective);
  m.datatype = static_cast<uint8_t>(c.datatype);
  m.redop = static_cast<uint8_t>(timing_redop(c.op.kind));
  m.root = c.root;
  m.count = c.count;
  m.min_ctas = c.tuning.min_ctas;
  m.max_ctas = c.tuning.max_ctas;
  std::memcpy(m.algo.data(), c.tuning.algo.data(), std::min(c.tuning.algo.size(), m.algo.size()));  // checked to fit
  GENIE_ASSIGN_OR_RETURN(batch_, coord_.submit({sched::coord::Message{m}}, lane));
  return Status::ok();
}

Status CoordinatorTimer::begin_p2p(const std::vector<P2PMessage>& msgs, SimTime ready, const sched::ExternalOp& lane) {
  std::vector<sched::coord::Message> out;
  out.reserve(msgs.size());
  const int me = owner_->rank();
  for (const P2PMessage& p : msgs) {
    const P2PCall& c = p.call;
    sched::coord::P2p m;
    m.comm = owner_->key();
    m.src = c.is_send ? me : c.peer;
    m.dst = c.is_send ? c.peer : me;
    m.index = p.index;
    m.bytes = c.bytes;
    m.count = c.count;
    m.datatype = static_cast<uint8_t>(c.datatype);
    m.ready_ns = ready.count_ns();
    m.is_send = c.is_send ? 1 : 0;
    m.comm_rank = me;
    out.emplace_back(m);
  }
  GENIE_ASSIGN_OR_RETURN(batch_, coord_.submit(out, lane));
  return Status::ok();
}

Result<SimTime> CoordinatorTimer::end_collective(const CollCall&, SimTime, SimTime, const WaitWhat& what) {
  return wait(what);
}

Result<SimTime> CoordinatorTimer::end_p2p(const std::vector<P2PMessage>&, SimTime ready) {
  GENIE_ASSIGN_OR_RETURN(SimTime end, wait(WaitWhat{nullptr, "point-to-point", 0}));
  return max(end, ready);
}

Result<SimTime> CoordinatorTimer::wait(const WaitWhat& what) {
  const auto since = std::chrono::steady_clock::now();
  auto res = coord_.wait(batch_, [&]() -> Status {
    if (owner_->aborted()) return Status(Errc::kRemote, "communicator aborted");
    const double limit = hang_timeout_s();
    if (limit > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count() >= limit)
      return Status(Errc::kRemote, what_string(what) + " has waited " + fmt::format("{:.1f}", limit) +
                                       " s (GENIE_HANG_TIMEOUT) for the coordinator to resolve it");
    return Status::ok();
  });
  if (!res.is_ok()) {
    GENIE_LOG_ERROR("shim", "comm {:#x} rank {}: {}", owner_->key(), owner_->rank(), res.status().message());
    return res.status();
  }
  int64_t end = 0;
  for (const auto& r : res.value()) {
    if (r.status != 0) {
      Status failed(Errc::kRemote, "the coordinator failed " + what_string(what) + ": " + r.error);
      GENIE_LOG_ERROR("shim", "comm {:#x} rank {}: {}", owner_->key(), owner_->rank(), failed.message());
      return failed;
    }
    end = std::max(end, r.end_ns);
  }
  if (!res->empty() && !res->front().is_p2p && nccl_debug_level() >= NcclDebugLevel::kInfo) {
    const auto& r = res->front();
    nccl_debug(
        NcclDebugLevel::kInfo, owner_->cuda_dev(), "%s -> %s/%s, %d channels, %.2f us (coordinator, global clock)",
        what_string(what).c_str(), netsim::algorithm_name(static_cast<netsim::Algorithm>(r.algorithm)),
        netsim::protocol_name(static_cast<netsim::Protocol>(r.protocol)), r.nchannels, (r.end_ns - r.start_ns) / 1e3);
  }
  return SimTime::ns(end);
}

}  // namespace genie::shim
