// SPDX-License-Identifier: Apache-2.0
// CoordinatorCore: the job's global virtual clock. Collectives are submitted to one netsim Simulator in
// (start, comm, seq) order once no process can still inject earlier traffic, and resolved one event time at
// a time, so a process woken by a resolution is never overtaken by the clock (see docs/coordinator.md).
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "genie/common/log.hpp"
#include "genie/netsim/placement.hpp"
#include "genie/sched/coordinator.hpp"
#include "genie/sched/timeline.hpp"

namespace genie::sched {
namespace {

constexpr int64_t kNoPromise = std::numeric_limits<int64_t>::max();

// What a pending call is, independent of kind: a collective (comm, seq) or a p2p message
// (comm, src, dst, index). Ordered for the canonical submission order.
struct CallKey {
  uint64_t comm = 0;
  uint64_t seq = 0;  // collective seq or message index
  int32_t src = -1;  // -1 for collectives
  int32_t dst = -1;
  auto tie() const { return std::tie(comm, seq, src, dst); }
  bool operator<(const CallKey& o) const { return tie() < o.tie(); }
  bool operator==(const CallKey& o) const { return tie() == o.tie(); }
};

struct Pending {
  CollectiveRecord rec;
  std::vector<bool> arrived;  // per comm rank (p2p: [sender, receiver])
  int arrivals = 0;
  bool queued = false;     // in `ready`, waiting for the clock
  bool submitted = false;  // in the simulator
  std::shared_ptr<const netsim::Schedule> schedule;
};

struct ProcState {
  ProcessInfo info;
  int conn = -1;
  int64_t promise = 0;       // lower bound of its next injection (0 until it says otherwise)
  uint64_t epoch_sent = 0;   // Resolved messages sent to it
  int64_t wanted = -1;       // last Want sent
  int64_t told_safe = -1;    // safe time in the last Want sent
};

}  // namespace

struct CoordinatorCore::Impl {
  CoordinatorOptions opt;
  Send send;
  JobRecord rec;
  std::vector<ProcState> procs;
  std::map<int, int> conn_proc;  // connection -> process index
  std::map<CallKey, Pending> pending;
  // Arrived completely, waiting for the clock: (start, key).
  std::set<std::pair<int64_t, CallKey>> ready;
  std::map<int, CallKey> in_sim;  // simulator handle -> call
  std::unique_ptr<netsim::Simulator> sim;
  std::vector<std::pair<int, SimTime>> finished;  // filled by the simulator's finish callback
  std::map<std::string, int> node_index;
  bool placement_fixed = false;
  int64_t epoch_mono_ns = 0;  // CLOCK_MONOTONIC when the coordinator started
  int64_t frontier = 0;  // everything strictly before it is resolved
  // Quiescence probes (start_probe): the round in flight, each process's answer (-1 none, 0 awake, 1 asleep), and
  // the wake-ups (Resolved, Resume) sent so far and when the round started: one sent meanwhile voids the round.
  uint64_t probe_round = 0;
  bool probing = false;
  std::vector<int8_t> probe_answers;
  int64_t probe_floor = kNoPromise;  // the earliest waiting query of the round's answers (Quiet::floor_ns)
  uint64_t wakeups_sent = 0;
  uint64_t probe_wakeups = 0;

  Impl(CoordinatorOptions o, Send s) : opt(std::move(o)), send(std::move(s)) {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    epoch_mono_ns = static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
    netsim::SimulatorOptions so;
    so.engine = opt.engine;
    so.record_link_usage = opt.record_link_usage;
    sim = std::make_unique<netsim::Simulator>(opt.topology, so);
    sim->set_finish_callback([this](int h, SimTime end) { finished.emplace_back(h, end); });
  }

  ProcState* proc_of(int conn) {
    auto it = conn_proc.find(conn);
    return it == conn_proc.end() ? nullptr : &procs[static_cast<size_t>(it->second)];
  }

  int registered() const { return static_cast<int>(procs.size()); }

  int64_t safe_time() const {
    if (opt.expected_processes > 0 && registered() < opt.expected_processes) return 0;
    int64_t s = kNoPromise;
    for (const auto& p : procs)
      if (p.info.alive && !p.info.said_bye) s = std::min(s, p.promise);
    return s;
  }

  // --- placement -----------------------------------------------------------------------------------

  // Emulated nodes a process name spans: one per gpus_per_node of the devices it sees.
  int span_of(const ProcessInfo& p) const {
    const int g = std::max(1, opt.gpus_per_node);
    return std::max(1, (std::max(p.gpus, 1) + g - 1) / g);
  }

