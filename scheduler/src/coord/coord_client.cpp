// SPDX-License-Identifier: Apache-2.0
// CoordClient: connection, handshake, resolution delivery, promise reporting and record streaming.
#include "genie/sched/coord_client.hpp"

#include "genie/common/quiescence.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "genie/common/config.hpp"
#include "genie/common/log.hpp"
#include "genie/common/thread_util.hpp"
#include "genie/common/siphash.hpp"
#include "coord/coord_autohost.hpp"
#include "genie/sched/coordinator.hpp"

namespace genie::sched {
namespace {

const config::Param<std::string> kCoordinator{
    "coordinator", "",
    "host:port of the job's coordinator (genie run sets it; genie coordinator prints it), or auto[:HOST:PORT]: rank 0 "
    "hosts one for ranks started by another launcher. Empty: no coordinator; each communicator times its calls "
    "alone, without contention between communicators."};
const config::Param<std::string> kJobSecret{
    "job_secret", "", "32 hex digits proving membership of the job to the coordinator (genie run sets it)."};
const config::Param<double> kConnectTimeoutS{
    "coordinator_timeout", 60.0, "Seconds a rank keeps trying to reach the coordinator before it gives up.", {}, 0.1,
    3600.0};

constexpr int64_t kNoWant = INT64_MIN;
// Records are sent at least this often (and at exit), in frames of at most kRecordsPerFrame ops.
constexpr auto kRecordFlushInterval = std::chrono::milliseconds(100);
constexpr size_t kRecordsPerFrame = 8192;

struct Key {
  uint8_t p2p;
  uint64_t comm, seq;
  int32_t src, dst;
  bool operator<(const Key& o) const {
    return std::tie(p2p, comm, seq, src, dst) < std::tie(o.p2p, o.comm, o.seq, o.src, o.dst);
  }
};

Key key_of(const coord::Message& m) {
  if (auto* c = std::get_if<coord::Coll>(&m)) return {0, c->comm, c->seq, 0, 0};
  const auto& p = std::get<coord::P2p>(m);
  return {1, p.comm, p.index, p.src, p.dst};
}
// The call a coordinator message (Resolved, Bound) is about.
template <class M>
Key key_of(const M& r) {
  return r.is_p2p ? Key{1, r.comm, r.seq, r.src, r.dst} : Key{0, r.comm, r.seq, 0, 0};
}

std::string env_or(const config::Config::EnvMap& env, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    auto it = env.find(n);
    if (it != env.end() && !it->second.empty()) return it->second;
  }
  return {};
}

int to_int(const std::string& s, int fallback) {
  if (s.empty()) return fallback;
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  return end && *end == 0 ? static_cast<int>(v) : fallback;
}

Status send_all(int fd, const std::vector<uint8_t>& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t w = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return Status(Errc::kRemote, std::string("coordinator connection: ") + std::strerror(errno));
    done += static_cast<size_t>(w);
  }
  return Status::ok();
}

// Reads until one whole message is decoded or `deadline` passes (the handshake only).
Result<coord::Message> read_one(int fd, coord::FrameDecoder& dec, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    auto m = dec.next();
    if (!m.is_ok()) return m.status();
    if (m.value()) return std::move(*m.value());
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Status(Errc::kTimeout, "the coordinator did not answer the handshake");
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    uint8_t buf[4096];
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return Status(Errc::kRemote, "the coordinator closed the connection during the handshake");
    dec.feed(buf, static_cast<size_t>(n));
  }
}

}  // namespace

struct CoordClient::Batch::State {
  ExternalOp op;
  std::vector<coord::Resolved> results;
  size_t outstanding = 0;
  int64_t max_end = 0;
};

struct CoordClient::Impl {
  Timeline* timeline = nullptr;
  int fd = -1;
  int wake_fd = -1;
  std::mutex send_mu;
  uint64_t out_seq = 0;
  coord::FrameDecoder decoder;

  std::mutex mu;
  std::condition_variable cv;
  struct Waiter {
    std::shared_ptr<Batch::State> batch;
    size_t index;
  };
  std::map<Key, std::vector<Waiter>> waiters;
  bool lost = false;
  std::string lost_why;

