// SPDX-License-Identifier: Apache-2.0
// Tests of the config registry: precedence, env-name derivation, validation, JSON paths in errors.
#include "genie/common/config.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace genie::config {
namespace {

const Param<std::string> kTestMode{"test_cfg.mode", "a", "test parameter", {"a", "b", "c"}};
const Param<int64_t> kTestCount{"test_cfg.count", 4, "test integer", {}, 1.0, 16.0};
const Param<bool> kTestFlag{"test_cfg.flag", false, "test bool"};
const Param<double> kTestRate{"test_cfg.rate", 1.5, "test double"};
const Param<std::string> kForeign{"test_cfg.foreign", "", "foreign env name", {}, {}, {}, "NCCL_TEST_FOREIGN"};

TEST(Config, EnvNameIsDerivedFromKey) {
  EXPECT_EQ(env_name_for_key("netsim.model"), "GENIE_NETSIM_MODEL");
  EXPECT_EQ(env_name_for_key("device"), "GENIE_DEVICE");
  EXPECT_EQ(Registry::instance().find("test_cfg.foreign")->env_name, "NCCL_TEST_FOREIGN");
}

TEST(Config, DefaultsApplyWhenNothingIsSet) {
  auto c = Config::load({});
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(c->get(kTestMode), "a");
  EXPECT_EQ(c->get(kTestCount), 4);
  EXPECT_FALSE(c->get(kTestFlag));
  EXPECT_DOUBLE_EQ(c->get(kTestRate), 1.5);
  EXPECT_EQ(c->source("test_cfg.mode"), Source::kDefault);
}

TEST(Config, FileThenEnvThenOverride) {
  std::string path = ::testing::TempDir() + "/genie_cfg_test.json";
  {
    std::ofstream f(path);
    f << R"({"test_cfg": {"mode": "b", "count": 8, "flag": true}})";
  }
  auto c = Config::load({{"GENIE_CONFIG", path}, {"GENIE_TEST_CFG_COUNT", "12"}, {"NCCL_TEST_FOREIGN", "x"}});
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(c->get(kTestMode), "b");
  EXPECT_EQ(c->source("test_cfg.mode"), Source::kFile);
  EXPECT_EQ(c->get(kTestCount), 12);  // env beats file
  EXPECT_EQ(c->source("test_cfg.count"), Source::kEnv);
  EXPECT_TRUE(c->get(kTestFlag));
  EXPECT_EQ(c->get(kForeign), "x");
  ASSERT_TRUE(c->set("test_cfg.count", "2").is_ok());
  EXPECT_EQ(c->get(kTestCount), 2);
  EXPECT_EQ(c->source("test_cfg.count"), Source::kOverride);
  std::remove(path.c_str());
}

TEST(Config, BadEnvValueNamesTheVariable) {
  auto c = Config::load({{"GENIE_TEST_CFG_MODE", "z"}});
  ASSERT_FALSE(c.is_ok());
  EXPECT_NE(c.status().message().find("GENIE_TEST_CFG_MODE"), std::string::npos);
  EXPECT_NE(c.status().message().find("a, b, c"), std::string::npos);
  auto c2 = Config::load({{"GENIE_TEST_CFG_COUNT", "99"}});
  ASSERT_FALSE(c2.is_ok());
  EXPECT_NE(c2.status().message().find("maximum"), std::string::npos);
  auto c3 = Config::load({{"GENIE_TEST_CFG_COUNT", "3x"}});
  EXPECT_FALSE(c3.is_ok());
}

// A library loaded after the first global() call (libnccl.so.2 after libcudart's first clock read) declares
// its parameters after the load: they still take their environment values, validated.
TEST(Config, ParameterDeclaredAfterTheLoadReadsTheEnvironment) {
  auto c = Config::load({{"GENIE_TEST_LATE_ADDR", "10.0.0.7"}, {"GENIE_TEST_LATE_N", "99"}});
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  const Param<std::string> late_addr{"test_late.addr", "127.0.0.1", "declared after the load"};
  const Param<int64_t> late_n{"test_late.n", 3, "declared after the load, out of range in the env", {}, 1.0, 8.0};
  EXPECT_EQ(c->get(late_addr), "10.0.0.7");
  EXPECT_EQ(c->source("test_late.addr"), Source::kEnv);
  EXPECT_EQ(c->get(late_n), 3);  // 99 is above the maximum: the default, with a message on stderr
  EXPECT_EQ(c->source("test_late.n"), Source::kDefault);
}

TEST(Config, UnknownJsonKeyNamesThePath) {
  Config c;
  Status s = c.merge_json(R"({"test_cfg": {"mdoe": "b"}})", "my.json");
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("my.json"), std::string::npos);
  EXPECT_NE(s.message().find("/test_cfg/mdoe"), std::string::npos);
  EXPECT_FALSE(c.merge_json("{not json", "x.json").is_ok());
  EXPECT_FALSE(c.merge_json(R"({"test_cfg": {"count": [1]}})", "x.json").is_ok());
}

TEST(Config, MissingConfigFileIsAnError) {
  auto c = Config::load({{"GENIE_CONFIG", "/nonexistent/genie.json"}});
  ASSERT_FALSE(c.is_ok());
  EXPECT_NE(c.status().message().find("/nonexistent/genie.json"), std::string::npos);
}

TEST(Config, DescribeListsEveryParameter) {
  Config c;
  std::string d = c.describe();
  EXPECT_NE(d.find("test_cfg.mode = a"), std::string::npos);
  EXPECT_NE(d.find("GENIE_TEST_CFG_MODE"), std::string::npos);
}

}  // namespace
}  // namespace genie::config
