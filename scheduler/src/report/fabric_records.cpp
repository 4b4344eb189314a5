// SPDX-License-Identifier: Apache-2.0
// The real fabric's per-collective records (fabric-rank<R>.jsonl, docs/fabric.md): one strict line reader for
// the report's fabric section and the summary `genie run --compare sim` prints.
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "genie/sched/report.hpp"

namespace genie::sched {
namespace {

using nlohmann::json;

Status bad(const std::string& key, const std::string& what) { return invalid_argument("$." + key + ": " + what); }

/// An unsigned integer field; `required` fields must be present.
Status read_unsigned(const json& j, const char* key, bool required, uint64_t* out) {
  auto it = j.find(key);
  if (it == j.end()) return required ? bad(key, "missing") : Status::ok();
  if (!it->is_number_unsigned()) return bad(key, "expected a non-negative integer, got " + std::string(it->type_name()));
  *out = it->get<uint64_t>();
  return Status::ok();
}

Status read_int(const json& j, const char* key, int64_t lo, int64_t hi, int64_t* out) {
  auto it = j.find(key);
  if (it == j.end()) return Status::ok();
  if (!it->is_number_integer()) return bad(key, "expected an integer, got " + std::string(it->type_name()));
  if (it->is_number_unsigned() ? it->get<uint64_t>() > static_cast<uint64_t>(hi)
                               : it->get<int64_t>() < lo || it->get<int64_t>() > hi)
    return bad(key, "out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  *out = it->get<int64_t>();
  return Status::ok();
}

/// A finite number >= 0 (times in microseconds).
Status read_time(const json& j, const char* key, bool required, double* out) {
  auto it = j.find(key);
  if (it == j.end()) return required ? bad(key, "missing") : Status::ok();
  if (!it->is_number()) return bad(key, "expected a number, got " + std::string(it->type_name()));
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < 0) return bad(key, "expected a finite time >= 0");
  *out = v;
  return Status::ok();
}

Status read_string(const json& j, const char* key, bool required, std::string* out) {
  auto it = j.find(key);
  if (it == j.end()) return required ? bad(key, "missing") : Status::ok();
  if (!it->is_string()) return bad(key, "expected a string, got " + std::string(it->type_name()));
  *out = it->get<std::string>();
  return Status::ok();
}

}  // namespace

Result<FabricCallRecord> parse_fabric_record(const std::string& line) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return invalid_argument("not a JSON line");
  if (!j.is_object()) return invalid_argument("$: expected an object");
  FabricCallRecord r;
  constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();
  GENIE_TRY(read_string(j, "comm", true, &r.comm));
  GENIE_TRY(read_unsigned(j, "seq", true, &r.seq));
  GENIE_TRY(read_int(j, "rank", 0, kMaxInt, &r.rank));
  GENIE_TRY(read_int(j, "nranks", 0, kMaxInt, &r.nranks));
  GENIE_TRY(read_string(j, "op", false, &r.op));
  GENIE_TRY(read_unsigned(j, "count", false, &r.count));
  GENIE_TRY(read_unsigned(j, "bytes", false, &r.bytes));
  GENIE_TRY(read_string(j, "datatype", false, &r.datatype));
  GENIE_TRY(read_string(j, "algorithm", false, &r.algorithm));
  GENIE_TRY(read_string(j, "protocol", false, &r.protocol));
  GENIE_TRY(read_int(j, "channels", 0, kMaxInt, &r.channels));
  GENIE_TRY(read_string(j, "provider", false, &r.provider));
  GENIE_TRY(read_time(j, "start_us", false, &r.start_us));
  GENIE_TRY(read_time(j, "real_us", true, &r.real_us));
  if (auto it = j.find("sim_us"); it != j.end() && !it->is_null()) {
    double v = 0;
    GENIE_TRY(read_time(j, "sim_us", true, &v));
    r.sim_us = v;
  }
  return r;
}

}  // namespace genie::sched
