// SPDX-License-Identifier: Apache-2.0
// Simulator: runs Schedules' DAGs (explicit, or compact ones by symmetry class) on the engine and a network
// model, recording op and collective times.
#include "genie/netsim/simulator.hpp"

#include <strings.h>
#include <algorithm>
#include <chrono>

#include "algorithms/nccl_tuning.hpp"
#include "engine/quotient_plan.hpp"
#include "engine/route_cache.hpp"
#include "engine/sim_budget.hpp"
#include "engine/sim_engine.hpp"
#include "engine/transfer_cost.hpp"
#include "models/analytical_model.hpp"
#include "models/flow_model.hpp"

namespace genie::netsim {

Result<EngineKind> parse_engine(const std::string& s) {
  if (strcasecmp(s.c_str(), "analytical") == 0) return EngineKind::kAnalytical;
  if (strcasecmp(s.c_str(), "flow") == 0) return EngineKind::kFlow;
  return invalid_argument("unknown engine '" + s + "' (valid: analytical, flow)");
}

const char* engine_name(EngineKind e) noexcept { return e == EngineKind::kAnalytical ? "analytical" : "flow"; }

namespace {
/// Per-unit state; kReady is a flag on kWaiting: every data dependency is done and only the issue
/// predecessor runs, since timing start (so the unit's latency phase has been overlapping since then).
enum UnitState : uint8_t { kWaiting = 0, kRunning = 1, kDone = 2, kStateMask = 3, kReady = 4 };

uint32_t mod_p(int64_t v, uint32_t p) {
  const int64_t m = v % static_cast<int64_t>(p);
  return static_cast<uint32_t>(m < 0 ? m + p : m);
}
}  // namespace

struct Simulator::Impl {
  /// One submitted collective. Its *units* are the ops of the explicit DAG, or, while a compact schedule
  /// is timed by symmetry, its classes (compact op k, class x) at index k * period + x.
  struct Running {
    std::shared_ptr<const Schedule> s;    // as submitted
    std::shared_ptr<const Schedule> dag;  // the explicit DAG being run (null while timed by symmetry)
    std::unique_ptr<QuotientPlan> plan;   // set while a compact schedule is timed by symmetry
    CollectiveTiming timing;
    std::vector<uint32_t> pending;  // unfinished dependencies per unit
    std::vector<uint32_t> dep_off;  // CSR of dependents per unit
    std::vector<uint32_t> dependents;
    std::vector<uint8_t> state;       // UnitState per unit
    std::vector<uint32_t> footprint;  // flow engine: directed links used, sorted (lazily)
    bool have_footprint = false;
    int nnodes = 1;  // servers the communicator spans (NCCL's nNodes)
    size_t remaining = 0;
    bool started = false;
    bool finished = false;
  };

  std::shared_ptr<const Topology> topo;
  SimulatorOptions opts;
  SimEngine engine;
  std::unique_ptr<NetworkModel> model;
  std::unique_ptr<RouteCache> routes;
  std::vector<Running> colls;
  std::vector<std::pair<uint64_t, SimTime>> local_done;  // worklist of zero-cost completions
  bool draining = false;
  FinishCallback on_finish;
  std::vector<size_t> free_handles;  // released collectives, reused by submit()
  Status status;                     // first error raised inside an engine callback, reported by run()/run_until()

  std::chrono::steady_clock::time_point wall_start{};
  double last_progress_s = 0;
  double last_memory_check_s = -1;

  bool flow() const { return opts.engine == EngineKind::kFlow; }

  double wall_s() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count(); }

  SimProgress progress_now() const {
    SimProgress p;
    for (const Running& r : colls) {
      if (!r.s) continue;  // released
      p.total += r.pending.size();
      p.done += r.pending.size() - std::min(r.remaining, r.pending.size());
    }
    p.now = engine.now();
    p.wall_s = wall_s();
    return p;
  }

