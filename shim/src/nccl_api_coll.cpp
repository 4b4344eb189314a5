// SPDX-License-Identifier: Apache-2.0
// libnccl.so.2, part 2: reduction operators, collectives, point-to-point and groups, with their pncclXxx aliases.
// Arguments are checked before any state is touched; nothing throws across this boundary.
#include <nccl.h>

#include <string>

#include "comm_handle.hpp"
#include "communicator.hpp"
#include "group.hpp"
#include "nccl_api_support.hpp"
#include "nccl_debug.hpp"
#include "peer_memory.hpp"
#include "shim_errors.hpp"

namespace genie::shim {

double scalar_from_bytes(const void* p, netsim::DataType dt);

namespace {

Result<RedOpSpec> to_redop(Communicator& c, int v) {
  if (v >= 0 && v < static_cast<int>(ncclNumOps)) {
    RedOpSpec s;
    s.kind = static_cast<ReduceOp>(v);  // sum, prod, max, min, avg: same order
    return s;
  }
  if (v < 0) return invalid_argument("invalid reduction operator " + std::to_string(v));
  return c.redop(v - static_cast<int>(ncclNumOps));
}

// Bytes each side of a collective touches on this rank.
struct Extents {
  uint64_t send = 0, recv = 0;
};
Result<Extents> extents(netsim::Collective c, uint64_t count, size_t es, int n, bool is_root) {
  const uint64_t n64 = static_cast<uint64_t>(n);
  if (count > (UINT64_MAX / 2) / es / n64) return invalid_argument("count " + std::to_string(count) + " is too large");
  const uint64_t b = count * es;
  switch (c) {
    case netsim::Collective::kAllReduce:
      return Extents{b, b};
    case netsim::Collective::kBroadcast:
      return Extents{is_root ? b : 0, b};
    case netsim::Collective::kReduce:
      return Extents{b, is_root ? b : 0};
    case netsim::Collective::kAllGather:
      return Extents{b, b * n64};
    case netsim::Collective::kReduceScatter:
      return Extents{b * n64, b};
    case netsim::Collective::kAllToAll:
      return Extents{b * n64, b * n64};
    case netsim::Collective::kGather:
      return Extents{b, is_root ? b * n64 : 0};
    case netsim::Collective::kScatter:
      return Extents{is_root ? b * n64 : 0, b};
    case netsim::Collective::kSendRecv:
      break;
  }
  return internal_error("not a collective");
}

Status collective_checked(const char* fn, netsim::Collective kind, const void* sendbuff, void* recvbuff, size_t count,
                          int datatype, int op, int root, ncclComm_t comm, cudaStream_t stream) {
  HostCost cost(!in_group(), fn);  // inside a group, ncclGroupEnd launches (and is charged)
  // The handle holds the communicator for the call: no reference taken (docs/BENCHMARKS.md).
  GENIE_ASSIGN_OR_RETURN(Communicator * c, ready_comm_ptr(comm));
  GENIE_ASSIGN_OR_RETURN(netsim::DataType dt, to_datatype(datatype));
  CollCall call;
  call.collective = kind;
  call.count = count;
  call.datatype = dt;
  call.redop_id = static_cast<uint32_t>(op);
  if (netsim::collective_reduces(kind)) {
    GENIE_ASSIGN_OR_RETURN(call.op, to_redop(*c, op));
  }
  const bool rooted = kind == netsim::Collective::kBroadcast || kind == netsim::Collective::kReduce ||
                      kind == netsim::Collective::kGather || kind == netsim::Collective::kScatter;
  if (rooted && (root < 0 || root >= c->nranks()))
    return invalid_argument("root " + std::to_string(root) + " is out of range for a communicator of " +
                            std::to_string(c->nranks()) + " ranks");
  call.root = rooted ? root : 0;
  // NCCL's "no algorithm/protocol available" (NCCL_ALGO / NCCL_PROTO left none for this collective).
  if (const Status& runs = c->timing().runnable(kind); !runs.is_ok()) return invalid_usage(runs.message());
  GENIE_ASSIGN_OR_RETURN(fakecuda::Stream * s, stream_of(stream, c->cuda_dev()));
  GENIE_ASSIGN_OR_RETURN(Extents ex,
                         extents(kind, count, netsim::datatype_size(dt), c->nranks(), c->rank() == call.root));
  call.sendbuff = sendbuff;
  call.recvbuff = recvbuff;
  if (ex.send) GENIE_TRY(check_ptr(sendbuff, "sendbuff"));
  if (ex.recv) GENIE_TRY(check_ptr(recvbuff, "recvbuff"));
  PeerMemory& pm = PeerMemory::instance();
  GENIE_ASSIGN_OR_RETURN(call.send_ref, pm.publish(c->runtime(), sendbuff, ex.send, "sendbuff", c->cross_process()));
  GENIE_ASSIGN_OR_RETURN(call.recv_ref, pm.publish(c->runtime(), recvbuff, ex.recv, "recvbuff", c->cross_process()));
  // Peers in other processes can map both buffers (they are on memfds): the real fabric may let them read in place.
  call.shared = (ex.send == 0 || call.send_ref.fd >= 0) && (ex.recv == 0 || call.recv_ref.fd >= 0);
  if (nccl_debug_level() >= NcclDebugLevel::kTrace)
    nccl_debug(NcclDebugLevel::kTrace, c->cuda_dev(),
               "%s: sendbuff %p recvbuff %p count %zu datatype %d op %d root %d comm %p [nranks=%d] stream %p", fn,
               sendbuff, recvbuff, count, datatype, op, root, static_cast<void*>(comm), c->nranks(),
               static_cast<void*>(stream));
  if (count == 0) return Status::ok();  // NCCL returns at once for empty collectives
  // NCCL 2.28.9's taskAppend: fp8 reductions need sm90 or newer.
  const bool fp8 = dt == netsim::DataType::kFp8E4M3 || dt == netsim::DataType::kFp8E5M2;
  if (fp8 && netsim::collective_reduces(kind) && c->runtime().device(c->cuda_dev()).spec().cc_major < 9)
    return invalid_argument("FP8 reduction support begins with sm90 capable devices.");
  // On one rank NCCL copies instead of reducing, and a reduction with a scalar (avg, PreMulSum) runs a kernel
  // that NCCL 2.28.9 has for every type but fp8 (ncclLaunchOneRank): it answers ncclInvalidArgument, measured
  // on an H200 (docs/validation.md).
  if (fp8 && c->nranks() == 1 && netsim::collective_reduces(kind) &&
      (call.op.kind == ReduceOp::kAvg || call.op.kind == ReduceOp::kPreMulSum))
    return invalid_argument(std::string(call.op.kind == ReduceOp::kAvg ? "ncclAvg" : "PreMulSum") +
                            " of fp8 on a one-rank communicator: NCCL 2.28.9 has no kernel for it");
  return submit_collective(*c, std::move(call), *s);
}

Status p2p_checked(const char* fn, bool is_send, const void* buf, size_t count, int datatype, int peer,
                   ncclComm_t comm, cudaStream_t stream) {
  HostCost cost(!in_group(), fn);
  // The handle holds the communicator for the call: no reference taken (docs/BENCHMARKS.md).
  GENIE_ASSIGN_OR_RETURN(Communicator * c, ready_comm_ptr(comm));
  GENIE_ASSIGN_OR_RETURN(netsim::DataType dt, to_datatype(datatype));
  if (peer < 0 || peer >= c->nranks())
    return invalid_argument("peer " + std::to_string(peer) + " is out of range for a communicator of " +
                            std::to_string(c->nranks()) + " ranks");
  GENIE_ASSIGN_OR_RETURN(fakecuda::Stream * s, stream_of(stream, c->cuda_dev()));
  const size_t es = netsim::datatype_size(dt);
  if (count > (UINT64_MAX / 2) / es) return invalid_argument("count " + std::to_string(count) + " is too large");
  P2PCall call;
  call.is_send = is_send;
  call.peer = peer;
  call.buf = const_cast<void*>(buf);
  call.bytes = count * es;
  call.count = count;
  call.datatype = dt;
  if (call.bytes) GENIE_TRY(check_ptr(buf, is_send ? "sendbuff" : "recvbuff"));
  GENIE_ASSIGN_OR_RETURN(
      call.ref, PeerMemory::instance().publish(c->runtime(), buf, call.bytes, is_send ? "sendbuff" : "recvbuff",
                                               c->cross_process()));
  if (nccl_debug_level() >= NcclDebugLevel::kTrace)
    nccl_debug(NcclDebugLevel::kTrace, c->cuda_dev(),
               "%s: buff %p count %zu datatype %d peer %d comm %p [nranks=%d] stream %p", fn, buf, count, datatype,
               peer, static_cast<void*>(comm), c->nranks(), static_cast<void*>(stream));
  return submit_p2p(*c, call, *s);
}

}  // namespace
// A call that fails inside a group also fails the group: ncclGroupEnd returns its error and launches none of the
// group's work (NCCL's ncclGroupErrCheck / groupCleanup).
Status collective(const char* fn, netsim::Collective kind, const void* sendbuff, void* recvbuff, size_t count,
                  int datatype, int op, int root, ncclComm_t comm, cudaStream_t stream) {
  return note_call_error(collective_checked(fn, kind, sendbuff, recvbuff, count, datatype, op, root, comm, stream));
}
Status p2p(const char* fn, bool is_send, const void* buf, size_t count, int datatype, int peer, ncclComm_t comm,
           cudaStream_t stream) {
  return note_call_error(p2p_checked(fn, is_send, buf, count, datatype, peer, comm, stream));
}

}  // namespace genie::shim

