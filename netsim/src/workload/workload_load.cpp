// SPDX-License-Identifier: Apache-2.0
// Reading a workload's Chakra traces into per-rank graphs and process groups, checked strictly: a bad file, node or
// field is an error that names it.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <unordered_map>

#include "genie/netsim/chakra_et.hpp"
#include "workload/workload_model.hpp"

namespace genie::netsim::workload {

using chakra::Attr;
using chakra::CommType;
using chakra::Node;
using chakra::NodeType;
using chakra::Trace;

namespace {

struct Files {
  std::string dir, prefix;
  std::vector<std::string> paths;  ///< per rank
};

Result<Files> find_files(const std::string& workload) {
  namespace fs = std::filesystem;
  Files f;
  std::error_code ec;
  if (fs::is_directory(workload, ec)) {
    f.dir = workload;
  } else {
    f.dir = fs::path(workload).parent_path().string();
    if (f.dir.empty()) f.dir = ".";
    f.prefix = fs::path(workload).filename().string();
    if (!fs::is_directory(f.dir, ec)) return Status(Errc::kSystem, workload + ": no such directory or DIR/PREFIX");
  }
  static const std::regex kName(R"((.+)\.(\d+)\.et)");
  std::map<std::string, std::map<int, std::string>> by_prefix;
  for (const auto& e : fs::directory_iterator(f.dir, ec)) {
    std::smatch mt;
    const std::string name = e.path().filename().string();
    if (!std::regex_match(name, mt, kName)) continue;
    if (mt[2].str().size() > 9) continue;
    by_prefix[mt[1].str()][std::stoi(mt[2].str())] = e.path().string();
  }
  if (ec) return Status(Errc::kSystem, f.dir + ": " + ec.message());
  if (f.prefix.empty()) {
    if (by_prefix.empty()) return invalid_argument(f.dir + ": no Chakra trace (<prefix>.<rank>.et) in it");
    if (by_prefix.size() > 1) {
      std::string list;
      for (const auto& [p, _] : by_prefix) list += (list.empty() ? "" : ", ") + p;
      return invalid_argument(f.dir + ": traces of several prefixes (" + list + "): name one as DIR/PREFIX");
    }
    f.prefix = by_prefix.begin()->first;
  }
  auto it = by_prefix.find(f.prefix);
  if (it == by_prefix.end()) return invalid_argument(f.dir + ": no trace " + f.prefix + ".<rank>.et");
  const int n = static_cast<int>(it->second.size());
  for (int r = 0; r < n; ++r) {
    auto p = it->second.find(r);
    if (p == it->second.end())
      return invalid_argument(f.dir + ": " + std::to_string(n) + " traces of prefix " + f.prefix + " but " + f.prefix +
                              "." + std::to_string(r) + ".et is missing");
    f.paths.push_back(p->second);
  }
  return f;
}

std::string where(const std::string& file, const Node& n, size_t pos) {
  return file + ": node #" + std::to_string(pos) + " (id " + std::to_string(n.id) + ")";
}

// An integer attribute (any integer kind), or `def` when absent; an error when present with another kind.
Result<int64_t> int_attr(const Node& n, const char* name, int64_t def, const std::string& at) {
  const Attr* a = n.find(name);
  if (!a) return def;
  auto v = a->as_int();
  if (!v)
    return invalid_argument(at + ": field '" + name + "' is " + chakra::attr_kind_name(a->kind) +
                            ", expected an integer");
  return *v;
}

Result<std::string> string_attr(const Node& n, const char* name, const std::string& at) {
  const Attr* a = n.find(name);
  if (!a) return std::string();
  if (a->is_string()) return a->s;
  if (auto v = a->as_int()) return std::to_string(*v);  // pg_name written as an integer
  return invalid_argument(at + ": field '" + name + "' is " + chakra::attr_kind_name(a->kind) + ", expected a string");
}

Result<Collective> from_comm_type(int64_t t, const std::string& at) {
  switch (static_cast<CommType>(t)) {
    case CommType::kAllReduce:
      return Collective::kAllReduce;
    case CommType::kReduce:
      return Collective::kReduce;
    case CommType::kAllGather:
      return Collective::kAllGather;
    case CommType::kGather:
      return Collective::kGather;
    case CommType::kScatter:
      return Collective::kScatter;
    case CommType::kBroadcast:
      return Collective::kBroadcast;
    case CommType::kAllToAll:
      return Collective::kAllToAll;
    case CommType::kReduceScatter:
    case CommType::kReduceScatterBlock:
      return Collective::kReduceScatter;
    case CommType::kBarrier:
      return Collective::kAllReduce;  // NCCL has no barrier: a one-element all-reduce
  }
  return invalid_argument(at + ": field 'comm_type': " + std::to_string(t) + " is not a CollectiveCommType");
}

// Groups named in JSON: Genie's and PyTorch's [{"pg_name": "1", "ranks": [..]}, ...] or ASTRA-sim's {"1": [..]}.
Status add_groups(const std::string& text, const std::string& origin, int nranks, std::vector<Group>* out) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    return invalid_argument(origin + ": not JSON: " + e.what());
  }
  auto add = [&](const std::string& name, const nlohmann::json& ranks) -> Status {
    if (!ranks.is_array()) return invalid_argument(origin + ": group '" + name + "': ranks is not a list");
    for (const Group& g : *out)
      if (g.name == name) return Status::ok();  // an earlier source named it
    Group g;
    g.name = name;
    for (const auto& r : ranks) {
      if (!r.is_number_integer() || r.get<int64_t>() < 0 || r.get<int64_t>() >= nranks)
        return invalid_argument(origin + ": group '" + name + "' names rank " + r.dump() + " of a job of " +
                                std::to_string(nranks));
      g.ranks.push_back(r.get<int>());
    }
    if (g.ranks.empty())  // PyTorch writes the default group's ranks as []: every rank
      for (int r = 0; r < nranks; ++r) g.ranks.push_back(r);
    out->push_back(std::move(g));
    return Status::ok();
  };
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) GENIE_TRY(add(it.key(), it.value()));
    return Status::ok();
  }
  if (!j.is_array()) return invalid_argument(origin + ": expected a list of groups");
  for (const auto& g : j) {
    if (!g.is_object() || !g.contains("pg_name") || !g.contains("ranks"))
      return invalid_argument(origin + ": a group without pg_name and ranks");
    const auto& pn = g["pg_name"];
    GENIE_TRY(add(pn.is_string() ? pn.get<std::string>() : pn.dump(), g["ranks"]));
  }
  return Status::ok();
}

