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
#include "shared_segment.hpp"
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
  /// Peers read this rank's data where it lies (ranks of one host, shm): a transfer's message carries where its
  /// piece is (a BufferRef) instead of its bytes, the receiver copies or reduces straight from the sender's pages
  /// (mapped once, PeerMemory), and releases the sender when it has read all it needs. Every rank of the call must
  /// set the same value; `in_ref`/`out_ref` are sendbuff and recvbuff as peers map them (PeerMemory::publish).
  bool direct = false;
  BufferRef in_ref, out_ref;
};

/// True when the executor can run schedules of `a` for collective `c` (Ring for all-reduce, all-gather,
/// reduce-scatter, broadcast and reduce; Direct for all-to-all, gather and scatter).
bool executor_supports(netsim::Collective c, netsim::Algorithm a) noexcept;
/// The algorithm the real fabric runs for `c` when the tuning picked one it cannot (Tree, NVLS, ...).
netsim::Algorithm executor_algorithm(netsim::Collective c) noexcept;

class ScheduleExecutor {
 public:
  ScheduleExecutor() = default;
  ~ScheduleExecutor();
  ScheduleExecutor(const ScheduleExecutor&) = delete;
  ScheduleExecutor& operator=(const ScheduleExecutor&) = delete;
  /// Runs this rank's part of `sched` for `call` on `fc`'s data endpoint. Errors as FabricComm::exchange.
  Status run(FabricComm& fc, const netsim::Schedule& sched, const ExecCall& call, const FabricWait& w);
  /// Largest message a transfer is sent in (0: GENIE_SHIM_FABRIC_PIECE_BYTES). Every rank must use the same.
  void set_piece_bytes(uint64_t bytes) { piece_bytes_ = bytes; }

 private:
  /// Received chunks that are reduced and forwarded (and, in direct mode, the copy of an in-place all-to-all's
  /// input): on a memfd, so that peers of a direct call can read it. Kept between calls (pages stay mapped).
  struct Staging {
    char* p = nullptr;
    size_t bytes = 0;
    int fd = -1;
    uint64_t inode = 0;
  };
  Status reserve_staging(size_t bytes);
  /// Forgets the staging area without unmapping it: a failed call's posted receives or peers may still use it.
  void abandon_staging() { staging_ = Staging{}; }
  Staging staging_;
  std::vector<char> alltoall_copy_;  ///< in-place all-to-all: the input, read before it is overwritten
  uint64_t piece_bytes_ = 0;         ///< set_piece_bytes (0: the configured size)
};

}  // namespace genie::shim
