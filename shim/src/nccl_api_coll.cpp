// SPDX-License-Identifier: Apache-2.0
// libnccl.so.2, part 2: reduction operators, collectives, point-to-point and groups, with their pncclXxx aliases.
// Arguments are checked before any state is touched; nothing throws across this boundary.
#include <nccl.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "comm_handle.hpp"
#include "communicator.hpp"
#include "group.hpp"
#include "nccl_api_support.hpp"
#include "nccl_debug.hpp"
#include "one_sided.hpp"
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

// A ncclCollConfig_t (NCCL 2.32's per-call configuration) as this call's tuning, with NCCL's checks: the struct is read
// up to its size over NCCL_COLLCONFIG_INITIALIZER, so an older, shorter one works.
Status call_config(const ncclCollConfig_t* config, CallTuning* t, cudaEvent_t* launch_event) {
  *launch_event = nullptr;
  if (config == nullptr) return Status::ok();
  ncclCollConfig_t c = NCCL_COLLCONFIG_INITIALIZER;
  size_t size = 0;
  std::memcpy(&size, config, sizeof(size));
  if (size < offsetof(ncclCollConfig_t, ext))
    return invalid_argument("config: ncclCollConfig_t size " + std::to_string(size) + " is too small");
  std::memcpy(&c, config, std::min(size, sizeof(c)));
  if (c.magic != NCCL_API_MAGIC)
    return invalid_argument("config: ncclCollConfig_t not initialized with NCCL_COLLCONFIG_INITIALIZER");
  constexpr int kUndef = NCCL_CONFIG_UNDEF_INT;
  if ((c.minCTAs != kUndef && c.minCTAs <= 0) || (c.maxCTAs != kUndef && c.maxCTAs <= 0) ||
      (c.minCTAs != kUndef && c.maxCTAs != kUndef && c.minCTAs > c.maxCTAs))
    return invalid_argument("config: invalid minCTAs/maxCTAs " + std::to_string(c.minCTAs) + "/" +
                            std::to_string(c.maxCTAs));
  if (c.nvlsCTAs != kUndef && c.nvlsCTAs <= 0) return invalid_argument("config: invalid nvlsCTAs");
  if (c.cgaClusterSize != kUndef && c.cgaClusterSize < 0) return invalid_argument("config: invalid cgaClusterSize");
  if (c.CTAPolicy != kUndef && (c.CTAPolicy & ~(NCCL_CTA_POLICY_EFFICIENCY | NCCL_CTA_POLICY_ZERO)) != 0)
    return invalid_argument("config: invalid CTAPolicy " + std::to_string(c.CTAPolicy));
  if (c.forceAlgSelection != 0 && c.forceAlgSelection != 1)
    return invalid_argument("config: forceAlgSelection must be 0 or 1");
  if (c.minCTAs != kUndef) t->min_ctas = c.minCTAs;
  if (c.maxCTAs != kUndef) t->max_ctas = c.maxCTAs;
  if (c.algSelection != nullptr && *c.algSelection != '\0') {
    t->algo = c.algSelection;
    if (t->algo.size() >= 32)
      return invalid_argument("config: algSelection '" + t->algo + "' is longer than Genie's 31 characters");
    t->force_algo = c.forceAlgSelection == 1;
  }
  if (size >= offsetof(ncclCollConfig_t, launchCompletionEvent) + sizeof(cudaEvent_t))
    *launch_event = c.launchCompletionEvent;
  return Status::ok();
}

