// SPDX-License-Identifier: Apache-2.0
// cudart ABI: streams, events, host functions, stream capture and graphs.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#if GENIE_CUDART_MAJOR == 12
// The CUDA 13 header declares the 13.x signature; the 12.x library exports a different one.
#define cudaStreamGetCaptureInfo genie_cuda13_cudaStreamGetCaptureInfo
#define cudaStreamUpdateCaptureDependencies genie_cuda13_cudaStreamUpdateCaptureDependencies
#define cudaGraphAddNode genie_cuda13_cudaGraphAddNode
#endif
#include "genie/fakecuda/graph.hpp"
#include "abi_common.hpp"
#undef cudaStreamGetCaptureInfo
#undef cudaStreamUpdateCaptureDependencies
#undef cudaGraphAddNode

using namespace genie::fakecuda;
using genie::Errc;
using genie::Status;
using genie::fakecuda::abi::guard;
using genie::fakecuda::abi::reject;
using genie::fakecuda::abi::to_cuda;

namespace {
thread_local cudaStreamCaptureMode t_capture_mode = cudaStreamCaptureModeGlobal;
// cudaStreamGetCaptureInfo's output arrays.
thread_local std::vector<cudaGraphNode_t> t_capture_deps;
thread_local std::vector<cudaGraphEdgeData> t_capture_edges;

cudaError_t create_stream(cudaStream_t* out, unsigned flags, int priority) {
  if (out == nullptr) return reject("cudaStreamCreate", "pStream");
  if (flags & ~static_cast<unsigned>(cudaStreamNonBlocking)) return reject("cudaStreamCreate", "flags");
  GENIE_RT(r);
  priority = std::max(genie::fakecuda::kGreatestStreamPriority,
                      std::min(genie::fakecuda::kLeastStreamPriority, priority));
  *out = reinterpret_cast<cudaStream_t>(r->create_stream(r->current_device(), flags, priority));
  return cudaSuccess;
}

Event* event_or_null(Runtime* r, cudaEvent_t e) { return r->resolve_event(static_cast<const void*>(e)); }

cudaError_t impl_cudaStreamSynchronize(bool ptds, cudaStream_t stream) {
  return guard("cudaStreamSynchronize", [&]() -> cudaError_t {
    GENIE_RT(r);
    GENIE_STREAM(s, r, stream, ptds);
    if (r->is_capturing(*s)) return cudaErrorStreamCaptureUnsupported;
    return to_cuda(r->synchronize(*s));
  });
}
cudaError_t impl_cudaStreamQuery(bool ptds, cudaStream_t stream) {
  return guard("cudaStreamQuery", [&]() -> cudaError_t {
    GENIE_RT(r);
    GENIE_STREAM(s, r, stream, ptds);
    if (r->is_capturing(*s)) return cudaErrorStreamCaptureUnsupported;
    return to_cuda(r->query(*s));
  });
}
cudaError_t impl_cudaStreamWaitEvent(bool ptds, cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  return guard("cudaStreamWaitEvent", [&]() -> cudaError_t {
    GENIE_RT(r);
    GENIE_STREAM(s, r, stream, ptds);
    Event* e = event_or_null(r, event);
    if (e == nullptr) return reject("cudaStreamWaitEvent", "event", cudaErrorInvalidResourceHandle);
    if (flags & ~1u) return reject("cudaStreamWaitEvent", "flags");
    return to_cuda(r->wait_event(*s, *e), cudaErrorStreamCaptureIsolation);
  });
}
cudaError_t impl_cudaEventRecord(bool ptds, cudaEvent_t event, cudaStream_t stream) {
  return guard("cudaEventRecord", [&]() -> cudaError_t {
    GENIE_RT(r);
    Event* e = event_or_null(r, event);
    if (e == nullptr) return reject("cudaEventRecord", "event", cudaErrorInvalidResourceHandle);
    GENIE_STREAM(s, r, stream, ptds);
    return to_cuda(r->record_event(*e, *s));
  });
}
cudaError_t impl_cudaEventRecordWithFlags(bool ptds, cudaEvent_t event, cudaStream_t stream, unsigned int flags) {
  if (flags & ~1u /* cudaEventRecordExternal */)
    return guard("cudaEventRecordWithFlags", [] { return reject("cudaEventRecordWithFlags", "flags"); });
  return impl_cudaEventRecord(ptds, event, stream);
}

struct HostCall {
  cudaHostFn_t fn;
  void* data;
};
cudaError_t impl_cudaLaunchHostFunc(bool ptds, cudaStream_t stream, cudaHostFn_t fn, void* userData) {
  return guard("cudaLaunchHostFunc", [&]() -> cudaError_t {
    if (fn == nullptr) return reject("cudaLaunchHostFunc", "fn");
    GENIE_RT(r);
    GENIE_STREAM(s, r, stream, ptds);
    genie::sched::OpSpec op;
    op.label = "host_fn";
    op.may_run_inline = false;  // host functions run on a runtime thread, never in the caller
    op.action = [fn, userData] { fn(userData); };
    r->api_call();
    return to_cuda(r->submit(*s, std::move(op)).status());
  });
}
cudaError_t impl_cudaStreamAddCallback(bool ptds, cudaStream_t stream, cudaStreamCallback_t cb, void* userData,
                                       unsigned int flags) {
  return guard("cudaStreamAddCallback", [&]() -> cudaError_t {
    if (cb == nullptr || flags != 0) return reject("cudaStreamAddCallback", cb ? "flags" : "callback");
    GENIE_RT(r);
    GENIE_STREAM(s, r, stream, ptds);
    if (r->is_capturing(*s)) return cudaErrorStreamCaptureUnsupported;
    genie::sched::OpSpec op;
    op.label = "callback";
    op.may_run_inline = false;
    op.action = [cb, stream, userData] { cb(stream, cudaSuccess, userData); };
    r->api_call();
    return to_cuda(r->submit(*s, std::move(op)).status());
  });
}
cudaError_t impl_cudaStreamBeginCapture(bool ptds, cudaStream_t stream, cudaStreamCaptureMode mode) {
  return guard("cudaStreamBeginCapture", [&]() -> cudaError_t {
    GENIE_RT(r);
    GENIE_STREAM(s, r, stream, ptds);
    if (static_cast<int>(mode) < 0 || static_cast<int>(mode) > 2) return reject("cudaStreamBeginCapture", "mode");
    Status st = r->begin_capture(*s, static_cast<int>(mode));
    return st.is_ok() ? cudaSuccess : reject("cudaStreamBeginCapture", st.message().c_str(), cudaErrorIllegalState);
  });
}
cudaError_t impl_cudaStreamEndCapture(bool ptds, cudaStream_t stream, cudaGraph_t* graph) {
  return guard("cudaStreamEndCapture", [&]() -> cudaError_t {
    if (graph == nullptr) return reject("cudaStreamEndCapture", "pGraph");
    GENIE_RT(r);
    GENIE_STREAM(s, r, stream, ptds);
    auto g = r->end_capture(*s);
    if (!g.is_ok()) return reject("cudaStreamEndCapture", g.status().message().c_str(), cudaErrorIllegalState);
    *graph = reinterpret_cast<cudaGraph_t>(g.value());
    return cudaSuccess;
  });
}
cudaError_t impl_cudaStreamIsCapturing(bool ptds, cudaStream_t stream, cudaStreamCaptureStatus* status) {
  return guard("cudaStreamIsCapturing", [&]() -> cudaError_t {
    if (status == nullptr) return reject("cudaStreamIsCapturing", "pCaptureStatus");
    GENIE_RT(r);
    GENIE_STREAM(s, r, stream, ptds);
    *status = r->is_capturing(*s) ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
    return cudaSuccess;
  });
}
cudaError_t impl_cudaStreamGetCaptureInfo(bool ptds, cudaStream_t stream, cudaStreamCaptureStatus* status,
                                          unsigned long long* id, cudaGraph_t* graph,
                                          const cudaGraphNode_t** deps, const cudaGraphEdgeData** edges,
                                          size_t* num_deps) {
  return guard("cudaStreamGetCaptureInfo", [&]() -> cudaError_t {
    if (status == nullptr) return reject("cudaStreamGetCaptureInfo", "captureStatus_out");
    GENIE_RT(r);
    GENIE_STREAM(s, r, stream, ptds);
    uint64_t cid = r->capture_id(*s);
    *status = cid ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
    if (id) *id = cid;
    if (graph) *graph = nullptr;
    if (deps) *deps = nullptr;
    if (edges) *edges = nullptr;
    if (num_deps) *num_deps = 0;
    if (cid == 0) return cudaSuccess;
    // The capture graph and the nodes the next captured op will depend on; the arrays stay valid until the next
    // call on this thread (CUDA: until the next API call on the stream).
    std::vector<int> frontier;
    Graph* g = r->capture_graph(*s, &frontier);
    if (g == nullptr) return cudaSuccess;
    if (graph) *graph = reinterpret_cast<cudaGraph_t>(g);
    t_capture_deps.clear();
    for (int n : frontier)
      t_capture_deps.push_back(reinterpret_cast<cudaGraphNode_t>(&g->nodes[static_cast<size_t>(n)]));
    t_capture_edges.assign(frontier.size(), cudaGraphEdgeData{});
    if (deps) *deps = t_capture_deps.data();
    if (edges) *edges = t_capture_edges.data();
    if (num_deps) *num_deps = frontier.size();
    return cudaSuccess;
  });
}
cudaError_t impl_cudaGraphLaunch(bool ptds, cudaGraphExec_t exec, cudaStream_t stream) {
  return guard("cudaGraphLaunch", [&]() -> cudaError_t {
    GENIE_RT(r);
    Graph* g = r->resolve_graph(static_cast<const void*>(exec));
    if (g == nullptr || !g->executable) return reject("cudaGraphLaunch", "graphExec", cudaErrorInvalidResourceHandle);
    GENIE_STREAM(s, r, stream, ptds);
    return to_cuda(r->launch_graph(*g, *s));
  });
}
cudaError_t impl_cudaStreamGetPriority(bool ptds, cudaStream_t stream, int* priority) {
  return guard("cudaStreamGetPriority", [&]() -> cudaError_t {
    if (priority == nullptr) return reject("cudaStreamGetPriority", "priority");
    GENIE_RT(r);
    GENIE_STREAM(s, r, stream, ptds);
    *priority = s->priority();
    return cudaSuccess;
  });
}
cudaError_t impl_cudaStreamGetFlags(bool ptds, cudaStream_t stream, unsigned int* flags) {
  return guard("cudaStreamGetFlags", [&]() -> cudaError_t {
    if (flags == nullptr) return reject("cudaStreamGetFlags", "flags");
    GENIE_RT(r);
    GENIE_STREAM(s, r, stream, ptds);
    *flags = s->flags();
    return cudaSuccess;
  });
}
cudaError_t impl_cudaStreamGetDevice(bool ptds, cudaStream_t stream, int* device) {
  return guard("cudaStreamGetDevice", [&]() -> cudaError_t {
    if (device == nullptr) return reject("cudaStreamGetDevice", "device");
    GENIE_RT(r);
    GENIE_STREAM(s, r, stream, ptds);
    *device = s->device().ordinal();
    return cudaSuccess;
  });
}
cudaError_t impl_cudaStreamGetId(bool ptds, cudaStream_t stream, unsigned long long* id) {
  return guard("cudaStreamGetId", [&]() -> cudaError_t {
    if (id == nullptr) return reject("cudaStreamGetId", "streamId");
    GENIE_RT(r);
    GENIE_STREAM(s, r, stream, ptds);
    *id = reinterpret_cast<uintptr_t>(s);
    return cudaSuccess;
  });
}
}  // namespace