Status read_groups(const Files& f, const std::vector<Trace>& traces, Model* m) {
  const int n = static_cast<int>(traces.size());
  for (size_t r = 0; r < traces.size(); ++r) {
    if (const Attr* a = traces[r].metadata.find("process_groups"); a && a->is_string())
      GENIE_TRY(add_groups(a->s, f.paths[r] + ": GlobalMetadata attribute 'process_groups'", n, &m->recorded_pgs));
    for (size_t k = 0; k < traces[r].nodes.size(); ++k) {
      const Node& node = traces[r].nodes[k];
      if (node.type != NodeType::kMetadata || node.name.find("process_group:init") == std::string::npos) continue;
      std::string v = node.inputs.values;  // PyTorch's form: ['<json>']
      if (v.size() >= 4 && v.compare(0, 2, "['") == 0 && v.compare(v.size() - 2, 2, "']") == 0)
        v = v.substr(2, v.size() - 4);
      GENIE_TRY(add_groups(v, where(f.paths[r], node, k) + ": field 'inputs.values'", n, &m->recorded_pgs));
    }
  }
  const std::string cg = f.dir + "/" + f.prefix + ".comm_groups.json";
  std::ifstream in(cg);
  if (in) {
    std::stringstream ss;
    ss << in.rdbuf();
    GENIE_TRY(add_groups(ss.str(), cg, n, &m->recorded_pgs));
  }
  return Status::ok();
}

