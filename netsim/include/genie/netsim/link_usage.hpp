// SPDX-License-Identifier: Apache-2.0
// LinkUsageSample: the utilisation of one directed link over an interval, recorded by the network models.
#pragma once

#include <cstdint>

#include "genie/common/sim_time.hpp"

namespace genie::netsim {

/// Utilisation of one direction of one link over [start, end): bytes/s carried.
struct LinkUsageSample {
  uint32_t channel = 0;  ///< directed channel id (Topology::channel_link)
  SimTime start;
  SimTime end;
  double bytes_per_s = 0;
};

}  // namespace genie::netsim
