// SPDX-License-Identifier: Apache-2.0
// What every transport shares: the pidfds that tell a waiting rank its peer on this host has exited.
#include "transport/transport.hpp"

#include <unistd.h>

#include <cstring>

#include "pidfd.hpp"

namespace genie::shim {

std::vector<int> open_peer_pidfds(const std::vector<RankInfo>& peers, int rank) {
  std::vector<int> fds(peers.size(), -1);
  const int me = static_cast<int>(getpid());
  const RankInfo& mine = peers[static_cast<size_t>(rank)];
  for (size_t r = 0; r < peers.size(); ++r) {
    const RankInfo& p = peers[r];
    if (p.pid == me) continue;
    // A pid names a process only on its own host (the real fabric may span hosts).
    if (std::strncmp(p.host, mine.host, sizeof(p.host)) != 0) continue;
    fds[r] = open_pidfd(p.pid);
  }
  return fds;
}

void close_peer_pidfds(std::vector<int>& fds) {
  for (int& fd : fds)
    if (fd >= 0) {
      ::close(fd);
      fd = -1;
    }
}

}  // namespace genie::shim