  /// Every few thousand engine iterations: progress reports and the memory limit. False stops the engine.
  bool watch() {
    const double t = wall_s();
    if (opts.max_memory_bytes != 0 && t - last_memory_check_s >= 0.05) {
      last_memory_check_s = t;
      const uint64_t rss = resident_bytes();
      if (rss > opts.max_memory_bytes) {
        std::string running, help;
        for (const Running& r : colls) {
          if (!r.s || !r.started || r.finished) continue;
          running += "; running: " + describe_schedule(*r.s);
          if (help.empty() || !r.s->is_compact()) help = too_big_help(*r.s);
        }
        status = Status(Errc::kOutOfMemory, "simulation stopped at " + std::to_string(engine.now().count_ns() / 1000) +
                                                " us of simulated time: the process holds " + format_bytes(rss) +
                                                ", over the memory limit of " + format_bytes(opts.max_memory_bytes) +
                                                running + (help.empty() ? "" : ". For " + help));
        return false;
      }
    }
    if (opts.progress && t - last_progress_s >= opts.progress_interval_s) {
      last_progress_s = t;
      opts.progress(progress_now());
    }
    return true;
  }

  void finish(size_t handle) {
    Running& run = colls[handle];
    run.finished = true;
    if (on_finish) on_finish(static_cast<int>(handle), run.timing.end);
  }

  static uint64_t action_id(size_t handle, uint32_t unit) { return (static_cast<uint64_t>(handle) << 32) | unit; }
  /// Engine event payloads: a collective handle (its start), or this bit plus an action id (a local op's end).
  static constexpr uint64_t kLocalOpEvent = uint64_t{1} << 63;

  Result<int> endpoint_node(const Schedule& s, int32_t rank, int32_t peer) const {
    if (rank == kNvlsEndpoint) {
      const int sw = topo->nvswitch_of_gpu(s.spec.rank_to_gpu[static_cast<size_t>(peer)]);
      if (sw < 0)
        return invalid_argument("NVLS transfer but the GPU of rank " + std::to_string(peer) + " has no NVSwitch");
      return sw;
    }
    if (rank == kCollNetEndpoint) {
      const int sw = topo->collnet_switch_of_gpu(s.spec.rank_to_gpu[static_cast<size_t>(peer)]);
      if (sw < 0 || !topo->collnet) {
        return invalid_argument("CollNet transfer but the GPU of rank " + std::to_string(peer) +
                                " reaches no in-network reduction through its NIC");
      }
      return sw;
    }
    return topo->gpu_node(s.spec.rank_to_gpu[static_cast<size_t>(rank)]);
  }

  /// Route and costs of explicit op `op` (a transfer between distinct endpoints) of a communicator on
  /// `nnodes` servers.
  Status explicit_request(const Schedule& s, int nnodes, const Step& op, TransferRequest* req,
                          int64_t* min_latency_ns = nullptr) {
    GENIE_ASSIGN_OR_RETURN(int src_node, endpoint_node(s, op.src, op.dst));
    GENIE_ASSIGN_OR_RETURN(int dst_node, endpoint_node(s, op.dst, op.src));
    GENIE_ASSIGN_OR_RETURN(const Route* r, routes->get(src_node, dst_node, op.channel));
    const bool via_nvls = op.src == kNvlsEndpoint || op.dst == kNvlsEndpoint;
    const TransferCost c = transfer_cost(*topo, s.tuning, nnodes, *r, opts.protocol_overheads, op.fused, via_nvls);
    req->channels = r->channels;
    req->consumption = {};
    req->wire_bytes = static_cast<double>(op.bytes) * c.wire_factor;
    req->share_divisor = std::max(1, s.tuning.nchannels);
    req->latency = SimTime::ns(c.latency_ns);
    req->rate_bound_bytes_per_s = c.rate_bound;
    if (min_latency_ns != nullptr) *min_latency_ns = c.min_latency_ns;
    return Status::ok();
  }

