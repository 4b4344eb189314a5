// SPDX-License-Identifier: Apache-2.0
// PeerMemory: publishes local device buffers as BufferRefs and maps peers' buffers (same host) for
// zero-copy collectives, caching one mapping per peer allocation until its owner frees it.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

#include "genie/common/status.hpp"
#include "shared_segment.hpp"

namespace genie::fakecuda {
class Runtime;
}

namespace genie::shim {

class PeerMemory {
 public:
  /// The process-wide instance (mappings are shared by every communicator of the process).
  static PeerMemory& instance();

  /// Describes `bytes` at `p` for peers. `what` names the argument in errors ("sendbuff"). Memory already on a memfd
  /// (device memory, from birth) is described as peers in other processes map it (fd >= 0); when `cross_process`, other
  /// memory is made shareable, or is an error where it cannot be. Errors:
  /// InvalidArgument for memory the CUDA runtime did not allocate or a range past the allocation's end.
  Result<BufferRef> publish(fakecuda::Runtime& rt, const void* p, uint64_t bytes, const char* what, bool cross_process);
  /// A local address for a peer's buffer (maps it on first use). Mapping a new buffer first lets go of the mappings
  /// whose owner, still running, no longer has their memfd open (it freed the buffer, or its staging area grew): a
  /// peer frees a buffer only after its calls with it completed, and those complete only once every reader is done
  /// with it, so nothing reads such a mapping any more. Mappings of an owner that exited are kept: a call failing
  /// because of it may still be reading them.
  Result<char*> resolve(const BufferRef& ref);
  /// Peer buffers mapped now (for tests and the log).
  size_t mapped() const;

 private:
  struct Mapping {
    char* base;
    uint64_t size;
    int32_t fd;  ///< the memfd's number in its owner (which still has it open while it keeps the buffer)
  };
  /// Unmaps what resolve() says can go (mu_ held).
  void drop_freed();
  mutable std::mutex mu_;
  std::map<std::tuple<int32_t, uint64_t>, Mapping> maps_;  // (pid, memfd inode) -> mapping
  std::map<int32_t, int> pidfds_;  // owner pid -> pidfd: tells an exited owner from a live one, whatever reuses its pid
};

}  // namespace genie::shim
