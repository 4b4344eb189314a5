// SPDX-License-Identifier: Apache-2.0
// Tests of the algorithm library: steps and bytes per rank against closed forms, DAG sanity, bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "genie/netsim/schedule.hpp"
#include "genie/netsim/simulator.hpp"
#include "genie/netsim/topology.hpp"

namespace genie::netsim {
namespace {

std::shared_ptr<const Topology> h100() { return load_topology("hgx-h100", {}).value(); }

Schedule build(Collective c, Algorithm a, uint64_t count, int n, int nch, const Topology& t, uint64_t chunk = 0) {
  CollectiveSpec spec;
  spec.collective = c;
  spec.count = count;
  spec.nranks = n;
  Tuning tune;
  tune.algorithm = a;
  tune.nchannels = nch;
  tune.chunk_bytes = chunk;
  auto s = build_schedule(spec, t, tune);
  EXPECT_TRUE(s.is_ok()) << s.status().to_string();
  return std::move(s).value();
}

void expect_topological(const Schedule& s) {
  for (size_t i = 0; i < s.ops.size(); ++i)
    for (uint32_t d : s.deps_of(i)) ASSERT_LT(d, i);
}

TEST(RingAlgorithm, AllReduceStepsAndBytesPerRank) {
  // Ring all-reduce of S bytes on n ranks: 2(n-1) steps; each rank sends 2(n-1)/n x S in all.
  auto t = h100();
  for (int n : {2, 4, 8}) {
    for (int nch : {1, 4}) {
      const uint64_t count = 3 * 1024 * 1024;  // divisible by n*nch
      Schedule s = build(Collective::kAllReduce, Algorithm::kRing, count, n, nch, *t);
      expect_topological(s);
      EXPECT_EQ(s.num_steps(), static_cast<uint32_t>(2 * (n - 1)));
      const uint64_t size = count * 4;
      for (int r = 0; r < n; ++r) EXPECT_EQ(s.bytes_sent_by(r), 2 * (n - 1) * size / n) << "n=" << n << " r=" << r;
      EXPECT_EQ(s.ops.size(), static_cast<size_t>(2 * (n - 1) * n * nch));
    }
  }
}

TEST(RingAlgorithm, SlicesKeepTotalBytes) {
  // Chunking into pipeline slices changes the op count, not the bytes: still 2(n-1)/n x S per rank.
  auto t = h100();
  const uint64_t count = 1 << 24;
  Schedule s = build(Collective::kAllReduce, Algorithm::kRing, count, 8, 2, *t, /*chunk=*/1 << 20);
  EXPECT_GT(s.ops.size(), static_cast<size_t>(2 * 7 * 8 * 2));
  for (int r = 0; r < 8; ++r) EXPECT_EQ(s.bytes_sent_by(r), 2 * 7 * (count * 4) / 8);
}

TEST(RingAlgorithm, AllGatherReduceScatterBroadcastReduce) {
  // All-gather / reduce-scatter of B bytes per rank: n-1 steps, (n-1) x B sent per rank.
  // Broadcast / reduce chain of S bytes: n-1 hops; every rank but the last in the chain sends S.
  auto t = h100();
  const int n = 8;
  const uint64_t count = 4096;
  for (Collective c : {Collective::kAllGather, Collective::kReduceScatter}) {
    Schedule s = build(c, Algorithm::kRing, count, n, 2, *t);
    EXPECT_EQ(s.num_steps(), static_cast<uint32_t>(n - 1));
    for (int r = 0; r < n; ++r) EXPECT_EQ(s.bytes_sent_by(r), (n - 1) * count * 4);
  }
  Schedule bc = build(Collective::kBroadcast, Algorithm::kRing, count, n, 1, *t);
  EXPECT_EQ(bc.num_steps(), static_cast<uint32_t>(n - 1));
  EXPECT_EQ(bc.bytes_sent_by(0), count * 4);
  EXPECT_EQ(bc.bytes_sent_by(n - 1), 0u);  // root 0: the chain ends at rank n-1
}

TEST(TreeAlgorithm, DepthIsTwoLog2N) {
  // Double binary tree all-reduce on complete trees (n = 7, 15; depth log2(n+1) - 1): reduce up then
  // broadcast down, 2 x depth steps; every non-root sends its share up once and receives it down once,
  // so the ranks send 2 (n-1) x S in all.
  auto t = load_topology("ring:16", {}).value();
  for (int n : {7, 15}) {
    Schedule s = build(Collective::kAllReduce, Algorithm::kTree, 1 << 16, n, 2, *t);
    expect_topological(s);
    const uint32_t depth = static_cast<uint32_t>(std::log2(n + 1)) - 1;
    EXPECT_EQ(s.num_steps(), 2 * depth) << n;
    uint64_t total = 0;
    for (int r = 0; r < n; ++r) total += s.bytes_sent_by(r);
    EXPECT_EQ(total, 2ull * (n - 1) * (1 << 16) * 4);
  }
}

TEST(NvlsAlgorithm, TrafficPerRankIsNPlusOneOverN) {
  // NVLS all-reduce of S: each rank uploads S (for the in-switch reduction) + S/n (multicast of its
  // reduced part) = (n+1)/n x S; it receives the same.
  auto t = h100();
  const uint64_t count = 1 << 22;
  Schedule s = build(Collective::kAllReduce, Algorithm::kNvls, count, 8, 16, *t, 131072);
  expect_topological(s);
  const uint64_t size = count * 4;
  for (int r = 0; r < 8; ++r) EXPECT_EQ(s.bytes_sent_by(r), size + size / 8);
  uint64_t recv0 = 0;
  for (const Step& op : s.ops)
    if (op.dst == 0) recv0 += op.bytes;
  EXPECT_EQ(recv0, size + size / 8);
}

TEST(DirectAlgorithm, AllToAllAndPointToPoint) {
  // Alltoall of c elements per peer: each rank sends (n-1) x c x 4 bytes. Sendrecv: n transfers of S.
  auto t = h100();
  Schedule a2a = build(Collective::kAllToAll, Algorithm::kDirect, 1000, 8, 4, *t);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(a2a.bytes_sent_by(r), 7u * 1000 * 4);
  Schedule sr = build(Collective::kSendRecv, Algorithm::kDirect, 1000, 8, 1, *t);
  EXPECT_EQ(sr.ops.size(), 8u);
  CollectiveSpec g;
  g.collective = Collective::kGather;
  g.count = 10;
  g.nranks = 8;
  g.root = 3;
  Tuning tune;
  tune.algorithm = Algorithm::kDirect;
  Schedule gs = build_schedule(g, *t, tune).value();
  EXPECT_EQ(gs.ops.size(), 7u);
  for (const Step& op : gs.ops) EXPECT_EQ(op.dst, 3);
}

TEST(HalvingDoubling, StepsAndBytes) {
  // Halving-doubling all-reduce on n = 2^k: 2 log2 n steps; each rank sends 2 (n-1)/n x S.
  auto t = load_topology("ring:16", {}).value();
  for (int n : {2, 8, 16}) {
    Schedule s = build(Collective::kAllReduce, Algorithm::kHalvingDoubling, 1 << 20, n, 1, *t);
    EXPECT_EQ(s.num_steps(), static_cast<uint32_t>(2 * std::log2(n)));
    EXPECT_EQ(s.bytes_sent_by(0), 2ull * (n - 1) * (4u << 20) / n);
  }
}

TEST(ScheduleBuilder, RejectsBadInput) {
  // Unknown names, ranks not placed on the topology, counts or rank counts that do not suit the collective:
  // each an InvalidArgument (or Unsupported) whose message names the value and says why (exact text).
  auto t = h100();
  auto msg = [&](const CollectiveSpec& spec, const Tuning& tune) { return build_schedule(spec, *t, tune).status(); };
  CollectiveSpec spec;
  spec.count = 16;
  spec.nranks = 9;  // more ranks than GPUs
  Tuning tune;
  EXPECT_EQ(msg(spec, tune).message(), "rank 8 is placed on GPU 8, but topology hgx-h100 has 8 GPUs");
  spec.nranks = 2;
  spec.rank_to_gpu = {3, 3};
  EXPECT_EQ(msg(spec, tune).message(), "rank 1 is placed on GPU 3, which another rank already uses");
  spec.rank_to_gpu = {1, 2, 3};
  EXPECT_EQ(msg(spec, tune).message(), "rank placement lists 3 GPUs for 2 ranks");
  spec.rank_to_gpu = {-1, 2};
  EXPECT_EQ(msg(spec, tune).message(), "rank 0 is placed on GPU -1, but topology hgx-h100 has 8 GPUs");
  spec.rank_to_gpu = {};
  spec.nranks = 0;
  EXPECT_EQ(msg(spec, tune).message(), "nranks must be >= 1 (got 0)");
  spec.nranks = 2;
  spec.collective = Collective::kBroadcast;
  spec.root = 5;
  EXPECT_EQ(msg(spec, tune).message(), "root 5 is not a rank of a 2-rank communicator");
  spec.collective = Collective::kAllReduce;
  spec.nranks = 6;
  tune.algorithm = Algorithm::kHalvingDoubling;
  EXPECT_EQ(msg(spec, tune).message(), "HalvingDoubling needs a power-of-two rank count (got 6)");
  tune.algorithm = Algorithm::kRing;
  spec.count = ~uint64_t{0} / 4;
  spec.datatype = DataType::kFloat64;
  EXPECT_EQ(msg(spec, tune).message(), "count 4611686018427387903 of double (8 bytes) overflows a 64-bit byte count");
  spec.collective = Collective::kAllGather;
  spec.count = ~uint64_t{0} / 16;
  spec.datatype = DataType::kFloat32;
  EXPECT_EQ(msg(spec, tune).message(),
            "count 1152921504606846975 of float (4 bytes x 6 ranks) overflows a 64-bit byte count");
  spec.collective = Collective::kAllReduce;
  spec.count = 16;
  tune.nchannels = 65;
  EXPECT_EQ(msg(spec, tune).message(), "channel count 65 outside [1, 64]");
  tune.nchannels = 1;
  tune.algorithm = Algorithm::kPat;
  EXPECT_EQ(msg(spec, tune).code(), Errc::kUnsupported);
  EXPECT_EQ(msg(spec, tune).message(), "PAT implements all_gather and reduce_scatter, not all_reduce");
  tune.algorithm = Algorithm::kNvls;
  EXPECT_EQ(build_schedule(spec, *load_topology("dgx-a100", {}).value(), tune).status().message(),
            "NVLS needs NVSwitch multicast; topology dgx-a100 has none");
  tune.algorithm = Algorithm::kTree;
  spec.collective = Collective::kAllGather;
  EXPECT_EQ(msg(spec, tune).message(), "Tree implements all_reduce only, not all_gather");
  // NVLSTree needs as many ranks on every server: 8 + 4.
  TopologyOptions two;
  two.nodes = 2;
  auto t2 = load_topology("hgx-h100", two).value();
  CollectiveSpec uneven;
  uneven.count = 1024;
  uneven.nranks = 12;
  Tuning nt;
  nt.algorithm = Algorithm::kNvlsTree;
  EXPECT_EQ(build_schedule(uneven, *t2, nt).status().message(),
            "NVLSTree needs the same number of ranks on every server");
  nt.algorithm = Algorithm::kCollNetChain;
  EXPECT_EQ(build_schedule(uneven, *t2, nt).status().message(),
            "CollNetChain needs the same number of ranks on every server");
  // Unknown names.
  EXPECT_EQ(parse_collective("all_reduc").status().message(),
            "unknown collective 'all_reduc' (valid: all_reduce, allreduce, all_gather, allgather, reduce_scatter, "
            "reducescatter, alltoall, broadcast, reduce, gather, scatter, sendrecv)");
  EXPECT_EQ(parse_algorithm("Rign").status().message(),
            "unknown algorithm 'Rign' (valid: Ring, Tree, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT, Direct, "
            "HalvingDoubling)");
  EXPECT_EQ(parse_protocol("LL64").status().message(), "unknown protocol 'LL64' (valid: LL, LL128, Simple)");
  EXPECT_EQ(parse_datatype("fp33").status().message(),
            "unknown datatype 'fp33' (valid: int8, uint8, int32, uint32, int64, uint64, half, float16, float, float32, "
            "double, float64, bfloat16, f8e4m3, f8e5m2)");
  EXPECT_EQ(parse_redop("mean").status().message(), "unknown reduction op 'mean' (valid: sum, prod, max, min, avg)");
  EXPECT_EQ(parse_engine("packet").status().message(), "unknown engine 'packet' (valid: analytical, flow)");
  EXPECT_EQ(parse_collective("ALL_REDUCE").value(), Collective::kAllReduce);
}

}  // namespace
}  // namespace genie::netsim

