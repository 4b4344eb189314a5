// SPDX-License-Identifier: Apache-2.0
// Transparent huge pages for large shared mappings (device memory, peers' buffers, staging areas).
#pragma once

#include <sys/mman.h>

#include <cstddef>

namespace genie {

/// Asks the kernel to back the mapping [p, p + len) with 2 MiB pages where it allows them: for memfd and
/// other shmem memory that is when /sys/kernel/mm/transparent_hugepage/shmem_enabled is `advise`, `within_size`
/// or `always` (Debian's default `never` leaves the mapping as it was). Each process that maps the memory advises
/// its own mapping. Large buffers read and written in bulk then take a TLB miss per 2 MiB instead of per 4 KiB.
/// Mappings under 2 MiB are left alone; a refusal changes nothing, so there is no error.
inline void advise_huge_pages(void* p, size_t len) {
  constexpr size_t kHugePage = size_t{2} << 20;
  if (p != nullptr && p != MAP_FAILED && len >= kHugePage) (void)madvise(p, len, MADV_HUGEPAGE);
}

}  // namespace genie
