// SPDX-License-Identifier: Apache-2.0
// Example: what Genie's cuDNN offers a framework, against the real cudnn.h: versions PyTorch's compatibility check
// accepts, handles and streams, backend descriptors that keep their attributes, heuristics without engines (the
// "not supported" a framework falls back from), and a clean CUDNN_STATUS_NOT_SUPPORTED from the legacy compute API.
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
  // Genie only, from here on where marked: a bad or destroyed handle is undefined behaviour in cuDNN (it crashed
  // on an H200), and Genie's cuDNN has no engines (PyTorch falls back to its own kernels), which a real one has.
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

  // An operation graph finalizes, but no engine exists: heuristics return zero configurations.
  if (!genie) {
    SKIP_ON_REAL_GPU("operation graph, heuristics, engines, legacy API, destroy twice", "Genie's cuDNN has no engines");
    EXPECT_STATUS("DestroyDescriptor", CUDNN_STATUS_SUCCESS, cudnnBackendDestroyDescriptor(t));
    EXPECT_STATUS("Destroy", CUDNN_STATUS_SUCCESS, cudnnDestroy(h));
    return finish("cudnn_api");
  }
  cudnnBackendDescriptor_t graph, heur, cfg;
  EXPECT_STATUS("Create(OPERATIONGRAPH)", CUDNN_STATUS_SUCCESS,
                cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &graph));
  EXPECT_STATUS("set graph HANDLE", CUDNN_STATUS_SUCCESS,
                cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h));
  EXPECT_STATUS("Finalize(OPERATIONGRAPH)", CUDNN_STATUS_SUCCESS, cudnnBackendFinalize(graph));
  int64_t engines = -1;
  EXPECT_STATUS("get ENGINE_GLOBAL_COUNT", CUDNN_STATUS_SUCCESS,
                cudnnBackendGetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64, 1, &n,
                                         &engines));
  EXPECT_EQ_INT("no engines", 0, engines);
  EXPECT_STATUS("Create(ENGINEHEUR)", CUDNN_STATUS_SUCCESS,
                cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur));
  EXPECT_STATUS("set heuristic graph", CUDNN_STATUS_SUCCESS,
                cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                         &graph));
  EXPECT_STATUS("Finalize(ENGINEHEUR)", CUDNN_STATUS_SUCCESS, cudnnBackendFinalize(heur));
  EXPECT_STATUS("Create(ENGINECFG)", CUDNN_STATUS_SUCCESS,
                cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg));
  n = -1;
  EXPECT_STATUS("get ENGINEHEUR_RESULTS", CUDNN_STATUS_SUCCESS,
                cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &cfg));
  EXPECT_EQ_INT("zero engine configurations", 0, n);
  EXPECT_STATUS("Finalize(ENGINECFG)", CUDNN_STATUS_NOT_SUPPORTED, cudnnBackendFinalize(cfg));
  EXPECT_STATUS("Execute", CUDNN_STATUS_NOT_SUPPORTED, cudnnBackendExecute(h, cfg, cfg));
  for (cudnnBackendDescriptor_t d : {cfg, heur, graph, t})
    EXPECT_STATUS("DestroyDescriptor", CUDNN_STATUS_SUCCESS, cudnnBackendDestroyDescriptor(d));
  EXPECT_STATUS("Destroy twice", CUDNN_STATUS_BAD_PARAM, cudnnBackendDestroyDescriptor(t));

  // The legacy API: a clean "not supported".
  cudnnTensorDescriptor_t legacy;
  EXPECT_STATUS("cudnnCreateTensorDescriptor is not emulated", CUDNN_STATUS_NOT_SUPPORTED,
                cudnnCreateTensorDescriptor(&legacy));
  EXPECT_STATUS("Destroy", CUDNN_STATUS_SUCCESS, cudnnDestroy(h));
  EXPECT_STATUS("Destroy twice", CUDNN_STATUS_BAD_PARAM, cudnnDestroy(h));
  return finish("cudnn_api");
}
