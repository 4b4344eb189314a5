// SPDX-License-Identifier: Apache-2.0
// Import of PyTorch profiler (Kineto) Chrome traces taken on a real GPU: every kernel event becomes a measured
// entry (name, grid, block -> duration) of the runtime's kernel table (GENIE_FAKECUDA_COST_TABLE).
#pragma once

#include <string>
#include <vector>

#include "genie/common/status.hpp"

namespace genie::fakecuda {

/// One (kernel, launch shape) of a trace with the statistics of its events.
struct TraceKernelEntry {
  std::string name;          ///< as the profiler shows it (demangled); the runtime matches it to mangled names
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  int calls = 0;
  double median_us = 0, min_us = 0, max_us = 0;
};

struct TraceImport {
  std::string device;        ///< deviceProperties[0].name when present
  int kernel_events = 0;     ///< kernel events read
  std::vector<TraceKernelEntry> kernels;  ///< sorted by name, then shape
};

/// Reads the trace at `path`. Relies on: traceEvents[] entries with "ph": "X" and "cat": "kernel" (any case), each
/// with "name" (string), "dur" (microseconds, number >= 0) and "args": {"grid": [x, y, z], "block": [x, y, z]}.
/// Other events are ignored. Errors name the file and the JSON path of the offending value.
Result<TraceImport> import_kineto_trace(const std::string& path);
/// Same, from text; `origin` names it in errors.
Result<TraceImport> parse_kineto_trace(const std::string& text, const std::string& origin);

/// The kernel table document (docs/costmodel.md "Kernel table") for an import: duration_us is each shape's median.
std::string kernel_table_json(const TraceImport& t, const std::string& source);

}  // namespace genie::fakecuda
