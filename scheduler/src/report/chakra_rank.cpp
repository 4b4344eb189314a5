// SPDX-License-Identifier: Apache-2.0
// One rank's Chakra nodes: device ops chained per stream, waits on other streams, the previous call of the same
// communicator, and one chain of host (CPU) nodes per submitting thread that carries the host time between launches
// and the host's blocking waits. Why this shape: docs/chakra.md, "Dependencies".
#include "report/chakra_rank.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <queue>

#include "genie/sched/timeline.hpp"

namespace genie::sched::chakra_detail {

using netsim::chakra::Attr;
using netsim::chakra::CommType;
using netsim::chakra::Node;
using netsim::chakra::NodeType;

namespace {
constexpr size_t kNone = static_cast<size_t>(-1);

// A node being built: its ET fields, its dependencies (indices of other protos) and its recorded times.
struct Proto {
  Node node;
  std::vector<size_t> deps;
  int64_t start_ns = 0, end_ns = 0;
};

uint64_t round_micros(int64_t ns) { return ns <= 0 ? 0 : static_cast<uint64_t>((ns + 500) / 1000); }

void set_times(Proto& p, int64_t start_ns, int64_t end_ns) {
  p.start_ns = start_ns;
  p.end_ns = std::max(start_ns, end_ns);
  p.node.start_time_micros = start_ns > 0 ? static_cast<uint64_t>(start_ns / 1000) : 0;
  p.node.duration_micros = round_micros(p.end_ns - p.start_ns);
  // Chakra's unit is the microsecond; Genie's replay reads the nanosecond (docs/chakra.md, "Attributes").
  p.node.attr.push_back(Attr::int64("duration_ns", p.end_ns - p.start_ns));
}

const char* op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::kKernel:
      return "kernel";
    case OpKind::kCopy:
      return "copy";
    case OpKind::kMemset:
      return "memset";
    case OpKind::kCollective:
      return "collective";
    case OpKind::kP2p:
      return "p2p";
    default:
      return "other";
  }
}

class Builder {
 public:
  Builder(const RankInput& in, RankStats* stats) : in_(in), stats_(stats) {}

  std::vector<Node> build() {
    make_device_nodes();
    make_host_nodes();
    link_device_nodes();
    return number();
  }

 private:
  const RankInput& in_;
  RankStats* stats_;
  std::vector<Proto> protos_;
  std::vector<std::vector<size_t>> exits_;  // per op: its nodes (what a later op waits for)
  std::vector<size_t> host_dep_;            // per op: the host node that launched it (kNone: none)
  std::vector<bool> container_;             // per op: a graph launch whose parts follow it (no node of its own)
  std::multimap<int64_t, size_t> by_end_;   // ops by recorded end

  std::string label(const coord::OpRecord& o) const {
    return in_.labels && o.label < in_.labels->size() ? (*in_.labels)[o.label] : std::string("op");
  }

  size_t add(Proto p) {
    protos_.push_back(std::move(p));
    return protos_.size() - 1;
  }

  void make_device_nodes() {
    const size_t n = in_.ops.size();
    exits_.assign(n, {});
    host_dep_.assign(n, kNone);
    container_.assign(n, false);
    // A graph launch is followed on its stream by its parts (kRecordPart): the parts become nodes, the launch none.
    std::map<uint32_t, size_t> last_on_stream;
    for (size_t i = 0; i < n; ++i) {
      const coord::OpRecord& o = *in_.ops[i];
      auto it = last_on_stream.find(o.stream);
      if ((o.flags & kRecordPart) && it != last_on_stream.end() && !(in_.ops[it->second]->flags & kRecordPart))
        container_[it->second] = true;
      last_on_stream[o.stream] = i;
    }
    for (size_t i = 0; i < n; ++i) by_end_.emplace(in_.ops[i]->end_ns, i);
    for (size_t i = 0; i < n; ++i) {
      if (container_[i]) continue;
      const coord::OpRecord& o = *in_.ops[i];
      const OpComm& c = in_.comm[i];
      if (c.coll) {
        exits_[i].push_back(add(collective_node(o, *c.coll, *c.pg)));
      } else if (!c.messages.empty()) {
        for (const OpComm::Message& m : c.messages) exits_[i].push_back(add(message_node(o, *m.rec, m.send, *c.pg)));
      } else {
        exits_[i].push_back(add(compute_node(o, c.unmatched)));
      }
    }
    // A graph launch is done when its parts are.
    for (size_t i = 0; i < n; ++i) {
      if (!container_[i]) continue;
      for (size_t j = i + 1; j < n; ++j) {
        if (in_.ops[j]->stream != in_.ops[i]->stream) continue;
        if (!(in_.ops[j]->flags & kRecordPart)) break;
        exits_[i].insert(exits_[i].end(), exits_[j].begin(), exits_[j].end());
      }
    }
  }

