// SPDX-License-Identifier: Apache-2.0
// Names of the shared-memory files Genie's ranks create in /dev/shm (the real fabric's libfabric shm provider;
// everything else is a memfd, which has no name there): genie-<job tag>-<64 random bits>..., owner-only.
// `genie run` gives its ranks one job tag and removes, after they exited, what killed ranks left behind.
#pragma once

#include <string>

#include "genie/common/status.hpp"

namespace genie::shm_names {

/// Where POSIX shared memory lives on Linux (shm_open names are files there).
inline constexpr const char* kShmDir = "/dev/shm";

/// Whether `tag` can be a job tag: 1..32 lower-case hex digits (it becomes part of a file name).
bool valid_job_tag(const std::string& tag);

/// A fresh random job tag (16 hex digits from getrandom). Errors: kSystem when getrandom fails.
Result<std::string> random_job_tag();

/// The job tag of this process: GENIE_JOB_TAG when set (InvalidArgument naming the variable when it is not
/// valid_job_tag), else one random tag made on first use and kept for the process's lifetime.
Result<std::string> job_tag();

/// "genie-<tag>-": the start of every shared-memory name of the job `tag`.
std::string job_prefix(const std::string& tag);

/// A new unpredictable name of the job `tag`: job_prefix(tag) + 16 random hex digits. Errors: kSystem.
Result<std::string> unique_name(const std::string& tag);

/// Checks the file `dir`/`name` a provider created for us: a regular file (not a link), owned by this
/// process's effective user, with no permission bits for group or others. Errors: kSystem naming the file.
Status check_owner_only(const std::string& name, const std::string& dir = kShmDir);

/// Removes every regular file in `dir` whose name starts with job_prefix(tag) and that this effective user
/// owns (links and other users' files are left alone). Returns how many were removed; InvalidArgument when
/// `tag` is not valid_job_tag.
Result<int> remove_job_files(const std::string& tag, const std::string& dir = kShmDir);

}  // namespace genie::shm_names
