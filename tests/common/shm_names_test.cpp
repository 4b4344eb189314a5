// SPDX-License-Identifier: Apache-2.0
// Shared-memory names: tags, unpredictable names, the owner-only check and removal of one job's files only.
#include "genie/common/shm_names.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

namespace genie::shm_names {
namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char t[] = "/tmp/genie-shm-test-XXXXXX";
    path = ::mkdtemp(t);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  void touch(const std::string& name, mode_t mode) const {
    int fd = ::open((path + "/" + name).c_str(), O_CREAT | O_WRONLY | O_EXCL, mode);
    ASSERT_GE(fd, 0) << name;
    ::fchmod(fd, mode);
    ::close(fd);
  }
  bool has(const std::string& name) const { return std::filesystem::symlink_status(path + "/" + name).type() !=
                                                   std::filesystem::file_type::not_found; }
};

TEST(ShmNames, JobTagsAreShortLowerCaseHex) {
  EXPECT_TRUE(valid_job_tag("0123456789abcdef"));
  EXPECT_TRUE(valid_job_tag(std::string(32, 'f')));
  EXPECT_FALSE(valid_job_tag(""));
  EXPECT_FALSE(valid_job_tag(std::string(33, 'a')));
  EXPECT_FALSE(valid_job_tag("ABCDEF"));
  EXPECT_FALSE(valid_job_tag("../etc"));
  EXPECT_FALSE(valid_job_tag("12:34"));
  auto t = random_job_tag();
  ASSERT_TRUE(t.is_ok());
  EXPECT_EQ(t->size(), 16u);
  EXPECT_TRUE(valid_job_tag(*t));
}

// Expectation: every name starts with genie-<tag>- and carries 64 fresh random bits (1000 names, no repeat).
TEST(ShmNames, NamesAreTheJobPrefixAndSixteenRandomHexDigits) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    auto n = unique_name("00ab");
    ASSERT_TRUE(n.is_ok());
    ASSERT_EQ(n->rfind("genie-00ab-", 0), 0u) << *n;
    ASSERT_EQ(n->size(), std::string("genie-00ab-").size() + 16);
    EXPECT_TRUE(valid_job_tag(n->substr(11))) << *n;
    seen.insert(*n);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(ShmNames, OwnerOnlyAcceptsMode0600AndRefusesWiderModesAndLinks) {
  TempDir d;
  d.touch("mine", 0600);
  d.touch("wide", 0644);
  ASSERT_EQ(::symlink((d.path + "/mine").c_str(), (d.path + "/link").c_str()), 0);
  EXPECT_TRUE(check_owner_only("mine", d.path).is_ok());
  Status w = check_owner_only("wide", d.path);
  EXPECT_FALSE(w.is_ok());
  EXPECT_NE(w.message().find("mode 0644"), std::string::npos) << w.message();
  Status l = check_owner_only("link", d.path);
  EXPECT_FALSE(l.is_ok());
  EXPECT_NE(l.message().find("not a regular file"), std::string::npos) << l.message();
  EXPECT_FALSE(check_owner_only("absent", d.path).is_ok());
}

// Expectation: only regular files named genie-<tag>-... go; another job's files, a link with the job's prefix
// and unrelated names stay.
TEST(ShmNames, RemovingAJobsFilesLeavesEverythingElse) {
  TempDir d;
  d.touch("genie-00ab-1111111111111111:0:0", 0600);
  d.touch("genie-00ab-2222222222222222:0:1_7", 0600);
  d.touch("genie-00abc-3333333333333333:0:0", 0600);  // tag 00abc, not 00ab
  d.touch("genie-99ff-4444444444444444:0:0", 0600);
  d.touch("1234:0:0", 0600);
  ASSERT_EQ(::symlink((d.path + "/1234:0:0").c_str(), (d.path + "/genie-00ab-link").c_str()), 0);
  auto n = remove_job_files("00ab", d.path);
  ASSERT_TRUE(n.is_ok()) << n.status().message();
  EXPECT_EQ(*n, 2);
  EXPECT_FALSE(d.has("genie-00ab-1111111111111111:0:0"));
  EXPECT_FALSE(d.has("genie-00ab-2222222222222222:0:1_7"));
  EXPECT_TRUE(d.has("genie-00abc-3333333333333333:0:0"));
  EXPECT_TRUE(d.has("genie-99ff-4444444444444444:0:0"));
  EXPECT_TRUE(d.has("1234:0:0"));
  EXPECT_TRUE(d.has("genie-00ab-link"));
  EXPECT_FALSE(remove_job_files("../x", d.path).is_ok());
}

}  // namespace
}  // namespace genie::shm_names
