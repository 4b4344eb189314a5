// SPDX-License-Identifier: Apache-2.0
// NCCL tuning-model constants and per-protocol costs shared by selection and the simulator.
#pragma once

#include <cstdint>

#include "genie/netsim/schedule.hpp"
#include "genie/netsim/topology.hpp"

namespace genie::netsim::nccl {

/// NCCL_STEPS: slots per connection FIFO (NCCL src/include/device.h).
inline constexpr int kSteps = 8;
/// Default Simple buffer: DEFAULT_BUFFSIZE = 4 MiB (NCCL src/init.cc).
inline constexpr int64_t kDefaultSimpleBuffsize = int64_t{1} << 22;
/// DEFAULT_LL_BUFFSIZE = NCCL_LL_LINES_PER_THREAD(8) * NCCL_LL_MAX_NTHREADS(512) * NCCL_STEPS * 16 B.
inline constexpr int64_t kDefaultLlBuffsize = 8 * 512 * kSteps * 16;
/// DEFAULT_LL128_BUFFSIZE = NCCL_LL128_ELEMS_PER_THREAD(120) * NCCL_LL128_MAX_NTHREADS(640) * NCCL_STEPS * 8 B.
inline constexpr int64_t kDefaultLl128Buffsize = int64_t{120} * 640 * kSteps * 8;
/// MAXCHANNELS (NCCL src/include/device.h).
inline constexpr int kMaxChannels = 64;
/// Ring/tree channels NCCL builds on an NVSwitch server (16 found by the graph search, duplicated to 32;
/// NCCL INFO on HGX H100: "32 coll channels ... 16 nvls channels").
inline constexpr int kNvSwitchCollChannels = 32;
/// NVLS channels on an NVSwitch server (NCCL INFO on HGX H100: "16 nvls channels").
inline constexpr int kNvlsChannels = 16;
/// nvlsChunkSize default 128 KiB (NCCL src/transport/nvls.cc).
inline constexpr int64_t kNvlsChunkBytes = 128 * 1024;
/// Channels of a ring over PCIe or a generic (ASTRA/torus/explicit) graph: NCCL's search finds 2 there.
inline constexpr int kGenericCollChannels = 2;

/// Index of the tuning tables by architecture (Volta, Ampere, Hopper, Blackwell).
int arch_index(const GpuArch& arch) noexcept;
/// NCCL hardware-latency class of a link class.
int hw_class(LinkClass c) noexcept;

/// baseLatencies[algo][proto] in us (NCCL src/graph/tuning.cc ncclTunerConstantsDefaults).
double base_latency_us(Algorithm a, Protocol p) noexcept;
/// hwLatencies[hw][algo][proto] in us (same table): per-step latency on NVLink (0), PCI (1), NET (2).
double hw_latency_us(int hw, Algorithm a, Protocol p) noexcept;

/// What a protocol costs a single transfer of one channel.
struct ProtocolCost {
  int64_t step_latency_ns = 0;  ///< hwLatency of the step on this link class
  double wire_factor = 1.0;     ///< wire bytes per payload byte
  double per_channel_cap = 0;   ///< payload bytes/s cap of one channel (0: none)
};
/// Cost of `p` for algorithm `a` over a link of class `cls`, with `comm_channels` channels configured.
ProtocolCost protocol_cost(const Topology& topo, Algorithm a, Protocol p, LinkClass cls, int comm_channels) noexcept;

/// Channels NCCL would build for `a` on this topology (before NCCL_MIN/MAX_NCHANNELS).
int default_channels(const Topology& topo, Algorithm a) noexcept;
/// Per-channel pipeline chunk for the ring (NCCL: stepSize * chunkSteps; LL halves it; LL128 keeps 120/128).
int64_t ring_chunk_bytes(Collective c, Protocol p, int64_t buffsize) noexcept;

}  // namespace genie::netsim::nccl