using namespace genie;        // NOLINT
using namespace genie::shim;  // NOLINT

// ----------------------------------------------------------------------------------------------------
// Reduction operators
GENIE_NCCL_EXPORT ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                                        ncclScalarResidence_t residence, ncclComm_t comm) {
  return guard(__func__, [&]() -> Status {
    GENIE_TRY(check_ptr(op, "op"));
    GENIE_TRY(check_ptr(scalar, "scalar"));
    GENIE_ASSIGN_OR_RETURN(netsim::DataType dt, to_datatype(enum_raw(datatype)));
    GENIE_ASSIGN_OR_RETURN(auto c, ready_comm(comm));
    RedOpSpec s;
    s.kind = ReduceOp::kPreMulSum;
    s.scalar_type = dt;
    if (enum_raw(residence) == ncclScalarHostImmediate) {
      s.host_scalar = scalar_from_bytes(scalar, dt);
    } else if (enum_raw(residence) == ncclScalarDevice) {
      GENIE_TRY(
          PeerMemory::instance().publish(c->runtime(), scalar, netsim::datatype_size(dt), "scalar", false).status());
      s.device_scalar = scalar;
    } else {
      return invalid_argument("residence " + std::to_string(enum_raw(residence)) + " is not a ncclScalarResidence_t");
    }
    GENIE_ASSIGN_OR_RETURN(int id, c->create_redop(s));
    *op = static_cast<ncclRedOp_t>(id + static_cast<int>(ncclNumOps));
    return Status::ok();
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  return guard(__func__, [&]() -> Status {
    if (enum_raw(op) < static_cast<int>(ncclNumOps))
      return invalid_argument("op " + std::to_string(enum_raw(op)) + " is a built-in operator");
    GENIE_ASSIGN_OR_RETURN(auto c, ready_comm(comm));
    return c->destroy_redop(enum_raw(op) - static_cast<int>(ncclNumOps));
  });
}

// ----------------------------------------------------------------------------------------------------
// Collectives and point-to-point
GENIE_NCCL_EXPORT ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                             ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                             cudaStream_t stream) {
  const char* fn = __func__;  // inside the lambda __func__ would be "operator()"
  return guard(fn, [&] {
    return collective(fn, netsim::Collective::kAllReduce, sendbuff, recvbuff, count, enum_raw(datatype),
                      enum_raw(op), 0, comm, stream);
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                             ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  const char* fn = __func__;  // inside the lambda __func__ would be "operator()"
  return guard(fn, [&] {
    return collective(fn, netsim::Collective::kBroadcast, sendbuff, recvbuff, count, enum_raw(datatype), 0, root,
                      comm, stream);
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                                         cudaStream_t stream) {
  const char* fn = __func__;  // inside the lambda __func__ would be "operator()"
  return guard(fn, [&] {
    return collective(fn, netsim::Collective::kBroadcast, buff, buff, count, enum_raw(datatype), 0, root, comm,
                      stream);
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                          ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  const char* fn = __func__;  // inside the lambda __func__ would be "operator()"
  return guard(fn, [&] {
    return collective(fn, netsim::Collective::kReduce, sendbuff, recvbuff, count, enum_raw(datatype),
                      enum_raw(op), root, comm, stream);
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                             ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  const char* fn = __func__;  // inside the lambda __func__ would be "operator()"
  return guard(fn, [&] {
    return collective(fn, netsim::Collective::kAllGather, sendbuff, recvbuff, sendcount, enum_raw(datatype), 0, 0,
                      comm, stream);
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                                 ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                                 cudaStream_t stream) {
  const char* fn = __func__;  // inside the lambda __func__ would be "operator()"
  return guard(fn, [&] {
    return collective(fn, netsim::Collective::kReduceScatter, sendbuff, recvbuff, recvcount, enum_raw(datatype),
                      enum_raw(op), 0, comm, stream);
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                            ncclComm_t comm, cudaStream_t stream) {
  const char* fn = __func__;  // inside the lambda __func__ would be "operator()"
  return guard(fn, [&] {
    return collective(fn, netsim::Collective::kAllToAll, sendbuff, recvbuff, count, enum_raw(datatype), 0, 0,
                      comm, stream);
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                          int root, ncclComm_t comm, cudaStream_t stream) {
  const char* fn = __func__;  // inside the lambda __func__ would be "operator()"
  return guard(fn, [&] {
    return collective(fn, netsim::Collective::kGather, sendbuff, recvbuff, count, enum_raw(datatype), 0, root,
                      comm, stream);
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                           int root, ncclComm_t comm, cudaStream_t stream) {
  const char* fn = __func__;  // inside the lambda __func__ would be "operator()"
  return guard(fn, [&] {
    return collective(fn, netsim::Collective::kScatter, sendbuff, recvbuff, count, enum_raw(datatype), 0, root,
                      comm, stream);
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                                        ncclComm_t comm, cudaStream_t stream) {
  const char* fn = __func__;  // inside the lambda __func__ would be "operator()"
  return guard(fn, [&] { return p2p(fn, true, sendbuff, count, enum_raw(datatype), peer, comm, stream); });
}

GENIE_NCCL_EXPORT ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                                        ncclComm_t comm, cudaStream_t stream) {
  const char* fn = __func__;
  return guard(fn, [&] { return p2p(fn, false, recvbuff, count, enum_raw(datatype), peer, comm, stream); });
}

// ----------------------------------------------------------------------------------------------------
// Groups
GENIE_NCCL_EXPORT ncclResult_t ncclGroupStart() {
  return guard(__func__, [] { return group_start(); });
}

GENIE_NCCL_EXPORT ncclResult_t ncclGroupEnd() {
  return guard(__func__, [] {
    // The outermost end launches the group's work: one modelled launch per communicator and stream.
    HostCost cost(false, "ncclGroupEnd");
    return group_end(nullptr, launch_overhead());
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  return guard(__func__, [&]() -> Status {
    if (simInfo && (simInfo->magic != 0x74685283u || simInfo->size < sizeof(ncclSimInfo_t)))
      return invalid_argument("simInfo is not initialised with NCCL_SIM_INFO_INITIALIZER");
    HostCost cost(false);
    float us = simInfo ? simInfo->estimatedTime : 0;
    GENIE_TRY(group_end(&us));
    if (simInfo) simInfo->estimatedTime = us;
    return Status::ok();
  });
}

// ----------------------------------------------------------------------------------------------------
// pncclXxx: NCCL's profiling aliases.
GENIE_NCCL_ALIAS(ncclResult_t, ncclRedOpCreatePreMulSum,
                 (ncclRedOp_t*, void*, ncclDataType_t, ncclScalarResidence_t, ncclComm_t))
GENIE_NCCL_ALIAS(ncclResult_t, ncclRedOpDestroy, (ncclRedOp_t, ncclComm_t))
GENIE_NCCL_ALIAS(ncclResult_t, ncclAllReduce,
                 (const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t))
GENIE_NCCL_ALIAS(ncclResult_t, ncclBroadcast,
                 (const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t))
GENIE_NCCL_ALIAS(ncclResult_t, ncclBcast, (void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t))
GENIE_NCCL_ALIAS(ncclResult_t, ncclReduce,
                 (const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t, cudaStream_t))
GENIE_NCCL_ALIAS(ncclResult_t, ncclAllGather, (const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t))
GENIE_NCCL_ALIAS(ncclResult_t, ncclReduceScatter,
                 (const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t))
GENIE_NCCL_ALIAS(ncclResult_t, ncclAlltoAll, (const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t))
GENIE_NCCL_ALIAS(ncclResult_t, ncclGather, (const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t))
GENIE_NCCL_ALIAS(ncclResult_t, ncclScatter, (const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t))
GENIE_NCCL_ALIAS(ncclResult_t, ncclSend, (const void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t))
GENIE_NCCL_ALIAS(ncclResult_t, ncclRecv, (void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t))
GENIE_NCCL_ALIAS(ncclResult_t, ncclGroupStart, ())
GENIE_NCCL_ALIAS(ncclResult_t, ncclGroupEnd, ())
GENIE_NCCL_ALIAS(ncclResult_t, ncclGroupSimulateEnd, (ncclSimInfo_t*))