GENIE_CUDART_PTSZ(cudaStreamSynchronize, (cudaStream_t stream), (stream))
GENIE_CUDART_PTSZ(cudaStreamQuery, (cudaStream_t stream), (stream))
GENIE_CUDART_PTSZ(cudaStreamWaitEvent, (cudaStream_t stream, cudaEvent_t event, unsigned int flags),
                  (stream, event, flags))
GENIE_CUDART_PTSZ(cudaEventRecord, (cudaEvent_t event, cudaStream_t stream), (event, stream))
GENIE_CUDART_PTSZ(cudaEventRecordWithFlags, (cudaEvent_t event, cudaStream_t stream, unsigned int flags),
                  (event, stream, flags))
GENIE_CUDART_PTSZ(cudaLaunchHostFunc, (cudaStream_t stream, cudaHostFn_t fn, void* userData), (stream, fn, userData))
GENIE_CUDART_PTSZ(cudaStreamAddCallback,
                  (cudaStream_t stream, cudaStreamCallback_t callback, void* userData, unsigned int flags),
                  (stream, callback, userData, flags))
GENIE_CUDART_PTSZ(cudaStreamBeginCapture, (cudaStream_t stream, enum cudaStreamCaptureMode mode), (stream, mode))
GENIE_CUDART_PTSZ(cudaStreamEndCapture, (cudaStream_t stream, cudaGraph_t* pGraph), (stream, pGraph))
GENIE_CUDART_PTSZ(cudaStreamIsCapturing, (cudaStream_t stream, enum cudaStreamCaptureStatus* pCaptureStatus),
                  (stream, pCaptureStatus))
