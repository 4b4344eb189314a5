// SPDX-License-Identifier: Apache-2.0
// genie-report.json, trace.json and the exit summary.
#include <cxxabi.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

#include "genie/sched/report.hpp"
#include "genie/sched/timeline.hpp"
#include "report/report_model.hpp"

namespace genie::sched {
namespace {

using nlohmann::json;
using report::Model;

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof(b), "%#llx", static_cast<unsigned long long>(v));
  return b;
}

double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

// Long jobs have up to max_collective_entries calls and max_trace_events trace events. As a document tree they
// cost about 2 KB each (a 10^5-call job's report took 4.3 GB), so those arrays are written as text, one element
// at a time, exactly as dump() would have laid them out.
constexpr const char* kCollectivesSlot = "@genie-collectives@";

// Names come from the program (kernel names, NVTX ranges, communicator names): bytes that are not UTF-8 are
// written as U+FFFD instead of failing the whole report (nlohmann's default throws type_error.316).
std::string dump(const json& j, int indent = -1) { return j.dump(indent, ' ', false, json::error_handler_t::replace); }

// Appends `e` as an element of a JSON array nested `depth` levels deep in a document dumped with indent 1.
void append_element(std::string* out, const json& e, int depth) {
  const std::string pad(static_cast<size_t>(depth), ' ');
  out->append(out->empty() ? "" : ",\n").append(pad);
  const std::string t = dump(e, 1);
  for (char c : t) {
    out->push_back(c);
    if (c == '\n') out->append(pad);
  }
}

std::string demangle(const std::string& name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !d) return name;
  std::string out(d);
  std::free(d);
  return out;
}

const char* kind_name(OpKind k) {
  switch (k) {
    case OpKind::kKernel: return "kernel";
    case OpKind::kCopy: return "copy";
    case OpKind::kMemset: return "memset";
    case OpKind::kCollective: return "collective";
    case OpKind::kP2p: return "p2p";
    case OpKind::kHostWait: return "wait";
    case OpKind::kOther: return "other";
    case OpKind::kRange: return "range";
  }
  return "other";
}

// Writes the concatenation of `parts` to `path` through a temporary file renamed into place (the parts of a long
// job's report are hundreds of MiB each: they are not joined in memory first).
Status write_file(const std::filesystem::path& path, std::initializer_list<std::string_view> parts) {
  const auto tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return system_error("cannot write " + tmp + ": " + std::strerror(errno));
    for (std::string_view text : parts) out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) {
      const Status failed = system_error("cannot write " + tmp + " (disk full?): " + std::strerror(errno));
      out.close();
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);  // a half-written file is no report; free the space it holds
      return failed;
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    return system_error("cannot rename " + tmp + " to " + path.string() + ": " + ec.message());
  }
  return Status::ok();
}

