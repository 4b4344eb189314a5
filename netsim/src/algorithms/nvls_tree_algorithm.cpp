// SPDX-License-Identifier: Apache-2.0
// NVLSTree all-reduce (multi-server NVLS): NVLS reduce-scatter inside each server, a tree all-reduce of each
// 1/G portion across servers over the GPUs' own NICs, then NVLS all-gather inside each server. With in-network
// reduction the same shape is NCCL's multi-node NVLS (CollNet+NVLS): SHARP replaces the tree.
#include <algorithm>
#include <map>

#include "algorithms/dag_builder.hpp"
#include "genie/netsim/topology.hpp"

namespace genie::netsim {

Status build_nvls_tree(const CollectiveSpec& spec, const Topology& topo, const Tuning& t, Schedule* s, bool sharp) {
  const char* name = sharp ? "NVLS across servers" : "NVLSTree";
  if (spec.collective != Collective::kAllReduce) {
    return unsupported(std::string(name) + " implements all_reduce only, not " + collective_name(spec.collective));
  }
  // Group ranks by server; every server must hold the same number G of ranks.
  std::map<int, std::vector<std::pair<int, int>>> by_server;
  std::vector<int> servers;
  for (int r = 0; r < spec.nranks; ++r) {
    const int g = spec.rank_to_gpu[static_cast<size_t>(r)];
    const int srv = topo.nodes()[static_cast<size_t>(topo.gpu_node(g))].server;
    if (!by_server.count(srv)) servers.push_back(srv);
    by_server[srv].emplace_back(g, r);
  }
  const int ns = static_cast<int>(servers.size());
  const int gl = static_cast<int>(by_server[servers[0]].size());
  for (auto& [srv, grp] : by_server) {
    std::sort(grp.begin(), grp.end());
    if (static_cast<int>(grp.size()) != gl) {
      return invalid_argument(std::string(name) + " needs the same number of ranks on every server");
    }
  }
  if (ns < 2 || gl < 2) return unsupported(std::string(name) + " needs at least 2 servers with at least 2 ranks each");
  // local[i][k]: rank of local index k on server i.
  std::vector<std::vector<int>> local(static_cast<size_t>(ns));
  for (int i = 0; i < ns; ++i)
    for (const auto& gr : by_server[servers[static_cast<size_t>(i)]])
      local[static_cast<size_t>(i)].push_back(gr.second);

  const uint64_t total = spec.count * datatype_size(spec.datatype);
  const int nch = std::max(1, t.nchannels);
  DagBuilder b(s);
  // Server tree (heap order over server positions; odd channels use the mirrored tree).
  uint32_t depth = 0;
  for (int p = ns - 1; p > 0; p = (p - 1) / 2) ++depth;
  auto level = [](int p) {
    uint32_t d = 0;
    for (; p > 0; p = (p - 1) / 2) ++d;
    return d;
  };
  const uint32_t mc_step = sharp ? 4 : 4 + 2 * depth;
  for (int c = 0; c < nch; ++c) {
    const uint64_t ch_bytes = split_part(total, static_cast<uint64_t>(nch), static_cast<uint64_t>(c));
    if (ch_bytes == 0) continue;
    const uint64_t chunk = t.chunk_bytes ? t.chunk_bytes : 131072;
    const uint64_t loop = chunk * static_cast<uint64_t>(gl);
    const uint64_t nslices = std::clamp<uint64_t>((ch_bytes + loop - 1) / loop, 1, kMaxNvlsSlicesPerChannel);
    auto srv_at = [&](int pos) { return c % 2 == 0 ? pos : ns - 1 - pos; };
    // Per-rank FIFOs of each stage (as the NVLS kernel's warp groups): slices stream through a stage in
    // order, and stages overlap across slices. NVLS stages wait for their previous chunk to finish (see
    // build_nvls); the network stages are connections whose step latency overlaps (Step::issue_dep).
    enum Stage { kUp, kDown, kTreeUp, kTreeDown, kMcUp, kMcDown, kStages };
    std::vector<std::vector<uint32_t>> last(kStages,
                                            std::vector<uint32_t>(static_cast<size_t>(spec.nranks), DagBuilder::kNone));
    auto fifo = [&](int stage, int rank) -> uint32_t& {
      return last[static_cast<size_t>(stage)][static_cast<size_t>(rank)];
    };
    for (uint64_t l = 0; l < nslices; ++l) {
      const uint64_t sl = split_part(ch_bytes, nslices, l);
      const auto sl32 = static_cast<uint32_t>(l);
      // part[i][k]: op after which rank local[i][k] holds its server's partial sum of portion k.
      std::vector<std::vector<uint32_t>> part(static_cast<size_t>(ns), std::vector<uint32_t>(static_cast<size_t>(gl)));
      for (int i = 0; i < ns; ++i) {
        std::vector<uint32_t> ups;
        for (int k = 0; k < gl; ++k) {
          ups.push_back(b.transfer(local[i][k], kNvlsEndpoint, sl, c, 0, sl32, false, {fifo(kUp, local[i][k])}));
          fifo(kUp, local[i][k]) = ups.back();
        }
        for (int k = 0; k < gl; ++k) {
          std::vector<uint32_t> deps = ups;
          deps.push_back(fifo(kDown, local[i][k]));
          part[i][k] = b.transfer_v(kNvlsEndpoint, local[i][k], split_part(sl, gl, k), c, 1, sl32, true, deps);
          fifo(kDown, local[i][k]) = part[i][k];
        }
      }
      // Portion k: tree all-reduce across servers among the ranks of local index k (one NIC rail), or with
      // SHARP an upload of every server's partial and a download of the reduced portion (fused: one
      // in-network operation).
      std::vector<std::vector<uint32_t>> full(static_cast<size_t>(ns), std::vector<uint32_t>(static_cast<size_t>(gl)));
      for (int k = 0; sharp && k < gl; ++k) {
        const uint64_t pb = split_part(sl, gl, k);
        std::vector<uint32_t> ups;
        for (int i = 0; i < ns; ++i) {
          const int me = local[i][k];
          ups.push_back(b.transfer(me, kCollNetEndpoint, pb, c, 2, sl32, true, {part[i][k]}, fifo(kTreeUp, me)));
          fifo(kTreeUp, me) = ups.back();
        }
        for (int i = 0; i < ns; ++i) {
          const int me = local[i][k];
          full[i][k] = b.transfer_v(kCollNetEndpoint, me, pb, c, 3, sl32, false, ups, fifo(kTreeDown, me));
          s->ops.back().fused = true;
          fifo(kTreeDown, me) = full[i][k];
        }
      }
      for (int k = 0; !sharp && k < gl; ++k) {
        const uint64_t pb = split_part(sl, gl, k);
        std::vector<uint32_t> up(static_cast<size_t>(ns), DagBuilder::kNone);
        for (int p = ns - 1; p >= 1; --p) {
          const int c1 = 2 * p + 1, c2 = 2 * p + 2;
          const int me = local[srv_at(p)][k];
          up[p] = b.transfer(
              me, local[srv_at((p - 1) / 2)][k], pb, c, 2 + depth - level(p), sl32, true,
              {part[srv_at(p)][k], c1 < ns ? up[c1] : DagBuilder::kNone, c2 < ns ? up[c2] : DagBuilder::kNone},
              fifo(kTreeUp, me));
          fifo(kTreeUp, me) = up[p];
        }
        full[srv_at(0)][k] = b.transfer(local[srv_at(0)][k], local[srv_at(0)][k], 0, c, 2 + depth, sl32, false,
                                        {part[srv_at(0)][k], up[1], ns > 2 ? up[2] : DagBuilder::kNone});
        s->ops.back().kind = Step::Kind::kReduce;  // root: local completion of the reduction, no traffic
        for (int p = 1; p < ns; ++p) {
          const int me = local[srv_at(p)][k];
          full[srv_at(p)][k] = b.transfer(local[srv_at((p - 1) / 2)][k], me, pb, c, 3 + depth + level(p), sl32, false,
                                          {full[srv_at((p - 1) / 2)][k]}, fifo(kTreeDown, me));
          fifo(kTreeDown, me) = full[srv_at(p)][k];
        }
      }
      // NVLS all-gather inside each server: multicast each fully reduced portion.
      for (int i = 0; i < ns; ++i) {
        std::vector<uint32_t> mc;
        for (int k = 0; k < gl; ++k) {
          mc.push_back(b.transfer(local[i][k], kNvlsEndpoint, split_part(sl, gl, k), c, mc_step, sl32, false,
                                  {full[i][k], fifo(kMcUp, local[i][k])}));
          fifo(kMcUp, local[i][k]) = mc.back();
        }
        for (int k = 0; k < gl; ++k) {
          std::vector<uint32_t> deps = mc;
          deps.push_back(fifo(kMcDown, local[i][k]));
          fifo(kMcDown, local[i][k]) = b.transfer_v(kNvlsEndpoint, local[i][k], sl, c, mc_step + 1, sl32, false, deps);
        }
      }
    }
  }
  return Status::ok();
}

}  // namespace genie::netsim
