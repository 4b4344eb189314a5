// SPDX-License-Identifier: Apache-2.0
// ReportModel: per-rank breakdown from stream-op records, totals from the coordinator's calls, link bins.
#include "report/report_model.hpp"

#include "genie/sched/timeline.hpp"

#include <algorithm>

namespace genie::sched::report {
namespace {

// Merges overlapping spans (sorted by start) in place; returns the covered length.
double merge(std::vector<Span>* v) {
  std::sort(v->begin(), v->end(), [](const Span& a, const Span& b) { return a.start_us < b.start_us; });
  std::vector<Span> out;
  for (const Span& s : *v) {
    if (s.end_us <= s.start_us) continue;
    if (!out.empty() && s.start_us <= out.back().end_us)
      out.back().end_us = std::max(out.back().end_us, s.end_us);
    else
      out.push_back(s);
  }
  double len = 0;
  for (const Span& s : out) len += s.end_us - s.start_us;
  *v = std::move(out);
  return len;
}

// Covered length of `a` minus what `b` covers (both merged).
double minus(const std::vector<Span>& a, const std::vector<Span>& b) {
  double len = 0;
  size_t j = 0;
  for (const Span& s : a) {
    double cur = s.start_us;
    while (j < b.size() && b[j].end_us <= cur) ++j;
    for (size_t k = j; k < b.size() && b[k].start_us < s.end_us; ++k) {
      if (b[k].start_us > cur) len += b[k].start_us - cur;
      cur = std::max(cur, b[k].end_us);
      if (cur >= s.end_us) break;
    }
    if (cur < s.end_us) len += s.end_us - cur;
  }
  return len;
}

// Keeps a chart's span list small: gaps shorter than `min_gap` are closed until at most `limit` remain.
std::vector<Span> thin(std::vector<Span> v, double total, size_t limit) {
  double gap = total / 20000;
  while (v.size() > limit) {
    std::vector<Span> out;
    for (const Span& s : v) {
      if (!out.empty() && s.start_us - out.back().end_us < gap)
        out.back().end_us = std::max(out.back().end_us, s.end_us);
      else
        out.push_back(s);
    }
    v = std::move(out);
    gap *= 2;
  }
  return v;
}

}  // namespace

double busbw_factor(netsim::Collective c, int n) {
  if (n <= 1) return 1.0;
  const double nn = n;
  switch (c) {
    case netsim::Collective::kAllReduce: return 2 * (nn - 1) / nn;
    case netsim::Collective::kAllGather:
    case netsim::Collective::kReduceScatter:
    case netsim::Collective::kAllToAll:
    case netsim::Collective::kGather:
    case netsim::Collective::kScatter: return (nn - 1) / nn;
    case netsim::Collective::kBroadcast:
    case netsim::Collective::kReduce:
    case netsim::Collective::kSendRecv: return 1.0;
  }
  return 1.0;
}

const char* api_name(netsim::Collective c) {
  switch (c) {
    case netsim::Collective::kAllReduce: return "AllReduce";
    case netsim::Collective::kBroadcast: return "Broadcast";
    case netsim::Collective::kReduce: return "Reduce";
    case netsim::Collective::kAllGather: return "AllGather";
    case netsim::Collective::kReduceScatter: return "ReduceScatter";
    case netsim::Collective::kAllToAll: return "AlltoAll";
    case netsim::Collective::kGather: return "Gather";
    case netsim::Collective::kScatter: return "Scatter";
    case netsim::Collective::kSendRecv: return "SendRecv";
  }
  return "?";
}

Model build_model(const ReportInput& in) {
  Model m;
  const JobRecord& job = *in.job;
  // Communicator names in order of first call (stable across runs: calls are recorded in resolution order,
  // which the coordinator makes deterministic), then the rest.
  for (const auto& c : job.collectives)
    if (!m.comm_names.count(c.comm)) m.comm_names[c.comm] = "c" + std::to_string(m.comm_names.size());
  for (const auto& [k, c] : job.comms)
    if (!m.comm_names.count(k)) m.comm_names[k] = "c" + std::to_string(m.comm_names.size());
  // Ranks: positions in the largest communicator; processes outside it by their process rank.
  const CommInfo* world = nullptr;
  for (const auto& [k, c] : job.comms)
    if (c.joined == c.nranks && (!world || c.nranks > world->nranks)) world = &c;
  if (world)
    for (int r = 0; r < world->nranks; ++r)
      m.rank_of[{world->process[static_cast<size_t>(r)], world->cuda_dev[static_cast<size_t>(r)]}] = r;

  // Per (process, device) spans from the op records.
  struct Acc {
    std::vector<Span> compute, copy, comm;
    RankSummary s;
    bool any = false;
  };
  std::map<std::pair<int, int>, Acc> acc;
  for (size_t p = 0; p < job.op_records.size(); ++p) {
    for (const auto& o : job.op_records[p]) {
      if (o.device < 0) continue;  // host records: the trace shows them, the breakdown does not
      Acc& a = acc[{static_cast<int>(p), o.device}];
      const Span sp{o.start_ns / 1e3, o.end_ns / 1e3};
      if (!a.any) {
        a.s.begin_us = sp.start_us;
        a.s.end_us = sp.end_us;
        a.any = true;
      }
      a.s.begin_us = std::min(a.s.begin_us, sp.start_us);
      a.s.end_us = std::max(a.s.end_us, sp.end_us);
      switch (static_cast<OpKind>(o.kind)) {
        case OpKind::kKernel:
        case OpKind::kMemset:
          a.compute.push_back(sp);
          ++a.s.kernels;
          break;
        case OpKind::kCopy:
          a.copy.push_back(sp);
          ++a.s.copies;
          break;
        case OpKind::kCollective:
        case OpKind::kP2p:
          a.comm.push_back(sp);
          ++a.s.calls;
          break;
        default:
          break;
      }
    }
  }
  for (auto& [key, a] : acc) {
    RankSummary& s = a.s;
    s.process = key.first;
    s.device = key.second;
    if (static_cast<size_t>(key.first) < job.processes.size()) {
      const ProcessInfo& pi = job.processes[static_cast<size_t>(key.first)];
      s.pid = pi.pid;
      s.node = pi.node;
      auto it = m.rank_of.find(key);
      s.rank = it != m.rank_of.end() ? it->second : (pi.process_rank >= 0 ? pi.process_rank : pi.index);
    }
    s.compute_us = merge(&a.compute);
    s.copy_us = merge(&a.copy);
    s.communication_us = merge(&a.comm);
    s.exposed_us = minus(a.comm, a.compute);
    std::vector<Span> busy = a.compute;
    busy.insert(busy.end(), a.copy.begin(), a.copy.end());
    busy.insert(busy.end(), a.comm.begin(), a.comm.end());
    const double busy_us = merge(&busy);
    s.idle_us = std::max(0.0, (s.end_us - s.begin_us) - busy_us);
    const double span = s.end_us - s.begin_us;
    s.compute = thin(a.compute, span, 1500);
    s.communication = thin(a.comm, span, 1500);
    m.span_us = std::max(m.span_us, s.end_us);
    m.ranks.push_back(std::move(s));
  }
  std::sort(m.ranks.begin(), m.ranks.end(), [](const RankSummary& a, const RankSummary& b) {
    return std::tie(a.rank, a.process, a.device) < std::tie(b.rank, b.process, b.device);
  });

  // Totals per collective type and communicator.
  for (const auto& c : job.collectives) {
    m.span_us = std::max(m.span_us, c.end.to_us());
    const double t = (c.end - c.start).to_us();
    const double busbw = t > 0 ? c.bytes / (t * 1e3) * busbw_factor(c.collective, c.nranks) : 0;
    for (Total* tot : {&m.per_op[api_name(c.collective)], &m.per_comm[m.comm_names[c.comm]]}) {
      ++tot->calls;
      tot->bytes += c.bytes;
      tot->time_us += t;
      tot->busbw_sum += busbw;
      tot->failed += c.error.empty() ? 0 : 1;
    }
  }
  for (auto& [n, t] : m.per_op) t.name = n;
  for (auto& [n, t] : m.per_comm) t.name = n;

  // Link utilisation in bins over the job's span.
  if (in.topology && !job.link_usage.empty() && m.span_us > 0) {
    constexpr int kBins = 120;
    m.bin_us = m.span_us / kBins;
    std::map<uint32_t, std::vector<double>> bytes;  // channel -> bytes per bin
    for (const auto& u : job.link_usage) {
      auto& b = bytes[u.channel];
      if (b.empty()) b.assign(kBins, 0.0);
      const double s = u.start.to_us(), e = u.end.to_us();
      for (int i = std::max(0, static_cast<int>(s / m.bin_us)); i < kBins && i * m.bin_us < e; ++i) {
        const double lo = std::max(s, i * m.bin_us), hi = std::min(e, (i + 1) * m.bin_us);
        if (hi > lo) b[static_cast<size_t>(i)] += u.bytes_per_s * (hi - lo) * 1e-6;
      }
    }
    const auto& nodes = in.topology->nodes();
    for (auto& [ch, b] : bytes) {
      LinkUse lu;
      lu.name = nodes[static_cast<size_t>(in.topology->channel_src(ch))].name + " -> " +
                nodes[static_cast<size_t>(in.topology->channel_dst(ch))].name;
      const double cap = in.topology->channel_link(ch).bw_bytes_per_s * m.bin_us * 1e-6;
      for (double v : b) {
        lu.bins.push_back(cap > 0 ? std::min(1.0, v / cap) : 0.0);
        lu.peak = std::max(lu.peak, lu.bins.back());
      }
      m.links.push_back(std::move(lu));
    }
    std::sort(m.links.begin(), m.links.end(), [](const LinkUse& a, const LinkUse& b) {
      return a.peak != b.peak ? a.peak > b.peak : a.name < b.name;
    });
    if (m.links.size() > 64) m.links.resize(64);
  }
  return m;
}

}  // namespace genie::sched::report
