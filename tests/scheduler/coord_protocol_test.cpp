// SPDX-License-Identifier: Apache-2.0
// Tests of the coordinator protocol codec: round trips, split reads, and every kind of bad input.
#include "genie/sched/coord_protocol.hpp"

#include <gtest/gtest.h>

namespace genie::sched::coord {
namespace {

std::vector<Message> samples() {
  Hello h;
  h.mac = 0x0123456789abcdefull;
  h.pid = 4242;
  h.process_rank = 3;
  h.world_size = 8;
  h.gpus = 8;
  h.node = "node1";
  h.host = "box";
  Records r;
  r.label_base = 7;
  r.labels = {"_Z6kernelPf", "HtoD"};
  OpRecord o;
  o.kind = 3;
  o.device = 1;
  o.stream = 2;
  o.label = 8;
  o.start_ns = -5;
  o.end_ns = 1ll << 40;
  o.bytes = 1ull << 33;
  o.comm = ~0ull;
  o.seq = 9;
  o.submit_ns = 900;
  o.deps_end_ns = -3;
  o.thread = 0xfffffffe;
  o.flags = 3;
  r.ops = {o, o};
  Resolved res;
  res.is_p2p = 1;
  res.status = 6;
  res.comm = 77;
  res.seq = 5;
  res.src = 1;
  res.dst = 2;
  res.start_ns = 100;
  res.end_ns = 200;
  res.algorithm = 2;
  res.protocol = 1;
  res.nchannels = 16;
  res.epoch = 12;
  res.error = "peer died";
  return {Challenge{{1, 2, 3}},  h,
          Welcome{2, "flow", "hgx-h200 x2"},
          CommJoin{99, 4, 3, 2, 11},
          Coll{99, 12, 3, 123456, 0, 7, 4, -1, 1u << 30},
          P2p{99, 0, 3, 2, 4096, 777, 1, 0, 1024, 7},
          Promise{INT64_MAX, 3},
          r,
          Bye{137},
          res,
          Want{555, 444},
          Probe{7},
          Quiet{7, 12, 1, 4321},
          Resume{98765, 13},
          Bound{1, 99, 4, 2, 3, 7654321}};
}

TEST(CoordProtocol, EveryMessageRoundTripsThroughSplitReads) {
  // Frames are fed one byte at a time: the decoder must reassemble each exactly once, in order.
  std::vector<uint8_t> stream;
  auto msgs = samples();
  for (size_t i = 0; i < msgs.size(); ++i) {
    auto f = encode_frame(msgs[i], i + 1);
    stream.insert(stream.end(), f.begin(), f.end());
  }
  FrameDecoder d;
  std::vector<Message> out;
  for (uint8_t b : stream) {
    d.feed(&b, 1);
    auto m = d.next();
    ASSERT_TRUE(m.is_ok()) << m.status().message();
    if (m.value()) out.push_back(*m.value());
  }
  ASSERT_EQ(out.size(), msgs.size());
  for (size_t i = 0; i < msgs.size(); ++i) {
    EXPECT_EQ(type_of(out[i]), type_of(msgs[i]));
    // Re-encoding the decoded message gives the same bytes.
    EXPECT_EQ(encode_frame(out[i], i + 1), encode_frame(msgs[i], i + 1)) << msg_type_name(type_of(msgs[i]));
  }
  EXPECT_EQ(d.buffered(), 0u);
}

TEST(CoordProtocol, BadMagicVersionAndLengthBreakTheStream) {
  auto f = encode_frame(Want{1}, 1);
  {
    auto bad = f;
    bad[0] ^= 0xff;
    FrameDecoder d;
    d.feed(bad.data(), bad.size());
    auto m = d.next();
    ASSERT_FALSE(m.is_ok());
    EXPECT_TRUE(d.broken());
    EXPECT_NE(m.status().message().find("magic"), std::string::npos);
  }
  {
    auto bad = f;
    bad[4] = 9;  // version
    FrameDecoder d;
    d.feed(bad.data(), bad.size());
    auto m = d.next();
    ASSERT_FALSE(m.is_ok());
    EXPECT_TRUE(d.broken());
    EXPECT_NE(m.status().message().find("version 9"), std::string::npos);
  }
  {
    auto bad = f;
    bad[8] = 0xff;  // length = huge
    bad[9] = 0xff;
    bad[10] = 0xff;
    bad[11] = 0x7f;
    FrameDecoder d;
    d.feed(bad.data(), bad.size());
    auto m = d.next();
    ASSERT_FALSE(m.is_ok());
    EXPECT_TRUE(d.broken());
    EXPECT_NE(m.status().message().find("oversized"), std::string::npos);
  }
}

TEST(CoordProtocol, MalformedPayloadsAndReplaysAreDroppedButTheStreamGoesOn) {
  std::vector<uint8_t> s;
  auto good1 = encode_frame(Want{1}, 1);
  auto replay = encode_frame(Want{2}, 1);  // seq 1 again
  auto good2 = encode_frame(Want{3}, 2);
  // A Coll frame whose payload is one byte short.
  auto shortf = encode_frame(Coll{}, 3);
  shortf.pop_back();
  shortf[8] = static_cast<uint8_t>(shortf[8] - 1);
  auto good3 = encode_frame(Want{4}, 4);
  for (auto* f : {&good1, &replay, &good2, &shortf, &good3}) s.insert(s.end(), f->begin(), f->end());
  FrameDecoder d;
  d.feed(s.data(), s.size());
  std::vector<int64_t> wants;
  int errors = 0;
  for (;;) {
    auto m = d.next();
    if (!m.is_ok()) {
      ++errors;
      EXPECT_FALSE(d.broken()) << m.status().message();
      continue;
    }
    if (!m.value()) break;
    wants.push_back(std::get<Want>(*m.value()).t_ns);
  }
  EXPECT_EQ(errors, 2);
  EXPECT_EQ(wants, (std::vector<int64_t>{1, 3, 4}));
}

TEST(CoordProtocol, ForgedCountsDoNotAllocate) {
  // A Records payload claiming 2^32-1 ops in a few bytes must be rejected before any allocation.
  std::vector<uint8_t> payload = {0, 0, 0, 0, /*labels*/ 0, 0, 0, 0, /*ops*/ 0xff, 0xff, 0xff, 0xff};
  auto m = decode_payload(static_cast<uint16_t>(MsgType::kRecords), payload.data(), payload.size());
  ASSERT_FALSE(m.is_ok());
  EXPECT_NE(m.status().message().find("malformed Records"), std::string::npos);
  auto u = decode_payload(999, payload.data(), payload.size());
  ASSERT_FALSE(u.is_ok());
  EXPECT_NE(u.status().message().find("unknown message type 999"), std::string::npos);
}

TEST(CoordProtocol, HelloMacCoversNoncePidAndRank) {
  std::array<uint8_t, 16> n1{1}, n2{2};
  EXPECT_NE(hello_mac_input(n1, 10, 0), hello_mac_input(n2, 10, 0));
  EXPECT_NE(hello_mac_input(n1, 10, 0), hello_mac_input(n1, 11, 0));
  EXPECT_NE(hello_mac_input(n1, 10, 0), hello_mac_input(n1, 10, 1));
}

}  // namespace
}  // namespace genie::sched::coord
