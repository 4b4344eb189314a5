// SPDX-License-Identifier: Apache-2.0
// What the kernel says about this process's memory, for the fakecuda memory tests: resident pages of a range
// (mincore), the peak resident set (VmHWM) and a mapping's VmFlags (/proc/self/smaps).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace genie::fakecuda::testing {

/// Pages of [p, p+n) that are resident (mincore); SIZE_MAX when the range is not mapped.
inline size_t resident_pages(const void* p, size_t n) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> v((n + page - 1) / page);
  if (mincore(const_cast<void*>(p), n, v.data()) != 0) return SIZE_MAX;
  size_t count = 0;
  for (unsigned char c : v) count += c & 1;
  return count;
}

/// VmHWM (peak resident set) of this process in bytes, from /proc/self/status.
inline uint64_t peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

/// The VmFlags line of the mapping that holds `p` in /proc/self/smaps ("" when none holds it).
inline std::string vm_flags_of(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto u = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') > line.find(' ')) {
      inside = lo <= u && u < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

}  // namespace genie::fakecuda::testing
