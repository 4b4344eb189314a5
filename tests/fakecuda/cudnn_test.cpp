// SPDX-License-Identifier: Apache-2.0
// Tests of libcudnn.so.9's convolution support (its sources compiled into this test with the static runtime): the
// convolution cost model, the backend graph API (operation graphs, heuristics, engines, plans, execution, errors)
// and the legacy v7 API (algorithm ranking, Find, convolution calls, batch normalization).
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <cudnn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "dnn/conv_engines.hpp"
#include "genie/common/config.hpp"
#include "genie/fakecuda/runtime.hpp"

namespace genie::fakecuda {
namespace {

Runtime& runtime() {
  static Runtime* rt = [] {
    auto c = config::Config::load({{"GENIE_GPUS", "1"}, {"GENIE_DEVICE", "h200"}, {"GENIE_HOST_CPU_SCALE", "0"}});
    EXPECT_TRUE(c.is_ok());
    config::set_global_for_testing(c.value());
    return Runtime::instance();
  }();
  return *rt;
}

std::string last_error() {
  char buf[256] = {};
  cudnnGetLastErrorString(buf, sizeof(buf));
  return buf;
}

// --- the convolution cost model -------------------------------------------------------------------------------
ConvShape resnet_3x3(int64_t batch, GemmMath math, uint8_t bytes) {
  ConvShape s;  // ResNet-50 layer3 3x3 convolution: 256 -> 256 channels at 14x14
  s.n = batch, s.c = 256, s.k = 256;
  s.in = {14, 14, 1}, s.filter = {3, 3, 1}, s.out = {14, 14, 1};
  s.math = math, s.elem_bytes = bytes;
  return s;
}

TEST(ConvCost, ThePassesShareTheirMultiplyAddsAndTheImplicitGemmHasThem) {
  ConvShape s = resnet_3x3(64, GemmMath::kBf16, 2);
  const double macs = 64.0 * 256 * 256 * 14 * 14 * 9;
  for (ConvPass p : {ConvPass::kForward, ConvPass::kBackwardData, ConvPass::kBackwardFilter}) {
    s.pass = p;
    EXPECT_DOUBLE_EQ(s.macs(), macs);
    GemmShape g = s.implicit_gemm();
    EXPECT_DOUBLE_EQ(g.flops(), 2 * macs);
  }
  s.pass = ConvPass::kBackwardFilter;
  EXPECT_EQ(s.implicit_gemm().k, 64 * 14 * 14);  // the weight gradient reduces over N*P*Q
  EXPECT_DOUBLE_EQ(s.tensor_bytes(), (64.0 * 256 * 196 * 2 + 256.0 * 256 * 9) * 2);
}

TEST(ConvCost, TensorCoresBeatCudaCoresOnALargeConvolutionAndBatchScalesTime) {
  const CostModel& cost = runtime().cost_model();
  SimTime tc = cost.convolution(resnet_3x3(256, GemmMath::kBf16, 2));
  SimTime fma = cost.convolution(resnet_3x3(256, GemmMath::kFp32, 2));
  EXPECT_LT(tc.count_ns() * 5, fma.count_ns());  // H200: ~990 dense bf16 TFLOP/s vs ~67 fp32
  SimTime half = cost.convolution(resnet_3x3(128, GemmMath::kBf16, 2));
  EXPECT_LT(half, tc);
  EXPECT_GT(half.count_ns() * 3, tc.count_ns());  // about linear once the device is full
}

TEST(ConvCost, APointwiseSizedConvolutionIsBoundByItsBytes) {
  const CostModel& cost = runtime().cost_model();
  ConvShape s;  // 1x1, 32 -> 32 channels over 512x512 images: 16 flops per byte, far below an H200's ridge
  s.n = 8, s.c = 32, s.k = 32, s.in = {512, 512, 1}, s.out = {512, 512, 1};
  s.math = GemmMath::kBf16, s.elem_bytes = 2, s.channel_multiple = 8;
  const double bw = runtime().options().spec.hbm_bw_bytes_per_s;
  const double floor_ns = s.tensor_bytes() / bw * 1e9;
  SimTime t = cost.convolution(s);
  EXPECT_GT(t.to_us() * 1e3, floor_ns);
  EXPECT_LT(t.to_us() * 1e3, 2 * floor_ns + 5000);
  s.extra_bytes = s.tensor_bytes();  // a fused residual of the same size costs its bytes
  EXPECT_GT(cost.convolution(s).to_us() * 1e3, t.to_us() * 1e3 + 0.8 * floor_ns);
}

TEST(ConvCost, WinogradsFewerMultipliesShortenAComputeBoundConvolution) {
  const CostModel& cost = runtime().cost_model();
  ConvShape s = resnet_3x3(256, GemmMath::kFp32, 4);
  SimTime direct = cost.convolution(s);
  s.flop_scale = 1 / 2.25;
  EXPECT_LT(cost.convolution(s).count_ns() * 2, direct.count_ns());
}

// --- the backend graph API -------------------------------------------------------------------------------------
cudnnBackendDescriptor_t make(cudnnBackendDescriptorType_t t) {
  cudnnBackendDescriptor_t d = nullptr;
  EXPECT_EQ(cudnnBackendCreateDescriptor(t, &d), CUDNN_STATUS_SUCCESS);
  return d;
}

void set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t n, cudnnBackendAttributeType_t t, int64_t count,
         const void* v) {
  ASSERT_EQ(cudnnBackendSetAttribute(d, n, t, count, v), CUDNN_STATUS_SUCCESS) << last_error();
}

cudnnBackendDescriptor_t tensor(int64_t uid, std::vector<int64_t> dims, bool nhwc, cudnnDataType_t dt,
                                bool is_virtual = false) {
  std::vector<int64_t> strides(dims.size(), 1);
  if (!nhwc) {
    for (size_t i = dims.size() - 1; i-- > 0;) strides[i] = strides[i + 1] * dims[i + 1];
  } else {
    int64_t acc = dims[1];
    for (size_t i = dims.size() - 1; i >= 2; --i) strides[i] = acc, acc *= dims[i];
    strides[0] = acc;
  }
  auto d = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  int64_t align = 16;
  bool v = is_virtual;
  set(d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
  set(d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, static_cast<int64_t>(dims.size()), dims.data());
  set(d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, static_cast<int64_t>(strides.size()), strides.data());
  set(d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
  set(d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
  set(d, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &v);
  EXPECT_EQ(cudnnBackendFinalize(d), CUDNN_STATUS_SUCCESS) << last_error();
  return d;
}

cudnnBackendDescriptor_t conv_desc(int64_t pad, int64_t stride) {
  auto d = make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  int64_t dims = 2;
  int64_t pads[2] = {pad, pad}, strides[2] = {stride, stride}, dil[2] = {1, 1};
  cudnnDataType_t ct = CUDNN_DATA_FLOAT;
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  set(d, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims);
  set(d, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &ct);
  set(d, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  set(d, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pads);
  set(d, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pads);
  set(d, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, strides);
  set(d, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dil);
  EXPECT_EQ(cudnnBackendFinalize(d), CUDNN_STATUS_SUCCESS) << last_error();
  return d;
}

/// A forward-convolution operation graph: x [8,64,56,56], w [64,64,3,3] (pad 1) -> y [8,64,56,56].
struct ConvGraph {
  cudnnHandle_t handle = nullptr;
  cudnnBackendDescriptor_t x, w, y, conv, op, graph;
  ConvGraph(bool nhwc, cudnnDataType_t dt, int64_t y_size = 56, int64_t filter = 3) {
    (void)runtime();
    EXPECT_EQ(cudnnCreate(&handle), CUDNN_STATUS_SUCCESS);
    x = tensor('x', {8, 64, 56, 56}, nhwc, dt);
    w = tensor('w', {64, 64, filter, filter}, nhwc, dt);
    y = tensor('y', {8, 64, y_size, y_size}, nhwc, dt);
    conv = conv_desc(filter / 2, 1);
    op = make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    float alpha = 1, beta = 0;
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w);
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv);
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
    graph = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  }
  cudnnStatus_t finalize_op() { return cudnnBackendFinalize(op); }
  void finalize() {
    ASSERT_EQ(finalize_op(), CUDNN_STATUS_SUCCESS) << last_error();
    set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op);
    ASSERT_EQ(cudnnBackendFinalize(graph), CUDNN_STATUS_SUCCESS) << last_error();
  }
  ~ConvGraph() {
    for (auto d : {x, w, y, conv, op, graph}) cudnnBackendDestroyDescriptor(d);
    cudnnDestroy(handle);
  }
  /// Heuristics' engine configurations in `mode`.
  std::vector<cudnnBackendDescriptor_t> configs(cudnnBackendHeurMode_t mode) {
    auto heur = make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    EXPECT_EQ(cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                       &graph), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode),
              CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnBackendFinalize(heur), CUDNN_STATUS_SUCCESS) << last_error();
    int64_t count = -1;
    EXPECT_EQ(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                       nullptr), CUDNN_STATUS_SUCCESS);
    std::vector<cudnnBackendDescriptor_t> cfgs;
    for (int64_t i = 0; i < count; ++i) cfgs.push_back(make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
    int64_t got = -1;
    EXPECT_EQ(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got,
                                       cfgs.data()), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(got, count);
    cudnnBackendDestroyDescriptor(heur);  // the configurations outlive it
    return cfgs;
  }
};