  std::atomic<uint64_t> applied_epoch{0};
  QuiescenceProbe quiescence;  // the reporter thread's view of this process's other threads (Probe)
  std::atomic<int64_t> want{kNoWant};
  int64_t last_promise = INT64_MIN;
  uint64_t last_promise_epoch = 0;

  std::unordered_map<const char*, uint32_t> label_ids;
  std::vector<std::string> new_labels;
  uint32_t labels_sent = 0;

  std::thread reporter;
  std::atomic<bool> stop{false};
  bool said_bye = false;

  Status send(const coord::Message& m) {
    std::lock_guard lk(send_mu);
    if (fd < 0) return Status(Errc::kRemote, "no coordinator connection");
    return send_all(fd, coord::encode_frame(m, ++out_seq));
  }

  void mark_lost(const std::string& why) {
    {
      std::lock_guard lk(mu);
      if (lost) return;
      lost = true;
      lost_why = why;
    }
    cv.notify_all();
    GENIE_LOG_ERROR("sched", "coordinator connection lost ({}): collectives waiting for it fail with ncclRemoteError",
                    why);
  }

  void apply(const coord::Resolved& r) {
    {
      std::lock_guard lk(mu);
      auto it = waiters.find(key_of(r));
      if (it != waiters.end()) {
        for (auto& w : it->second) {
          Batch::State& b = *w.batch;
          b.results[w.index] = r;
          b.max_end = std::max(b.max_end, r.end_ns);
          // The op may inject again only once all of its calls are resolved: until then it stays gated.
          if (--b.outstanding == 0) b.op.resolve(SimTime::ns(b.max_end));
        }
        waiters.erase(it);
      }
    }
    cv.notify_all();
    applied_epoch.store(r.epoch, std::memory_order_release);
  }

  // The op waiting for the call ends no earlier than the bound (it ends with the last of its calls).
  void apply(const coord::Bound& bd) {
    std::lock_guard lk(mu);
    auto it = waiters.find(key_of(bd));
    if (it == waiters.end()) return;
    for (auto& w : it->second) w.batch->op.bound_end(SimTime::ns(bd.end_lb_ns));
  }

  void report_promise() {
    const int64_t w = want.load(std::memory_order_acquire);
    if (w == kNoWant) return;
    const uint64_t e = applied_epoch.load(std::memory_order_acquire);
    const int64_t p = timeline->injection_floor().count_ns();
    if (p != last_promise || e != last_promise_epoch) {
      if (!send(coord::Message{coord::Promise{p, e}}).is_ok()) return;
      last_promise = p;
      last_promise_epoch = e;
    }
    int64_t expected = w;
    if (p >= w) want.compare_exchange_strong(expected, kNoWant);
  }

  void flush_records() {
    coord::Records batch;
    auto send_batch = [&] {
      if (batch.ops.empty() && batch.labels.empty()) return;
      batch.label_base = labels_sent;
      if (send(coord::Message{batch}).is_ok()) labels_sent += static_cast<uint32_t>(batch.labels.size());
      batch = coord::Records{};
    };
    timeline->drain_records([&](int device, uint32_t stream, const OpRecord& r) {
      const char* label = r.label ? r.label : "op";
      auto [it, fresh] = label_ids.try_emplace(label, static_cast<uint32_t>(label_ids.size()));
      if (fresh) batch.labels.emplace_back(label);
      coord::OpRecord o;
      o.kind = static_cast<uint8_t>(r.kind);
      o.device = device;
      o.stream = stream;
      o.label = it->second;
      o.start_ns = r.start.count_ns();
      o.end_ns = r.end.count_ns();
      o.bytes = r.bytes;
      o.comm = r.comm;
      o.seq = r.seq;
      o.submit_ns = r.submit.count_ns();
      o.deps_end_ns = r.deps_end.count_ns();
      o.thread = r.thread;
      o.flags = r.flags;
      batch.ops.push_back(o);
      if (batch.ops.size() >= kRecordsPerFrame) send_batch();
    });
    send_batch();
  }

