// SPDX-License-Identifier: Apache-2.0
// Tests of device presets and the strict DeviceSpec JSON parser (errors name origin, JSON path and problem).
#include "genie/fakecuda/device_spec.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace genie::fakecuda {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

const std::vector<std::string> kPresets = {"a100-sxm4-80gb", "b200", "h100-sxm", "h200"};

std::string read_preset_source(const std::string& name) {
  std::ifstream in(std::string(GENIE_FAKECUDA_PRESET_DIR) + "/" + name + ".json");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

json preset_json(const std::string& name) { return json::parse(read_preset_source(name)); }

/// Parses `doc` as origin "test.json" and returns the error message (empty if it parsed).
std::string parse_error(const json& doc) {
  auto r = parse_device_spec(doc.dump(2), "test.json");
  return r.is_ok() ? std::string() : r.status().message();
}

TEST(DeviceSpec, PresetNamesAreTheFourEmbeddedPresets) { EXPECT_EQ(device_preset_names(), kPresets); }

TEST(DeviceSpec, EveryPresetLoadsWithSourcesAndSaneValues) {
  for (const std::string& name : kPresets) {
    SCOPED_TRACE(name);
    auto r = load_device_spec(name);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    const DeviceSpec& s = r.value();
    EXPECT_EQ(s.preset, name);
    EXPECT_EQ(s.name.rfind("NVIDIA ", 0), 0u) << s.name;
    EXPECT_GE(s.cc_major, 8);
    EXPECT_GT(s.sm_count, 100);
    EXPECT_GT(s.memory_bytes, 80ull * 1000 * 1000 * 1000);
    EXPECT_FALSE(s.sources.empty());
    for (const char* dtype : {"fp64", "fp32", "tf32", "bf16", "fp16", "int8"}) {
      ASSERT_TRUE(s.peak_flops.count(dtype)) << dtype;
      EXPECT_GT(s.peak_flops.at(dtype), 1e12) << dtype;
    }
    // Tensor-core dtypes are never slower than fp32 on these parts.
    EXPECT_GE(s.peak_flops.at("bf16"), s.peak_flops.at("tf32"));
    EXPECT_GE(s.peak_flops.at("tf32"), s.peak_flops.at("fp32"));
    EXPECT_GT(s.hbm_bw_bytes_per_s, s.nvlink_bw_bytes_per_s);
    EXPECT_GT(s.nvlink_bw_bytes_per_s, s.pcie_bw_bytes_per_s);
    EXPECT_GT(s.nvlink_links, 0);
    EXPECT_GT(s.launch_overhead, SimTime::zero());
    EXPECT_GT(s.kernel_floor, SimTime::zero());
    // The memory clock and bus width reproduce the datasheet HBM bandwidth within 5 %:
    // bw = bus_bits / 8 * 2 (double data rate) * mem_clock.
    const double derived_bw = s.mem_bus_width_bits / 8.0 * 2.0 * s.mem_clock_khz * 1e3;
    EXPECT_NEAR(derived_bw / s.hbm_bw_bytes_per_s, 1.0, 0.05);
  }
}

TEST(DeviceSpec, EveryNumberInAPresetHasANoteThatTracesItToASource) {
  for (const std::string& name : kPresets) {
    SCOPED_TRACE(name);
    const json doc = preset_json(name);
    auto spec = load_device_spec(name);
    ASSERT_TRUE(spec.is_ok());
    const json flat = doc.flatten();
    for (const auto& [path, value] : flat.items()) {
      if (path.rfind("/notes", 0) == 0 || path.rfind("/sources", 0) == 0 || !value.is_number()) continue;
      bool covered = false;
      for (const auto& [note_path, text] : spec->notes) {
        if (path == note_path || path.rfind(note_path + "/", 0) == 0) covered = !text.empty();
      }
      EXPECT_TRUE(covered) << path << " has no note";
    }
    for (const auto& [note_path, text] : spec->notes) {
      EXPECT_TRUE(doc.contains(json::json_pointer(note_path))) << "note for missing path " << note_path;
      // Every note cites at least one [id] or [id, id], and every cited id is defined by a "[id] ..." source.
      size_t cited = 0;
      for (size_t open = text.find('['); open != std::string::npos; open = text.find('[', open + 1)) {
        const size_t close = text.find(']', open);
        ASSERT_NE(close, std::string::npos) << note_path;
        std::stringstream ids(text.substr(open + 1, close - open - 1));
        for (std::string id; std::getline(ids, id, ',');) {
          id.erase(0, id.find_first_not_of(' '));
          bool defined = false;
          for (const std::string& src : spec->sources) defined |= src.rfind("[" + id + "] ", 0) == 0;
          EXPECT_TRUE(defined) << note_path << " cites undefined source [" << id << "]";
          ++cited;
        }
      }
      EXPECT_GT(cited, 0u) << note_path << " cites no source: " << text;
    }
  }
}

TEST(DeviceSpec, H200MatchesTheCalibrationMeasurement) {
  // Expectation: tests/data/calibration/h200/device.json: "NVIDIA H200", 132 SMs, mem_bytes 150109880320,
  // nvidia-smi 1980 MHz SM / 3201 MHz memory; compute capability 9.0.
  auto r = load_device_spec("h200");
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->name, "NVIDIA H200");
  EXPECT_EQ(r->cc_major, 9);
  EXPECT_EQ(r->cc_minor, 0);
  EXPECT_EQ(r->sm_count, 132);
  EXPECT_EQ(r->memory_bytes, 150109880320ull);
  EXPECT_EQ(r->sm_clock_khz, 1980000);
  EXPECT_EQ(r->mem_clock_khz, 3201000);
}