int64_t engine_index(cudnnBackendDescriptor_t cfg, std::vector<int>* notes = nullptr) {
  auto engine = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  int64_t n = 0, index = -1;
  EXPECT_EQ(cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &engine),
            CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &index),
            CUDNN_STATUS_SUCCESS);
  if (notes) {
    cudnnBackendNumericalNote_t buf[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    EXPECT_EQ(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                       CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &n, buf), CUDNN_STATUS_SUCCESS);
    notes->assign(buf, buf + n);
  }
  cudnnBackendDestroyDescriptor(engine);
  return index;
}

cudnnBackendDescriptor_t plan_of(cudnnHandle_t h, cudnnBackendDescriptor_t cfg, int64_t* workspace) {
  auto plan = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
  set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
  set(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
  EXPECT_EQ(cudnnBackendFinalize(plan), CUDNN_STATUS_SUCCESS) << last_error();
  int64_t n = 0;
  EXPECT_EQ(cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, workspace),
            CUDNN_STATUS_SUCCESS);
  return plan;
}

cudnnBackendDescriptor_t pack(std::vector<int64_t> uids, std::vector<void*> ptrs, void* workspace) {
  auto v = make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  set(v, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<int64_t>(uids.size()), uids.data());
  set(v, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, static_cast<int64_t>(ptrs.size()), ptrs.data());
  set(v, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
  EXPECT_EQ(cudnnBackendFinalize(v), CUDNN_STATUS_SUCCESS) << last_error();
  return v;
}

/// GPU time the legacy stream of device 0 advances by while `f` enqueues work on it.
template <class F>
SimTime timed(F&& f) {
  Runtime& rt = runtime();
  Stream& s = rt.device(0).legacy_stream();
  EXPECT_TRUE(rt.synchronize(s).is_ok());
  const SimTime t0 = rt.clock().now();
  f();
  EXPECT_TRUE(rt.synchronize(s).is_ok());
  return rt.clock().now() - t0;
}

TEST(CudnnBackend, HeuristicsRankTensorCoresFirstForBf16AndFallbackIsTheGenericEngine) {
  ConvGraph g(/*nhwc=*/true, CUDNN_DATA_BFLOAT16);
  g.finalize();
  int64_t n = 0, engines = 0;
  ASSERT_EQ(cudnnBackendGetAttribute(g.graph, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64, 1, &n,
                                     &engines), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(engines, dnn::kConvEngineCount);
  auto cfgs = g.configs(CUDNN_HEUR_MODE_INSTANT);
  ASSERT_EQ(cfgs.size(), 2u);  // implicit GEMM on tensor cores and on CUDA cores; no Winograd for bf16
  std::vector<int> notes;
  EXPECT_EQ(engine_index(cfgs[0], &notes), 1);
  EXPECT_NE(std::find(notes.begin(), notes.end(), CUDNN_NUMERICAL_NOTE_TENSOR_CORE), notes.end());
  EXPECT_EQ(engine_index(cfgs[1], &notes), 0);
  EXPECT_TRUE(notes.empty());
  // Asked for fewer than it has, the count says how many were written (cudnn-frontend sizes its list by it).
  auto heur = make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_INSTANT;
  set(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g.graph);
  set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  ASSERT_EQ(cudnnBackendFinalize(heur), CUDNN_STATUS_SUCCESS);
  auto one = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
  int64_t written = -1;
  ASSERT_EQ(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &written,
                                     &one), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(written, 1);
  EXPECT_EQ(engine_index(one), 1);
  cudnnBackendDestroyDescriptor(one);
  cudnnBackendDestroyDescriptor(heur);
  auto fallback = g.configs(CUDNN_HEUR_MODE_FALLBACK);
  ASSERT_EQ(fallback.size(), 1u);
  EXPECT_EQ(engine_index(fallback[0]), 0);
  for (auto c : cfgs) cudnnBackendDestroyDescriptor(c);
  for (auto c : fallback) cudnnBackendDestroyDescriptor(c);
}

TEST(CudnnBackend, APlanRunsItsEngineForItsModelledTimeAndNchwNeedsATransformWorkspace) {
  ConvGraph g(/*nhwc=*/false, CUDNN_DATA_HALF);
  g.finalize();
  auto cfgs = g.configs(CUDNN_HEUR_MODE_A);
  ASSERT_FALSE(cfgs.empty());
  ASSERT_EQ(engine_index(cfgs[0]), 1);
  int64_t ws = -1;
  auto plan = plan_of(g.handle, cfgs[0], &ws);
  EXPECT_GT(ws, 8LL * 64 * 56 * 56 * 2);  // NCHW -> NHWC copies of x and y
  // The descriptors the graph was built from may go: the plan keeps what it needs.
  cudnnBackendDestroyDescriptor(g.op);
  cudnnBackendDestroyDescriptor(g.x);
  g.op = g.x = nullptr;

  dnn::TensorInfo x{'x', CUDNN_DATA_HALF, {8, 64, 56, 56}, {200704, 3136, 56, 1}};
  dnn::TensorInfo w{'w', CUDNN_DATA_HALF, {64, 64, 3, 3}, {576, 9, 3, 1}};
  dnn::ConvProblem p;
  std::string why;
  cudnnStatus_t st;
  dnn::ConvParams cp;
  cp.pre_pad = cp.post_pad = {1, 1, 0};
  ASSERT_TRUE(dnn::make_conv_problem(ConvPass::kForward, x, w, x, cp, &p, &why, &st)) << why;
  const dnn::ConvEngine expect = dnn::conv_engine(p, 1, runtime().cost_model());
  ASSERT_EQ(expect.kernels.size(), 4u);  // two transforms in, the convolution, one transform out
  std::vector<char> buf(16);
  auto v = pack({'x', 'w', 'y'}, {buf.data(), buf.data(), buf.data()}, buf.data());
  SimTime t = timed([&] { EXPECT_EQ(cudnnBackendExecute(g.handle, plan, v), CUDNN_STATUS_SUCCESS) << last_error(); });
  EXPECT_GE(t, expect.total);
  EXPECT_LT(t, expect.total + SimTime::us(50));  // plus four launches' API overhead at most
  cudnnBackendDestroyDescriptor(v);
  cudnnBackendDestroyDescriptor(plan);
  for (auto c : cfgs) cudnnBackendDestroyDescriptor(c);
}

TEST(CudnnBackend, ExecuteRefusesAMissingTensorOrWorkspace) {
  ConvGraph g(/*nhwc=*/false, CUDNN_DATA_HALF);
  g.finalize();
  auto cfgs = g.configs(CUDNN_HEUR_MODE_INSTANT);
  int64_t ws = 0;
  auto plan = plan_of(g.handle, cfgs[0], &ws);
  ASSERT_GT(ws, 0);
  std::vector<char> buf(16);
  auto no_y = pack({'x', 'w'}, {buf.data(), buf.data()}, buf.data());
  EXPECT_EQ(cudnnBackendExecute(g.handle, plan, no_y), CUDNN_STATUS_BAD_PARAM);
  EXPECT_NE(last_error().find("uid 121"), std::string::npos);  // 'y'
  auto no_ws = pack({'x', 'w', 'y'}, {buf.data(), buf.data(), buf.data()}, nullptr);
  EXPECT_EQ(cudnnBackendExecute(g.handle, plan, no_ws), CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
  EXPECT_EQ(cudnnBackendExecute(nullptr, plan, no_ws), CUDNN_STATUS_BAD_PARAM);
  EXPECT_EQ(cudnnBackendExecute(g.handle, no_ws, plan), CUDNN_STATUS_BAD_PARAM);
  for (auto d : {no_y, no_ws, plan}) cudnnBackendDestroyDescriptor(d);
  for (auto c : cfgs) cudnnBackendDestroyDescriptor(c);
}

TEST(CudnnBackend, ShapeMismatchUnsupportedEnginesAndBadIndicesAreRefused) {
  {
    ConvGraph g(/*nhwc=*/true, CUDNN_DATA_BFLOAT16, /*y_size=*/55);
    EXPECT_EQ(g.finalize_op(), CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH);
    EXPECT_NE(last_error().find("y's spatial dimension 0 is 55"), std::string::npos);
  }
  ConvGraph g(/*nhwc=*/true, CUDNN_DATA_FLOAT, 56, /*filter=*/1);
  g.finalize();
  auto engine = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  int64_t index = 2;  // Winograd: 3x3 filters only
  set(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g.graph);
  set(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &index);
  EXPECT_EQ(cudnnBackendFinalize(engine), CUDNN_STATUS_NOT_SUPPORTED);
  EXPECT_NE(last_error().find("Winograd"), std::string::npos);
  ASSERT_EQ(cudnnBackendInitialize(engine), CUDNN_STATUS_SUCCESS);
  index = 7;
  set(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g.graph);
  set(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &index);
  EXPECT_EQ(cudnnBackendFinalize(engine), CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND);
  ASSERT_EQ(cudnnBackendInitialize(engine), CUDNN_STATUS_SUCCESS);
  index = 1;  // float on tensor cores is TF32: it says so
  set(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g.graph);
  set(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &index);
  ASSERT_EQ(cudnnBackendFinalize(engine), CUDNN_STATUS_SUCCESS) << last_error();
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  int64_t n = 0;
  ASSERT_EQ(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                     CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &n, notes), CUDNN_STATUS_SUCCESS);
  EXPECT_NE(std::find(notes, notes + n, CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS), notes + n);
  // Asking for a descriptor attribute into a descriptor of another type.
  auto wrong = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  EXPECT_EQ(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                                     &wrong), CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE);
  // Setting a descriptor that is not finalized.
  auto raw = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  auto op = make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  EXPECT_EQ(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                     &raw), CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED);
  for (auto d : {engine, wrong, raw, op}) cudnnBackendDestroyDescriptor(d);
}