  void loop() {
    auto last_flush = std::chrono::steady_clock::now();
    while (!stop.load(std::memory_order_acquire)) {
      pollfd p[2] = {{fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
      // A thread's host time moves while it runs, which nothing signals: looked at every 5 ms while the clock waits for
      // this process. Waits, gated calls and resolutions are reported at once (the wait listener, apply()).
      const int timeout = want.load(std::memory_order_acquire) != kNoWant ? 5 : 50;
      int n = ::poll(p, 2, timeout);
      if (n < 0 && errno != EINTR) break;
      if (p[1].revents & POLLIN) {
        uint64_t v;
        (void)!::read(wake_fd, &v, sizeof(v));
      }
      if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
        uint8_t buf[1 << 16];
        ssize_t r = ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
          mark_lost(r == 0 ? "closed by the coordinator" : std::strerror(errno));
          return;
        }
        if (r > 0) decoder.feed(buf, static_cast<size_t>(r));
        for (;;) {
          auto m = decoder.next();
          if (!m.is_ok()) {
            GENIE_LOG_ERROR("sched", "coordinator sent a bad frame: {}", m.status().message());
            if (decoder.broken()) {
              mark_lost("protocol error");
              return;
            }
            continue;
          }
          if (!m.value()) break;
          if (auto* res = std::get_if<coord::Resolved>(&*m.value())) {
            apply(*res);
          } else if (auto* pr = std::get_if<coord::Probe>(&*m.value())) {
            // Answered on this thread, after every Resolved sent before the Probe has been applied (and has woken
            // whoever it wakes): a thread it woke is runnable, not asleep.
            const bool quiet = quiescence.all_asleep();
            if (!quiet) GENIE_LOG_DEBUG("sched", "probe round {}: awake: {}", pr->round, quiescence.awake());
            if (!send(coord::Message{coord::Quiet{pr->round, applied_epoch.load(std::memory_order_acquire),
                                                  static_cast<uint8_t>(quiet ? 1 : 0),
                                                  timeline->query_floor().count_ns()}}).is_ok())
              return;
          } else if (auto* bd = std::get_if<coord::Bound>(&*m.value())) {
            apply(*bd);
          } else if (auto* rs = std::get_if<coord::Resume>(&*m.value())) {
            timeline->clock().resume_no_earlier(SimTime::ns(rs->t_ns));
            applied_epoch.store(rs->epoch, std::memory_order_release);
          } else if (auto* w = std::get_if<coord::Want>(&*m.value())) {
            // After every Resolved sent before it has been applied (this thread, in order).
            timeline->note_resolved_before(SimTime::ns(w->safe_ns));
            int64_t cur = want.load(std::memory_order_relaxed);
            while ((cur == kNoWant || cur < w->t_ns) && !want.compare_exchange_weak(cur, w->t_ns)) {
            }
          }
        }
      }
      report_promise();
      const auto now = std::chrono::steady_clock::now();
      if (now - last_flush >= kRecordFlushInterval) {
        flush_records();
        last_flush = now;
      }
    }
  }
};

namespace {
std::mutex g_mu;
CoordClient* g_client = nullptr;
pid_t g_client_pid = 0;
Status g_status;
bool g_tried = false;

Result<int> connect_to(const std::string& addr, double timeout_s) {
  const auto colon = addr.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == addr.size())
    return invalid_argument("GENIE_COORDINATOR='" + addr + "' is not host:port");
  const std::string host = addr.substr(0, colon), port = addr.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int e = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res); e != 0 || !res)
    return invalid_argument("GENIE_COORDINATOR='" + addr + "': " + gai_strerror(e));
  sockaddr_in sa{};
  std::memcpy(&sa, res->ai_addr, sizeof(sa));
  ::freeaddrinfo(res);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return system_error(std::string("socket: ") + std::strerror(errno));
    if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0) {
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      return fd;
    }
    const int err = errno;
    ::close(fd);
    if (std::chrono::steady_clock::now() >= deadline)
      return Status(Errc::kRemote, "cannot reach the coordinator at " + addr + ": " + std::strerror(err));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}
}  // namespace

int32_t process_rank_from_environment() {
  static const int32_t r = [] {
    const auto env = config::process_environment();
    return to_int(env_or(env, {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}), -1);
  }();
  return r;
}

