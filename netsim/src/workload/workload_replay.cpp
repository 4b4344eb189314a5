// SPDX-License-Identifier: Apache-2.0
// The replay: every rank's graph on one clock. A node runs once its dependencies have ended; compute nodes are
// delays, a collective starts when its last member reaches it and a message when both ends have, each timed by a
// netsim Simulator shared by all calls (so calls contend for links, as under the coordinator).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <queue>

#include "genie/netsim/placement.hpp"
#include "workload/workload_model.hpp"

namespace genie::netsim {

using workload::Call;
using workload::Kind;
using workload::Model;

namespace {

struct Event {
  int64_t t;
  uint64_t seq;
  int rank;
  uint32_t node;
  int call;  ///< >= 0: the call ends (every member node with it); else the node ends
  bool operator>(const Event& o) const { return std::tie(t, seq) > std::tie(o.t, o.seq); }
};

NcclEnv merged_env(NcclEnv base, const NcclEnv& o) {
  if (!o.algo.empty()) base.algo = o.algo;
  if (!o.proto.empty()) base.proto = o.proto;
  if (o.min_channels != -1) base.min_channels = o.min_channels;
  if (o.max_channels != -1) base.max_channels = o.max_channels;
  if (o.buffsize != -1) base.buffsize = o.buffsize;
  if (o.nvls_enable != -1) base.nvls_enable = o.nvls_enable;
  if (o.collnet_enable != -1) base.collnet_enable = o.collnet_enable;
  if (o.pat_enable != -1) base.pat_enable = o.pat_enable;
  return base;
}

class Replay {
 public:
  Replay(Model& m, std::shared_ptr<const Topology> topo, EngineKind engine, NcclEnv env, const WorkloadOptions& opts)
      : m_(m),
        topo_(std::move(topo)),
        engine_(engine),
        env_(std::move(env)),
        opts_(opts),
        sim_(topo_, SimulatorOptions{engine, true, false}) {
    sim_.set_finish_callback([this](int h, SimTime end) { finished_.emplace_back(h, end); });
  }

  Status run(WorkloadResult* out) {
    const auto t0 = std::chrono::steady_clock::now();
    auto last_progress = t0;
    const size_t nr = m_.ranks.size();
    pending_.resize(nr);
    ends_.assign(nr, -1);
    host_ends_.assign(nr, 0);
    begins_.resize(nr);
    out->ranks.resize(nr);
    arrived_.assign(m_.calls.size(), 0);
    ready_.assign(m_.calls.size(), 0);
    for (size_t r = 0; r < nr; ++r) {
      const auto& g = *m_.ranks[r].graph;
      total_ += g.nodes.size();
      pending_[r].resize(g.nodes.size());
      for (size_t k = 0; k < g.nodes.size(); ++k) pending_[r][k] = g.nodes[k].indegree;
      out->ranks[r].rank = static_cast<int>(r);
      out->ranks[r].gpu = m_.ranks[r].gpu;
    }
    for (size_t r = 0; r < nr; ++r)
      for (size_t k = 0; k < pending_[r].size(); ++k)
        if (pending_[r][k] == 0) GENIE_TRY(start(static_cast<int>(r), static_cast<uint32_t>(k), 0));
    uint64_t steps = 0;
    for (;;) {
      auto next_sim = sim_.next_event_time();
      if (heap_.empty() && !next_sim) break;
      if (next_sim && (heap_.empty() || next_sim->count_ns() <= heap_.top().t)) {
        GENIE_TRY(sim_.run_until(*next_sim));
        auto done = std::exchange(finished_, {});
        for (const auto& [h, end] : done) {
          auto it = in_sim_.find(h);
          if (it == in_sim_.end()) continue;
          const int call = it->second;
          in_sim_.erase(it);
          (void)sim_.release(h);
          GENIE_TRY(end_call(call, end.count_ns()));
        }
      } else {
        const Event e = heap_.top();
        heap_.pop();
        if (e.call >= 0)
          GENIE_TRY(end_call(e.call, e.t));
        else
          GENIE_TRY(finish(e.rank, e.node, e.t));
      }
      if (opts_.progress && (++steps & 4095) == 0) {
        const auto now = std::chrono::steady_clock::now();
        if (std::chrono::duration<double>(now - last_progress).count() >= opts_.progress_interval_s) {
          last_progress = now;
          opts_.progress(
              WorkloadProgress{done_, total_, SimTime::ns(now_), std::chrono::duration<double>(now - t0).count()});
        }
      }
    }
    if (done_ != total_) return stalled();
    for (size_t r = 0; r < nr; ++r) out->ranks[r].end = SimTime::ns(ends_[r] >= 0 ? ends_[r] : host_ends_[r]);
    out->nodes = total_;
    return Status::ok();
  }

