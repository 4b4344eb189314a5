// SPDX-License-Identifier: Apache-2.0
// Runtime stream capture, graphs built node by node (child and conditional nodes), CUDA graph replay and the user
// objects graphs hold.
#include <algorithm>

#include "genie/common/log.hpp"
#include "genie/fakecuda/graph.hpp"
#include "genie/fakecuda/runtime.hpp"

namespace genie::fakecuda {

// --- Graph ---------------------------------------------------------------------------------------------
Graph::Graph(const Graph& other) : nodes(other.nodes), executable(other.executable) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].owner = this;
    nodes[i].index = static_cast<int>(i);
  }
}

int Graph::append(GraphNode node) {
  node.owner = this;
  node.index = static_cast<int>(nodes.size());
  nodes.push_back(std::move(node));
  return nodes.back().index;
}

int Graph::index_of(const void* handle) const {
  for (const GraphNode& n : nodes)
    if (&n == handle) return n.index;
  return -1;
}

std::shared_ptr<Graph> Graph::snapshot() const {
  auto g = std::make_shared<Graph>(*this);
  for (GraphNode& n : g->nodes)
    for (auto& b : n.bodies)
      if (b) b = b->snapshot();
  return g;
}

namespace {

/// Every op of `g` (and of its bodies) may complete inside submit: none runs code or needs a lane.
bool graph_runs_inline(const Graph& g) {
  return std::all_of(g.nodes.begin(), g.nodes.end(), [](const GraphNode& n) {
    if (n.kind == GraphNodeKind::kOp) return n.spec.may_run_inline && !n.spec.run;
    return std::all_of(n.bodies.begin(), n.bodies.end(), [](const auto& b) { return !b || graph_runs_inline(*b); });
  });
}

/// The body a conditional node runs, or nullptr. A while loop runs its body once: the device-side
/// cudaGraphSetConditional that would end it is in a kernel, and kernels do not run here.
const Graph* conditional_body(const GraphNode& n) {
  const size_t size = n.bodies.size();
  switch (n.cond_type) {
    case kCondTypeIf:
      if (n.cond_value != 0) return size > 0 ? n.bodies[0].get() : nullptr;
      return size > 1 ? n.bodies[1].get() : nullptr;
    case kCondTypeWhile:
      if (n.cond_value != 0 && size > 0) {
        static std::once_flag warned;
        std::call_once(warned, [] {
          GENIE_LOG_WARN(log::kFakecuda,
                         "a conditional while node runs its body once: the kernel that would end the "
                         "loop (cudaGraphSetConditional) does not run in Genie");
        });
        return n.bodies[0].get();
      }
      return nullptr;
    case kCondTypeSwitch:
      return n.cond_value < size ? n.bodies[n.cond_value].get() : nullptr;
    default:
      return nullptr;
  }
}

/// Runs every node of `g` in topological (index) order from `ready`; a node starts when its dependencies have
/// ended, so independent branches overlap on the timeline. Returns the end of the last node.
// Runs g's nodes from `ready` in dependency order; each op node's record goes to `parts` (the launch's
// OpSpec::parts: the trace and the report see a graph's kernels, copies and collectives).
Result<SimTime> run_graph_nodes(Graph& g, SimTime ready, const sched::ExternalOp& lane,
                                std::vector<sched::OpRecord>* parts) {
  std::vector<SimTime> ends(g.nodes.size(), ready);
  SimTime last = ready;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    GraphNode& n = g.nodes[i];
    SimTime start = ready;
    for (int d : n.deps) start = max(start, ends[static_cast<size_t>(d)]);
    switch (n.kind) {
      case GraphNodeKind::kOp:
        if (n.spec.run) {
          GENIE_ASSIGN_OR_RETURN(ends[i], n.spec.run(start, lane));
        } else {
          if (n.spec.action) n.spec.action();
          ends[i] = start + n.spec.duration;
        }
        parts->push_back(sched::OpRecord{n.spec.label, start, ends[i], n.spec.kind, n.spec.activity, n.spec.bytes,
                                         n.spec.comm, n.spec.seq});
        break;
      case GraphNodeKind::kEmpty:
        ends[i] = start;
        break;
      case GraphNodeKind::kChild:
        ends[i] = start;
        if (!n.bodies.empty() && n.bodies[0]) {
          GENIE_ASSIGN_OR_RETURN(ends[i], run_graph_nodes(*n.bodies[0], start, lane, parts));
        }
        break;
      case GraphNodeKind::kConditional: {
        ends[i] = start;
        const Graph* body = conditional_body(n);
        if (body != nullptr) {
          GENIE_ASSIGN_OR_RETURN(ends[i], run_graph_nodes(const_cast<Graph&>(*body), start, lane, parts));
        }
        break;
      }
    }
    last = max(last, ends[i]);
  }
  return last;
}

}  // namespace