namespace genie::netsim {
namespace {

TEST(NvlsTreeAlgorithm, InterServerTrafficIsOnePortionPerGpu) {
  // NVLSTree all-reduce of S on K servers x G GPUs: inside a server NVLS moves (G+1)/G x S per GPU
  // (upload S + multicast S/G); across servers each GPU sends its S/G portion up/down a tree over the
  // servers: summed over all GPUs, 2 (K-1) x S/G x G = 2 (K-1) S bytes cross the network.
  TopologyOptions o;
  o.nodes = 4;
  auto t = load_topology("hgx-h100", o).value();
  const uint64_t count = 1 << 22;
  const uint64_t size = count * 4;
  CollectiveSpec spec;
  spec.count = count;
  spec.nranks = 32;
  Tuning tune;
  tune.algorithm = Algorithm::kNvlsTree;
  tune.nchannels = 4;
  tune.chunk_bytes = 131072;
  Schedule s = build_schedule(spec, *t, tune).value();
  for (size_t i = 0; i < s.ops.size(); ++i)
    for (uint32_t d : s.deps_of(i)) ASSERT_LT(d, i);
  uint64_t net = 0, nvls_up = 0;
  for (const Step& op : s.ops) {
    if (op.kind != Step::Kind::kTransfer) continue;
    if (op.dst == kNvlsEndpoint) nvls_up += op.bytes;
    if (op.src >= 0 && op.dst >= 0) net += op.bytes;
  }
  EXPECT_EQ(net, 2ull * (4 - 1) * size);
  EXPECT_EQ(nvls_up, 4ull * (size * 8 + size));  // per server: G x S uploads + G x S/G multicasts
}

}  // namespace
}  // namespace genie::netsim

