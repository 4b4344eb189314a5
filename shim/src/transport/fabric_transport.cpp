// SPDX-License-Identifier: Apache-2.0
// FabricTransport: the per-call header exchange (arrival and cross-rank checks), the Schedule run by the CPU
// executor and the per-collective records; point-to-point batches as tagged messages; split/shrink communicators
// with endpoints of their own.
#include "transport/fabric_transport.hpp"

#include <sys/random.h>

#include <cstring>
#include <map>

#include "comm_timing.hpp"
#include "genie/common/log.hpp"
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

// Real-fabric address blob as exchanged: status byte (0 ok, 1 failed) then the addresses or the error text.
std::vector<uint8_t> fabric_blob(const Result<std::unique_ptr<FabricComm>>& fc) {
  std::vector<uint8_t> b;
  if (fc.is_ok()) {
    b.push_back(0);
    auto a = fc.value()->local_blob();
    b.insert(b.end(), a.begin(), a.end());
  } else {
    b.push_back(1);
    std::string m = fc.status().message().substr(0, 1000);
    b.insert(b.end(), m.begin(), m.end());
  }
  return b;
}

Status check_fabric_blobs(const std::vector<std::vector<uint8_t>>& all, std::vector<std::vector<uint8_t>>* addrs) {
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].empty() || all[r][0] != 0) {
      std::string why = all[r].size() > 1 ? std::string(all[r].begin() + 1, all[r].end()) : "no address";
      return Status(Errc::kSystem, "rank " + std::to_string(r) + " could not open the real fabric: " + why);
    }
    addrs->emplace_back(all[r].begin() + 1, all[r].end());
  }
  return Status::ok();
}

}  // namespace

FabricTransport::FabricTransport(std::unique_ptr<FabricComm> fc, std::vector<RankInfo> peers, int rank, uint64_t id,
                                 sched::Clock& clock)
    : fab_(std::move(fc)), peers_(std::move(peers)), rank_(rank), id_(id), clock_(clock) {
  pidfds_ = open_peer_pidfds(peers_, rank_);
  direct_ = fab_->provider() == "shm" && fabric_shm_direct();
}

FabricTransport::~FabricTransport() {
  // A peer on this host killed by SIGKILL never removed its shm provider files: its survivors do.
  std::vector<bool> dead(pidfds_.size(), false);
  for (size_t r = 0; r < pidfds_.size(); ++r) dead[r] = pidfd_exited(pidfds_[r]);
  fab_->remove_dead_peer_files(dead);
  close_peer_pidfds(pidfds_);
}

Result<std::unique_ptr<FabricTransport>> FabricTransport::connect(int rank, std::vector<RankInfo> table, uint64_t id,
                                                                  BootstrapSession& session, sched::Clock& clock) {
  bool multi_host = false;
  std::string provider;
  std::vector<std::string> hosts;
  for (const RankInfo& r : table) {
    multi_host |= std::strncmp(r.host, table[0].host, sizeof(r.host)) != 0;
    if (provider.empty() && r.provider[0] != 0) provider.assign(r.provider, strnlen(r.provider, sizeof(r.provider)));
    hosts.emplace_back(r.host);
  }
  if (provider.empty()) provider = multi_host ? "tcp" : "shm";
  if (provider == "shm") {
    int here = 0;
    for (const RankInfo& r : table)
      here += std::strncmp(r.host, table[static_cast<size_t>(rank)].host, sizeof(r.host)) == 0;
    const std::string copy = FabricEndpoint::choose_shm_copy(here);
    GENIE_LOG_DEBUG("shim", "fabric: shm moves large messages by {} ({} ranks on this host)", copy, here);
  }
  auto fc = FabricComm::open(provider, fabric_addr(), table[static_cast<size_t>(rank)].cuda_dev);
  GENIE_ASSIGN_OR_RETURN(auto all, session.allgather(fabric_blob(fc), {}));
  if (!fc.is_ok()) return fc.status();
  std::vector<std::vector<uint8_t>> addrs;
  GENIE_TRY(check_fabric_blobs(all, &addrs));
  std::unique_ptr<FabricComm> f = std::move(fc).value();
  GENIE_TRY(f->connect(rank, addrs, hosts));
  // Same-host peers that exit while the others wait in seal() fail the wait at once.
  std::vector<int> pidfds = open_peer_pidfds(table, rank);
  Status sealed = f->seal([&](int r) { return pidfd_exited(pidfds[static_cast<size_t>(r)]); }, bootstrap_timeout());
  close_peer_pidfds(pidfds);
  GENIE_TRY(sealed);
  return std::make_unique<FabricTransport>(std::move(f), std::move(table), rank, id, clock);
}

