// SPDX-License-Identifier: Apache-2.0
// ScheduleExecutor: one rank's CPU execution of a collective's Schedule over the real fabric. Each transfer
// of the DAG that this rank sends or receives becomes a tagged message of its chunk (channel x slice x ring
// block, as NCCL pipelines them); received chunks that the Schedule reduces are combined on the CPU with the
// shim's vectorised kernels and forwarded, so the bytes that cross the fabric are exactly the Schedule's.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "genie/common/status.hpp"
#include "genie/netsim/schedule.hpp"
#include "reduce/reduce_kernels.hpp"
#include "transport/fabric_comm.hpp"

namespace genie::shim {

/// One collective call as the executor sees it (local buffers of this rank).
struct ExecCall {
  netsim::Collective collective = netsim::Collective::kAllReduce;
  uint64_t count = 0;  ///< as passed to NCCL (see netsim::CollectiveSpec::count)
  netsim::DataType datatype = netsim::DataType::kFloat32;
  int root = 0;
  ReduceOp op = ReduceOp::kSum;
  std::vector<double> scalars;  ///< PreMulSum scalar of every rank (1.0 when unused)
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  uint64_t seq = 0;  ///< the communicator's call number (message tags)
};

/// True when the executor can run schedules of `a` for collective `c` (Ring for all-reduce, all-gather,
/// reduce-scatter, broadcast and reduce; Direct for all-to-all, gather and scatter).
bool executor_supports(netsim::Collective c, netsim::Algorithm a) noexcept;
/// The algorithm the real fabric runs for `c` when the tuning picked one it cannot (Tree, NVLS, ...).
netsim::Algorithm executor_algorithm(netsim::Collective c) noexcept;

class ScheduleExecutor {
 public:
  /// Runs this rank's part of `sched` for `call` on `fc`'s data endpoint. Errors as FabricComm::exchange.
  Status run(FabricComm& fc, const netsim::Schedule& sched, const ExecCall& call, const FabricWait& w);
  /// Largest message a transfer is sent in (0: GENIE_SHIM_FABRIC_PIECE_BYTES). Every rank must use the same.
  void set_piece_bytes(uint64_t bytes) { piece_bytes_ = bytes; }

 private:
  std::unique_ptr<char[]> staging_;  ///< received chunks that are reduced (kept: pages stay mapped)
  size_t staging_bytes_ = 0;
  std::vector<char> alltoall_copy_;  ///< in-place all-to-all: the input, read before it is overwritten
  uint64_t piece_bytes_ = 0;         ///< set_piece_bytes (0: the configured size)
};

}  // namespace genie::shim
