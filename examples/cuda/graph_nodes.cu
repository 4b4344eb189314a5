// SPDX-License-Identifier: Apache-2.0
// graph_nodes: what torch 2.15 does with CUDA graphs beyond plain capture, in the order it does it: the runtime and
// driver versions (13.2), capture into an existing graph (cudaStreamBeginCaptureToGraph), a conditional node added
// to a running capture (cudaStreamGetCaptureInfo, cudaGraphConditionalHandleCreate, cudaGraphAddNode,
// cudaStreamUpdateCaptureDependencies) with its body captured from another stream, nodes added one by one
// (kernel, host, memset, empty), user objects whose destructor runs when the last graph holding them goes, and the
// graph memory attributes. Run with GENIE_FAKECUDA_COST_TABLE=tests/e2e/data/graph_table.json (graph_a 1 ms,
// graph_b 0.3 ms, graph_c 0.05 ms).
#include <cuda_runtime.h>

#include <cstdio>

#include "check.cuh"

extern "C" __global__ void graph_a(int* x) { x[0] += 1; }
extern "C" __global__ void graph_b(int* x) { x[1] += 1; }
extern "C" __global__ void graph_c(int* x) { x[2] += 1; }

namespace {

int g_destroyed = 0;
void destroy_object(void* p) { ++*static_cast<int*>(p); }
int g_host_calls = 0;
void host_node(void* p) { ++*static_cast<int*>(p); }

float launch_ms(cudaGraphExec_t exec, cudaStream_t s) {
  return event_timed_ms(s, [&] { CHECK_CUDA(cudaGraphLaunch(exec, s)); });
}

// torch's CUDAGraph::begin_capture_to_if_node: A; if (cond) { B, captured on another stream }; C.
float conditional_capture_ms(cudaStream_t s, cudaStream_t side, int* x, unsigned value) {
  CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  graph_a<<<1, 1, 0, s>>>(x);
  cudaStreamCaptureStatus status;
  cudaGraph_t capturing = nullptr;
  const cudaGraphNode_t* deps = nullptr;
  size_t ndeps = 0;
  CHECK_CUDA(cudaStreamGetCaptureInfo(s, &status, nullptr, &capturing, &deps, nullptr, &ndeps));
  EXPECT_EQ_INT("capture info: active, with the graph and one dependency (graph_a)", 1,
                status == cudaStreamCaptureStatusActive && capturing != nullptr && ndeps == 1);
  cudaGraphConditionalHandle handle;
  CHECK_CUDA(cudaGraphConditionalHandleCreate(&handle, capturing, value, cudaGraphCondAssignDefault));
  cudaGraphNodeParams params = {};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = handle;
  params.conditional.type = cudaGraphCondTypeIf;
  params.conditional.size = 1;
  cudaGraph_t body[1] = {nullptr};
  params.conditional.phGraph_out = body;
  cudaGraphNode_t cond = nullptr;
  CHECK_CUDA(cudaGraphAddNode(&cond, capturing, deps, nullptr, ndeps, &params));
  EXPECT_EQ_INT("the conditional node has a body graph", 1, body[0] != nullptr);
  CHECK_CUDA(cudaStreamUpdateCaptureDependencies(s, &cond, nullptr, 1, cudaStreamSetCaptureDependencies));
  CHECK_CUDA(cudaStreamBeginCaptureToGraph(side, body[0], nullptr, nullptr, 0, cudaStreamCaptureModeRelaxed));
  graph_b<<<1, 1, 0, side>>>(x);
  cudaGraph_t body_out = nullptr;
  CHECK_CUDA(cudaStreamEndCapture(side, &body_out));
  EXPECT_EQ_INT("capture into the body ends with the body", 1, body_out == body[0]);
  graph_c<<<1, 1, 0, s>>>(x);
  cudaGraph_t g = nullptr;
  CHECK_CUDA(cudaStreamEndCapture(s, &g));
  EXPECT_EQ_INT("the capture graph is the one capture info gave", 1, g == capturing);
  size_t nodes = 0;
  CHECK_CUDA(cudaGraphGetNodes(g, nullptr, &nodes));
  EXPECT_EQ_INT("nodes: graph_a, the conditional, graph_c", 3, nodes);
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaGraphInstantiate(&exec, g, 0));
  float ms = launch_ms(exec, s);
  CHECK_CUDA(cudaGraphExecDestroy(exec));
  CHECK_CUDA(cudaGraphDestroy(g));
  return ms;
}

}  // namespace

