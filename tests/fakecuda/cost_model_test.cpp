// SPDX-License-Identifier: Apache-2.0
// Tests of the v1 cost model: table lookup order, default rule, floor, copies, bad tables.
#include "genie/fakecuda/cost_model.hpp"

#include <gtest/gtest.h>

namespace genie::fakecuda {
namespace {

DeviceSpec h200() { return load_device_spec("h200").value(); }

KernelShape shape(uint32_t grid, uint32_t block) {
  KernelShape s;
  s.grid[0] = grid;
  s.block[0] = block;
  return s;
}

TEST(TableCostModel, ExactShapeBeatsNameOnlyBeatsDefault) {
  auto table = TableCostModel::parse_table(R"({"kernels": [
      {"name": "k", "duration_us": 50},
      {"name": "k", "grid": [4], "block": [128], "duration_us": 20}]})", "t.json");
  ASSERT_TRUE(table.is_ok()) << table.status().to_string();
  TableCostModel m(h200(), table.value());
  EXPECT_EQ(m.kernel("k", shape(4, 128)), SimTime::us(20));
  EXPECT_EQ(m.kernel("k", shape(8, 128)), SimTime::us(50));
  // Unknown kernel, tiny launch: the preset's kernel floor.
  EXPECT_EQ(m.kernel("other", shape(1, 32)), h200().kernel_floor);
}

TEST(TableCostModel, DefaultRuleScalesWithThreadsAtHbmBandwidth) {
  // 2^24 blocks x 256 threads x 16 B/thread = 64 GiB of traffic at 0.86 x 4.8 TB/s = ~16.6 ms.
  TableCostModel m(h200(), {});
  SimTime t = m.kernel("elementwise", shape(1u << 24, 256));
  double expected_s = (double(1u << 24) * 256 * TableCostModel::kDefaultBytesPerThread) / (4.8e12 * 0.86);
  EXPECT_NEAR(t.to_seconds(), expected_s, expected_s * 1e-6);
  EXPECT_GT(m.kernel("elementwise", shape(1u << 25, 256)), t);
}

TEST(TableCostModel, CopiesFollowTheCalibratedBandwidths) {
  // Calibration (h200/device.json): pinned H2D of 256 MiB took 4863 us; D2D of 256 MiB took 131 us.
  TableCostModel m(h200(), {});
  double h2d_us = m.copy(CopyKind::kHostToDevice, 256u << 20, true).to_us();
  EXPECT_NEAR(h2d_us, 4863.3, 4863.3 * 0.05);
  double d2d_us = m.copy(CopyKind::kDeviceToDevice, 256u << 20, true).to_us();
  EXPECT_NEAR(d2d_us, 131.3, 131.3 * 0.05);
  EXPECT_GT(m.copy(CopyKind::kHostToDevice, 1 << 20, false), m.copy(CopyKind::kHostToDevice, 1 << 20, true));
}

TEST(TableCostModel, BadTablesNameThePath) {
  auto r = TableCostModel::parse_table(R"({"kernels": [{"name": "k"}]})", "t.json");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("/kernels/0/duration_us"), std::string::npos);
  r = TableCostModel::parse_table(R"({"kernels": [{"name": "k", "duration_us": 1, "grid": [0]}]})", "t.json");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("/kernels/0/grid"), std::string::npos);
  r = TableCostModel::parse_table(R"({"kernels": [{"name": "k", "duration_us": 1, "colour": 1}]})", "t.json");
  EXPECT_FALSE(r.is_ok());
  EXPECT_FALSE(TableCostModel::parse_table("[", "t.json").is_ok());
  EXPECT_FALSE(TableCostModel::load_table("/nonexistent.json").is_ok());
}

}  // namespace
}  // namespace genie::fakecuda
