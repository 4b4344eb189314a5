// SPDX-License-Identifier: Apache-2.0
// NCCL_DEBUG in NCCL's spirit: VERSION/WARN/INFO/TRACE lines "host:pid:tid [dev] NCCL INFO ..." on stderr.
#pragma once

#include <cstdarg>
#include <string>

namespace genie::shim {

class Communicator;

enum class NcclDebugLevel { kNone = 0, kVersion, kWarn, kInfo, kTrace };

/// The level NCCL_DEBUG asks for (read once).
NcclDebugLevel nccl_debug_level();
/// NCCL_DEBUG_FILE's path for this process: %h the host name, %p the pid, %% a percent sign, any other %x as is.
std::string expand_debug_file(const std::string& pattern, const std::string& host, int pid);
/// Prints one NCCL-style line when `level` is enabled. `dev` is the CUDA device (-1: none).
void nccl_debug(NcclDebugLevel level, int dev, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
/// The version line (once per process) and the communicator's init lines.
void nccl_debug_init_line(const Communicator& c);

}  // namespace genie::shim