  // Fixes node indices once every expected process said Hello: "node<k>" names (genie run) map to k;
  // other names in order of their lowest process rank.
  void fix_placement() {
    if (placement_fixed) return;
    placement_fixed = true;
    bool numbered = true;
    std::map<std::string, std::pair<int, int>> names;  // name -> (lowest rank or index, span)
    for (const auto& p : procs) {
      auto& e = names.try_emplace(p.info.node, std::make_pair(INT32_MAX, 1)).first->second;
      e.first = std::min(e.first, p.info.process_rank >= 0 ? p.info.process_rank : 1000000 + p.info.index);
      e.second = std::max(e.second, span_of(p.info));
      const auto& n = p.info.node;
      numbered = numbered && n.size() > 4 && n.compare(0, 4, "node") == 0 &&
                 n.find_first_not_of("0123456789", 4) == std::string::npos;
    }
    if (numbered) {
      for (const auto& [name, e] : names) node_index[name] = std::stoi(name.substr(4)) * e.second;
    } else {
      std::vector<std::tuple<int, std::string, int>> order;
      for (const auto& [name, e] : names) order.emplace_back(e.first, name, e.second);
      std::sort(order.begin(), order.end());
      int base = 0;
      for (const auto& [r, name, span] : order) {
        node_index[name] = base;
        base += span;
      }
    }
    for (auto& p : procs) p.info.node_index = node_of(p.info.node, p.info);
  }

  int node_of(const std::string& name, const ProcessInfo& p) {
    auto it = node_index.find(name);
    if (it != node_index.end()) return it->second;
    // A node first seen after placement was fixed goes after every known one.
    int next = 0;
    for (const auto& [n, i] : node_index) next = std::max(next, i + 1);
    node_index[name] = next + span_of(p) - 1;
    return node_index[name];
  }

  void place_comm(CommInfo& c) {
    const int per_node = std::max(1, opt.gpus_per_node);
    c.gpu.assign(static_cast<size_t>(c.nranks), -1);
    for (int r = 0; r < c.nranks; ++r) {
      const ProcessInfo& p = procs[static_cast<size_t>(c.process[static_cast<size_t>(r)])].info;
      const int dev = c.cuda_dev[static_cast<size_t>(r)];
      const int gpu = netsim::gpu_index(p.node_index, dev, per_node);
      if (gpu < 0 || gpu >= opt.topology->num_gpus()) {
        c.placement_error = "rank " + std::to_string(r) + " of communicator " + comm_name(c.key) + " (process " +
                            std::to_string(p.process_rank) + " on " + p.node + ", device " + std::to_string(dev) +
                            ") lands on GPU " + std::to_string(gpu) + ", but topology " + opt.topology_name +
                            " has " + std::to_string(opt.topology->num_gpus()) +
                            " GPUs (give genie run a larger --nodes or --topology)";
        return;
      }
      c.gpu[static_cast<size_t>(r)] = gpu;
    }
  }

  static std::string comm_name(uint64_t key) {
    char b[24];
    std::snprintf(b, sizeof(b), "%#llx", static_cast<unsigned long long>(key));
    return b;
  }

  // --- messages ------------------------------------------------------------------------------------

  void on_comm_join(ProcState& p, const coord::CommJoin& m) {
    if (m.nranks <= 0 || m.nranks > (1 << 20) || m.comm_rank < 0 || m.comm_rank >= m.nranks) {
      GENIE_LOG_WARN("sched", "coordinator: process {} sent CommJoin with rank {} of {}: dropped", p.info.index,
                     m.comm_rank, m.nranks);
      ++rec.protocol_errors;
      return;
    }
    CommInfo& c = rec.comms[m.comm];
    if (c.nranks == 0) {
      c.key = m.comm;
      c.parent = m.parent;
      c.nranks = m.nranks;
      c.process.assign(static_cast<size_t>(m.nranks), -1);
      c.cuda_dev.assign(static_cast<size_t>(m.nranks), -1);
    }
    if (c.nranks != m.nranks || c.process[static_cast<size_t>(m.comm_rank)] != -1) {
      GENIE_LOG_WARN("sched", "coordinator: CommJoin of {} rank {} of {} conflicts with what was joined: dropped",
                     comm_name(m.comm), m.comm_rank, m.nranks);
      ++rec.protocol_errors;
      return;
    }
    c.process[static_cast<size_t>(m.comm_rank)] = p.info.index;
    c.cuda_dev[static_cast<size_t>(m.comm_rank)] = m.cuda_dev;
    ++c.joined;
  }

  bool comm_ready(const CommInfo& c) const { return c.nranks > 0 && c.joined == c.nranks; }