  /// Launches `unit` at `now`: its latency phase is the transfer's plus `extra_latency`, less `credit` (the
  /// part already spent while it waited for its issue predecessor).
  Status launch(size_t handle, uint32_t unit, SimTime now, SimTime extra_latency, SimTime credit) {
    Running& run = colls[handle];
    const uint64_t id = action_id(handle, unit);
    run.state[unit] = kRunning;
    auto latency = [&](int64_t ns, int64_t min_ns) {
      return max(SimTime::ns(min_ns), SimTime::ns(ns) + extra_latency - credit);
    };
    TransferRequest req;
    if (run.plan) {
      const QuotientPlan& plan = *run.plan;
      const uint32_t k = unit / plan.period, x = unit % plan.period;
      run.timing.classes[unit].start = now;
      const QuotientPlan::ClassTransfer& ct = plan.transfer(k, x);
      const Schedule& s = *run.s;
      req.channels = ct.channels;
      req.consumption = ct.consumption;
      req.wire_bytes = static_cast<double>(s.compact->ops[k].member_bytes(x, plan.n)) * ct.wire_factor;
      req.share_divisor = std::max(1, s.tuning.nchannels);
      req.latency = latency(ct.latency_ns, ct.min_latency_ns);
      req.rate_bound_bytes_per_s = ct.rate_bound;
      model->start(id, req, now);
      return Status::ok();
    }
    const Schedule& s = *run.dag;
    const Step& op = s.ops[unit];
    run.timing.ops[unit].start = now;
    if (op.kind != Step::Kind::kTransfer || op.src == op.dst) {
      local_op(id, now + extra_latency, op.kind == Step::Kind::kTransfer ? Step::Kind::kCopy : op.kind, op.bytes);
      return Status::ok();
    }
    int64_t min_ns = 0;
    GENIE_TRY(explicit_request(s, run.nnodes, op, &req, &min_ns));
    req.latency = latency(req.latency.count_ns(), min_ns);
    model->start(id, req, now);
    return Status::ok();
  }

  /// The unit issued before `u` on the same connection (Step::issue_dep, or the class of the lane's previous
  /// compact op), or Step::kNoIssueDep.
  static uint32_t issue_of(const Running& run, uint32_t u) {
    if (!run.plan) return run.dag->ops[u].issue_dep;
    const uint32_t P = run.plan->period;
    const uint32_t j = run.plan->issue_op[u / P];
    return j == Step::kNoIssueDep ? j : j * P + u % P;
  }

  /// Start of unit `u` (ready time while it waits on its issue predecessor).
  static SimTime& unit_start(Running& run, uint32_t u) {
    return run.plan ? run.timing.classes[u].start : run.timing.ops[u].start;
  }

  /// `u` lost a dependency at `when`: launch it when none is left; when only an unfinished issue predecessor is
  /// left, its data is ready and its latency phase starts overlapping that predecessor.
  Status dependency_done(size_t handle, uint32_t u, SimTime when) {
    Running& run = colls[handle];
    if (--run.pending[u] == 0) {
      const SimTime credit = (run.state[u] & kReady) != 0 ? when - unit_start(run, u) : SimTime::zero();
      return launch(handle, u, when, SimTime::zero(), credit);
    }
    if (run.pending[u] == 1) mark_ready_if_only_issue_left(run, u, when);
    return Status::ok();
  }

  static void mark_ready_if_only_issue_left(Running& run, uint32_t u, SimTime when) {
    const uint32_t iss = issue_of(run, u);
    if (iss == Step::kNoIssueDep || (run.state[iss] & kStateMask) == kDone || (run.state[u] & kReady) != 0) return;
    run.state[u] |= kReady;
    unit_start(run, u) = when;
  }

