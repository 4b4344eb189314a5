// SPDX-License-Identifier: Apache-2.0
// `genie sim` sweep: nccl-tests sizes and counts, planning, timing and the exact nccl-tests table.
#include "genie/netsim/sweep.hpp"

#include <algorithm>

#include <unistd.h>
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "algorithms/nccl_tuning.hpp"

namespace genie::netsim {

namespace {
/// nccl-tests version string printed in the preamble (docs reference (d)).
constexpr const char* kNcclTestsVersion = "2.19.6";
/// NCCL version code we emulate (DESIGN.md: ncclGetVersion reports 2.28).
constexpr int kNcclVersionCode = 22809;
}  // namespace

Result<uint64_t> parse_size(const std::string& text) {
  if (text.empty()) return invalid_argument("empty size");
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return invalid_argument("bad size '" + text + "' (expected e.g. 1K, 8M, 8G)");
  }
  uint64_t mult = 1;
  const std::string suf = text.substr(used);
  if (suf.empty())
    mult = 1;
  else if (suf == "K" || suf == "k")
    mult = uint64_t{1} << 10;
  else if (suf == "M" || suf == "m")
    mult = uint64_t{1} << 20;
  else if (suf == "G" || suf == "g")
    mult = uint64_t{1} << 30;
  else if (suf == "T" || suf == "t")
    mult = uint64_t{1} << 40;
  else
    return invalid_argument("bad size suffix in '" + text + "' (expected K, M, G or T)");
  if (!(v >= 0)) return invalid_argument("size '" + text + "' must be non-negative");
  const double bytes = v * static_cast<double>(mult);
  // 2^64: the first value a uint64_t cannot hold (converting one at or above it is undefined behaviour).
  if (!(bytes < 18446744073709551616.0)) return invalid_argument("size '" + text + "' is too large");
  return static_cast<uint64_t>(bytes);
}

double busbw_factor(Collective c, int n) noexcept {
  const double dn = n;
  switch (c) {
    case Collective::kAllReduce:
      return 2.0 * (dn - 1) / dn;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
    case Collective::kGather:
    case Collective::kScatter:
      return (dn - 1) / dn;
    default:
      return 1.0;
  }
}

std::string nccl_tests_float(double value, int width) {
  int power = 0;
  for (double val = 1; value >= val; val *= 10) ++power;
  char buf[64];
  if (power < width - 2)
    std::snprintf(buf, sizeof(buf), "%*.2f", width, value);
  else if (power < width - 1)
    std::snprintf(buf, sizeof(buf), "%*.1f", width, value);
  else if (power < width + 1)
    std::snprintf(buf, sizeof(buf), "%*.0f", width, value);
  else
    std::snprintf(buf, sizeof(buf), "%*.1e", width, value);
  return buf;
}

namespace {
/// nccl-tests getCollByteCount: element counts per collective; per-rank counts are rounded down to a
/// 16-byte multiple. Returns (count passed to NCCL, printed size in bytes).
std::pair<uint64_t, uint64_t> counts_for(Collective c, uint64_t size, uint64_t ts, uint64_t n) {
  const uint64_t count = size / ts;
  const uint64_t align = std::max<uint64_t>(1, 16 / ts);
  const uint64_t per_rank = (count / n) & ~(align - 1);
  switch (c) {
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kGather:
    case Collective::kScatter:
    case Collective::kAllToAll:
      return {per_rank, per_rank * n * ts};
    default:
      return {count, count * ts};
  }
}
}  // namespace