 private:
  Model& m_;
  std::shared_ptr<const Topology> topo_;
  EngineKind engine_;
  NcclEnv env_;
  const WorkloadOptions& opts_;
  Simulator sim_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> heap_;
  uint64_t seq_ = 0, done_ = 0, total_ = 0;
  int64_t now_ = 0;
  std::vector<std::vector<uint32_t>> pending_;
  std::vector<int64_t> ends_, host_ends_;  // per rank: last end of a device node, of a host node
  std::vector<std::map<std::pair<int, int>, int64_t>> begins_;  // per rank: (range, index) -> begin time
  std::vector<int> arrived_;
  std::vector<int64_t> ready_;
  std::vector<std::pair<int, SimTime>> finished_;
  std::map<int, int> in_sim_;  // simulator handle -> call
  struct Planned {
    std::shared_ptr<const Schedule> schedule;
    SimTime alone;  // analytical: the call's duration
  };
  std::map<std::string, Planned> plans_;
  WorkloadResult* result_ = nullptr;

 public:
  void set_result(WorkloadResult* r) { result_ = r; }

 private:
  void push(int64_t t, int rank, uint32_t node, int call) { heap_.push(Event{t, seq_++, rank, node, call}); }

  Status start(int rank, uint32_t node, int64_t t) {
    const auto& g = *m_.ranks[static_cast<size_t>(rank)].graph;
    const workload::GNode& n = g.nodes[node];
    if (n.kind == Kind::kDelay) {
      push(t + n.dur_ns, rank, node, -1);
      return Status::ok();
    }
    const int call = m_.ranks[static_cast<size_t>(rank)].call_of_slot[static_cast<size_t>(n.slot)];
    ready_[static_cast<size_t>(call)] = std::max(ready_[static_cast<size_t>(call)], t);
    if (++arrived_[static_cast<size_t>(call)] < m_.calls[static_cast<size_t>(call)].expected) return Status::ok();
    return launch(call, ready_[static_cast<size_t>(call)]);
  }

  Result<Planned> plan(const Call& c) {
    std::string key = std::to_string(static_cast<int>(c.spec.collective)) + ":" + std::to_string(c.spec.count) + ":" +
                      std::to_string(static_cast<int>(c.spec.datatype)) + ":" +
                      std::to_string(static_cast<int>(c.spec.redop)) + ":" + std::to_string(c.spec.root) + ":" +
                      std::to_string(c.min_ctas) + ":" + std::to_string(c.max_ctas) + ":" + c.algo + ":";
    for (int gpu : c.spec.rank_to_gpu) key += std::to_string(gpu) + ",";
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    const bool own = !c.p2p && (c.min_ctas > 0 || c.max_ctas > 0 || !c.algo.empty());
    auto s = plan_collective(c.spec, *topo_, own ? env_.restricted(c.min_ctas, c.max_ctas, c.algo) : env_,
                             ScheduleForm::kCompact);
    if (!s.is_ok()) return s.status();
    Planned p;
    p.schedule = std::make_shared<const Schedule>(std::move(s).value());
    if (engine_ == EngineKind::kAnalytical) {
      // No contention in the analytical model: a call's time does not depend on any other (as the coordinator does).
      GENIE_ASSIGN_OR_RETURN(
          CollectiveTiming t,
          simulate_schedule(topo_, *p.schedule, SimulatorOptions{EngineKind::kAnalytical, true, false}));
      p.alone = t.duration();
    }
    plans_.emplace(std::move(key), p);
    return p;
  }

