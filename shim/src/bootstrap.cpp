// SPDX-License-Identifier: Apache-2.0
// Bootstrap over TCP: framed, versioned messages; the root checks the job secret before reading anything else.
#include "bootstrap.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>

#include "genie/common/log.hpp"
#include "genie/common/siphash.hpp"

namespace genie::shim {
namespace {

using Clock = std::chrono::steady_clock;

using namespace wire;

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.release();
    }
    return *this;
  }
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// Sends or receives exactly n bytes before `deadline`; polls `should_stop` every 100 ms.
Status io_all(int fd, void* buf, size_t n, bool send, Clock::time_point deadline,
              const std::function<bool()>& should_stop) {
  char* p = static_cast<char*>(buf);
  size_t done = 0;
  while (done < n) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Status(Errc::kTimeout, "bootstrap: timed out waiting for peers");
    if (should_stop && should_stop()) return Status(Errc::kRemote, "bootstrap: aborted");
    pollfd pfd{fd, static_cast<short>(send ? POLLOUT : POLLIN), 0};
    int pr = ::poll(&pfd, 1, static_cast<int>(std::min<long>(left, 100)));
    if (pr < 0 && errno != EINTR) return system_error(errno_text("bootstrap poll"));
    if (pr <= 0) continue;
    ssize_t r = send ? ::send(fd, p + done, n - done, MSG_NOSIGNAL) : ::recv(fd, p + done, n - done, 0);
    if (r == 0) return Status(Errc::kRemote, "bootstrap: connection closed by peer");
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Status(Errc::kRemote, errno_text("bootstrap socket"));
    }
    done += static_cast<size_t>(r);
  }
  return Status::ok();
}

struct Pending {
  Fd fd;
  int rank;
};