Result<SweepResult> run_sweep(const SweepOptions& opts) {
  if (opts.min_bytes > opts.max_bytes) {
    return invalid_argument("min bytes (-b " + std::to_string(opts.min_bytes) + ") exceeds max bytes (-e " +
                            std::to_string(opts.max_bytes) + ")");
  }
  if (opts.step_factor <= 1 && opts.step_bytes == 0)
    return invalid_argument("step factor must be > 1 or step bytes > 0");
  GENIE_ASSIGN_OR_RETURN(auto topo, load_topology(opts.topology, opts.topology_options));
  SweepResult res;
  res.nranks = topo->num_gpus();
  res.topology_name = topo->name;
  const int n = res.nranks;
  const uint64_t ts = datatype_size(opts.datatype);
  // Host floor: one thread launches the collective on each of its GPUs in turn (nccl-tests -g G).
  const int gpt = opts.gpus_per_thread > 0 ? opts.gpus_per_thread : topo->gpus_per_server;
  SimulatorOptions sopts;
  sopts.engine = opts.engine;
  sopts.max_memory_bytes = opts.max_memory_bytes;
  // nccl-tests' next size (-f factor, else -i step); 0 once it would not grow.
  auto next_size = [&opts](uint64_t size) -> uint64_t {
    const uint64_t next = opts.step_factor > 1 ? static_cast<uint64_t>(static_cast<double>(size) * opts.step_factor)
                                               : size + opts.step_bytes;
    return next > size ? next : 0;
  };
  size_t rows = 0;
  for (uint64_t size = opts.min_bytes; size <= opts.max_bytes && (rows == 0 || size != 0); size = next_size(size)) {
    ++rows;
    if (size == 0) break;  // a 0-byte start that does not grow: one row, as the loop below
  }
  for (uint64_t size = opts.min_bytes; size <= opts.max_bytes;) {
    if (opts.progress) {
      const size_t row = res.rows.size();
      sopts.progress_interval_s = opts.progress_interval_s;
      sopts.progress = [&opts, row, rows, size](const SimProgress& p) {
        opts.progress(SweepProgress{row, rows, size, p});
      };
    }
    const auto [count, printed] = counts_for(opts.collective, size, ts, static_cast<uint64_t>(n));
    CollectiveSpec spec;
    spec.collective = opts.collective;
    spec.count = count;
    spec.datatype = opts.datatype;
    spec.redop = opts.redop;
    spec.root = opts.root;
    spec.nranks = n;
    GENIE_ASSIGN_OR_RETURN(Schedule sched,
                           plan_collective(spec, *topo, opts.env, ScheduleForm::kCompact, opts.max_memory_bytes));
    // Host cost of launching the collective on one GPU (NCCL enqueue + kernel launch, per channel work).
    const int64_t launch_one_gpu =
        topo->host_launch_per_gpu_ns + sched.tuning.nchannels * topo->host_launch_per_gpu_channel_ns;
    // NCCL's baseLatencies (tuning.cc) are per-iteration costs fitted on runs with one GPU per process,
    // so they contain that process's own launch of the kernel. Here the launches are the host floor
    // below, and nccl-tests issues iterations back to back: the host enqueues iteration i+1 while the
    // GPUs run iteration i, so that launch overlaps GPU work and must not be charged a second time in
    // the GPU time. Only the GPU-side remainder of the base latency stays (NVLS/NVLSTree carry no
    // baseLatency in NCCL's model, their latency replaces it, so their base is not touched).
    const int64_t nccl_base_ns =
        static_cast<int64_t>(nccl::base_latency_us(sched.tuning.algorithm, sched.tuning.protocol) * 1000.0);
    if (nccl_base_ns > 0 && sched.base_latency_ns > 0)
      sched.base_latency_ns -= std::min({sched.base_latency_ns, nccl_base_ns, launch_one_gpu});
    GENIE_ASSIGN_OR_RETURN(CollectiveTiming timing, simulate_schedule(topo, sched, sopts));
    // Launch-bound floor: iterations are issued back to back, so each takes max(host cost, GPU time).
    const SimTime host_floor = SimTime::ns(gpt * launch_one_gpu);
    const SimTime t = max(host_floor, timing.duration() + SimTime::ns(topo->kernel_launch_ns));
    SweepRow row;
    row.size_bytes = printed;
    row.count = count;
    row.tuning = sched.tuning;
    row.time_us = t.to_us();
    // nccl-tests algbw = bytes / time, bytes = count*ts for rooted/whole-buffer ops, count*ts*n otherwise.
    const double sec = t.to_seconds();
    row.algbw_gbps = sec > 0 ? static_cast<double>(printed) / 1e9 / sec : 0;
    row.busbw_gbps = row.algbw_gbps * busbw_factor(opts.collective, n);
    res.rows.push_back(row);
    size = next_size(size);
    if (size == 0) break;
  }
  return res;
}