GENIE_CUDART_PTSZ(cudaGraphLaunch, (cudaGraphExec_t graphExec, cudaStream_t stream), (graphExec, stream))
GENIE_CUDART_PTSZ(cudaStreamGetPriority, (cudaStream_t hStream, int* priority), (hStream, priority))
GENIE_CUDART_PTSZ(cudaStreamGetFlags, (cudaStream_t hStream, unsigned int* flags), (hStream, flags))
GENIE_CUDART_PTSZ(cudaStreamGetDevice, (cudaStream_t hStream, int* device), (hStream, device))
GENIE_CUDART_PTSZ(cudaStreamGetId, (cudaStream_t hStream, unsigned long long* streamId), (hStream, streamId))

#if GENIE_CUDART_MAJOR == 12
// CUDA 12.x: the unversioned name has the 12.0 three-argument form; _v2 adds graph and dependencies;
// _v3 (12.3+) adds edge data.
GENIE_CUDART_EXPORT cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                                         unsigned long long* id) {
  return impl_cudaStreamGetCaptureInfo(false, stream, status, id, nullptr, nullptr, nullptr, nullptr);
}
GENIE_CUDART_EXPORT cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                                              unsigned long long* id) {
  return impl_cudaStreamGetCaptureInfo(true, stream, status, id, nullptr, nullptr, nullptr, nullptr);
}
#define GENIE_CAPTURE_V2(name, ptds)                                                                            \
  GENIE_CUDART_EXPORT cudaError_t name(cudaStream_t stream, cudaStreamCaptureStatus* status,                    \
                                       unsigned long long* id, cudaGraph_t* graph, const cudaGraphNode_t** deps, \
                                       size_t* num) {                                                           \
    return impl_cudaStreamGetCaptureInfo(ptds, stream, status, id, graph, deps, nullptr, num);                  \
  }
#define GENIE_CAPTURE_V3(name, ptds)                                                                            \
  GENIE_CUDART_EXPORT cudaError_t name(cudaStream_t stream, cudaStreamCaptureStatus* status,                    \
                                       unsigned long long* id, cudaGraph_t* graph, const cudaGraphNode_t** deps, \
                                       const cudaGraphEdgeData** edges, size_t* num) {                          \
    return impl_cudaStreamGetCaptureInfo(ptds, stream, status, id, graph, deps, edges, num);                    \
  }
GENIE_CAPTURE_V2(cudaStreamGetCaptureInfo_v2, false)
GENIE_CAPTURE_V2(cudaStreamGetCaptureInfo_v2_ptsz, true)
GENIE_CAPTURE_V3(cudaStreamGetCaptureInfo_v3, false)
GENIE_CAPTURE_V3(cudaStreamGetCaptureInfo_v3_ptsz, true)
#else
GENIE_CUDART_PTSZ(cudaStreamGetCaptureInfo,
                  (cudaStream_t stream, enum cudaStreamCaptureStatus* captureStatus_out, unsigned long long* id_out,
                   cudaGraph_t* graph_out, const cudaGraphNode_t** dependencies_out,
                   const cudaGraphEdgeData** edgeData_out, size_t* numDependencies_out),
                  (stream, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out, numDependencies_out))
#endif