Status read_slot(const Node& node, const std::string& at, int rank, const std::vector<Group>& pgs, CommSlot* s) {
  GENIE_ASSIGN_OR_RETURN(std::string pg, string_attr(node, "pg_name", at));
  s->pg = -1;
  if (!pg.empty()) {
    for (size_t g = 0; g < pgs.size(); ++g)
      if (pgs[g].name == pg) s->pg = static_cast<int>(g);
    if (s->pg < 0 && pg != "0")
      return invalid_argument(at + ": field 'pg_name': process group '" + pg +
                              "' is not defined (GlobalMetadata "
                              "process_groups, a process_group:init node or <prefix>.comm_groups.json)");
  }
  GENIE_ASSIGN_OR_RETURN(int64_t size, int_attr(node, "comm_size", -1, at));
  GENIE_ASSIGN_OR_RETURN(std::string dt, string_attr(node, "datatype", at));
  GENIE_ASSIGN_OR_RETURN(int64_t count, int_attr(node, "count", -1, at));
  if (!dt.empty()) {
    auto d = parse_datatype(dt);
    if (!d.is_ok()) return invalid_argument(at + ": field 'datatype': " + d.status().message());
    s->spec.datatype = d.value();
  }
  if (count < 0 && size < 0) return invalid_argument(at + ": no field 'comm_size' (nor 'count'): the size is unknown");
  if (count < 0 && dt.empty()) s->spec.datatype = size % 4 == 0 ? DataType::kFloat32 : DataType::kUint8;
  const auto elem = static_cast<int64_t>(datatype_size(s->spec.datatype));
  if (node.type == NodeType::kCommColl) {
    s->kind = Kind::kColl;
    GENIE_ASSIGN_OR_RETURN(std::string name, string_attr(node, "collective", at));
    if (!name.empty()) {
      auto c = parse_collective(name);
      if (!c.is_ok()) return invalid_argument(at + ": field 'collective': " + c.status().message());
      s->spec.collective = c.value();
    } else {
      GENIE_ASSIGN_OR_RETURN(int64_t t, int_attr(node, "comm_type", -1, at));
      if (t < 0) return invalid_argument(at + ": COMM_COLL_NODE without field 'comm_type'");
      GENIE_ASSIGN_OR_RETURN(s->spec.collective, from_comm_type(t, at));
      if (static_cast<CommType>(t) == CommType::kBarrier) size = 4;
    }
    // comm_size is the input's bytes (Chakra's PyTorch converter); the count is what NCCL is called with, which for
    // reduce_scatter, all-to-all and scatter is the input divided among the group (set when the group is known).
    s->spec.count = count >= 0 ? static_cast<uint64_t>(count) : static_cast<uint64_t>(size / elem);
    s->bytes = count < 0 ? static_cast<uint64_t>(size) : 0;  // 0: the count is NCCL's already
    GENIE_ASSIGN_OR_RETURN(std::string redop, string_attr(node, "redop", at));
    if (!redop.empty()) {
      auto o = parse_redop(redop);
      if (!o.is_ok()) return invalid_argument(at + ": field 'redop': " + o.status().message());
      s->spec.redop = o.value();
    }
    GENIE_ASSIGN_OR_RETURN(int64_t root, int_attr(node, "root", 0, at));
    s->spec.root = static_cast<int>(root);
    GENIE_ASSIGN_OR_RETURN(int64_t lo, int_attr(node, "min_ctas", 0, at));
    GENIE_ASSIGN_OR_RETURN(int64_t hi, int_attr(node, "max_ctas", 0, at));
    s->min_ctas = static_cast<int>(lo);
    s->max_ctas = static_cast<int>(hi);
    GENIE_ASSIGN_OR_RETURN(s->algo, string_attr(node, "algo", at));
    return Status::ok();
  }
  const bool send = node.type == NodeType::kCommSend;
  s->kind = send ? Kind::kSend : Kind::kRecv;
  GENIE_ASSIGN_OR_RETURN(int64_t src, int_attr(node, "comm_src", -1, at));
  GENIE_ASSIGN_OR_RETURN(int64_t dst, int_attr(node, "comm_dst", -1, at));
  if ((send ? dst : src) < 0)
    return invalid_argument(at + ": field '" + (send ? "comm_dst" : "comm_src") + "' is missing");
  if ((send ? src : dst) >= 0 && (send ? src : dst) != rank)
    return invalid_argument(at + ": field '" + (send ? "comm_src" : "comm_dst") + "' is " +
                            std::to_string(send ? src : dst) + ", not this trace's rank " + std::to_string(rank));
  s->peer = static_cast<int>(send ? dst : src);
  s->spec.collective = Collective::kSendRecv;
  s->spec.count = count >= 0 ? static_cast<uint64_t>(count) : static_cast<uint64_t>(size / elem);
  s->bytes = s->spec.count * static_cast<uint64_t>(elem);
  return Status::ok();
}