FabricWait FabricTransport::fabric_wait(std::string what) {
  FabricWait w;
  w.what = std::move(what);
  const double limit = hang_timeout_s();
  w.stall = std::chrono::milliseconds(limit > 0 ? static_cast<int64_t>(limit * 1000) : 0);
  // Only the peers this wait still needs: a peer that finished its part and exited does not matter. What a
  // peer sent just before it exited may still be in flight (a TBF queue holds up to 50 ms): its death fails
  // the wait only once it has been dead for kDeadPeerGrace with the wait still needing it.
  auto dead_since = std::make_shared<std::map<int, std::chrono::steady_clock::time_point>>();
  const int n = static_cast<int>(peers_.size());
  w.check = [this, n, what = w.what, dead_since](const std::vector<int>& waiting_for) -> Status {
    if (owner_->aborted()) return Status(Errc::kRemote, "communicator aborted");
    const auto now = std::chrono::steady_clock::now();
    for (int r : waiting_for) {
      if (r < 0 || r >= n) continue;
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

std::pair<uint64_t, uint32_t> FabricTransport::next_exchange(const std::vector<int>& members) {
  // FNV-1a over the member list: tells concurrent exchanges of different lists apart in the 20 tag bits it gets.
  uint64_t h = 1469598103934665603ull;
  for (int r : members) {
    h ^= static_cast<uint32_t>(r);
    h *= 1099511628211ull;
  }
  // Sequence 0 is seal()'s; each list's exchanges count from 1.
  return {++exchange_seqs_[members], static_cast<uint32_t>(h ^ (h >> 20) ^ (h >> 40)) & 0xfffff};
}

Result<std::vector<std::vector<uint8_t>>> FabricTransport::gather(const std::vector<int>& members, const void* mine,
                                                                  size_t len) {
  GENIE_ASSERT(len <= kGatherBytes, "gather payload too large");
  auto [seq, set] = next_exchange(members);
  return fab_->gather(members, mine, len, seq, fabric_wait("communicator split/shrink"), set);
}

Result<std::unique_ptr<Transport>> FabricTransport::sub(const std::vector<int>& members, int my_index) {
  uint64_t id = 0;
  if (my_index == 0)
    while (getrandom(&id, sizeof(id), 0) != sizeof(id)) {
    }
  auto fc = FabricComm::open(fab_->provider(), fabric_addr(), owner_->cuda_dev());
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
  auto [seq, set] = next_exchange(members);
  GENIE_ASSIGN_OR_RETURN(auto all, fab_->gather(members, entry.data(), entry.size(), seq,
                                                fabric_wait("communicator split/shrink"), set));
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
  return std::unique_ptr<Transport>(
      std::make_unique<FabricTransport>(std::move(f), std::move(table), my_index, id, clock_));
}

Result<SimTime> FabricTransport::collective(const CollCall& c, uint64_t seq, SimTime ready) {
  const int n = static_cast<int>(peers_.size());
  FabricHeader mine;
  mine.seq = seq;
  mine.desc = c.desc();
  mine.ready_ns = ready.count_ns();
  mine.scalar = c.scalar();
  mine.direct = direct_ && c.shared ? 1 : 0;
  const std::string what = describe_call(mine.desc) + " #" + std::to_string(seq);
  const FabricWait w = fabric_wait(what);
  auto fail = [&](const Status& st) -> Status {
    GENIE_LOG_ERROR("shim", "comm {:#x} rank {}: {}; the communicator fails with {}", id_, rank_, st.message(),
                    st.code() == Errc::kInvalidUsage ? "ncclInvalidUsage" : "ncclRemoteError");
    owner_->set_async_error(
        Status(st.code() == Errc::kInvalidUsage ? Errc::kInvalidUsage : Errc::kRemote, st.message()));
    return st;
  };

  // Arrival: every rank sends its header to every other (the start barrier and the cross-rank check).
  std::vector<FabricHeader> hdr(static_cast<size_t>(n));
  hdr[static_cast<size_t>(rank_)] = mine;
  std::vector<FabricMsg> msgs;
  for (int r = 0; r < n; ++r) {
    if (r == rank_) continue;
    for (bool send : {false, true}) {  // r's header in, this rank's out
      FabricMsg m;
      m.is_send = send;
      m.peer = r;
      m.buf = &hdr[static_cast<size_t>(send ? rank_ : r)];
      m.len = sizeof(FabricHeader);
      m.tag = make_tag(TagKind::kHeader, seq, static_cast<uint64_t>(send ? rank_ : r));
      msgs.push_back(m);
    }
  }
  if (Status st = fab_->exchange(msgs, w); !st.is_ok()) return fail(st);
  const SimTime start = clock_.wall_now();
  SimTime all_ready = ready;
  for (int r = 0; r < n; ++r) {
    all_ready = max(all_ready, SimTime::ns(hdr[static_cast<size_t>(r)].ready_ns));
    if (r == 0) continue;
    const CallDesc& d0 = hdr[0].desc;
    const CallDesc& dr = hdr[static_cast<size_t>(r)].desc;
    if (dr == d0 && hdr[static_cast<size_t>(r)].seq == hdr[0].seq) continue;
    return fail(Status(Errc::kInvalidUsage, "collective mismatch on comm " + fmt::format("{:#x}", id_) + " (call #" +
                                                std::to_string(seq) + "): rank 0 called " + describe_call(d0) +
                                                " but rank " + std::to_string(r) + " called " + describe_call(dr)));
  }

  auto plan = owner_->timing().fabric_plan(c.collective, c.count, c.datatype, c.root, fabric_compare_sim());
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
  if (direct_ && nccl_debug_level() >= NcclDebugLevel::kInfo && !direct_logged_[ec.direct ? 1 : 0]) {
    direct_logged_[ec.direct ? 1 : 0] = true;  // once per communicator and way
    nccl_debug(NcclDebugLevel::kInfo, owner_->cuda_dev(), "comm %p rank %d: shm transfers %s",
               static_cast<void*>(owner_), rank_,
               ec.direct ? "are read in place from the sender's buffers"
                         : "travel in messages (some rank's buffers are not device memory)");
  }
  if (Status st = executor_.run(*fab_, sched, ec, w); !st.is_ok()) return fail(st);
  const SimTime end = clock_.wall_now();

  if (fabric_records_enabled()) {
    FabricRecord rec;
    rec.comm = owner_->key();  // the same key as the coordinator and genie-report.json use
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
  return all_ready;
}

Status FabricTransport::p2p(std::vector<P2PMessage>& msgs, SimTime /*ready*/) {
  // Message k of each ordered pair carries tag (source rank, k): per-pair order as in NCCL, and a group's
  // sends and receives are posted together, so no order within a group can deadlock.
  std::vector<FabricMsg> fm;
  fm.reserve(msgs.size());
  for (const P2PMessage& p : msgs) {
    FabricMsg m;
    m.is_send = p.call.is_send;
    m.peer = p.call.peer;
    m.buf = p.call.buf;
    m.len = p.call.bytes;
    m.tag = make_tag(TagKind::kP2P, static_cast<uint64_t>(p.call.is_send ? rank_ : p.call.peer), p.index);
    fm.push_back(m);
  }
  Status st = fab_->exchange(fm, fabric_wait("point-to-point"));
  if (!st.is_ok()) {
    GENIE_LOG_ERROR("shim", "comm {:#x} rank {}: {}", id_, rank_, st.message());
    owner_->set_async_error(
        Status(st.code() == Errc::kInvalidUsage ? Errc::kInvalidUsage : Errc::kRemote, st.message()));
    return st;
  }
  for (size_t i = 0; i < msgs.size(); ++i) msgs[i].moved = msgs[i].call.is_send ? msgs[i].call.bytes : fm[i].received;
  return Status::ok();
}

}  // namespace genie::shim
