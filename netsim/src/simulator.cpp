// SPDX-License-Identifier: Apache-2.0
// Simulator: runs Schedules' DAGs on the engine and a network model, recording op and collective times.
#include "genie/netsim/simulator.hpp"

#include <strings.h>
#include <algorithm>
#include <unordered_map>

#include "algorithms/nccl_tuning.hpp"
#include "engine/sim_engine.hpp"
#include "models/analytical_model.hpp"
#include "models/flow_model.hpp"

namespace genie::netsim {

Result<EngineKind> parse_engine(const std::string& s) {
  if (strcasecmp(s.c_str(), "analytical") == 0) return EngineKind::kAnalytical;
  if (strcasecmp(s.c_str(), "flow") == 0) return EngineKind::kFlow;
  return invalid_argument("unknown engine '" + s + "' (valid: analytical, flow)");
}

const char* engine_name(EngineKind e) noexcept {
  return e == EngineKind::kAnalytical ? "analytical" : "flow";
}

struct Simulator::Impl {
  struct Running {
    std::shared_ptr<const Schedule> s;
    CollectiveTiming timing;
    std::vector<uint32_t> pending;  // unfinished dependencies per op
    std::vector<uint32_t> dep_off;  // CSR of dependents
    std::vector<uint32_t> dependents;
    size_t remaining = 0;
    bool started = false;
    bool finished = false;
  };

  std::shared_ptr<const Topology> topo;
  SimulatorOptions opts;
  SimEngine engine;
  std::unique_ptr<NetworkModel> model;
  std::vector<Running> colls;
  std::unordered_map<uint64_t, uint32_t> route_index;
  std::vector<Route> routes;
  std::vector<std::pair<uint64_t, SimTime>> local_done;  // worklist of zero-cost completions
  bool draining = false;
  FinishCallback on_finish;
  std::vector<size_t> free_handles;  // released collectives, reused by submit()
  Status status;  // first error raised inside an engine callback, reported by run()/run_until()

  void finish(size_t handle) {
    Running& run = colls[handle];
    run.finished = true;
    if (on_finish) on_finish(static_cast<int>(handle), run.timing.end);
  }

  static uint64_t action_id(size_t handle, uint32_t op) { return (static_cast<uint64_t>(handle) << 32) | op; }

  Result<const Route*> route_for(int src_node, int dst_node, uint64_t flow_key) {
    const uint64_t n = topo->nodes().size();
    const uint64_t key = (static_cast<uint64_t>(src_node) * n + static_cast<uint64_t>(dst_node)) * 64 + (flow_key % 64);
    auto it = route_index.find(key);
    if (it != route_index.end()) return &routes[it->second];
    GENIE_ASSIGN_OR_RETURN(Route r, topo->route(src_node, dst_node, flow_key));
    routes.push_back(std::move(r));
    route_index.emplace(key, static_cast<uint32_t>(routes.size() - 1));
    return &routes.back();
  }

  Result<int> endpoint_node(const Schedule& s, int32_t rank, int32_t peer) const {
    if (rank == kNvlsEndpoint) {
      const int sw = topo->nvswitch_of_gpu(s.spec.rank_to_gpu[static_cast<size_t>(peer)]);
      if (sw < 0)
        return invalid_argument("NVLS transfer but the GPU of rank " + std::to_string(peer) + " has no NVSwitch");
      return sw;
    }
    return topo->gpu_node(s.spec.rank_to_gpu[static_cast<size_t>(rank)]);
  }