Result<std::shared_ptr<Graph>> build_graph(const std::string& file, const Trace& t, int rank, int nranks,
                                           const std::vector<Group>& pgs, uint64_t* ctrl_deps, uint64_t* cpu_comm,
                                           uint64_t* self_deps) {
  auto g = std::make_shared<Graph>();
  g->file = file;
  if (const Attr* a = t.metadata.find("gpu")) g->gpu = static_cast<int>(a->as_int().value_or(-1));
  const size_t n = t.nodes.size();
  std::unordered_map<uint64_t, uint32_t> index;
  index.reserve(n);
  for (size_t k = 0; k < n; ++k) {
    auto [it, fresh] = index.emplace(t.nodes[k].id, static_cast<uint32_t>(k));
    if (!fresh)
      return invalid_argument(where(file, t.nodes[k], k) + ": field 'id': node #" + std::to_string(it->second) +
                              " has the same id");
  }
  g->nodes.resize(n);
  std::vector<std::vector<uint32_t>> kids(n);
  std::map<std::string, int> range_ids;
  std::vector<std::pair<uint64_t, uint32_t>> comm_nodes;  // (id, node)
  for (size_t k = 0; k < n; ++k) {
    const Node& node = t.nodes[k];
    const std::string at = where(file, node, k);
    GNode& gn = g->nodes[k];
    gn.id = node.id;
    GENIE_ASSIGN_OR_RETURN(int64_t dur, int_attr(node, "duration_ns", -1, at));
    if (dur < -1) return invalid_argument(at + ": field 'duration_ns' is negative");
    gn.dur_ns = dur >= 0 ? dur : static_cast<int64_t>(node.duration_micros) * 1000;
    if (node.type == NodeType::kMetadata || node.type == NodeType::kInvalid) gn.dur_ns = 0;
    // Execution order is data_deps, as Chakra's feeder resolves it; ctrl_deps are, in traces converted from PyTorch,
    // the parent in the call tree (following them there makes cycles): not dependencies.
    std::set<uint64_t> deps(node.data_deps.begin(), node.data_deps.end());
    *ctrl_deps += node.ctrl_deps.size();
    for (uint64_t d : deps) {
      auto it = index.find(d);
      if (it == index.end())
        return invalid_argument(at + ": field 'data_deps': node " + std::to_string(d) + " is not in the trace");
      if (it->second == k) {  // seen in Chakra's own sample traces; its feeder never issues such a node
        ++*self_deps;
        continue;
      }
      kids[it->second].push_back(static_cast<uint32_t>(k));
      ++gn.indegree;
    }
    const Attr* cpu = node.find("is_cpu_op");
    const bool on_cpu = cpu && cpu->as_int().value_or(0) != 0;
    gn.cpu = on_cpu;
    if (on_cpu &&
        (node.type == NodeType::kCommColl || node.type == NodeType::kCommSend || node.type == NodeType::kCommRecv))
      ++*cpu_comm;  // the host side of a call (PyTorch's c10d op): a delay; its GPU node carries the communication
    else if (node.type == NodeType::kCommColl || node.type == NodeType::kCommSend || node.type == NodeType::kCommRecv) {
      CommSlot s;
      GENIE_TRY(read_slot(node, at, rank, pgs, &s));
      if (s.peer >= nranks)
        return invalid_argument(at + ": peer rank " + std::to_string(s.peer) + " of a job of " +
                                std::to_string(nranks));
      gn.kind = s.kind;
      comm_nodes.emplace_back(node.id, static_cast<uint32_t>(k));
      g->slots.push_back(std::move(s));
    }
    GENIE_ASSIGN_OR_RETURN(std::string range, string_attr(node, "range", at));
    if (!range.empty()) {
      auto [it, fresh] = range_ids.try_emplace(range, static_cast<int>(g->range_names.size()));
      if (fresh) g->range_names.push_back(range);
      gn.range = it->second;
      GENIE_ASSIGN_OR_RETURN(std::string ev, string_attr(node, "range_event", at));
      gn.range_begin = ev == "begin";
      GENIE_ASSIGN_OR_RETURN(int64_t ri, int_attr(node, "range_index", 0, at));
      gn.range_index = static_cast<int32_t>(ri);
    }
  }
  // Communication nodes in node-id order: the order calls are matched in across ranks.
  std::vector<size_t> order(comm_nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return comm_nodes[a].first < comm_nodes[b].first; });
  std::vector<CommSlot> slots;
  for (size_t i : order) {
    g->nodes[comm_nodes[i].second].slot = static_cast<int32_t>(slots.size());
    g->slot_node.push_back(comm_nodes[i].second);
    slots.push_back(std::move(g->slots[i]));
  }
  g->slots = std::move(slots);
  for (size_t k = 0; k < n; ++k) {
    g->nodes[k].child_begin = static_cast<uint32_t>(g->children.size());
    g->children.insert(g->children.end(), kids[k].begin(), kids[k].end());
    g->nodes[k].child_end = static_cast<uint32_t>(g->children.size());
  }
  return g;
}

