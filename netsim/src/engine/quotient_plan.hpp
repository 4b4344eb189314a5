// SPDX-License-Identifier: Apache-2.0
// QuotientPlan: the symmetry classes under which a compact (circulant) Schedule is timed exactly.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/route_cache.hpp"
#include "genie/netsim/schedule.hpp"
#include "genie/netsim/topology.hpp"

namespace genie::netsim {

/// A compact schedule's members p and p + P (mod n) behave identically when rotating every position by P
/// maps the whole simulated system onto itself: the DAG (its dependencies are position-relative), every
/// member's transfer parameters (bytes, latency, wire factor, rate cap) and, in the flow engine, the links
/// members share. Then the engines only need one member per class p mod P, the quotient.
///
/// Flow engine, exactly: a link crossed by the transfers of a single *owner* (one position's issue chain,
/// CompactStep::lane, so at most one of its transfers is in flight) never carries two flows and is replaced by
/// a rate bound (a one-variable constraint is a bound). The other links are *shared*; rotating by P must map
/// them by a bijection sigma preserving capacity with route(p + P) = sigma(route(p)) hop by hop. The quotient
/// lmm system then has one variable per class on one canonical link per sigma-orbit O, with consumption
/// (n/P)/|O| per hop: the max-min solution of a system with an automorphism is invariant under it, so this
/// gives every member exactly the rate it has in the full system. Analytical engine: no contention, so only
/// the per-member parameters need to repeat with period P.
///
/// P is the smallest divisor of n that passes these checks (n itself always does: no symmetry).
struct QuotientPlan {
  /// One class's transfer as a network model sees it.
  struct ClassTransfer {
    int64_t latency_ns = 0;           ///< latency phase (protocol step latency or path latency)
    int64_t min_latency_ns = 0;       ///< least latency when it overlaps its issue predecessor (TransferCost)
    double wire_factor = 1;           ///< wire bytes per payload byte
    double rate_bound = 0;            ///< wire bytes/s cap (flow: also the private links), 0: none
    std::vector<uint32_t> channels;   ///< flow: canonical shared links; analytical: the member's route
    std::vector<double> consumption;  ///< flow: class members on each canonical link (parallel to channels)
  };
  uint32_t n = 0;       ///< members per compact op (ranks)
  uint32_t period = 0;  ///< P, a divisor of n: member p is timed as member p mod P
  uint32_t num_keys = 0;
  std::vector<uint32_t> key_of_op;     ///< compact op -> route key (channel, destination shift)
  std::vector<uint32_t> issue_op;      ///< compact op -> its lane's previous op, or Step::kNoIssueDep
  std::vector<ClassTransfer> classes;  ///< [key * period + x]
  std::vector<uint32_t> footprint;     ///< flow: every directed link some member crosses, sorted
  const ClassTransfer& transfer(uint32_t op, uint32_t x) const { return classes[key_of_op[op] * period + x]; }
};

/// Analyses `s` (which must be compact) for the flow engine (`flow`) or the analytical one. Errors:
/// InvalidArgument for a malformed compact schedule (orders that are not permutations, an op that sends
/// positions to themselves, dependencies on later ops, a lane whose ops are not chained) or a rank placed off
/// the topology; routing errors as is.
Result<QuotientPlan> plan_quotient(const Schedule& s, const Topology& topo, bool flow, bool protocol_overheads,
                                   RouteCache& routes);

}  // namespace genie::netsim