CoordClient::CoordClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

CoordClient::~CoordClient() {
  if (!impl_) return;
  impl_->stop.store(true, std::memory_order_release);
  uint64_t one = 1;
  if (impl_->wake_fd >= 0) (void)!::write(impl_->wake_fd, &one, sizeof(one));
  if (impl_->reporter.joinable()) impl_->reporter.join();
  if (impl_->fd >= 0) ::close(impl_->fd);
  if (impl_->wake_fd >= 0) ::close(impl_->wake_fd);
}

Status CoordClient::status() {
  std::lock_guard lk(g_mu);
  return g_status;
}

CoordClient* CoordClient::get(Timeline& timeline) {
  std::lock_guard lk(g_mu);
  const pid_t me = ::getpid();
  if (g_client && g_client_pid != me) {
    // fork(): the connection belongs to the parent. Drop our copy of its descriptor without a word on it.
    if (g_client->impl_->fd >= 0) ::close(g_client->impl_->fd);
    g_client->impl_->fd = -1;
    g_client = nullptr;  // leaked on purpose: its reporter thread did not survive the fork
    g_tried = false;
  }
  if (g_client || g_tried) return g_client;
  g_tried = true;
  const config::Config& cfg = config::global();
  const std::string addr = cfg.get(kCoordinator);
  if (addr.empty()) return nullptr;
  // Why this process is not in the job: kept for status(), whose callers (the shim's communicator set-up) fail.
  auto failed = [&addr](const Status& why) -> CoordClient* {
    g_status = Status(why.code(), "GENIE_COORDINATOR=" + addr + ": " + why.message());
    GENIE_LOG_ERROR("sched", "{}: this process is not part of the job (its NCCL communicators fail to initialise)",
                    g_status.message());
    return nullptr;
  };
  auto secret = secret_from_hex(cfg.get(kJobSecret));
  if (!secret.is_ok()) {
    return failed(invalid_argument("GENIE_JOB_SECRET: " + secret.status().message()));
  }
  std::string target = addr;
  if (addr == "auto" || addr.rfind("auto:", 0) == 0) {
    auto a = resolve_auto_coordinator(addr, process_rank_from_environment(), secret.value());
    if (!a.is_ok()) {
      return failed(a.status());
    }
    target = a.value();
  }
  auto fd = connect_to(target, cfg.get(kConnectTimeoutS));
  if (!fd.is_ok()) {
    return failed(fd.status());
  }
  auto impl = std::make_unique<Impl>();
  impl->fd = fd.value();
  impl->timeline = &timeline;
  // Handshake: Challenge -> Hello(MAC) -> Welcome.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto ch = read_one(impl->fd, impl->decoder, deadline);
  Status st = ch.status();
  if (st.is_ok() && !std::holds_alternative<coord::Challenge>(ch.value()))
    st = Status(Errc::kRemote, "the coordinator did not start with a challenge");
  if (st.is_ok()) {
    const auto env = config::process_environment();
    coord::Hello h;
    h.pid = static_cast<int32_t>(me);
    h.process_rank = process_rank_from_environment();
    h.world_size = to_int(env_or(env, {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}), 0);
    h.gpus = to_int(env_or(env, {"GENIE_GPUS"}), 8);
    char host[256] = {};
    ::gethostname(host, sizeof(host) - 1);
    h.host = host;
    h.realtime = timeline.clock().is_virtual() ? 0 : 1;
    h.epoch_mono_ns = timeline.clock().epoch_monotonic_ns();
    h.node = env_or(env, {"GENIE_NODE"});
    if (h.node.empty()) h.node = h.host;
    auto input = coord::hello_mac_input(std::get<coord::Challenge>(ch.value()).nonce, h.pid, h.process_rank);
    h.mac = siphash24(secret.value(), input.data(), input.size());
    st = send_all(impl->fd, coord::encode_frame(coord::Message{h}, ++impl->out_seq));
  }
  if (st.is_ok()) {
    auto w = read_one(impl->fd, impl->decoder, deadline);
    st = w.status();
    // The coordinator tells a stranger nothing: it closes the connection of a Hello whose MAC is wrong.
    if (!st.is_ok())
      st = Status(st.code(), st.message() + " after this process's Hello (is GENIE_JOB_SECRET the job's?)");
    if (st.is_ok() && !std::holds_alternative<coord::Welcome>(w.value()))
      st = Status(Errc::kRemote, "the coordinator refused this process (wrong GENIE_JOB_SECRET?)");
  }
  if (!st.is_ok()) {
    ::close(impl->fd);
    return failed(Status(st.code(), "handshake: " + st.message()));
  }
  impl->wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  Impl* raw = impl.get();
  timeline.set_wait_listener([raw] {
    if (raw->want.load(std::memory_order_acquire) == kNoWant) return;
    uint64_t one = 1;
    (void)!::write(raw->wake_fd, &one, sizeof(one));
  });
  raw->reporter = start_quiet_thread([raw] { raw->loop(); });
  g_client = new CoordClient(std::move(impl));
  g_client_pid = me;
  std::atexit([] {
    std::lock_guard lk(g_mu);
    if (g_client && g_client_pid == ::getpid()) g_client->bye(0);
  });
  GENIE_LOG_INFO("sched", "joined the coordinator at {}", addr);
  return g_client;
}