// After the table went out: either every rank closes its connection (no round 2) or every rank sends a blob,
// and each gets all of them. A rank that leaves while others wait fails the round for everyone.
void root_round2(std::vector<Pending>& joined, int nranks, Clock::time_point deadline) {
  std::vector<std::vector<uint8_t>> blobs(static_cast<size_t>(nranks));
  std::vector<int> state(joined.size(), 0);  // 0 waiting, 1 sent a blob, 2 left
  size_t waiting = joined.size();
  bool timed_out = false;
  while (waiting > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    std::vector<pollfd> pfds;
    std::vector<size_t> who;
    for (size_t i = 0; i < joined.size(); ++i)
      if (state[i] == 0) {
        pfds.push_back({joined[i].fd.get(), POLLIN, 0});
        who.push_back(i);
      }
    int pr = ::poll(pfds.data(), pfds.size(), static_cast<int>(std::min<long>(left, 1000)));
    if (pr <= 0) continue;
    for (size_t k = 0; k < pfds.size(); ++k) {
      if (!(pfds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const size_t i = who[k];
      Extra e{};
      const auto soon = Clock::now() + std::chrono::seconds(5);
      Status st = io_all(joined[i].fd.get(), &e, sizeof(e), false, soon, {});
      std::vector<uint8_t> b;
      if (st.is_ok()) {
        auto len = check_extra(e);
        st = len.status();
        if (st.is_ok()) {
          b.resize(len.value());
          st = io_all(joined[i].fd.get(), b.data(), b.size(), false, soon, {});
        }
      }
      state[i] = st.is_ok() ? 1 : 2;
      if (st.is_ok()) blobs[static_cast<size_t>(joined[i].rank)] = std::move(b);
      --waiting;
    }
  }
  size_t sent = 0, gone = 0;
  for (int s : state) {
    if (s == 1) ++sent;
    if (s == 2) ++gone;
  }
  if (sent == 0 && !timed_out) return;  // nobody wanted a second round
  const bool ok = !timed_out && gone == 0;
  if (!ok)
    GENIE_LOG_WARN("shim", "bootstrap root: address exchange failed ({} of {} ranks took part{})", sent,
                   joined.size(), timed_out ? ", timed out" : "");
  for (size_t i = 0; i < joined.size(); ++i) {
    if (state[i] != 1) continue;
    const int fd = joined[i].fd.get();
    ExtraReply r{kExtraMagic, ok ? 0 : static_cast<int32_t>(timed_out ? Errc::kTimeout : Errc::kRemote), nranks};
    const auto soon = Clock::now() + std::chrono::seconds(5);
    if (!io_all(fd, &r, sizeof(r), true, soon, {}).is_ok() || !ok) continue;
    for (const auto& b : blobs) {
      uint32_t len = static_cast<uint32_t>(b.size());
      if (!io_all(fd, &len, sizeof(len), true, soon, {}).is_ok()) break;
      if (len > 0 && !io_all(fd, const_cast<uint8_t*>(b.data()), len, true, soon, {}).is_ok()) break;
    }
  }
}

void send_reply(int fd, Errc code, const std::string& text, int nranks, const std::vector<RankInfo>* table,
                Clock::time_point deadline) {
  Reply r{};
  r.magic = kReplyMagic;
  r.status = static_cast<int32_t>(code);
  r.nranks = nranks;
  std::snprintf(r.text, sizeof(r.text), "%s", text.c_str());
  if (!io_all(fd, &r, sizeof(r), true, deadline, {}).is_ok()) return;
  if (table)
    (void)io_all(fd, const_cast<RankInfo*>(table->data()), table->size() * sizeof(RankInfo), true, deadline, {});
}

// The root: accepts connections until all ranks joined. A connection with a wrong secret or a malformed
// hello is logged and dropped; it never disturbs the ranks that did join.
void root_loop(int listen_fd, UniqueId id, std::chrono::milliseconds timeout) {
  Fd lfd(listen_fd);
  const auto deadline = Clock::now() + timeout;
  std::vector<Pending> joined;
  RootAdmission admission(id.secret);
  while (!admission.complete()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      GENIE_LOG_WARN("shim", "bootstrap root: timed out with {} of {} ranks joined", joined.size(),
                     admission.nranks());
      for (auto& p : joined)
        send_reply(p.fd.get(), Errc::kTimeout, "bootstrap timed out: not every rank joined", admission.nranks(),
                   nullptr, Clock::now() + std::chrono::seconds(1));
      return;
    }
    pollfd pfd{lfd.get(), POLLIN, 0};
    int pr = ::poll(&pfd, 1, static_cast<int>(std::min<long>(left, 1000)));
    if (pr <= 0) continue;
    sockaddr_in peer{};
    socklen_t plen = sizeof(peer);
    Fd c(::accept4(lfd.get(), reinterpret_cast<sockaddr*>(&peer), &plen, SOCK_CLOEXEC));
    if (c.get() < 0) continue;
    char addr[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &peer.sin_addr, addr, sizeof(addr));
    Hello h{};
    // A short deadline per hello: a silent or slow client cannot stall the others.
    Status st = io_all(c.get(), &h, sizeof(h), false, Clock::now() + std::chrono::seconds(5), {});
    if (!st.is_ok()) {
      GENIE_LOG_WARN("shim", "bootstrap root: dropped a connection from {}: {}", addr, st.message());
      continue;
    }
    const RootAdmission::Decision d = admission.admit(h);
    if (d.verdict == RootAdmission::Verdict::kDrop) {
      GENIE_LOG_WARN("shim", "bootstrap root: dropped a connection from {}: {}", addr, d.why);
      continue;
    }
    if (d.verdict == RootAdmission::Verdict::kRefuse) {
      GENIE_LOG_WARN("shim", "bootstrap root: refused rank {} from {}: {}", h.rank, addr, d.why);
      send_reply(c.get(), Errc::kInvalidArgument, d.why, admission.nranks(), nullptr,
                 Clock::now() + std::chrono::seconds(1));
      continue;
    }
    joined.push_back({std::move(c), d.rank});
  }
  for (auto& p : joined)
    send_reply(p.fd.get(), Errc::kOk, "", admission.nranks(), &admission.table(), deadline + std::chrono::seconds(5));
  root_round2(joined, admission.nranks(), deadline + std::chrono::seconds(5));
}

}  // namespace

