// SPDX-License-Identifier: Apache-2.0
// NCCL tuning-model constants and per-protocol costs shared by selection and the simulator.
#pragma once

#include <cstdint>
#include <vector>

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
/// PAT chunks are halved down to 64 KiB (enqueue.cc calcCollChunking).
inline constexpr uint64_t kPatMinChunkBytes = 65536;
/// CollNetChain chunk cap: min(256 KiB, stepSize) (enqueue.cc calcCollChunking).
inline constexpr uint64_t kCollNetChainMaxChunkBytes = 256 * 1024;

// Tables of NCCL 2.28.9 src/graph/tuning.cc (ncclTunerConstantsDefaults). Column order of the per-algorithm
// tables: Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT; protocols LL, LL128, Simple;
// architectures Volta, Ampere, Hopper, Blackwell; node columns 1, 2, more than 2 nodes.
/// baseLatencies in us.
inline constexpr double kBaseLat[7][3] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0},      {0, 0, 0},
                                          {0, 0, 0},        {0, 0, 0},        {8.0, 8.0, 8.0}};
/// hwLatencies[NVLINK, PCI, NET] in us.
inline constexpr double kHwLat[3][7][3] = {
    /* NVLINK */ {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0}},
    /* PCI */ {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}},
    /* NET */ {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14}}};
/// llMaxBws in GB/s: LL bus-bandwidth ceiling (row by GPU arch on one node, by CPU vendor across nodes).
inline constexpr double kLlMaxBw[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
/// perChMaxRingLL128Bws in GB/s.
inline constexpr double kPerChRingLl128Bw[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {73.4, 34.6, 73.4}};
/// perChMaxTreeLL128Bws in GB/s.
inline constexpr double kPerChTreeLl128Bw[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
/// perChMaxTreeBws in GB/s.
inline constexpr double kPerChTreeBw[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
/// perChMaxNVLSTreeBws in GB/s.
inline constexpr double kPerChNvlsTreeBw[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 43.8}};
/// treeCorrectionFactor[proto][log2(bytes / 64)] for 64 B .. 256 MiB (tuning.cc): trees fall short of the model
/// at medium sizes.
inline constexpr double kTreeCorrection[3][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};
/// LL128 ring efficiency factor 0.92 (~120/128 payload per line), NCCL tuning.cc.
inline constexpr double kLl128Efficiency = 0.92;
/// LL: half of every 16-byte line is flags (NCCL tuning.cc "busBw * .5").
inline constexpr double kLlEfficiency = 0.5;
inline constexpr double kGbps = 1e9;

/// Column of an algorithm in the tables above (Direct/HalvingDoubling use Ring's).
int algo_col(Algorithm a) noexcept;
/// Index of the tuning tables by architecture (Volta, Ampere, Hopper, Blackwell).
int arch_index(const GpuArch& arch) noexcept;
/// Node column of the tables: 1 node, 2 nodes, more.
int node_index(int nnodes) noexcept;
/// Row of llMaxBws: GPU architecture on one node, CPU vendor (AMD: 1, else 0) across nodes.
int ll_index(const Topology& topo, int nnodes) noexcept;
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
/// Cost of `p` for algorithm `a` over a link of class `cls`, with `comm_channels` channels configured, in a
/// communicator spanning `nnodes` servers.
ProtocolCost protocol_cost(const Topology& topo, Algorithm a, Protocol p, LinkClass cls, int comm_channels,
                           int nnodes) noexcept;

/// getNetOverhead (tuning.cc) in ns: host cost of posting one network step, 2 us on AMD hosts and 1 us
/// otherwise, three times that for Simple.
int64_t net_overhead_ns(const Topology& topo, Protocol p) noexcept;
/// Channels NCCL would build for `a` on this topology (before NCCL_MIN/MAX_NCHANNELS).
int default_channels(const Topology& topo, Algorithm a) noexcept;
/// Per-channel pipeline chunk for the ring (NCCL: stepSize * chunkSteps; LL halves it; LL128 keeps 120/128).
int64_t ring_chunk_bytes(Collective c, Protocol p, int64_t buffsize) noexcept;
/// Pipeline chunk of `t` for a `bytes`-byte operation (NCCL's nBytes) with buffer size `buffsize` (enqueue.cc
/// calcCollChunking): ring/tree chunks, NVLS's nvlsChunkSize, PAT's step halved while the channels would get
/// fewer than 32 (all-gather) / 16 (reduce-scatter) chunks, CollNet's depth-dependent halving.
int64_t chunk_bytes(const CollectiveSpec& spec, const Tuning& t, int64_t buffsize, uint64_t bytes) noexcept;

/// The facts of a communicator NCCL's model uses, from its rank placement on a topology.
struct CommShape {
  int nranks = 0;
  int nnodes = 1;           ///< servers holding ranks
  int max_local_ranks = 0;  ///< most ranks on one server
  double ppn = 1;           ///< ranks per node
  bool nvlink = false;      ///< GPUs of a server talk over NVLink (NCCL typeIntra LINK_NVL), else PCI
  bool nvswitch = false;    ///< through an NVSwitch
  double intra_gbps = 0;    ///< a GPU's intra-server bandwidth (NVLink sum, or NCCL's PCI_BW 12 GB/s)
  double inter_gbps = 0;    ///< NIC bandwidth of a server's ranks
  double bus_gbps = 0;      ///< nChannels x bw of a ring/tree graph: intra, capped by inter across servers
};
CommShape comm_shape(const CollectiveSpec& spec, const Topology& topo);

/// One (algorithm, protocol) of NCCL's tuning table for a call: latency (us), algorithm bandwidth (GB/s) and
/// the predicted time lat + bytes / bw (ncclTopoGetAlgoTime).
struct ModelEntry {
  Algorithm algo;
  Protocol proto;
  double lat_us;
  double bw_gbps;
  double time_us;
};
/// NCCL's tuning model (ncclTopoTuneModel, ncclTopoGetAlgoTime) for `spec` on `topo`: every (algorithm,
/// protocol) that NCCL would consider and `env` allows, with NCCL's formulas and tables. Errors: the
/// InvalidArgument of a bad NCCL_* value.
Result<std::vector<ModelEntry>> tuning_table(const CollectiveSpec& spec, const Topology& topo, const NcclEnv& env);

}  // namespace genie::netsim::nccl