  Status launch(int call, int64_t start) {
    const Call& c = m_.calls[static_cast<size_t>(call)];
    if (result_) ++(c.p2p ? result_->messages : result_->collectives);
    if (c.p2p && (c.spec.count == 0 || c.spec.rank_to_gpu[0] == c.spec.rank_to_gpu[1])) {
      push(start, -1, 0, call);  // nothing crosses the network
      return Status::ok();
    }
    auto p = plan(c);
    if (!p.is_ok()) {
      const auto& mb = c.members.front();
      return invalid_argument(m_.ranks[static_cast<size_t>(mb.first)].graph->file + ": node id " +
                              std::to_string(m_.ranks[static_cast<size_t>(mb.first)].graph->nodes[mb.second].id) +
                              ": " + collective_name(c.spec.collective) + " of " + std::to_string(c.spec.count) + " " +
                              datatype_name(c.spec.datatype) + " on " + std::to_string(c.spec.nranks) +
                              " ranks: netsim cannot plan it: " + p.status().message());
    }
    if (engine_ == EngineKind::kAnalytical) {
      push(start + p->alone.count_ns(), -1, 0, call);
      return Status::ok();
    }
    GENIE_ASSIGN_OR_RETURN(int h, sim_.submit(p->schedule, SimTime::ns(start)));
    in_sim_[h] = call;
    return Status::ok();
  }

  Status end_call(int call, int64_t t) {
    for (const auto& [rank, node] : m_.calls[static_cast<size_t>(call)].members) GENIE_TRY(finish(rank, node, t));
    return Status::ok();
  }

  Status finish(int rank, uint32_t node, int64_t t) {
    now_ = std::max(now_, t);
    ++done_;
    const auto& g = *m_.ranks[static_cast<size_t>(rank)].graph;
    const workload::GNode& n = g.nodes[node];
    // A rank's end is its device's last op (as the report's): host nodes after it (a final wait) do not count.
    auto& end = (n.cpu ? host_ends_ : ends_)[static_cast<size_t>(rank)];
    end = std::max(end, t);
    if (n.range >= 0 && result_) {
      auto& b = begins_[static_cast<size_t>(rank)];
      const std::pair<int, int> key{n.range, n.range_index};
      if (n.range_begin) {
        b[key] = t;
      } else if (auto it = b.find(key); it != b.end()) {
        result_->ranks[static_cast<size_t>(rank)].ranges[g.range_names[static_cast<size_t>(n.range)]].push_back(
            SimTime::ns(t - it->second));
        b.erase(it);
      }
    }
    auto& pend = pending_[static_cast<size_t>(rank)];
    for (uint32_t i = n.child_begin; i < n.child_end; ++i) {
      const uint32_t c = g.children[i];
      if (--pend[c] == 0) GENIE_TRY(start(rank, c, t));
    }
    return Status::ok();
  }

