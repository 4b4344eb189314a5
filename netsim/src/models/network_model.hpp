// SPDX-License-Identifier: Apache-2.0
// NetworkModel: the Model interface plus how the simulator starts a transfer on it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "genie/common/model.hpp"
#include "genie/common/sim_time.hpp"
#include "genie/netsim/link_usage.hpp"

namespace genie::netsim {

/// One transfer as a network model sees it: the directed channels it crosses, its size on the wire, a
/// latency phase paid before any byte moves, and an optional rate cap.
struct TransferRequest {
  std::span<const uint32_t> channels;  ///< route; empty for a same-node transfer (latency only)
  /// Flow model: units of each channel consumed per unit of rate (parallel to `channels`; empty: 1 each).
  /// A symmetry class of k identical flows is one action whose rate is each member's rate and whose
  /// consumption of a link is the number of members crossing it (see engine/quotient_plan.hpp).
  std::span<const double> consumption;
  double wire_bytes = 0;
  SimTime latency;
  double rate_bound_bytes_per_s = 0;  ///< 0: none
  /// Analytical model only: how many equal flows of the same collective share each link (its channel
  /// count), since that model does not see contention.
  int share_divisor = 1;
};

/// A Model that carries transfers. start() may be called from inside a completion callback.
class NetworkModel : public Model {
 public:
  /// Starts action `id` at time `now`.
  virtual void start(uint64_t id, const TransferRequest& req, SimTime now) = 0;
  /// Replaces in-flight action `id`, a symmetry class of identical transfers, by its members (`ids[i]`
  /// crossing `members[i].channels`), each continuing from exactly the class's progress at `now`: same
  /// latency end, remaining bytes, rate and predicted end, so the run continues as if the members had
  /// been separate from the start. Only the flow model has contention that can call for this.
  virtual void split(uint64_t id, SimTime now, std::span<const uint64_t> ids,
                     std::span<const TransferRequest> members) = 0;
  /// Number of actions in flight.
  virtual size_t active() const = 0;
  /// Link usage samples when recording is on.
  virtual const std::vector<LinkUsageSample>& usage() const = 0;
  /// Records no more link usage from now on (the samples so far stay).
  virtual void stop_recording() = 0;
};

}  // namespace genie::netsim