  void on_coll(ProcState& p, const coord::Coll& m) {
    auto cit = rec.comms.find(m.comm);
    if (cit == rec.comms.end() || m.comm_rank < 0 || m.comm_rank >= cit->second.nranks ||
        cit->second.process[static_cast<size_t>(m.comm_rank)] != p.info.index ||
        m.collective > static_cast<uint8_t>(netsim::Collective::kScatter) ||
        m.datatype > static_cast<uint8_t>(netsim::DataType::kFp8E5M2) ||
        m.redop > static_cast<uint8_t>(netsim::RedOp::kAvg) || m.seq == 0) {
      GENIE_LOG_WARN("sched", "coordinator: process {} sent an invalid Coll (comm {}, rank {}, seq {}): dropped",
                     p.info.index, comm_name(m.comm), m.comm_rank, m.seq);
      ++rec.protocol_errors;
      return;
    }
    const CommInfo& c = cit->second;
    CallKey key{m.comm, m.seq, -1, -1};
    auto [it, fresh] = pending.try_emplace(key);
    Pending& pc = it->second;
    if (fresh) {
      auto& r = pc.rec;
      r.comm = m.comm;
      r.seq = m.seq;
      r.collective = static_cast<netsim::Collective>(m.collective);
      r.datatype = static_cast<netsim::DataType>(m.datatype);
      r.redop = static_cast<netsim::RedOp>(m.redop);
      r.root = m.root;
      r.count = m.count;
      r.min_ctas = m.min_ctas;
      r.max_ctas = m.max_ctas;
      r.algo.assign(reinterpret_cast<const char*>(m.algo.data()),
                    strnlen(reinterpret_cast<const char*>(m.algo.data()), m.algo.size()));
      r.nranks = c.nranks;
      r.ready_ns.assign(static_cast<size_t>(c.nranks), -1);
      pc.arrived.assign(static_cast<size_t>(c.nranks), false);
    }
    if (pc.arrived[static_cast<size_t>(m.comm_rank)]) {
      GENIE_LOG_WARN("sched", "coordinator: rank {} of {} reported call #{} twice: dropped", m.comm_rank,
                     comm_name(m.comm), m.seq);
      ++rec.protocol_errors;
      return;
    }
    pc.arrived[static_cast<size_t>(m.comm_rank)] = true;
    pc.rec.ready_ns[static_cast<size_t>(m.comm_rank)] = m.ready_ns;
    ++pc.arrivals;
    maybe_complete(key, pc);
  }

  void on_p2p(ProcState& p, const coord::P2p& m) {
    auto cit = rec.comms.find(m.comm);
    const bool ok = cit != rec.comms.end() && m.src >= 0 && m.dst >= 0 && m.src < cit->second.nranks &&
                    m.dst < cit->second.nranks && m.index > 0 &&
                    m.comm_rank == (m.is_send ? m.src : m.dst) &&
                    cit->second.process[static_cast<size_t>(m.comm_rank)] == p.info.index &&
                    m.datatype <= static_cast<uint8_t>(netsim::DataType::kFp8E5M2) &&
                    m.count <= UINT64_MAX / 8 &&
                    m.count * netsim::datatype_size(static_cast<netsim::DataType>(m.datatype)) == m.bytes;
    if (!ok) {
      GENIE_LOG_WARN("sched", "coordinator: process {} sent an invalid P2p (comm {}, {} -> {}): dropped", p.info.index,
                     comm_name(m.comm), m.src, m.dst);
      ++rec.protocol_errors;
      return;
    }
    CallKey key{m.comm, m.index, m.src, m.dst};
    auto [it, fresh] = pending.try_emplace(key);
    Pending& pc = it->second;
    if (fresh) {
      auto& r = pc.rec;
      r.comm = m.comm;
      r.seq = m.index;
      r.p2p = true;
      r.src = m.src;
      r.dst = m.dst;
      r.collective = netsim::Collective::kSendRecv;
      r.datatype = netsim::DataType::kUint8;
      r.nranks = 2;
      r.ready_ns.assign(2, -1);
      pc.arrived.assign(2, false);
    }
    const size_t side = m.is_send ? 0 : 1;
    if (pc.arrived[side]) {
      GENIE_LOG_WARN("sched", "coordinator: message {} of {} -> {} on {} reported twice: dropped", m.index, m.src,
                     m.dst, comm_name(m.comm));
      ++rec.protocol_errors;
      return;
    }
    pc.arrived[side] = true;
    pc.rec.ready_ns[side] = m.ready_ns;
    if (m.is_send) {  // the sender's size is what moves; the record keeps its count and datatype
      pc.rec.count = m.count;
      pc.rec.datatype = static_cast<netsim::DataType>(m.datatype);
    }
    ++pc.arrivals;
    maybe_complete(key, pc);
  }

