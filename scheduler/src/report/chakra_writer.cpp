// SPDX-License-Identifier: Apache-2.0
// Chakra execution traces of a job: ranks and process groups from the coordinator's communicators, each rank's
// communication ops matched with the resolved calls, one file per rank (docs/chakra.md).
#include "genie/sched/chakra_writer.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "genie/common/config.hpp"
#include "genie/sched/timeline.hpp"
#include "report/chakra_rank.hpp"

namespace genie::sched {

using chakra_detail::OpComm;
using chakra_detail::Pg;
using chakra_detail::RankInput;
using netsim::chakra::Attr;
using netsim::chakra::GlobalMetadata;
using netsim::chakra::Node;
using netsim::chakra::NodeType;
using netsim::chakra::Trace;

namespace {

const config::Param<std::string> kChakraDir{
    "chakra_dir", "",
    "genie run: write one Chakra execution trace per rank into this directory (DIR/genie.<rank>.et, as --chakra DIR "
    "does); genie sim --workload DIR replays them (docs/chakra.md). Empty: none."};

/// Version of the attributes Genie writes (docs/chakra.md); bumped on any incompatible change.
constexpr int64_t kGenieChakraSchema = 1;
/// What Chakra's own generator writes as GlobalMetadata.version since its 1.0.0 release.
constexpr const char* kChakraVersion = "1.0.0";

using RankKey = std::pair<int, int>;  // (process, CUDA device)

bool is_device_op(const coord::OpRecord& o) {
  const auto k = static_cast<OpKind>(o.kind);
  return o.device >= 0 && o.stream < Timeline::kHostStreamBase && k != OpKind::kRange && k != OpKind::kHostWait;
}

struct Layout {
  std::map<RankKey, int> rank_of;
  std::vector<RankKey> key_of;  // per ET rank
  std::vector<Pg> pgs;
  std::map<uint64_t, size_t> pg_of;  // communicator key -> index in pgs
};

Layout layout(const JobRecord& job) {
  Layout l;
  std::set<RankKey> keys;
  for (size_t p = 0; p < job.op_records.size(); ++p)
    for (const auto& o : job.op_records[p])
      if (is_device_op(o)) keys.insert({static_cast<int>(p), o.device});
  const CommInfo* world = nullptr;
  for (const auto& [k, c] : job.comms) {
    if (c.joined != c.nranks) continue;
    for (int r = 0; r < c.nranks; ++r)
      keys.insert({c.process[static_cast<size_t>(r)], c.cuda_dev[static_cast<size_t>(r)]});
    if (!world || c.nranks > world->nranks) world = &c;
  }
  if (world && static_cast<size_t>(world->nranks) == keys.size()) {
    l.key_of.resize(keys.size());
    for (int r = 0; r < world->nranks; ++r) {
      const RankKey k{world->process[static_cast<size_t>(r)], world->cuda_dev[static_cast<size_t>(r)]};
      l.rank_of[k] = r;
      l.key_of[static_cast<size_t>(r)] = k;
    }
  } else {
    // No communicator spans every device: number them by process rank, then device.
    std::vector<RankKey> sorted(keys.begin(), keys.end());
    auto prank = [&](int p) {
      const auto& pi = job.processes[static_cast<size_t>(p)];
      return pi.process_rank >= 0 ? pi.process_rank : pi.index;
    };
    std::stable_sort(sorted.begin(), sorted.end(), [&](const RankKey& a, const RankKey& b) {
      return std::make_pair(prank(a.first), a.second) < std::make_pair(prank(b.first), b.second);
    });
    for (size_t r = 0; r < sorted.size(); ++r) l.rank_of[sorted[r]] = static_cast<int>(r);
    l.key_of = sorted;
  }
  // Process groups in order of first call (the order genie-report.json names communicators in), then the rest; the
  // first one spanning every rank in rank order is pg "0", the world (ASTRA-sim's default group).
  std::vector<uint64_t> order;
  std::set<uint64_t> seen;
  for (const auto& c : job.collectives)
    if (seen.insert(c.comm).second) order.push_back(c.comm);
  for (const auto& [k, c] : job.comms)
    if (seen.insert(k).second) order.push_back(k);
  bool have_world = false;
  int next_id = 1;
  for (uint64_t k : order) {
    auto it = job.comms.find(k);
    if (it == job.comms.end() || it->second.joined != it->second.nranks) continue;
    Pg pg;
    pg.key = k;
    bool identity = static_cast<size_t>(it->second.nranks) == l.key_of.size();
    for (int r = 0; r < it->second.nranks; ++r) {
      const int et =
          l.rank_of.at({it->second.process[static_cast<size_t>(r)], it->second.cuda_dev[static_cast<size_t>(r)]});
      pg.ranks.push_back(et);
      identity = identity && et == r;
    }
    pg.id = identity && !have_world ? 0 : next_id++;
    have_world = have_world || pg.id == 0;
    l.pg_of[k] = l.pgs.size();
    l.pgs.push_back(std::move(pg));
  }
  return l;
}

// The communication ops of one rank matched with the resolved calls: the k-th collective this rank ran on a
// communicator is the call of the k-th smallest seq; a point-to-point op carries the messages whose ready time on
// this rank's side falls within it.
void match_comm(const JobRecord& job, const Layout& l, int rank, RankInput* in, ChakraSummary* sum) {
  in->comm.assign(in->ops.size(), OpComm{});
  std::map<uint64_t, std::vector<size_t>> coll_ops, p2p_ops;
  for (size_t i = 0; i < in->ops.size(); ++i) {
    const coord::OpRecord& o = *in->ops[i];
    const auto k = static_cast<OpKind>(o.kind);
    if (k == OpKind::kCollective) coll_ops[o.comm].push_back(i);
    if (k == OpKind::kP2p) p2p_ops[o.comm].push_back(i);
  }
  auto by_start = [&](std::vector<size_t>& v) {
    std::stable_sort(v.begin(), v.end(),
                     [&](size_t a, size_t b) { return in->ops[a]->start_ns < in->ops[b]->start_ns; });
  };
  for (auto& [comm, ops] : coll_ops) {
    by_start(ops);
    auto pg = l.pg_of.find(comm);
    std::vector<const CollectiveRecord*> calls;
    if (pg != l.pg_of.end())
      for (const auto& c : job.collectives)
        if (!c.p2p && c.comm == comm) calls.push_back(&c);
    std::stable_sort(calls.begin(), calls.end(), [](auto* a, auto* b) { return a->seq < b->seq; });
    for (size_t k = 0; k < ops.size(); ++k) {
      OpComm& oc = in->comm[ops[k]];
      if (k < calls.size() && calls[k]->error.empty()) {
        oc.coll = calls[k];
        oc.pg = &l.pgs[pg->second];
        ++sum->collectives;
      } else {
        oc.unmatched = true;
        ++sum->unmatched;
      }
    }
  }
  for (auto& [comm, ops] : p2p_ops) {
    by_start(ops);
    auto pg = l.pg_of.find(comm);
    struct Side {
      int64_t ready;
      const CollectiveRecord* rec;
      bool send;
    };
    std::vector<Side> mine;
    if (pg != l.pg_of.end()) {
      const Pg& g = l.pgs[pg->second];
      for (const auto& c : job.collectives) {
        if (!c.p2p || c.comm != comm || !c.error.empty() || c.ready_ns.size() != 2) continue;
        if (g.ranks[static_cast<size_t>(c.src)] == rank) mine.push_back({c.ready_ns[0], &c, true});
        if (g.ranks[static_cast<size_t>(c.dst)] == rank) mine.push_back({c.ready_ns[1], &c, false});
      }
    }
    // An op ends with its last message: a message belongs to the first op (in stream order) that ends no earlier than
    // the message and starts no later than the message's ready time (an op may start as the previous one ends).
    std::stable_sort(mine.begin(), mine.end(), [](const Side& a, const Side& b) {
      return std::make_pair(a.ready, a.rec->end) < std::make_pair(b.ready, b.rec->end);
    });
    size_t k = 0;
    for (const Side& s : mine) {
      while (k < ops.size() && (in->ops[ops[k]]->end_ns < s.ready || in->ops[ops[k]]->end_ns < s.rec->end.count_ns()))
        ++k;
      if (k == ops.size()) break;
      const coord::OpRecord& o = *in->ops[ops[k]];
      if (s.ready < o.start_ns) continue;
      OpComm& oc = in->comm[ops[k]];
      oc.messages.push_back({s.rec, s.send});
      oc.pg = &l.pgs[pg->second];
      ++sum->messages;
    }
    for (size_t op : ops)
      if (in->comm[op].messages.empty()) {
        in->comm[op].unmatched = true;
        ++sum->unmatched;
      }
  }
}

std::string pg_json(const Layout& l) {
  nlohmann::json groups = nlohmann::json::array();
  for (const Pg& pg : l.pgs) {
    char key[24];
    std::snprintf(key, sizeof key, "%016llx", static_cast<unsigned long long>(pg.key));
    groups.push_back({{"pg_name", std::to_string(pg.id)},
                      {"pg_desc", std::string("nccl comm ") + key},
                      {"backend_config", "cuda:nccl"},
                      {"pg_size", pg.ranks.size()},
                      {"ranks", pg.ranks}});
  }
  return groups.dump();
}

GlobalMetadata metadata(const JobRecord& job, const ChakraJob& info, const Layout& l, int rank) {
  GlobalMetadata m;
  m.version = kChakraVersion;
  const RankKey key = l.key_of[static_cast<size_t>(rank)];
  const ProcessInfo& pi = job.processes[static_cast<size_t>(key.first)];
  int gpu = -1;
  for (const Pg& pg : l.pgs) {
    const CommInfo& c = job.comms.at(pg.key);
    for (size_t r = 0; r < pg.ranks.size(); ++r)
      if (pg.ranks[r] == rank && r < c.gpu.size() && c.gpu[r] >= 0) gpu = c.gpu[r];
  }
  auto& a = m.attr;
  a = {Attr::string("generator", "genie"),
       Attr::int64("genie_schema", kGenieChakraSchema),
       Attr::int64("rank", rank),
       Attr::int64("world_size", static_cast<int64_t>(l.key_of.size())),
       Attr::int64("gpu", gpu),
       Attr::int64("process", pi.process_rank >= 0 ? pi.process_rank : pi.index),
       Attr::int64("cuda_device", key.second),
       Attr::string("host_node", pi.node),
       Attr::string("topology", info.topology),
       Attr::int64("nodes", info.nodes),
       Attr::string("topology_fabric", info.fabric),
       Attr::string("device", info.device),
       Attr::string("engine", info.engine),
       Attr::string("process_groups", pg_json(l))};
  const netsim::NcclEnv& e = info.nccl_env;
  if (!e.algo.empty()) a.push_back(Attr::string("nccl_algo", e.algo));
  if (!e.proto.empty()) a.push_back(Attr::string("nccl_proto", e.proto));
  const std::pair<const char*, int64_t> ints[] = {{"nccl_min_nchannels", e.min_channels},
                                                  {"nccl_max_nchannels", e.max_channels},
                                                  {"nccl_buffsize", e.buffsize},
                                                  {"nccl_nvls_enable", e.nvls_enable},
                                                  {"nccl_collnet_enable", e.collnet_enable},
                                                  {"nccl_pat_enable", e.pat_enable}};
  for (const auto& [name, v] : ints)
    if (v != -1) a.push_back(Attr::int64(name, v));
  std::string cmd;
  for (const auto& w : info.command) cmd += (cmd.empty() ? "" : " ") + w;
  if (!cmd.empty()) a.push_back(Attr::string("command", cmd));
  if (job.dropped_op_records > 0) a.push_back(Attr::uint64("dropped_records", job.dropped_op_records));
  return m;
}

// Node 0: the process groups in the form PyTorch's execution trace gives them (its "## process_group:init ##"
// node), which ASTRA-sim reads from the inputs' values.
Node pg_node(const Layout& l) {
  Node n;
  n.id = 0;
  n.name = "## process_group:init ##";
  n.type = NodeType::kMetadata;
  n.inputs.present = true;
  n.inputs.values = "['" + pg_json(l) + "']";
  n.inputs.shapes = "[[]]";
  n.inputs.types = "['String']";
  n.attr = {Attr::boolean("is_cpu_op", true)};
  return n;
}

}  // namespace

std::string configured_chakra_dir() { return config::global().get(kChakraDir); }

Result<std::vector<Trace>> build_chakra_traces(const JobRecord& job, const ChakraJob& info, ChakraSummary* summary) {
  ChakraSummary local;
  ChakraSummary& sum = summary ? *summary : local;
  Layout l = layout(job);
  if (l.key_of.empty()) return invalid_argument("the job recorded no stream op: no Chakra trace to write");
  std::vector<Trace> traces;
  traces.reserve(l.key_of.size());
  std::map<int, int> first_device;  // process -> its lowest device with a rank
  for (const auto& [key, r] : l.rank_of) {
    auto [it, fresh] = first_device.try_emplace(key.first, key.second);
    if (!fresh) it->second = std::min(it->second, key.second);
  }
  for (size_t r = 0; r < l.key_of.size(); ++r) {
    const auto [p, d] = l.key_of[r];
    RankInput in;
    in.rank = static_cast<int>(r);
    if (static_cast<size_t>(p) < job.labels.size()) in.labels = &job.labels[static_cast<size_t>(p)];
    if (static_cast<size_t>(p) < job.op_records.size()) {
      for (const auto& o : job.op_records[static_cast<size_t>(p)]) {
        if (is_device_op(o) && o.device == d) {
          in.ops.push_back(&o);
        } else if (o.stream >= Timeline::kHostStreamBase && (o.device == d || (o.device < 0 && first_device[p] == d))) {
          const auto k = static_cast<OpKind>(o.kind);
          if (k == OpKind::kHostWait || k == OpKind::kRange) in.host.push_back(&o);
        }
      }
    }
    // Each stream's ops in stream order (the order its records came in).
    std::stable_sort(in.ops.begin(), in.ops.end(), [](auto* a, auto* b) { return a->stream < b->stream; });
    match_comm(job, l, in.rank, &in, &sum);
    chakra_detail::RankStats st;
    Trace t;
    t.metadata = metadata(job, info, l, in.rank);
    t.nodes.push_back(pg_node(l));
    for (Node& n : chakra_detail::build_rank_nodes(in, &st)) t.nodes.push_back(std::move(n));
    sum.unmatched_waits += st.unmatched_waits;
    sum.nodes += t.nodes.size();
    traces.push_back(std::move(t));
  }
  sum.ranks = static_cast<int>(traces.size());
  sum.dropped_records = job.dropped_op_records;
  return traces;
}

Result<ChakraSummary> write_chakra_traces(const std::string& dir, const std::string& prefix, const JobRecord& job,
                                          const ChakraJob& info) {
  ChakraSummary sum;
  GENIE_ASSIGN_OR_RETURN(std::vector<Trace> traces, build_chakra_traces(job, info, &sum));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status(Errc::kSystem, dir + ": " + ec.message());
  for (size_t r = 0; r < traces.size(); ++r) {
    const std::string path = dir + "/" + prefix + "." + std::to_string(r) + ".et";
    GENIE_TRY(netsim::chakra::write_trace(path, traces[r]));
    sum.files.push_back(path);
  }
  // ASTRA-sim's --comm-group-configuration: every group but the world's, by pg_name.
  Layout l = layout(job);
  nlohmann::json groups = nlohmann::json::object();
  for (const Pg& pg : l.pgs)
    if (pg.id != 0) groups[std::to_string(pg.id)] = pg.ranks;
  const std::string path = dir + "/" + prefix + ".comm_groups.json";
  std::ofstream out(path);
  out << groups.dump(1) << "\n";
  if (!out) return Status(Errc::kSystem, path + ": write failed");
  sum.files.push_back(path);
  return sum;
}

}  // namespace genie::sched