GENIE_CUDART_EXPORT cudaError_t cudaStreamCreate(cudaStream_t* pStream) { return create_stream(pStream, 0, 0); }
GENIE_CUDART_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t* pStream, unsigned int flags) {
  return guard(__func__, [&] { return create_stream(pStream, flags, 0); });
}
GENIE_CUDART_EXPORT cudaError_t cudaStreamCreateWithPriority(cudaStream_t* pStream, unsigned int flags, int priority) {
  return guard(__func__, [&] { return create_stream(pStream, flags, priority); });
}
GENIE_CUDART_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  return guard(__func__, [&]() -> cudaError_t {
    GENIE_RT(r);
    uintptr_t h = reinterpret_cast<uintptr_t>(stream);
    if (h <= 2) return reject(__func__, "stream", cudaErrorInvalidResourceHandle);
    Stream* s = r->resolve_stream(stream, false);
    if (s == nullptr) return reject(__func__, "stream", cudaErrorInvalidResourceHandle);
    return to_cuda(r->destroy_stream(s));
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode) {
  if (mode == nullptr) return guard(__func__, [] { return reject("cudaThreadExchangeStreamCaptureMode", "mode"); });
  std::swap(*mode, t_capture_mode);
  return cudaSuccess;
}

// --- events ---------------------------------------------------------------------------------------------
GENIE_CUDART_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  return guard(__func__, [&]() -> cudaError_t {
    if (event == nullptr) return reject(__func__, "event");
    if (flags & ~0xFu) return reject(__func__, "flags");
    if ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming)) return reject(__func__, "flags");
    GENIE_RT(r);
    *event = reinterpret_cast<cudaEvent_t>(r->create_event(flags));
    return cudaSuccess;
  });
}
GENIE_CUDART_EXPORT cudaError_t cudaEventCreate(cudaEvent_t* event) { return cudaEventCreateWithFlags(event, 0); }
GENIE_CUDART_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event) {
  return guard(__func__, [&]() -> cudaError_t {
    GENIE_RT(r);
    Event* e = event_or_null(r, event);
    if (e == nullptr) return reject(__func__, "event", cudaErrorInvalidResourceHandle);
    return to_cuda(r->destroy_event(e));
  });
}
GENIE_CUDART_EXPORT cudaError_t cudaEventQuery(cudaEvent_t event) {
  return guard(__func__, [&]() -> cudaError_t {
    GENIE_RT(r);
    Event* e = event_or_null(r, event);
    if (e == nullptr) return reject(__func__, "event", cudaErrorInvalidResourceHandle);
    return to_cuda(r->query_event(*e));
  });
}
GENIE_CUDART_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  return guard(__func__, [&]() -> cudaError_t {
    GENIE_RT(r);
    Event* e = event_or_null(r, event);
    if (e == nullptr) return reject(__func__, "event", cudaErrorInvalidResourceHandle);
    return to_cuda(r->synchronize_event(*e));
  });
}
GENIE_CUDART_EXPORT cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  return guard(__func__, [&]() -> cudaError_t {
    if (ms == nullptr) return reject(__func__, "ms");
    GENIE_RT(r);
    Event* a = event_or_null(r, start);
    Event* b = event_or_null(r, end);
    if (a == nullptr || b == nullptr) return reject(__func__, a ? "end" : "start", cudaErrorInvalidResourceHandle);
    auto v = r->elapsed_ms(*a, *b);
    if (!v.is_ok()) return to_cuda(v.status(), cudaErrorInvalidResourceHandle);
    *ms = v.value();
    return cudaSuccess;
  });
}

// --- graphs ---------------------------------------------------------------------------------------------
GENIE_CUDART_EXPORT cudaError_t cudaGraphCreate(cudaGraph_t* graph, unsigned int flags) {
  return guard(__func__, [&]() -> cudaError_t {
    if (graph == nullptr || flags != 0) return reject(__func__, graph ? "flags" : "pGraph");
    GENIE_RT(r);
    *graph = reinterpret_cast<cudaGraph_t>(r->create_graph());
    return cudaSuccess;
  });
}
GENIE_CUDART_EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph,
                                                     unsigned long long flags) {
  return guard(__func__, [&]() -> cudaError_t {
    if (exec == nullptr) return reject(__func__, "pGraphExec");
    GENIE_RT(r);
    Graph* g = r->resolve_graph(static_cast<const void*>(graph));
    if (g == nullptr || g->executable) return reject(__func__, "graph", cudaErrorInvalidResourceHandle);
    (void)flags;
    auto e = r->instantiate(*g);
    if (!e.is_ok()) return to_cuda(e.status());
    *exec = reinterpret_cast<cudaGraphExec_t>(e.value());
    return cudaSuccess;
  });
}
GENIE_CUDART_EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* exec, cudaGraph_t graph,
                                                              unsigned long long flags) {
  return cudaGraphInstantiate(exec, graph, flags);
}
GENIE_CUDART_EXPORT cudaError_t cudaGraphUpload(cudaGraphExec_t exec, cudaStream_t) {
  return guard(__func__, [&]() -> cudaError_t {
    GENIE_RT(r);
    Graph* g = r->resolve_graph(static_cast<const void*>(exec));
    return g && g->executable ? cudaSuccess : reject(__func__, "graphExec", cudaErrorInvalidResourceHandle);
  });
}
GENIE_CUDART_EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  return guard(__func__, [&]() -> cudaError_t {
    GENIE_RT(r);
    Graph* g = r->resolve_graph(static_cast<const void*>(exec));
    if (g == nullptr || !g->executable) return reject(__func__, "graphExec", cudaErrorInvalidResourceHandle);
    return to_cuda(r->destroy_graph(g));
  });
}
GENIE_CUDART_EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  return guard(__func__, [&]() -> cudaError_t {
    GENIE_RT(r);
    Graph* g = r->resolve_graph(static_cast<const void*>(graph));
    if (g == nullptr || g->executable) return reject(__func__, "graph", cudaErrorInvalidResourceHandle);
    return to_cuda(r->destroy_graph(g));
  });
}
GENIE_CUDART_EXPORT cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* numNodes) {
  return guard(__func__, [&]() -> cudaError_t {
    if (numNodes == nullptr) return reject(__func__, "numNodes");
    GENIE_RT(r);
    Graph* g = r->resolve_graph(static_cast<const void*>(graph));
    if (g == nullptr) return reject(__func__, "graph", cudaErrorInvalidResourceHandle);
    if (nodes != nullptr) {
      size_t n = std::min(*numNodes, g->nodes.size());
      for (size_t i = 0; i < n; ++i) {
        g->nodes[i].owner = g;
        g->nodes[i].index = static_cast<int>(i);
        nodes[i] = reinterpret_cast<cudaGraphNode_t>(&g->nodes[i]);
      }
    }
    *numNodes = g->nodes.size();
    return cudaSuccess;
  });
}
GENIE_CUDART_EXPORT cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t* deps,
                                                             cudaGraphEdgeData* edges, size_t* num) {
  return guard(__func__, [&]() -> cudaError_t {
    if (node == nullptr || num == nullptr) return reject(__func__, node ? "pNumDependencies" : "node");
    auto* n = reinterpret_cast<GraphNode*>(node);
    if (n->owner == nullptr) return reject(__func__, "node", cudaErrorInvalidResourceHandle);
    if (deps != nullptr) {
      size_t k = std::min(*num, n->deps.size());
      for (size_t i = 0; i < k; ++i) {
        GraphNode& d = n->owner->nodes[static_cast<size_t>(n->deps[i])];
        d.owner = n->owner;
        d.index = n->deps[i];
        deps[i] = reinterpret_cast<cudaGraphNode_t>(&d);
        if (edges) edges[i] = cudaGraphEdgeData{};
      }
    }
    *num = n->deps.size();
    return cudaSuccess;
  });
}
GENIE_CUDART_EXPORT cudaError_t cudaGraphDebugDotPrint(cudaGraph_t graph, const char* path, unsigned int) {
  return guard(__func__, [&]() -> cudaError_t {
    if (path == nullptr) return reject(__func__, "path");
    GENIE_RT(r);
    Graph* g = r->resolve_graph(static_cast<const void*>(graph));
    if (g == nullptr) return reject(__func__, "graph", cudaErrorInvalidResourceHandle);
    std::ofstream out(path);
    if (!out) return reject(__func__, "path", cudaErrorOperatingSystem);
    out << "digraph genie_graph {\n";
    for (size_t i = 0; i < g->nodes.size(); ++i) {
      out << "  n" << i << " [label=\"" << g->nodes[i].spec.label << " " << g->nodes[i].spec.duration.count_ns()
          << "ns\"];\n";
      for (int d : g->nodes[i].deps) out << "  n" << d << " -> n" << i << ";\n";
    }
    out << "}\n";
    return cudaSuccess;
  });
}

