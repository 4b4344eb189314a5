// SPDX-License-Identifier: Apache-2.0
// Executing calls over the real fabric: the per-call header exchange (arrival and cross-rank checks), the
// Schedule run by the CPU executor, wall-clock completion and the per-collective records; point-to-point
// batches as tagged messages; split/shrink communicators with their own endpoints.
#include <sys/random.h>

#include <cstring>
#include <map>
#include <memory>

#include "communicator.hpp"
#include "genie/common/log.hpp"
#include "genie/fakecuda/runtime.hpp"
#include "nccl_debug.hpp"
#include "pidfd.hpp"
#include "transport/fabric_report.hpp"

namespace genie::shim {
namespace {

// What each rank tells the others when it reaches a collective.
struct FabricHeader {
  uint64_t seq = 0;
  CallDesc desc;
  int64_t ready_ns = 0;
  double scalar = 1.0;
  uint32_t direct = 0;  ///< 1: peers may read this rank's buffers in place (ExecCall::direct needs every rank's 1)
};

// Sub-communicator entry exchanged through the parent: the new communicator's id (from its rank 0) and the
// member's address blob (status byte first, as at init).
constexpr size_t kSubEntryBytes = 1024;

// How long a peer that exited may still deliver what it sent before it did.
constexpr auto kDeadPeerGrace = std::chrono::milliseconds(500);

}  // namespace

FabricWait Communicator::fabric_wait(std::string what) {
  FabricWait w;
  w.what = std::move(what);
  const double limit = hang_timeout_s();
  w.stall = std::chrono::milliseconds(limit > 0 ? static_cast<int64_t>(limit * 1000) : 0);
  // Only the peers this wait still needs: a peer that finished its part and exited does not matter. What a
  // peer sent just before it exited may still be in flight (a TBF queue holds up to 50 ms): its death fails
  // the wait only once it has been dead for kDeadPeerGrace with the wait still needing it.
  auto dead_since = std::make_shared<std::map<int, std::chrono::steady_clock::time_point>>();
  w.check = [this, what = w.what, dead_since](const std::vector<int>& waiting_for) -> Status {
    if (aborted()) return Status(Errc::kRemote, "communicator aborted");
    const auto now = std::chrono::steady_clock::now();
    for (int r : waiting_for) {
      if (r < 0 || r >= nranks_) continue;
      const int fd = pidfds_[static_cast<size_t>(r)];
      if (fd < 0) continue;
      if (pidfd_exited(fd)) {
        auto it = dead_since->emplace(r, now).first;
        if (now - it->second < kDeadPeerGrace) continue;
        std::string msg = "peer rank " + std::to_string(r) + " (pid " +
                          std::to_string(peers_[static_cast<size_t>(r)].pid) + ") exited during " + what;
        return Status(Errc::kRemote, msg);
      }
    }
    return Status::ok();
  };
  return w;
}

Result<std::shared_ptr<Communicator>> Communicator::sub_communicator_fabric(const std::vector<int>& members,
                                                                           int my_index, const CommOptions& opts) {
  uint64_t id = 0;
  if (my_index == 0)
    while (getrandom(&id, sizeof(id), 0) != sizeof(id)) {
    }
  auto fc = FabricComm::open(fab_->provider(), fabric_addr(), cuda_dev_);
  std::vector<uint8_t> entry(kSubEntryBytes, 0);
  std::memcpy(entry.data(), &id, sizeof(id));
  std::vector<uint8_t> blob;
  if (fc.is_ok()) {
    blob.push_back(0);
    auto a = fc.value()->local_blob();
    blob.insert(blob.end(), a.begin(), a.end());
  } else {
    blob.push_back(1);
    std::string m = fc.status().message().substr(0, kSubEntryBytes - 64);
    blob.insert(blob.end(), m.begin(), m.end());
  }
  if (blob.size() + 10 > kSubEntryBytes) return internal_error("fabric address too long");
  const auto len = static_cast<uint16_t>(blob.size());
  std::memcpy(entry.data() + 8, &len, sizeof(len));
  std::memcpy(entry.data() + 10, blob.data(), blob.size());
  const uint64_t seq = ++gather_seq_;
  GENIE_ASSIGN_OR_RETURN(auto all, fab_->gather(members, entry.data(), entry.size(), seq,
                                                fabric_wait("communicator split/shrink")));
  // The second exchange keeps this rank's numbering in step with ranks that split with NCCL_SPLIT_NOCOLOR.
  ++gather_seq_;
  if (!fc.is_ok()) return fc.status();
  std::vector<std::vector<uint8_t>> addrs;
  std::vector<std::string> hosts;
  std::memcpy(&id, all[0].data(), sizeof(id));
  for (size_t i = 0; i < members.size(); ++i) {
    uint16_t l = 0;
    std::memcpy(&l, all[i].data() + 8, sizeof(l));
    const uint8_t* b = all[i].data() + 10;
    if (l == 0 || b[0] != 0)
      return Status(Errc::kSystem, "rank " + std::to_string(members[i]) + " could not open the real fabric: " +
                                       std::string(reinterpret_cast<const char*>(b) + 1, l > 0 ? l - 1 : 0));
    addrs.emplace_back(b + 1, b + l);
    hosts.emplace_back(peers_[static_cast<size_t>(members[i])].host);
  }
  std::unique_ptr<FabricComm> f = std::move(fc).value();
  GENIE_TRY(f->connect(my_index, addrs, hosts));
  GENIE_TRY(f->seal(
      [&](int r) {
        const int fd = pidfds_[static_cast<size_t>(members[static_cast<size_t>(r)])];
        return pidfd_exited(fd);
      },
      bootstrap_timeout()));
  std::vector<RankInfo> table;
  for (size_t i = 0; i < members.size(); ++i) {
    RankInfo ri = peers_[static_cast<size_t>(members[i])];
    ri.rank = static_cast<int32_t>(i);
    table.push_back(ri);
  }
  return assemble(my_index, std::move(table), nullptr, timing_->subset(members, opts.tuning), cuda_dev_, opts,
                  std::move(f), id, key_);
}

Result<SimTime> Communicator::run_collective_fabric(const CollCall& c, uint64_t order, SimTime ready) {
  if (aborted() || async_error() != Errc::kOk)
    return hold_after_failure(*this, ready, Status(Errc::kRemote, "communicator failed"));
  std::unique_lock lk(exec_mu_);
  TurnGuard turn{*this, order};  // declared after lk: ends the turn with exec_mu_ held
  if (Status t = wait_turn(lk, order); !t.is_ok()) return hold_after_failure(*this, ready, t);
  const uint64_t seq = ++exec_seq_;
  const int n = nranks_;
  FabricHeader mine;
  mine.seq = seq;
  mine.desc = CallDesc{static_cast<uint32_t>(c.collective), static_cast<uint32_t>(c.datatype),
                       static_cast<uint32_t>(c.op.kind), c.root, c.count};
  mine.ready_ns = ready.count_ns();
  mine.scalar = c.op.device_scalar ? scalar_from_bytes(c.op.device_scalar, c.op.scalar_type) : c.op.host_scalar;
  mine.direct = fabric_direct() && c.shared ? 1 : 0;
  const std::string what = describe(mine.desc) + " #" + std::to_string(seq);
  const FabricWait w = fabric_wait(what);
  auto fail = [&](const Status& st) -> Result<SimTime> {
    GENIE_LOG_ERROR("shim", "comm {:#x} rank {}: {}; the communicator fails with {}", id_, rank_, st.message(),
                    st.code() == Errc::kInvalidUsage ? "ncclInvalidUsage" : "ncclRemoteError");
    set_async_error(Status(st.code() == Errc::kInvalidUsage ? Errc::kInvalidUsage : Errc::kRemote, st.message()));
    return hold_after_failure(*this, ready, st);
  };

  // Arrival: every rank sends its header to every other (the start barrier and the cross-rank check).
  std::vector<FabricHeader> hdr(static_cast<size_t>(n));
  hdr[static_cast<size_t>(rank_)] = mine;
  std::vector<FabricMsg> msgs;
  for (int r = 0; r < n; ++r) {
    if (r == rank_) continue;
    FabricMsg m;
    m.is_send = false;
    m.peer = r;
    m.buf = &hdr[static_cast<size_t>(r)];
    m.len = sizeof(FabricHeader);
    m.tag = make_tag(TagKind::kHeader, seq, static_cast<uint64_t>(r));
    msgs.push_back(m);
  }
  for (int r = 0; r < n; ++r) {
    if (r == rank_) continue;
    FabricMsg m;
    m.is_send = true;
    m.peer = r;
    m.buf = &hdr[static_cast<size_t>(rank_)];
    m.len = sizeof(FabricHeader);
    m.tag = make_tag(TagKind::kHeader, seq, static_cast<uint64_t>(rank_));
    msgs.push_back(m);
  }
  if (Status st = fab_->exchange(msgs, w); !st.is_ok()) return fail(st);
  sched::Clock& clock = rt_->clock();
  const SimTime start = clock.wall_now();
  for (int r = 1; r < n; ++r) {
    const CallDesc& d0 = hdr[0].desc;
    const CallDesc& dr = hdr[static_cast<size_t>(r)].desc;
    if (dr == d0 && hdr[static_cast<size_t>(r)].seq == hdr[0].seq) continue;
    return fail(Status(Errc::kInvalidUsage, "collective mismatch on comm " + fmt::format("{:#x}", id_) + " (call #" +
                                                std::to_string(seq) + "): rank 0 called " + describe(d0) +
                                                " but rank " + std::to_string(r) + " called " + describe(dr)));
  }

  auto plan = timing_->fabric_plan(c.collective, c.count, c.datatype, c.root, fabric_compare_sim());
  if (!plan.is_ok()) return fail(Status(Errc::kInternal, "cannot plan " + what + ": " + plan.status().message()));
  const netsim::Schedule& sched = plan.value()->schedule;
  ExecCall ec;
  ec.collective = c.collective;
  ec.count = c.count;
  ec.datatype = c.datatype;
  ec.root = c.root;
  ec.op = c.op.kind;
  ec.sendbuff = c.sendbuff;
  ec.recvbuff = c.recvbuff;
  ec.seq = seq;
  ec.direct = true;
  for (const auto& h : hdr) {
    ec.scalars.push_back(h.scalar);
    ec.direct = ec.direct && h.direct == 1;
  }
  ec.in_ref = c.send_ref;
  ec.out_ref = c.recv_ref;
  if (fabric_direct() && nccl_debug_level() >= NcclDebugLevel::kInfo && !direct_logged_[ec.direct ? 1 : 0]) {
    direct_logged_[ec.direct ? 1 : 0] = true;  // once per communicator and way
    nccl_debug(NcclDebugLevel::kInfo, cuda_dev_, "comm %p rank %d: shm transfers %s", static_cast<void*>(this), rank_,
               ec.direct ? "are read in place from the sender's buffers"
                         : "travel in messages (some rank's buffers are not device memory)");
  }
  if (Status st = executor_.run(*fab_, sched, ec, w); !st.is_ok()) return fail(st);
  const SimTime end = clock.wall_now();

  if (fabric_records_enabled()) {
    FabricRecord rec;
    rec.comm = key_;  // the same key as the coordinator and genie-report.json use
    rec.seq = seq;
    rec.rank = rank_;
    rec.nranks = n;
    rec.op = netsim::collective_name(c.collective);
    rec.count = c.count;
    rec.bytes = sched.payload_bytes();
    rec.datatype = netsim::datatype_name(c.datatype);
    rec.algorithm = netsim::algorithm_name(sched.tuning.algorithm);
    rec.protocol = netsim::protocol_name(sched.tuning.protocol);
    rec.provider = fab_->provider();
    rec.channels = sched.tuning.nchannels;
    rec.start_us = start.count_ns() / 1e3;
    rec.real_us = (end - start).count_ns() / 1e3;
    rec.sim_us = plan.value()->simulated ? plan.value()->sim_duration.count_ns() / 1e3 : -1.0;
    fabric_record(rec);
  }
  return max(end, ready);
}

Result<SimTime> Communicator::run_p2p_fabric(std::vector<P2PCall>& calls, uint64_t order, SimTime ready) {
  if (aborted() || async_error() != Errc::kOk)
    return hold_after_failure(*this, ready, Status(Errc::kRemote, "communicator failed"));
  std::unique_lock lk(exec_mu_);
  TurnGuard turn{*this, order};  // declared after lk: ends the turn with exec_mu_ held
  if (Status t = wait_turn(lk, order); !t.is_ok()) return hold_after_failure(*this, ready, t);
  // Message k of each ordered pair carries tag (source rank, k): per-pair order as in NCCL, and a group's
  // sends and receives are posted together, so no order within a group can deadlock.
  std::vector<FabricMsg> msgs;
  for (auto& c : calls) {
    FabricMsg m;
    m.is_send = c.is_send;
    m.peer = c.peer;
    m.buf = c.buf;
    m.len = c.bytes;
    const uint64_t k = c.is_send ? ++sent_[static_cast<size_t>(c.peer)] : ++received_[static_cast<size_t>(c.peer)];
    m.tag = make_tag(TagKind::kP2P, static_cast<uint64_t>(c.is_send ? rank_ : c.peer), k);
    msgs.push_back(m);
  }
  Status st = fab_->exchange(msgs, fabric_wait("point-to-point"));
  if (!st.is_ok()) {
    GENIE_LOG_ERROR("shim", "comm {:#x} rank {}: {}", id_, rank_, st.message());
    set_async_error(Status(st.code() == Errc::kInvalidUsage ? Errc::kInvalidUsage : Errc::kRemote, st.message()));
    return hold_after_failure(*this, ready, st);
  }
  return max(rt_->clock().wall_now(), ready);
}

}  // namespace genie::shim
