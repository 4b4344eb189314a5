// SPDX-License-Identifier: Apache-2.0
// CoordinatorServer: the TCP front of the coordinator. One thread, one poll loop: accepts connections,
// challenges each one for the job secret's MAC before reading anything else, decodes frames, feeds the
// core and writes its replies without ever blocking on a slow peer.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>

#include "genie/common/log.hpp"
#include "genie/common/quiescence.hpp"
#include "genie/common/thread_util.hpp"
#include "genie/common/siphash.hpp"
#include "genie/sched/coordinator.hpp"

namespace genie::sched {
namespace {

using SteadyClock = std::chrono::steady_clock;

// A connection that has not proven the secret within this time is closed.
constexpr auto kHelloTimeout = std::chrono::seconds(10);
// A clock held this long while work waits is probed (CoordinatorCore::start_probe); a round not answered within
// kProbeRestart is replaced by a new one.
constexpr auto kProbeAfter = std::chrono::milliseconds(2);
constexpr auto kProbeRestart = std::chrono::milliseconds(100);
// The stall grace counts the CPU time the processes holding the clock spend outside Genie, not wall time: on a
// loaded machine a rank running Python between two calls takes longer in wall time, and waiting for it is right.
// Wall time still ends the wait after kStallWallFactor graces (a holder whose CPU time cannot be read, or that
// uses none and yet is never found asleep).
constexpr int kStallWallFactor = 15;

// CPU seconds (user + system, all threads) of local process `pid`, or a negative value when unreadable.
double process_cpu_seconds(int32_t pid) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
  std::FILE* f = std::fopen(path, "r");
  if (f == nullptr) return -1;
  char buf[1024];
  const size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* p = std::strrchr(buf, ')');  // the command name may hold spaces and parentheses
  unsigned long long utime = 0, stime = 0;
  // Fields after the name: state(3) ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime(14)
  // stime(15).
  if (p == nullptr ||
      std::sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
    return -1;
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}
// Unauthenticated connections at once; more are refused (a flood cannot exhaust descriptors).
constexpr size_t kMaxUnauthenticated = 64;
// Outgoing bytes buffered for one connection before it is considered stuck and closed.
constexpr size_t kMaxOutBuffer = 64u << 20;

struct Conn {
  int fd = -1;
  bool authenticated = false;
  std::array<uint8_t, 16> nonce{};
  coord::FrameDecoder decoder;
  std::vector<uint8_t> out;
  size_t out_pos = 0;
  uint64_t out_seq = 0;
  SteadyClock::time_point opened;
  std::string peer;
  bool closing = false;
};

std::string peer_name(const sockaddr_in& sa) {
  char ip[INET_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip));
  return std::string(ip) + ":" + std::to_string(ntohs(sa.sin_port));
}

}  // namespace

std::string secret_to_hex(const std::array<uint8_t, 16>& s) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (uint8_t b : s) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

Result<std::array<uint8_t, 16>> secret_from_hex(const std::string& hex) {
  if (hex.size() != 32) return invalid_argument("a job secret is 32 hex digits, got " + std::to_string(hex.size()));
  std::array<uint8_t, 16> s{};
  for (size_t i = 0; i < 32; ++i) {
    const char c = hex[i];
    int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (v < 0) return invalid_argument("a job secret is 32 hex digits; '" + std::string(1, c) + "' is not one");
    s[i / 2] = static_cast<uint8_t>(s[i / 2] | (i % 2 == 0 ? v << 4 : v));
  }
  return s;
}

Result<std::array<uint8_t, 16>> random_secret() {
  std::array<uint8_t, 16> s{};
  if (getrandom(s.data(), s.size(), 0) != static_cast<ssize_t>(s.size()))
    return system_error(std::string("getrandom: ") + std::strerror(errno));
  return s;
}

struct CoordinatorServer::Impl {
  Options opt;
  int listen_fd = -1;
  int wake_fd = -1;
  uint16_t port = 0;
  std::thread thread;
  std::atomic<bool> stop{false};
  std::atomic<bool> done{false};  // expected processes joined and all left
  std::map<int, Conn> conns;  // by connection id (= fd)
  std::unique_ptr<CoordinatorCore> core;
  JobRecord result;
  SimTime last_safe = SimTime::ns(-1);
  uint64_t last_asleep = 0;
  SteadyClock::time_point last_move = SteadyClock::now();
  std::map<int32_t, double> cpu_at_move;  // CPU seconds of the local holders when the clock last moved
  SteadyClock::time_point last_probe = SteadyClock::now();
  SteadyClock::time_point last_progress;
  bool progress_shown = false;