  Proto compute_node(const coord::OpRecord& o, bool unmatched) {
    Proto p;
    p.node.name = label(o);
    p.node.type = NodeType::kComp;
    p.node.attr = {Attr::boolean("is_cpu_op", false), Attr::int64("stream", o.stream),
                   Attr::string("op_kind", op_kind_name(static_cast<OpKind>(o.kind)))};
    if (o.bytes > 0) p.node.attr.push_back(Attr::uint64("bytes", o.bytes));
    if (unmatched) p.node.attr.push_back(Attr::boolean("unmatched_communication", true));
    set_times(p, o.start_ns, o.end_ns);
    return p;
  }

  Proto collective_node(const coord::OpRecord& o, const CollectiveRecord& r, const Pg& pg) {
    Proto p;
    p.node.name = std::string("nccl:") + netsim::collective_name(r.collective);
    p.node.type = NodeType::kCommColl;
    auto& a = p.node.attr;
    a = {Attr::boolean("is_cpu_op", false),
         Attr::int64("comm_type", static_cast<int64_t>(chakra_comm_type(r.collective))),
         Attr::int64("comm_size", static_cast<int64_t>(chakra_comm_size(r))),
         Attr::string("pg_name", std::to_string(pg.id)),
         Attr::int64("stream", o.stream),
         Attr::string("collective", netsim::collective_name(r.collective)),
         Attr::int64("count", static_cast<int64_t>(r.count)),
         Attr::string("datatype", netsim::datatype_name(r.datatype)),
         Attr::string("redop", netsim::redop_name(r.redop)),
         Attr::int64("root", r.root),
         Attr::int64("comm_seq", static_cast<int64_t>(r.seq))};
    if (r.min_ctas > 0) a.push_back(Attr::int64("min_ctas", r.min_ctas));
    if (r.max_ctas > 0) a.push_back(Attr::int64("max_ctas", r.max_ctas));
    if (!r.algo.empty()) a.push_back(Attr::string("algo", r.algo));
    a.push_back(Attr::string("algorithm", netsim::algorithm_name(r.tuning.algorithm)));
    a.push_back(Attr::string("protocol", netsim::protocol_name(r.tuning.protocol)));
    a.push_back(Attr::int64("nchannels", r.tuning.nchannels));
    // Its start on this rank is when it reached the head of the stream; it ends when the call does.
    set_times(p, o.start_ns, r.end.count_ns());
    return p;
  }

  Proto message_node(const coord::OpRecord& o, const CollectiveRecord& m, bool send, const Pg& pg) {
    const int src = pg.ranks[static_cast<size_t>(m.src)], dst = pg.ranks[static_cast<size_t>(m.dst)];
    Proto p;
    p.node.name = send ? "nccl:send" : "nccl:recv";
    p.node.type = send ? NodeType::kCommSend : NodeType::kCommRecv;
    const uint64_t bytes = m.count * netsim::datatype_size(m.datatype);
    p.node.attr = {Attr::boolean("is_cpu_op", false),
                   Attr::int32("comm_src", src),
                   Attr::int32("comm_dst", dst),
                   Attr::int32("comm_tag", pg.id),
                   Attr::int64("comm_size", static_cast<int64_t>(bytes)),
                   Attr::string("pg_name", std::to_string(pg.id)),
                   Attr::int64("stream", o.stream),
                   Attr::int64("count", static_cast<int64_t>(m.count)),
                   Attr::string("datatype", netsim::datatype_name(m.datatype)),
                   Attr::int64("p2p_index", static_cast<int64_t>(m.seq))};
    set_times(p, o.start_ns, m.end.count_ns());
    return p;
  }

  // --- host threads ------------------------------------------------------------------------------------------------

  struct Thread {
    size_t prev = kNone;     // last host node
    int64_t t_prev = 0;      // host time at its end
    size_t pending = kNone;  // op a blocking wait since `prev` waited for
  };

  // A host node ending at host time `t`: the thread's CPU time since its previous node (or since the end of the op it
  // waited for). `force`: a new node even when no time passed (range markers).
  size_t host_node(Thread& th, uint32_t thread, int64_t t, bool force) {
    if (!force && th.prev != kNone && th.pending == kNone && t <= th.t_prev) return th.prev;
    int64_t base = th.t_prev;
    if (th.pending != kNone) base = std::max(base, in_.ops[th.pending]->end_ns);
    Proto p;
    p.node.name = "host";
    p.node.type = NodeType::kComp;
    p.node.attr = {Attr::boolean("is_cpu_op", true), Attr::int64("tid", thread)};
    set_times(p, std::min(base, t), t);
    if (th.prev != kNone) p.deps.push_back(th.prev);
    if (th.pending != kNone) p.deps.insert(p.deps.end(), exits_[th.pending].begin(), exits_[th.pending].end());
    th.prev = add(std::move(p));
    th.t_prev = std::max(th.t_prev, t);
    th.pending = kNone;
    return th.prev;
  }