namespace genie::netsim {
namespace {

TEST(RingAlgorithm, MultiServerRingsStayOnRailsAndSpreadOverNics) {
  // 4 x hgx-h100 (32 ranks), 8 channels: every inter-server transfer joins GPUs of the same local index
  // (one NIC rail, no spine hop), and over the channels every one of the 8 rails carries traffic.
  TopologyOptions o;
  o.nodes = 4;
  auto t = load_topology("hgx-h100", o).value();
  CollectiveSpec spec;
  spec.count = 1 << 20;
  spec.nranks = 32;
  Tuning tune;
  tune.nchannels = 8;
  Schedule s = build_schedule(spec, *t, tune).value();
  std::set<int> rails;
  for (const Step& op : s.ops) {
    const int sa = op.src / 8, sb = op.dst / 8;
    if (sa == sb) continue;
    EXPECT_EQ(op.src % 8, op.dst % 8) << op.src << "->" << op.dst;
    rails.insert(op.src % 8);
  }
  EXPECT_EQ(rails.size(), 8u);
  // Still 2(n-1)/n x S per rank.
  for (int r = 0; r < 32; ++r) EXPECT_EQ(s.bytes_sent_by(r), 2ull * 31 * (4u << 20) / 32);
}

TEST(TreeAlgorithm, MultiServerTreeIsChainsPlusServerTree) {
  // 4 servers x 8 GPUs, one channel: NCCL's tree is a chain inside each server and a binary tree over the
  // 4 server heads: reduce-up crosses servers 3 times and broadcast-down 3 times, each with the channel's
  // whole share; all other transfers stay inside a server.
  TopologyOptions o;
  o.nodes = 4;
  auto t = load_topology("hgx-h100", o).value();
  CollectiveSpec spec;
  spec.count = 1 << 16;
  spec.nranks = 32;
  Tuning tune;
  tune.algorithm = Algorithm::kTree;
  tune.nchannels = 1;
  Schedule s = build_schedule(spec, *t, tune).value();
  uint64_t inter = 0, total = 0;
  for (const Step& op : s.ops) {
    total += op.bytes;
    if (op.src / 8 != op.dst / 8) inter += op.bytes;
  }
  EXPECT_EQ(inter, 2ull * 3 * (4u << 16));
  EXPECT_EQ(total, 2ull * 31 * (4u << 16));
}

}  // namespace
}  // namespace genie::netsim