  Status stalled() {
    for (size_t c = 0; c < m_.calls.size(); ++c) {
      const Call& call = m_.calls[c];
      if (arrived_[c] == 0 || arrived_[c] >= call.expected) continue;
      std::string waiting;
      for (const auto& [rank, node] : call.members) {
        const auto& g = *m_.ranks[static_cast<size_t>(rank)].graph;
        if (pending_[static_cast<size_t>(rank)][node] != 0)
          waiting += (waiting.empty() ? "" : ", ") + std::to_string(rank) + " (node id " +
                     std::to_string(g.nodes[node].id) + ")";
      }
      const std::string what = call.p2p ? std::string("a message")
                                        : "group '" + m_.pgs[static_cast<size_t>(call.pg)].name + "' " +
                                              collective_name(call.spec.collective);
      return invalid_argument("the replay stalled at " + std::to_string(now_ / 1e3) + " us: " + what +
                              " waits for rank(s) " + waiting + ", which wait for each other's calls in another order");
    }
    for (size_t r = 0; r < m_.ranks.size(); ++r) {
      const auto& g = *m_.ranks[r].graph;
      for (size_t k = 0; k < g.nodes.size(); ++k)
        if (pending_[r][k] != 0)
          return invalid_argument(g.file + ": node id " + std::to_string(g.nodes[k].id) +
                                  " never runs: its dependencies form a cycle");
    }
    return invalid_argument("the replay stalled");
  }
};

}  // namespace

Result<WorkloadResult> replay_workload(const WorkloadOptions& opts) {
  const auto t0 = std::chrono::steady_clock::now();
  Model m;
  GENIE_TRY(workload::load_traces(opts, &m));
  GENIE_TRY(workload::lay_out_ranks(opts, &m));
  const bool rescaled = !m.dp_new_pg.empty();
  const std::string topo_name = opts.topology.empty() ? m.info.topology : opts.topology;
  if (topo_name.empty())
    return invalid_argument(
        "the traces do not say which cluster they ran on (GlobalMetadata 'topology'): give --topology");
  TopologyOptions to;
  to.fabric = opts.fabric.value_or(m.info.fabric.empty() ? "rail" : m.info.fabric);
  int need = 0;
  for (const auto& r : m.ranks) need = std::max(need, r.gpu + 1);
  GENIE_ASSIGN_OR_RETURN(auto one, load_topology(topo_name, to));
  const int gpn = std::max(1, gpus_per_node(*one));
  to.nodes =
      opts.nodes.value_or(std::max((need + gpn - 1) / gpn, opts.topology.empty() && !rescaled ? m.info.nodes : 1));
  to.nodes = std::max(1, to.nodes);
  auto loaded = to.nodes > 1 ? load_topology(topo_name, to) : Result<std::shared_ptr<const Topology>>(one);
  if (!loaded.is_ok() && to.nodes > 1) loaded = one;  // explicit graphs and ASTRA-sim files are whole clusters
  GENIE_ASSIGN_OR_RETURN(auto topo, std::move(loaded));
  if (need > topo->num_gpus()) {
    // The recorded placement does not fit the cluster asked for: rank r on GPU r.
    if (static_cast<int>(m.ranks.size()) > topo->num_gpus())
      return invalid_argument("the " + std::to_string(m.ranks.size()) + " ranks need " +
                              std::to_string(m.ranks.size()) + " GPUs; " + topo_name + " with " +
                              std::to_string(to.nodes) + " node(s) has " + std::to_string(topo->num_gpus()) +
                              " (give --nodes)");
    for (size_t r = 0; r < m.ranks.size(); ++r) m.ranks[r].gpu = static_cast<int>(r);
    m.notes.push_back("the recorded GPUs do not fit " + topo_name + ": rank r placed on GPU r");
  }
  GENIE_TRY(workload::match_calls(&m));
  EngineKind engine = EngineKind::kFlow;
  if (opts.engine) {
    engine = *opts.engine;
  } else if (!m.info.engine.empty()) {
    GENIE_ASSIGN_OR_RETURN(engine, parse_engine(m.info.engine));
  }
  WorkloadResult res;
  res.nranks = static_cast<int>(m.ranks.size());
  res.dp_from = m.dp_from;
  res.dp_to = m.dp_to;
  res.topology_name = topo_name + (to.nodes > 1 ? " x" + std::to_string(to.nodes) + " nodes" : "");
  res.engine = engine_name(engine);
  Replay replay(m, topo, engine, merged_env(m.info.env, opts.env_override), opts);
  replay.set_result(&res);
  GENIE_TRY(replay.run(&res));
  for (const auto& r : res.ranks) res.total = max(res.total, r.end);
  res.notes = m.notes;
  res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

namespace {
struct RangeStat {
  size_t n = 0;
  double mean_ms = 0, steady_ms = 0;  // steady: from the second occurrence on
};
RangeStat stat(const std::vector<SimTime>& v) {
  RangeStat s;
  s.n = v.size();
  double all = 0, rest = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    all += v[i].to_us();
    if (i > 0) rest += v[i].to_us();
  }
  s.mean_ms = v.empty() ? 0 : all / 1e3 / static_cast<double>(v.size());
  s.steady_ms = v.size() > 1 ? rest / 1e3 / static_cast<double>(v.size() - 1) : s.mean_ms;
  return s;
}
}  // namespace

std::string format_workload(const WorkloadResult& r) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "# replay: %d ranks on %s, engine %s; %llu nodes, %llu collectives, %llu messages\n",
                r.nranks, r.topology_name.c_str(), r.engine.c_str(), static_cast<unsigned long long>(r.nodes),
                static_cast<unsigned long long>(r.collectives), static_cast<unsigned long long>(r.messages));
  out += line;
  if (r.dp_to != r.dp_from) {
    std::snprintf(line, sizeof line, "# data parallelism %d -> %d\n", r.dp_from, r.dp_to);
    out += line;
  }
  out += "#  rank    gpu     total_ms  range               count      mean_ms    steady_ms\n";
  // At most 64 rows: large replays print the first and last ranks.
  const size_t n = r.ranks.size();
  for (size_t i = 0; i < n; ++i) {
    if (n > 64 && i == 32) {
      std::snprintf(line, sizeof line, "  ... %zu ranks ...\n", n - 64);
      out += line;
    }
    if (n > 64 && i >= 32 && i < n - 32) continue;
    const WorkloadRank& k = r.ranks[i];
    if (k.ranges.empty()) {
      std::snprintf(line, sizeof line, "%7d %6d %12.4f\n", k.rank, k.gpu, k.end.to_us() / 1e3);
      out += line;
      continue;
    }
    bool first = true;
    for (const auto& [name, v] : k.ranges) {
      const RangeStat s = stat(v);
      if (first)
        std::snprintf(line, sizeof line, "%7d %6d %12.4f  %-18.18s %6zu %12.4f %12.4f\n", k.rank, k.gpu,
                      k.end.to_us() / 1e3, name.c_str(), s.n, s.mean_ms, s.steady_ms);
      else
        std::snprintf(line, sizeof line, "%7s %6s %12s  %-18.18s %6zu %12.4f %12.4f\n", "", "", "", name.c_str(), s.n,
                      s.mean_ms, s.steady_ms);
      out += line;
      first = false;
    }
  }
  std::snprintf(line, sizeof line, "# total %.4f ms (the last rank's end); replayed in %.2f s\n", r.total.to_us() / 1e3,
                r.wall_s);
  out += line;
  for (const auto& note : r.notes) out += "# " + note + "\n";
  return out;
}

std::string workload_json(const WorkloadResult& r) {
  nlohmann::json j;
  j["nranks"] = r.nranks;
  j["dp_from"] = r.dp_from;
  j["dp_to"] = r.dp_to;
  j["topology"] = r.topology_name;
  j["engine"] = r.engine;
  j["nodes"] = r.nodes;
  j["collectives"] = r.collectives;
  j["messages"] = r.messages;
  j["total_us"] = r.total.to_us();
  j["wall_s"] = r.wall_s;
  j["notes"] = r.notes;
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& k : r.ranks) {
    nlohmann::json jr;
    jr["rank"] = k.rank;
    jr["gpu"] = k.gpu;
    jr["end_us"] = k.end.to_us();
    nlohmann::json rg = nlohmann::json::object();
    for (const auto& [name, v] : k.ranges) {
      nlohmann::json d = nlohmann::json::array();
      for (SimTime t : v) d.push_back(t.to_us());
      rg[name] = d;
    }
    jr["ranges_us"] = rg;
    ranks.push_back(jr);
  }
  j["ranks"] = ranks;
  return j.dump(1) + "\n";
}

}  // namespace genie::netsim
