// SPDX-License-Identifier: Apache-2.0
// Fuzz target: PyTorch profiler (Kineto) Chrome traces read by `genie calibrate --from-trace`. The input is the
// trace. Whatever the bytes, parse_kineto_trace returns an import or a Status naming the file; an import's
// statistics are consistent (calls add up to the kernel events, min <= median <= max), and the kernel table
// it becomes (kernel_table_json, what calibrate writes) parses with parse_kernel_table to one entry per
// (kernel, shape) with the median as its duration.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "fuzz_check.hpp"
#include "genie/fakecuda/cost_model.hpp"
#include "genie/fakecuda/trace_import.hpp"

extern "C" {
size_t genie_fuzz_accepted = 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace genie::fakecuda;
  auto r = parse_kineto_trace(genie::fuzz::text_of(data, size), "fuzz.json");
  if (!r.is_ok()) {
    GENIE_FUZZ_CHECK(r.status().message().rfind("fuzz.json: ", 0) == 0,
                     "the error does not name the file: " + r.status().message());
    return 0;
  }
  ++genie_fuzz_accepted;
  const TraceImport& t = r.value();
  int64_t calls = 0;
  for (const TraceKernelEntry& k : t.kernels) {
    GENIE_FUZZ_CHECK(k.calls > 0 && !k.name.empty(), "an entry without calls or name");
    GENIE_FUZZ_CHECK(std::isfinite(k.median_us) && k.min_us >= 0 && k.min_us <= k.median_us &&
                         k.median_us <= k.max_us,
                     "min <= median <= max does not hold for " + k.name);
    calls += k.calls;
  }
  GENIE_FUZZ_CHECK(calls == t.kernel_events, "the entries' calls do not add up to the kernel events");

  auto table = parse_kernel_table(kernel_table_json(t, "fuzz.json"), "calibrated table");
  GENIE_FUZZ_CHECK(table.is_ok(), "the calibrated table does not parse: " + table.status().message());
  GENIE_FUZZ_CHECK(table.value().size() == t.kernels.size(), "the table lost or gained entries");
  for (const TraceKernelEntry& k : t.kernels) {
    KernelShape s;
    for (int i = 0; i < 3; ++i) {
      s.grid[i] = k.grid[i];
      s.block[i] = k.block[i];
    }
    bool found = false;
    auto [lo, hi] = table.value().equal_range(k.name);
    for (auto it = lo; it != hi; ++it) {
      if (!it->second.matches(s)) continue;
      found = true;
      const double want_ns = k.median_us * 1e3;
      const double got_ns = static_cast<double>(it->second.duration.count_ns());
      GENIE_FUZZ_CHECK(std::abs(got_ns - want_ns) <= 0.5 + 1e-9 * want_ns, "the table's duration is not the median");
    }
    GENIE_FUZZ_CHECK(found, "no table entry for " + k.name);
  }
  return 0;
}
