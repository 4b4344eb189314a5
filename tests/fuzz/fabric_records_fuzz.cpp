// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the real fabric's records (fabric-rank<R>.jsonl, written by the shim with --compare sim), read
// by the report writer's fabric section and by the summary `genie run` prints. The input is a file; each line
// goes to parse_fabric_record. Whatever the bytes, a line gives a record or a Status naming the JSON path;
// a record's times are finite and >= 0, and it re-serialises to a line that parses to the same record.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "fuzz_check.hpp"
#include "genie/sched/report.hpp"

extern "C" {
size_t genie_fuzz_accepted = 0;
}

namespace {

using genie::sched::FabricCallRecord;

std::string line_of(const FabricCallRecord& r) {
  nlohmann::json j = {{"comm", r.comm},         {"seq", r.seq},       {"rank", r.rank},
                      {"nranks", r.nranks},     {"op", r.op},         {"count", r.count},
                      {"bytes", r.bytes},       {"datatype", r.datatype}, {"algorithm", r.algorithm},
                      {"protocol", r.protocol}, {"channels", r.channels}, {"provider", r.provider},
                      {"start_us", r.start_us}, {"real_us", r.real_us}};
  j["sim_us"] = r.sim_us ? nlohmann::json(*r.sim_us) : nlohmann::json(nullptr);
  return j.dump();
}

bool same(const FabricCallRecord& a, const FabricCallRecord& b) {
  return a.comm == b.comm && a.seq == b.seq && a.rank == b.rank && a.nranks == b.nranks && a.op == b.op &&
         a.count == b.count && a.bytes == b.bytes && a.datatype == b.datatype && a.algorithm == b.algorithm &&
         a.protocol == b.protocol && a.channels == b.channels && a.provider == b.provider &&
         a.start_us == b.start_us && a.real_us == b.real_us && a.sim_us == b.sim_us;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = genie::fuzz::text_of(data, size);
  bool any = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    auto r = genie::sched::parse_fabric_record(line);
    if (!r.is_ok()) {
      GENIE_FUZZ_CHECK(r.status().code() == genie::Errc::kInvalidArgument && !r.status().message().empty(),
                       "a bad line is not an InvalidArgument with a message");
      continue;
    }
    any = true;
    const FabricCallRecord& rec = r.value();
    GENIE_FUZZ_CHECK(std::isfinite(rec.real_us) && rec.real_us >= 0 && std::isfinite(rec.start_us) &&
                         rec.start_us >= 0 && (!rec.sim_us || (std::isfinite(*rec.sim_us) && *rec.sim_us >= 0)),
                     "a record's time is not finite and >= 0");
    auto again = genie::sched::parse_fabric_record(line_of(rec));
    GENIE_FUZZ_CHECK(again.is_ok(), "a re-serialised record does not parse: " + again.status().message());
    GENIE_FUZZ_CHECK(same(rec, again.value()), "a record changed in the round trip");
  }
  if (any) ++genie_fuzz_accepted;
  return 0;
}
