// SPDX-License-Identifier: Apache-2.0
// Fuzz target: calibration directories read by `genie calibrate --fit DIR` (gemm.csv, membound.csv and
// device.json, the tests/data/calibration/<device>/ layout). The input is the three files, separated by lines
// "--8<--". Whatever the bytes, parse_calibration returns the measurements or a Status naming the file; every
// measurement has positive sizes and a positive finite time, and evaluating the preset's parameters on them
// (the error tables and the SVG plot `genie calibrate` writes) runs without a crash.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "fuzz_check.hpp"
#include "genie/fakecuda/calibration.hpp"

extern "C" {
size_t genie_fuzz_accepted = 0;
}

namespace {

using namespace genie::fakecuda;

const DeviceSpec& h200() {
  static const DeviceSpec spec = load_device_spec("h200").value();
  return spec;
}

bool positive_time(double us) { return std::isfinite(us) && us > 0; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = genie::fuzz::split(genie::fuzz::text_of(data, size));
  if (parts.size() != 3) return 0;
  auto r = parse_calibration(parts[0], parts[1], parts[2], "fuzzdir");
  if (!r.is_ok()) {
    const std::string m = r.status().message();
    GENIE_FUZZ_CHECK(m.rfind("fuzzdir/", 0) == 0 || m.rfind("calibration: fuzzdir", 0) == 0,
                     "the error does not name the file: " + m);
    return 0;
  }
  ++genie_fuzz_accepted;
  const CalibrationData& d = r.value();
  for (const auto& g : d.gemm) {
    GENIE_FUZZ_CHECK(g.m > 0 && g.n > 0 && g.k > 0, "a GEMM measurement without a positive shape");
    GENIE_FUZZ_CHECK(positive_time(g.time_us), "a GEMM measurement without a positive time");
  }
  for (const auto& m : d.membound) {
    GENIE_FUZZ_CHECK(m.elements > 0 && positive_time(m.time_us), "a bandwidth measurement out of range");
  }
  for (const auto& c : d.copies) {
    GENIE_FUZZ_CHECK(c.bytes > 0 && positive_time(c.time_us), "a copy measurement out of range");
  }
  GENIE_FUZZ_CHECK(std::isfinite(d.tiny_kernel_launch_us) && d.tiny_kernel_launch_us >= 0,
                   "the launch measurement is not a non-negative number");
  const FitResult fit = evaluate_cost_model(d, h200(), cost_params_for(h200()), 5.0, 5.0);
  GENIE_FUZZ_CHECK(fit.points.size() == d.gemm.size() + d.membound.size() + d.copies.size(),
                   "evaluation lost or gained points");
  (void)fit_report_markdown(fit);
  (void)fit_plot_svg(fit, "fuzz");
  return 0;
}