// --- capture -------------------------------------------------------------------------------------------
Status Runtime::begin_capture(Stream& s, int mode) {
  if (s.kind() == Stream::Kind::kLegacy) return invalid_usage("the legacy default stream cannot be captured");
  {
    std::lock_guard lk(capture_mu_);
    if (s.capture) return invalid_usage("stream is already capturing");
  }
  // The capture's graph is registered from the start: cudaStreamGetCaptureInfo hands it out, and nodes may be
  // added to it (cudaGraphAddNode) while the capture runs.
  Graph* g = create_graph();
  Status st = begin_capture_to_graph(s, *g, {}, mode);
  if (!st.is_ok()) {
    (void)destroy_graph(g);  // registered just above: cannot fail
    return st;
  }
  std::lock_guard lk(capture_mu_);
  s.capture->into_existing = false;
  return Status::ok();
}

Status Runtime::begin_capture_to_graph(Stream& s, Graph& g, std::vector<int> deps, int mode) {
  if (s.kind() == Stream::Kind::kLegacy) return invalid_usage("the legacy default stream cannot be captured");
  if (g.executable) return invalid_argument("an executable graph cannot be captured into");
  std::lock_guard lk(capture_mu_);
  if (s.capture) return invalid_usage("stream is already capturing");
  for (int d : deps)
    if (d < 0 || d >= static_cast<int>(g.nodes.size()))
      return invalid_argument("dependency is not a node of the graph");
  auto session = std::make_shared<CaptureSession>();
  session->id = next_capture_id_.fetch_add(1);
  session->mode = mode;
  session->origin = &s;
  session->graph = &g;
  session->into_existing = true;
  s.capture = session;
  s.capture_frontier = std::move(deps);
  s.capturing.store(true, std::memory_order_release);
  return Status::ok();
}

Result<Graph*> Runtime::end_capture(Stream& s) {
  std::shared_ptr<CaptureSession> session;
  {
    std::lock_guard lk(capture_mu_);
    if (!s.capture) return invalid_usage("stream is not capturing");
    if (s.capture->origin != &s) return invalid_usage("capture must be ended on the stream that began it");
    session = s.capture;
    // Every stream that joined this capture leaves it.
    std::shared_lock hk(handles_mu_);
    for (auto& [h, st] : streams_) {
      if (st->capture == session) {
        st->capture.reset();
        st->capture_frontier.clear();
        st->capturing.store(false, std::memory_order_release);
      }
    }
    for (auto& dev : devices_)
      for (Stream* st : dev->streams())
        if (st->capture == session) {
          st->capture.reset();
          st->capture_frontier.clear();
          st->capturing.store(false, std::memory_order_release);
        }
    // A private stream (add_graph_node_by_capture) is in neither list.
    if (s.capture == session) {
      s.capture.reset();
      s.capture_frontier.clear();
      s.capturing.store(false, std::memory_order_release);
    }
  }
  if (session->invalidated) {
    if (!session->into_existing) (void)destroy_graph(session->graph);  // ours since begin_capture
    return invalid_usage("capture was invalidated");
  }
  return session->graph;
}

bool Runtime::is_capturing(Stream& s) { return s.capturing.load(std::memory_order_acquire); }

uint64_t Runtime::capture_id(Stream& s) {
  std::lock_guard lk(capture_mu_);
  return s.capture ? s.capture->id : 0;
}

Graph* Runtime::capture_graph(Stream& s, std::vector<int>* frontier) {
  std::lock_guard lk(capture_mu_);
  if (!s.capture) return nullptr;
  if (frontier != nullptr) *frontier = s.capture_frontier;
  return s.capture->graph;
}