  // Every rank arrived and the communicator is known: plan the call and queue it for the clock.
  void maybe_complete(const CallKey& key, Pending& pc) {
    if (pc.arrivals < static_cast<int>(pc.arrived.size())) return;
    CommInfo& c = rec.comms[key.comm];
    if (!comm_ready(c)) return;  // retried when the last CommJoin arrives
    if (!placement_fixed) return;  // retried when every process said Hello
    if (c.gpu.empty() && c.placement_error.empty()) place_comm(c);
    auto& r = pc.rec;
    int64_t start = 0;
    for (int64_t t : r.ready_ns) start = std::max(start, t);
    r.start = SimTime::ns(start);
    if (!c.placement_error.empty()) return fail(key, c.placement_error);
    netsim::CollectiveSpec spec;
    spec.collective = r.collective;
    spec.datatype = r.datatype;
    spec.redop = r.redop;
    spec.root = r.root;
    if (r.p2p) {
      spec.count = r.count;
      spec.nranks = 2;
      spec.rank_to_gpu = {c.gpu[static_cast<size_t>(r.src)], c.gpu[static_cast<size_t>(r.dst)]};
    } else {
      spec.count = r.count;
      spec.nranks = c.nranks;
      spec.rank_to_gpu = c.gpu;
    }
    if (r.p2p && (r.count == 0 || spec.rank_to_gpu[0] == spec.rank_to_gpu[1])) {
      // Nothing crosses the network (an empty message, or a GPU sending to itself).
      r.end = r.start;
      r.bytes = r.count * netsim::datatype_size(r.datatype);
      return resolve(key, pc);
    }
    const bool own = !r.p2p && (r.min_ctas > 0 || r.max_ctas > 0 || !r.algo.empty());
    auto plan = netsim::plan_collective(spec, *opt.topology,
                                        own ? opt.nccl_env.restricted(r.min_ctas, r.max_ctas, r.algo) : opt.nccl_env);
    if (!plan.is_ok()) return fail(key, "netsim cannot plan it: " + plan.status().message());
    r.tuning = plan->tuning;
    r.bytes = plan->payload_bytes();
    pc.schedule = std::make_shared<const netsim::Schedule>(std::move(plan).value());
    if (opt.engine == netsim::EngineKind::kAnalytical) {
      // No contention in the analytical model: a call's duration does not depend on any other, so it is
      // resolved as soon as it is complete, without waiting for the clock.
      auto t = netsim::simulate_schedule(opt.topology, *pc.schedule, netsim::SimulatorOptions{
                                                                          netsim::EngineKind::kAnalytical, true, false});
      if (!t.is_ok()) return fail(key, "netsim cannot time it: " + t.status().message());
      r.end = r.start + t->duration();
      return resolve(key, pc);
    }
    pc.queued = true;
    ready.emplace(start, key);
    send_bound(key, pc);
  }

  // Tells the call's processes that it ends no earlier than its start plus its time alone on uncontended links: their
  // queries about it before then answer at once instead of waiting for the clock (docs/coordinator.md, "Bound").
  void send_bound(const CallKey& key, const Pending& pc) {
    auto lb = netsim::duration_lower_bound(opt.topology, *pc.schedule);
    if (!lb.is_ok() || lb.value() <= SimTime::zero()) return;  // no bound: the queries wait for the clock, as before
    const auto& r = pc.rec;
    coord::Bound m;
    m.is_p2p = r.p2p ? 1 : 0;
    m.comm = r.comm;
    m.seq = r.seq;
    m.src = r.src;
    m.dst = r.dst;
    m.end_lb_ns = (r.start + lb.value()).count_ns();
    for (int pi : members_of(key, r)) {
      if (pi < 0) continue;
      const ProcState& p = procs[static_cast<size_t>(pi)];
      if (p.info.alive) send(p.conn, coord::Message{m});
    }
    ++rec.bounds_sent;
  }

  std::set<int> members_of(const CallKey& key, const CollectiveRecord& r) {
    const CommInfo& c = rec.comms[key.comm];
    if (r.p2p) return {c.process[static_cast<size_t>(r.src)], c.process[static_cast<size_t>(r.dst)]};
    return {c.process.begin(), c.process.end()};
  }