TEST(CudnnBackend, AGraphWithoutAConvolutionHasNoEngines) {
  (void)runtime();
  auto a = tensor(1, {1, 64, 64}, false, CUDNN_DATA_HALF);
  auto b = tensor(2, {1, 64, 64}, false, CUDNN_DATA_HALF);
  auto c = tensor(3, {1, 64, 64}, false, CUDNN_DATA_HALF);
  auto mm = make(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
  cudnnDataType_t ct = CUDNN_DATA_FLOAT;
  set(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &ct);
  ASSERT_EQ(cudnnBackendFinalize(mm), CUDNN_STATUS_SUCCESS);
  auto op = make(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
  set(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a);
  set(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b);
  set(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c);
  set(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mm);
  ASSERT_EQ(cudnnBackendFinalize(op), CUDNN_STATUS_SUCCESS);
  auto graph = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op);
  ASSERT_EQ(cudnnBackendFinalize(graph), CUDNN_STATUS_SUCCESS);
  int64_t n = 0, engines = -1;
  ASSERT_EQ(cudnnBackendGetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64, 1, &n,
                                     &engines), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(engines, 0);
  for (auto d : {a, b, c, mm, op, graph}) cudnnBackendDestroyDescriptor(d);
}

// --- the legacy API ---------------------------------------------------------------------------------------------
struct Legacy {
  cudnnHandle_t h = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t c = nullptr;
  explicit Legacy(cudnnTensorFormat_t fmt) {
    (void)runtime();
    EXPECT_EQ(cudnnCreate(&h), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnCreateTensorDescriptor(&x), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnCreateTensorDescriptor(&y), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnCreateFilterDescriptor(&w), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnCreateConvolutionDescriptor(&c), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnSetTensor4dDescriptor(x, fmt, CUDNN_DATA_HALF, 32, 128, 28, 28), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_HALF, fmt, 128, 128, 3, 3), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnSetConvolution2dDescriptor(c, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
              CUDNN_STATUS_SUCCESS);
    int n, k, p, q;
    EXPECT_EQ(cudnnGetConvolution2dForwardOutputDim(c, x, w, &n, &k, &p, &q), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(p, 28);
    EXPECT_EQ(cudnnSetTensor4dDescriptor(y, fmt, CUDNN_DATA_HALF, n, k, p, q), CUDNN_STATUS_SUCCESS);
  }
  ~Legacy() {
    cudnnDestroyTensorDescriptor(x);
    cudnnDestroyTensorDescriptor(y);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyConvolutionDescriptor(c);
    cudnnDestroy(h);
  }
};

TEST(CudnnLegacy, V7RanksByModelledTimeAndTheMathTypeDecidesTensorCores) {
  Legacy l(CUDNN_TENSOR_NHWC);
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int n = 0;
  ASSERT_EQ(cudnnGetConvolutionForwardAlgorithm_v7(l.h, l.x, l.w, l.c, l.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, perf),
            CUDNN_STATUS_SUCCESS) << last_error();
  ASSERT_EQ(n, CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
  EXPECT_EQ(perf[0].algo, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
  EXPECT_EQ(perf[0].mathType, CUDNN_TENSOR_OP_MATH);
  for (int i = 1; i < n && perf[i].status == CUDNN_STATUS_SUCCESS; ++i) EXPECT_LE(perf[i - 1].time, perf[i].time);
  EXPECT_EQ(perf[n - 1].status, CUDNN_STATUS_NOT_SUPPORTED);  // FFT and friends are not modelled
  ASSERT_EQ(cudnnSetConvolutionMathType(l.c, CUDNN_FMA_MATH), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnGetConvolutionForwardAlgorithm_v7(l.h, l.x, l.w, l.c, l.y, 1, &n, perf), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(perf[0].mathType, CUDNN_FMA_MATH);
}

TEST(CudnnLegacy, FindRunsEveryAlgorithmAndTheConvolutionRunsTheChosenOne) {
  Legacy l(CUDNN_TENSOR_NCHW);
  cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
  int n = 0;
  float sum_ms = 0;
  SimTime find = timed([&] {
    ASSERT_EQ(cudnnFindConvolutionBackwardFilterAlgorithmEx(l.h, l.x, nullptr, l.y, nullptr, l.c, l.w, nullptr,
                                                            CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &n, perf, nullptr,
                                                            0), CUDNN_STATUS_SUCCESS) << last_error();
  });
  for (int i = 0; i < n; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS) sum_ms += perf[i].time;
  EXPECT_GE(find.to_ms(), sum_ms * 0.999);
  ASSERT_EQ(perf[0].algo, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1);
  size_t ws = 0;
  ASSERT_EQ(cudnnGetConvolutionBackwardFilterWorkspaceSize(l.h, l.x, l.y, l.c, l.w, perf[0].algo, &ws),
            CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(ws, perf[0].memory);
  std::vector<char> buf(16);
  float one = 1, zero = 0;
  EXPECT_EQ(cudnnConvolutionBackwardFilter(l.h, &one, l.x, buf.data(), l.y, buf.data(), l.c, perf[0].algo, buf.data(),
                                           ws / 2, &zero, l.w, buf.data()),
            CUDNN_STATUS_BAD_PARAM);  // too little workspace
  SimTime t = timed([&] {
    EXPECT_EQ(cudnnConvolutionBackwardFilter(l.h, &one, l.x, buf.data(), l.y, buf.data(), l.c, perf[0].algo,
                                             buf.data(), ws, &zero, l.w, buf.data()), CUDNN_STATUS_SUCCESS);
  });
  EXPECT_NEAR(t.to_ms(), perf[0].time, 0.01);
  EXPECT_EQ(cudnnConvolutionBackwardFilter(l.h, &one, l.x, buf.data(), l.y, buf.data(), l.c,
                                           CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT, buf.data(), ws, &zero, l.w,
                                           buf.data()), CUDNN_STATUS_NOT_SUPPORTED);
}

TEST(CudnnLegacy, BatchNormReadsItsTensorAsManyTimesAsItsPassesNeed) {
  (void)runtime();
  cudnnHandle_t h;
  ASSERT_EQ(cudnnCreate(&h), CUDNN_STATUS_SUCCESS);
  cudnnTensorDescriptor_t x, p;
  ASSERT_EQ(cudnnCreateTensorDescriptor(&x), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnCreateTensorDescriptor(&p), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 256, 64, 56, 56), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnSetTensor4dDescriptor(p, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 64, 1, 1), CUDNN_STATUS_SUCCESS);
  std::vector<char> buf(16);
  float one = 1, zero = 0;
  SimTime fwd = timed([&] {
    EXPECT_EQ(cudnnBatchNormalizationForwardTrainingEx(
                  h, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, CUDNN_BATCHNORM_OPS_BN, &one, &zero, x, buf.data(), nullptr,
                  nullptr, x, buf.data(), p, buf.data(), buf.data(), 0.1, buf.data(), buf.data(), 1e-5, buf.data(),
                  buf.data(), nullptr, nullptr, 0, nullptr, 0),
              CUDNN_STATUS_SUCCESS) << last_error();
  });
  SimTime bwd = timed([&] {
    EXPECT_EQ(cudnnBatchNormalizationBackwardEx(h, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, CUDNN_BATCHNORM_OPS_BN, &one,
                                                &zero, &one, &zero, x, buf.data(), nullptr, nullptr, x, buf.data(),
                                                nullptr, nullptr, x, buf.data(), p, buf.data(), buf.data(), buf.data(),
                                                buf.data(), 1e-5, buf.data(), buf.data(), nullptr, nullptr, 0, nullptr, 0),
              CUDNN_STATUS_SUCCESS) << last_error();
  });
  const double bytes = 256.0 * 64 * 56 * 56 * 4;
  const double bw = runtime().options().spec.hbm_bw_bytes_per_s;
  EXPECT_GT(fwd.to_seconds(), 3 * bytes / bw);
  EXPECT_GT(bwd.to_seconds(), 5 * bytes / bw);
  EXPECT_LT(fwd, bwd);
  // The parameter descriptor must be 1 x C x 1 x 1 of the same C.
  ASSERT_EQ(cudnnSetTensor4dDescriptor(p, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 32, 1, 1), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(cudnnBatchNormalizationForwardInference(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x, buf.data(), x,
                                                    buf.data(), p, buf.data(), buf.data(), buf.data(), buf.data(), 1e-5),
            CUDNN_STATUS_BAD_PARAM);
  cudnnDestroyTensorDescriptor(x);
  cudnnDestroyTensorDescriptor(p);
  cudnnDestroy(h);
}

}  // namespace
}  // namespace genie::fakecuda