TEST(DeviceSpec, PresetsHaveTheNamesCudaReports) {
  EXPECT_EQ(load_device_spec("h100-sxm")->name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(load_device_spec("a100-sxm4-80gb")->name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(load_device_spec("b200")->name, "NVIDIA B200");
  EXPECT_EQ(load_device_spec("b200")->cc_major, 10);
  EXPECT_EQ(load_device_spec("a100-sxm4-80gb")->peak_flops.count("fp8"), 0u);  // no FP8 tensor cores on GA100
}

TEST(DeviceSpec, UnknownPresetIsNotFoundAndListsThePresets) {
  auto r = load_device_spec("h300");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Errc::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("'h300'"));
  EXPECT_THAT(r.status().message(), HasSubstr("h200"));
  EXPECT_FALSE(load_device_spec("").is_ok());
}

class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    path_ = (std::filesystem::temp_directory_path() /
             ("genie_device_spec_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++) + ".json"))
                .string();
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::string path_;
};

TEST(DeviceSpec, LoadsAFileByPath) {
  json doc = preset_json("h200");
  doc["name"] = "NVIDIA H200 (custom)";
  TempFile f(doc.dump());
  auto r = load_device_spec(f.path());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->name, "NVIDIA H200 (custom)");
  EXPECT_EQ(r->preset, f.path());
}

TEST(DeviceSpec, MissingFileIsNotFoundAndNamesThePath) {
  auto r = load_device_spec("/nonexistent/dir/gpu.json");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Errc::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("/nonexistent/dir/gpu.json"));
}

TEST(DeviceSpec, BadFileErrorNamesTheFileAndTheJsonPath) {
  json doc = preset_json("h200");
  doc["peak_flops"]["bf16"] = "fast";
  TempFile f(doc.dump());
  auto r = load_device_spec(f.path());
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Errc::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr(f.path()));
  EXPECT_THAT(r.status().message(), HasSubstr("/peak_flops/bf16"));
  EXPECT_THAT(r.status().message(), HasSubstr("expected a positive number, got string"));
}

struct BadCase {
  const char* what;
  void (*mutate)(json&);
  const char* path;     // expected JSON path in the message
  const char* problem;  // expected description
};

