// SPDX-License-Identifier: Apache-2.0
// Runtime stream capture and CUDA graph replay.
#include <algorithm>

#include "genie/common/log.hpp"
#include "genie/fakecuda/graph.hpp"
#include "genie/fakecuda/runtime.hpp"

namespace genie::fakecuda {

// --- capture -------------------------------------------------------------------------------------------
Status Runtime::begin_capture(Stream& s, int mode) {
  if (s.kind() == Stream::Kind::kLegacy) return invalid_usage("the legacy default stream cannot be captured");
  std::lock_guard lk(capture_mu_);
  if (s.capture) return invalid_usage("stream is already capturing");
  auto session = std::make_shared<CaptureSession>();
  session->id = next_capture_id_.fetch_add(1);
  session->mode = mode;
  session->origin = &s;
  s.capture = session;
  s.capture_frontier.clear();
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
  }
  if (session->invalidated) return invalid_usage("capture was invalidated");
  Graph* g = session->graph.get();
  std::unique_lock hk(handles_mu_);
  graphs_.emplace(g, std::move(session->graph));
  return g;
}

bool Runtime::is_capturing(Stream& s) { return s.capturing.load(std::memory_order_acquire); }

uint64_t Runtime::capture_id(Stream& s) {
  std::lock_guard lk(capture_mu_);
  return s.capture ? s.capture->id : 0;
}

// --- graphs --------------------------------------------------------------------------------------------
Graph* Runtime::create_graph() {
  auto g = std::make_unique<Graph>();
  Graph* p = g.get();
  std::unique_lock lk(handles_mu_);
  graphs_.emplace(p, std::move(g));
  return p;
}

Status Runtime::destroy_graph(Graph* g) {
  std::unique_lock lk(handles_mu_);
  if (graphs_.erase(g) == 0) return invalid_argument("unknown graph");
  return Status::ok();
}

Graph* Runtime::resolve_graph(const void* handle) {
  std::shared_lock lk(handles_mu_);
  auto it = graphs_.find(handle);
  return it == graphs_.end() ? nullptr : it->second.get();
}

Result<Graph*> Runtime::instantiate(Graph& g) {
  auto exec = std::make_unique<Graph>();
  exec->nodes = g.nodes;  // the executable is a snapshot: later edits of g do not affect it
  exec->executable = true;
  Graph* p = exec.get();
  std::unique_lock lk(handles_mu_);
  graphs_.emplace(p, std::move(exec));
  return p;
}

Status Runtime::launch_graph(Graph& exec, Stream& s) {
  if (!exec.executable) return invalid_argument("not an executable graph");
  // One op on the stream runs every node in topological (capture) order; a node starts when its
  // dependencies have ended, so independent branches overlap on the timeline.
  auto nodes = std::make_shared<std::vector<GraphNode>>(exec.nodes);
  bool inline_ok = std::all_of(nodes->begin(), nodes->end(),
                               [](const GraphNode& n) { return n.spec.may_run_inline && !n.spec.run; });
  sched::OpSpec op;
  op.label = "graph";
  op.may_run_inline = inline_ok;
  sched::Clock* clk = &clock();
  op.run = [nodes, clk](SimTime ready, const sched::ExternalOp& lane) -> Result<SimTime> {
    std::vector<SimTime> ends(nodes->size(), ready);
    SimTime last = ready;
    for (size_t i = 0; i < nodes->size(); ++i) {
      GraphNode& n = (*nodes)[i];
      SimTime start = ready;
      for (int d : n.deps) start = max(start, ends[static_cast<size_t>(d)]);
      if (n.spec.run) {
        GENIE_ASSIGN_OR_RETURN(ends[i], n.spec.run(start, lane));
      } else {
        if (n.spec.action) n.spec.action();
        ends[i] = start + n.spec.duration;
      }
      last = max(last, ends[i]);
    }
    if (!clk->is_virtual()) {
      clk->sleep_until(last);
    }
    return last;
  };
  SimTime now = clock().api_call(options_.api_overhead);
  return submit(s, std::move(op), now).status();
}

}  // namespace genie::fakecuda