// --- interprocess events ----------------------------------------------------------------------------------
namespace {
struct IpcEventPayload {
  static constexpr uint32_t kMagic = 0x47455654u;  // "GEVT"
  uint32_t magic;
  int32_t pid;
  int32_t fd;
};
static_assert(sizeof(IpcEventPayload) <= sizeof(cudaIpcEventHandle_t));
}  // namespace

GENIE_CUDART_EXPORT cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t* handle, cudaEvent_t event) {
  return guard(__func__, [&]() -> cudaError_t {
    if (handle == nullptr) return reject(__func__, "handle");
    GENIE_RT(r);
    Event* e = event_or_null(r, event);
    if (e == nullptr) return reject(__func__, "event", cudaErrorInvalidResourceHandle);
    auto ex = r->export_event(*e);
    if (!ex.is_ok()) return reject(__func__, "event (not interprocess)", cudaErrorInvalidResourceHandle);
    IpcEventPayload p{IpcEventPayload::kMagic, ex->first, ex->second};
    std::memset(handle, 0, sizeof(*handle));
    std::memcpy(handle, &p, sizeof(p));
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaIpcOpenEventHandle(cudaEvent_t* event, cudaIpcEventHandle_t handle) {
  return guard(__func__, [&]() -> cudaError_t {
    if (event == nullptr) return reject(__func__, "event");
    GENIE_RT(r);
    IpcEventPayload p;
    std::memcpy(&p, &handle, sizeof(p));
    if (p.magic != IpcEventPayload::kMagic) return reject(__func__, "handle", cudaErrorInvalidResourceHandle);
    auto e = r->open_event(p.pid, p.fd);
    if (!e.is_ok()) return reject(__func__, e.status().message().c_str(), cudaErrorInvalidResourceHandle);
    *event = reinterpret_cast<cudaEvent_t>(e.value());
    return cudaSuccess;
  });
}

// --- capture into graphs, nodes added one by one, conditional nodes -----------------------------------------
namespace {

/// Indices in `g` of the node handles `nodes[0..n)`; false (and a warning) when one is not a node of `g`.
bool node_indices(const char* fn, const Graph& g, const cudaGraphNode_t* nodes, size_t n, std::vector<int>* out) {
  if (n > 0 && nodes == nullptr) {
    reject(fn, "dependencies");
    return false;
  }
  for (size_t i = 0; i < n; ++i) {
    int idx = g.index_of(nodes[i]);
    if (idx < 0) {
      reject(fn, "dependencies (a node of another graph)");
      return false;
    }
    out->push_back(idx);
  }
  return true;
}

cudaError_t impl_cudaStreamBeginCaptureToGraph(bool ptds, cudaStream_t stream, cudaGraph_t graph,
                                               const cudaGraphNode_t* deps, const cudaGraphEdgeData* edges, size_t num,
                                               cudaStreamCaptureMode mode) {
  return guard("cudaStreamBeginCaptureToGraph", [&]() -> cudaError_t {
    const char* fn = "cudaStreamBeginCaptureToGraph";
    (void)edges;  // edge types (programmatic dependencies) order nothing differently here
    GENIE_RT(r);
    GENIE_STREAM(s, r, stream, ptds);
    Graph* g = r->resolve_graph(static_cast<const void*>(graph));
    if (g == nullptr || g->executable) return reject(fn, "graph", cudaErrorInvalidValue);
    if (static_cast<int>(mode) < 0 || static_cast<int>(mode) > 2) return reject(fn, "mode");
    std::vector<int> idx;
    if (!node_indices(fn, *g, deps, num, &idx)) return cudaErrorInvalidValue;
    Status st = r->begin_capture_to_graph(*s, *g, std::move(idx), static_cast<int>(mode));
    return st.is_ok() ? cudaSuccess : reject(fn, st.message().c_str(), cudaErrorIllegalState);
  });
}

/// cudaStreamUpdateCaptureDependencies flags: cudaStreamAddCaptureDependencies (0) or
/// cudaStreamSetCaptureDependencies (1).
cudaError_t impl_cudaStreamUpdateCaptureDependencies(bool ptds, cudaStream_t stream, cudaGraphNode_t* deps,
                                                     const cudaGraphEdgeData* edges, size_t num, unsigned int flags) {
  return guard("cudaStreamUpdateCaptureDependencies", [&]() -> cudaError_t {
    const char* fn = "cudaStreamUpdateCaptureDependencies";
    (void)edges;
    if (flags > cudaStreamSetCaptureDependencies) return reject(fn, "flags");
    GENIE_RT(r);
    GENIE_STREAM(s, r, stream, ptds);
    std::vector<int> frontier;
    Graph* g = r->capture_graph(*s, &frontier);
    if (g == nullptr) return reject(fn, "stream (not capturing)", cudaErrorIllegalState);
    std::vector<int> idx;
    if (!node_indices(fn, *g, deps, num, &idx)) return cudaErrorInvalidValue;
    return to_cuda(r->update_capture_dependencies(*s, idx, flags == cudaStreamSetCaptureDependencies),
                   cudaErrorIllegalState);
  });
}

/// The kernel a graph node or launch names: a registered host stub or a cudaKernel_t.
const Kernel* kernel_of(const void* func) {
  const Kernel* k = ModuleRegistry::instance().find_kernel(func);
  return k != nullptr ? k : ModuleRegistry::from_handle(func);
}

/// A memset node's op (cudaMemsetParamsV2: `height` rows of `width` elements of 1, 2 or 4 bytes, `pitch` apart).
genie::Result<genie::sched::OpSpec> memset_op(Runtime* r, const cudaMemsetParamsV2& p) {
  if (p.elementSize != 1 && p.elementSize != 2 && p.elementSize != 4) return genie::invalid_argument("elementSize");
  if (p.dst == nullptr || p.width == 0 || p.height == 0) return genie::invalid_argument("dst/width/height");
  const size_t row = p.width * p.elementSize;
  const size_t pitch = p.height > 1 ? p.pitch : row;
  if (pitch < row) return genie::invalid_argument("pitch");
  if (!r->memory().find(p.dst, pitch * (p.height - 1) + row)) return genie::invalid_argument("dst (not device memory)");
  genie::sched::OpSpec op;
  op.label = "memset";
  op.kind = genie::sched::OpKind::kMemset;
  op.bytes = row * p.height;
  op.duration = r->cost_model().memset(row * p.height);
  if (!r->moves_bytes(row * p.height)) return op;  // timing only (GENIE_DATA=none): nothing written
  op.action = [p, row, pitch] {
    for (size_t y = 0; y < p.height; ++y) {
      auto* base = static_cast<unsigned char*>(p.dst) + y * pitch;
      for (size_t x = 0; x < p.width; ++x) std::memcpy(base + x * p.elementSize, &p.value, p.elementSize);
    }
  };
  return op;
}

/// cudaGraphAddNode for every node type the generic API takes that Genie models: kernel, memcpy (1D), memset,
/// host, child graph, empty and conditional. Event, external semaphore and memory nodes answer
/// cudaErrorNotSupported.
cudaError_t add_node(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps,
                     const cudaGraphEdgeData* edges, size_t num, cudaGraphNodeParams* params) {
  const char* fn = "cudaGraphAddNode";
  (void)edges;
  if (out == nullptr || params == nullptr) return reject(fn, out ? "nodeParams" : "pGraphNode");
  GENIE_RT(r);
  Graph* g = r->resolve_graph(static_cast<const void*>(graph));
  if (g == nullptr || g->executable) return reject(fn, "graph");
  std::vector<int> idx;
  if (!node_indices(fn, *g, deps, num, &idx)) return cudaErrorInvalidValue;
  GraphNode node;
  unsigned bodies = 0;
  genie::Result<int> added = genie::invalid_argument("type");
  switch (params->type) {
    case cudaGraphNodeTypeEmpty:
      node.kind = GraphNodeKind::kEmpty;
      added = r->add_graph_node(*g, std::move(idx), std::move(node));
      break;
    case cudaGraphNodeTypeKernel: {
      const cudaKernelNodeParamsV2& k = params->kernel;
      const Kernel* kernel = kernel_of(k.func);
      if (kernel == nullptr) return reject(fn, "kernel.func", cudaErrorInvalidDeviceFunction);
      KernelShape shape;
      shape.grid[0] = k.gridDim.x, shape.grid[1] = k.gridDim.y, shape.grid[2] = k.gridDim.z;
      shape.block[0] = k.blockDim.x, shape.block[1] = k.blockDim.y, shape.block[2] = k.blockDim.z;
      shape.shared_mem = k.sharedMemBytes;
      added = r->add_graph_node_by_capture(*g, std::move(idx), r->current_device(), [&](Stream& s) {
        return r->launch_kernel(*kernel, shape, s, k.kernelParams);
      });
      if (!added.is_ok()) return reject(fn, added.status().message().c_str(), cudaErrorInvalidConfiguration);
      break;
    }
    case cudaGraphNodeTypeMemcpy: {
      const cudaMemcpy3DParms& c = params->memcpy.copyParams;
      if (c.srcArray != nullptr || c.dstArray != nullptr || c.extent.height > 1 || c.extent.depth > 1 ||
          c.srcPos.y != 0 || c.srcPos.z != 0 || c.dstPos.y != 0 || c.dstPos.z != 0)
        return reject(fn, "memcpy (only 1D copies between pointers are modelled)", cudaErrorNotSupported);
      void* dst = static_cast<char*>(c.dstPtr.ptr) + c.dstPos.x;
      const void* src = static_cast<const char*>(c.srcPtr.ptr) + c.srcPos.x;
      added = r->add_graph_node_by_capture(*g, std::move(idx), r->current_device(), [&](Stream& s) {
        return r->copy_async(dst, src, c.extent.width, s, static_cast<int>(c.kind));
      });
      break;
    }
    case cudaGraphNodeTypeMemset: {
      auto op = memset_op(r, params->memset);
      if (!op.is_ok()) return reject(fn, op.status().message().c_str());
      node.spec = std::move(op.value());
      added = r->add_graph_node(*g, std::move(idx), std::move(node));
      break;
    }
    case cudaGraphNodeTypeHost: {
      cudaHostFn_t f = params->host.fn;
      void* data = params->host.userData;
      if (f == nullptr) return reject(fn, "host.fn");
      node.spec.label = "host_fn";
      node.spec.may_run_inline = false;  // host functions run on a runtime thread, never in the caller
      node.spec.action = [f, data] { f(data); };
      added = r->add_graph_node(*g, std::move(idx), std::move(node));
      break;
    }
    case cudaGraphNodeTypeGraph: {
      Graph* child = r->resolve_graph(static_cast<const void*>(params->graph.graph));
      if (child == nullptr || child->executable) return reject(fn, "graph.graph");
      node.kind = GraphNodeKind::kChild;
      node.bodies.push_back(child->snapshot());  // the node runs a clone, as CUDA's does
      added = r->add_graph_node(*g, std::move(idx), std::move(node));
      break;
    }
    case cudaGraphNodeTypeConditional: {
      const cudaConditionalNodeParams& c = params->conditional;
      const int type = static_cast<int>(c.type);
      if ((type == kCondTypeIf && (c.size < 1 || c.size > 2)) || (type == kCondTypeWhile && c.size != 1) ||
          (type == kCondTypeSwitch && c.size < 1) || type < kCondTypeIf || type > kCondTypeSwitch)
        return reject(fn, "conditional.type/size");
      auto value = r->conditional_value(c.handle, *g);
      if (!value.is_ok()) return reject(fn, "conditional.handle");
      node.kind = GraphNodeKind::kConditional;
      node.cond_type = type;
      node.cond_value = value.value();
      bodies = c.size;
      added = r->add_graph_node(*g, std::move(idx), std::move(node), bodies);
      if (added.is_ok()) {
        // phGraph_out: the bodies, owned by the node; programs fill them (cudaStreamBeginCaptureToGraph, AddNode).
        GraphNode& n = g->nodes[static_cast<size_t>(added.value())];
        static thread_local std::vector<cudaGraph_t> fallback;
        cudaGraph_t* body_out = c.phGraph_out;
        if (body_out == nullptr) {
          fallback.resize(bodies);
          body_out = fallback.data();
          params->conditional.phGraph_out = body_out;
        }
        for (unsigned i = 0; i < bodies; ++i) body_out[i] = reinterpret_cast<cudaGraph_t>(n.bodies[i].get());
      }
      break;
    }
    case cudaGraphNodeTypeWaitEvent:
    case cudaGraphNodeTypeEventRecord:
    case cudaGraphNodeTypeExtSemaphoreSignal:
    case cudaGraphNodeTypeExtSemaphoreWait:
    case cudaGraphNodeTypeMemAlloc:
    case cudaGraphNodeTypeMemFree:
      return reject(fn, "nodeParams->type (event, semaphore and memory nodes are not modelled)", cudaErrorNotSupported);
    default:
      return reject(fn, "nodeParams->type");
  }
  if (!added.is_ok()) return reject(fn, added.status().message().c_str(), to_cuda(added.status()));
  *out = reinterpret_cast<cudaGraphNode_t>(&g->nodes[static_cast<size_t>(added.value())]);
  return cudaSuccess;
}

}  // namespace

GENIE_CUDART_PTSZ(cudaStreamBeginCaptureToGraph,
                  (cudaStream_t stream, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                   const cudaGraphEdgeData* dependencyData, size_t numDependencies, enum cudaStreamCaptureMode mode),
                  (stream, graph, dependencies, dependencyData, numDependencies, mode))

#if GENIE_CUDART_MAJOR == 12
// CUDA 12.x: the unversioned names have the 12.0 forms without edge data; the _v2 names (12.3) add it.
GENIE_CUDART_EXPORT cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t stream, cudaGraphNode_t* deps,
                                                                    size_t num, unsigned int flags) {
  return impl_cudaStreamUpdateCaptureDependencies(false, stream, deps, nullptr, num, flags);
}
GENIE_CUDART_EXPORT cudaError_t cudaStreamUpdateCaptureDependencies_ptsz(cudaStream_t stream, cudaGraphNode_t* deps,
                                                                         size_t num, unsigned int flags) {
  return impl_cudaStreamUpdateCaptureDependencies(true, stream, deps, nullptr, num, flags);
}
GENIE_CUDART_EXPORT cudaError_t cudaStreamUpdateCaptureDependencies_v2(cudaStream_t stream, cudaGraphNode_t* deps,
                                                                       const cudaGraphEdgeData* edges, size_t num,
                                                                       unsigned int flags) {
  return impl_cudaStreamUpdateCaptureDependencies(false, stream, deps, edges, num, flags);
}
GENIE_CUDART_EXPORT cudaError_t cudaStreamUpdateCaptureDependencies_v2_ptsz(cudaStream_t stream, cudaGraphNode_t* deps,
                                                                            const cudaGraphEdgeData* edges, size_t num,
                                                                            unsigned int flags) {
  return impl_cudaStreamUpdateCaptureDependencies(true, stream, deps, edges, num, flags);
}
GENIE_CUDART_EXPORT cudaError_t cudaGraphAddNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph,
                                                 const cudaGraphNode_t* pDependencies, size_t numDependencies,
                                                 cudaGraphNodeParams* nodeParams) {
  return guard(__func__,
               [&] { return add_node(pGraphNode, graph, pDependencies, nullptr, numDependencies, nodeParams); });
}
GENIE_CUDART_EXPORT cudaError_t cudaGraphAddNode_v2(cudaGraphNode_t* pGraphNode, cudaGraph_t graph,
                                                    const cudaGraphNode_t* pDependencies,
                                                    const cudaGraphEdgeData* dependencyData, size_t numDependencies,
                                                    cudaGraphNodeParams* nodeParams) {
  return guard(__func__,
               [&] { return add_node(pGraphNode, graph, pDependencies, dependencyData, numDependencies, nodeParams); });
}
#else
GENIE_CUDART_PTSZ(cudaStreamUpdateCaptureDependencies,
                  (cudaStream_t stream, cudaGraphNode_t* dependencies, const cudaGraphEdgeData* dependencyData,
                   size_t numDependencies, unsigned int flags),
                  (stream, dependencies, dependencyData, numDependencies, flags))
GENIE_CUDART_EXPORT cudaError_t cudaGraphAddNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph,
                                                 const cudaGraphNode_t* pDependencies,
                                                 const cudaGraphEdgeData* dependencyData, size_t numDependencies,
                                                 cudaGraphNodeParams* nodeParams) {
  return guard(__func__,
               [&] { return add_node(pGraphNode, graph, pDependencies, dependencyData, numDependencies, nodeParams); });
}
#endif

