// SPDX-License-Identifier: Apache-2.0
// Kineto Chrome-trace import: kernel events grouped by (name, grid, block), summarised by their median duration.
#include "genie/fakecuda/trace_import.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "genie/fakecuda/cost_model.hpp"

namespace genie::fakecuda {
namespace {

using nlohmann::json;

bool read_dim3(const json& j, uint32_t out[3]) {
  if (!j.is_array() || j.empty() || j.size() > 3) return false;
  for (size_t i = 0; i < 3; ++i) {
    if (i >= j.size()) {
      out[i] = 1;
      continue;
    }
    if (!j[i].is_number_integer() || j[i].get<int64_t>() <= 0 || j[i].get<int64_t>() > 0xffffffffLL) return false;
    out[i] = static_cast<uint32_t>(j[i].get<int64_t>());
  }
  return true;
}

bool is_kernel_category(const json& cat) {
  if (!cat.is_string()) return false;
  std::string c = cat.get<std::string>();
  std::transform(c.begin(), c.end(), c.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return c == "kernel";
}

}  // namespace

Result<TraceImport> parse_kineto_trace(const std::string& text, const std::string& origin) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const std::exception& e) {
    return invalid_argument(origin + ": not valid JSON: " + e.what());
  }
  if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array())
    return invalid_argument(origin + ": /traceEvents: an array of events is required (a PyTorch profiler trace "
                                     "written by export_chrome_trace)");
  TraceImport out;
  if (doc.contains("deviceProperties") && doc["deviceProperties"].is_array() && !doc["deviceProperties"].empty() &&
      doc["deviceProperties"][0].is_object() && doc["deviceProperties"][0].contains("name") &&
      doc["deviceProperties"][0]["name"].is_string())
    out.device = doc["deviceProperties"][0]["name"].get<std::string>();

  using Key = std::tuple<std::string, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t>;
  std::map<Key, std::vector<double>> groups;
  const json& events = doc["traceEvents"];
  for (size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    const std::string path = origin + ": /traceEvents/" + std::to_string(i);
    if (!e.is_object()) return invalid_argument(path + ": an event object is required");
    if (!e.contains("ph") || e["ph"] != "X" || !e.contains("cat") || !is_kernel_category(e["cat"])) continue;
    if (!e.contains("name") || !e["name"].is_string() || e["name"].get<std::string>().empty())
      return invalid_argument(path + "/name: a kernel event needs a non-empty name");
    if (!e.contains("dur") || !e["dur"].is_number() || !(e["dur"].get<double>() >= 0) ||
        e["dur"].get<double>() > kMaxKernelDurationUs)
      return invalid_argument(path + "/dur: a kernel event needs a duration in microseconds in [0, 3.6e9] (one hour)");
    if (!e.contains("args") || !e["args"].is_object())
      return invalid_argument(path + "/args: a kernel event needs args with grid and block");
    uint32_t grid[3], block[3];
    if (!e["args"].contains("grid") || !read_dim3(e["args"]["grid"], grid))
      return invalid_argument(path + "/args/grid: an array of 1-3 positive integers is required");
    if (!e["args"].contains("block") || !read_dim3(e["args"]["block"], block))
      return invalid_argument(path + "/args/block: an array of 1-3 positive integers is required");
    groups[{e["name"].get<std::string>(), grid[0], grid[1], grid[2], block[0], block[1], block[2]}].push_back(
        e["dur"].get<double>());
    ++out.kernel_events;
  }
  if (out.kernel_events == 0)
    return invalid_argument(origin + ": /traceEvents: no kernel events (\"ph\": \"X\", \"cat\": \"kernel\"): was the "
                                     "profiler run with ProfilerActivity.CUDA on a GPU?");
  for (auto& [key, durs] : groups) {
    TraceKernelEntry k;
    std::tie(k.name, k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2]) = key;
    std::sort(durs.begin(), durs.end());
    k.calls = static_cast<int>(durs.size());
    size_t n = durs.size();
    k.median_us = n % 2 ? durs[n / 2] : (durs[n / 2 - 1] + durs[n / 2]) / 2;
    k.min_us = durs.front();
    k.max_us = durs.back();
    out.kernels.push_back(std::move(k));
  }
  return out;
}

Result<TraceImport> import_kineto_trace(const std::string& path) {
  std::ifstream in(path);
  if (!in) return invalid_argument("cannot read trace file '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_kineto_trace(ss.str(), path);
}

std::string kernel_table_json(const TraceImport& t, const std::string& source) {
  json doc = json::object();
  doc["source"] = source;
  if (!t.device.empty()) doc["device"] = t.device;
  json kernels = json::array();
  for (const TraceKernelEntry& k : t.kernels) {
    kernels.push_back({{"name", k.name},
                       {"grid", {k.grid[0], k.grid[1], k.grid[2]}},
                       {"block", {k.block[0], k.block[1], k.block[2]}},
                       {"duration_us", k.median_us},
                       {"calls", k.calls},
                       {"min_us", k.min_us},
                       {"max_us", k.max_us}});
  }
  doc["kernels"] = kernels;
  return doc.dump(1) + "\n";
}

}  // namespace genie::fakecuda