  void fail(const CallKey& key, const std::string& why) {
    auto it = pending.find(key);
    if (it == pending.end()) return;
    it->second.rec.error = why;
    GENIE_LOG_ERROR("sched", "coordinator: {} #{} on {} fails: {}", it->second.rec.p2p ? "message" : "collective",
                    key.seq, comm_name(key.comm), why);
    resolve(key, it->second);
  }

  // Sends the outcome to every process with a rank in the call, lowers their promises to its end (they
  // may inject again from then on) and records it.
  void resolve(const CallKey& key, Pending& pc) {
    auto& r = pc.rec;
    for (int pi : members_of(key, r)) {
      if (pi < 0) continue;
      ProcState& p = procs[static_cast<size_t>(pi)];
      if (!p.info.alive) continue;
      coord::Resolved m;
      m.is_p2p = r.p2p ? 1 : 0;
      m.status = r.error.empty() ? 0 : static_cast<uint8_t>(Errc::kRemote);
      m.comm = r.comm;
      m.seq = r.seq;
      m.src = r.src;
      m.dst = r.dst;
      m.start_ns = r.start.count_ns();
      m.end_ns = r.end.count_ns();
      m.algorithm = static_cast<uint8_t>(r.tuning.algorithm);
      m.protocol = static_cast<uint8_t>(r.tuning.protocol);
      m.nchannels = static_cast<uint16_t>(r.tuning.nchannels);
      m.epoch = ++p.epoch_sent;
      ++wakeups_sent;
      m.error = r.error;
      // It may inject again from the end on (never before the clock: that would be a late arrival anyway).
      if (opt.engine != netsim::EngineKind::kAnalytical)
        p.promise = std::min(p.promise, std::max(r.end, sim->now()).count_ns());
      send(p.conn, coord::Message{m});
    }
    ++rec.resolved_calls;
    if (rec.collectives.size() < opt.max_collective_records) {
      rec.collectives.push_back(std::move(r));
    } else {
      if (rec.collectives_beyond.empty() && opt.record_link_usage) {
        // Link usage (a few samples per transfer) stops with the detailed records: the report's link charts
        // then cover the calls it shows in detail.
        sim->stop_link_usage();
        rec.link_usage_until = sim->now();
      }
      JobRecord::CallTotals& t = rec.collectives_beyond[{r.comm, r.collective, r.nranks}];
      const double us = (r.end - r.start).to_us();
      ++t.calls;
      t.bytes += r.bytes;
      t.failed += r.error.empty() ? 0 : 1;
      t.time_us += us;
      t.algbw_sum_gbps += us > 0 ? r.bytes / (us * 1e3) : 0;
      t.last_end = std::max(t.last_end, r.end);
    }
    pending.erase(key);
  }

  void retry_incomplete() {
    std::vector<CallKey> keys;
    for (auto& [k, pc] : pending)
      if (!pc.queued && !pc.submitted && pc.arrivals == static_cast<int>(pc.arrived.size())) keys.push_back(k);
    for (const auto& k : keys) {
      auto it = pending.find(k);
      if (it != pending.end()) maybe_complete(k, it->second);
    }
  }

  // --- the clock -----------------------------------------------------------------------------------

  void submit_ready(int64_t safe) {
    while (!ready.empty() && ready.begin()->first < safe) {
      auto [start, key] = *ready.begin();
      ready.erase(ready.begin());
      auto it = pending.find(key);
      if (it == pending.end()) continue;
      Pending& pc = it->second;
      SimTime s = SimTime::ns(start);
      if (s < sim->now()) {
        // A process that was parked (asleep outside Genie) reported a ready time the clock has passed.
        ++rec.late_arrivals;
        rec.max_lateness = max(rec.max_lateness, sim->now() - s);
        pc.rec.clamped_by = sim->now() - s;
        s = sim->now();
      }
      pc.rec.start = s;
      auto h = sim->submit(pc.schedule, s);
      if (!h.is_ok()) {
        fail(key, "netsim rejected it: " + h.status().message());
        continue;
      }
      pc.submitted = true;
      in_sim[h.value()] = key;
    }
  }

  void pump() {
    if (opt.expected_processes > 0 && registered() >= opt.expected_processes && !placement_fixed) {
      fix_placement();
      retry_incomplete();
    } else if (opt.expected_processes == 0 && registered() > 0 && !placement_fixed) {
      fix_placement();
      retry_incomplete();
    }
    for (;;) {
      const int64_t safe = safe_time();
      submit_ready(safe);
      auto next = sim->next_event_time();
      if (!next || next->count_ns() >= safe) break;
      // One event time per step: resolutions lower their members' promises to the current time, so the
      // clock must not run past a time a woken process could still inject at.
      Status st = sim->run_until(*next);
      if (!st.is_ok()) GENIE_LOG_ERROR("sched", "coordinator: simulation error: {}", st.message());
      auto done = std::exchange(finished, {});
      for (const auto& [h, end] : done) {
        auto it = in_sim.find(h);
        if (it == in_sim.end()) continue;
        CallKey key = it->second;
        in_sim.erase(it);
        auto pit = pending.find(key);
        if (pit != pending.end()) {
          pit->second.rec.end = end;
          resolve(key, pit->second);
        }
        (void)sim->release(h);
      }
    }
    frontier = std::max(frontier, std::min(safe_time(), sim->now().count_ns()));
    send_wants();
  }

