// SPDX-License-Identifier: Apache-2.0
// Communicator set-up and tear-down: bootstrap, the choice of transport and timer, placement, split and shrink.
#include "communicator.hpp"
#include "one_sided.hpp"

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
#include "shim_errors.hpp"
#include "transport/fabric_report.hpp"
#include "transport/fabric_transport.hpp"
#include "transport/shm_transport.hpp"

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

}  // namespace

std::string fabric_addr() {
  std::string a = config::global().get(kFabricAddr);
  return a.empty() ? config::global().get(kBootstrapAddr) : a;
}

bool fabric_shm_direct() { return config::global().get(kShmDirect); }

std::chrono::milliseconds bootstrap_timeout() { return std::chrono::seconds(config::global().get(kBootstrapTimeoutS)); }
std::string bootstrap_addr() { return config::global().get(kBootstrapAddr); }

Result<std::shared_ptr<Communicator>> Communicator::init_rank(fakecuda::Runtime& rt, const UniqueId& id, int nranks,
                                                              int rank, int cuda_dev, const CommOptions& opts) {
  if (cuda_dev < 0 || cuda_dev >= rt.device_count())
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
  if (fabric && rt.clock().is_virtual())
    return invalid_usage(
        std::string("the real fabric (") +
        (real ? "GENIE_FABRIC=real" : "ranks on hosts " + std::string(mine.host) + " and " + other_host) +
        ") measures wall-clock time and needs GENIE_CLOCK=realtime (genie run --fabric real sets it)");
  // ncclSetEncryption: traffic between hosts would cross the real fabric and the bootstrap's sockets in the clear.
  if (!other_host.empty() && encryption_mode() != 0)
    return invalid_usage("ncclSetEncryption asked for encrypted sockets, but Genie's bootstrap and real-fabric "
                         "transport cannot encrypt traffic between hosts " + std::string(mine.host) + " and " +
                         other_host);
  // Placement and tuning before any rank's resources are opened: a topology or NCCL_ALGO / NCCL_PROTO that
  // cannot be used fails every rank alike.
  std::vector<RankPlace> places;
  for (const RankInfo& r : table) places.push_back({r.node, r.cuda_dev});
  GENIE_ASSIGN_OR_RETURN(auto timing, CommTiming::create(places, rt.options().spec.preset, opts.tuning));
  if (fabric) {
    const uint64_t cid = table[0].segment_id;
    GENIE_ASSIGN_OR_RETURN(auto fab, FabricTransport::connect(rank, std::move(table), cid, *session, rt.clock()));
    session.reset();
    return assemble(rt, rank, std::move(fab), std::move(timing), cuda_dev, opts, 0);
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
  return assemble(rt, rank, std::make_unique<ShmTransport>(std::move(seg), std::move(table), rank), std::move(timing),
                  cuda_dev, opts, 0);
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

namespace {
// The timer of a communicator (chosen once): the wall clock on the real fabric, the job's coordinator when there is
// one and the clock is virtual, else netsim in this process.
Result<std::unique_ptr<CallTimer>> choose_timer(fakecuda::Runtime& rt, bool real_fabric, int rank) {
  // A process told to join a coordinator (genie run, GENIE_COORDINATOR) that could not must not run alone: its
  // peers would wait at the coordinator for calls that never come. The communicator fails to initialise instead,
  // with the reason (CoordClient::status(): refused, wrong secret, unreachable).
  sched::CoordClient* coord = sched::CoordClient::get(rt.timeline());
  if (!coord) {
    const Status why = sched::CoordClient::status();
    if (!why.is_ok()) {
      const Errc code = why.code() == Errc::kInvalidArgument ? Errc::kInvalidUsage : why.code();
      return Status(code, "rank " + std::to_string(rank) + ": cannot join the job's coordinator: " + why.message());
    }
  }
  if (real_fabric) return std::unique_ptr<CallTimer>(std::make_unique<WallClockTimer>(rt.clock()));
  // Realtime: calls are timed by netsim and the wall clock; the coordinator only gathers the records.
  if (!coord || !rt.clock().is_virtual()) return std::unique_ptr<CallTimer>(std::make_unique<NetsimTimer>(rt.clock()));
  return std::unique_ptr<CallTimer>(std::make_unique<CoordinatorTimer>(*coord));
}
}  // namespace

std::shared_ptr<Communicator> Communicator::create(fakecuda::Runtime& rt, int rank, int cuda_dev,
                                                   std::unique_ptr<Transport> transport,
                                                   std::unique_ptr<CallTimer> timer,
                                                   std::shared_ptr<CommTiming> timing, const CommOptions& opts,
                                                   uint64_t key) {
  auto c = std::shared_ptr<Communicator>(new Communicator(rt));
  c->rank_ = rank;
  c->nranks_ = static_cast<int>(transport->peers().size());
  c->cuda_dev_ = cuda_dev;
  c->opts_ = opts;
  c->id_ = transport->id();
  c->key_ = key;
  c->transport_ = std::move(transport);
  c->timer_ = std::move(timer);
  c->timing_ = std::move(timing);
  c->transport_->attach(*c);
  c->timer_->attach(*c);
  c->sent_.assign(static_cast<size_t>(c->nranks_), 0);
  c->received_.assign(static_cast<size_t>(c->nranks_), 0);
  return c;
}

Result<std::shared_ptr<Communicator>> Communicator::assemble(fakecuda::Runtime& rt, int rank,
                                                             std::unique_ptr<Transport> transport,
                                                             std::shared_ptr<CommTiming> timing, int cuda_dev,
                                                             const CommOptions& opts, uint64_t parent_key) {
  const bool real_fabric = !transport->provider().empty();
  if (real_fabric && !rt.options().move_data) {
    // docs/fabric.md: the real fabric measures real traffic, so its CPU threads send, receive and reduce every byte
    // of the buffers whatever GENIE_DATA says (fakecuda's copies and memsets still move none).
    static std::once_flag said;
    std::call_once(said, [] {
      GENIE_LOG_WARN("shim",
                     "GENIE_DATA=none does not apply to the real fabric: its collectives and p2p move every "
                     "byte of their buffers (device memory they use is backed by host memory)");
    });
  }
  GENIE_ASSIGN_OR_RETURN(auto timer, choose_timer(rt, real_fabric, rank));
  const uint64_t key = comm_key(transport->peers(), rank);
  auto c = create(rt, rank, cuda_dev, std::move(transport), std::move(timer), std::move(timing), opts, key);
  // One rank per process (the usual launch): log lines carry it.
  const int me = static_cast<int>(getpid());
  const auto& peers = c->transport_->peers();
  int here = 0;
  for (const RankInfo& p : peers)
    here += p.pid == me && std::strncmp(p.host, peers[static_cast<size_t>(rank)].host, sizeof(p.host)) == 0;
  static std::atomic<bool> rank_set{false};
  if (here == 1 && !rank_set.exchange(true)) {  // the first communicator's rank
    log::set_rank(rank);
    fabric_report_set_rank(rank);
  }
  if (c->timer_->external()) {
    rt.timeline().register_injector();
    Status st = c->timer_->join(sched::coord::CommJoin{key, c->nranks_, rank, cuda_dev, parent_key});
    if (!st.is_ok())
      return Status(st.code(), "rank " + std::to_string(rank) + ": cannot announce the communicator to the "
                               "coordinator: " + st.message());
  }
  nccl_debug_init_line(*c);
  return c;
}

namespace {
std::atomic<int> g_encryption_mode{0};
}  // namespace

void set_encryption_mode(int mode) { g_encryption_mode.store(mode, std::memory_order_release); }
int encryption_mode() { return g_encryption_mode.load(std::memory_order_acquire); }

Communicator::Communicator(fakecuda::Runtime& rt) : rt_(rt) {}

bool Communicator::moves_bytes(uint64_t bytes) const { return rt_.moves_bytes(bytes); }

Communicator::~Communicator() {
  if (signals_ && signals_->alloc) (void)rt_.free_memory(signals_->alloc, false);
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
  transport_->wake();  // a stream worker waiting for its peers or the coordinator looks at once
  timer_->wake();
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
  return transport_->gather(members, mine, len);
}

namespace {
struct SplitEntry {
  int32_t color;
  int32_t key;
};
}  // namespace

Result<std::shared_ptr<Communicator>> Communicator::sub_communicator(const std::vector<int>& members, int my_index,
                                                                     const CommOptions& opts) {
  GENIE_ASSIGN_OR_RETURN(auto t, transport_->sub(members, my_index));
  return assemble(rt_, my_index, std::move(t), timing_->subset(members, opts.tuning), cuda_dev_, opts, key_);
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
    transport_->skip_sub_exchanges();
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