// The condition's value is set on the device (cudaGraphSetConditional, a device-runtime call inside a kernel);
// kernels do not run here, so a node always sees the handle's default launch value (docs/fakecuda.md).
GENIE_CUDART_EXPORT cudaError_t cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle* pHandle_out,
                                                                 cudaGraph_t graph, unsigned int defaultLaunchValue,
                                                                 unsigned int flags) {
  return guard(__func__, [&]() -> cudaError_t {
    if (pHandle_out == nullptr) return reject(__func__, "pHandle_out");
    if (flags & ~static_cast<unsigned>(cudaGraphCondAssignDefault)) return reject(__func__, "flags");
    GENIE_RT(r);
    Graph* g = r->resolve_graph(static_cast<const void*>(graph));
    if (g == nullptr || g->executable) return reject(__func__, "graph");
    *pHandle_out = r->create_conditional_handle(*g, defaultLaunchValue, flags);
    return cudaSuccess;
  });
}

// --- user objects ------------------------------------------------------------------------------------------
GENIE_CUDART_EXPORT cudaError_t cudaUserObjectCreate(cudaUserObject_t* object_out, void* ptr, cudaHostFn_t destroy,
                                                     unsigned int initialRefcount, unsigned int flags) {
  return guard(__func__, [&]() -> cudaError_t {
    if (object_out == nullptr || destroy == nullptr) return reject(__func__, object_out ? "destroy" : "object_out");
    if (initialRefcount == 0) return reject(__func__, "initialRefcount");
    if (flags != cudaUserObjectNoDestructorSync)
      return reject(__func__, "flags (must be cudaUserObjectNoDestructorSync)");
    GENIE_RT(r);
    *object_out = reinterpret_cast<cudaUserObject_t>(r->create_user_object(ptr, destroy, initialRefcount));
    return cudaSuccess;
  });
}
GENIE_CUDART_EXPORT cudaError_t cudaUserObjectRetain(cudaUserObject_t object, unsigned int count) {
  return guard(__func__, [&]() -> cudaError_t {
    if (count == 0) return reject(__func__, "count");
    GENIE_RT(r);
    UserObject* o = r->resolve_user_object(object);
    if (o == nullptr) return reject(__func__, "object");
    r->retain_user_object(*o, count);
    return cudaSuccess;
  });
}
GENIE_CUDART_EXPORT cudaError_t cudaUserObjectRelease(cudaUserObject_t object, unsigned int count) {
  return guard(__func__, [&]() -> cudaError_t {
    if (count == 0) return reject(__func__, "count");
    GENIE_RT(r);
    UserObject* o = r->resolve_user_object(object);
    if (o == nullptr) return reject(__func__, "object");
    return to_cuda(r->release_user_object(*o, count));
  });
}
GENIE_CUDART_EXPORT cudaError_t cudaGraphRetainUserObject(cudaGraph_t graph, cudaUserObject_t object,
                                                          unsigned int count, unsigned int flags) {
  return guard(__func__, [&]() -> cudaError_t {
    if (count == 0) return reject(__func__, "count");
    if (flags & ~static_cast<unsigned>(cudaGraphUserObjectMove)) return reject(__func__, "flags");
    GENIE_RT(r);
    Graph* g = r->resolve_graph(static_cast<const void*>(graph));
    if (g == nullptr || g->executable) return reject(__func__, "graph");
    UserObject* o = r->resolve_user_object(object);
    if (o == nullptr) return reject(__func__, "object");
    return to_cuda(r->graph_retain_user_object(*g, *o, count, (flags & cudaGraphUserObjectMove) != 0));
  });
}
GENIE_CUDART_EXPORT cudaError_t cudaGraphReleaseUserObject(cudaGraph_t graph, cudaUserObject_t object,
                                                           unsigned int count) {
  return guard(__func__, [&]() -> cudaError_t {
    if (count == 0) return reject(__func__, "count");
    GENIE_RT(r);
    Graph* g = r->resolve_graph(static_cast<const void*>(graph));
    if (g == nullptr || g->executable) return reject(__func__, "graph");
    UserObject* o = r->resolve_user_object(object);
    if (o == nullptr) return reject(__func__, "object");
    return to_cuda(r->graph_release_user_object(*g, *o, count));
  });
}

