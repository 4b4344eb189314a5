// SPDX-License-Identifier: Apache-2.0
// CollNet all-reduce (NCCL CollNetChain / CollNetDirect): the inter-server reduction runs in the network
// (NVIDIA SHARP), reached through each head GPU's NIC.
#include <algorithm>
#include <map>

#include "algorithms/dag_builder.hpp"
#include "genie/netsim/topology.hpp"

namespace genie::netsim {

Status build_collnet(const CollectiveSpec& spec, const Topology& topo, const Tuning& t, Schedule* s) {
  const bool direct = t.algorithm == Algorithm::kCollNetDirect;
  const char* name = algorithm_name(t.algorithm);
  if (spec.collective != Collective::kAllReduce) {
    return unsupported(std::string(name) + " implements all_reduce only, not " + collective_name(spec.collective));
  }
  if (!topo.collnet) {
    return unsupported(std::string(name) + " needs in-network reduction; topology " + topo.name +
                       " declares none (preset \"collnet\": {\"in_network_reduction\": true}, or \"collnet\": true in "
                       "a graph, on 2 or more servers)");
  }
  // Ranks by server, each server in GPU order; every server must hold the same number G of ranks.
  std::map<int, std::vector<std::pair<int, int>>> by_server;
  for (int r = 0; r < spec.nranks; ++r) {
    const int g = spec.rank_to_gpu[static_cast<size_t>(r)];
    if (topo.collnet_switch_of_gpu(g) < 0) {
      return unsupported(std::string(name) + ": GPU " + std::to_string(g) + " of rank " + std::to_string(r) +
                         " reaches no fabric switch through a NIC");
    }
    by_server[topo.nodes()[static_cast<size_t>(topo.gpu_node(g))].server].emplace_back(g, r);
  }
  if (by_server.size() < 2) return unsupported(std::string(name) + " needs ranks on at least 2 servers");
  std::vector<std::vector<int>> local;
  for (auto& [srv, grp] : by_server) {
    std::sort(grp.begin(), grp.end());
    local.emplace_back();
    for (const auto& gr : grp) local.back().push_back(gr.second);
    if (local.back().size() != local.front().size()) {
      return invalid_argument(std::string(name) + " needs the same number of ranks on every server");
    }
  }
  if (direct && topo.nic_per_server < static_cast<int>(local.front().size())) {
    return unsupported("CollNetDirect needs a NIC per GPU (every GPU a head); " + topo.name + " has " +
                       std::to_string(topo.nic_per_server) + " NICs for " + std::to_string(local.front().size()) +
                       " ranks per server");
  }
  const auto ns = local.size();
  const auto gl = local.front().size();
  const uint64_t total = spec.count * datatype_size(spec.datatype);
  const int nch = std::max(1, t.nchannels);
  DagBuilder b(s);
  // Per-rank FIFOs of each stage (NCCL's connections): slices stream through a stage in order and stages
  // overlap across slices.
  enum Stage { kIntraUp, kNetUp, kNetDown, kIntraDown, kStages };
  for (int c = 0; c < nch; ++c) {
    const uint64_t ch_bytes = split_part(total, static_cast<uint64_t>(nch), static_cast<uint64_t>(c));
    if (ch_bytes == 0) continue;
    const uint64_t chunk = t.chunk_bytes ? t.chunk_bytes : ch_bytes;
    const uint64_t nslices = std::clamp<uint64_t>((ch_bytes + chunk - 1) / chunk, 1, kMaxTreeSlicesPerChannel);
    std::vector<std::vector<uint32_t>> fifo(kStages,
                                            std::vector<uint32_t>(static_cast<size_t>(spec.nranks), DagBuilder::kNone));
    auto last = [&](int stage, int rank) -> uint32_t& {
      return fifo[static_cast<size_t>(stage)][static_cast<size_t>(rank)];
    };
    for (uint64_t l = 0; l < nslices; ++l) {
      const uint64_t sl = split_part(ch_bytes, nslices, l);
      const auto sl32 = static_cast<uint32_t>(l);
      if (!direct) {
        // Chain: inside each server a chain ending at the head (rotating with the channel, so channels use
        // every GPU's NIC) reduces up; the head reduces with the other servers in the network; the result
        // comes back to the head and is broadcast down the chain.
        const size_t head = static_cast<size_t>(c) % gl;
        std::vector<uint32_t> ups;
        std::vector<uint32_t> at_head(ns);
        for (size_t i = 0; i < ns; ++i) {
          uint32_t prev = DagBuilder::kNone;
          for (size_t j = 0; j + 1 < gl; ++j) {
            const int from = local[i][(head + 1 + j) % gl], to = local[i][(head + 2 + j) % gl];
            prev = b.transfer(from, to, sl, c, static_cast<uint32_t>(j), sl32, true, {prev}, last(kIntraUp, from));
            last(kIntraUp, from) = prev;
          }
          const int h = local[i][head];
          ups.push_back(b.transfer(h, kCollNetEndpoint, sl, c, static_cast<uint32_t>(gl - 1), sl32, true, {prev},
                                   last(kNetUp, h)));
          last(kNetUp, h) = ups.back();
        }
        for (size_t i = 0; i < ns; ++i) {
          const int h = local[i][head];
          // The reduced result returns as part of the same in-network operation: no second step latency.
          at_head[i] =
              b.transfer_v(kCollNetEndpoint, h, sl, c, static_cast<uint32_t>(gl), sl32, false, ups, last(kNetDown, h));
          s->ops.back().fused = true;
          last(kNetDown, h) = at_head[i];
          uint32_t prev = at_head[i];
          for (size_t j = 0; j + 1 < gl; ++j) {
            const int from = local[i][(head + gl - j) % gl], to = local[i][(head + gl - j - 1) % gl];
            prev = b.transfer(from, to, sl, c, static_cast<uint32_t>(gl + 1 + j), sl32, false, {prev},
                              last(kIntraDown, to));
            last(kIntraDown, to) = prev;
          }
        }
        continue;
      }
      // Direct: GPU k of every server is the head of portion k (1/G of the slice). Every GPU sends portion k
      // straight to head k over NVLink (reduce-scatter), the head reduces it in the network with the other
      // servers' head k, and sends the result straight to every GPU of its server (all-gather).
      std::vector<std::vector<uint32_t>> ups(gl);
      for (size_t i = 0; i < ns; ++i) {
        for (size_t k = 0; k < gl; ++k) {
          const uint64_t pb = split_part(sl, gl, k);
          const int h = local[i][k];
          std::vector<uint32_t> in;
          for (size_t a = 0; a < gl; ++a) {
            if (a == k) continue;
            const int from = local[i][a];
            in.push_back(b.transfer(from, h, pb, c, 0, sl32, true, {}, last(kIntraUp, from)));
            last(kIntraUp, from) = in.back();
          }
          ups[k].push_back(b.transfer_v(h, kCollNetEndpoint, pb, c, 1, sl32, true, in, last(kNetUp, h)));
          last(kNetUp, h) = ups[k].back();
        }
      }
      for (size_t i = 0; i < ns; ++i) {
        for (size_t k = 0; k < gl; ++k) {
          const uint64_t pb = split_part(sl, gl, k);
          const int h = local[i][k];
          const uint32_t down = b.transfer_v(kCollNetEndpoint, h, pb, c, 2, sl32, false, ups[k], last(kNetDown, h));
          s->ops.back().fused = true;
          last(kNetDown, h) = down;
          for (size_t a = 0; a < gl; ++a) {
            if (a == k) continue;
            last(kIntraDown, h) = b.transfer(h, local[i][a], pb, c, 3, sl32, false, {down}, last(kIntraDown, h));
          }
        }
      }
    }
  }
  return Status::ok();
}

}  // namespace genie::netsim
