// SPDX-License-Identifier: Apache-2.0
// Shared-memory names of a job: random tags and names, the owner-only check, removal of a job's leftovers.
#include "genie/common/shm_names.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "genie/common/config.hpp"

namespace genie::shm_names {
namespace {

const config::Param<std::string> kJobTag{
    "job_tag", "",
    "Hex tag (1..32 digits) in the names of the job's shared-memory files (/dev/shm/genie-<tag>-<random>...), "
    "so that genie run can remove those a killed rank left. genie run sets a random one; default: a random tag "
    "per process."};

constexpr size_t kMaxTagChars = 32;

Result<std::string> random_hex(size_t bytes) {
  unsigned char buf[16];
  if (bytes > sizeof(buf)) return internal_error("random_hex: too many bytes");
  size_t got = 0;
  while (got < bytes) {
    const ssize_t n = getrandom(buf + got, bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return system_error(std::string("getrandom: ") + std::strerror(errno));
    got += static_cast<size_t>(n);
  }
  static const char* kHex = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < bytes; ++i) {
    s.push_back(kHex[buf[i] >> 4]);
    s.push_back(kHex[buf[i] & 15]);
  }
  return s;
}

}  // namespace

bool valid_job_tag(const std::string& tag) {
  if (tag.empty() || tag.size() > kMaxTagChars) return false;
  for (char c : tag)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

Result<std::string> random_job_tag() { return random_hex(8); }

Result<std::string> job_tag() {
  const std::string set = config::global().get(kJobTag);
  if (!set.empty()) {
    if (!valid_job_tag(set))
      return invalid_argument("GENIE_JOB_TAG '" + set + "' is not 1.." + std::to_string(kMaxTagChars) +
                              " lower-case hex digits");
    return set;
  }
  static std::once_flag once;
  static Result<std::string>* tag = nullptr;  // never destroyed: endpoints may open during exit
  std::call_once(once, [] { tag = new Result<std::string>(random_job_tag()); });
  return *tag;
}

std::string job_prefix(const std::string& tag) { return "genie-" + tag + "-"; }

Result<std::string> unique_name(const std::string& tag) {
  GENIE_ASSIGN_OR_RETURN(std::string r, random_hex(8));
  return job_prefix(tag) + r;
}

Status check_owner_only(const std::string& name, const std::string& dir) {
  const std::string path = dir + "/" + name;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return system_error("shared-memory file " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return system_error("shared-memory file " + path + " is not a regular file");
  if (st.st_uid != ::geteuid())
    return system_error("shared-memory file " + path + " belongs to uid " + std::to_string(st.st_uid) +
                        ", not to this user (uid " + std::to_string(::geteuid()) + ")");
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return system_error("shared-memory file " + path + " has mode " + mode + ": group or others may open it");
  }
  return Status::ok();
}

Result<int> remove_job_files(const std::string& tag, const std::string& dir) {
  if (!valid_job_tag(tag)) return invalid_argument("job tag '" + tag + "' is not 1..32 lower-case hex digits");
  const std::string prefix = job_prefix(tag);
  DIR* d = ::opendir(dir.c_str());
  if (!d) return system_error("cannot list " + dir + ": " + std::strerror(errno));
  int removed = 0;
  while (dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n.compare(0, prefix.size(), prefix) != 0) continue;
    struct stat st {};
    if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) continue;
    if (::unlinkat(::dirfd(d), e->d_name, 0) == 0) ++removed;
  }
  ::closedir(d);
  return removed;
}

}  // namespace genie::shm_names