  // What the clock waits for next: the next simulation event or queued start.
  std::optional<int64_t> target() {
    std::optional<int64_t> t;
    if (auto n = sim->next_event_time()) t = n->count_ns();
    if (!ready.empty()) t = t ? std::min(*t, ready.begin()->first) : ready.begin()->first;
    return t;
  }

  void send_wants() {
    // Calls still missing ranks wait for those ranks' arrivals, not for anyone's promise.
    auto t = target();
    if (!t) return;
    const int64_t want = *t + 1;
    const int64_t safe = safe_time();
    for (auto& p : procs) {
      if (!p.info.alive || p.info.said_bye || p.promise >= want) continue;
      // Once more when the clock has come up to its promise: a query waiting there learns that work still
      // unresolved does not end before it (Timeline::wait_until_known).
      const bool at_promise = safe >= p.promise && p.told_safe < safe;
      if (p.wanted >= want && !at_promise) continue;
      p.wanted = want;
      p.told_safe = safe;
      send(p.conn, coord::Message{coord::Want{want, safe}});
    }
  }

  // Processes whose promise is below `want` (the clock's next event + 1): they hold the clock.
  std::vector<ProcState*> holders(int64_t want) {
    std::vector<ProcState*> v;
    for (auto& p : procs)
      if (p.info.alive && !p.info.said_bye && p.promise < want) v.push_back(&p);
    return v;
  }

  // Lets the clock reach its next event although the processes below hold it. `asleep`: the whole job was seen
  // asleep (a probe round), so nothing can happen before that event — but a query waiting to be answered at
  // `query_floor`, if earlier, goes on then (and a thread asleep outside Genie may be waiting for it, e.g. for the
  // GIL it holds): each holder is told to resume no earlier than the earlier of the two (Resume), and the clock
  // comes up to it. Otherwise the stall grace ran out: a guess, logged and counted.
  bool relax(bool asleep, int64_t query_floor = kNoPromise) {
    auto t = target();
    if (!t) return false;
    int64_t resume_at = *t;
    int64_t want = *t + 1;
    // Up to the query's time only if that moves the clock at all (else to the next event).
    if (asleep && query_floor < *t && query_floor > safe_time()) {
      resume_at = query_floor;
      want = query_floor;  // the clock stops there; the query's process learns so (send_wants)
    }
    auto held = holders(want);
    if (held.empty()) return false;
    for (ProcState* p : held) {
      if (asleep) {
        GENIE_LOG_DEBUG("sched", "coordinator: every process asleep; process {} (rank {}) resumes at {:.3f} us",
                        p->info.index, p->info.process_rank, resume_at / 1e3);
        send(p->conn, coord::Message{coord::Resume{resume_at, ++p->epoch_sent}});
        ++wakeups_sent;
      } else {
        GENIE_LOG_WARN("sched",
                       "coordinator: process {} (rank {}, pid {}) has promised nothing past {:.3f} us for the stall "
                       "grace while the clock waits at {:.3f} us; assuming it injects nothing earlier (counted as a "
                       "relaxed step in the report)",
                       p->info.index, p->info.process_rank, p->info.pid, p->promise / 1e3, *t / 1e3);
      }
      p->promise = want;
    }
    ++(asleep ? rec.asleep_steps : rec.relaxed_steps);
    pump();
    return true;
  }

  bool start_probe(bool restart) {
    if (probing && !restart) return false;
    if (opt.expected_processes > 0 && registered() < opt.expected_processes) return false;
    auto t = target();
    if (!t || holders(*t + 1).empty()) return false;
    probing = true;
    ++probe_round;
    probe_wakeups = wakeups_sent;
    probe_answers.assign(procs.size(), -1);
    probe_floor = kNoPromise;
    for (auto& p : procs)
      if (p.info.alive && !p.info.said_bye) send(p.conn, coord::Message{coord::Probe{probe_round}});
    return true;
  }