namespace genie::netsim {
namespace {

TEST(PatAlgorithm, LogStepsAndNMinusOneBlocksPerRank) {
  // PAT all-gather / reduce-scatter of B bytes per rank on n ranks (n = 2, 5, 8, 12, 16; 1 GPU per node):
  // ceil(log2 n) steps; at distance 2^d a rank sends ceil((n - 2^d) / 2^(d+1)) blocks (the binomial trees'
  // nodes at that depth), to rank r - 2^d (all-gather) or r + 2^d (reduce-scatter, reducing), so
  // (n-1) x B in all, as a ring. Compact and explicit forms agree.
  TopologyOptions o;
  o.nodes = 16;
  o.gpus_per_node = 1;
  auto t = load_topology("hgx-h100", o).value();
  const uint64_t count = 3 * 1024;
  for (Collective c : {Collective::kAllGather, Collective::kReduceScatter}) {
    for (int n : {2, 5, 8, 12, 16}) {
      SCOPED_TRACE(std::string(collective_name(c)) + " n=" + std::to_string(n));
      CollectiveSpec spec;
      spec.collective = c;
      spec.count = count;
      spec.nranks = n;
      Tuning tune;
      tune.algorithm = Algorithm::kPat;
      tune.nchannels = 2;
      Schedule s = build_schedule(spec, *t, tune).value();
      int steps = 0;
      while ((1 << steps) < n) ++steps;
      EXPECT_EQ(s.num_steps(), static_cast<uint32_t>(steps));
      for (int r = 0; r < n; ++r) EXPECT_EQ(s.bytes_sent_by(r), (n - 1) * count * 4) << "rank " << r;
      std::vector<uint64_t> at_dist(static_cast<size_t>(steps), 0);
      for (const Step& op : s.ops) {
        if (op.src != 0) continue;
        const int dist = c == Collective::kAllGather ? (n - op.dst) % n : op.dst;
        int d = 0;
        while ((1 << d) < dist) ++d;
        ASSERT_EQ(1 << d, dist) << "peer " << op.dst << " is not at a power-of-two distance";
        EXPECT_EQ(op.reduce, c == Collective::kReduceScatter);
        at_dist[static_cast<size_t>(d)] += op.bytes;
      }
      for (int d = 0; d < steps; ++d) {
        const uint64_t blocks = (static_cast<uint64_t>(n) - (1u << d) + (2u << d) - 1) / (2u << d);
        EXPECT_EQ(at_dist[static_cast<size_t>(d)], blocks * count * 4) << "distance " << (1 << d);
      }
      Schedule cs = build_schedule(spec, *t, tune, ScheduleForm::kCompact).value();
      ASSERT_TRUE(cs.is_compact());
      EXPECT_EQ(expand_schedule(cs).ops.size(), s.ops.size());
    }
  }
}

TEST(CollNetAlgorithm, InNetworkReductionTraffic) {
  // CollNet all-reduce of S on K = 4 servers x G = 8 GPUs (hgx-h100 fabric with SHARP), one channel:
  // Chain: per server G-1 reducing NVLink hops up the chain and G-1 down, the head uploads S to the network
  // and downloads S: 2 K S network bytes. Direct: every GPU uploads and downloads its 1/G portion (the same
  // 2 K S in all) after exchanging (G-1)/G x S with the other heads over NVLink each way.
  TopologyOptions o;
  o.nodes = 4;
  auto t = load_topology("hgx-h100", o).value();
  ASSERT_TRUE(t->collnet);
  const uint64_t count = 1 << 20, size = count * 4;
  for (Algorithm a : {Algorithm::kCollNetChain, Algorithm::kCollNetDirect}) {
    SCOPED_TRACE(algorithm_name(a));
    CollectiveSpec spec;
    spec.count = count;
    spec.nranks = 32;
    Tuning tune;
    tune.algorithm = a;
    tune.nchannels = 1;
    tune.chunk_bytes = 1 << 18;
    Schedule s = build_schedule(spec, *t, tune).value();
    uint64_t up = 0, down = 0, intra = 0;
    for (size_t i = 0; i < s.ops.size(); ++i) {
      const Step& op = s.ops[i];
      for (uint32_t d : s.deps_of(i)) ASSERT_LT(d, i);
      if (op.dst == kCollNetEndpoint) up += op.bytes;
      if (op.src == kCollNetEndpoint) {
        down += op.bytes;
        EXPECT_TRUE(op.fused);  // the result returns in the same in-network operation
      }
      if (op.src >= 0 && op.dst >= 0) {
        EXPECT_EQ(op.src / 8, op.dst / 8) << "GPU traffic stays inside a server";
        intra += op.bytes;
      }
    }
    EXPECT_EQ(up, 4 * size);
    EXPECT_EQ(down, 4 * size);
    EXPECT_EQ(intra, a == Algorithm::kCollNetChain ? 4 * 2 * 7 * size : 4 * 8 * 2 * (size - size / 8));
  }
  // Without in-network reduction, or on one server, CollNet does not apply.
  CollectiveSpec spec;
  spec.count = count;
  spec.nranks = 8;
  Tuning tune;
  tune.algorithm = Algorithm::kCollNetDirect;
  EXPECT_EQ(build_schedule(spec, *t, tune).status().message(), "CollNetDirect needs ranks on at least 2 servers");
  auto ring = load_topology("ring:16", {}).value();
  spec.nranks = 16;
  EXPECT_EQ(build_schedule(spec, *ring, tune).status().code(), Errc::kUnsupported);
}

}  // namespace
}  // namespace genie::netsim
