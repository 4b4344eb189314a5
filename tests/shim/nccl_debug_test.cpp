// SPDX-License-Identifier: Apache-2.0
// NCCL_DEBUG_FILE's expansion, as NCCL 2.28.9's debug.cc does it.
#include "nccl_debug.hpp"

#include <gtest/gtest.h>

namespace genie::shim {
namespace {

TEST(NcclDebugFile, HostPidAndPercentAreExpandedTheRestKept) {
  EXPECT_EQ(expand_debug_file("/tmp/nccl.%h.%p.log", "node7", 4242), "/tmp/nccl.node7.4242.log");
  EXPECT_EQ(expand_debug_file("a%%b", "h", 1), "a%b");
  EXPECT_EQ(expand_debug_file("x%q%h", "h", 1), "x%qh");  // unknown directives stay as written
  EXPECT_EQ(expand_debug_file("end%", "h", 1), "end%");   // a lone % at the end too
  EXPECT_EQ(expand_debug_file("plain", "h", 1), "plain");
}

}  // namespace
}  // namespace genie::shim
