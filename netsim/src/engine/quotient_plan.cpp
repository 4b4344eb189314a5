// SPDX-License-Identifier: Apache-2.0
// QuotientPlan: symmetry analysis of compact schedules (period search, private links, link automorphism).
#include "engine/quotient_plan.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>

#include "algorithms/nccl_tuning.hpp"
#include "engine/transfer_cost.hpp"

namespace genie::netsim {

namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
constexpr uint64_t kNoOwner = std::numeric_limits<uint64_t>::max();

/// Everything that decides the timing of one member's transfers apart from the links it shares.
struct MemberSig {
  int64_t latency_ns = 0;
  int64_t min_latency_ns = 0;
  double wire_factor = 1;
  double bound = 0;   // flow: min(protocol cap, private links); analytical: protocol cap
  double min_bw = 0;  // analytical: route bottleneck
  uint32_t nshared = 0;
  bool operator==(const MemberSig&) const = default;
};

uint32_t mod_n(int64_t v, uint32_t n) {
  const int64_t m = v % static_cast<int64_t>(n);
  return static_cast<uint32_t>(m < 0 ? m + n : m);
}

Status validate(const Schedule& s, const Topology& topo) {
  const CompactSchedule& cs = *s.compact;
  const int n = cs.nranks;
  if (n < 1 || n != s.spec.nranks) {
    return invalid_argument("compact schedule has " + std::to_string(n) + " positions for " +
                            std::to_string(s.spec.nranks) + " ranks");
  }
  for (size_t c = 0; c < cs.orders.size(); ++c) {
    const auto& o = cs.orders[c];
    std::vector<char> seen(static_cast<size_t>(n), 0);
    bool ok = static_cast<int>(o.size()) == n;
    for (size_t i = 0; ok && i < o.size(); ++i) {
      ok = o[i] >= 0 && o[i] < n && !seen[static_cast<size_t>(o[i])];
      if (ok) seen[static_cast<size_t>(o[i])] = 1;
    }
    if (!ok)
      return invalid_argument("compact schedule: order of channel " + std::to_string(c) + " is not a permutation");
  }
  for (size_t k = 0; k < cs.ops.size(); ++k) {
    if (cs.ops[k].channel >= cs.orders.size()) {
      return invalid_argument("compact op " + std::to_string(k) + " uses channel " + std::to_string(cs.ops[k].channel) +
                              ", which has no rank order");
    }
    if (mod_n(cs.ops[k].dst_shift, static_cast<uint32_t>(n)) == 0) {
      return invalid_argument("compact op " + std::to_string(k) + " sends every position to itself (dst_shift " +
                              std::to_string(cs.ops[k].dst_shift) + " on " + std::to_string(n) + " ranks)");
    }
    if (cs.ops[k].dep_begin + static_cast<uint64_t>(cs.ops[k].dep_count) > cs.deps.size()) {
      return invalid_argument("compact op " + std::to_string(k) + ": dependencies out of range");
    }
    for (const CompactDep& d : cs.deps_of(k)) {
      if (d.op >= k) return invalid_argument("compact op " + std::to_string(k) + " depends on a later op");
    }
  }
  for (int g : s.spec.rank_to_gpu) {
    if (g < 0 || g >= topo.num_gpus()) return invalid_argument("schedule places a rank on GPU " + std::to_string(g));
  }
  return Status::ok();
}

}  // namespace