TEST(DeviceSpec, BadDocumentsAreRejectedWithPathAndReason) {
  const BadCase cases[] = {
      {"string flops", [](json& d) { d["peak_flops"]["bf16"] = "fast"; }, "/peak_flops/bf16", "positive number"},
      {"negative flops", [](json& d) { d["peak_flops"]["fp32"] = -1.0; }, "/peak_flops/fp32", "positive finite"},
      {"zero bandwidth", [](json& d) { d["bandwidth_bytes_per_s"]["hbm"] = 0; }, "/bandwidth_bytes_per_s/hbm",
       "positive finite"},
      {"missing key", [](json& d) { d.erase("sm_count"); }, "/sm_count", "missing required key"},
      {"missing nested key", [](json& d) { d["limits"].erase("warp_size"); }, "/limits/warp_size",
       "missing required key"},
      {"missing dtype", [](json& d) { d["peak_flops"].erase("fp16"); }, "/peak_flops/fp16", "missing required key"},
      {"unknown top key", [](json& d) { d["sm_cnt"] = 132; }, "/sm_cnt", "unknown key"},
      {"unknown nested key", [](json& d) { d["limits"]["max_warps"] = 64; }, "/limits/max_warps", "unknown key"},
      {"unknown dtype", [](json& d) { d["peak_flops"]["fp128"] = 1e12; }, "/peak_flops/fp128", "unknown key"},
      {"float where integer", [](json& d) { d["sm_count"] = 132.5; }, "/sm_count", "expected an integer"},
      {"integral float where integer", [](json& d) { d["clocks"]["sm_khz"] = 1.98e6; }, "/clocks/sm_khz",
       "expected an integer"},
      {"negative clock", [](json& d) { d["clocks"]["mem_khz"] = -5; }, "/clocks/mem_khz", "out of range"},
      {"huge integer", [](json& d) { d["memory_bytes"] = 18446744073709551615ull; }, "/memory_bytes", "out of range"},
      {"int overflow", [](json& d) { d["sm_count"] = 4294967296ll; }, "/sm_count", "out of range"},
      {"cc minor", [](json& d) { d["compute_capability"]["minor"] = 10; }, "/compute_capability/minor",
       "out of range"},
      {"object expected", [](json& d) { d["clocks"] = 1980; }, "/clocks", "expected an object"},
      {"empty name", [](json& d) { d["name"] = ""; }, "/name", "must not be empty"},
      {"long name", [](json& d) { d["name"] = std::string(300, 'x'); }, "/name", "longer than"},
      {"no sources", [](json& d) { d["sources"] = json::array(); }, "/sources", "at least one source"},
      {"source not string", [](json& d) { d["sources"][1] = 7; }, "/sources/1", "expected a string"},
      {"note not string", [](json& d) { d["notes"]["/sm_count"] = 1; }, "/notes/~1sm_count", "expected a string"},
      {"launch in us", [](json& d) { d["launch"]["overhead_ns"] = 4000000000ll; }, "/launch/overhead_ns",
       "out of range"},
      {"optin below default", [](json& d) { d["limits"]["shared_mem_per_block_optin"] = 1024; },
       "/limits/shared_mem_per_block_optin", "smaller than shared_mem_per_block"},
      {"threads not warp multiple", [](json& d) { d["limits"]["max_threads_per_block"] = 1000; },
       "/limits/max_threads_per_block", "multiple of warp_size"},
      {"pci bus too big", [](json& d) { d["pci"]["bus_base"] = 256; }, "/pci/bus_base", "out of range"},
      {"unknown pci key", [](json& d) { d["pci"]["function"] = 1; }, "/pci/function", "unknown key"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.what);
    json doc = preset_json("h200");
    c.mutate(doc);
    const std::string msg = parse_error(doc);
    ASSERT_FALSE(msg.empty()) << "accepted";
    EXPECT_THAT(msg, HasSubstr("test.json: "));
    EXPECT_THAT(msg, HasSubstr(std::string(c.path) + ": ")) << msg;
    EXPECT_THAT(msg, HasSubstr(c.problem)) << msg;
  }
}

TEST(DeviceSpec, SyntaxErrorsAndDuplicateKeysAreRejected) {
  auto r = parse_device_spec("{\"name\": \"x\",", "broken.json");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Errc::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("broken.json: not valid JSON at byte"));

  std::string text = read_preset_source("h200");
  // Duplicate "sm_khz" inside /clocks: nlohmann would silently keep the last one.
  const auto pos = text.find("\"sm_khz\"");
  ASSERT_NE(pos, std::string::npos);
  text.insert(pos, "\"sm_khz\": 1, ");
  r = parse_device_spec(text, "dup.json");
  ASSERT_FALSE(r.is_ok());
  EXPECT_THAT(r.status().message(), HasSubstr("dup.json: /clocks/sm_khz: duplicate key"));

  EXPECT_FALSE(parse_device_spec("", "empty.json").is_ok());
  EXPECT_FALSE(parse_device_spec("\xff\xfe", "binary.json").is_ok());
  EXPECT_FALSE(parse_device_spec("[1, 2]", "array.json").is_ok());
  EXPECT_THAT(parse_device_spec("[1, 2]", "array.json").status().message(), HasSubstr("array.json: /: expected an object"));
}

TEST(DeviceSpec, OptionalFieldsOverrideDefaults) {
  json doc = preset_json("h200");
  doc["async_engine_count"] = 4;
  doc["pci"] = {{"domain", 1}, {"bus_base", 0x40}, {"bus_stride", 2}, {"device_id", 0x1234}};
  auto r = parse_device_spec(doc.dump(), "opt.json");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->async_engine_count, 4);
  EXPECT_EQ(r->pci_domain, 1);
  EXPECT_EQ(r->pci_bus_base, 0x40);
  EXPECT_EQ(r->pci_bus_stride, 2);
  EXPECT_EQ(r->pci_device_id, 0x1234);
  EXPECT_EQ(r->preset, "opt.json");
}

}  // namespace
}  // namespace genie::fakecuda
