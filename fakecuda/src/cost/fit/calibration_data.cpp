// SPDX-License-Identifier: Apache-2.0
// Loading a calibration directory: gemm.csv, membound.csv and device.json, with errors naming file and line.
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "genie/fakecuda/calibration.hpp"

namespace genie::fakecuda {
namespace {

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return invalid_argument("calibration: cannot read '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string f;
  while (std::getline(ss, f, ',')) out.push_back(f);
  return out;
}

/// Rows of a CSV file (`text`, read from `path`) with the expected header; each row has the header's field count.
Result<std::vector<std::vector<std::string>>> read_csv(const std::string& text, const std::string& path,
                                                       const std::string& header) {
  std::stringstream ss(text);
  std::string line;
  std::vector<std::vector<std::string>> rows;
  auto next = [&](std::string* l) {  // a line without its CR (the calibration files have CRLF endings)
    if (!std::getline(ss, *l)) return false;
    if (!l->empty() && l->back() == '\r') l->pop_back();
    return true;
  };
  if (!next(&line) || line != header)
    return invalid_argument(path + ":1: expected the header '" + header + "'");
  const size_t fields = split_csv(header).size();
  for (int n = 2; next(&line); ++n) {
    if (line.empty()) continue;
    auto f = split_csv(line);
    if (f.size() != fields)
      return invalid_argument(path + ":" + std::to_string(n) + ": expected " + std::to_string(fields) + " fields");
    rows.push_back(std::move(f));
  }
  return rows;
}

/// The whole field as a finite number in (0, kMaxMeasurement].
bool to_positive(const std::string& s, double* out) {
  // 2^53: far above any measured size or time, and the largest range in which a double converts to the
  // int64 sizes exactly (converting a bigger one, or NaN or infinity, is undefined behaviour).
  constexpr double kMaxMeasurement = 9007199254740992.0;
  try {
    size_t pos = 0;
    *out = std::stod(s, &pos);
    return pos == s.size() && *out > 0 && *out <= kMaxMeasurement;
  } catch (const std::exception&) {
    return false;
  }
}

/// The whole field as a whole number in [1, kMaxMeasurement] (a size: a GEMM dimension, elements, bytes).
bool to_count(const std::string& s, int64_t* out) {
  double v;
  if (!to_positive(s, &v) || v < 1 || std::floor(v) != v) return false;
  *out = static_cast<int64_t>(v);
  return true;
}

}  // namespace

Result<CalibrationData> load_calibration(const std::string& dir) {
  GENIE_ASSIGN_OR_RETURN(std::string gemm, read_file(dir + "/gemm.csv"));
  GENIE_ASSIGN_OR_RETURN(std::string membound, read_file(dir + "/membound.csv"));
  GENIE_ASSIGN_OR_RETURN(std::string device, read_file(dir + "/device.json"));
  return parse_calibration(gemm, membound, device, dir);
}

Result<CalibrationData> parse_calibration(const std::string& gemm_csv, const std::string& membound_csv,
                                          const std::string& device_json, const std::string& dir) {
  CalibrationData d;
  d.dir = dir;
  {
    const std::string path = dir + "/gemm.csv";
    GENIE_ASSIGN_OR_RETURN(auto rows, read_csv(gemm_csv, path, "dtype,kind,M,N,K,time_us,tflops"));
    int line = 1;
    for (const auto& r : rows) {
      ++line;
      GemmMeasurement g;
      g.dtype = r[0];
      g.kind = r[1];
      double t;
      if (!to_count(r[2], &g.m) || !to_count(r[3], &g.n) || !to_count(r[4], &g.k) || !to_positive(r[5], &t))
        return invalid_argument(path + ":" + std::to_string(line) +
                                ": M, N and K must be positive whole numbers, time_us a positive number");
      GemmMath math;
      if (!parse_gemm_math(g.dtype, &math))
        return invalid_argument(path + ":" + std::to_string(line) + ": unknown dtype '" + g.dtype + "'");
      g.time_us = t;
      d.gemm.push_back(g);
    }
  }
  {
    const std::string path = dir + "/membound.csv";
    GENIE_ASSIGN_OR_RETURN(auto rows, read_csv(membound_csv, path, "dtype,op,elements,time_us,eff_GBps"));
    int line = 1;
    for (const auto& r : rows) {
      ++line;
      MemboundMeasurement m;
      m.dtype = r[0];
      m.op = r[1];
      double t;
      if (!to_count(r[2], &m.elements) || !to_positive(r[3], &t))
        return invalid_argument(path + ":" + std::to_string(line) +
                                ": elements must be a positive whole number, time_us a positive number");
      if (m.dtype != "bf16" && m.dtype != "fp32")
        return invalid_argument(path + ":" + std::to_string(line) + ": unknown dtype '" + m.dtype + "'");
      if (m.op != "copy" && m.op != "add")
        return invalid_argument(path + ":" + std::to_string(line) + ": unknown op '" + m.op + "'");
      m.time_us = t;
      d.membound.push_back(m);
    }
  }
  {
    const std::string path = dir + "/device.json";
    nlohmann::json doc;
    try {
      doc = nlohmann::json::parse(device_json);
    } catch (const std::exception& e) {
      return invalid_argument(path + ": not valid JSON: " + e.what());
    }
    if (!doc.is_object() || !doc.contains("measurements") || !doc["measurements"].is_object())
      return invalid_argument(path + ": /measurements: an object is required");
    for (auto it = doc["measurements"].begin(); it != doc["measurements"].end(); ++it) {
      const std::string& key = it.key();
      if (key == "tiny_kernel_launch_us_host") {
        if (!it.value().is_number() || !(it.value().get<double>() >= 0))
          return invalid_argument(path + ": /measurements/" + key + ": a number >= 0");
        d.tiny_kernel_launch_us = it.value().get<double>();
        continue;
      }
      // <kind>_<bytes> with kind h2d_pinned, d2h_pinned, h2d_pageable, d2d: {"us": t, "GBps": b}
      size_t cut = key.rfind('_');
      if (cut == std::string::npos) continue;
      std::string kind = key.substr(0, cut);
      if (kind != "h2d_pinned" && kind != "d2h_pinned" && kind != "h2d_pageable" && kind != "d2d") continue;
      int64_t bytes;
      if (!to_count(key.substr(cut + 1), &bytes))
        return invalid_argument(path + ": /measurements/" + key + ": the name must end in a byte count");
      if (!it.value().is_object() || !it.value().contains("us") || !it.value()["us"].is_number() ||
          !(it.value()["us"].get<double>() > 0))
        return invalid_argument(path + ": /measurements/" + key + "/us: a positive number is required");
      d.copies.push_back({kind, bytes, it.value()["us"].get<double>()});
    }
  }
  if (d.gemm.empty() || d.membound.empty() || d.copies.empty())
    return invalid_argument("calibration: " + dir + " lacks GEMM, bandwidth or copy measurements");
  return d;
}

}  // namespace genie::fakecuda