  /// Stall rule: whether the processes holding the clock have run outside Genie for the grace, in CPU time: one
  /// of them used `stall_grace` of CPU since the clock last moved (its first probe round after the move takes the
  /// holders' CPU times; a holder seen later counts from then), or one cannot be measured, or the wall-time cap
  /// passed.
  bool holders_used_grace(SteadyClock::time_point now) {
    if (now - last_move > opt.stall_grace * kStallWallFactor) return true;
    const std::vector<int32_t> pids = core->local_blocker_pids();
    if (pids.empty()) return true;
    double most = 0;
    for (int32_t pid : pids) {
      const double cpu = process_cpu_seconds(pid);
      auto [it, fresh] = cpu_at_move.emplace(pid, cpu);
      if (cpu < 0 || it->second < 0) return true;
      if (!fresh) most = std::max(most, cpu - it->second);
    }
    return most >= std::chrono::duration<double>(opt.stall_grace).count();
  }

  void queue(int id, const coord::Message& m) {
    auto it = conns.find(id);
    if (it == conns.end() || it->second.closing) return;
    Conn& c = it->second;
    auto frame = coord::encode_frame(m, ++c.out_seq);
    if (c.out.size() - c.out_pos + frame.size() > kMaxOutBuffer) {
      GENIE_LOG_ERROR("sched", "coordinator: {} does not read its messages ({} MiB queued): closing it", c.peer,
                      (c.out.size() - c.out_pos) >> 20);
      c.closing = true;
      return;
    }
    if (c.out_pos > 0 && c.out_pos == c.out.size()) {
      c.out.clear();
      c.out_pos = 0;
    }
    c.out.insert(c.out.end(), frame.begin(), frame.end());
    flush(c);
  }

  void flush(Conn& c) {
    while (c.out_pos < c.out.size()) {
      ssize_t w = ::send(c.fd, c.out.data() + c.out_pos, c.out.size() - c.out_pos, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (w > 0) {
        c.out_pos += static_cast<size_t>(w);
        continue;
      }
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      c.closing = true;  // peer gone
      return;
    }
  }

  void accept_all() {
    for (;;) {
      sockaddr_in sa{};
      socklen_t len = sizeof(sa);
      int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&sa), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;
      size_t unauth = 0;
      for (const auto& [id, c] : conns) unauth += c.authenticated ? 0 : 1;
      // The job's own processes all connect at start-up (256 ranks at once): the cap is on connections beyond them.
      const size_t limit = kMaxUnauthenticated + static_cast<size_t>(std::max(0, opt.core.expected_processes));
      if (unauth >= limit) {
        GENIE_LOG_WARN("sched", "coordinator: refused {}: too many unauthenticated connections", peer_name(sa));
        ::close(fd);
        continue;
      }
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      Conn c;
      c.fd = fd;
      c.opened = SteadyClock::now();
      c.peer = peer_name(sa);
      if (getrandom(c.nonce.data(), c.nonce.size(), 0) != static_cast<ssize_t>(c.nonce.size())) {
        ::close(fd);
        continue;
      }
      conns.emplace(fd, std::move(c));
      queue(fd, coord::Message{coord::Challenge{conns[fd].nonce}});
    }
  }

  void refuse(Conn& c, const std::string& why) {
    GENIE_LOG_WARN("sched", "coordinator: refused the connection from {}: {}", c.peer, why);
    core->note_protocol_error();
    c.closing = true;
  }

