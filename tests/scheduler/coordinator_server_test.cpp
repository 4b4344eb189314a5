// SPDX-License-Identifier: Apache-2.0
// Tests of CoordinatorServer's front door over real sockets: only connections that prove the job secret join;
// the others (wrong secret, a replayed answer, no Hello first) are refused, counted, and do not disturb the job.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>

#include "genie/common/siphash.hpp"
#include "genie/sched/coord_protocol.hpp"
#include "genie/netsim/topology.hpp"
#include "genie/sched/coordinator.hpp"

namespace genie::sched {
namespace {

using namespace std::chrono_literals;

// One client connection: raw frames in and out.
struct Client {
  int fd = -1;
  coord::FrameDecoder dec;
  uint64_t seq = 0;
  explicit Client(uint16_t port) {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ~Client() {
    if (fd >= 0) ::close(fd);
  }
  void send_bytes(const std::vector<uint8_t>& b) const { ASSERT_EQ(::send(fd, b.data(), b.size(), MSG_NOSIGNAL), ssize_t(b.size())); }
  void send(const coord::Message& m) { send_bytes(coord::encode_frame(m, ++seq)); }
  // The next message, or nullopt when the server closed the connection or nothing came within `timeout`.
  std::optional<coord::Message> next(std::chrono::milliseconds timeout = 5s, bool* closed = nullptr) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      auto m = dec.next();
      if (m.is_ok() && m.value()) return *m.value();
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
      uint8_t buf[4096];
      const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) {
        if (closed) *closed = true;
        return std::nullopt;
      }
      dec.feed(buf, static_cast<size_t>(n));
    }
  }
};

coord::Hello hello_for(const std::array<uint8_t, 16>& key, const std::array<uint8_t, 16>& nonce, int32_t rank) {
  coord::Hello h;
  h.pid = 4000 + rank;
  h.process_rank = rank;
  h.world_size = 1;
  h.gpus = 1;
  h.node = "node0";
  h.host = "host0";
  const auto input = coord::hello_mac_input(nonce, h.pid, h.process_rank);
  h.mac = siphash24(key, input.data(), input.size());
  return h;
}

std::array<uint8_t, 16> nonce_of(Client& c) {
  auto m = c.next();
  EXPECT_TRUE(m && std::holds_alternative<coord::Challenge>(*m)) << "no Challenge";
  return m && std::holds_alternative<coord::Challenge>(*m) ? std::get<coord::Challenge>(*m).nonce
                                                          : std::array<uint8_t, 16>{};
}

TEST(CoordinatorServer, OnlyConnectionsThatProveTheSecretJoin) {
  // System: a coordinator with secret S on loopback. Four connections: a Hello keyed with another secret; the
  // member's valid Hello replayed on a second connection (its nonce differs); a connection whose first message
  // is not a Hello; the member itself.
  // Expectation: the three intruders are closed and counted as protocol errors, the member gets its Welcome and
  // is the job's only process.
  CoordinatorServer::Options o;
  o.secret = random_secret().value();
  auto topo = netsim::parse_topology_json(R"({"name": "pair",
      "nodes": [{"name": "g0", "kind": "gpu", "server": 0}, {"name": "g1", "kind": "gpu", "server": 0},
                {"name": "s0", "kind": "switch"}],
      "links": [{"a": "g0", "b": "s0", "bw_gbytes_per_s": 100, "latency_ns": 500},
                {"a": "g1", "b": "s0", "bw_gbytes_per_s": 100, "latency_ns": 500}]})",
                                           "pair", {});
  ASSERT_TRUE(topo.is_ok()) << topo.status().message();
  o.core.topology = topo.value();
  o.core.gpus_per_node = 1;
  auto server = CoordinatorServer::start(o);
  ASSERT_TRUE(server.is_ok()) << server.status().message();
  const uint16_t port = server.value()->port();
  EXPECT_EQ(server.value()->address(), "127.0.0.1:" + std::to_string(port));

  auto wrong = o.secret;
  wrong[0] ^= 1;
  Client stranger(port);
  ASSERT_GE(stranger.fd, 0);
  stranger.send(hello_for(wrong, nonce_of(stranger), 0));
  bool closed = false;
  EXPECT_FALSE(stranger.next(5s, &closed).has_value());
  EXPECT_TRUE(closed) << "a wrong secret's connection must be closed";

  Client member(port);
  const coord::Hello good = hello_for(o.secret, nonce_of(member), 0);
  Client replay(port);
  (void)nonce_of(replay);
  replay.send(good);  // a valid answer, but to another connection's challenge
  closed = false;
  EXPECT_FALSE(replay.next(5s, &closed).has_value());
  EXPECT_TRUE(closed) << "a replayed Hello must be refused";

  Client rude(port);
  (void)nonce_of(rude);
  rude.send(coord::Promise{1, 0});
  closed = false;
  EXPECT_FALSE(rude.next(5s, &closed).has_value());
  EXPECT_TRUE(closed) << "a connection that does not start with Hello must be closed";

  member.send(good);
  auto w = member.next();
  ASSERT_TRUE(w.has_value());
  EXPECT_TRUE(std::holds_alternative<coord::Welcome>(*w));
  member.send(coord::Bye{0});
  JobRecord job = server.value()->finish();
  EXPECT_EQ(job.protocol_errors, 3u);
  ASSERT_EQ(job.processes.size(), 1u);
  EXPECT_EQ(job.processes[0].pid, 4000);
}

}  // namespace
}  // namespace genie::sched
