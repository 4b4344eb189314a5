// SPDX-License-Identifier: Apache-2.0
// Bootstrap: unique id encoding, the rendezvous, and refusal of strangers and malformed hellos.
#include "bootstrap.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <thread>

namespace genie::shim {
namespace {

using namespace std::chrono_literals;

RankInfo info_for(int rank) {
  RankInfo r;
  r.rank = rank;
  r.cuda_dev = rank * 10;
  r.pid = 1000 + rank;
  std::snprintf(r.host, sizeof(r.host), "host%d", rank);
  return r;
}

// Joins `n` ranks of `id` from threads; returns each rank's result.
std::vector<Result<std::vector<RankInfo>>> join_all(const UniqueId& id, int n) {
  std::vector<Result<std::vector<RankInfo>>> out(static_cast<size_t>(n), Status(Errc::kInternal, "not run"));
  std::vector<std::thread> ts;
  for (int r = 0; r < n; ++r)
    ts.emplace_back([&, r] { out[static_cast<size_t>(r)] = join(id, n, info_for(r), 10s, {}); });
  for (auto& t : ts) t.join();
  return out;
}

TEST(Bootstrap, UniqueIdRoundTripsThrough128Bytes) {
  UniqueId id;
  id.ipv4 = htonl(0x7f000001);
  id.port = 4242;
  for (size_t i = 0; i < id.secret.size(); ++i) id.secret[i] = static_cast<uint8_t>(i * 7);
  char wire[128];
  id.encode(wire);
  auto back = UniqueId::decode(wire);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(back->ipv4, id.ipv4);
  EXPECT_EQ(back->port, 4242);
  EXPECT_EQ(back->secret, id.secret);
}

TEST(Bootstrap, DecodeRejectsBytesNotMadeByGetUniqueId) {
  char zeros[128] = {};
  auto r = UniqueId::decode(zeros);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Errc::kInvalidArgument);
  EXPECT_NE(r.status().message().find("ncclGetUniqueId"), std::string::npos);
}

TEST(Bootstrap, EveryRankReceivesTheWholeTableIndexedByRank) {
  auto id = start_root("127.0.0.1", 20s);
  ASSERT_TRUE(id.is_ok()) << id.status().to_string();
  auto results = join_all(id.value(), 4);
  for (int r = 0; r < 4; ++r) {
    ASSERT_TRUE(results[static_cast<size_t>(r)].is_ok()) << results[static_cast<size_t>(r)].status().to_string();
    const auto& table = results[static_cast<size_t>(r)].value();
    ASSERT_EQ(table.size(), 4u);
    for (int k = 0; k < 4; ++k) {
      EXPECT_EQ(table[static_cast<size_t>(k)].rank, k);
      EXPECT_EQ(table[static_cast<size_t>(k)].cuda_dev, k * 10);
      EXPECT_STREQ(table[static_cast<size_t>(k)].host, ("host" + std::to_string(k)).c_str());
    }
  }
}

TEST(Bootstrap, AStrangerWithoutTheSecretIsRefusedAndTheJobStillForms) {
  auto id = start_root("127.0.0.1", 20s);
  ASSERT_TRUE(id.is_ok());
  UniqueId wrong = id.value();
  wrong.secret[0] ^= 0xff;
  // The stranger connects first; the root drops it without reading further or answering.
  auto stranger = join(wrong, 2, info_for(0), 5s, {});
  ASSERT_FALSE(stranger.is_ok());
  EXPECT_EQ(stranger.status().code(), Errc::kRemote);
  auto results = join_all(id.value(), 2);
  EXPECT_TRUE(results[0].is_ok()) << results[0].status().to_string();
  EXPECT_TRUE(results[1].is_ok()) << results[1].status().to_string();
}

TEST(Bootstrap, MalformedHelloIsDroppedAndTheJobStillForms) {
  auto id = start_root("127.0.0.1", 20s);
  ASSERT_TRUE(id.is_ok());
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = id->ipv4;
  sa.sin_port = htons(id->port);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
  std::vector<char> junk(4096, 'x');
  ASSERT_GT(::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL), 0);
  auto results = join_all(id.value(), 3);
  for (const auto& r : results) EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  ::close(fd);
}

TEST(Bootstrap, ARankJoiningTwiceIsRefusedWithInvalidArgument) {
  auto id = start_root("127.0.0.1", 20s);
  ASSERT_TRUE(id.is_ok());
  Result<std::vector<RankInfo>> first = Status(Errc::kInternal, "");
  std::thread t([&] { first = join(id.value(), 2, info_for(0), 10s, {}); });
  std::this_thread::sleep_for(200ms);  // let rank 0 register first
  auto dup = join(id.value(), 2, info_for(0), 10s, {});
  ASSERT_FALSE(dup.is_ok());
  EXPECT_EQ(dup.status().code(), Errc::kInvalidArgument);
  EXPECT_NE(dup.status().message().find("joined twice"), std::string::npos) << dup.status().message();
  auto second = join(id.value(), 2, info_for(1), 10s, {});
  t.join();
  EXPECT_TRUE(first.is_ok());
  EXPECT_TRUE(second.is_ok());
}

TEST(Bootstrap, JoiningStopsWhenAskedTo) {
  auto id = start_root("127.0.0.1", 20s);
  ASSERT_TRUE(id.is_ok());
  // Rank 1 never comes; rank 0 is told to stop (ncclCommAbort of a joining communicator).
  auto t0 = std::chrono::steady_clock::now();
  auto r = join(id.value(), 2, info_for(0), 10s, [&] { return std::chrono::steady_clock::now() - t0 > 300ms; });
  ASSERT_FALSE(r.is_ok());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

}  // namespace
}  // namespace genie::shim