  Status launch(size_t handle, uint32_t op_index, SimTime now, SimTime extra_latency) {
    Running& run = colls[handle];
    const Schedule& s = *run.s;
    const Op& op = s.ops[op_index];
    run.timing.ops[op_index].start = now;
    if (op.kind != Op::Kind::kTransfer || op.src == op.dst) {
      // TODO(#3): local reductions/copies cost HBM time; today they are free.
      local_done.emplace_back(action_id(handle, op_index), now + extra_latency);
      return Status::ok();
    }
    GENIE_ASSIGN_OR_RETURN(int src_node, endpoint_node(s, op.src, op.dst));
    GENIE_ASSIGN_OR_RETURN(int dst_node, endpoint_node(s, op.dst, op.src));
    GENIE_ASSIGN_OR_RETURN(const Route* r, route_for(src_node, dst_node, op.channel));
    TransferRequest req;
    req.channels = r->channels;
    req.wire_bytes = static_cast<double>(op.bytes);
    req.share_divisor = std::max(1, s.tuning.nchannels);
    int64_t lat = r->latency_ns;
    if (opts.protocol_overheads) {
      bool all_nvlink = !r->channels.empty();
      for (uint32_t ch : r->channels) all_nvlink &= topo->channel_link(ch).link_class == LinkClass::kNvLink;
      const LinkClass cls = r->crosses_net ? LinkClass::kNet : (all_nvlink ? LinkClass::kNvLink : LinkClass::kPcie);
      const nccl::ProtocolCost pc =
          nccl::protocol_cost(*topo, s.tuning.algorithm, s.tuning.protocol, cls, s.tuning.nchannels);
      if (!op.fused) lat = std::max(lat, pc.step_latency_ns);
      double wire = pc.wire_factor;
      // Multicast/in-switch reduction moves data at nvls_efficiency of the NVLink rate (NCCL tuning.cc
      // nvlsEfficiency), whichever algorithm issues it (NVLS, NVLSTree).
      const bool via_nvls = op.src == kNvlsEndpoint || op.dst == kNvlsEndpoint;
      if (via_nvls && topo->nvls_efficiency > 0) wire /= topo->nvls_efficiency;
      req.wire_bytes *= wire;
      if (pc.per_channel_cap > 0) req.rate_bound_bytes_per_s = pc.per_channel_cap * pc.wire_factor;
    }
    req.latency = SimTime::ns(lat) + extra_latency;
    model->start(action_id(handle, op_index), req, now);
    return Status::ok();
  }

  Status complete(uint64_t id, SimTime t) {
    local_done.emplace_back(id, t);
    if (draining) return Status::ok();
    draining = true;
    Status st;
    while (!local_done.empty()) {
      const auto [aid, when] = local_done.back();
      local_done.pop_back();
      const size_t handle = aid >> 32;
      const auto op = static_cast<uint32_t>(aid & 0xffffffffu);
      Running& run = colls[handle];
      run.timing.ops[op].end = when;
      run.timing.end = max(run.timing.end, when);
      --run.remaining;
      if (run.remaining == 0) finish(handle);
      for (uint32_t k = run.dep_off[op]; k < run.dep_off[op + 1]; ++k) {
        const uint32_t d = run.dependents[k];
        if (--run.pending[d] == 0) {
          Status ls = launch(handle, d, when, SimTime::zero());
          if (!ls.is_ok() && st.is_ok()) st = ls;
        }
      }
    }
    draining = false;
    return st;
  }