// --- graph memory ------------------------------------------------------------------------------------------
// Genie has no graph allocator (memory nodes answer cudaErrorNotSupported; cudaMallocAsync during capture
// allocates at once, outside any graph), so the graph memory of every device is zero: used and reserved, current
// and high. The high watermarks can be reset (set to 0), as CUDA allows; any other value or attribute is refused.
GENIE_CUDART_EXPORT cudaError_t cudaDeviceGetGraphMemAttribute(int device, cudaGraphMemAttributeType attr,
                                                               void* value) {
  return guard(__func__, [&]() -> cudaError_t {
    if (value == nullptr) return reject(__func__, "value");
    GENIE_RT(r);
    if (device < 0 || device >= r->device_count()) return reject(__func__, "device", cudaErrorInvalidDevice);
    if (static_cast<int>(attr) < cudaGraphMemAttrUsedMemCurrent ||
        static_cast<int>(attr) > cudaGraphMemAttrReservedMemHigh)
      return reject(__func__, "attr");
    *static_cast<unsigned long long*>(value) = 0;
    return cudaSuccess;
  });
}
GENIE_CUDART_EXPORT cudaError_t cudaDeviceSetGraphMemAttribute(int device, cudaGraphMemAttributeType attr,
                                                               void* value) {
  return guard(__func__, [&]() -> cudaError_t {
    if (value == nullptr) return reject(__func__, "value");
    GENIE_RT(r);
    if (device < 0 || device >= r->device_count()) return reject(__func__, "device", cudaErrorInvalidDevice);
    if (attr != cudaGraphMemAttrUsedMemHigh && attr != cudaGraphMemAttrReservedMemHigh)
      return reject(__func__, "attr (only the high watermarks can be reset)");
    if (*static_cast<const unsigned long long*>(value) != 0) return reject(__func__, "value (only 0 resets)");
    return cudaSuccess;
  });
}
