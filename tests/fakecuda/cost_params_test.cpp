// SPDX-License-Identifier: Apache-2.0
// Tests of the cost parameters: every embedded preset loads, derived presets inherit the fit, documents round-trip
// and bad documents name the JSON path.
#include "genie/fakecuda/cost_params.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace genie::fakecuda {
namespace {

TEST(CostParams, EveryDevicePresetHasParameters) {
  std::vector<std::string> with_params = cost_param_presets();
  for (const std::string& preset : device_preset_names()) {
    EXPECT_NE(std::find(with_params.begin(), with_params.end(), preset), with_params.end()) << preset;
    auto p = preset_cost_params(preset);
    ASSERT_TRUE(p.is_ok()) << preset << ": " << p.status().to_string();
    EXPECT_EQ(p->device, preset);
  }
}

TEST(CostParams, DerivedPresetsInheritTheH200Fit) {
  auto h200 = preset_cost_params("h200");
  auto h100 = preset_cost_params("h100-sxm");
  ASSERT_TRUE(h200.is_ok() && h100.is_ok());
  for (int i = 0; i < kGemmMathCount; ++i)
    EXPECT_EQ(h100->gemm.math[i].efficiency, h200->gemm.math[i].efficiency) << gemm_math_name(GemmMath(i));
  EXPECT_EQ(h100->memory.copy_efficiency, h200->memory.copy_efficiency);
  EXPECT_NE(h100->source, h200->source);
}

TEST(CostParams, RoundTripAndOverrides) {
  CostParams p;
  p.device = "x";
  p.gemm.math[static_cast<int>(GemmMath::kTf32)].efficiency = 0.55;
  p.memory.fixed_ns = 1234;
  p.copy.pageable_latency_ns = 50000;
  auto back = parse_cost_params(cost_params_json(p), "p.json");
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(back->gemm.math[static_cast<int>(GemmMath::kTf32)].efficiency, 0.55);
  EXPECT_EQ(back->memory.fixed_ns, 1234);
  EXPECT_EQ(back->copy.pageable_latency_ns, 50000);
  auto derived = parse_cost_params(R"({"device": "y", "derived_from": "h200", "memory": {"fixed_ns": 1}})", "y.json");
  ASSERT_TRUE(derived.is_ok()) << derived.status().to_string();
  EXPECT_EQ(derived->memory.fixed_ns, 1);
  EXPECT_EQ(derived->gemm.math[0].efficiency, preset_cost_params("h200")->gemm.math[0].efficiency);
}

TEST(CostParams, ErrorsNameTheJsonPath) {
  auto e = parse_cost_params(R"({"gemm": {"math": {"bf16": {"efficiency": 1.5}}}})", "p.json");
  ASSERT_FALSE(e.is_ok());
  EXPECT_NE(e.status().message().find("p.json: /gemm/math/bf16/efficiency"), std::string::npos) << e.status().message();
  e = parse_cost_params(R"({"gemm": {"math": {"bf17": {}}}})", "p.json");
  ASSERT_FALSE(e.is_ok());
  EXPECT_NE(e.status().message().find("/gemm/math/bf17"), std::string::npos);
  e = parse_cost_params(R"({"memory": {"colour": 1}})", "p.json");
  ASSERT_FALSE(e.is_ok());
  EXPECT_NE(e.status().message().find("/memory/colour: unknown key"), std::string::npos);
  e = parse_cost_params(R"({"derived_from": "h900"})", "p.json");
  ASSERT_FALSE(e.is_ok());
  EXPECT_NE(e.status().message().find("/derived_from"), std::string::npos);
  EXPECT_FALSE(parse_cost_params("{", "p.json").is_ok());
}

}  // namespace
}  // namespace genie::fakecuda