Status CoordClient::join_comm(const coord::CommJoin& j) { return impl_->send(coord::Message{j}); }

Result<CoordClient::Batch> CoordClient::submit(const std::vector<coord::Message>& calls, const ExternalOp& op) {
  Batch b;
  b.state_ = std::make_shared<Batch::State>();
  b.state_->op = op;
  b.state_->results.resize(calls.size());
  b.state_->outstanding = calls.size();
  {
    std::lock_guard lk(impl_->mu);
    if (impl_->lost) return Status(Errc::kRemote, "coordinator connection lost: " + impl_->lost_why);
    for (size_t i = 0; i < calls.size(); ++i) impl_->waiters[key_of(calls[i])].push_back({b.state_, i});
  }
  for (const auto& c : calls) GENIE_TRY(impl_->send(c));
  // Only now may the lane stop holding its floor at the ready time: the coordinator has the call, so a
  // promise computed from here on (sent after it on this connection) cannot let the clock pass it.
  if (!calls.empty()) op.gate();
  return b;
}

Result<std::vector<coord::Resolved>> CoordClient::wait(const Batch& b, const std::function<Status()>& should_stop) {
  GenieWait waiting;  // for the coordinator: asleep to a quiescence probe although it wakes every 50 ms
  std::unique_lock lk(impl_->mu);
  for (;;) {
    if (b.state_->outstanding == 0) return b.state_->results;
    if (impl_->lost) return Status(Errc::kRemote, "coordinator connection lost: " + impl_->lost_why);
    impl_->cv.wait_for(lk, std::chrono::milliseconds(50));
    if (b.state_->outstanding == 0) return b.state_->results;
    lk.unlock();
    Status s = should_stop ? should_stop() : Status::ok();
    lk.lock();
    if (!s.is_ok()) {
      // Give up: forget this batch's waits (the coordinator's answers are dropped when they come).
      for (auto it = impl_->waiters.begin(); it != impl_->waiters.end();) {
        auto& v = it->second;
        std::erase_if(v, [&](const Impl::Waiter& w) { return w.batch == b.state_; });
        it = v.empty() ? impl_->waiters.erase(it) : std::next(it);
      }
      return s;  // the lane stays gated until its worker moves on: this op injects nothing more
    }
  }
}

void CoordClient::wake_waiters() {
  { std::lock_guard lk(impl_->mu); }  // a waiter between its checks and its sleep holds the mutex: it sees the change
  impl_->cv.notify_all();
}

void CoordClient::bye(int exit_code) {
  if (impl_->said_bye) return;
  impl_->said_bye = true;
  impl_->stop.store(true, std::memory_order_release);
  uint64_t one = 1;
  if (impl_->wake_fd >= 0) (void)!::write(impl_->wake_fd, &one, sizeof(one));
  if (impl_->reporter.joinable()) impl_->reporter.join();
  impl_->flush_records();
  (void)impl_->send(coord::Message{coord::Bye{exit_code}});
}

}  // namespace genie::sched
