// SPDX-License-Identifier: Apache-2.0
// Tests of module loggers: warnings reach an added sink with the module name; trace is off by default.
#include "genie/common/log.hpp"

#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>

namespace genie::log {
namespace {

TEST(Log, WarningsReachAddedSinkAndDebugDoesNotByDefault) {
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(16);
  sink->set_pattern("[%n] [%l] %v");
  add_sink(sink);
  GENIE_LOG_WARN(kNetsim, "link {} is down", 3);
  GENIE_LOG_DEBUG(kNetsim, "not shown");
  remove_sink(sink);
  auto lines = sink->last_formatted();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("[netsim] [warning] link 3 is down"), std::string::npos);
}

TEST(Log, UnknownLoggerNameStillLogs) {
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(16);
  sink->set_pattern("[%n] [%l] %v");
  add_sink(sink);
  EXPECT_TRUE(enabled("something-else", Level::kWarn));
  EXPECT_FALSE(enabled("something-else", Level::kDebug));
  GENIE_LOG_ERROR("something-else", "{} and {:.1f}", "text", 2.25);
  remove_sink(sink);
  auto lines = sink->last_formatted();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("[something-else] [error] text and 2.2"), std::string::npos) << lines[0];
}

}  // namespace
}  // namespace genie::log
