// SPDX-License-Identifier: Apache-2.0
// Fuzz target: cost-model parameter files (GENIE_FAKECUDA_COST_PARAMS, `genie cost --params`, the output of
// `genie calibrate --fit`, the fakecuda/cost/*.json schema). The input is the file. Whatever the bytes,
// parse_cost_params returns parameters or a Status naming the file; parameters re-serialise (cost_params_json)
// to a document that parses to the same parameters, and the cost model built from them gives every GEMM,
// attention, streaming, copy and memset a duration in [0, SimTime::max()).
#include <cstddef>
#include <cstdint>

#include "fuzz_check.hpp"
#include "genie/fakecuda/cost_params.hpp"
#include "genie/fakecuda/family_cost_model.hpp"

extern "C" {
size_t genie_fuzz_accepted = 0;
}

namespace {

using namespace genie::fakecuda;

const DeviceSpec& h200() {
  static const DeviceSpec spec = load_device_spec("h200").value();
  return spec;
}

void check_duration(genie::SimTime t, const char* what) {
  GENIE_FUZZ_CHECK(t >= genie::SimTime::zero() && t < genie::SimTime::max(), std::string(what) + " out of range");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto r = parse_cost_params(genie::fuzz::text_of(data, size), "fuzz.json");
  if (!r.is_ok()) {
    const std::string m = r.status().message();
    // A "derived_from" preset is named by its own file in errors found there.
    GENIE_FUZZ_CHECK(m.rfind("fuzz.json: ", 0) == 0, "the error does not name the file: " + m);
    return 0;
  }
  ++genie_fuzz_accepted;
  const std::string doc = cost_params_json(r.value());
  auto again = parse_cost_params(doc, "round trip");
  GENIE_FUZZ_CHECK(again.is_ok(), "cost_params_json output does not parse: " + again.status().message());
  GENIE_FUZZ_CHECK(cost_params_json(again.value()) == doc, "the parameters changed in the round trip");

  FamilyCostModel model(h200(), {}, r.value());
  for (int m = 0; m < kGemmMathCount; ++m) {
    for (int64_t dim : {int64_t{1}, int64_t{8192}}) {
      GemmShape g;
      g.m = dim;
      g.n = 4096;
      g.k = dim;
      g.math = static_cast<GemmMath>(m);
      check_duration(model.gemm(g), "a GEMM duration");
    }
  }
  for (bool backward : {false, true}) {
    AttentionShape a;
    a.batch = 8;
    a.heads_q = a.heads_kv = 16;
    a.seq_q = a.seq_kv = 2048;
    a.head_dim = 128;
    a.backward = backward;
    check_duration(model.attention(a), "an attention duration");
  }
  check_duration(model.streaming(1 << 30, 1 << 28, GemmMath::kBf16), "a streaming duration");
  for (int k = 0; k < 5; ++k)
    for (bool pinned : {false, true}) check_duration(model.copy(static_cast<CopyKind>(k), 1 << 26, pinned), "a copy");
  check_duration(model.memset(1 << 26), "a memset duration");
  check_duration(model.kernel("_Z16vectorAdd_kernelPKfS0_Pfi", KernelShape{}), "a kernel duration");
  return 0;
}