  void on_quiet(ProcState& p, const coord::Quiet& q) {
    if (!probing || q.round != probe_round) return;  // an answer to a round that is over
    if (static_cast<size_t>(p.info.index) >= probe_answers.size()) return;  // joined after the round began
    // Asleep only if it had applied every wake-up sent to it: one still on its way would wake it.
    probe_answers[static_cast<size_t>(p.info.index)] = q.quiet && q.epoch == p.epoch_sent ? 1 : 0;
    probe_floor = std::min(probe_floor, q.floor_ns);
    finish_probe();
  }

  // Ends the round once every process still in the job has answered (or left).
  void finish_probe() {
    if (!probing) return;
    bool all = true;
    for (const auto& p : procs) {
      if (!p.info.alive || p.info.said_bye) continue;
      const size_t i = static_cast<size_t>(p.info.index);
      const int8_t a = i < probe_answers.size() ? probe_answers[i] : int8_t{-1};
      if (a < 0) return;
      all = all && a == 1;
    }
    probing = false;
    if (all && wakeups_sent == probe_wakeups) relax(/*asleep=*/true, probe_floor);
  }

  void on_disconnect(int conn) {
    ProcState* p = proc_of(conn);
    if (!p) return;
    const bool clean = p->info.said_bye;
    p->info.alive = false;
    conn_proc.erase(conn);
    if (clean) {
      finish_probe();  // it no longer has to answer
      return;
    }
    probing = false;  // a vanished process voids the round (its calls fail below: a wake-up)
    // A process that vanished fails every call it is part of that is still open: its peers must not wait.
    std::vector<CallKey> doomed;
    for (auto& [k, pc] : pending) {
      const CommInfo& c = rec.comms[k.comm];
      bool member = false;
      if (pc.rec.p2p) {
        member = c.process[static_cast<size_t>(pc.rec.src)] == p->info.index ||
                 c.process[static_cast<size_t>(pc.rec.dst)] == p->info.index;
      } else {
        member = std::find(c.process.begin(), c.process.end(), p->info.index) != c.process.end();
      }
      if (member && !pc.submitted) doomed.push_back(k);
    }
    const std::string why = "process " + std::to_string(p->info.process_rank) + " (pid " +
                            std::to_string(p->info.pid) + ") exited before reaching it";
    for (const auto& k : doomed) {
      if (pending[k].queued)
        for (auto it = ready.begin(); it != ready.end();) it = it->second == k ? ready.erase(it) : std::next(it);
      fail(k, why);
    }
  }
};

CoordinatorCore::CoordinatorCore(CoordinatorOptions options, Send send)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(send))) {}
CoordinatorCore::~CoordinatorCore() = default;

void CoordinatorCore::on_hello(int conn, const coord::Hello& h) {
  impl_->probing = false;  // a process the round did not ask may be awake: the round is void
  ProcState p;
  p.info.index = static_cast<int>(impl_->procs.size());
  p.info.pid = h.pid;
  p.info.process_rank = h.process_rank;
  p.info.gpus = h.gpus;
  p.info.node = h.node.empty() ? h.host : h.node;
  p.info.host = h.host;
  p.info.realtime = h.realtime != 0;
  // Realtime records are wall times since each process's own clock epoch: shift them onto the coordinator's.
  if (p.info.realtime) p.info.record_offset_ns = h.epoch_mono_ns - impl_->epoch_mono_ns;
  p.conn = conn;
  if (impl_->placement_fixed) p.info.node_index = impl_->node_of(p.info.node, p.info);
  impl_->conn_proc[conn] = p.info.index;
  impl_->procs.push_back(p);
  coord::Welcome w;
  w.process_index = p.info.index;
  w.engine = netsim::engine_name(impl_->opt.engine);
  w.topology = impl_->opt.topology_name;
  impl_->send(conn, coord::Message{w});
}