  /// A local reduction or copy starting at `t`: it ends after its HBM time (an engine event), or at once.
  void local_op(uint64_t id, SimTime t, Step::Kind kind, uint64_t bytes) {
    const int64_t ns = local_op_ns(*topo, kind, bytes);
    if (ns == 0) {
      local_done.emplace_back(id, t);
    } else {
      engine.schedule(t + SimTime::ns(ns), kLocalOpEvent | id);
    }
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
      const auto unit = static_cast<uint32_t>(aid & 0xffffffffu);
      Running& run = colls[handle];
      if (run.plan) {
        run.timing.classes[unit].end = when;
      } else {
        run.timing.ops[unit].end = when;
      }
      run.state[unit] = kDone;
      run.timing.end = max(run.timing.end, when);
      --run.remaining;
      if (run.remaining == 0) finish(handle);
      for (uint32_t k = run.dep_off[unit]; k < run.dep_off[unit + 1]; ++k) {
        Status ls = dependency_done(handle, run.dependents[k], when);
        if (!ls.is_ok() && st.is_ok()) st = ls;
      }
    }
    draining = false;
    return st;
  }

  /// Dependents CSR from per-unit dependency lists given by `for_each_dep(unit, fn)`.
  template <class ForEachDep>
  static void build_csr(Running* run, size_t units, ForEachDep for_each_dep) {
    run->pending.assign(units, 0);
    run->dep_off.assign(units + 1, 0);
    for (size_t u = 0; u < units; ++u) {
      for_each_dep(u, [&](uint32_t d) {
        ++run->dep_off[d + 1];
        ++run->pending[u];
      });
    }
    for (size_t u = 0; u < units; ++u) run->dep_off[u + 1] += run->dep_off[u];
    run->dependents.resize(run->dep_off[units]);
    std::vector<uint32_t> fill(run->dep_off.begin(), run->dep_off.end() - 1);
    for (size_t u = 0; u < units; ++u)
      for_each_dep(u, [&](uint32_t d) { run->dependents[fill[d]++] = static_cast<uint32_t>(u); });
  }

  static void explicit_state(Running* run) {
    const Schedule& s = *run->dag;
    build_csr(run, s.ops.size(), [&](size_t u, auto&& fn) {
      for (uint32_t d : s.deps_of(u)) fn(d);
    });
    run->timing.ops.assign(s.ops.size(), StepTiming{});
    run->state.assign(s.ops.size(), kWaiting);
    run->remaining = s.ops.size();
  }

  static void quotient_state(Running* run) {
    const CompactSchedule& cs = *run->s->compact;
    const uint32_t P = run->plan->period;
    const size_t units = cs.ops.size() * P;
    build_csr(run, units, [&](size_t u, auto&& fn) {
      const auto x = static_cast<uint32_t>(u % P);
      for (const CompactDep& d : cs.deps_of(u / P)) fn(d.op * P + mod_p(static_cast<int64_t>(x) + d.shift, P));
    });
    run->state.assign(units, kWaiting);
    run->timing.ops.clear();
    run->timing.classes.assign(units, StepTiming{});
    run->timing.period = P;
    run->timing.members = run->plan->n;
    run->remaining = units;
  }

  Result<const std::vector<uint32_t>*> footprint(Running& run) {
    if (run.plan) return &run.plan->footprint;
    if (!run.have_footprint) {
      const Schedule& s = *run.dag;
      for (const Step& op : s.ops) {
        if (op.kind != Step::Kind::kTransfer || op.src == op.dst) continue;
        GENIE_ASSIGN_OR_RETURN(int a, endpoint_node(s, op.src, op.dst));
        GENIE_ASSIGN_OR_RETURN(int b, endpoint_node(s, op.dst, op.src));
        GENIE_ASSIGN_OR_RETURN(const Route* r, routes->get(a, b, op.channel));
        run.footprint.insert(run.footprint.end(), r->channels.begin(), r->channels.end());
      }
      std::sort(run.footprint.begin(), run.footprint.end());
      run.footprint.erase(std::unique(run.footprint.begin(), run.footprint.end()), run.footprint.end());
      run.have_footprint = true;
    }
    return &run.footprint;
  }

  static bool intersect(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
    for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
      if (a[i] == b[j]) return true;
      if (a[i] < b[j])
        ++i;
      else
        ++j;
    }
    return false;
  }

  /// Turns a collective timed by symmetry into its explicit DAG at `now`: finished classes give their
  /// members' times, classes in flight are split in the model into their members (same progress), the
  /// rest wait on their explicit dependencies.
  Status expand_running(size_t handle, SimTime now) {
    Running& run = colls[handle];
    const QuotientPlan& plan = *run.plan;
    const uint32_t n = plan.n, P = plan.period;
    auto dag = std::make_shared<const Schedule>(expand_schedule(*run.s));
    const std::vector<StepTiming> classes = std::move(run.timing.classes);
    const std::vector<uint8_t> state = std::move(run.state);
    auto unit_of = [&](size_t i) { return i / n * P + i % n % P; };
    run.dag = dag;
    explicit_state(&run);
    run.remaining = 0;
    std::vector<uint64_t> ids;
    std::vector<TransferRequest> reqs;
    std::vector<std::vector<uint32_t>> members(state.size());
    for (size_t i = 0; i < dag->ops.size(); ++i) {
      const size_t u = unit_of(i);
      run.state[i] = state[u];  // with the ready flag and its start time below
      if ((state[u] & kStateMask) == kDone) {
        run.timing.ops[i] = classes[u];
        run.pending[i] = 0;
        continue;
      }
      ++run.remaining;
      if ((state[u] & kStateMask) == kRunning) {
        run.timing.ops[i].start = classes[u].start;
        run.pending[i] = 0;
        members[u].push_back(static_cast<uint32_t>(i));
        continue;
      }
      uint32_t waiting = 0;
      for (uint32_t d : dag->deps_of(i)) waiting += (state[unit_of(d)] & kStateMask) != kDone ? 1 : 0;
      run.pending[i] = waiting;
      run.timing.ops[i].start = classes[u].start;
    }
    run.plan.reset();
    run.timing.period = 0;
    for (size_t u = 0; u < members.size(); ++u) {
      if (members[u].empty()) continue;
      ids.clear();
      reqs.assign(members[u].size(), TransferRequest{});
      for (size_t m = 0; m < members[u].size(); ++m) {
        ids.push_back(action_id(handle, members[u][m]));
        GENIE_TRY(explicit_request(*dag, run.nnodes, dag->ops[members[u][m]], &reqs[m]));
      }
      model->split(action_id(handle, static_cast<uint32_t>(u)), now, ids, reqs);
    }
    return Status::ok();
  }

  /// Flow engine: a compact collective is timed by symmetry only while no other running collective shares
  /// a link with it (the quotient assumes its links carry nothing else).
  Status resolve_conflicts(size_t handle, SimTime now) {
    Running& run = colls[handle];
    bool conflict = false;
    for (size_t h = 0; h < colls.size(); ++h) {
      Running& other = colls[h];
      if (h == handle || !other.started || other.finished || (!run.plan && !other.plan)) continue;
      GENIE_ASSIGN_OR_RETURN(const std::vector<uint32_t>* a, footprint(run));
      GENIE_ASSIGN_OR_RETURN(const std::vector<uint32_t>* b, footprint(other));
      if (!intersect(*a, *b)) continue;
      conflict = true;
      if (other.plan) GENIE_TRY(expand_running(h, now));
    }
    if (conflict && run.plan) {
      run.plan.reset();
      run.dag = std::make_shared<const Schedule>(expand_schedule(*run.s));
      explicit_state(&run);
    }
    return Status::ok();
  }

  Status start_collective(size_t handle, SimTime now) {
    Running& run = colls[handle];
    run.started = true;
    run.timing.start = now;
    run.timing.end = now;
    if (flow()) GENIE_TRY(resolve_conflicts(handle, now));
    if (run.plan) quotient_state(&run);
    const SimTime base = opts.protocol_overheads ? SimTime::ns(run.s->base_latency_ns) : SimTime::zero();
    Status st;
    if (run.remaining == 0) {
      finish(handle);
      return st;
    }
    for (uint32_t i = 0; i < run.pending.size(); ++i) {
      if (run.pending[i] == 0) {
        Status ls = launch(handle, i, now, base, SimTime::zero());
        if (!ls.is_ok() && st.is_ok()) st = ls;
      } else if (run.pending[i] == 1) {
        // Only its issue predecessor to wait for: its data (the rank's own input) is ready once the
        // collective's start-up latency is paid.
        mark_ready_if_only_issue_left(run, i, now + base);
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
  impl_->routes = std::make_unique<RouteCache>(*impl_->topo);
  if (opts.engine == EngineKind::kAnalytical) {
    impl_->model = std::make_unique<AnalyticalModel>(*impl_->topo, opts.record_link_usage, opts.alone);
  } else {
    impl_->model = std::make_unique<FlowModel>(*impl_->topo, opts.record_link_usage);
  }
  impl_->engine.add_model(impl_->model.get());
  Impl* impl = impl_.get();
  // Every 4096 engine iterations (a few ms of work); every iteration when progress is asked for at every check.
  if (opts.max_memory_bytes != 0 || opts.progress) {
    impl_->engine.set_watch([impl] { return impl->watch(); },
                            opts.progress && opts.progress_interval_s <= 0 ? 1 : 4096);
  }
  impl_->model->set_completion_callback([impl](uint64_t id, SimTime t) {
    Status cs = impl->complete(id, t);
    if (!cs.is_ok() && impl->status.is_ok()) impl->status = cs;
  });
  impl_->engine.set_event_handler([impl](uint64_t payload, SimTime now) {
    Status ss = (payload & Impl::kLocalOpEvent) != 0 ? impl->complete(payload & ~Impl::kLocalOpEvent, now)
                                                     : impl->start_collective(payload, now);
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
  if (s.num_ops() >= (uint64_t{1} << 32) - 1) return invalid_argument("schedule too large");
  Impl::Running run;
  run.nnodes = nccl::comm_shape(s.spec, *impl_->topo).nnodes;
  run.s = std::move(schedule);
  if (s.compact && !impl_->opts.record_link_usage) {
    GENIE_ASSIGN_OR_RETURN(QuotientPlan plan, plan_quotient(s, *impl_->topo, impl_->flow(),
                                                            impl_->opts.protocol_overheads, *impl_->routes));
    run.plan = std::make_unique<QuotientPlan>(std::move(plan));
  }
  if (impl_->opts.max_memory_bytes != 0) {
    // Before any per-op state exists: what it will take, beside what the process already holds.
    const uint32_t period = run.plan ? run.plan->period : 0;
    const uint64_t need = estimate_state_bytes(s, period), have = resident_bytes();
    if (have + need > impl_->opts.max_memory_bytes) {
      std::string how = run.plan ? ", timed by symmetry with period " + std::to_string(period) + " of " +
                                       std::to_string(s.spec.nranks) + " ranks"
                                 : std::string(s.is_compact() ? ", expanded" : "");
      return Status(Errc::kOutOfMemory, "simulating " + describe_schedule(s) + how + " needs about " +
                                            format_bytes(need) + " of per-op state beside the " + format_bytes(have) +
                                            " this process holds, over the memory " + "limit of " +
                                            format_bytes(impl_->opts.max_memory_bytes) + ". For " + too_big_help(s));
    }
  }
  if (!run.plan) {
    run.dag = s.compact ? std::make_shared<const Schedule>(expand_schedule(s)) : run.s;
    const Schedule& d = *run.dag;
    for (size_t i = 0; i < d.ops.size(); ++i) {
      for (uint32_t dep : d.deps_of(i)) {
        if (dep >= i) return invalid_argument("schedule op " + std::to_string(i) + " depends on a later op");
      }
    }
    Impl::explicit_state(&run);
  }
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
  if (impl_->wall_start == std::chrono::steady_clock::time_point{})
    impl_->wall_start = std::chrono::steady_clock::now();
  impl_->engine.run_until(limit);
  Status st = impl_->status;
  impl_->status = Status::ok();
  return st;
}

Status Simulator::run() {
  GENIE_TRY(run_until(SimTime::max()));
  for (const auto& r : impl_->colls) {
    if (r.started && !r.finished) return internal_error("simulation ended with unfinished ops (dependency cycle?)");
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
const std::vector<LinkUsageSample>& Simulator::link_usage() const { return impl_->model->usage(); }

void Simulator::stop_link_usage() {
  impl_->opts.record_link_usage = false;
  impl_->model->stop_recording();
}
SimTime Simulator::now() const { return impl_->engine.now(); }
const Topology& Simulator::topology() const { return *impl_->topo; }

Result<CollectiveTiming> simulate_schedule(std::shared_ptr<const Topology> topo, const Schedule& schedule,
                                           SimulatorOptions opts) {
  Simulator sim(std::move(topo), opts);
  GENIE_ASSIGN_OR_RETURN(int h, sim.submit(std::make_shared<const Schedule>(schedule), SimTime::zero()));
  GENIE_TRY(sim.run());
  return sim.timing(h);
}

Result<SimTime> duration_lower_bound(std::shared_ptr<const Topology> topo, const Schedule& schedule,
                                     bool protocol_overheads) {
  Simulator sim(std::move(topo), SimulatorOptions{EngineKind::kAnalytical, protocol_overheads, false, true});
  GENIE_ASSIGN_OR_RETURN(int h, sim.submit(std::make_shared<const Schedule>(schedule), SimTime::zero()));
  GENIE_TRY(sim.run());
  const SimTime d = sim.timing(h).end;
  // Both engines round event times to whole ns, the flow engine at every rate change: a margin far above that.
  return max(SimTime::zero(), d - SimTime::ns(d.count_ns() / 1000 + 1000));
}

}  // namespace genie::netsim