Status collective_checked(const char* fn, netsim::Collective kind, const void* sendbuff, void* recvbuff, size_t count,
                          int datatype, int op, int root, ncclComm_t comm, cudaStream_t stream,
                          const ncclCollConfig_t* config) {
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
  cudaEvent_t launch_event = nullptr;
  GENIE_TRY(call_config(config, &call.tuning, &launch_event));
  if (!call.tuning.algo.empty()) {
    // The selection must leave this collective an algorithm NCCL could run here; unless forced, it falls back.
    Status sel = c->timing().runnable_with(kind, call.tuning);
    if (!sel.is_ok() && call.tuning.force_algo)
      return invalid_argument("config: algSelection '" + call.tuning.algo + "': " + sel.message());
    if (!sel.is_ok()) call.tuning.algo.clear();
  }
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
  if (launch_event != nullptr) {
    // Recorded where the collective's kernel would be launched: after the stream's earlier work.
    fakecuda::Event* e = c->runtime().resolve_event(launch_event);
    if (e == nullptr) return invalid_argument("config: launchCompletionEvent is not a valid CUDA event");
    GENIE_TRY(c->runtime().record_event(*e, *s));
  }
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
                  int datatype, int op, int root, ncclComm_t comm, cudaStream_t stream,
                  const ncclCollConfig_t* config = nullptr) {
  return note_call_error(
      collective_checked(fn, kind, sendbuff, recvbuff, count, datatype, op, root, comm, stream, config));
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
// Collectives with a per-call configuration (NCCL 2.31): config NULL is the plain call.
#define GENIE_COLL_CONFIG(name, kind, send, recv, count, op, root)                                       \
  {                                                                                                     \
    const char* fn = name;                                                                              \
    return guard(fn, [&] {                                                                              \
      return collective(fn, kind, send, recv, count, enum_raw(datatype), op, root, comm, stream, config); \
    });                                                                                                 \
  }
GENIE_NCCL_EXPORT ncclResult_t ncclAllReduceConfig(const void* sendbuff, void* recvbuff, size_t count,
                                                   ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                                   cudaStream_t stream, const ncclCollConfig_t* config)
    GENIE_COLL_CONFIG("ncclAllReduceConfig", netsim::Collective::kAllReduce, sendbuff, recvbuff, count, enum_raw(op), 0)
GENIE_NCCL_EXPORT ncclResult_t ncclBroadcastConfig(const void* sendbuff, void* recvbuff, size_t count,
                                                   ncclDataType_t datatype, int root, ncclComm_t comm,
                                                   cudaStream_t stream, const ncclCollConfig_t* config)
    GENIE_COLL_CONFIG("ncclBroadcastConfig", netsim::Collective::kBroadcast, sendbuff, recvbuff, count, 0, root)
GENIE_NCCL_EXPORT ncclResult_t ncclReduceConfig(const void* sendbuff, void* recvbuff, size_t count,
                                                ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
                                                cudaStream_t stream, const ncclCollConfig_t* config)
    GENIE_COLL_CONFIG("ncclReduceConfig", netsim::Collective::kReduce, sendbuff, recvbuff, count, enum_raw(op), root)
GENIE_NCCL_EXPORT ncclResult_t ncclAllGatherConfig(const void* sendbuff, void* recvbuff, size_t sendcount,
                                                   ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream,
                                                   const ncclCollConfig_t* config)
    GENIE_COLL_CONFIG("ncclAllGatherConfig", netsim::Collective::kAllGather, sendbuff, recvbuff, sendcount, 0, 0)
GENIE_NCCL_EXPORT ncclResult_t ncclReduceScatterConfig(const void* sendbuff, void* recvbuff, size_t recvcount,
                                                       ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                                       cudaStream_t stream, const ncclCollConfig_t* config)
    GENIE_COLL_CONFIG("ncclReduceScatterConfig", netsim::Collective::kReduceScatter, sendbuff, recvbuff, recvcount,
                      enum_raw(op), 0)
GENIE_NCCL_EXPORT ncclResult_t ncclAlltoAllConfig(const void* sendbuff, void* recvbuff, size_t count,
                                                  ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream,
                                                  const ncclCollConfig_t* config)
    GENIE_COLL_CONFIG("ncclAlltoAllConfig", netsim::Collective::kAllToAll, sendbuff, recvbuff, count, 0, 0)
GENIE_NCCL_EXPORT ncclResult_t ncclGatherConfig(const void* sendbuff, void* recvbuff, size_t count,
                                                ncclDataType_t datatype, int root, ncclComm_t comm,
                                                cudaStream_t stream, const ncclCollConfig_t* config)
    GENIE_COLL_CONFIG("ncclGatherConfig", netsim::Collective::kGather, sendbuff, recvbuff, count, 0, root)
GENIE_NCCL_EXPORT ncclResult_t ncclScatterConfig(const void* sendbuff, void* recvbuff, size_t count,
                                                 ncclDataType_t datatype, int root, ncclComm_t comm,
                                                 cudaStream_t stream, const ncclCollConfig_t* config)
    GENIE_COLL_CONFIG("ncclScatterConfig", netsim::Collective::kScatter, sendbuff, recvbuff, count, 0, root)
#undef GENIE_COLL_CONFIG

// ----------------------------------------------------------------------------------------------------
// One-sided communication (NCCL 2.29): one_sided.hpp
namespace {
Status one_sided_args(int sigIdx, int ctx, unsigned flags) {
  // NCCL 2.29-2.32: "It must be set to 0 for now" for all three.
  if (sigIdx != 0) return invalid_argument("sigIdx " + std::to_string(sigIdx) + " must be 0");
  if (ctx != 0) return invalid_argument("ctx " + std::to_string(ctx) + " must be 0");
  if (flags != 0) return invalid_argument("flags " + std::to_string(flags) + " must be 0");
  return Status::ok();
}

Status put_signal(const char* fn, const void* localbuff, size_t count, int datatype, int peer, ncclWindow_t peerWin,
                  size_t peerWinOffset, int sigIdx, int ctx, unsigned flags, ncclComm_t comm, cudaStream_t stream) {
  HostCost cost(!in_group(), fn);
  GENIE_ASSIGN_OR_RETURN(Communicator * c, ready_comm_ptr(comm));
  GENIE_TRY(one_sided_args(sigIdx, ctx, flags));
  if (peer < 0 || peer >= c->nranks())
    return invalid_argument("peer " + std::to_string(peer) + " is out of range for a communicator of " +
                            std::to_string(c->nranks()) + " ranks");
  GENIE_ASSIGN_OR_RETURN(fakecuda::Stream * s, stream_of(stream, c->cuda_dev()));
  PutCall call;
  call.peer = peer;
  if (fn[4] == 'P') {  // ncclPutSignal
    GENIE_ASSIGN_OR_RETURN(netsim::DataType dt, to_datatype(datatype));
    GENIE_ASSIGN_OR_RETURN(Window * w, window_of(comm, peerWin, "peerWin"));
    const size_t es = netsim::datatype_size(dt);
    if (count > (UINT64_MAX / 2) / es) return invalid_argument("count " + std::to_string(count) + " is too large");
    call.bytes = count * es;
    call.count = count;
    call.datatype = dt;
    call.win = w;
    call.offset = peerWinOffset;
    if (call.bytes) GENIE_TRY(check_ptr(localbuff, "localbuff"));
    const uint64_t peer_size = w->sizes[static_cast<size_t>(peer)];
    if (peerWinOffset > peer_size || call.bytes > peer_size - peerWinOffset)
      return invalid_argument("peerWinOffset " + std::to_string(peerWinOffset) + " + " + std::to_string(call.bytes) +
                              " bytes is past the end of rank " + std::to_string(peer) + "'s window (" +
                              std::to_string(peer_size) + " bytes)");
    GENIE_TRY(PeerMemory::instance().publish(c->runtime(), localbuff, call.bytes, "localbuff", false).status());
    call.src = localbuff;
  } else if (!c->has_windows()) {
    return invalid_usage("ncclSignal before any window was registered on the communicator: Genie sets up signals "
                         "with the first ncclCommWindowRegister");
  }
  if (nccl_debug_level() >= NcclDebugLevel::kTrace)
    nccl_debug(NcclDebugLevel::kTrace, c->cuda_dev(), "%s: localbuff %p count %zu peer %d offset %zu comm %p stream %p",
               fn, localbuff, count, peer, peerWinOffset, static_cast<void*>(comm), static_cast<void*>(stream));
  return c->enqueue_put(call, *s);
}
}  // namespace

GENIE_NCCL_EXPORT ncclResult_t ncclPutSignal(const void* localbuff, size_t count, ncclDataType_t datatype, int peer,
                                             ncclWindow_t peerWin, size_t peerWinOffset, int sigIdx, int ctx,
                                             unsigned int flags, ncclComm_t comm, cudaStream_t stream) {
  const char* fn = __func__;
  return guard(fn, [&] {
    return note_call_error(put_signal(fn, localbuff, count, enum_raw(datatype), peer, peerWin, peerWinOffset, sigIdx,
                                      ctx, flags, comm, stream));
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclSignal(int peer, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm,
                                          cudaStream_t stream) {
  const char* fn = __func__;
  return guard(fn, [&] {
    return note_call_error(put_signal(fn, nullptr, 0, 0, peer, nullptr, 0, sigIdx, ctx, flags, comm, stream));
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclWaitSignal(int nDesc, ncclWaitSignalDesc_t* signalDescs, ncclComm_t comm,
                                              cudaStream_t stream) {
  const char* fn = __func__;
  return guard(fn, [&]() -> Status {
    return note_call_error([&]() -> Status {
      HostCost cost(!in_group(), fn);
      GENIE_ASSIGN_OR_RETURN(Communicator * c, ready_comm_ptr(comm));
      if (nDesc < 0) return invalid_argument("nDesc " + std::to_string(nDesc) + " must not be negative");
      if (nDesc > 0) GENIE_TRY(check_ptr(signalDescs, "signalDescs"));
      GENIE_ASSIGN_OR_RETURN(fakecuda::Stream * s, stream_of(stream, c->cuda_dev()));
      std::vector<SignalWait> waits;
      for (int i = 0; i < nDesc; ++i) {
        const ncclWaitSignalDesc_t& d = signalDescs[i];
        const std::string at = "signalDescs[" + std::to_string(i) + "].";
        if (d.opCnt < 0) return invalid_argument(at + "opCnt " + std::to_string(d.opCnt) + " must not be negative");
        if (d.peer < 0 || d.peer >= c->nranks())
          return invalid_argument(at + "peer " + std::to_string(d.peer) + " is out of range");
        GENIE_TRY(one_sided_args(d.sigIdx, d.ctx, 0));
        if (d.opCnt > 0) waits.push_back({d.peer, static_cast<uint64_t>(d.opCnt)});
      }
      if (!waits.empty() && !c->has_windows())
        return invalid_usage("ncclWaitSignal before any window was registered on the communicator: Genie sets up "
                             "signals with the first ncclCommWindowRegister");
      return c->enqueue_wait_signal(std::move(waits), *s);
    }());
  });
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
GENIE_NCCL_ALIAS(ncclResult_t, ncclAllReduceConfig,
                 (const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t,
                  const ncclCollConfig_t*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclBroadcastConfig,
                 (const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t, const ncclCollConfig_t*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclReduceConfig,
                 (const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t, cudaStream_t,
                  const ncclCollConfig_t*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclAllGatherConfig,
                 (const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t, const ncclCollConfig_t*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclReduceScatterConfig,
                 (const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t,
                  const ncclCollConfig_t*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclAlltoAllConfig,
                 (const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t, const ncclCollConfig_t*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclGatherConfig,
                 (const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t, const ncclCollConfig_t*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclScatterConfig,
                 (const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t, const ncclCollConfig_t*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclPutSignal,
                 (const void*, size_t, ncclDataType_t, int, ncclWindow_t, size_t, int, int, unsigned int, ncclComm_t,
                  cudaStream_t))
GENIE_NCCL_ALIAS(ncclResult_t, ncclSignal, (int, int, int, unsigned int, ncclComm_t, cudaStream_t))
GENIE_NCCL_ALIAS(ncclResult_t, ncclWaitSignal, (int, ncclWaitSignalDesc_t*, ncclComm_t, cudaStream_t))
GENIE_NCCL_ALIAS(ncclResult_t, ncclGroupStart, ())
GENIE_NCCL_ALIAS(ncclResult_t, ncclGroupEnd, ())
GENIE_NCCL_ALIAS(ncclResult_t, ncclGroupSimulateEnd, (ncclSimInfo_t*))
