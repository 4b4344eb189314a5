// SPDX-License-Identifier: Apache-2.0
// ReportModel: per-rank breakdown from stream-op records, totals from the coordinator's calls, link bins.
#include "report/report_model.hpp"

#include "genie/sched/timeline.hpp"

#include <algorithm>
#include <set>

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

// Merged `v` clipped to [lo, hi).
std::vector<Span> clip(const std::vector<Span>& v, double lo, double hi) {
  std::vector<Span> out;
  auto it = std::lower_bound(v.begin(), v.end(), lo, [](const Span& s, double t) { return s.end_us <= t; });
  for (; it != v.end() && it->start_us < hi; ++it) out.push_back({std::max(lo, it->start_us), std::min(hi, it->end_us)});
  return out;
}

double length(const std::vector<Span>& v) {
  double len = 0;
  for (const Span& s : v) len += s.end_us - s.start_us;
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

bool is_library_range(const std::string& name) {
  // NVTX domains CUDA's libraries annotate their own work with (CCCL: CUB and Thrust, as PyTorch's sorts and scans
  // show them; the math and communication libraries).
  static const char* const kDomains[] = {"CCCL", "CUB", "Thrust", "NCCL", "cuBLAS", "cuBLASLt", "cuDNN", "CUTLASS",
                                         "cuFFT", "cuSPARSE", "cuSOLVER", "cuRAND", "NVSHMEM"};
  const size_t colon = name.find(": ");
  if (colon == std::string::npos) return false;
  const std::string domain = name.substr(0, colon);
  for (const char* d : kDomains)
    if (domain == d) return true;
  return false;
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
    std::vector<double> kernel_starts, call_starts;
    RankSummary s;
    bool any = false;
  };
  struct RangeRec {
    int process, device;
    const coord::OpRecord* op;
  };
  std::map<std::pair<int, int>, Acc> acc;
  std::vector<RangeRec> range_recs;
  for (size_t p = 0; p < job.op_records.size(); ++p) {
    for (const auto& o : job.op_records[p]) {
      if (o.device < 0) continue;  // host records: the trace shows them, the breakdown does not
      if (static_cast<OpKind>(o.kind) == OpKind::kRange) {  // annotated ranges: broken down below
        range_recs.push_back({static_cast<int>(p), o.device, &o});
        continue;
      }
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
          a.kernel_starts.push_back(sp.start_us);
          ++a.s.kernels;
          break;
        case OpKind::kCopy:
          a.copy.push_back(sp);
          ++a.s.copies;
          break;
        case OpKind::kCollective:
        case OpKind::kP2p:
          a.comm.push_back(sp);
          a.call_starts.push_back(sp.start_us);
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
    std::sort(a.kernel_starts.begin(), a.kernel_starts.end());
    std::sort(a.call_starts.begin(), a.call_starts.end());
    const double span = s.end_us - s.begin_us;
    s.compute = thin(a.compute, span, 1500);
    s.communication = thin(a.comm, span, 1500);
    m.span_us = std::max(m.span_us, s.end_us);
    m.ranks.push_back(s);
  }

  // Annotated ranges: the rank's merged activity clipped to each range.
  std::map<std::pair<int, std::string>, int> occurrences;
  std::sort(range_recs.begin(), range_recs.end(), [](const RangeRec& x, const RangeRec& y) {
    return std::tie(x.process, x.device, x.op->start_ns, x.op->end_ns) <
           std::tie(y.process, y.device, y.op->start_ns, y.op->end_ns);
  });
  for (const RangeRec& rr : range_recs) {
    const coord::OpRecord& o = *rr.op;
    RangeSummary r;
    const auto& labels = static_cast<size_t>(rr.process) < job.labels.size() ? job.labels[static_cast<size_t>(rr.process)]
                                                                            : std::vector<std::string>{};
    r.name = o.label < labels.size() ? labels[o.label] : std::string("range");
    r.thread = o.stream >= Timeline::kHostStreamBase ? o.stream - Timeline::kHostStreamBase : o.stream;
    r.start_us = o.start_ns / 1e3;
    r.end_us = std::max(r.start_us, o.end_ns / 1e3);
    auto ri = m.rank_of.find({rr.process, rr.device});
    const ProcessInfo* pi = static_cast<size_t>(rr.process) < job.processes.size()
                                ? &job.processes[static_cast<size_t>(rr.process)] : nullptr;
    r.rank = ri != m.rank_of.end() ? ri->second : pi ? (pi->process_rank >= 0 ? pi->process_rank : pi->index) : rr.process;
    auto ai = acc.find({rr.process, rr.device});
    if (ai != acc.end()) {
      const Acc& a = ai->second;
      std::vector<Span> compute = clip(a.compute, r.start_us, r.end_us), copy = clip(a.copy, r.start_us, r.end_us),
                        comm = clip(a.comm, r.start_us, r.end_us);
      r.compute_us = length(compute);
      r.copy_us = length(copy);
      r.communication_us = length(comm);
      r.exposed_us = minus(comm, compute);
      std::vector<Span> busy = compute;
      busy.insert(busy.end(), copy.begin(), copy.end());
      busy.insert(busy.end(), comm.begin(), comm.end());
      r.idle_us = std::max(0.0, (r.end_us - r.start_us) - merge(&busy));
      auto count_in = [&](const std::vector<double>& starts) {
        return static_cast<uint64_t>(std::lower_bound(starts.begin(), starts.end(), r.end_us) -
                                     std::lower_bound(starts.begin(), starts.end(), r.start_us));
      };
      r.kernels = count_in(a.kernel_starts);
      r.calls = count_in(a.call_starts);
    } else {
      r.idle_us = r.end_us - r.start_us;
    }
    r.index = occurrences[{r.rank, r.name}]++;
    m.ranges.push_back(std::move(r));
  }
  std::stable_sort(m.ranges.begin(), m.ranges.end(), [](const RangeSummary& x, const RangeSummary& y) {
    return std::tie(x.rank, x.start_us) < std::tie(y.rank, y.start_us);
  });
  std::map<std::string, std::pair<RangeTotal, std::set<int>>> by_name;
  for (const RangeSummary& r : m.ranges) {
    auto& [t, ranks] = by_name[r.name];
    t.name = r.name;
    ranks.insert(r.rank);
    ++t.count;
    t.time_us += r.end_us - r.start_us;
    t.compute_us += r.compute_us;
    t.copy_us += r.copy_us;
    t.communication_us += r.communication_us;
    t.exposed_us += r.exposed_us;
    t.idle_us += r.idle_us;
  }
  for (auto& [n, v] : by_name) {
    v.first.ranks = static_cast<int>(v.second.size());
    v.first.library = is_library_range(n);
    m.range_totals.push_back(std::move(v.first));
  }
  // The program's own ranges first (by name), then the libraries'.
  std::stable_partition(m.range_totals.begin(), m.range_totals.end(), [](const RangeTotal& t) { return !t.library; });
  std::sort(m.ranks.begin(), m.ranks.end(), [](const RankSummary& a, const RankSummary& b) {
    return std::tie(a.rank, a.process, a.device) < std::tie(b.rank, b.process, b.device);
  });

  // Totals per collective type and communicator.
  for (const auto& c : job.collectives) {
    m.span_us = std::max(m.span_us, c.end.to_us());
    const double t = (c.end - c.start).to_us();
    const double busbw = t > 0 ? c.bytes / (t * 1e3) * busbw_factor(c.collective, c.nranks) : 0;
    for (Total* tot : {&m.per_op[netsim::collective_api_name(c.collective)], &m.per_comm[m.comm_names[c.comm]]}) {
      ++tot->calls;
      tot->bytes += c.bytes;
      tot->time_us += t;
      tot->busbw_sum += busbw;
      tot->failed += c.error.empty() ? 0 : 1;
    }
  }
  // Calls the coordinator kept as totals only (beyond CoordinatorOptions::max_collective_records).
  for (const auto& [k, b] : job.collectives_beyond) {
    const auto& [comm, coll, nranks] = k;
    if (!m.comm_names.count(comm)) m.comm_names[comm] = "c" + std::to_string(m.comm_names.size());
    m.span_us = std::max(m.span_us, b.last_end.to_us());
    for (Total* tot : {&m.per_op[netsim::collective_api_name(coll)], &m.per_comm[m.comm_names[comm]]}) {
      tot->calls += b.calls;
      tot->bytes += b.bytes;
      tot->time_us += b.time_us;
      tot->busbw_sum += b.algbw_sum_gbps * busbw_factor(coll, nranks);
      tot->failed += b.failed;
    }
  }
  for (auto& [n, t] : m.per_op) t.name = n;
  for (auto& [n, t] : m.per_comm) t.name = n;

  // Link utilisation in bins over the job's span.
  const double link_span_us =
      job.link_usage_until > SimTime::zero() ? std::min(m.span_us, job.link_usage_until.to_us()) : m.span_us;
  if (in.topology && !job.link_usage.empty() && link_span_us > 0) {
    constexpr int kBins = 120;
    m.bin_us = link_span_us / kBins;
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