void CoordinatorCore::on_message(int conn, const coord::Message& m) {
  ProcState* p = impl_->proc_of(conn);
  if (!p) return;
  if (auto* j = std::get_if<coord::CommJoin>(&m)) {
    impl_->on_comm_join(*p, *j);
    impl_->retry_incomplete();
  } else if (auto* c = std::get_if<coord::Coll>(&m)) {
    impl_->on_coll(*p, *c);
  } else if (auto* q = std::get_if<coord::P2p>(&m)) {
    impl_->on_p2p(*p, *q);
  } else if (auto* pr = std::get_if<coord::Promise>(&m)) {
    // A promise computed before the process applied our latest resolution may predate a wake-up that
    // resolution causes: it may lower the promise, never raise it.
    if (pr->epoch == p->epoch_sent)
      p->promise = pr->t_ns;
    else
      p->promise = std::min(p->promise, pr->t_ns);
  } else if (auto* r = std::get_if<coord::Records>(&m)) {
    auto& labels = impl_->rec.labels;
    auto& ops = impl_->rec.op_records;
    const size_t pi = static_cast<size_t>(p->info.index);
    if (labels.size() <= pi) labels.resize(pi + 1);
    if (ops.size() <= pi) ops.resize(pi + 1);
    if (r->label_base != labels[pi].size()) {
      GENIE_LOG_WARN("sched", "coordinator: process {} sent labels from {} but {} are known: records dropped",
                     p->info.index, r->label_base, labels[pi].size());
      ++impl_->rec.protocol_errors;
      return;
    }
    labels[pi].insert(labels[pi].end(), r->labels.begin(), r->labels.end());
    size_t total = 0;
    for (const auto& v : ops) total += v.size();
    for (const auto& o : r->ops) {
      if (o.label >= labels[pi].size()) {
        ++impl_->rec.protocol_errors;
        continue;
      }
      if (total >= impl_->opt.max_records) {
        ++impl_->rec.dropped_op_records;
        continue;
      }
      ops[pi].push_back(o);
      ops[pi].back().start_ns += p->info.record_offset_ns;
      ops[pi].back().end_ns += p->info.record_offset_ns;
      if (o.flags & kRecordSubmitted) {
        ops[pi].back().submit_ns += p->info.record_offset_ns;
        if (o.deps_end_ns != 0) ops[pi].back().deps_end_ns += p->info.record_offset_ns;
      }
      ++total;
    }
  } else if (auto* q = std::get_if<coord::Quiet>(&m)) {
    impl_->on_quiet(*p, *q);
  } else if (auto* b = std::get_if<coord::Bye>(&m)) {
    p->info.said_bye = true;
    p->info.exit_code = b->exit_code;
    impl_->finish_probe();
  } else {
    GENIE_LOG_WARN("sched", "coordinator: process {} sent a {} message, which ranks do not send: dropped",
                   p->info.index, coord::msg_type_name(coord::type_of(m)));
    ++impl_->rec.protocol_errors;
  }
}

void CoordinatorCore::on_disconnect(int conn) { impl_->on_disconnect(conn); }
void CoordinatorCore::pump() { impl_->pump(); }
bool CoordinatorCore::relax_stall() { return impl_->relax(/*asleep=*/false); }
bool CoordinatorCore::start_probe(bool restart) { return impl_->start_probe(restart); }

bool CoordinatorCore::has_pending_work() const {
  return !impl_->pending.empty() || impl_->sim->next_event_time().has_value();
}

std::string CoordinatorCore::blockers() const {
  auto t = impl_->target();
  std::string s;
  for (const auto& p : impl_->procs) {
    if (!p.info.alive || p.info.said_bye) continue;
    if (t && p.promise > *t) continue;
    s += (s.empty() ? "" : ", ") + std::string("rank ") + std::to_string(p.info.process_rank) + " at " +
         (p.promise == kNoPromise ? std::string("-") : std::to_string(p.promise / 1000) + " us");
  }
  return s;
}

std::vector<int32_t> CoordinatorCore::local_blocker_pids() const {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return {};
  auto t = impl_->target();
  std::vector<int32_t> pids;
  for (const auto& p : impl_->procs) {
    if (!p.info.alive || p.info.said_bye || (t && p.promise > *t)) continue;
    if (p.info.host == name && p.info.pid > 0) pids.push_back(p.info.pid);
  }
  return pids;
}

SimTime CoordinatorCore::safe_time() const { return SimTime::ns(impl_->frontier); }

JobRecord& CoordinatorCore::record() {
  impl_->rec.processes.clear();
  for (const auto& p : impl_->procs) impl_->rec.processes.push_back(p.info);
  impl_->rec.link_usage = impl_->sim->link_usage();
  return impl_->rec;
}

void CoordinatorCore::note_protocol_error() { ++impl_->rec.protocol_errors; }
uint64_t CoordinatorCore::resolved_calls() const { return impl_->rec.resolved_calls; }
uint64_t CoordinatorCore::asleep_steps() const { return impl_->rec.asleep_steps; }

int CoordinatorCore::live_processes() const {
  // A process that said Bye has left, though its connection may stay open until it exits: with
  // GENIE_COORDINATOR=auto rank 0 hosts the coordinator and waits in its own exit for everyone to leave.
  int n = 0;
  for (const auto& p : impl_->procs) n += p.info.alive && !p.info.said_bye ? 1 : 0;
  return n;
}

int CoordinatorCore::registered_processes() const { return impl_->registered(); }

}  // namespace genie::sched
