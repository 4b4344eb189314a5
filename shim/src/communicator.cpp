// SPDX-License-Identifier: Apache-2.0
// Communicator set-up and tear-down: bootstrap, control segment, placement, split and shrink.
#include "communicator.hpp"

#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include "genie/common/config.hpp"
#include "genie/common/log.hpp"
#include "genie/common/siphash.hpp"
#include "genie/fakecuda/runtime.hpp"
#include "nccl_debug.hpp"
#include "pidfd.hpp"
#include "shim_errors.hpp"
#include "transport/fabric_report.hpp"

namespace genie::shim {
namespace {

const config::Param<std::string> kNode{"node", "",
                                       "Emulated node of this process's ranks (default: the hostname). Ranks "
                                       "with the same node share its NVLink domain in the modelled cluster."};
const config::Param<std::string> kBootstrapAddr{"shim.bootstrap_addr", "127.0.0.1",
                                                "IPv4 address the bootstrap root of ncclGetUniqueId listens on."};
const config::Param<std::string> kFabricMode{
    "fabric", "sim",
    "Where NCCL data moves: sim (shared memory on one host, timed by netsim), real or real:PROVIDER (libfabric: "
    "tcp, shm, verbs, efa; timed by the wall clock, needs GENIE_CLOCK=realtime). Ranks on different hosts always "
    "use the real fabric."};
const config::Param<std::string> kFiProvider{"shim.fi_provider", "",
                                             "libfabric provider for the real fabric when GENIE_FABRIC names none "
                                             "(default: shm on one host, tcp across hosts).",
                                             {}, {}, {}, "FI_PROVIDER"};
const config::Param<std::string> kFabricAddr{"shim.fabric_addr", "",
                                             "Local IPv4 address the real fabric's IP providers bind to (default: "
                                             "GENIE_SHIM_BOOTSTRAP_ADDR)."};
const config::Param<bool> kShmDirect{
    "shim.fabric_shm_direct", true,
    "Real fabric, shm provider: peers on the host read a transfer's bytes where the sender has them (its device "
    "buffers and staging area, mapped once) and the message carries only where; off: the bytes travel in libfabric "
    "shm's messages (CMA or bounce buffers). Buffers not on a memfd always travel in messages."};
const config::Param<int64_t> kBootstrapTimeoutS{
    "shim.bootstrap_timeout_s", 300, "Seconds a communicator's ranks have to find each other.", {}, 1.0, 86400.0};

uint64_t random_u64() {
  uint64_t v = 0;
  while (getrandom(&v, sizeof(v), 0) != sizeof(v)) {
  }
  return v | 1;
}

std::string hostname() {
  char h[64] = {};
  gethostname(h, sizeof(h) - 1);
  return h;
}

struct FabricRequest {
  bool real = false;
  std::string provider;
};

Result<FabricRequest> fabric_request() {
  const std::string v = config::global().get(kFabricMode);
  FabricRequest r;
  r.provider = config::global().get(kFiProvider);
  if (v == "sim" || v.rfind("sim:", 0) == 0) return r;
  if (v == "real") {
    r.real = true;
    return r;
  }
  if (v.rfind("real:", 0) == 0 && v.size() > 5) {
    r.real = true;
    r.provider = v.substr(5);
    return r;
  }
  return invalid_argument("GENIE_FABRIC='" + v + "' is not one of sim, real, real:PROVIDER");
}

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

std::string fabric_addr() {
  std::string a = config::global().get(kFabricAddr);
  return a.empty() ? config::global().get(kBootstrapAddr) : a;
}

Result<std::unique_ptr<FabricComm>> Communicator::connect_fabric(int rank, const std::vector<RankInfo>& table,
                                                                 BootstrapSession& session) {
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
  std::vector<int> pidfds(table.size(), -1);
  for (size_t r = 0; r < table.size(); ++r)
    if (static_cast<int>(r) != rank && std::strncmp(table[r].host, table[static_cast<size_t>(rank)].host,
                                                    sizeof(table[r].host)) == 0)
      pidfds[r] = open_pidfd(table[r].pid);
  Status sealed = f->seal([&](int r) { return pidfd_exited(pidfds[static_cast<size_t>(r)]); }, bootstrap_timeout());
  for (int fd : pidfds)
    if (fd >= 0) ::close(fd);
  GENIE_TRY(sealed);
  return f;
}

std::chrono::milliseconds bootstrap_timeout() { return std::chrono::seconds(config::global().get(kBootstrapTimeoutS)); }
std::string bootstrap_addr() { return config::global().get(kBootstrapAddr); }

const char* collective_api_name(netsim::Collective c) noexcept {
  switch (c) {
    case netsim::Collective::kAllReduce:
      return "AllReduce";
    case netsim::Collective::kBroadcast:
      return "Broadcast";
    case netsim::Collective::kReduce:
      return "Reduce";
    case netsim::Collective::kAllGather:
      return "AllGather";
    case netsim::Collective::kReduceScatter:
      return "ReduceScatter";
    case netsim::Collective::kAllToAll:
      return "AlltoAll";
    case netsim::Collective::kGather:
      return "Gather";
    case netsim::Collective::kScatter:
      return "Scatter";
    case netsim::Collective::kSendRecv:
      return "SendRecv";
  }
  return "?";
}

const char* redop_api_name(ReduceOp op) noexcept {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kProd:
      return "prod";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kMin:
      return "min";
    case ReduceOp::kAvg:
      return "avg";
    case ReduceOp::kPreMulSum:
      return "premulsum";
  }
  return "?";
}

Result<std::shared_ptr<Communicator>> Communicator::init_rank(const UniqueId& id, int nranks, int rank, int cuda_dev,
                                                              const CommOptions& opts) {
  fakecuda::Runtime* rt = fakecuda::Runtime::instance();
  if (rt == nullptr)
    return Status(Errc::kSystem, "the CUDA runtime failed to start: " + fakecuda::Runtime::instance_status().message());
  if (cuda_dev < 0 || cuda_dev >= rt->device_count())
    return invalid_argument("current CUDA device " + std::to_string(cuda_dev) + " is not a valid device");
  RankInfo mine;
  mine.rank = rank;
  mine.cuda_dev = cuda_dev;
  mine.pid = static_cast<int32_t>(getpid());
  mine.process_rank = sched::process_rank_from_environment();
  std::snprintf(mine.host, sizeof(mine.host), "%s", hostname().c_str());
  std::string node = config::global().get(kNode);
  std::snprintf(mine.node, sizeof(mine.node), "%s", node.empty() ? mine.host : node.c_str());
  GENIE_ASSIGN_OR_RETURN(FabricRequest req, fabric_request());
  mine.fabric = req.real ? 1 : 0;
  std::snprintf(mine.provider, sizeof(mine.provider), "%s", req.provider.c_str());
  std::unique_ptr<SharedSegment> seg;
  if (rank == 0) {
    uint64_t sid = random_u64();
    mine.segment_id = sid;
    if (!req.real) {  // the shared-memory path's control segment
      GENIE_ASSIGN_OR_RETURN(SharedSegment * s, SharedSegment::create(nranks, sid));
      seg.reset(s);
      mine.segment_fd = s->fd();
    }
  }
  std::unique_ptr<BootstrapSession> session;
  GENIE_ASSIGN_OR_RETURN(std::vector<RankInfo> table, join(id, nranks, mine, bootstrap_timeout(), {}, &session));
  bool real = false;
  std::string other_host;
  for (const RankInfo& r : table) {
    real |= r.fabric != 0;
    if (std::strncmp(r.host, mine.host, sizeof(mine.host)) != 0) other_host = r.host;
  }
  const bool fabric = real || !other_host.empty();
  if (fabric && rt->clock().is_virtual())
    return invalid_usage(
        std::string("the real fabric (") +
        (real ? "GENIE_FABRIC=real" : "ranks on hosts " + std::string(mine.host) + " and " + other_host) +
        ") measures wall-clock time and needs GENIE_CLOCK=realtime (genie run --fabric real sets it)");
  // Placement and tuning before any rank's resources are opened: a topology or NCCL_ALGO / NCCL_PROTO that
  // cannot be used fails every rank alike.
  std::vector<RankPlace> places;
  for (const RankInfo& r : table) places.push_back({r.node, r.cuda_dev});
  GENIE_ASSIGN_OR_RETURN(auto timing, CommTiming::create(places, rt->options().spec.preset, opts.tuning));
  if (fabric) {
    GENIE_ASSIGN_OR_RETURN(auto fab, connect_fabric(rank, table, *session));
    session.reset();
    const uint64_t cid = table[0].segment_id;
    return assemble(rank, std::move(table), nullptr, std::move(timing), cuda_dev, opts, std::move(fab), cid);
  }
  Status attached = Status::ok();
  if (rank != 0) {
    auto s = SharedSegment::open(table[0].pid, table[0].segment_fd, table[0].segment_id, nranks);
    if (s.is_ok())
      seg.reset(s.value());
    else
      attached = s.status();
  }
  // Keep rank 0's fd valid until every rank has mapped the segment (the bootstrap's one round after the table):
  // rank 0 may destroy the communicator as soon as its init returns, and the fd number then names another file.
  GENIE_ASSIGN_OR_RETURN(auto all, session->allgather({static_cast<uint8_t>(attached.is_ok())}, {}));
  session.reset();
  GENIE_TRY(attached);
  for (size_t r = 0; r < all.size(); ++r)
    if (all[r].size() != 1 || all[r][0] != 1)
      return Status(Errc::kRemote, "rank " + std::to_string(r) + " could not map rank 0's control segment");
  return assemble(rank, std::move(table), seg.release(), std::move(timing), cuda_dev, opts);
}

namespace {
// Communicators made so far by this process, per (member list, rank in it): the occurrence number that
// tells apart communicators with the same members.
std::mutex g_key_mu;
std::map<std::pair<uint64_t, int>, uint64_t> g_key_count;

uint64_t comm_key(const std::vector<RankInfo>& table, int rank) {
  std::vector<int64_t> ids;
  for (const RankInfo& r : table) {
    // The job rank of the member's process when the launcher gave one (stable across runs), else its pid.
    ids.push_back(r.process_rank >= 0 ? r.process_rank : (int64_t{1} << 40) + r.pid);
    ids.push_back(r.cuda_dev);
  }
  static const std::array<uint8_t, 16> kKeyOfKeys = {'g', 'e', 'n', 'i', 'e', '-', 'c', 'o', 'm', 'm', '-', 'k', 'e', 'y', '-', '1'};
  const uint64_t members = siphash24(kKeyOfKeys, ids.data(), ids.size() * sizeof(int64_t));
  uint64_t n;
  {
    std::lock_guard lk(g_key_mu);
    n = g_key_count[{members, rank}]++;
  }
  const uint64_t in[2] = {members, n};
  return siphash24(kKeyOfKeys, in, sizeof(in)) | 1;  // never 0 (0 means "no parent")
}
}  // namespace

Status Communicator::join_coordinator(uint64_t parent_key) {
  // A process told to join a coordinator (genie run, GENIE_COORDINATOR) that could not must not run alone: its
  // peers would wait at the coordinator for calls that never come. The communicator fails to initialise instead,
  // with the reason (CoordClient::status(): refused, wrong secret, unreachable).
  sched::CoordClient* coord = sched::CoordClient::get(rt_->timeline());
  if (!coord) {
    const Status why = sched::CoordClient::status();
    if (why.is_ok()) return Status::ok();  // no coordinator configured
    const Errc code = why.code() == Errc::kInvalidArgument ? Errc::kInvalidUsage : why.code();
    return Status(code, "rank " + std::to_string(rank_) + ": cannot join the job's coordinator: " + why.message());
  }
  // Realtime: calls are timed by the wall clock and the fabric; the coordinator only gathers the records.
  if (!rt_->clock().is_virtual()) return Status::ok();
  coord_ = coord;
  rt_->timeline().register_injector();
  Status st = coord_->join_comm(sched::coord::CommJoin{key_, nranks_, rank_, cuda_dev_, parent_key});
  if (!st.is_ok()) {
    coord_ = nullptr;
    return Status(st.code(), "rank " + std::to_string(rank_) + ": cannot announce the communicator to the "
                             "coordinator: " + st.message());
  }
  return Status::ok();
}

Result<std::shared_ptr<Communicator>> Communicator::assemble(int rank, std::vector<RankInfo> table, SharedSegment* seg,
                                                             std::shared_ptr<CommTiming> timing, int cuda_dev,
                                                             const CommOptions& opts, std::unique_ptr<FabricComm> fab,
                                                             uint64_t fabric_id, uint64_t parent_key) {
  auto c = std::shared_ptr<Communicator>(new Communicator());
  c->rt_ = fakecuda::Runtime::instance();
  c->rank_ = rank;
  c->nranks_ = static_cast<int>(table.size());
  c->cuda_dev_ = cuda_dev;
  c->opts_ = opts;
  c->seg_.reset(seg);
  c->fab_ = std::move(fab);
  c->fabric_direct_ = c->fab_ && c->fab_->provider() == "shm" && config::global().get(kShmDirect);
  c->id_ = seg ? seg->header().id : fabric_id;
  c->timing_ = std::move(timing);
  c->key_ = comm_key(table, rank);
  c->peers_ = std::move(table);
  c->sent_.assign(static_cast<size_t>(c->nranks_), 0);
  c->received_.assign(static_cast<size_t>(c->nranks_), 0);
  const int me = static_cast<int>(getpid());
  c->pidfds_.assign(static_cast<size_t>(c->nranks_), -1);
  for (int r = 0; r < c->nranks_; ++r) {
    const RankInfo& p = c->peers_[static_cast<size_t>(r)];
    if (p.pid == me) continue;
    // A pid names a process only on its own host (the real fabric may span hosts).
    if (std::strncmp(p.host, c->peers_[static_cast<size_t>(rank)].host, sizeof(p.host)) != 0) continue;
    c->cross_process_ = c->fab_ == nullptr;  // the real fabric sends from local buffers: nothing to share
    c->pidfds_[static_cast<size_t>(r)] = open_pidfd(p.pid);
  }
  // One rank per process (the usual launch): log lines carry it.
  int here = 0;
  for (const RankInfo& p : c->peers_)
    here += p.pid == me && std::strncmp(p.host, c->peers_[static_cast<size_t>(rank)].host, sizeof(p.host)) == 0;
  static std::atomic<bool> rank_set{false};
  if (here == 1 && !rank_set.exchange(true)) {  // the first communicator's rank
    log::set_rank(rank);
    fabric_report_set_rank(rank);
  }
  GENIE_TRY(c->join_coordinator(parent_key));
  nccl_debug_init_line(*c);
  return c;
}

Communicator::~Communicator() {
  // A peer on this host killed by SIGKILL never removed its shm provider files: its survivors do.
  if (fab_) {
    std::vector<bool> dead(pidfds_.size(), false);
    for (size_t r = 0; r < pidfds_.size(); ++r) dead[r] = pidfd_exited(pidfds_[r]);
    fab_->remove_dead_peer_files(dead);
  }
  for (int fd : pidfds_)
    if (fd >= 0) ::close(fd);
}

void Communicator::set_async_error(const Status& why) {
  // The message goes first: a thread that sees the code in ncclCommGetAsyncError then finds it in
  // ncclGetLastError.
  std::lock_guard lk(async_error_mu_);
  if (async_error_.load(std::memory_order_acquire) != 0) return;
  set_last_error(fmt::format("comm {:#x} rank {}: {}", id_, rank_, why.message()));
  async_error_.store(static_cast<int>(why.code()), std::memory_order_release);
}

void Communicator::abort() {
  aborted_.store(true, std::memory_order_release);
  set_async_error(Status(Errc::kRemote, "the communicator was aborted (ncclCommAbort)"));
  if (seg_) seg_->ring();
  if (coord_) coord_->wake_waiters();  // a stream worker waiting for the coordinator looks at once
}

void Communicator::fail_all(const Status& why) {
  set_async_error(why);
  if (!seg_) return;
  int expected = 0;
  seg_->header().broken.compare_exchange_strong(expected, static_cast<int>(why.code()), std::memory_order_acq_rel);
  seg_->ring();
}

void Communicator::let_go(std::shared_ptr<Communicator> self) {
  {
    std::lock_guard lk(keep_mu_);
    keep_alive_ = std::move(self);
  }
  // No op is issued any more (the handle is going). If every issued op has finished, none will look at kLetGo: the
  // reference goes here; else the op whose finish makes the count complete sees kLetGo and drops it.
  const uint64_t before = finished_.fetch_or(kLetGo, std::memory_order_acq_rel);
  if ((before & ~kLetGo) < issued_.load(std::memory_order_acquire)) return;
  std::shared_ptr<Communicator> last;  // dropped after the lock: it may be the last reference to this communicator
  std::lock_guard lk(keep_mu_);
  last = std::move(keep_alive_);
}

void Communicator::op_finished() {
  const uint64_t before = finished_.fetch_add(1, std::memory_order_acq_rel);
  // Not let go yet: the handle still holds the communicator (and will see this op finished). Let go, and ops still
  // outstanding: the last of them drops it. Either way this op is done with the communicator.
  if (!(before & kLetGo) || (before & ~kLetGo) + 1 < issued_.load(std::memory_order_acquire)) return;
  std::shared_ptr<Communicator> last;
  std::lock_guard lk(keep_mu_);
  last = std::move(keep_alive_);
}

Status Communicator::drain() {
  while ((finished_.load(std::memory_order_acquire) & ~kLetGo) < issued_.load(std::memory_order_acquire)) {
    if (aborted()) return Status(Errc::kRemote, "communicator aborted");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return Status::ok();
}

Result<int> Communicator::create_redop(const RedOpSpec& spec) {
  std::lock_guard lk(redop_mu_);
  for (size_t i = 0; i < redops_.size(); ++i)
    if (!redops_[i].first) {
      redops_[i] = {true, spec};
      return static_cast<int>(i);
    }
  redops_.push_back({true, spec});
  return static_cast<int>(redops_.size() - 1);
}

Status Communicator::destroy_redop(int id) {
  std::lock_guard lk(redop_mu_);
  if (id < 0 || static_cast<size_t>(id) >= redops_.size() || !redops_[static_cast<size_t>(id)].first)
    return invalid_argument("op " + std::to_string(id + 5) + " was not created on this communicator");
  redops_[static_cast<size_t>(id)].first = false;
  return Status::ok();
}

Result<RedOpSpec> Communicator::redop(int id) const {
  std::lock_guard lk(redop_mu_);
  if (id < 0 || static_cast<size_t>(id) >= redops_.size() || !redops_[static_cast<size_t>(id)].first)
    return invalid_argument("op " + std::to_string(id + 5) +
                            " is neither a built-in operator nor one created on this communicator");
  return redops_[static_cast<size_t>(id)].second;
}

Result<std::vector<std::vector<uint8_t>>> Communicator::gather_small(const std::vector<int>& members, const void* mine,
                                                                     size_t len) {
  GENIE_ASSERT(len <= kGatherBytes, "gather payload too large");
  const uint64_t seq = ++gather_seq_;
  if (fab_) return fab_->gather(members, mine, len, seq, fabric_wait("communicator split/shrink"));
  RankSlot& my = seg_->slot(rank_);
  const WaitWhat what{nullptr, "communicator split/shrink", 0};
  // Everyone who took part in this rank's previous exchange must have read that payload before it is
  // overwritten; after a split that is every rank of the parent, not only this colour's members.
  const std::vector<int> prev = gather_prev_members_.empty() ? members : gather_prev_members_;
  GENIE_TRY(wait_all_reach(&RankSlot::gather_done, seq - 1, &prev, what));
  gather_prev_members_ = members;
  std::memcpy(my.gather, mine, len);
  my.gather_seq.store(seq, std::memory_order_release);
  seg_->ring();
  GENIE_TRY(wait_all_reach(&RankSlot::gather_seq, seq, &members, what));
  std::vector<std::vector<uint8_t>> out;
  for (int r : members) {
    const uint8_t* p = seg_->slot(r).gather;
    out.emplace_back(p, p + len);
  }
  my.gather_done.store(seq, std::memory_order_release);
  seg_->ring();
  return out;
}

namespace {
struct SplitEntry {
  int32_t color;
  int32_t key;
};
struct SegmentEntry {
  int32_t pid;
  int32_t fd;
  uint64_t id;
};
}  // namespace

Result<std::shared_ptr<Communicator>> Communicator::sub_communicator(const std::vector<int>& members, int my_index,
                                                                     const CommOptions& opts) {
  if (fab_) return sub_communicator_fabric(members, my_index, opts);
  // The new rank 0 creates the segment; the others learn its fd through the parent's segment.
  SegmentEntry mine{};
  std::unique_ptr<SharedSegment> seg;
  if (my_index == 0) {
    uint64_t sid = random_u64();
    GENIE_ASSIGN_OR_RETURN(SharedSegment * s, SharedSegment::create(static_cast<int>(members.size()), sid));
    seg.reset(s);
    mine = {static_cast<int32_t>(getpid()), s->fd(), sid};
  }
  GENIE_ASSIGN_OR_RETURN(auto all, gather_small(members, &mine, sizeof(mine)));
  if (my_index != 0) {
    SegmentEntry root{};
    std::memcpy(&root, all[0].data(), sizeof(root));
    GENIE_ASSIGN_OR_RETURN(SharedSegment * s,
                           SharedSegment::open(root.pid, root.fd, root.id, static_cast<int>(members.size())));
    seg.reset(s);
  }
  // Keep rank 0's fd valid until every member has mapped the segment.
  GENIE_TRY(gather_small(members, &mine, 1).status());
  std::vector<RankInfo> table;
  for (size_t i = 0; i < members.size(); ++i) {
    RankInfo ri = peers_[static_cast<size_t>(members[i])];
    ri.rank = static_cast<int32_t>(i);
    table.push_back(ri);
  }
  return assemble(my_index, std::move(table), seg.release(), timing_->subset(members, opts.tuning), cuda_dev_, opts,
                  nullptr, 0, key_);
}

Result<std::shared_ptr<Communicator>> Communicator::split(int color, int key, const CommOptions& opts) {
  std::vector<int> everyone(static_cast<size_t>(nranks_));
  for (int r = 0; r < nranks_; ++r) everyone[static_cast<size_t>(r)] = r;
  SplitEntry mine{color, key};
  GENIE_ASSIGN_OR_RETURN(auto all, gather_small(everyone, &mine, sizeof(mine)));
  std::vector<std::pair<std::pair<int, int>, int>> group;  // ((key, parent rank), parent rank)
  for (int r = 0; r < nranks_; ++r) {
    SplitEntry e{};
    std::memcpy(&e, all[static_cast<size_t>(r)].data(), sizeof(e));
    if (e.color == color && color >= 0) group.push_back({{e.key, r}, r});
  }
  // NCCL_SPLIT_NOCOLOR ranks take part in the exchange but get no communicator. Each colour's members
  // run their own sub-exchange next; the others do not wait for them.
  if (color < 0) {
    // Keep this rank's all-gather numbering in step with the members' two sub-exchanges.
    gather_seq_ += 2;
    if (seg_) {
      seg_->slot(rank_).gather_done.store(gather_seq_, std::memory_order_release);
      seg_->ring();
    }
    return std::shared_ptr<Communicator>();
  }
  std::sort(group.begin(), group.end());
  std::vector<int> members;
  int my_index = -1;
  for (const auto& g : group) {
    if (g.second == rank_) my_index = static_cast<int>(members.size());
    members.push_back(g.second);
  }
  return sub_communicator(members, my_index, opts);
}

Result<std::shared_ptr<Communicator>> Communicator::shrink(const std::vector<int>& exclude, const CommOptions& opts) {
  std::vector<int> members;
  int my_index = -1;
  for (int r = 0; r < nranks_; ++r) {
    if (std::find(exclude.begin(), exclude.end(), r) != exclude.end()) continue;
    if (r == rank_) my_index = static_cast<int>(members.size());
    members.push_back(r);
  }
  if (my_index < 0)
    return invalid_argument("this rank is in excludeRanksList; excluded ranks must not call ncclCommShrink");
  return sub_communicator(members, my_index, opts);
}

}  // namespace genie::shim