Status Runtime::update_capture_dependencies(Stream& s, const std::vector<int>& nodes, bool replace) {
  std::lock_guard lk(capture_mu_);
  if (!s.capture) return invalid_usage("stream is not capturing");
  const int count = static_cast<int>(s.capture->graph->nodes.size());
  for (int n : nodes)
    if (n < 0 || n >= count) return invalid_argument("dependency is not a node of the capture graph");
  if (replace) s.capture_frontier.clear();
  for (int n : nodes)
    if (std::find(s.capture_frontier.begin(), s.capture_frontier.end(), n) == s.capture_frontier.end())
      s.capture_frontier.push_back(n);
  return Status::ok();
}

// --- graphs --------------------------------------------------------------------------------------------
Graph* Runtime::create_graph() {
  auto g = std::make_shared<Graph>();
  Graph* p = g.get();
  std::unique_lock lk(handles_mu_);
  graphs_.emplace(p, std::move(g));
  return p;
}

Status Runtime::destroy_graph(Graph* g) {
  std::shared_ptr<Graph> owned;
  {
    std::unique_lock lk(handles_mu_);
    auto it = graphs_.find(g);
    if (it == graphs_.end()) return invalid_argument("unknown graph");
    owned = std::move(it->second);
    graphs_.erase(it);
    // The bodies of an editable graph's conditional nodes go with it (an executable's are unregistered snapshots).
    std::vector<Graph*> pending{g};
    while (!pending.empty()) {
      Graph* cur = pending.back();
      pending.pop_back();
      for (GraphNode& n : cur->nodes)
        if (n.kind == GraphNodeKind::kConditional)
          for (auto& b : n.bodies)
            if (b && graphs_.erase(b.get()) > 0) pending.push_back(b.get());
    }
  }
  {
    std::lock_guard lk(capture_mu_);
    std::erase_if(conditionals_, [g](const auto& kv) { return kv.second.graph == g; });
  }
  // References the graph held on user objects go with it; a last one runs the object's destructor.
  for (auto& [o, n] : owned->user_refs) GENIE_TRY(release_user_object(*o, n));
  owned->user_refs.clear();
  return Status::ok();
}

Graph* Runtime::resolve_graph(const void* handle) {
  std::shared_lock lk(handles_mu_);
  auto it = graphs_.find(handle);
  return it == graphs_.end() ? nullptr : it->second.get();
}

Result<int> Runtime::add_graph_node(Graph& g, std::vector<int> deps, GraphNode node, unsigned body_count) {
  if (g.executable) return invalid_argument("nodes cannot be added to an executable graph");
  std::vector<std::shared_ptr<Graph>> bodies;
  for (unsigned i = 0; i < body_count; ++i) bodies.push_back(std::make_shared<Graph>());
  std::lock_guard lk(capture_mu_);
  for (int d : deps)
    if (d < 0 || d >= static_cast<int>(g.nodes.size()))
      return invalid_argument("dependency is not a node of the graph");
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  node.deps = std::move(deps);
  node.spec.deps.clear();
  if (body_count > 0) {
    node.bodies = bodies;
    std::unique_lock hk(handles_mu_);
    for (auto& b : bodies) graphs_.emplace(b.get(), b);
  }
  return g.append(std::move(node));
}

Result<int> Runtime::add_graph_node_by_capture(Graph& g, std::vector<int> deps, int device,
                                               const std::function<Status(Stream&)>& enqueue) {
  if (g.executable) return invalid_argument("nodes cannot be added to an executable graph");
  if (device < 0 || device >= device_count()) return invalid_argument("device");
  // A private stream, never submitted to (its lane starts no worker), captured into `g` after `deps`.
  Stream scratch(*devices_[device], Stream::Kind::kUser, kStreamNonBlocking, 0, timeline_);
  size_t before = 0;
  {
    std::lock_guard lk(capture_mu_);
    before = g.nodes.size();
  }
  GENIE_TRY(begin_capture_to_graph(scratch, g, std::move(deps), /*cudaStreamCaptureModeRelaxed*/ 2));
  Status st = enqueue(scratch);
  auto ended = end_capture(scratch);
  GENIE_TRY(st);
  GENIE_TRY(ended.status());
  std::lock_guard lk(capture_mu_);
  if (g.nodes.size() != before + 1) return internal_error("the captured call did not add exactly one node");
  return static_cast<int>(before);
}