// The real fabric's records (docs/fabric.md): one JSON object per line, one file per rank. Malformed lines
// are skipped and counted (the job's own files; a broken line must not cost the whole report).
json fabric_section(const std::string& dir, std::map<std::string, std::string>* comm_names) {
  std::vector<FabricCallRecord> records;
  uint64_t bad = 0;
  std::error_code ec;
  if (dir.empty() || !std::filesystem::is_directory(dir, ec)) return nullptr;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("fabric-rank", 0) == 0 && n.size() > 6 && n.substr(n.size() - 6) == ".jsonl") files.push_back(e.path());
  }
  if (files.empty()) return nullptr;
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      auto r = parse_fabric_record(line);
      if (!r.is_ok()) {
        ++bad;
        continue;
      }
      if (!comm_names->count(r.value().comm)) (*comm_names)[r.value().comm] = "f" + std::to_string(comm_names->size());
      records.push_back(std::move(r.value()));
    }
  }
  std::stable_sort(records.begin(), records.end(), [&](const FabricCallRecord& a, const FabricCallRecord& b) {
    return std::tie(comm_names->at(a.comm), a.seq) < std::tie(comm_names->at(b.comm), b.seq);
  });
  std::vector<json> calls;
  for (const FabricCallRecord& r : records) {
    json c = {{"comm", (*comm_names)[r.comm]},
              {"seq", r.seq},
              {"rank", r.rank},
              {"op", r.op.empty() ? std::string("?") : r.op},
              {"bytes", r.bytes},
              {"datatype", r.datatype},
              {"algorithm", r.algorithm},
              {"protocol", r.protocol},
              {"channels", r.channels},
              {"provider", r.provider},
              {"real_us", r.real_us},
              {"sim_us", r.sim_us ? json(*r.sim_us) : json(nullptr)}};
    if (r.sim_us && r.real_us > 0) c["sim_over_real"] = round3(*r.sim_us / r.real_us);
    calls.push_back(std::move(c));
  }
  // Per (op, bytes): a call's time is its slowest rank's; medians over calls.
  std::map<std::pair<std::string, uint64_t>, std::map<std::pair<std::string, uint64_t>, std::pair<double, double>>> by;
  for (const FabricCallRecord& r : records) {
    auto& v = by[{r.op.empty() ? std::string("?") : r.op, r.bytes}][{r.comm, r.seq}];
    v.first = std::max(v.first, r.real_us);
    if (r.sim_us) v.second = std::max(v.second, *r.sim_us);
  }
  auto median = [](std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  json summary = json::array();
  for (const auto& [k, m] : by) {
    std::vector<double> real, sim;
    for (const auto& [id, v] : m) {
      real.push_back(v.first);
      if (v.second > 0) sim.push_back(v.second);
    }
    const double mr = median(real), ms = median(sim);
    summary.push_back({{"op", k.first}, {"bytes", k.second}, {"calls", m.size()}, {"median_real_us", round3(mr)},
                       {"median_sim_us", sim.empty() ? json(nullptr) : json(round3(ms))},
                       {"sim_over_real", sim.empty() || mr <= 0 ? json(nullptr) : json(round3(ms / mr))}});
  }
  return {{"calls", calls}, {"summary", summary}, {"malformed_lines", bad}};
}