Result<QuotientPlan> plan_quotient(const Schedule& s, const Topology& topo, bool flow, bool protocol_overheads,
                                   RouteCache& routes) {
  GENIE_ASSERT(s.compact != nullptr, "plan_quotient needs a compact schedule");
  GENIE_TRY(validate(s, topo));
  const CompactSchedule& cs = *s.compact;
  const auto n = static_cast<uint32_t>(cs.nranks);
  QuotientPlan plan;
  plan.n = n;
  const int nnodes = nccl::comm_shape(s.spec, topo).nnodes;

  // Route keys: members of ops with the same channel and destination shift take the same routes.
  std::map<std::pair<uint16_t, uint32_t>, uint32_t> key_index;
  std::vector<std::pair<uint16_t, uint32_t>> keys;
  plan.key_of_op.resize(cs.ops.size());
  plan.issue_op.assign(cs.ops.size(), Step::kNoIssueDep);
  // Owners: a lane's ops must be chained (each waits for the same member of the lane's previous op).
  std::unordered_map<uint32_t, uint32_t> lane_last, lane_id;
  std::vector<std::vector<uint32_t>> key_owners;
  bool uniform_bytes = true;
  for (uint32_t k = 0; k < cs.ops.size(); ++k) {
    const CompactStep& op = cs.ops[k];
    uniform_bytes &= op.extra == 0;
    const auto kk = std::make_pair(op.channel, mod_n(op.dst_shift, n));
    auto [it, fresh] = key_index.emplace(kk, static_cast<uint32_t>(keys.size()));
    if (fresh) {
      keys.push_back(kk);
      key_owners.emplace_back();
    }
    plan.key_of_op[k] = it->second;
    auto last = lane_last.find(op.lane);
    if (last != lane_last.end()) {
      bool chained = false;
      for (const CompactDep& d : cs.deps_of(k)) chained |= d.op == last->second && mod_n(d.shift, n) == 0;
      if (!chained) {
        return invalid_argument("compact op " + std::to_string(k) + " of lane " + std::to_string(op.lane) +
                                " does not wait for the lane's previous op " + std::to_string(last->second));
      }
    }
    if (last != lane_last.end()) plan.issue_op[k] = last->second;
    lane_last[op.lane] = k;
    const uint32_t owner = lane_id.emplace(op.lane, static_cast<uint32_t>(lane_id.size())).first->second;
    auto& ow = key_owners[it->second];
    if (std::find(ow.begin(), ow.end(), owner) == ow.end()) ow.push_back(owner);
  }
  plan.num_keys = static_cast<uint32_t>(keys.size());

  // Every member's route and transfer cost.
  const size_t km = keys.size() * n;
  std::vector<const Route*> route(km, nullptr);
  std::vector<TransferCost> cost(km);
  for (size_t key = 0; key < keys.size(); ++key) {
    const auto& order = cs.orders[keys[key].first];
    for (uint32_t p = 0; p < n; ++p) {
      const int32_t src = order[p];
      const int32_t dst = order[(p + keys[key].second) % n];
      const size_t i = key * n + p;
      const int sn = topo.gpu_node(s.spec.rank_to_gpu[static_cast<size_t>(src)]);
      const int dn = topo.gpu_node(s.spec.rank_to_gpu[static_cast<size_t>(dst)]);
      GENIE_ASSIGN_OR_RETURN(route[i], routes.get(sn, dn, keys[key].first));
      cost[i] = transfer_cost(topo, s.tuning, nnodes, *route[i], protocol_overheads, false, false);
    }
  }

  // Private and shared links (flow): count the owners (lane, position) crossing each directed link.
  const size_t nlinks = topo.num_channels();
  std::vector<uint8_t> shared;
  if (flow) {
    std::vector<uint64_t> owner(nlinks, kNoOwner);
    shared.assign(nlinks, 0);
    for (size_t key = 0; key < keys.size(); ++key) {
      for (uint32_t g : key_owners[key]) {
        for (uint32_t p = 0; p < n; ++p) {
          const Route* r = route[key * n + p];
          const uint64_t id = static_cast<uint64_t>(g) * n + p;
          for (uint32_t ch : r->channels) {
            if (owner[ch] == kNoOwner) {
              owner[ch] = id;
              plan.footprint.push_back(ch);
            } else if (owner[ch] != id) {
              shared[ch] = 1;
            }
          }
        }
      }
    }
    std::sort(plan.footprint.begin(), plan.footprint.end());
  }

  // Member signatures and shared hops.
  std::vector<MemberSig> sig(km);
  std::vector<uint32_t> hop_off(km + 1, 0);
  std::vector<uint32_t> hops;
  for (size_t i = 0; i < km; ++i) {
    MemberSig& m = sig[i];
    hop_off[i] = static_cast<uint32_t>(hops.size());
    m.latency_ns = cost[i].latency_ns;
    m.min_latency_ns = cost[i].min_latency_ns;
    m.wire_factor = cost[i].wire_factor;
    m.bound = cost[i].rate_bound;
    m.min_bw = std::numeric_limits<double>::infinity();
    for (uint32_t ch : route[i]->channels) {
      const double bw = topo.channel_link(ch).bw_bytes_per_s;
      if (!flow) {
        m.min_bw = std::min(m.min_bw, bw);
      } else if (shared[ch]) {
        hops.push_back(ch);
      } else {
        m.bound = m.bound > 0 ? std::min(m.bound, bw) : bw;
      }
    }
    if (flow) m.min_bw = 0;
    m.nshared = static_cast<uint32_t>(hops.size()) - hop_off[i];
  }
  hop_off[km] = static_cast<uint32_t>(hops.size());

  // Smallest period P | n that maps members, their parameters and (flow) the shared links onto themselves.
  std::vector<uint32_t> sigma, inv, touched;
  if (flow) {
    sigma.assign(nlinks, kNone);
    inv.assign(nlinks, kNone);
  }
  auto try_period = [&](uint32_t P) {
    for (size_t key = 0; key < keys.size(); ++key)
      for (uint32_t p = 0; p < n; ++p)
        if (!(sig[key * n + p] == sig[key * n + (p + P) % n])) return false;
    if (!flow) return true;
    for (uint32_t l : touched) sigma[l] = inv[l] = kNone;
    touched.clear();
    for (size_t key = 0; key < keys.size(); ++key) {
      for (uint32_t p = 0; p < n; ++p) {
        const size_t a = key * n + p, b = key * n + (p + P) % n;
        for (uint32_t h = 0; h < sig[a].nshared; ++h) {
          const uint32_t la = hops[hop_off[a] + h], lb = hops[hop_off[b] + h];
          if (topo.channel_link(la).bw_bytes_per_s != topo.channel_link(lb).bw_bytes_per_s) return false;
          if (sigma[la] == kNone) {
            if (inv[lb] != kNone) return false;  // sigma would not be injective
            sigma[la] = lb;
            inv[lb] = la;
            touched.push_back(la);
            touched.push_back(lb);
          } else if (sigma[la] != lb) {
            return false;
          }
        }
      }
    }
    return true;
  };
  uint32_t period = n;
  if (uniform_bytes) {
    for (uint32_t P = 1; P < n; ++P) {
      if (n % P == 0 && try_period(P)) {
        period = P;
        break;
      }
    }
  }
  if (period == n && flow) {
    // No symmetry: sigma is the identity (every class is one member).
    for (uint32_t l : touched) sigma[l] = inv[l] = kNone;
    for (uint32_t l : hops) sigma[l] = l;
  }
  plan.period = period;
  const uint32_t members = n / period;

  // Orbits of shared links under sigma: canonical link (smallest id) and orbit size.
  std::vector<uint32_t> canon, orbit;
  if (flow) {
    canon.assign(nlinks, kNone);
    orbit.assign(nlinks, 0);
    std::vector<uint32_t> cycle;
    for (uint32_t l : hops) {
      if (canon[l] != kNone) continue;
      cycle.assign(1, l);
      for (uint32_t x = sigma[l]; x != l; x = sigma[x]) {
        GENIE_ASSERT(x != kNone && cycle.size() <= members, "quotient: shared links do not form sigma-orbits");
        cycle.push_back(x);
      }
      GENIE_ASSERT(members % cycle.size() == 0, "quotient: orbit size must divide n/P");
      const uint32_t c = *std::min_element(cycle.begin(), cycle.end());
      for (uint32_t y : cycle) {
        canon[y] = c;
        orbit[y] = static_cast<uint32_t>(cycle.size());
      }
    }
  }

  // One transfer per (route key, class).
  plan.classes.resize(keys.size() * period);
  for (size_t key = 0; key < keys.size(); ++key) {
    for (uint32_t x = 0; x < period; ++x) {
      const size_t i = key * n + x;
      QuotientPlan::ClassTransfer& ct = plan.classes[key * period + x];
      ct.latency_ns = sig[i].latency_ns;
      ct.min_latency_ns = sig[i].min_latency_ns;
      ct.wire_factor = sig[i].wire_factor;
      ct.rate_bound = sig[i].bound;
      if (!flow) {
        ct.channels = route[i]->channels;
        continue;
      }
      for (uint32_t h = hop_off[i]; h < hop_off[i + 1]; ++h) {
        const uint32_t c = canon[hops[h]];
        const double cons = static_cast<double>(members / orbit[hops[h]]);
        auto it = std::find(ct.channels.begin(), ct.channels.end(), c);
        if (it == ct.channels.end()) {
          ct.channels.push_back(c);
          ct.consumption.push_back(cons);
        } else {
          ct.consumption[static_cast<size_t>(it - ct.channels.begin())] += cons;
        }
      }
    }
  }
  return plan;
}

}  // namespace genie::netsim