uint64_t Runtime::create_conditional_handle(Graph& g, unsigned default_value, unsigned flags) {
  (void)flags;  // cudaGraphCondAssignDefault or not, the value is the default at every launch (graph.hpp)
  std::lock_guard lk(capture_mu_);
  uint64_t h = next_conditional_++;
  conditionals_[h] = ConditionalHandle{&g, default_value};
  return h;
}

Result<uint64_t> Runtime::conditional_value(uint64_t handle, const Graph& g) {
  std::lock_guard lk(capture_mu_);
  auto it = conditionals_.find(handle);
  if (it == conditionals_.end()) return invalid_argument("unknown conditional handle");
  (void)g;  // any live graph's handle: a body's nodes use the handles of the graph around it
  return it->second.default_value;
}

Result<Graph*> Runtime::instantiate(Graph& g) {
  // The executable is a snapshot: later edits of g (or of its conditional bodies) do not affect it.
  std::shared_ptr<Graph> exec;
  {
    std::lock_guard lk(capture_mu_);
    exec = g.snapshot();
  }
  exec->executable = true;
  // The executable holds its own references on the graph's user objects.
  exec->user_refs = g.user_refs;
  for (auto& [o, n] : exec->user_refs) o->retain(n);
  Graph* p = exec.get();
  std::unique_lock lk(handles_mu_);
  graphs_.emplace(p, std::move(exec));
  return p;
}

Status Runtime::launch_graph(Graph& exec, Stream& s) {
  if (!exec.executable) return invalid_argument("not an executable graph");
  // One op on the stream runs every node (run_graph_nodes) on a copy, so a racing relaunch or destroy of the
  // executable does not touch the nodes in use.
  std::shared_ptr<Graph> nodes = exec.snapshot();
  sched::OpSpec op;
  op.label = "graph";
  op.may_run_inline = graph_runs_inline(*nodes);
  op.parts = std::make_shared<std::vector<sched::OpRecord>>();
  sched::Clock* clk = &clock();
  op.run = [nodes, clk, parts = op.parts.get()](SimTime ready, const sched::ExternalOp& lane) -> Result<SimTime> {
    GENIE_ASSIGN_OR_RETURN(SimTime last, run_graph_nodes(*nodes, ready, lane, parts));
    if (!clk->is_virtual()) {
      clk->sleep_until(last);
    }
    return last;
  };
  SimTime now = clock().api_call(options_.api_overhead);
  return submit(s, std::move(op), now).status();
}

// --- user objects --------------------------------------------------------------------------------------
UserObject* Runtime::create_user_object(void* ptr, void (*destroy)(void*), unsigned refs) {
  auto o = std::make_shared<UserObject>(ptr, destroy, refs);
  UserObject* p = o.get();
  std::lock_guard lk(objects_mu_);
  user_objects_.emplace(p, std::move(o));
  return p;
}

UserObject* Runtime::resolve_user_object(const void* handle) {
  std::lock_guard lk(objects_mu_);
  auto it = user_objects_.find(handle);
  return it == user_objects_.end() ? nullptr : it->second.get();
}

void Runtime::retain_user_object(UserObject& o, unsigned n) { o.retain(n); }

Status Runtime::release_user_object(UserObject& o, unsigned n) {
  if (n > o.refs()) return invalid_argument("releasing more references than the object has");
  if (!o.release(n)) return Status::ok();
  std::shared_ptr<UserObject> owned;
  {
    std::lock_guard lk(objects_mu_);
    auto it = user_objects_.find(&o);
    if (it != user_objects_.end()) {
      owned = std::move(it->second);
      user_objects_.erase(it);
    }
  }
  // Outside every lock: the destructor may call back into the runtime (it must not call CUDA, but may signal
  // a thread that does).
  o.run_destructor();
  return Status::ok();
}

Status Runtime::graph_retain_user_object(Graph& g, UserObject& o, unsigned n, bool move) {
  if (!move) o.retain(n);
  std::lock_guard lk(capture_mu_);
  g.user_refs[&o] += n;
  return Status::ok();
}

Status Runtime::graph_release_user_object(Graph& g, UserObject& o, unsigned n) {
  {
    std::lock_guard lk(capture_mu_);
    auto it = g.user_refs.find(&o);
    if (it == g.user_refs.end() || it->second < n) return invalid_argument("the graph holds fewer references");
    it->second -= n;
    if (it->second == 0) g.user_refs.erase(it);
  }
  return release_user_object(o, n);
}

}  // namespace genie::fakecuda
