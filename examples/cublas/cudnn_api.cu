// SPDX-License-Identifier: Apache-2.0
// Example: what Genie's cuDNN offers a framework, against the real cudnn.h: versions PyTorch's compatibility check
// accepts, handles and streams, backend descriptors that keep their attributes, a convolution through the backend
// graph API (heuristics, plan, execute on a stream, timed), and the legacy descriptors and v7 algorithm ranking.
#include <cudnn.h>

#include <cstring>

#include "check.cuh"

#define EXPECT_STATUS(what, expected, ...) EXPECT_EQ_INT(what, (int)(expected), (int)(__VA_ARGS__))

int main() {
  EXPECT_EQ_INT("cudnnGetVersion is the header's (PyTorch checks runtime >= compiled)", CUDNN_VERSION,
                (long long)cudnnGetVersion());
  int major = 0;
  EXPECT_STATUS("GetProperty", CUDNN_STATUS_SUCCESS, cudnnGetProperty(MAJOR_VERSION, &major));
  EXPECT_EQ_INT("major", CUDNN_MAJOR, major);
  EXPECT_EQ_INT("error string", 0, std::strcmp(cudnnGetErrorString(CUDNN_STATUS_NOT_SUPPORTED), "CUDNN_STATUS_NOT_SUPPORTED"));

  cudnnHandle_t h;
  EXPECT_STATUS("Create", CUDNN_STATUS_SUCCESS, cudnnCreate(&h));
  cudaStream_t s, got = nullptr;
  CHECK_CUDA(cudaStreamCreate(&s));
  EXPECT_STATUS("SetStream", CUDNN_STATUS_SUCCESS, cudnnSetStream(h, s));
  EXPECT_STATUS("GetStream", CUDNN_STATUS_SUCCESS, cudnnGetStream(h, &got));
  EXPECT_EQ_INT("stream round trip", 1, got == s);
  // Genie only where marked: a bad or destroyed handle is undefined behaviour in cuDNN (it crashed on an H200).
  const bool genie = on_genie();
  if (genie)
    EXPECT_STATUS("SetStream on a bad handle", CUDNN_STATUS_BAD_PARAM, cudnnSetStream((cudnnHandle_t)&major, s));
  else
    SKIP_ON_REAL_GPU("SetStream on a bad handle", "undefined behaviour");

  // A tensor descriptor as cudnn-frontend builds one: attributes set, finalized, read back.
  cudnnBackendDescriptor_t t;
  EXPECT_STATUS("BackendCreateDescriptor(TENSOR)", CUDNN_STATUS_SUCCESS,
                cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &t));
  int64_t dims[4] = {8, 16, 1024, 128}, strides[4] = {16 * 1024 * 128, 128, 16 * 128, 1}, uid = 1, align = 16;
  cudnnDataType_t dt = CUDNN_DATA_BFLOAT16;
  EXPECT_STATUS("set DIMENSIONS", CUDNN_STATUS_SUCCESS,
                cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims));
  EXPECT_STATUS("set STRIDES", CUDNN_STATUS_SUCCESS,
                cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides));
  EXPECT_STATUS("set UNIQUE_ID", CUDNN_STATUS_SUCCESS,
                cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid));
  EXPECT_STATUS("set BYTE_ALIGNMENT", CUDNN_STATUS_SUCCESS,
                cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align));
  EXPECT_STATUS("set DATA_TYPE", CUDNN_STATUS_SUCCESS,
                cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt));
  EXPECT_STATUS("get before finalize", CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED,
                cudnnBackendGetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, nullptr, dims));
  EXPECT_STATUS("Finalize(TENSOR)", CUDNN_STATUS_SUCCESS, cudnnBackendFinalize(t));
  int64_t back[4] = {0, 0, 0, 0}, n = 0;
  EXPECT_STATUS("get DIMENSIONS", CUDNN_STATUS_SUCCESS,
                cudnnBackendGetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, &n, back));
  EXPECT_EQ_INT("4 dimensions", 4, n);
  EXPECT_EQ_INT("dimension 2", 1024, back[2]);
  EXPECT_STATUS("set after finalize", CUDNN_STATUS_NOT_INITIALIZED,
                cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid));
  EXPECT_STATUS("get with the wrong type", CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE,
                cudnnBackendGetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_FLOAT, 4, &n, back));

  // From here on Genie only: this part has not been run on a real GPU yet (scripts/real-gpu-check.sh records it the
  // next time one is at hand). A forward convolution as cudnn-frontend builds it: tensors, a convolution
  // descriptor, the operation, the graph; heuristics rank engines, a plan is made and executed on the stream.
  if (!genie) {
    SKIP_ON_REAL_GPU("convolution graph, heuristics, plan, execute, legacy API", "not yet recorded on a real GPU");
    EXPECT_STATUS("DestroyDescriptor", CUDNN_STATUS_SUCCESS, cudnnBackendDestroyDescriptor(t));
    EXPECT_STATUS("Destroy", CUDNN_STATUS_SUCCESS, cudnnDestroy(h));
    return finish("cudnn_api");
  }
  auto tensor = [&](int64_t id, int64_t c, int64_t hw) {  // [32, c, hw, hw] channels-last bf16
    cudnnBackendDescriptor_t d;
    int64_t td[4] = {32, c, hw, hw}, ts[4] = {c * hw * hw, 1, hw * c, c};
    if (id == 'w') td[0] = 64, ts[0] = c * hw * hw;
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &d);
    cudnnBackendSetAttribute(d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
    cudnnBackendSetAttribute(d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, td);
    cudnnBackendSetAttribute(d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, ts);
    cudnnBackendSetAttribute(d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &id);
    cudnnBackendSetAttribute(d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    EXPECT_STATUS("Finalize(TENSOR)", CUDNN_STATUS_SUCCESS, cudnnBackendFinalize(d));
    return d;
  };
  cudnnBackendDescriptor_t x = tensor('x', 64, 56), w = tensor('w', 64, 3), y = tensor('y', 64, 56);
  cudnnBackendDescriptor_t conv, op, graph, heur;
  cudnnBackendCreateDescriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, &conv);
  int64_t spatial = 2, pad[2] = {1, 1}, stride[2] = {1, 1}, dil[2] = {1, 1};
  cudnnDataType_t comp = CUDNN_DATA_FLOAT;
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial);
  cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
  cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
  cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
  cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride);
  cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dil);
  EXPECT_STATUS("Finalize(CONVOLUTION)", CUDNN_STATUS_SUCCESS, cudnnBackendFinalize(conv));
  cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, &op);
  cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
  cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w);
  cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
  cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                           &conv);
  EXPECT_STATUS("Finalize(CONVOLUTION_FORWARD)", CUDNN_STATUS_SUCCESS, cudnnBackendFinalize(op));
  cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &graph);
  cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
  EXPECT_STATUS("Finalize(OPERATIONGRAPH) without operations", CUDNN_STATUS_BAD_PARAM, cudnnBackendFinalize(graph));
  cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op);
  EXPECT_STATUS("Finalize(OPERATIONGRAPH)", CUDNN_STATUS_SUCCESS, cudnnBackendFinalize(graph));
  int64_t engines = -1;
  EXPECT_STATUS("get ENGINE_GLOBAL_COUNT", CUDNN_STATUS_SUCCESS,
                cudnnBackendGetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64, 1, &n,
                                         &engines));
  EXPECT_EQ_INT("engines for a convolution", 1, engines > 0);
  cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur);
  cudnnBackendHeurMode_t hm = CUDNN_HEUR_MODE_INSTANT;
  cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
  cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &hm);
  EXPECT_STATUS("Finalize(ENGINEHEUR)", CUDNN_STATUS_SUCCESS, cudnnBackendFinalize(heur));
  cudnnBackendDescriptor_t cfg, plan, pack;
  cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg);
  n = -1;
  EXPECT_STATUS("get ENGINEHEUR_RESULTS", CUDNN_STATUS_SUCCESS,
                cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &cfg));
  EXPECT_EQ_INT("engine configurations", 1, n >= 1);
  cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan);
  cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
  cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
  EXPECT_STATUS("Finalize(EXECUTION_PLAN)", CUDNN_STATUS_SUCCESS, cudnnBackendFinalize(plan));
  int64_t ws = -1;
  EXPECT_STATUS("get WORKSPACE_SIZE", CUDNN_STATUS_SUCCESS,
                cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, &ws));
  void *dx, *dw, *dy, *dws;
  CHECK_CUDA(cudaMalloc(&dx, 32 * 64 * 56 * 56 * 2));
  CHECK_CUDA(cudaMalloc(&dw, 64 * 64 * 9 * 2));
  CHECK_CUDA(cudaMalloc(&dy, 32 * 64 * 56 * 56 * 2));
  CHECK_CUDA(cudaMalloc(&dws, ws > 0 ? ws : 1));
  int64_t uids[3] = {'x', 'w', 'y'};
  void* ptrs[3] = {dx, dw, dy};
  cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
  cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
  cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs);
  cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &dws);
  EXPECT_STATUS("Finalize(VARIANT_PACK)", CUDNN_STATUS_SUCCESS, cudnnBackendFinalize(pack));
  cudaEvent_t e0, e1;
  CHECK_CUDA(cudaEventCreate(&e0));
  CHECK_CUDA(cudaEventCreate(&e1));
  CHECK_CUDA(cudaEventRecord(e0, s));
  EXPECT_STATUS("Execute", CUDNN_STATUS_SUCCESS, cudnnBackendExecute(h, plan, pack));
  CHECK_CUDA(cudaEventRecord(e1, s));
  CHECK_CUDA(cudaEventSynchronize(e1));
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
  // 2 x 32 x 64 x 64 x 56 x 56 x 9 = 7.4 GFLOP on bf16 tensor cores: tens of microseconds on an H200.
  std::printf("convolution on the stream: %.3f ms\n", ms);
  EXPECT_EQ_INT("the convolution took GPU time", 1, ms > 0.005f && ms < 1.0f);
  EXPECT_STATUS("Execute on a bad handle", CUDNN_STATUS_BAD_PARAM, cudnnBackendExecute((cudnnHandle_t)&major, plan, pack));
  for (cudnnBackendDescriptor_t d : {pack, plan, cfg, heur, graph, op, conv, x, w, y, t})
    EXPECT_STATUS("DestroyDescriptor", CUDNN_STATUS_SUCCESS, cudnnBackendDestroyDescriptor(d));
  EXPECT_STATUS("Destroy twice", CUDNN_STATUS_BAD_PARAM, cudnnBackendDestroyDescriptor(t));

  // The legacy API: descriptors and the v7 algorithm ranking.
  cudnnTensorDescriptor_t lx;
  cudnnFilterDescriptor_t lw;
  cudnnConvolutionDescriptor_t lc;
  EXPECT_STATUS("cudnnCreateTensorDescriptor", CUDNN_STATUS_SUCCESS, cudnnCreateTensorDescriptor(&lx));
  EXPECT_STATUS("cudnnCreateFilterDescriptor", CUDNN_STATUS_SUCCESS, cudnnCreateFilterDescriptor(&lw));
  EXPECT_STATUS("cudnnCreateConvolutionDescriptor", CUDNN_STATUS_SUCCESS, cudnnCreateConvolutionDescriptor(&lc));
  EXPECT_STATUS("SetTensor4d", CUDNN_STATUS_SUCCESS,
                cudnnSetTensor4dDescriptor(lx, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, 32, 64, 56, 56));
  EXPECT_STATUS("SetFilter4d", CUDNN_STATUS_SUCCESS,
                cudnnSetFilter4dDescriptor(lw, CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, 64, 64, 3, 3));
  EXPECT_STATUS("SetConvolution2d", CUDNN_STATUS_SUCCESS,
                cudnnSetConvolution2dDescriptor(lc, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int returned = 0;
  EXPECT_STATUS("GetConvolutionForwardAlgorithm_v7", CUDNN_STATUS_SUCCESS,
                cudnnGetConvolutionForwardAlgorithm_v7(h, lx, lw, lc, lx, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf));
  EXPECT_EQ_INT("the best algorithm runs on tensor cores", CUDNN_TENSOR_OP_MATH, perf[0].mathType);
  EXPECT_STATUS("SetTensor4d with a bad data type", CUDNN_STATUS_BAD_PARAM,
                cudnnSetTensor4dDescriptor(lx, CUDNN_TENSOR_NHWC, (cudnnDataType_t)999, 1, 1, 1, 1));
  cudnnDestroyTensorDescriptor(lx);
  cudnnDestroyFilterDescriptor(lw);
  cudnnDestroyConvolutionDescriptor(lc);
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(dw));
  CHECK_CUDA(cudaFree(dy));
  CHECK_CUDA(cudaFree(dws));
  EXPECT_STATUS("Destroy", CUDNN_STATUS_SUCCESS, cudnnDestroy(h));
  EXPECT_STATUS("Destroy twice", CUDNN_STATUS_BAD_PARAM, cudnnDestroy(h));
  return finish("cudnn_api");
}