int main() {
  const bool genie = on_genie();
  int rt = 0, drv = 0;
  CHECK_CUDA(cudaRuntimeGetVersion(&rt));
  CHECK_CUDA(cudaDriverGetVersion(&drv));
  if (genie) {
    EXPECT_EQ_INT("runtime version (CUDA 13.2)", 13020, rt);
    EXPECT_EQ_INT("driver version (CUDA 13.2)", 13020, drv);
  }
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q;
  CHECK_CUDA(cudaGetDriverEntryPointByVersion("cuDeviceGetCount", &fn, 13020, cudaEnableDefault, &q));
  EXPECT_EQ_INT("driver entry point for CUDA 13.2", 1, q == cudaDriverEntryPointSuccess && fn != nullptr);

  cudaStream_t s, side;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  int* x = nullptr;
  CHECK_CUDA(cudaMalloc(&x, 16 * sizeof(int)));

  // A conditional node: its body runs when the handle's value is non-zero.
  float with_body = conditional_capture_ms(s, side, x, 1);
  float without = conditional_capture_ms(s, side, x, 0);
  if (genie) {
    EXPECT_NEAR_DBL("A; if (1) {B}; C (ms)", 1.35, with_body, 0.02);
    EXPECT_NEAR_DBL("A; if (0) {B}; C (ms)", 1.05, without, 0.02);
  }

  // Nodes one by one, then a capture appended after them.
  cudaGraph_t g;
  CHECK_CUDA(cudaGraphCreate(&g, 0));
  cudaGraphNodeParams p = {};
  p.type = cudaGraphNodeTypeEmpty;
  cudaGraphNode_t empty = nullptr, host = nullptr, memset_node = nullptr, kernel = nullptr;
  CHECK_CUDA(cudaGraphAddNode(&empty, g, nullptr, nullptr, 0, &p));
  p = {};
  p.type = cudaGraphNodeTypeHost;
  p.host.fn = host_node;
  p.host.userData = &g_host_calls;
  CHECK_CUDA(cudaGraphAddNode(&host, g, &empty, nullptr, 1, &p));
  p = {};
  p.type = cudaGraphNodeTypeMemset;
  p.memset.dst = x + 8;
  p.memset.value = 0x01020304;
  p.memset.elementSize = 4;
  p.memset.width = 4;
  p.memset.height = 1;
  CHECK_CUDA(cudaGraphAddNode(&memset_node, g, &empty, nullptr, 1, &p));
  p = {};
  p.type = cudaGraphNodeTypeKernel;
  p.kernel.func = reinterpret_cast<void*>(graph_a);
  p.kernel.gridDim = dim3(1);
  p.kernel.blockDim = dim3(1);
  void* args[] = {&x};
  p.kernel.kernelParams = args;
  cudaGraphNode_t both[2] = {host, memset_node};
  CHECK_CUDA(cudaGraphAddNode(&kernel, g, both, nullptr, 2, &p));
  p = {};
  p.type = cudaGraphNodeTypeMemAlloc;
  cudaGraphNode_t refused = nullptr;
  EXPECT_ERR("memory nodes are not modelled", cudaErrorNotSupported,
             cudaGraphAddNode(&refused, g, nullptr, nullptr, 0, &p));
  cudaGetLastError();
  CHECK_CUDA(cudaStreamBeginCaptureToGraph(s, g, &kernel, nullptr, 1, cudaStreamCaptureModeGlobal));
  graph_b<<<1, 1, 0, s>>>(x);
  cudaGraph_t same = nullptr;
  CHECK_CUDA(cudaStreamEndCapture(s, &same));
  EXPECT_EQ_INT("capture into a graph ends with that graph", 1, same == g);
  size_t nodes = 0;
  CHECK_CUDA(cudaGraphGetNodes(g, nullptr, &nodes));
  EXPECT_EQ_INT("nodes: empty, host, memset, graph_a, graph_b", 5, nodes);

  // A user object the graph owns; the executable takes its own reference.
  cudaUserObject_t obj;
  CHECK_CUDA(cudaUserObjectCreate(&obj, &g_destroyed, destroy_object, 1, cudaUserObjectNoDestructorSync));
  CHECK_CUDA(cudaGraphRetainUserObject(g, obj, 1, cudaGraphUserObjectMove));
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaGraphInstantiate(&exec, g, 0));
  float ms = launch_ms(exec, s);
  if (genie) EXPECT_NEAR_DBL("empty, host, memset, graph_a 1 ms, graph_b 0.3 ms (ms)", 1.3, ms, 0.02);
  EXPECT_EQ_INT("the host node ran once", 1, g_host_calls);
  int set[4] = {};
  CHECK_CUDA(cudaMemcpy(set, x + 8, sizeof(set), cudaMemcpyDeviceToHost));
  EXPECT_EQ_INT("the memset node wrote 4-byte elements", 0x01020304, set[3]);
  CHECK_CUDA(cudaGraphDestroy(g));
  CHECK_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ_INT("destructor not run while the executable holds the object", 0, g_destroyed);
  CHECK_CUDA(cudaGraphExecDestroy(exec));
  CHECK_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ_INT("destructor run when the last graph holding the object went", 1, g_destroyed);

  // Graph memory: no graph allocations, so zero; the high watermark can be reset, and only to zero.
  unsigned long long used_high = 1;
  CHECK_CUDA(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &used_high));
  if (genie) EXPECT_EQ_INT("graph memory high watermark", 0, used_high);
  unsigned long long zero = 0, five = 5;
  EXPECT_ERR("reset the reserved high watermark", cudaSuccess,
             cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrReservedMemHigh, &zero));
  EXPECT_ERR("set a watermark to non-zero", cudaErrorInvalidValue,
             cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrReservedMemHigh, &five));
  cudaGetLastError();

  CHECK_CUDA(cudaFree(x));
  CHECK_CUDA(cudaStreamDestroy(s));
  CHECK_CUDA(cudaStreamDestroy(side));
  return finish("graph_nodes");
}
