// SPDX-License-Identifier: Apache-2.0
// The cuDNN backend (graph) API: descriptors keep their attributes; finalizing one checks it and derives what the
// library computes (a convolution's shapes, an operation graph's engines, heuristics' ranked engine configurations,
// an engine's numerical notes, a plan's workspace and kernels); cudnnBackendExecute runs a plan's kernels on the
// handle's stream as timed work (conv_engines.hpp). A finalized descriptor's state is immutable and shared: setting
// a descriptor attribute keeps the state it refers to (as cuDNN copies it), getting one gives the caller's
// descriptor that state. Graphs of one convolution (forward, backward data or backward filter) with pointwise
// operations fused after it have engines; any other graph finalizes and has none (cuDNN's answer for a graph it
// has no engine for), so frameworks fall back (docs/costmodel.md "cuDNN").
#include <cudnn.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "dnn/conv_engines.hpp"
#include "dnn/dnn_common.hpp"
#include "genie/common/enum_raw.hpp"
#include "genie/fakecuda/blas_handle.hpp"
#include "genie/fakecuda/runtime.hpp"

using genie::enum_raw;

namespace genie::fakecuda::dnn {
namespace {

struct DescState;
using StateRef = std::shared_ptr<DescState>;

struct Attr {
  int type = 0;
  int64_t count = 0;
  std::vector<unsigned char> bytes;  ///< the elements (descriptor attributes: none, see refs)
  std::vector<StateRef> refs;        ///< CUDNN_TYPE_BACKEND_DESCRIPTOR: the finalized states referred to
};

/// What finalizing an operation graph learns.
struct GraphInfo {
  bool has_engines = false;
  std::string no_engine_reason;
  ConvProblem conv;
  std::vector<TensorInfo> bound;  ///< the non-virtual tensors a variant pack must give pointers for
};

struct DescState {
  int type = 0;
  bool finalized = false;
  std::map<int, Attr> attrs;
  // Derived at finalize, by type.
  TensorInfo tensor;                         ///< TENSOR
  ConvParams conv;                           ///< CONVOLUTION
  std::shared_ptr<const ConvProblem> op;     ///< OPERATION_CONVOLUTION_*
  std::shared_ptr<const GraphInfo> graph;    ///< OPERATIONGRAPH, ENGINE, ENGINECFG, EXECUTION_PLAN
  int engine = -1;                           ///< ENGINE, ENGINECFG, EXECUTION_PLAN
  std::vector<ConvKernel> kernels;           ///< EXECUTION_PLAN
  int64_t workspace = 0;                     ///< ENGINECFG, EXECUTION_PLAN
};

struct BackendDesc {
  StateRef state;
};

struct DescRegistry {
  std::shared_mutex mu;
  std::unordered_map<const void*, std::unique_ptr<BackendDesc>> descriptors;
};
DescRegistry& desc_registry() {
  static DescRegistry* r = new DescRegistry();  // never destroyed: used from atexit handlers
  return *r;
}

BackendDesc* find_desc(const void* d) {
  DescRegistry& r = desc_registry();
  std::shared_lock lk(r.mu);
  auto it = r.descriptors.find(d);
  return it == r.descriptors.end() ? nullptr : it->second.get();
}

/// Size of one element of a backend attribute type (cudnn_graph_v9.h: enums are int, descriptors and handles are
/// pointers, cudnnFraction_t is two int64).
int64_t element_size(int type) {
  switch (type) {
    case CUDNN_TYPE_HANDLE: case CUDNN_TYPE_VOID_PTR: case CUDNN_TYPE_BACKEND_DESCRIPTOR: return sizeof(void*);
    case CUDNN_TYPE_BOOLEAN: return sizeof(bool);
    case CUDNN_TYPE_INT64: return sizeof(int64_t);
    case CUDNN_TYPE_FLOAT: return sizeof(float);
    case CUDNN_TYPE_DOUBLE: return sizeof(double);
    case CUDNN_TYPE_CHAR: return sizeof(char);
    case CUDNN_TYPE_FRACTION: return sizeof(cudnnFraction_t);
    default: return type >= 0 && type <= CUDNN_TYPE_MOE_GROUPED_MATMUL_MODE ? static_cast<int64_t>(sizeof(int)) : 0;
  }
}

// --- reading and writing attributes -------------------------------------------------------------------------
const Attr* find_attr(const DescState& s, int name) {
  auto it = s.attrs.find(name);
  return it == s.attrs.end() ? nullptr : &it->second;
}

template <class T>
void put(DescState& s, int name, int type, const std::vector<T>& v) {
  Attr a;
  a.type = type;
  a.count = static_cast<int64_t>(v.size());
  a.bytes.resize(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(a.bytes.data(), v.data(), a.bytes.size());
  s.attrs[name] = std::move(a);
}

void put_refs(DescState& s, int name, std::vector<StateRef> refs) {
  Attr a;
  a.type = CUDNN_TYPE_BACKEND_DESCRIPTOR;
  a.count = static_cast<int64_t>(refs.size());
  a.refs = std::move(refs);
  s.attrs[name] = std::move(a);
}

/// The elements of attribute `name` as T (int64, enums as int, ...); false when unset or of another type.
template <class T>
bool read(const DescState& s, int name, int type, std::vector<T>* out) {
  const Attr* a = find_attr(s, name);
  if (a == nullptr || a->type != type || static_cast<int64_t>(sizeof(T)) != element_size(type)) return false;
  out->resize(static_cast<size_t>(a->count));
  if (a->count > 0) std::memcpy(out->data(), a->bytes.data(), static_cast<size_t>(a->count) * sizeof(T));
  return true;
}

template <class T>
bool read_one(const DescState& s, int name, int type, T* out) {
  std::vector<T> v;
  if (!read(s, name, type, &v) || v.size() != 1) return false;
  *out = v[0];
  return true;
}

/// The finalized state attribute `name` refers to (its first element), or null.
StateRef ref(const DescState& s, int name) {
  const Attr* a = find_attr(s, name);
  if (a == nullptr || a->type != CUDNN_TYPE_BACKEND_DESCRIPTOR || a->refs.empty()) return nullptr;
  return a->refs[0];
}

/// Finalize's error for a missing attribute.
cudnnStatus_t missing(const char* what) {
  return fail("cudnnBackendFinalize", std::string(what) + " is not set", CUDNN_STATUS_BAD_PARAM);
}

// --- finalizing, by descriptor type --------------------------------------------------------------------------
cudnnStatus_t finalize_tensor(DescState& s) {
  TensorInfo& t = s.tensor;
  if (!read_one(s, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &t.dtype)) return missing("CUDNN_ATTR_TENSOR_DATA_TYPE");
  if (!read(s, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, &t.dims)) return missing("CUDNN_ATTR_TENSOR_DIMENSIONS");
  if (!read(s, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, &t.strides)) return missing("CUDNN_ATTR_TENSOR_STRIDES");
  if (!read_one(s, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &t.uid)) return missing("CUDNN_ATTR_TENSOR_UNIQUE_ID");
  char v = 0;  // a bool element (std::vector<bool> has no data())
  if (read_one(s, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, &v)) t.is_virtual = v != 0;
  if (t.dims.empty() || t.dims.size() > CUDNN_DIM_MAX || t.dims.size() != t.strides.size())
    return fail("cudnnBackendFinalize",
                "tensor " + std::to_string(t.uid) + ": " + std::to_string(t.dims.size()) + " dimensions and " +
                    std::to_string(t.strides.size()) + " strides",
                CUDNN_STATUS_BAD_PARAM);
  for (size_t i = 0; i < t.dims.size(); ++i)
    if (t.dims[i] <= 0 || t.strides[i] < 0)
      return fail("cudnnBackendFinalize",
                  "tensor " + std::to_string(t.uid) + ": dimension " + std::to_string(i) + " is " +
                      std::to_string(t.dims[i]) + " with stride " + std::to_string(t.strides[i]),
                  CUDNN_STATUS_BAD_PARAM);
  if (dtype_bytes(t.dtype) == 0)
    return fail("cudnnBackendFinalize", "tensor " + std::to_string(t.uid) + ": data type " + std::to_string(t.dtype),
                CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t finalize_convolution(DescState& s) {
  int64_t dims = 0;
  if (!read_one(s, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, &dims)) return missing("CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS");
  if (dims < 1 || dims > 3)
    return fail("cudnnBackendFinalize", "CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS is " + std::to_string(dims) + " (1 to 3)",
                CUDNN_STATUS_NOT_SUPPORTED_SHAPE);
  s.conv.spatial = static_cast<int>(dims);
  struct Field {
    int name;
    const char* text;
    std::array<int64_t, 3>* out;
  } fields[] = {{CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, "CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES", &s.conv.stride},
                {CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, "CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS", &s.conv.pre_pad},
                {CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, "CUDNN_ATTR_CONVOLUTION_POST_PADDINGS", &s.conv.post_pad},
                {CUDNN_ATTR_CONVOLUTION_DILATIONS, "CUDNN_ATTR_CONVOLUTION_DILATIONS", &s.conv.dilation}};
  for (const Field& f : fields) {
    std::vector<int64_t> v;
    if (!read(s, f.name, CUDNN_TYPE_INT64, &v)) return missing(f.text);
    if (static_cast<int64_t>(v.size()) != dims)
      return fail("cudnnBackendFinalize",
                  std::string(f.text) + " has " + std::to_string(v.size()) + " elements, the spatial dimensions " +
                      std::to_string(dims),
                  CUDNN_STATUS_BAD_PARAM);
    for (int64_t i = 0; i < dims; ++i) (*f.out)[static_cast<size_t>(i)] = v[static_cast<size_t>(i)];
  }
  return CUDNN_STATUS_SUCCESS;
}

/// The tensor state attribute `name` refers to; null with the error reported.
const DescState* tensor_ref(const DescState& s, int name, const char* text, cudnnStatus_t* st) {
  StateRef r = ref(s, name);
  if (r == nullptr || r->type != CUDNN_BACKEND_TENSOR_DESCRIPTOR) {
    *st = missing(text);
    return nullptr;
  }
  return r.get();
}

cudnnStatus_t finalize_conv_operation(DescState& s) {
  struct Roles {
    ConvPass pass;
    int x;
    const char* xt;
    int w;
    const char* wt;
    int y;
    const char* yt;
    int desc;
    const char* dt;
  };
  Roles r{};
  // Each attribute with its name, for the error that says which one is missing.
#define GENIE_ATTR(name) name, #name
  switch (s.type) {
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
      r = {ConvPass::kForward, GENIE_ATTR(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X),
           GENIE_ATTR(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W), GENIE_ATTR(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y),
           GENIE_ATTR(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC)};
      break;
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
      r = {ConvPass::kBackwardData, GENIE_ATTR(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX),
           GENIE_ATTR(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W), GENIE_ATTR(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY),
           GENIE_ATTR(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC)};
      break;
    default:
      r = {ConvPass::kBackwardFilter, GENIE_ATTR(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X),
           GENIE_ATTR(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW),
           GENIE_ATTR(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY),
           GENIE_ATTR(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC)};
      break;
  }
#undef GENIE_ATTR
  cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
  const DescState* x = tensor_ref(s, r.x, r.xt, &st);
  if (x == nullptr) return st;
  const DescState* w = tensor_ref(s, r.w, r.wt, &st);
  if (w == nullptr) return st;
  const DescState* y = tensor_ref(s, r.y, r.yt, &st);
  if (y == nullptr) return st;
  StateRef desc = ref(s, r.desc);
  if (desc == nullptr || desc->type != CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR) return missing(r.dt);
  auto p = std::make_shared<ConvProblem>();
  std::string why;
  if (!make_conv_problem(r.pass, x->tensor, w->tensor, y->tensor, desc->conv, p.get(), &why, &st))
    return fail("cudnnBackendFinalize", why, st);
  s.op = std::move(p);
  return CUDNN_STATUS_SUCCESS;
}

bool is_conv_op(int type) {
  return type == CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR ||
         type == CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR ||
         type == CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR;
}

/// Every tensor an operation names (its descriptor attributes of tensor type).
std::vector<const DescState*> op_tensors(const DescState& op) {
  std::vector<const DescState*> out;
  for (const auto& [name, a] : op.attrs)
    for (const StateRef& r : a.refs)
      if (r && r->type == CUDNN_BACKEND_TENSOR_DESCRIPTOR) out.push_back(r.get());
  return out;
}

cudnnStatus_t finalize_graph(DescState& s) {
  const Attr* ops = find_attr(s, CUDNN_ATTR_OPERATIONGRAPH_OPS);
  if (ops == nullptr || ops->refs.empty()) return missing("CUDNN_ATTR_OPERATIONGRAPH_OPS");
  auto g = std::make_shared<GraphInfo>();
  int convs = 0;
  std::map<int64_t, const DescState*> tensors;
  std::map<int64_t, bool> produced;  // uid -> written by an operation of the graph
  for (const StateRef& op : ops->refs) {
    if (is_conv_op(op->type)) {
      ++convs;
      g->conv = *op->op;
    } else if (op->type != CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR) {
      g->no_engine_reason = "Genie's cuDNN has engines for one convolution with pointwise operations after it; this "
                            "graph has an operation of descriptor type " + std::to_string(op->type);
    }
    for (const DescState* t : op_tensors(*op)) tensors[t->tensor.uid] = t;
    StateRef out = op->type == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR
                       ? ref(*op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC)
                       : nullptr;
    if (out) produced[out->tensor.uid] = true;
  }
  if (convs != 1 && g->no_engine_reason.empty())
    g->no_engine_reason = "the graph has " + std::to_string(convs) + " convolutions (engines take one)";
  g->has_engines = g->no_engine_reason.empty();
  std::map<int64_t, bool> conv_operand;  // uid -> an operand of the convolution
  for (const StateRef& op : ops->refs)
    if (is_conv_op(op->type))
      for (const DescState* t : op_tensors(*op)) conv_operand[t->tensor.uid] = true;
  for (const auto& [uid, t] : tensors) {
    if (t->tensor.is_virtual) continue;
    g->bound.push_back(t->tensor);
    // Pointwise operands that come from memory (bias, residual) are read by the fused epilogue.
    if (g->has_engines && !produced.count(uid) && !conv_operand.count(uid))
      g->conv.epilogue_bytes += static_cast<double>(t->tensor.extent_bytes());
  }
  s.graph = g;
  put<int64_t>(s, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64,
               {g->has_engines ? int64_t{kConvEngineCount} : int64_t{0}});
  return CUDNN_STATUS_SUCCESS;
}

Runtime* runtime_for(const char* fn, cudnnStatus_t* st) {
  Runtime* r = Runtime::instance();
  if (r == nullptr) *st = fail(fn, "the CUDA emulation cannot start", CUDNN_STATUS_NOT_INITIALIZED);
  return r;
}

/// A finalized ENGINE state for engine `e` of `graph_state`'s graph.
void fill_engine(DescState& s, const StateRef& graph_state, const ConvEngine& e) {
  s.graph = graph_state->graph;
  s.engine = e.index;
  put_refs(s, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, {graph_state});
  put<int64_t>(s, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, {e.index});
  std::vector<int> notes(e.notes.begin(), e.notes.end());
  put<int>(s, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE, notes);
  put<int>(s, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE, {});
  put_refs(s, CUDNN_ATTR_ENGINE_KNOB_INFO, {});
  put_refs(s, CUDNN_ATTR_ENGINE_LAYOUT_INFO, {});
  s.workspace = e.workspace;
  s.finalized = true;
}

void fill_engine_config(DescState& s, const StateRef& engine_state) {
  s.graph = engine_state->graph;
  s.engine = engine_state->engine;
  s.workspace = engine_state->workspace;
  put_refs(s, CUDNN_ATTR_ENGINECFG_ENGINE, {engine_state});
  if (find_attr(s, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES) == nullptr) put_refs(s, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, {});
  put_refs(s, CUDNN_ATTR_ENGINECFG_INTERMEDIATE_INFO, {});
  put<int64_t>(s, CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE, CUDNN_TYPE_INT64, {s.workspace});
  s.finalized = true;
}

cudnnStatus_t finalize_engine(DescState& s) {
  StateRef graph = ref(s, CUDNN_ATTR_ENGINE_OPERATION_GRAPH);
  if (graph == nullptr || graph->type != CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR) return missing("CUDNN_ATTR_ENGINE_OPERATION_GRAPH");
  int64_t index = -1;
  if (!read_one(s, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, &index)) return missing("CUDNN_ATTR_ENGINE_GLOBAL_INDEX");
  if (!graph->graph->has_engines)
    return fail("cudnnBackendFinalize", graph->graph->no_engine_reason, CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN);
  if (index < 0 || index >= kConvEngineCount)
    return fail("cudnnBackendFinalize",
                "CUDNN_ATTR_ENGINE_GLOBAL_INDEX " + std::to_string(index) + " (the graph has " +
                    std::to_string(kConvEngineCount) + " engines)",
                CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND);
  cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
  Runtime* rt = runtime_for("cudnnBackendFinalize", &st);
  if (rt == nullptr) return st;
  ConvEngine e = conv_engine(graph->graph->conv, static_cast<int>(index), rt->cost_model());
  if (!e.supported)
    return fail("cudnnBackendFinalize", std::string("engine ") + std::to_string(index) + " (" + e.name + "): " + e.why_not,
                CUDNN_STATUS_NOT_SUPPORTED);
  fill_engine(s, graph, e);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t finalize_engine_config(DescState& s) {
  StateRef engine = ref(s, CUDNN_ATTR_ENGINECFG_ENGINE);
  if (engine == nullptr || engine->type != CUDNN_BACKEND_ENGINE_DESCRIPTOR) return missing("CUDNN_ATTR_ENGINECFG_ENGINE");
  fill_engine_config(s, engine);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t finalize_heuristics(DescState& s) {
  StateRef graph = ref(s, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH);
  if (graph == nullptr || graph->type != CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    return missing("CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH");
  int mode = -1;
  if (!read_one(s, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &mode)) return missing("CUDNN_ATTR_ENGINEHEUR_MODE");
  if (mode < 0 || mode >= CUDNN_HEUR_MODES_COUNT)
    return fail("cudnnBackendFinalize", "CUDNN_ATTR_ENGINEHEUR_MODE " + std::to_string(mode), CUDNN_STATUS_BAD_PARAM);
  std::vector<StateRef> results;
  if (graph->graph->has_engines) {
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    Runtime* rt = runtime_for("cudnnBackendFinalize", &st);
    if (rt == nullptr) return st;
    std::vector<ConvEngine> engines;
    if (mode == CUDNN_HEUR_MODE_FALLBACK)
      engines.push_back(conv_engine(graph->graph->conv, 0, rt->cost_model()));  // works for every convolution
    else
      engines = ranked_conv_engines(graph->graph->conv, rt->cost_model());
    for (const ConvEngine& e : engines) {
      auto engine = std::make_shared<DescState>();
      engine->type = CUDNN_BACKEND_ENGINE_DESCRIPTOR;
      fill_engine(*engine, graph, e);
      auto cfg = std::make_shared<DescState>();
      cfg->type = CUDNN_BACKEND_ENGINECFG_DESCRIPTOR;
      fill_engine_config(*cfg, engine);
      results.push_back(std::move(cfg));
    }
  }
  put_refs(s, CUDNN_ATTR_ENGINEHEUR_RESULTS, std::move(results));
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t finalize_plan(DescState& s) {
  StateRef cfg = ref(s, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG);
  if (cfg == nullptr || cfg->type != CUDNN_BACKEND_ENGINECFG_DESCRIPTOR) return missing("CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG");
  cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
  Runtime* rt = runtime_for("cudnnBackendFinalize", &st);
  if (rt == nullptr) return st;
  ConvEngine e = conv_engine(cfg->graph->conv, cfg->engine, rt->cost_model());
  s.graph = cfg->graph;
  s.engine = cfg->engine;
  s.workspace = e.workspace;
  s.kernels = e.kernels;
  put<int64_t>(s, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, {s.workspace});
  put<int64_t>(s, CUDNN_ATTR_EXECUTION_PLAN_COMPUTED_INTERMEDIATE_UIDS, CUDNN_TYPE_INT64, {});
  put<int64_t>(s, CUDNN_ATTR_EXECUTION_PLAN_RUN_ONLY_INTERMEDIATE_UIDS, CUDNN_TYPE_INT64, {});
  const std::string json = std::string("{\"engine\":") + std::to_string(e.index) + ",\"name\":\"" + e.name +
                           "\",\"workspace\":" + std::to_string(e.workspace) + "}";
  std::vector<char> text(json.begin(), json.end());
  text.push_back('\0');
  put<char>(s, CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, text);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t finalize_variant_pack(DescState& s) {
  const Attr* ids = find_attr(s, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS);
  const Attr* ptrs = find_attr(s, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS);
  const int64_t n_ids = ids ? ids->count : 0, n_ptrs = ptrs ? ptrs->count : 0;
  if (n_ids != n_ptrs)
    return fail("cudnnBackendFinalize",
                "the variant pack has " + std::to_string(n_ids) + " unique ids and " + std::to_string(n_ptrs) +
                    " data pointers",
                CUDNN_STATUS_BAD_PARAM);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t finalize_state(DescState& s) {
  switch (s.type) {
    case CUDNN_BACKEND_TENSOR_DESCRIPTOR: return finalize_tensor(s);
    case CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR: return finalize_convolution(s);
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR: return finalize_conv_operation(s);
    case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR: return finalize_graph(s);
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR: return finalize_heuristics(s);
    case CUDNN_BACKEND_ENGINE_DESCRIPTOR: return finalize_engine(s);
    case CUDNN_BACKEND_ENGINECFG_DESCRIPTOR: return finalize_engine_config(s);
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: return finalize_plan(s);
    case CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR: return finalize_variant_pack(s);
    default: return CUDNN_STATUS_SUCCESS;  // kept as set (pointwise, knob choices, other operations)
  }
}

}  // namespace
}  // namespace genie::fakecuda::dnn

using genie::fakecuda::dnn::Attr;
using genie::fakecuda::dnn::BackendDesc;
using genie::fakecuda::dnn::DescState;
using genie::fakecuda::dnn::fail;
using genie::fakecuda::dnn::guard;
using genie::fakecuda::dnn::StateRef;
namespace dnn = genie::fakecuda::dnn;

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type,
                                                              cudnnBackendDescriptor_t* descriptor) {
  return guard(__func__, [&] {
    if (descriptor == nullptr)
      return fail("cudnnBackendCreateDescriptor", "descriptor is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    int t = enum_raw(type);
    if (t < 0 || t > CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR)
      return fail("cudnnBackendCreateDescriptor", "descriptorType " + std::to_string(t), CUDNN_STATUS_BAD_PARAM);
    auto d = std::make_unique<BackendDesc>();
    d->state = std::make_shared<DescState>();
    d->state->type = t;
    BackendDesc* p = d.get();
    dnn::DescRegistry& r = dnn::desc_registry();
    std::unique_lock lk(r.mu);
    r.descriptors.emplace(p, std::move(d));
    *descriptor = reinterpret_cast<cudnnBackendDescriptor_t>(p);
    GENIE_LOG_TRACE(genie::log::kFakecuda, "cudnnBackendCreateDescriptor(type {}) -> {}", t, static_cast<void*>(p));
    return CUDNN_STATUS_SUCCESS;
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor) {
  return guard(__func__, [&] {
    dnn::DescRegistry& r = dnn::desc_registry();
    std::unique_ptr<BackendDesc> gone;  // released after the lock: its state may free a graph
    std::unique_lock lk(r.mu);
    auto it = r.descriptors.find(descriptor);
    if (it == r.descriptors.end())
      return fail("cudnnBackendDestroyDescriptor", "descriptor is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
    gone = std::move(it->second);
    r.descriptors.erase(it);
    return CUDNN_STATUS_SUCCESS;
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnBackendInitialize(cudnnBackendDescriptor_t descriptor) {
  return guard(__func__, [&] {
    BackendDesc* d = dnn::find_desc(descriptor);
    if (d == nullptr) return fail("cudnnBackendInitialize", "descriptor is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
    auto fresh = std::make_shared<DescState>();  // states others refer to stay as they were
    fresh->type = d->state->type;
    d->state = std::move(fresh);
    return CUDNN_STATUS_SUCCESS;
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor) {
  return guard(__func__, [&] {
    GENIE_LOG_TRACE(genie::log::kFakecuda, "cudnnBackendFinalize({})", static_cast<void*>(descriptor));
    BackendDesc* d = dnn::find_desc(descriptor);
    if (d == nullptr) return fail("cudnnBackendFinalize", "descriptor is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
    if (d->state->finalized) return fail("cudnnBackendFinalize", "descriptor is already finalized", CUDNN_STATUS_BAD_PARAM);
    cudnnStatus_t st = dnn::finalize_state(*d->state);
    if (st == CUDNN_STATUS_SUCCESS) d->state->finalized = true;
    return st;
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor,
                                                          cudnnBackendAttributeName_t name,
                                                          cudnnBackendAttributeType_t type, int64_t count,
                                                          const void* elements) {
  return guard(__func__, [&] {
    const char* fn = "cudnnBackendSetAttribute";
    GENIE_LOG_TRACE(genie::log::kFakecuda, "{}({}, name {}, type {}, count {})", fn, static_cast<void*>(descriptor),
                    enum_raw(name), enum_raw(type), count);
    BackendDesc* d = dnn::find_desc(descriptor);
    if (d == nullptr) return fail(fn, "descriptor is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
    if (d->state->finalized) return fail(fn, "descriptor is finalized", CUDNN_STATUS_NOT_INITIALIZED);
    const int64_t size = dnn::element_size(enum_raw(type));
    if (size == 0) return fail(fn, "attributeType " + std::to_string(enum_raw(type)), CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE);
    if (count < 0) return fail(fn, "elementCount " + std::to_string(count), CUDNN_STATUS_BAD_PARAM);
    if (count > 0 && elements == nullptr) return fail(fn, "arrayOfElements is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    Attr a;
    a.type = enum_raw(type);
    a.count = count;
    if (a.type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
      auto* ds = static_cast<const cudnnBackendDescriptor_t*>(elements);
      for (int64_t i = 0; i < count; ++i) {
        BackendDesc* r = dnn::find_desc(ds[i]);
        if (r == nullptr)
          return fail(fn, "arrayOfElements[" + std::to_string(i) + "] is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
        if (!r->state->finalized)
          return fail(fn, "arrayOfElements[" + std::to_string(i) + "] is not finalized", CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED);
        a.refs.push_back(r->state);
      }
    } else {
      a.bytes.assign(static_cast<const unsigned char*>(elements),
                     static_cast<const unsigned char*>(elements) + count * size);
    }
    d->state->attrs[enum_raw(name)] = std::move(a);
    return CUDNN_STATUS_SUCCESS;
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const descriptor,
                                                          cudnnBackendAttributeName_t name,
                                                          cudnnBackendAttributeType_t type, int64_t requested,
                                                          int64_t* count, void* elements) {
  return guard(__func__, [&] {
    const char* fn = "cudnnBackendGetAttribute";
    GENIE_LOG_TRACE(genie::log::kFakecuda, "{}({}, name {}, type {}, requested {}, count {}, elements {})", fn,
                    static_cast<void*>(descriptor), enum_raw(name), enum_raw(type), requested,
                    static_cast<void*>(count), elements);
    BackendDesc* d = dnn::find_desc(descriptor);
    if (d == nullptr) return fail(fn, "descriptor is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
    const DescState& s = *d->state;
    if (!s.finalized) return fail(fn, "descriptor is not finalized", CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED);
    if (requested < 0) return fail(fn, "requestedElementCount " + std::to_string(requested), CUDNN_STATUS_BAD_PARAM);
    const Attr* a = dnn::find_attr(s, enum_raw(name));
    if (a == nullptr)
      return fail(fn, "attribute " + std::to_string(enum_raw(name)) + " was never set", CUDNN_STATUS_NOT_SUPPORTED);
    if (a->type != enum_raw(type))
      return fail(fn, "attribute " + std::to_string(enum_raw(name)) + " has type " + std::to_string(a->type) +
                          ", asked for " + std::to_string(enum_raw(type)),
                  CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE);
    // cudnn-frontend asks with a null elementCount when it knows the count, and with null elements for the count.
    const int64_t n = elements == nullptr ? 0 : std::min(requested, a->count);
    if (a->type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
      // The caller's descriptors (created by it, of the referred type) take the referred states.
      auto* ds = static_cast<cudnnBackendDescriptor_t*>(elements);
      std::vector<BackendDesc*> targets;
      for (int64_t i = 0; i < n; ++i) {
        BackendDesc* t = dnn::find_desc(ds[i]);
        if (t == nullptr)
          return fail(fn, "arrayOfElements[" + std::to_string(i) + "] is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
        if (t->state->type != a->refs[static_cast<size_t>(i)]->type)
          return fail(fn, "arrayOfElements[" + std::to_string(i) + "] is of descriptor type " +
                              std::to_string(t->state->type) + ", the attribute holds type " +
                              std::to_string(a->refs[static_cast<size_t>(i)]->type),
                      CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE);
        targets.push_back(t);
      }
      for (int64_t i = 0; i < n; ++i) targets[static_cast<size_t>(i)]->state = a->refs[static_cast<size_t>(i)];
    } else if (n > 0) {
      std::memcpy(elements, a->bytes.data(), static_cast<size_t>(n * dnn::element_size(a->type)));
    }
    // The count: of the elements written when the caller gave room for some (cudnn-frontend sizes its list of
    // heuristics results by it), else of the attribute's elements.
    if (count != nullptr) *count = n > 0 ? n : a->count;
    return CUDNN_STATUS_SUCCESS;
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                                                     cudnnBackendDescriptor_t pack) {
  return guard(__func__, [&] {
    const char* fn = "cudnnBackendExecute";
    GENIE_LOG_TRACE(genie::log::kFakecuda, "{}({}, {}, {})", fn, static_cast<void*>(handle), static_cast<void*>(plan),
                    static_cast<void*>(pack));
    dnn::DnnHandle* h = dnn::find_handle(handle);
    if (h == nullptr) return fail(fn, "handle is not a live cuDNN handle", CUDNN_STATUS_BAD_PARAM);
    BackendDesc* p = dnn::find_desc(plan);
    if (p == nullptr || p->state->type != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)
      return fail(fn, "executionPlan is not an execution plan descriptor", CUDNN_STATUS_BAD_PARAM);
    BackendDesc* v = dnn::find_desc(pack);
    if (v == nullptr || v->state->type != CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)
      return fail(fn, "variantPack is not a variant pack descriptor", CUDNN_STATUS_BAD_PARAM);
    if (!p->state->finalized || !v->state->finalized)
      return fail(fn, p->state->finalized ? "variantPack is not finalized" : "executionPlan is not finalized",
                  CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED);
    const DescState& ps = *p->state;
    std::vector<int64_t> uids;
    std::vector<void*> ptrs;
    dnn::read(*v->state, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, &uids);
    dnn::read(*v->state, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, &ptrs);
    for (const dnn::TensorInfo& t : ps.graph->bound) {
      auto it = std::find(uids.begin(), uids.end(), t.uid);
      if (it == uids.end())
        return fail(fn, "the variant pack has no data pointer for tensor uid " + std::to_string(t.uid), CUDNN_STATUS_BAD_PARAM);
      if (ptrs[static_cast<size_t>(it - uids.begin())] == nullptr)
        return fail(fn, "the variant pack's data pointer for tensor uid " + std::to_string(t.uid) + " is null",
                    CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    }
    void* workspace = nullptr;
    dnn::read_one(*v->state, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &workspace);
    if (ps.workspace > 0 && workspace == nullptr)
      return fail(fn, "the plan needs " + std::to_string(ps.workspace) + " bytes of workspace and the variant pack has none",
                  CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    genie::fakecuda::Runtime* rt = dnn::runtime_for(fn, &st);
    if (rt == nullptr) return st;
    for (const dnn::ConvKernel& k : ps.kernels) {
      genie::Status s = genie::fakecuda::enqueue_library_work(*rt, h->stream, k.name, k.duration);
      if (!s.is_ok()) return fail(fn, s.message(), CUDNN_STATUS_EXECUTION_FAILED);
    }
    return CUDNN_STATUS_SUCCESS;
  });
}
