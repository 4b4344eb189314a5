// SPDX-License-Identifier: Apache-2.0
// Fuzz target: measured kernel tables (GENIE_FAKECUDA_COST_TABLE, `genie cost --table`, the output of `genie
// calibrate --from-trace`). The input is the file. Whatever the bytes, parse_kernel_table returns a table or a
// Status naming the file; every entry has a duration in [0, SimTime::max()), the table re-serialises to a
// document that parses to the same entries, and the cost model built from it answers each entry's own kernel
// name and shape from the table (the kernel-name classifier and demangler run on every name).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "fuzz_check.hpp"
#include "genie/fakecuda/cost_model.hpp"
#include "genie/fakecuda/cost_params.hpp"
#include "genie/fakecuda/family_cost_model.hpp"

extern "C" {
size_t genie_fuzz_accepted = 0;
}

namespace {

using namespace genie::fakecuda;
using nlohmann::json;

std::string table_json(const KernelTable& t) {
  json kernels = json::array();
  for (const auto& [name, e] : t) {
    json k = {{"name", name}, {"duration_us", static_cast<double>(e.duration.count_ns()) / 1e3}};
    if (e.has_shape) {
      k["grid"] = {e.shape.grid[0], e.shape.grid[1], e.shape.grid[2]};
      k["block"] = {e.shape.block[0], e.shape.block[1], e.shape.block[2]};
    }
    if (e.has_shared_mem) k["shared_mem"] = e.shape.shared_mem;
    kernels.push_back(std::move(k));
  }
  return json{{"kernels", kernels}}.dump();
}

bool same_entry(const KernelTableEntry& a, const KernelTableEntry& b) {
  return a.has_shape == b.has_shape && a.has_shared_mem == b.has_shared_mem && a.duration == b.duration &&
         (!a.has_shape || a.shape == b.shape) && (!a.has_shared_mem || a.shape.shared_mem == b.shape.shared_mem);
}

const DeviceSpec& h200() {
  static const DeviceSpec spec = load_device_spec("h200").value();
  return spec;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto r = parse_kernel_table(genie::fuzz::text_of(data, size), "fuzz.json");
  if (!r.is_ok()) {
    GENIE_FUZZ_CHECK(r.status().message().rfind("fuzz.json: ", 0) == 0,
                     "the error does not name the file: " + r.status().message());
    return 0;
  }
  ++genie_fuzz_accepted;
  const KernelTable& table = r.value();
  for (const auto& [name, e] : table) {
    GENIE_FUZZ_CHECK(e.duration >= genie::SimTime::zero() && e.duration < genie::SimTime::max(),
                     "entry " + name + " has a duration outside [0, SimTime::max())");
  }
  auto again = parse_kernel_table(table_json(table), "round trip");
  GENIE_FUZZ_CHECK(again.is_ok(), "the re-serialised table does not parse: " + again.status().message());
  const KernelTable& back = again.value();
  GENIE_FUZZ_CHECK(back.size() == table.size(), "entry count changed in the round trip");
  for (auto a = table.begin(), b = back.begin(); a != table.end(); ++a, ++b) {
    GENIE_FUZZ_CHECK(a->first == b->first && same_entry(a->second, b->second), "entry " + a->first + " changed");
  }
  if (table.size() > 64) return 0;  // the model check below is per entry
  FamilyCostModel model(h200(), table, cost_params_for(h200()));
  for (const auto& [name, e] : table) {
    KernelShape shape = e.shape;
    const KernelEstimate est = model.explain_kernel(name, shape);
    GENIE_FUZZ_CHECK(est.source.rfind("table", 0) == 0, "entry " + name + " is not used for its own shape");
    GENIE_FUZZ_CHECK(est.duration >= h200().kernel_floor, "a kernel shorter than the device's floor");
  }
  return 0;
}
