// SPDX-License-Identifier: Apache-2.0
// Tests of algorithm/protocol/channel selection (NCCL tuning model) and the NCCL_* overrides.
#include "algorithms/nccl_tuning.hpp"

#include <gtest/gtest.h>

namespace genie::netsim {
namespace {

CollectiveSpec all_reduce(uint64_t bytes, int n = 8) {
  CollectiveSpec s;
  s.count = bytes / 4;
  s.nranks = n;
  return s;
}

TEST(NcclTuning, ProtocolFollowsSizeOnHgxH100) {
  // NCCL's model on 8 x H100 with NVLS off: LL for small messages (lowest latency), LL128 in the middle,
  // Simple for large ones (highest bandwidth); with NVLS allowed, NVLS wins for large all-reduces.
  auto t = load_topology("hgx-h100", {}).value();
  NcclEnv ring_only;
  ring_only.algo = "Ring";
  EXPECT_EQ(select_tuning(all_reduce(1024), *t, ring_only).value().protocol, Protocol::kLL);
  EXPECT_EQ(select_tuning(all_reduce(8 << 20), *t, ring_only).value().protocol, Protocol::kLL128);
  EXPECT_EQ(select_tuning(all_reduce(1ull << 30), *t, ring_only).value().protocol, Protocol::kSimple);
  EXPECT_EQ(select_tuning(all_reduce(1ull << 30), *t, {}).value().algorithm, Algorithm::kNvls);
  EXPECT_EQ(select_tuning(all_reduce(1024), *t, {}).value().algorithm, Algorithm::kRing);
}

TEST(NcclTuning, SmallOperationsUseFewerChannels) {
  // NCCL drops channels while each would get less than nThreads x threshold bytes: 8 B uses 1 channel,
  // 1 GB uses all 32 of an NVSwitch server.
  auto t = load_topology("hgx-h100", {}).value();
  NcclEnv ring;
  ring.algo = "Ring";
  EXPECT_EQ(select_tuning(all_reduce(8), *t, ring).value().nchannels, 1);
  EXPECT_EQ(select_tuning(all_reduce(1ull << 30), *t, ring).value().nchannels, nccl::kNvSwitchCollChannels);
}

TEST(NcclTuning, EnvOverridesAsNccl) {
  auto t = load_topology("hgx-h100", {}).value();
  NcclEnv e;
  e.proto = "^LL,LL128";  // exclusion list: Simple only
  EXPECT_EQ(select_tuning(all_reduce(1024), *t, e).value().protocol, Protocol::kSimple);
  e = {};
  e.algo = "allreduce:tree;broadcast:ring";  // per-function prefixes
  EXPECT_EQ(select_tuning(all_reduce(1 << 20), *t, e).value().algorithm, Algorithm::kTree);
  e = {};
  e.nvls_enable = 0;
  EXPECT_NE(select_tuning(all_reduce(1ull << 30), *t, e).value().algorithm, Algorithm::kNvls);
  e = {};
  e.algo = "Ring";
  e.min_channels = 4;
  e.max_channels = 4;
  EXPECT_EQ(select_tuning(all_reduce(1ull << 30), *t, e).value().nchannels, 4);
  EXPECT_EQ(select_tuning(all_reduce(8), *t, e).value().nchannels, 4);
  // A minimum over the maximum: NCCL cuts to the maximum, then copies channels up to the minimum (no error).
  e.min_channels = 8;
  e.max_channels = 2;
  EXPECT_EQ(select_tuning(all_reduce(1ull << 30), *t, e).value().nchannels, 8);
  e = {};
  e.algo = "Ring";
  e.proto = "Simple";
  e.buffsize = 1 << 20;  // stepSize 128K, all-reduce chunk 4 steps = 512K
  EXPECT_EQ(select_tuning(all_reduce(1ull << 30), *t, e).value().chunk_bytes, 512u * 1024);
}

TEST(NcclTuning, ImpossibleEnvValuesAreErrors) {
  // Every impossible NCCL_* value is an error naming the variable, the value and why (exact text), both as
  // NcclEnv fields and as environment strings through the config registry.
  auto t = load_topology("hgx-h100", {}).value();
  auto msg = [&](NcclEnv e) { return select_tuning(all_reduce(1024), *t, e).status().message(); };
  NcclEnv e;
  e.algo = "Rng";
  EXPECT_EQ(msg(e),
            "NCCL_ALGO=\"Rng\": unknown value 'Rng' (valid: Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, "
            "PAT, Direct, HalvingDoubling)");
  e = {};
  e.algo = "bcast:Ring";
  EXPECT_EQ(msg(e), "NCCL_ALGO=\"bcast:Ring\": unknown function prefix 'bcast'");
  e = {};
  e.proto = "allreduce:LL;LL128";
  EXPECT_EQ(msg(e), "NCCL_PROTO=\"allreduce:LL;LL128\": all entries except the first must have a 'function:' prefix");
  e = {};
  e.proto = "LL,LL256";
  EXPECT_EQ(msg(e), "NCCL_PROTO=\"LL,LL256\": unknown value 'LL256' (valid: LL, LL128, Simple)");
  e = {};
  e.min_channels = 0;
  EXPECT_EQ(msg(e), "NCCL_MIN_NCHANNELS=0 must be >= 1");
  e = {};
  e.max_channels = -4;
  EXPECT_EQ(msg(e), "NCCL_MAX_NCHANNELS=-4 must be >= 1");
  e = {};
  e.buffsize = 3;
  EXPECT_EQ(msg(e), "NCCL_BUFFSIZE=3 is below the minimum 128 (NCCL_STEPS x 16 bytes)");
  e = {};
  e.buffsize = 0;
  EXPECT_EQ(msg(e), "NCCL_BUFFSIZE=0 must be positive");
  e = {};
  e.nvls_enable = 3;
  EXPECT_EQ(msg(e), "NCCL_NVLS_ENABLE=3 (expected 0, 1 or 2)");
  e = {};
  e.collnet_enable = 2;
  EXPECT_EQ(msg(e), "NCCL_COLLNET_ENABLE=2 (expected 0 or 1)");
  e = {};
  e.pat_enable = 5;
  EXPECT_EQ(msg(e), "NCCL_PAT_ENABLE=5 (expected 0, 1 or 2)");
  e = {};
  e.algo = "Tree";
  CollectiveSpec bc = all_reduce(1024);
  bc.collective = Collective::kBroadcast;
  EXPECT_EQ(select_tuning(bc, *t, e).status().code(), Errc::kUnsupported);
  EXPECT_EQ(select_tuning(bc, *t, e).status().message(),
            "no enabled algorithm/protocol can run broadcast on hgx-h100 (NCCL_ALGO=\"Tree\", NCCL_PROTO=\"\")");
  e = {};
  e.algo = "NVLS";
  e.nvls_enable = 1;
  EXPECT_EQ(select_tuning(all_reduce(1024), *load_topology("dgx-a100", {}).value(), e).status().message(),
            "NCCL_NVLS_ENABLE=1 but topology dgx-a100 has no NVLS (NVSwitch multicast)");
  // The same through the environment: the registry checks types and ranges before netsim sees them.
  const std::pair<const char*, const char*> env_cases[][2] = {
      {{"NCCL_NVLS_ENABLE", "7"},
       {"",
        "environment variable NCCL_NVLS_ENABLE: invalid value '7' for netsim.nccl_nvls_enable (NCCL_NVLS_ENABLE): "
        "above the maximum 2"}},
      {{"NCCL_MAX_NCHANNELS", "many"},
       {"",
        "environment variable NCCL_MAX_NCHANNELS: invalid value 'many' for netsim.nccl_max_nchannels "
        "(NCCL_MAX_NCHANNELS): expected an integer"}},
      {{"NCCL_COLLNET_ENABLE", "2"},
       {"",
        "environment variable NCCL_COLLNET_ENABLE: invalid value '2' for netsim.nccl_collnet_enable "
        "(NCCL_COLLNET_ENABLE): above the maximum 1"}},
      {{"NCCL_PAT_ENABLE", "-1"},
       {"",
        "environment variable NCCL_PAT_ENABLE: invalid value '-1' for netsim.nccl_pat_enable (NCCL_PAT_ENABLE): "
        "below the minimum 0"}},
  };
  for (const auto& c : env_cases) {
    auto cfg = config::Config::load({{c[0].first, c[0].second}});
    ASSERT_FALSE(cfg.is_ok()) << c[0].first;
    EXPECT_EQ(cfg.status().message(), c[1].second);
  }
}

TEST(NcclTuning, ReadsNcclEnvironmentThroughRegistry) {
  config::Config cfg = config::Config::load({{"NCCL_ALGO", "Ring"},
                                             {"NCCL_PROTO", "LL128"},
                                             {"NCCL_BUFFSIZE", "2097152"},
                                             {"NCCL_MIN_NCHANNELS", "2"},
                                             {"NCCL_MAX_NCHANNELS", "8"},
                                             {"NCCL_NVLS_ENABLE", "0"},
                                             {"NCCL_COLLNET_ENABLE", "1"},
                                             {"NCCL_PAT_ENABLE", "0"}})
                           .value();
  const NcclEnv e = NcclEnv::from_config(cfg);
  EXPECT_EQ(e.algo, "Ring");
  EXPECT_EQ(e.proto, "LL128");
  EXPECT_EQ(e.buffsize, 2097152);
  EXPECT_EQ(e.min_channels, 2);
  EXPECT_EQ(e.max_channels, 8);
  EXPECT_EQ(e.nvls_enable, 0);
  EXPECT_EQ(e.collnet_enable, 1);
  EXPECT_EQ(e.pat_enable, 0);
}

}  // namespace
}  // namespace genie::netsim