// The report as a document, except for its "collectives" array: that is written into *collectives (the text
// of the array's elements) and the document holds kCollectivesSlot in its place.
json report_json(const ReportInput& in, const Model& m, std::string* collectives) {
  const JobRecord& job = *in.job;
  json j;
  j["schema"] = "genie-report";
  j["version"] = kReportSchemaVersion;
  json ranks_exit = json::array();
  for (const auto& r : in.result.ranks)
    ranks_exit.push_back({{"rank", r.rank}, {"exit_code", r.exit_code}, {"signal", r.signal}});
  j["job"] = {{"command", in.command},
              {"nranks", in.nranks},
              {"nodes", in.nodes},
              {"gpus_per_node", in.gpus_per_node},
              {"device", in.device},
              {"topology", in.topology_name},
              {"engine", in.engine},
              {"clock", in.clock},
              {"exit_code", in.result.exit_code},
              {"first_failed_rank", in.result.first_failed_rank},
              {"wall_seconds", round3(in.wall_seconds)},
              {"virtual_span_us", round3(m.span_us)},
              {"ranks", ranks_exit}};
  j["coordinator"] = {{"processes", job.processes.size()},
                      {"relaxed_steps", job.relaxed_steps},
                      {"asleep_steps", job.asleep_steps},
                      {"bounds_sent", job.bounds_sent},
                      {"late_arrivals", job.late_arrivals},
                      {"max_lateness_us", round3(job.max_lateness.to_us())},
                      {"protocol_errors", job.protocol_errors},
                      {"dropped_op_records", job.dropped_op_records}};
  json comms = json::array();
  for (const auto& [key, name] : m.comm_names) {
    auto it = job.comms.find(key);
    if (it == job.comms.end()) continue;
    const CommInfo& c = it->second;
    json members = json::array();
    for (int r = 0; r < c.nranks; ++r) {
      auto rk = m.rank_of.find({c.process[static_cast<size_t>(r)], c.cuda_dev[static_cast<size_t>(r)]});
      members.push_back(rk != m.rank_of.end() ? rk->second : -1);
    }
    json e = {{"id", name}, {"key", hex(key)}, {"nranks", c.nranks}, {"ranks", members}, {"gpus", c.gpu}};
    auto parent = m.comm_names.find(c.parent);
    e["parent"] = c.parent && parent != m.comm_names.end() ? json(parent->second) : json(nullptr);
    comms.push_back(e);
  }
  std::sort(comms.begin(), comms.end(), [](const json& a, const json& b) {
    return std::stoi(a["id"].get<std::string>().substr(1)) < std::stoi(b["id"].get<std::string>().substr(1));
  });
  j["communicators"] = comms;

  // Every call of every rank: one entry per rank of each resolved call, in (start, comm, seq) order.
  std::vector<const CollectiveRecord*> calls;
  for (const auto& c : job.collectives) calls.push_back(&c);
  std::stable_sort(calls.begin(), calls.end(), [&](const CollectiveRecord* a, const CollectiveRecord* b) {
    return std::tie(a->start, m.comm_names.at(a->comm), a->seq, a->src, a->dst) <
           std::tie(b->start, m.comm_names.at(b->comm), b->seq, b->src, b->dst);
  });
  std::string& entries = *collectives;
  entries.clear();
  size_t n_entries = 0;
  bool truncated = false;
  for (const CollectiveRecord* c : calls) {
    const CommInfo& ci = job.comms.at(c->comm);
    const double t = (c->end - c->start).to_us();
    const double algbw = t > 0 ? c->bytes / (t * 1e3) : 0;
    const double busbw = algbw * report::busbw_factor(c->collective, c->nranks);
    std::vector<int> comm_ranks;
    if (c->p2p)
      comm_ranks = {c->src, c->dst};
    else
      for (int r = 0; r < ci.nranks; ++r) comm_ranks.push_back(r);
    for (size_t i = 0; i < comm_ranks.size(); ++i) {
      if (n_entries >= in.max_collective_entries) {
        truncated = true;
        break;
      }
      const int cr = comm_ranks[i];
      auto rk = m.rank_of.find({ci.process[static_cast<size_t>(cr)], ci.cuda_dev[static_cast<size_t>(cr)]});
      json e = {{"rank", rk != m.rank_of.end() ? rk->second : -1},
                {"comm_rank", cr},
                {"comm", m.comm_names.at(c->comm)},
                {"seq", c->seq},
                {"op", netsim::collective_api_name(c->collective)},
                {"count", c->count},
                {"bytes", c->bytes},
                {"datatype", netsim::datatype_name(c->datatype)},
                {"ready_us", round3(c->ready_ns[i] / 1e3)},
                {"start_us", round3(c->start.to_us())},
                {"end_us", round3(c->end.to_us())},
                {"time_us", round3(t)},
                {"algbw_gbps", round3(algbw)},
                {"busbw_gbps", round3(busbw)}};
      if (c->p2p) {
        e["peer"] = i == 0 ? c->dst : c->src;
        e["direction"] = i == 0 ? "send" : "recv";
      } else {
        e["redop"] = netsim::collective_reduces(c->collective) ? netsim::redop_name(c->redop) : "none";
        e["root"] = c->collective == netsim::Collective::kBroadcast || c->collective == netsim::Collective::kReduce ||
                            c->collective == netsim::Collective::kGather ||
                            c->collective == netsim::Collective::kScatter
                        ? c->root
                        : -1;
        e["algorithm"] = netsim::algorithm_name(c->tuning.algorithm);
        e["protocol"] = netsim::protocol_name(c->tuning.protocol);
        e["channels"] = c->tuning.nchannels;
      }
      if (c->clamped_by > SimTime::zero()) e["late_us"] = round3(c->clamped_by.to_us());
      if (!c->error.empty()) e["error"] = c->error;
      append_element(&entries, e, 2);
      ++n_entries;
    }
  }
  j["collectives"] = kCollectivesSlot;
  j["collectives_truncated"] = truncated || !job.collectives_beyond.empty();

  json ranks = json::array();
  for (const auto& r : m.ranks) {
    json tl = json::array();
    for (const auto& s : r.compute) tl.push_back({round3(s.start_us), round3(s.end_us), "compute"});
    for (const auto& s : r.communication) tl.push_back({round3(s.start_us), round3(s.end_us), "communication"});
    ranks.push_back({{"rank", r.rank},
                     {"pid", r.pid},
                     {"node", r.node},
                     {"device", r.device},
                     {"begin_us", round3(r.begin_us)},
                     {"end_us", round3(r.end_us)},
                     {"compute_us", round3(r.compute_us)},
                     {"copy_us", round3(r.copy_us)},
                     {"communication_us", round3(r.communication_us)},
                     {"exposed_communication_us", round3(r.exposed_us)},
                     {"idle_us", round3(r.idle_us)},
                     {"kernels", r.kernels},
                     {"copies", r.copies},
                     {"calls", r.calls},
                     {"timeline", tl}});
  }
  j["ranks"] = ranks;
  json ranges = json::array();
  constexpr size_t kMaxRanges = 100000;
  for (size_t i = 0; i < m.ranges.size() && i < kMaxRanges; ++i) {
    const auto& r = m.ranges[i];
    ranges.push_back({{"rank", r.rank},
                      {"name", r.name},
                      {"index", r.index},
                      {"thread", r.thread},
                      {"start_us", round3(r.start_us)},
                      {"end_us", round3(r.end_us)},
                      {"time_us", round3(r.end_us - r.start_us)},
                      {"compute_us", round3(r.compute_us)},
                      {"copy_us", round3(r.copy_us)},
                      {"communication_us", round3(r.communication_us)},
                      {"exposed_communication_us", round3(r.exposed_us)},
                      {"idle_us", round3(r.idle_us)},
                      {"kernels", r.kernels},
                      {"calls", r.calls}});
  }
  j["ranges"] = ranges;
  j["ranges_truncated"] = m.ranges.size() > kMaxRanges;
  json range_totals = json::array();
  for (const auto& t : m.range_totals) {
    const double n = static_cast<double>(t.count);
    range_totals.push_back({{"name", t.name},
                            {"library", t.library},
                            {"ranks", t.ranks},
                            {"count", t.count},
                            {"mean_time_us", round3(t.time_us / n)},
                            {"mean_compute_us", round3(t.compute_us / n)},
                            {"mean_copy_us", round3(t.copy_us / n)},
                            {"mean_communication_us", round3(t.communication_us / n)},
                            {"mean_exposed_communication_us", round3(t.exposed_us / n)},
                            {"mean_idle_us", round3(t.idle_us / n)}});
  }
  j["range_totals"] = range_totals;
  auto totals = [](const std::map<std::string, report::Total>& t, const char* key) {
    json a = json::array();
    for (const auto& [n, v] : t)
      a.push_back({{key, n},
                   {"calls", v.calls},
                   {"bytes", v.bytes},
                   {"time_us", round3(v.time_us)},
                   {"mean_busbw_gbps", round3(v.calls ? v.busbw_sum / v.calls : 0)},
                   {"failed", v.failed}});
    return a;
  };
  j["totals"] = {{"per_op", totals(m.per_op, "op")}, {"per_communicator", totals(m.per_comm, "comm")}};
  json links = json::array();
  for (const auto& l : m.links) {
    json bins = json::array();
    for (double v : l.bins) bins.push_back(round3(v));
    links.push_back({{"link", l.name}, {"peak", round3(l.peak)}, {"utilisation", bins}});
  }
  j["links"] = {{"bin_us", round3(m.bin_us)}, {"channels", links}};
  std::map<std::string, std::string> fabric_comms;
  j["fabric"] = fabric_section(in.fabric_dir, &fabric_comms);
  return j;
}

