// SPDX-License-Identifier: Apache-2.0
// The calls a communicator executes, as its Transport and CallTimer see them: a validated collective, the messages
// of a point-to-point batch, and how a wait names the call it is for.
#pragma once

#include <cstdint>
#include <string>

#include "genie/common/sim_time.hpp"
#include "genie/common/status.hpp"
#include "genie/netsim/schedule.hpp"
#include "comm_timing.hpp"
#include "reduce/reduce_kernels.hpp"
#include "shared_segment.hpp"

namespace genie::shim {

class CommTiming;

/// A reduction operator as the API names it: built-in, or a PreMulSum created on this communicator.
struct RedOpSpec {
  ReduceOp kind = ReduceOp::kSum;
  double host_scalar = 1.0;
  const void* device_scalar = nullptr;  ///< ncclScalarDevice: read when the collective runs
  netsim::DataType scalar_type = netsim::DataType::kFloat32;
};

/// One collective call, validated, as enqueued.
struct CollCall {
  netsim::Collective collective = netsim::Collective::kAllReduce;
  uint64_t count = 0;
  netsim::DataType datatype = netsim::DataType::kFloat32;
  int root = 0;
  uint32_t redop_id = 0;  ///< the ncclRedOp_t value (for messages)
  RedOpSpec op;
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  BufferRef send_ref, recv_ref;
  CallTuning tuning;  ///< the call's own configuration (ncclCollConfig_t), if any
  /// Both refs are as peers in other processes map them (on a memfd): a real-fabric call may let peers read in place.
  bool shared = false;

  /// The call as posted for the cross-rank checks.
  CallDesc desc() const {
    return CallDesc{static_cast<uint32_t>(collective), static_cast<uint32_t>(datatype), static_cast<uint32_t>(op.kind),
                    root, count};
  }
  /// This rank's PreMulSum scalar (read from device memory when ncclScalarDevice).
  double scalar() const;
};

/// One send or receive of a point-to-point batch.
struct P2PCall {
  bool is_send = true;
  int peer = 0;
  void* buf = nullptr;
  uint64_t bytes = 0;
  uint64_t count = 0;  ///< as called (bytes = count x the datatype's size): the report shows the call
  netsim::DataType datatype = netsim::DataType::kUint8;
  BufferRef ref;
};

/// A point-to-point call as the transport delivers it and the timer times it.
struct P2PMessage {
  P2PCall call;
  uint64_t index = 0;  ///< its number on its ordered pair of ranks (sender, receiver), from 1: NCCL's per-pair order
  uint64_t moved = 0;  ///< bytes delivered: a send's size, or what a receive got (set by the transport)
  /// When the other side of the message was ready (its virtual ready time; the shared-memory transport learns it,
  /// the real fabric does not: zero).
  SimTime peer_ready = SimTime::zero();
};

/// What a wait is for, rendered only when a message needs it (the common path formats nothing).
struct WaitWhat {
  const CallDesc* desc = nullptr;  ///< a collective, or
  const char* text = "";           ///< a fixed description
  uint64_t seq = 0;
};

/// "AllReduce(count=4, datatype=float32, op=sum)"
std::string describe_call(const CallDesc& d);
/// describe_call + " #seq", or the fixed text.
std::string what_string(const WaitWhat& w);

/// The communicator as its Transport and CallTimer see it while they work for it: who it is, whether it still stands,
/// where a failure goes. Implemented by Communicator (and by unit tests' fakes).
class CommState {
 public:
  virtual int rank() const = 0;
  virtual int nranks() const = 0;
  virtual int cuda_dev() const = 0;
  /// The communicator's key on the coordinator and in reports (Communicator::key).
  virtual uint64_t key() const = 0;
  virtual bool aborted() const = 0;
  /// The asynchronous error (ncclCommGetAsyncError) becomes `why.code()` unless it has one.
  virtual void set_async_error(const Status& why) = 0;
  /// Placement and netsim timing of this communicator's calls.
  virtual CommTiming& timing() = 0;
  /// Whether a transfer of `bytes` moves them (GENIE_DATA, fakecuda::Runtime::moves_bytes): always with copy, only
  /// control data with none. The shared-memory transport asks; the real fabric always moves bytes.
  virtual bool moves_bytes(uint64_t bytes) const = 0;

 protected:
  ~CommState() = default;
};

/// GENIE_HANG_TIMEOUT in seconds (0: wait forever).
double hang_timeout_s();
/// The most bytes of one rank's buffers that `c` spans on a communicator of `nranks`: the largest of its send and
/// receive buffers (count x the datatype's size, times nranks for the gathered or scattered side). Every rank
/// computes the same value for the same call, so they agree on whether it moves bytes (CommState::moves_bytes).
uint64_t span_bytes(const CollCall& c, int nranks);

}  // namespace genie::shim