  // The op a blocking wait of [b, a] waited for: the latest to end in (b, a] (the host resumes at its end plus the
  // API cost), or kNone.
  size_t awaited(int64_t b, int64_t a) const {
    auto it = by_end_.upper_bound(a);
    if (it == by_end_.begin()) return kNone;
    --it;
    return it->first > b ? it->second : kNone;
  }

  void make_host_nodes() {
    // Events per thread: range begins (0), submissions (1), waits (2), range ends (3), in time order.
    struct Event {
      int64_t t;
      int order;
      size_t index;  // op index, or host record index
    };
    std::map<uint32_t, std::vector<Event>> by_thread;
    for (size_t i = 0; i < in_.ops.size(); ++i) {
      const coord::OpRecord& o = *in_.ops[i];
      if ((o.flags & kRecordSubmitted) && !container_[i]) by_thread[o.thread].push_back({o.submit_ns, 1, i});
    }
    for (size_t h = 0; h < in_.host.size(); ++h) {
      const coord::OpRecord& r = *in_.host[h];
      const uint32_t thread = r.stream - Timeline::kHostStreamBase;
      if (static_cast<OpKind>(r.kind) == OpKind::kHostWait) {
        by_thread[thread].push_back({r.start_ns, 2, h});
      } else if (static_cast<OpKind>(r.kind) == OpKind::kRange) {
        by_thread[thread].push_back({r.start_ns, 0, h});
        by_thread[thread].push_back({r.end_ns, 3, h});
      }
    }
    std::map<std::string, int> range_count;
    std::vector<int> range_index(in_.host.size(), 0);
    for (auto& [thread, events] : by_thread) {
      std::stable_sort(events.begin(), events.end(),
                       [](const Event& x, const Event& y) { return std::tie(x.t, x.order) < std::tie(y.t, y.order); });
      Thread th;
      for (const Event& e : events) {
        if (e.order == 1) {
          host_dep_[e.index] = host_node(th, thread, e.t, false);
        } else if (e.order == 2) {
          const coord::OpRecord& w = *in_.host[e.index];
          host_node(th, thread, w.start_ns, false);
          th.pending = awaited(w.start_ns, w.end_ns);
          if (th.pending == kNone) ++stats_->unmatched_waits;
        } else {
          const coord::OpRecord& r = *in_.host[e.index];
          const std::string name = in_.labels && r.label < in_.labels->size() ? (*in_.labels)[r.label] : "range";
          if (e.order == 0) range_index[e.index] = range_count[name]++;
          const size_t m = host_node(th, thread, e.t, true);
          Node& node = protos_[m].node;
          node.name = name;
          node.attr.push_back(Attr::string("range", name));
          node.attr.push_back(Attr::string("range_event", e.order == 0 ? "begin" : "end"));
          node.attr.push_back(Attr::int64("range_index", range_index[e.index]));
        }
      }
    }
  }

  // --- device-node dependencies ----------------------------------------------------------------------------------

  void link_device_nodes() {
    const size_t n = in_.ops.size();
    std::map<uint32_t, size_t> prev_on_stream;  // last op with nodes on each stream
    std::map<uint32_t, size_t> launch;          // stream -> the graph launch whose parts are being met
    std::map<uint64_t, size_t> prev_of_comm;
    for (size_t i = 0; i < n; ++i) {
      const coord::OpRecord& o = *in_.ops[i];
      if (container_[i]) {
        launch[o.stream] = i;  // its parts follow: the first waits for what the launch waited for
        continue;
      }
      // A part starts as its launch did (the launch's submission and waits).
      const coord::OpRecord* how = &o;
      if (o.flags & kRecordPart) {
        auto l = launch.find(o.stream);
        if (l != launch.end()) how = in_.ops[l->second];
      } else {
        launch.erase(o.stream);
      }
      std::vector<size_t> deps;
      auto add_exits = [&](size_t j) { deps.insert(deps.end(), exits_[j].begin(), exits_[j].end()); };
      auto ps = prev_on_stream.find(o.stream);
      if (ps != prev_on_stream.end()) add_exits(ps->second);
      if (how->flags & kRecordSubmitted) {
        if (host_dep_[i] != kNone) deps.push_back(host_dep_[i]);
        if (how->deps_end_ns > 0) {
          // The op of another stream that ended when this one's dependencies did (an event it waited for).
          size_t best = kNone;
          auto [lo, hi] = by_end_.equal_range(how->deps_end_ns);
          for (auto it = lo; it != hi; ++it) {
            const size_t j = it->second;
            if (in_.ops[j]->stream == o.stream) continue;
            if (best == kNone || in_.ops[j]->start_ns > in_.ops[best]->start_ns) best = j;
          }
          if (best != kNone) add_exits(best);
        }
      }
      const OpKind kind = static_cast<OpKind>(o.kind);
      if ((kind == OpKind::kCollective || kind == OpKind::kP2p) && o.comm != 0) {
        // A communicator runs its calls one after the other, whatever streams they were issued on.
        auto pc = prev_of_comm.find(o.comm);
        if (pc != prev_of_comm.end() && in_.ops[pc->second]->stream != o.stream) add_exits(pc->second);
        prev_of_comm[o.comm] = i;
      }
      for (size_t node : exits_[i]) {
        Proto& p = protos_[node];
        for (size_t d : deps)
          if (d != node) p.deps.push_back(d);
      }
      prev_on_stream[o.stream] = i;
    }
  }

