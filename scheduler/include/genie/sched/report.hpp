// SPDX-License-Identifier: Apache-2.0
// Job reports: genie-report.json (schema in docs/report.md), trace.json (Chrome / Perfetto trace), the
// compact summary printed at exit, and the self-contained HTML page of `genie report`.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "genie/common/status.hpp"
#include "genie/netsim/topology.hpp"
#include "genie/sched/coordinator.hpp"
#include "genie/sched/launcher.hpp"

namespace genie::sched {

/// Version of genie-report.json's schema (docs/report.md). Bumped on any incompatible change.
inline constexpr int kReportSchemaVersion = 1;

/// What the report describes: the coordinator's records plus how the job was launched and ended.
struct ReportInput {
  const JobRecord* job = nullptr;
  std::shared_ptr<const netsim::Topology> topology;
  std::string topology_name, device, engine, clock;
  std::vector<std::string> command;
  int nranks = 0, nodes = 0, gpus_per_node = 0;
  LaunchResult result;
  double wall_seconds = 0;
  /// Directory holding the real fabric's per-collective records (fabric-rank<R>.jsonl, genie run --compare sim);
  /// "" or absent files: none. They become the report's `fabric` section (real versus simulated).
  std::string fabric_dir;
  /// Limits that keep very long jobs' reports bounded (the totals stay exact).
  size_t max_collective_entries = 1000000;
  size_t max_trace_events = 2000000;
};

/// One line of the real fabric's records (fabric-rank<R>.jsonl, written by the shim; fields in docs/fabric.md).
struct FabricCallRecord {
  std::string comm;  ///< communicator id (hex)
  uint64_t seq = 0;  ///< the call's number on the communicator
  int64_t rank = 0, nranks = 0;
  std::string op;  ///< nccl-tests spelling ("all_reduce"); "" when absent
  uint64_t count = 0, bytes = 0;
  std::string datatype, algorithm, protocol, provider;
  int64_t channels = 0;
  double start_us = 0, real_us = 0;
  std::optional<double> sim_us;  ///< null (absent) without --compare sim
};

/// Parses one record line. Required: comm (string), seq (integer >= 0) and real_us (finite >= 0); the other
/// fields keep their defaults when absent. InvalidArgument names the JSON path of a missing or mistyped field.
Result<FabricCallRecord> parse_fabric_record(const std::string& line);

/// Writes DIR/genie-report.json and DIR/trace.json (DIR is created if missing). Errors: kSystem naming the
/// path that could not be written; nothing is half-written under the final names (temporary files are
/// renamed into place).
Status write_report(const std::string& dir, const ReportInput& in);

/// The compact summary printed on stderr at exit: per collective type (calls, bytes, time, busbw) and the
/// per-rank breakdown (compute, communication, exposed communication, idle).
std::string summary_text(const ReportInput& in);

/// Renders genie-report.json into a self-contained HTML page (inline SVG and CSS, a little inline script
/// that checks the charts rendered; no external fetches). Errors name the file and the JSON path.
Status render_html(const std::string& report_json_path, const std::string& out_html_path);
/// Same, from the report's text to the page's; `origin` names the report in errors.
Result<std::string> render_html_text(const std::string& report_json, const std::string& origin);

}  // namespace genie::sched