namespace wire {

RootAdmission::Decision RootAdmission::admit(const Hello& h) {
  Decision d;
  if (h.magic != kHelloMagic || h.version != kWireVersion) {
    d.why = "malformed hello";
    return d;
  }
  // Every byte is compared whatever the first difference (no early exit to time from the network).
  if (!equal_constant_time(h.secret, secret_.data(), sizeof(h.secret))) {
    d.why = "wrong job secret";
    return d;
  }
  d.verdict = Verdict::kRefuse;
  if (h.nranks <= 0 || h.nranks > kMaxRanks) {
    d.why = "nranks " + std::to_string(h.nranks) + " is out of range";
  } else if (nranks_ >= 0 && h.nranks != nranks_) {
    d.why = "nranks " + std::to_string(h.nranks) + " differs from the " + std::to_string(nranks_) + " of other ranks";
  } else if (h.rank < 0 || h.rank >= h.nranks) {
    d.why = "rank " + std::to_string(h.rank) + " is out of range";
  }
  if (!d.why.empty()) return d;
  if (nranks_ < 0) {
    nranks_ = h.nranks;
    table_.assign(static_cast<size_t>(nranks_), RankInfo{});
  }
  RankInfo& slot = table_[static_cast<size_t>(h.rank)];
  if (slot.rank >= 0) {
    d.why = "rank " + std::to_string(h.rank) + " joined twice";
    return d;
  }
  slot = h.info;
  slot.rank = h.rank;
  slot.host[sizeof(slot.host) - 1] = 0;
  slot.node[sizeof(slot.node) - 1] = 0;
  ++joined_;
  d.verdict = Verdict::kAdmit;
  d.rank = h.rank;
  return d;
}

Status check_reply(const Reply& r, int nranks) {
  if (r.magic != kReplyMagic) return Status(Errc::kRemote, "bootstrap: malformed reply from the root");
  if (r.status != 0) {
    const Errc code = r.status == static_cast<int32_t>(Errc::kTimeout) ? Errc::kTimeout : Errc::kInvalidArgument;
    return Status(code, std::string("bootstrap root refused this rank: ") + std::string(r.text, strnlen(r.text, sizeof(r.text))));
  }
  if (r.nranks != nranks) return Status(Errc::kRemote, "bootstrap: the root answered for a different nranks");
  return Status::ok();
}

Result<uint32_t> check_extra(const Extra& e) {
  if (e.magic != kExtraMagic || e.len > BootstrapSession::kMaxBlob) return Status(Errc::kRemote, "malformed");
  return e.len;
}

Status check_extra_reply(const ExtraReply& r, int nranks) {
  if (r.magic != kExtraMagic) return Status(Errc::kRemote, "bootstrap: malformed reply to the address exchange");
  // The status comes off the wire: only kTimeout is passed on, anything else is a remote failure (an Errc
  // taken as is could be kNotReady, which ncclCommInitRank would report as ncclInProgress, or no Errc at all).
  if (r.status == static_cast<int32_t>(Errc::kTimeout))
    return Status(Errc::kTimeout, "bootstrap: the address exchange timed out: some rank did not take part");
  if (r.status != 0)
    return Status(Errc::kRemote, "bootstrap: the address exchange failed: some rank did not take part");
  if (r.nranks != nranks) return Status(Errc::kRemote, "bootstrap: the root answered for a different nranks");
  return Status::ok();
}

}  // namespace wire

void UniqueId::encode(char out[128]) const {
  std::memset(out, 0, 128);
  uint32_t magic = kMagic;
  uint16_t version = kVersion;
  std::memcpy(out, &magic, 4);
  std::memcpy(out + 4, &version, 2);
  std::memcpy(out + 6, &port, 2);
  std::memcpy(out + 8, &ipv4, 4);
  std::memcpy(out + 12, secret.data(), secret.size());
}

Result<UniqueId> UniqueId::decode(const char in[128]) {
  uint32_t magic = 0;
  uint16_t version = 0;
  std::memcpy(&magic, in, 4);
  std::memcpy(&version, in + 4, 2);
  if (magic != kMagic) return invalid_argument("the unique id was not created by ncclGetUniqueId (bad magic)");
  if (version != kVersion)
    return invalid_argument("unique id version " + std::to_string(version) + " is not supported");
  UniqueId id;
  std::memcpy(&id.port, in + 6, 2);
  std::memcpy(&id.ipv4, in + 8, 4);
  std::memcpy(id.secret.data(), in + 12, id.secret.size());
  return id;
}