  Status start_collective(size_t handle, SimTime now) {
    Running& run = colls[handle];
    run.started = true;
    run.timing.start = now;
    run.timing.end = now;
    const SimTime base = opts.protocol_overheads ? SimTime::ns(run.s->base_latency_ns) : SimTime::zero();
    Status st;
    if (run.s->ops.empty()) {
      finish(handle);
      return st;
    }
    for (uint32_t i = 0; i < run.s->ops.size(); ++i) {
      if (run.pending[i] == 0) {
        Status ls = launch(handle, i, now, base);
        if (!ls.is_ok() && st.is_ok()) st = ls;
      }
    }
    // Zero-cost ops launched above complete now.
    if (!local_done.empty() && !draining) {
      auto first = local_done.back();
      local_done.pop_back();
      Status cs = complete(first.first, first.second);
      if (!cs.is_ok() && st.is_ok()) st = cs;
    }
    return st;
  }
};

Simulator::Simulator(std::shared_ptr<const Topology> topo, SimulatorOptions opts) : impl_(std::make_unique<Impl>()) {
  impl_->topo = std::move(topo);
  impl_->opts = opts;
  if (opts.engine == EngineKind::kAnalytical) {
    impl_->model = std::make_unique<AnalyticalModel>(*impl_->topo, opts.record_link_usage);
  } else {
    impl_->model = std::make_unique<FlowModel>(*impl_->topo, opts.record_link_usage);
  }
  impl_->engine.add_model(impl_->model.get());
  Impl* impl = impl_.get();
  impl_->model->set_completion_callback([impl](uint64_t id, SimTime t) {
    Status cs = impl->complete(id, t);
    if (!cs.is_ok() && impl->status.is_ok()) impl->status = cs;
  });
  impl_->engine.set_event_handler([impl](uint64_t handle, SimTime now) {
    Status ss = impl->start_collective(handle, now);
    if (!ss.is_ok() && impl->status.is_ok()) impl->status = ss;
  });
}

Simulator::~Simulator() = default;

Result<int> Simulator::submit(std::shared_ptr<const Schedule> schedule, SimTime start) {
  if (!schedule) return invalid_argument("submit: null schedule");
  if (start < impl_->engine.now()) return invalid_argument("submit: start time is in the past");
  const Schedule& s = *schedule;
  for (int g : s.spec.rank_to_gpu) {
    if (g < 0 || g >= impl_->topo->num_gpus()) {
      return invalid_argument("schedule places a rank on GPU " + std::to_string(g) + ", which topology " +
                              impl_->topo->name + " lacks");
    }
  }
  if (static_cast<int>(s.spec.rank_to_gpu.size()) != s.spec.nranks) {
    return invalid_argument("schedule rank placement has " + std::to_string(s.spec.rank_to_gpu.size()) +
                            " entries for " + std::to_string(s.spec.nranks) + " ranks");
  }
  Impl::Running run;
  const size_t n = s.ops.size();
  if (n >= (uint64_t{1} << 32) - 1) return invalid_argument("schedule too large");
  run.pending.assign(n, 0);
  run.dep_off.assign(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    for (uint32_t d : s.deps_of(i)) {
      if (d >= i) return invalid_argument("schedule op " + std::to_string(i) + " depends on a later op");
      ++run.dep_off[d + 1];
    }
    run.pending[i] = s.ops[i].dep_count;
  }
  for (size_t i = 0; i < n; ++i) run.dep_off[i + 1] += run.dep_off[i];
  run.dependents.resize(run.dep_off[n]);
  std::vector<uint32_t> fill(run.dep_off.begin(), run.dep_off.end() - 1);
  for (size_t i = 0; i < n; ++i)
    for (uint32_t d : s.deps_of(i)) run.dependents[fill[d]++] = static_cast<uint32_t>(i);
  run.timing.ops.assign(n, OpTiming{});
  run.remaining = n;
  run.s = std::move(schedule);
  size_t handle;
  if (!impl_->free_handles.empty()) {
    handle = impl_->free_handles.back();
    impl_->free_handles.pop_back();
    impl_->colls[handle] = std::move(run);
  } else {
    impl_->colls.push_back(std::move(run));
    handle = impl_->colls.size() - 1;
  }
  impl_->engine.schedule(start, handle);
  return static_cast<int>(handle);
}

Status Simulator::run_until(SimTime limit) {
  impl_->engine.run_until(limit);
  Status st = impl_->status;
  impl_->status = Status::ok();
  return st;
}

Status Simulator::run() {
  GENIE_TRY(run_until(SimTime::max()));
  for (const auto& r : impl_->colls) {
    if (r.started && !r.finished)
      return internal_error("simulation ended with unfinished ops (dependency cycle?)");
  }
  return Status::ok();
}

std::optional<SimTime> Simulator::next_event_time() { return impl_->engine.next_event_time(); }

void Simulator::set_finish_callback(FinishCallback cb) { impl_->on_finish = std::move(cb); }

bool Simulator::finished(int handle) const {
  return handle >= 0 && static_cast<size_t>(handle) < impl_->colls.size() &&
         impl_->colls[static_cast<size_t>(handle)].finished;
}

Status Simulator::release(int handle) {
  if (!finished(handle)) return invalid_argument("release: collective " + std::to_string(handle) + " has not finished");
  Impl::Running& r = impl_->colls[static_cast<size_t>(handle)];
  r = Impl::Running{};
  impl_->free_handles.push_back(static_cast<size_t>(handle));
  return Status::ok();
}

const CollectiveTiming& Simulator::timing(int handle) const {
  return impl_->colls.at(static_cast<size_t>(handle)).timing;
}
const std::vector<LinkUsageSample>& Simulator::link_usage() const {
  return impl_->model->usage();
}
SimTime Simulator::now() const {
  return impl_->engine.now();
}
const Topology& Simulator::topology() const {
  return *impl_->topo;
}

Result<CollectiveTiming> simulate_schedule(std::shared_ptr<const Topology> topo, const Schedule& schedule,
                                           SimulatorOptions opts) {
  Simulator sim(std::move(topo), opts);
  GENIE_ASSIGN_OR_RETURN(int h, sim.submit(std::make_shared<const Schedule>(schedule), SimTime::zero()));
  GENIE_TRY(sim.run());
  return sim.timing(h);
}

}  // namespace genie::netsim