std::string format_nccl_tests(const SweepOptions& opts, const SweepResult& r) {
  std::string out;
  char buf[512];
  const std::string prog = std::string(collective_name(opts.collective)) + "_perf";
  std::snprintf(buf, sizeof(buf), "# nccl-tests version %s nccl-headers=%d nccl-library=%d\n", kNcclTestsVersion,
                kNcclVersionCode, kNcclVersionCode);
  out += buf;
  out += "# Collective test starting: " + prog + "\n";
  char step[64];
  if (opts.step_factor > 1)
    std::snprintf(step, sizeof(step), "%g(factor)", opts.step_factor);
  else
    std::snprintf(step, sizeof(step), "%" PRIu64 "(bytes)", opts.step_bytes);
  std::snprintf(buf, sizeof(buf),
                "# nThread 1 nGpus %d minBytes %" PRIu64 " maxBytes %" PRIu64
                " step: %s warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n",
                r.nranks, opts.min_bytes, opts.max_bytes, step);
  out += buf;
  out += "#\n# Using devices\n";
  const int pid = static_cast<int>(getpid());
  for (int rank = 0; rank < r.nranks; ++rank) {
    std::snprintf(buf, sizeof(buf), "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s\n", rank, 0,
                  pid, "genie-sim", rank, 0, rank, 0, r.topology_name.c_str());
    out += buf;
  }
  out += "#\n";
  out +=
      "#                                                              out-of-place                       in-place      "
      "    \n";
  out +=
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  "
      "#wrong \n";
  out +=
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)  "
      "       \n";
  const bool reduces = collective_reduces(opts.collective);
  const bool rooted = opts.collective == Collective::kBroadcast || opts.collective == Collective::kReduce ||
                      opts.collective == Collective::kGather || opts.collective == Collective::kScatter;
  double bw_sum = 0;
  int bw_count = 0;
  for (const SweepRow& row : r.rows) {
    std::snprintf(buf, sizeof(buf), "%12li  %12li  %8s  %6s  %6i", static_cast<long>(row.size_bytes),
                  static_cast<long>(row.count), datatype_name(opts.datatype), reduces ? redop_name(opts.redop) : "none",
                  rooted ? opts.root : -1);
    out += buf;
    for (int half = 0; half < 2; ++half) {
      std::snprintf(buf, sizeof(buf), "  %7s  %6s  %6s  %6g", nccl_tests_float(row.time_us, 7).c_str(),
                    nccl_tests_float(row.algbw_gbps, 6).c_str(), nccl_tests_float(row.busbw_gbps, 6).c_str(), 0.0);
      out += buf;
      bw_sum += row.busbw_gbps;
      ++bw_count;
    }
    out += "\n";
  }
  out += "# Out of bounds values : 0 OK\n";
  for (const SweepRow& row : r.rows) {
    if (!opts.show_tuning) break;
    std::snprintf(buf, sizeof(buf),
                  "# NCCL INFO %s %" PRIu64 " bytes: algorithm %s, protocol %s, %d channels (NCCL's model: %.1f us)\n",
                  collective_name(opts.collective), row.size_bytes, algorithm_name(row.tuning.algorithm),
                  protocol_name(row.tuning.protocol), row.tuning.nchannels, row.tuning.predicted_us);
    out += buf;
  }
  std::snprintf(buf, sizeof(buf), "# Avg bus bandwidth    : %g \n", bw_count ? bw_sum / bw_count : 0.0);
  out += buf;
  out += "#\n# Collective test concluded: " + prog + "\n\n";
  return out;
}

}  // namespace genie::netsim
