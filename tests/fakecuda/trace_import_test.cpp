// SPDX-License-Identifier: Apache-2.0
// Tests of the Kineto trace import: grouping and medians from a realistic trace fixture, the round trip into the
// runtime's kernel table (matched by demangled name), and errors that name the file and JSON path.
#include "genie/fakecuda/trace_import.hpp"

#include <gtest/gtest.h>

#include "genie/fakecuda/family_cost_model.hpp"

namespace genie::fakecuda {
namespace {

const std::string kFixture = std::string(GENIE_TEST_DATA_DIR) + "/kineto_step_trace.json";

TEST(TraceImport, GroupsKernelEventsByNameAndShape) {
  // Fixture: 4 launches of the fp32 add kernel (3 with grid 16384: 49.118, 49.852, 48.903 us; 1 with grid 64),
  // one cuBLAS GEMM kernel, one flash-attention kernel, "spin()" (category "Kernel"), plus CPU ops, runtime
  // calls, a memcpy, flow and metadata events that are not kernels. Expectations: 7 kernel events read, 5
  // distinct (name, grid, block), the grid-16384 add at the median 49.118 us with min/max.
  auto t = import_kineto_trace(kFixture);
  ASSERT_TRUE(t.is_ok()) << t.status().to_string();
  EXPECT_EQ(t->device, "NVIDIA H200");
  EXPECT_EQ(t->kernel_events, 7);
  ASSERT_EQ(t->kernels.size(), 5u);
  int found = 0;
  for (const TraceKernelEntry& k : t->kernels) {
    if (k.name.find("CUDAFunctor_add<float>") != std::string::npos && k.grid[0] == 16384) {
      ++found;
      EXPECT_EQ(k.calls, 3);
      EXPECT_DOUBLE_EQ(k.median_us, 49.118);
      EXPECT_DOUBLE_EQ(k.min_us, 48.903);
      EXPECT_DOUBLE_EQ(k.max_us, 49.852);
      EXPECT_EQ(k.block[0], 128u);
    }
  }
  EXPECT_EQ(found, 1);
}

TEST(TraceImport, TableDrivesTheRuntimeModelByDemangledName) {
  // The table from the trace, loaded as the runtime loads GENIE_FAKECUDA_COST_TABLE: a launch of the mangled add
  // kernel with the traced shape takes the traced median; another shape falls back to the family rule.
  auto t = import_kineto_trace(kFixture);
  ASSERT_TRUE(t.is_ok());
  auto table = parse_kernel_table(kernel_table_json(t.value(), "test"), "table.json");
  ASSERT_TRUE(table.is_ok()) << table.status().to_string();
  DeviceSpec h200 = load_device_spec("h200").value();
  FamilyCostModel m(h200, table.value(), cost_params_for(h200));
  const char* add = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_";
  KernelShape s;
  s.grid[0] = 16384;
  s.block[0] = 128;
  s.shared_mem = 0;
  KernelEstimate e = m.explain_kernel(add, s);
  EXPECT_EQ(e.source, "table (exact shape)");
  EXPECT_EQ(e.duration, SimTime::ns(49118));
  s.grid[0] = 8192;
  EXPECT_EQ(m.explain_kernel(add, s).source, "family");
  KernelShape one;
  EXPECT_EQ(m.kernel("_Z4spinv", one), SimTime::ms(20));
}

TEST(TraceImport, BadTracesNameTheFileAndPath) {
  auto r = parse_kineto_trace("{", "t.json");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("t.json: not valid JSON"), std::string::npos);
  r = parse_kineto_trace(R"({"events": []})", "t.json");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("t.json: /traceEvents"), std::string::npos);
  r = parse_kineto_trace(R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "dur": 1}]})", "t.json");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("no kernel events"), std::string::npos);
  r = parse_kineto_trace(R"({"traceEvents": [{"ph": "M"}, {"ph": "X", "cat": "kernel", "name": "k", "dur": 2,
                             "args": {"grid": [1, 0, 1], "block": [32, 1, 1]}}]})", "t.json");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("t.json: /traceEvents/1/args/grid"), std::string::npos) << r.status().message();
  r = parse_kineto_trace(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "args": {}}]})", "t.json");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("/traceEvents/0/dur"), std::string::npos);
  r = parse_kineto_trace(R"({"traceEvents": [7]})", "t.json");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("/traceEvents/0"), std::string::npos);
  EXPECT_FALSE(import_kineto_trace("/nonexistent/trace.json").is_ok());
}

}  // namespace
}  // namespace genie::fakecuda
