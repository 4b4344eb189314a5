// SPDX-License-Identifier: Apache-2.0
// Fuzz target: configuration input, a JSON config file (GENIE_CONFIG) or environment values. Byte 0 even: the
// rest is a config file for Config::merge_json; odd: the rest is an environment, one NAME=VALUE per line, for
// Config::load. Whatever the bytes, loading returns a Config or a Status (no exception: Config::get parses
// every value it accepted); every value set re-validates, a file's values written back as a file load to the
// same values, and the string formats read from parameters and flags (NCCL_ALGO / NCCL_PROTO lists through
// the tuning model, sizes, rates, clock and engine names, the job secret) give a value or a Status.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "fuzz_check.hpp"
#include "genie/common/config.hpp"
#include "genie/netsim/schedule.hpp"
#include "genie/netsim/simulator.hpp"
#include "genie/netsim/sweep.hpp"
#include "genie/netsim/topology.hpp"
#include "genie/sched/clock.hpp"
#include "genie/sched/coordinator.hpp"
#include "genie/sched/testbed.hpp"

extern "C" {
size_t genie_fuzz_accepted = 0;
}

namespace {

using namespace genie;
using config::Config;

// One parameter of each type, so that Config::get's conversions run on whatever the fuzzer puts in them
// (GENIE_FUZZ_FLAG, GENIE_FUZZ_COUNT, GENIE_FUZZ_RATIO, GENIE_FUZZ_MODE, or {"fuzz": {...}} in a file).
const config::Param<bool> kFlag{"fuzz.flag", false, "fuzz target: a boolean"};
const config::Param<int64_t> kCount{"fuzz.count", 4, "fuzz target: an integer", {}, -1e6, 1e18};
const config::Param<double> kRatio{"fuzz.ratio", 0.5, "fuzz target: a number", {}, 0.0, 1e300};
const config::Param<std::string> kMode{"fuzz.mode", "a", "fuzz target: a choice", {"a", "bb", ""}};

void check_values(const Config& c) {
  for (const config::ParamInfo& p : config::Registry::instance().all()) {
    const std::string text = c.text(p.key);
    if (c.source(p.key) == config::Source::kDefault) continue;
    const Status st = config::validate(p, text, "re-check");
    GENIE_FUZZ_CHECK(st.is_ok(), "an accepted value does not validate: " + st.message());
  }
  (void)c.get(kFlag);
  const int64_t n = c.get(kCount);
  GENIE_FUZZ_CHECK(n >= -1000000 && n <= 1000000000000000000, "fuzz.count outside its bounds");
  const double r = c.get(kRatio);
  GENIE_FUZZ_CHECK(r >= 0 && r <= 1e300, "fuzz.ratio outside its bounds");
  const std::string m = c.get(kMode);
  GENIE_FUZZ_CHECK(m == "a" || m == "bb" || m.empty(), "fuzz.mode not one of its choices");
  (void)c.describe();
}

const netsim::Topology& topology() {
  static const auto t = netsim::load_topology("hgx-h100", {}).value();
  return *t;
}

/// The NCCL_* values steer the tuning model: a bad list or number is a Status, never a crash.
void check_nccl_env(const Config& c) {
  const netsim::NcclEnv env = netsim::NcclEnv::from_config(c);
  for (auto coll : {netsim::Collective::kAllReduce, netsim::Collective::kAllGather, netsim::Collective::kBroadcast,
                    netsim::Collective::kSendRecv}) {
    netsim::CollectiveSpec spec;
    spec.collective = coll;
    spec.count = 1 << 16;
    spec.nranks = coll == netsim::Collective::kSendRecv ? 2 : 8;
    auto s = netsim::plan_collective(spec, topology(), env, netsim::ScheduleForm::kCompact);
    if (s.is_ok()) {
      GENIE_FUZZ_CHECK(s.value().tuning.nchannels >= 1, "a schedule without channels");
    }
  }
}

/// Every other string format a value may be read as.
void check_formats(const std::string& v) {
  auto size = netsim::parse_size(v);
  (void)size;
  auto rate = sched::parse_rate(v);
  if (rate.is_ok()) GENIE_FUZZ_CHECK(rate.value() >= 1e6 && rate.value() <= 100e9, "a rate outside its range");
  (void)netsim::parse_engine(v);
  (void)netsim::parse_collective(v);
  (void)netsim::parse_algorithm(v);
  (void)netsim::parse_protocol(v);
  (void)netsim::parse_datatype(v);
  (void)netsim::parse_redop(v);
  sched::ClockMode mode;
  (void)sched::parse_clock_mode(v.c_str(), &mode);
  auto secret = sched::secret_from_hex(v);
  if (secret.is_ok()) {
    std::string lower = v;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    GENIE_FUZZ_CHECK(sched::secret_to_hex(secret.value()) == lower, "the job secret does not round-trip");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text = fuzz::text_of(data + 1, size - 1);
  if ((data[0] & 1) == 0) {
    auto loaded = Config::load({});
    if (!loaded.is_ok()) return 0;
    Config c = loaded.value();
    const Status st = c.merge_json(text, "fuzz.json");
    if (!st.is_ok()) {
      GENIE_FUZZ_CHECK(st.message().rfind("fuzz.json", 0) == 0, "the error does not name the file: " + st.message());
      return 0;
    }
    ++genie_fuzz_accepted;
    check_values(c);
    // The file's values, written back as a flat file, load to the same values.
    nlohmann::json back = nlohmann::json::object();
    for (const config::ParamInfo& p : config::Registry::instance().all())
      if (c.source(p.key) == config::Source::kFile) back[p.key] = c.text(p.key);
    Config d = Config::load({}).value();
    const Status again = d.merge_json(back.dump(), "round trip");
    GENIE_FUZZ_CHECK(again.is_ok(), "the values written back do not load: " + again.message());
    for (const config::ParamInfo& p : config::Registry::instance().all())
      GENIE_FUZZ_CHECK(c.text(p.key) == d.text(p.key), "value of " + p.key + " changed in the round trip");
    check_nccl_env(c);
    return 0;
  }
  Config::EnvMap env;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    const size_t eq = line.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    const std::string name = line.substr(0, eq);
    if (name == "GENIE_CONFIG") continue;  // names a file: the file target is the JSON mode
    env[name] = line.substr(eq + 1);
  }
  for (const auto& [k, v] : env) check_formats(v);
  auto loaded = Config::load(env);
  if (!loaded.is_ok()) {
    GENIE_FUZZ_CHECK(loaded.status().message().find("environment variable ") != std::string::npos,
                     "the error does not name the variable: " + loaded.status().message());
    return 0;
  }
  ++genie_fuzz_accepted;
  check_values(loaded.value());
  check_nccl_env(loaded.value());
  return 0;
}