  void read_from(int id) {
    Conn& c = conns[id];
    uint8_t buf[1 << 16];
    for (;;) {
      ssize_t n = ::recv(c.fd, buf, sizeof(buf), MSG_DONTWAIT);
      if (n > 0) {
        c.decoder.feed(buf, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      c.closing = true;  // EOF or error
      break;
    }
    for (;;) {
      auto r = c.decoder.next();
      if (!r.is_ok()) {
        if (!c.authenticated) return refuse(c, r.status().message());
        GENIE_LOG_WARN("sched", "coordinator: {}: {}", c.peer, r.status().message());
        core->note_protocol_error();
        if (c.decoder.broken()) {
          c.closing = true;
          return;
        }
        continue;
      }
      if (!r.value()) break;
      coord::Message& m = *r.value();
      if (!c.authenticated) {
        auto* h = std::get_if<coord::Hello>(&m);
        if (!h) return refuse(c, std::string("first message is ") + coord::msg_type_name(coord::type_of(m)) +
                                     ", not Hello");
        auto input = coord::hello_mac_input(c.nonce, h->pid, h->process_rank);
        const uint64_t want = siphash24(opt.secret, input.data(), input.size());
        if (!equal_constant_time(&want, &h->mac, sizeof(want))) return refuse(c, "wrong job secret");
        c.authenticated = true;
        core->on_hello(id, *h);
        continue;
      }
      core->on_message(id, m);
    }
  }

  void close_conn(int id) {
    auto it = conns.find(id);
    if (it == conns.end()) return;
    const bool auth = it->second.authenticated;
    ::close(it->second.fd);
    conns.erase(it);
    if (auth) core->on_disconnect(id);
  }

  void show_progress(bool force) {
    if (!opt.show_progress) return;
    auto now = SteadyClock::now();
    if (!force && now - last_progress < std::chrono::seconds(1)) return;
    last_progress = now;
    // Not core->record(): that copies every link-usage sample, and this runs every second of a long job.
    std::fprintf(stderr, "\r[genie] %d/%d ranks joined, %zu calls resolved, virtual time %.3f ms   ",
                 core->registered_processes(), opt.core.expected_processes, static_cast<size_t>(core->resolved_calls()),
                 core->safe_time().to_ms());
    progress_shown = true;
  }

  void loop() {
    GenieService service;  // in rank 0's process (GENIE_COORDINATOR=auto): not a thread a quiescence probe waits for
    while (!stop.load(std::memory_order_acquire)) {
      std::vector<pollfd> pfds;
      std::vector<int> ids;
      pfds.push_back({listen_fd, POLLIN, 0});
      pfds.push_back({wake_fd, POLLIN, 0});
      for (auto& [id, c] : conns) {
        short ev = POLLIN;
        if (c.out_pos < c.out.size()) ev |= POLLOUT;
        pfds.push_back({c.fd, ev, 0});
        ids.push_back(id);
      }
      // While work waits, wake often enough to probe a stalled clock promptly (kProbeAfter).
      int timeout_ms = core->has_pending_work() ? static_cast<int>(kProbeAfter.count()) : 500;
      int n = ::poll(pfds.data(), pfds.size(), timeout_ms);
      if (n < 0 && errno != EINTR) {
        GENIE_LOG_ERROR("sched", "coordinator: poll: {}", std::strerror(errno));
        break;
      }
      if (pfds[1].revents & POLLIN) {
        uint64_t v;
        (void)!::read(wake_fd, &v, sizeof(v));
      }
      if (pfds[0].revents & POLLIN) accept_all();
      for (size_t i = 0; i < ids.size(); ++i) {
        const short re = pfds[i + 2].revents;
        auto it = conns.find(ids[i]);
        if (it == conns.end()) continue;
        if (re & POLLOUT) flush(it->second);
        if (re & (POLLIN | POLLHUP | POLLERR)) read_from(ids[i]);
      }
      // Hello deadline for unauthenticated connections.
      const auto now = SteadyClock::now();
      for (auto& [id, c] : conns)
        if (!c.authenticated && !c.closing && now - c.opened > kHelloTimeout) refuse(c, "no Hello within 10 s");
      core->pump();
      for (auto& [id, c] : conns) flush(c);
      std::vector<int> dead;
      for (auto& [id, c] : conns)
        if (c.closing) dead.push_back(id);
      for (int id : dead) close_conn(id);
      if (!dead.empty()) core->pump();
      // Stall rule: the clock has not moved for the grace period although work waits. An asleep step moves it (exactly,
      // though perhaps only up to a waiting query and past no event).
      SimTime safe = core->safe_time();
      const uint64_t asleep = core->asleep_steps();  // not record(): it copies every link-usage sample
      if (safe != last_safe || asleep != last_asleep || !core->has_pending_work()) {
        last_safe = safe;
        last_asleep = asleep;
        last_move = now;
        cpu_at_move.clear();
      } else if (now - last_move > kProbeAfter && now - last_probe > kProbeAfter &&
                 core->start_probe(/*restart=*/now - last_probe > kProbeRestart)) {
        last_probe = now;  // the answers come back through read_from; a round that finds everyone asleep moves it
        if (cpu_at_move.empty()) {
          for (int32_t pid : core->local_blocker_pids()) cpu_at_move.emplace(pid, process_cpu_seconds(pid));
        }
      } else if (now - last_move > opt.stall_grace && holders_used_grace(now)) {
        const std::string who = core->blockers();
        if (core->relax_stall())
          GENIE_LOG_WARN("sched", "coordinator: the clock was stalled at {:.3f} us by {}", safe.to_us(), who);
        last_move = now;
        cpu_at_move.clear();
      }
      show_progress(false);
      const int expected = std::max(1, opt.core.expected_processes);
      done.store(core->registered_processes() >= expected && core->live_processes() == 0, std::memory_order_release);
    }
  }
};

Result<std::unique_ptr<CoordinatorServer>> CoordinatorServer::start(Options options) {
  if (!options.core.topology) return invalid_argument("coordinator: no topology");
  auto s = std::unique_ptr<CoordinatorServer>(new CoordinatorServer());
  s->impl_ = std::make_unique<Impl>();
  Impl& im = *s->impl_;
  im.opt = std::move(options);
  im.listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (im.listen_fd < 0) return system_error(std::string("coordinator: socket: ") + std::strerror(errno));
  int one = 1;
  ::setsockopt(im.listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(im.opt.port);
  if (inet_pton(AF_INET, im.opt.bind_addr.c_str(), &sa.sin_addr) != 1)
    return invalid_argument("coordinator: bind address '" + im.opt.bind_addr + "' is not an IPv4 address");
  if (::bind(im.listen_fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0 || ::listen(im.listen_fd, 512) != 0)
    return system_error("coordinator: cannot listen on " + im.opt.bind_addr + ":" + std::to_string(im.opt.port) +
                        ": " + std::strerror(errno));
  socklen_t len = sizeof(sa);
  ::getsockname(im.listen_fd, reinterpret_cast<sockaddr*>(&sa), &len);
  im.port = ntohs(sa.sin_port);
  im.wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  Impl* raw = &im;
  im.core = std::make_unique<CoordinatorCore>(im.opt.core,
                                              [raw](int conn, const coord::Message& m) { raw->queue(conn, m); });
  im.thread = start_quiet_thread([raw] { raw->loop(); });
  return s;
}

CoordinatorServer::~CoordinatorServer() {
  if (!impl_) return;
  impl_->stop.store(true, std::memory_order_release);
  if (impl_->wake_fd >= 0) {
    uint64_t one = 1;
    (void)!::write(impl_->wake_fd, &one, sizeof(one));
  }
  if (impl_->thread.joinable()) impl_->thread.join();
  for (auto& [id, c] : impl_->conns) ::close(c.fd);
  if (impl_->listen_fd >= 0) ::close(impl_->listen_fd);
  if (impl_->wake_fd >= 0) ::close(impl_->wake_fd);
}

std::string CoordinatorServer::address() const { return impl_->opt.bind_addr + ":" + std::to_string(impl_->port); }
uint16_t CoordinatorServer::port() const { return impl_->port; }

bool CoordinatorServer::wait_done(std::chrono::milliseconds timeout) {
  const auto until = SteadyClock::now() + timeout;
  while (!impl_->done.load(std::memory_order_acquire)) {
    if (SteadyClock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

JobRecord CoordinatorServer::finish() {
  impl_->stop.store(true, std::memory_order_release);
  uint64_t one = 1;
  (void)!::write(impl_->wake_fd, &one, sizeof(one));
  if (impl_->thread.joinable()) impl_->thread.join();
  if (impl_->progress_shown) std::fprintf(stderr, "\n");
  return std::move(impl_->core->record());  // moved out, not copied: a long job's records are hundreds of MiB
}

}  // namespace genie::sched
