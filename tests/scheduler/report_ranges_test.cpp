// SPDX-License-Identifier: Apache-2.0
// The report's annotated ranges (NVTX push/pop, start/end): each range gets the breakdown of its rank's stream
// activity clipped to the range; totals per name; the exit summary lists them.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "genie/sched/report.hpp"
#include "genie/sched/timeline.hpp"
#include "report/report_model.hpp"

namespace genie::sched {
namespace {

coord::OpRecord op(OpKind kind, int device, uint32_t stream, uint32_t label, double start_us, double end_us) {
  coord::OpRecord o;
  o.kind = static_cast<uint8_t>(kind);
  o.device = device;
  o.stream = stream;
  o.label = label;
  o.start_ns = static_cast<int64_t>(start_us * 1e3);
  o.end_ns = static_cast<int64_t>(end_us * 1e3);
  return o;
}

// One process, device 0, process rank 0. Stream 1: kernels [0,100) [150,250) [600,700), an AllReduce
// [200,400), a copy [380,420). Host thread 0: ranges "step" [0,500) and [500,1000), "outer" [50,650); a wait
// record without a device (not a range, not broken down).
JobRecord job() {
  JobRecord j;
  ProcessInfo p;
  p.index = 0;
  p.pid = 42;
  p.process_rank = 0;
  p.node = "node0";
  j.processes.push_back(p);
  j.labels.push_back({"kernel", "allreduce", "copy", "step", "outer", "wait"});
  const uint32_t host = Timeline::kHostStreamBase;
  j.op_records.push_back({
      op(OpKind::kKernel, 0, 1, 0, 0, 100),
      op(OpKind::kKernel, 0, 1, 0, 150, 250),
      op(OpKind::kCollective, 0, 1, 1, 200, 400),
      op(OpKind::kCopy, 0, 1, 2, 380, 420),
      op(OpKind::kKernel, 0, 1, 0, 600, 700),
      op(OpKind::kRange, 0, host, 3, 0, 500),
      op(OpKind::kRange, 0, host, 3, 500, 1000),
      op(OpKind::kRange, 0, host, 4, 50, 650),
      op(OpKind::kHostWait, -1, host, 5, 400, 420),
  });
  return j;
}

// The report input of one process's job `j`.
ReportInput input_of(const JobRecord& j) {
  ReportInput in;
  in.job = &j;
  in.nranks = 1;
  in.command = {"prog"};
  return in;
}

// A fresh folder for a report (`tag` tells tests apart).
std::filesystem::path report_dir(const char* tag) {
  return std::filesystem::temp_directory_path() /
         (std::string("genie_report_") + tag + "_" + std::to_string(::getpid()));
}

nlohmann::json write_and_read(const JobRecord& j, std::string* summary) {
  const ReportInput in = input_of(j);
  const auto dir = report_dir("ranges");
  EXPECT_TRUE(write_report(dir.string(), in).is_ok());
  std::ifstream f(dir / "genie-report.json");
  nlohmann::json r = nlohmann::json::parse(f);
  std::ifstream t(dir / "trace.json");
  nlohmann::json trace = nlohmann::json::parse(t);
  int range_slices = 0;
  for (const auto& e : trace["traceEvents"])
    if (e.value("cat", "") == "range") ++range_slices;
  EXPECT_EQ(range_slices, 3) << "every range is a slice on its host thread's track";
  std::filesystem::remove_all(dir);
  *summary = summary_text(in);
  return r;
}

TEST(ReportRanges, EachRangeBreaksDownTheRanksActivityInsideIt) {
  std::string summary;
  const nlohmann::json r = write_and_read(job(), &summary);
  const auto& ranges = r["ranges"];
  ASSERT_EQ(ranges.size(), 3u);
  // Sorted by start: step 0 [0,500), outer [50,650), step 1 [500,1000).
  const auto& s0 = ranges[0];
  EXPECT_EQ(s0["name"], "step");
  EXPECT_EQ(s0["index"], 0);
  EXPECT_EQ(s0["rank"], 0);
  EXPECT_DOUBLE_EQ(s0["time_us"].get<double>(), 500);
  EXPECT_DOUBLE_EQ(s0["compute_us"].get<double>(), 200);                 // [0,100) + [150,250)
  EXPECT_DOUBLE_EQ(s0["communication_us"].get<double>(), 200);           // [200,400)
  EXPECT_DOUBLE_EQ(s0["exposed_communication_us"].get<double>(), 150);   // minus the kernel's [200,250)
  EXPECT_DOUBLE_EQ(s0["copy_us"].get<double>(), 40);
  EXPECT_DOUBLE_EQ(s0["idle_us"].get<double>(), 130);  // 500 - |[0,100) u [150,420)|
  EXPECT_EQ(s0["kernels"], 2);
  EXPECT_EQ(s0["calls"], 1);

  const auto& outer = ranges[1];
  EXPECT_EQ(outer["name"], "outer");
  EXPECT_DOUBLE_EQ(outer["compute_us"].get<double>(), 200);  // [50,100) + [150,250) + [600,650): clipped
  EXPECT_DOUBLE_EQ(outer["exposed_communication_us"].get<double>(), 150);
  EXPECT_DOUBLE_EQ(outer["idle_us"].get<double>(), 230);  // 600 - (50 + 270 + 50)
  EXPECT_EQ(outer["kernels"], 2);  // the kernels that start inside: at 150 and 600

  const auto& s1 = ranges[2];
  EXPECT_EQ(s1["name"], "step");
  EXPECT_EQ(s1["index"], 1);
  EXPECT_DOUBLE_EQ(s1["compute_us"].get<double>(), 100);
  EXPECT_DOUBLE_EQ(s1["communication_us"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(s1["idle_us"].get<double>(), 400);
  EXPECT_EQ(s1["calls"], 0);

  // Totals per name: the means over both steps.
  const auto& totals = r["range_totals"];
  ASSERT_EQ(totals.size(), 2u);
  EXPECT_EQ(totals[1]["name"], "step");
  EXPECT_EQ(totals[1]["count"], 2);
  EXPECT_EQ(totals[1]["ranks"], 1);
  EXPECT_DOUBLE_EQ(totals[1]["mean_time_us"].get<double>(), 500);
  EXPECT_DOUBLE_EQ(totals[1]["mean_compute_us"].get<double>(), 150);
  EXPECT_DOUBLE_EQ(totals[1]["mean_idle_us"].get<double>(), 265);

  // The rank's own breakdown ignores the ranges: its span is its stream activity [0,700).
  EXPECT_DOUBLE_EQ(r["ranks"][0]["begin_us"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(r["ranks"][0]["end_us"].get<double>(), 700);
  EXPECT_NE(summary.find("range (NVTX)"), std::string::npos) << summary;
  EXPECT_NE(summary.find("step                  2    0.500       0.150"), std::string::npos) << summary;
}

TEST(ReportRanges, LibrariesOwnRangesComeAfterTheProgramsAndFoldIntoOneSummaryRow) {
  // System: the job above plus a CUB sort's range ("CCCL: cub::DeviceRadixSort::SortPairs" [600,700)) and a cuBLAS
  // one, and a range of the program's own domain ("myapp: phase"). Expectation: range_totals lists the program's
  // names first ("myapp: phase", "outer", "step"), then the libraries' with "library": true; the exit summary shows
  // the program's rows and one "(libraries: 2)" row with both counted.
  JobRecord j = job();
  j.labels[0].push_back("CCCL: cub::DeviceRadixSort::SortPairs");  // 6
  j.labels[0].push_back("cuBLAS: gemm");                           // 7
  j.labels[0].push_back("myapp: phase");                            // 8
  const uint32_t host = Timeline::kHostStreamBase;
  j.op_records[0].push_back(op(OpKind::kRange, 0, host, 6, 600, 700));
  j.op_records[0].push_back(op(OpKind::kRange, 0, host, 7, 150, 250));
  j.op_records[0].push_back(op(OpKind::kRange, 0, host, 8, 0, 1000));
  const ReportInput in = input_of(j);
  const auto dir = report_dir("library_ranges");
  ASSERT_TRUE(write_report(dir.string(), in).is_ok());
  std::ifstream f(dir / "genie-report.json");
  const nlohmann::json r = nlohmann::json::parse(f);
  std::filesystem::remove_all(dir);
  const auto& totals = r["range_totals"];
  ASSERT_EQ(totals.size(), 5u);
  std::vector<std::string> names;
  for (const auto& t : totals) names.push_back(t["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"myapp: phase", "outer", "step", "CCCL: cub::DeviceRadixSort::SortPairs",
                                             "cuBLAS: gemm"}));
  EXPECT_FALSE(totals[2]["library"].get<bool>());
  EXPECT_TRUE(totals[3]["library"].get<bool>());
  EXPECT_TRUE(totals[4]["library"].get<bool>());
  const std::string summary = summary_text(in);
  EXPECT_EQ(summary.find("CCCL"), std::string::npos) << summary;
  // Two library ranges of 100 us each, both fully compute: mean 0.100 ms, compute 0.100 ms.
  EXPECT_NE(summary.find("(libraries: 2)        2    0.100       0.100"), std::string::npos) << summary;
  EXPECT_TRUE(report::is_library_range("NCCL: AllReduce"));
  EXPECT_FALSE(report::is_library_range("step"));
  EXPECT_FALSE(report::is_library_range("CCCLX: x"));
}

TEST(ReportRanges, ARangeOfADeviceWithoutStreamActivityIsAllIdle) {
  JobRecord j = job();
  j.op_records[0].push_back(op(OpKind::kRange, 3, Timeline::kHostStreamBase + 1, 3, 10, 30));
  std::string summary;
  const nlohmann::json r = write_and_read(j, &summary);
  bool found = false;
  for (const auto& x : r["ranges"])
    if (x["thread"] == 1) {
      found = true;
      EXPECT_DOUBLE_EQ(x["idle_us"].get<double>(), 20);
      EXPECT_DOUBLE_EQ(x["compute_us"].get<double>(), 0);
    }
  EXPECT_TRUE(found);
}

TEST(ReportRanges, NamesThatAreNotUtf8AreWrittenWithReplacementCharacters) {
  // System: a kernel named with bytes that are not UTF-8 (a program's own names reach the report as they are).
  // Expectation: the report and the trace are written and parse; the name's bad bytes read U+FFFD; the rest stays.
  JobRecord j = job();
  j.labels[0][0] = std::string("kern\xff\xfe") + "el";
  const auto dir = report_dir("utf8");
  ASSERT_TRUE(write_report(dir.string(), input_of(j)).is_ok());
  std::ifstream t(dir / "trace.json");
  nlohmann::json trace = nlohmann::json::parse(t);
  int named = 0;
  for (const auto& e : trace["traceEvents"])
    if (e.value("name", "") == "kern\xef\xbf\xbd\xef\xbf\xbd" "el") ++named;
  EXPECT_EQ(named, 3);  // the three kernels
  std::ifstream f(dir / "genie-report.json");
  nlohmann::json r;
  EXPECT_NO_THROW(r = nlohmann::json::parse(f));
  EXPECT_TRUE(r.is_object());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace genie::sched