std::string str_meta(const Trace& t, const char* name) {
  const Attr* a = t.metadata.find(name);
  return a && a->is_string() ? a->s : std::string();
}
int64_t int_meta(const Trace& t, const char* name, int64_t def) {
  const Attr* a = t.metadata.find(name);
  return a && a->as_int() ? *a->as_int() : def;
}

}  // namespace

Status load_traces(const WorkloadOptions& opts, Model* m) {
  GENIE_ASSIGN_OR_RETURN(Files f, find_files(opts.workload));
  std::vector<Trace> traces;
  traces.reserve(f.paths.size());
  for (const std::string& p : f.paths) {
    GENIE_ASSIGN_OR_RETURN(Trace t, chakra::read_trace(p));
    traces.push_back(std::move(t));
  }
  GENIE_TRY(read_groups(f, traces, m));
  const int n = static_cast<int>(traces.size());
  uint64_t ctrl_deps = 0, cpu_comm = 0, self_deps = 0;
  for (int r = 0; r < n; ++r) {
    GENIE_ASSIGN_OR_RETURN(auto g, build_graph(f.paths[static_cast<size_t>(r)], traces[static_cast<size_t>(r)], r, n,
                                               m->recorded_pgs, &ctrl_deps, &cpu_comm, &self_deps));
    m->recorded.push_back(std::move(g));
  }
  if (ctrl_deps > 0)
    m->notes.push_back(std::to_string(ctrl_deps) +
                       " ctrl_deps (call-tree parents) are not dependencies: the order is "
                       "data_deps, as Chakra's feeder reads it");
  if (self_deps > 0)
    m->notes.push_back(std::to_string(self_deps) + " nodes that depend on themselves: that dependency left out");
  if (cpu_comm > 0)
    m->notes.push_back(std::to_string(cpu_comm) +
                       " communication nodes marked is_cpu_op (the host side of a call) "
                       "replayed as delays");
  const Trace& t0 = traces.front();
  m->info.topology = str_meta(t0, "topology");
  m->info.fabric = str_meta(t0, "topology_fabric");
  m->info.engine = str_meta(t0, "engine");
  m->info.nodes = static_cast<int>(int_meta(t0, "nodes", 0));
  NcclEnv& e = m->info.env;
  e.algo = str_meta(t0, "nccl_algo");
  e.proto = str_meta(t0, "nccl_proto");
  e.min_channels = static_cast<int>(int_meta(t0, "nccl_min_nchannels", -1));
  e.max_channels = static_cast<int>(int_meta(t0, "nccl_max_nchannels", -1));
  e.buffsize = int_meta(t0, "nccl_buffsize", -1);
  e.nvls_enable = static_cast<int>(int_meta(t0, "nccl_nvls_enable", -1));
  e.collnet_enable = static_cast<int>(int_meta(t0, "nccl_collnet_enable", -1));
  e.pat_enable = static_cast<int>(int_meta(t0, "nccl_pat_enable", -1));
  return Status::ok();
}

}  // namespace genie::netsim::workload