// trace.json as two parts: the text before the traceEvents elements (*head) and the elements themselves.
std::string trace_json(const ReportInput& in, const Model& m, std::string* head) {
  const JobRecord& job = *in.job;
  std::string ev;  // the traceEvents array's elements, compact (dump() without indent)
  size_t count = 0;
  auto push = [&](const json& e) {
    if (count++ >= in.max_trace_events) return;
    if (!ev.empty()) ev.push_back(',');
    ev += dump(e);
  };
  // Processes and threads: one process per rank (device), a thread per stream, one per host thread.
  std::map<std::pair<int, int>, int> pid_of;  // (process, device) -> trace pid
  for (const auto& r : m.ranks) {
    pid_of[{r.process, r.device}] = r.rank;
    push({{"ph", "M"}, {"name", "process_name"}, {"pid", r.rank},
          {"args", {{"name", "rank " + std::to_string(r.rank) + " (" + r.node + ", pid " + std::to_string(r.pid) +
                                 ", device " + std::to_string(r.device) + ")"}}}});
    push({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", r.rank}, {"args", {{"sort_index", r.rank}}}});
  }
  // Where each call's slices are, for the flow arrows: (comm, seq) -> [(pid, tid, start)].
  std::map<std::pair<uint64_t, uint64_t>, std::vector<std::tuple<int, uint32_t, double>>> slices;
  std::set<std::pair<int, uint32_t>> named;
  for (size_t p = 0; p < job.op_records.size(); ++p) {
    const auto& labels = p < job.labels.size() ? job.labels[p] : std::vector<std::string>{};
    // Host records carry no device: they go to the process's first rank.
    int host_pid = -1;
    for (const auto& r : m.ranks)
      if (r.process == static_cast<int>(p)) {
        host_pid = r.rank;
        break;
      }
    for (const auto& o : job.op_records[p]) {
      // Host-thread records: waits (no device) on the process's first rank, ranges on their thread's device.
      const bool host = o.device < 0 || o.stream >= Timeline::kHostStreamBase;
      const int pid = o.device < 0 ? host_pid
                      : pid_of.count({static_cast<int>(p), o.device}) ? pid_of[{static_cast<int>(p), o.device}]
                                                                       : -1;
      if (pid < 0) continue;
      const uint32_t tid = o.stream;
      if (named.insert({pid, tid}).second) {
        const std::string tname = host ? "host thread " + std::to_string(tid - Timeline::kHostStreamBase)
                                       : "stream " + std::to_string(tid);
        push({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", tname}}}});
      }
      const std::string label = o.label < labels.size() ? labels[o.label] : std::string("op");
      const OpKind kind = static_cast<OpKind>(o.kind);
      json args = {{"kind", kind_name(kind)}};
      if (o.bytes) args["bytes"] = o.bytes;
      if (kind == OpKind::kCollective || kind == OpKind::kP2p) {
        auto cn = m.comm_names.find(o.comm);
        if (cn != m.comm_names.end()) args["comm"] = cn->second;
        args["seq"] = o.seq;
        if (kind == OpKind::kCollective) slices[{o.comm, o.seq}].emplace_back(pid, tid, o.start_ns / 1e3);
      }
      if (kind == OpKind::kKernel) args["mangled"] = label;
      push({{"ph", "X"}, {"name", kind == OpKind::kKernel ? demangle(label) : label}, {"cat", kind_name(kind)},
            {"pid", pid}, {"tid", tid}, {"ts", o.start_ns / 1e3}, {"dur", (o.end_ns - o.start_ns) / 1e3},
            {"args", args}});
    }
  }
  // Flow arrows joining one collective's slices across its ranks.
  uint64_t flow_id = 1;
  for (auto& [k, v] : slices) {
    if (v.size() < 2) continue;
    std::sort(v.begin(), v.end());
    for (size_t i = 0; i < v.size(); ++i) {
      const auto& [pid, tid, ts] = v[i];
      const char* ph = i == 0 ? "s" : i + 1 == v.size() ? "f" : "t";
      json e = {{"ph", ph}, {"id", flow_id}, {"name", "collective"}, {"cat", "collective"}, {"pid", pid},
                {"tid", tid}, {"ts", ts}};
      if (i + 1 == v.size()) e["bp"] = "e";
      push(e);
    }
    ++flow_id;
  }
  // Link utilisation counters from netsim, on a "network" process.
  const int net_pid = 1000000;
  push({{"ph", "M"}, {"name", "process_name"}, {"pid", net_pid}, {"args", {{"name", "network (netsim)"}}}});
  if (in.topology) {
    const auto& nodes = in.topology->nodes();
    for (const auto& u : job.link_usage) {
      const std::string name = "link " + nodes[static_cast<size_t>(in.topology->channel_src(u.channel))].name +
                               " -> " + nodes[static_cast<size_t>(in.topology->channel_dst(u.channel))].name;
      push({{"ph", "C"}, {"name", name}, {"pid", net_pid}, {"ts", u.start.to_us()},
            {"args", {{"GB/s", u.bytes_per_s / 1e9}}}});
      push({{"ph", "C"}, {"name", name}, {"pid", net_pid}, {"ts", u.end.to_us()}, {"args", {{"GB/s", 0.0}}}});
    }
  }
  // Keys in the order dump() sorts them: displayTimeUnit, otherData, traceEvents.
  const json other = {{"generator", "genie"},
                      {"events_dropped", count > in.max_trace_events ? count - in.max_trace_events : 0}};
  *head = "{\"displayTimeUnit\":\"ns\",\"otherData\":" + dump(other) + ",\"traceEvents\":[";
  return ev;
}

}  // namespace

Status write_report(const std::string& dir, const ReportInput& in) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return system_error("cannot create the report directory " + dir + ": " + ec.message());
  const Model m = report::build_model(in);
  {
    std::string entries;
    const std::string text = dump(report_json(in, m, &entries), 1) + "\n";
    const std::string slot = std::string("\"") + kCollectivesSlot + "\"";
    const size_t at = text.find(slot);
    if (at == std::string::npos) return internal_error("report: the collectives slot is missing");
    const std::string_view t(text);
    GENIE_TRY(write_file(std::filesystem::path(dir) / "genie-report.json",
                         {t.substr(0, at), entries.empty() ? "[]" : "[\n", entries, entries.empty() ? "" : "\n ]",
                          t.substr(at + slot.size())}));
  }
  std::string head;
  const std::string events = trace_json(in, m, &head);
  GENIE_TRY(write_file(std::filesystem::path(dir) / "trace.json", {head, events, "]}"}));
  return Status::ok();
}

std::string summary_text(const ReportInput& in) {
  const Model m = report::build_model(in);
  std::ostringstream os;
  char line[256];
  std::snprintf(line, sizeof(line), "[genie] %d ranks, exit code %d, %.1f s wall, %.3f ms virtual\n", in.nranks,
                in.result.exit_code, in.wall_seconds, m.span_us / 1e3);
  os << line;
  if (!m.per_op.empty()) {
    os << "[genie]   collective       calls         bytes     time_ms  mean_busbw_GB/s\n";
    for (const auto& [n, t] : m.per_op) {
      std::snprintf(line, sizeof(line), "[genie]   %-14s %7llu %13llu %11.3f %16.2f%s\n", n.c_str(),
                    static_cast<unsigned long long>(t.calls), static_cast<unsigned long long>(t.bytes), t.time_us / 1e3,
                    t.calls ? t.busbw_sum / t.calls : 0.0, t.failed ? "  (some failed)" : "");
      os << line;
    }
  }
  if (!m.ranks.empty()) {
    os << "[genie]   rank  compute_ms  comm_ms  exposed_comm_ms  idle_ms\n";
    for (const auto& r : m.ranks) {
      std::snprintf(line, sizeof(line), "[genie]   %4d %11.3f %8.3f %16.3f %8.3f\n", r.rank, r.compute_us / 1e3,
                    r.communication_us / 1e3, r.exposed_us / 1e3, r.idle_us / 1e3);
      os << line;
    }
  }
  if (!m.range_totals.empty()) {
    os << "[genie]   range (NVTX)      count  mean_ms  compute_ms  exposed_comm_ms  idle_ms   (means over ranks)\n";
    auto row = [&](const std::string& name, const report::RangeTotal& t) {
      const double n = static_cast<double>(t.count);
      std::snprintf(line, sizeof(line), "[genie]   %-16.16s %6llu %8.3f %11.3f %16.3f %8.3f\n", name.c_str(),
                    static_cast<unsigned long long>(t.count), t.time_us / n / 1e3, t.compute_us / n / 1e3,
                    t.exposed_us / n / 1e3, t.idle_us / n / 1e3);
      os << line;
    };
    // The program's ranges, then the libraries' folded into one row (report.md, "Ranges").
    size_t shown = 0, program = 0;
    report::RangeTotal libs;
    size_t lib_names = 0;
    for (const auto& t : m.range_totals) {
      if (t.library) {
        ++lib_names;
        libs.count += t.count;
        libs.time_us += t.time_us;
        libs.compute_us += t.compute_us;
        libs.exposed_us += t.exposed_us;
        libs.idle_us += t.idle_us;
        continue;
      }
      ++program;
      if (shown++ < 12) row(t.name, t);
    }
    if (program > 12) os << "[genie]   ... " << (program - 12) << " more range names in the report\n";
    if (lib_names > 0) row("(libraries: " + std::to_string(lib_names) + ")", libs);
  }
  const JobRecord& job = *in.job;
  if (job.relaxed_steps || job.late_arrivals || job.protocol_errors)
    os << "[genie]   coordinator: " << job.relaxed_steps << " relaxed steps, " << job.late_arrivals
       << " late arrivals, " << job.protocol_errors << " protocol errors (see the report)\n";
  return os.str();
}

}  // namespace genie::sched