Result<UniqueId> start_root(const std::string& bind_addr, std::chrono::milliseconds timeout) {
  UniqueId id;
  if (inet_pton(AF_INET, bind_addr.c_str(), &id.ipv4) != 1)
    return invalid_argument("bootstrap address '" + bind_addr + "' is not an IPv4 address (GENIE_SHIM_BOOTSTRAP_ADDR)");
  if (getrandom(id.secret.data(), id.secret.size(), 0) != static_cast<ssize_t>(id.secret.size()))
    return system_error(errno_text("getrandom"));
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return system_error(errno_text("socket"));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = id.ipv4;
  sa.sin_port = 0;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0)
    return system_error(errno_text(("bind " + bind_addr).c_str()));
  if (::listen(fd.get(), 1024) != 0) return system_error(errno_text("listen"));
  socklen_t len = sizeof(sa);
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&sa), &len) != 0)
    return system_error(errno_text("getsockname"));
  id.port = ntohs(sa.sin_port);
  std::thread(root_loop, fd.release(), id, timeout).detach();
  return id;
}

BootstrapSession::~BootstrapSession() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::vector<std::vector<uint8_t>>> BootstrapSession::allgather(const std::vector<uint8_t>& mine,
                                                                      const std::function<bool()>& should_stop) {
  if (mine.size() > kMaxBlob) return internal_error("bootstrap blob too large");
  Extra e{kExtraMagic, static_cast<uint32_t>(mine.size())};
  GENIE_TRY(io_all(fd_, &e, sizeof(e), true, deadline_, should_stop));
  GENIE_TRY(io_all(fd_, const_cast<uint8_t*>(mine.data()), mine.size(), true, deadline_, should_stop));
  ExtraReply r{};
  GENIE_TRY(io_all(fd_, &r, sizeof(r), false, deadline_, should_stop));
  GENIE_TRY(check_extra_reply(r, nranks_));
  std::vector<std::vector<uint8_t>> out(static_cast<size_t>(nranks_));
  for (auto& b : out) {
    uint32_t len = 0;
    GENIE_TRY(io_all(fd_, &len, sizeof(len), false, deadline_, should_stop));
    if (len > kMaxBlob) return Status(Errc::kRemote, "bootstrap: malformed blob from the root");
    b.resize(len);
    GENIE_TRY(io_all(fd_, b.data(), len, false, deadline_, should_stop));
  }
  return out;
}

Result<std::vector<RankInfo>> join(const UniqueId& id, int nranks, const RankInfo& mine,
                                   std::chrono::milliseconds timeout, const std::function<bool()>& should_stop,
                                   std::unique_ptr<BootstrapSession>* session) {
  const auto deadline = Clock::now() + timeout;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = id.ipv4;
  sa.sin_port = htons(id.port);
  Fd fd;
  for (;;) {  // the root may not listen yet if the id travelled faster than its thread started
    fd = Fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (fd.get() < 0) return system_error(errno_text("socket"));
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0) break;
    int err = errno;
    if (Clock::now() > deadline)
      return system_error(std::string("bootstrap: cannot connect to the root: ") + std::strerror(err));
    if (should_stop && should_stop()) return Status(Errc::kRemote, "bootstrap: aborted");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  int one = 1;
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  Hello h{};
  h.magic = kHelloMagic;
  h.version = kWireVersion;
  std::memcpy(h.secret, id.secret.data(), sizeof(h.secret));
  h.nranks = nranks;
  h.rank = mine.rank;
  h.info = mine;
  GENIE_TRY(io_all(fd.get(), &h, sizeof(h), true, deadline, should_stop));
  Reply r{};
  GENIE_TRY(io_all(fd.get(), &r, sizeof(r), false, deadline, should_stop));
  GENIE_TRY(check_reply(r, nranks));
  std::vector<RankInfo> table(static_cast<size_t>(nranks));
  GENIE_TRY(io_all(fd.get(), table.data(), table.size() * sizeof(RankInfo), false, deadline, should_stop));
  if (session) *session = std::make_unique<BootstrapSession>(fd.release(), nranks, deadline);
  return table;
}

}  // namespace genie::shim