  // Ids from 1 in a topological order, earliest recorded start first.
  std::vector<Node> number() {
    const size_t n = protos_.size();
    std::vector<std::vector<size_t>> children(n);
    std::vector<size_t> indegree(n, 0);
    for (size_t i = 0; i < n; ++i) {
      auto& d = protos_[i].deps;
      std::sort(d.begin(), d.end());
      d.erase(std::unique(d.begin(), d.end()), d.end());
      for (size_t p : d) children[p].push_back(i);
      indegree[i] = d.size();
    }
    using Key = std::pair<int64_t, size_t>;
    std::priority_queue<Key, std::vector<Key>, std::greater<>> ready;
    for (size_t i = 0; i < n; ++i)
      if (indegree[i] == 0) ready.emplace(protos_[i].start_ns, i);
    std::vector<uint64_t> id(n, 0);
    std::vector<size_t> order;
    order.reserve(n);
    for (;;) {
      while (!ready.empty()) {
        const size_t i = ready.top().second;
        ready.pop();
        id[i] = order.size() + 1;
        order.push_back(i);
        for (size_t c : children[i])
          if (id[c] == 0 && --indegree[c] == 0) ready.emplace(protos_[c].start_ns, c);
      }
      if (order.size() == n) break;
      // A cycle, which only inferred dependencies between ops of equal times can make: the earliest node left goes
      // first and forgets its dependencies on nodes not yet ordered.
      size_t first = kNone;
      for (size_t i = 0; i < n; ++i)
        if (id[i] == 0 && (first == kNone || protos_[i].start_ns < protos_[first].start_ns)) first = i;
      auto& d = protos_[first].deps;
      d.erase(std::remove_if(d.begin(), d.end(), [&](size_t p) { return id[p] == 0; }), d.end());
      ++stats_->dropped_deps;
      indegree[first] = 0;
      ready.emplace(protos_[first].start_ns, first);
    }
    std::vector<Node> out;
    out.reserve(n);
    for (size_t i : order) {
      Node node = std::move(protos_[i].node);
      node.id = id[i];
      for (size_t d : protos_[i].deps) node.data_deps.push_back(id[d]);
      std::sort(node.data_deps.begin(), node.data_deps.end());
      out.push_back(std::move(node));
    }
    return out;
  }
};

}  // namespace

CommType chakra_comm_type(netsim::Collective c) {
  switch (c) {
    case netsim::Collective::kAllReduce:
      return CommType::kAllReduce;
    case netsim::Collective::kBroadcast:
      return CommType::kBroadcast;
    case netsim::Collective::kReduce:
      return CommType::kReduce;
    case netsim::Collective::kAllGather:
      return CommType::kAllGather;
    case netsim::Collective::kReduceScatter:
      return CommType::kReduceScatter;
    case netsim::Collective::kAllToAll:
      return CommType::kAllToAll;
    case netsim::Collective::kGather:
      return CommType::kGather;
    case netsim::Collective::kScatter:
      return CommType::kScatter;
    case netsim::Collective::kSendRecv:
      break;
  }
  return CommType::kAllReduce;
}

uint64_t chakra_comm_size(const CollectiveRecord& r) {
  const uint64_t elem = netsim::datatype_size(r.datatype);
  const auto n = static_cast<uint64_t>(std::max(1, r.nranks));
  switch (r.collective) {
    case netsim::Collective::kReduceScatter:
    case netsim::Collective::kAllToAll:
    case netsim::Collective::kScatter:
      return r.count * n * elem;  // the input holds every rank's share
    default:
      return r.count * elem;
  }
}

std::vector<Node> build_rank_nodes(const RankInput& in, RankStats* stats) { return Builder(in, stats).build(); }

}  // namespace genie::sched::chakra_detail
