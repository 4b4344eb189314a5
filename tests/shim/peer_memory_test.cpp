// SPDX-License-Identifier: Apache-2.0
// PeerMemory across processes: a peer's buffer is mapped once, the mapping goes once its owner has freed the buffer
// (so freed peer memory is not held for the life of the process), and an owner that exited keeps its mappings.
#include "peer_memory.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace genie::shim {
namespace {

constexpr size_t kBytes = 1 << 20;

// A memfd of kBytes whose first byte is `tag`, described as its owner (this process) publishes it.
BufferRef make_buffer(char tag, int* fd_out) {
  const int fd = memfd_create("genie-peer-memory-test", MFD_CLOEXEC);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(ftruncate(fd, kBytes), 0);
  EXPECT_EQ(pwrite(fd, &tag, 1, 0), 1);
  struct stat st {};
  EXPECT_EQ(fstat(fd, &st), 0);
  BufferRef r;
  r.addr = 0x10000;  // the owner's address: any non-null value (peers map the memfd, not the address)
  r.pid = static_cast<int32_t>(getpid());
  r.fd = fd;
  r.fd_id = static_cast<uint64_t>(st.st_ino);
  r.map_size = kBytes;
  *fd_out = fd;
  return r;
}

// Whether /proc/self/maps shows a mapping of the file with inode `ino`.
bool maps_inode(uint64_t ino) {
  std::ifstream f("/proc/self/maps");
  std::string line;
  const std::string needle = " " + std::to_string(ino) + " ";
  while (std::getline(f, line))
    if (line.find(needle) != std::string::npos && line.find("memfd:") != std::string::npos) return true;
  return false;
}

void send_byte(int fd) {
  const char c = 1;
  ASSERT_EQ(write(fd, &c, 1), 1);
}
bool recv_byte(int fd) {
  char c = 0;
  return read(fd, &c, 1) == 1;
}

TEST(PeerMemory, AMappingIsDroppedOnceItsOwnerFreesTheBuffer) {
  // This process owns buffers A and B; a child maps A, the owner frees A, the child maps B. Expectation: the
  // child's mapping of A is gone (it held A's pages for nothing), B is mapped and reads the owner's byte.
  int fa = -1, fb = -1;
  const BufferRef a = make_buffer('a', &fa);
  const BufferRef b = make_buffer('b', &fb);
  int to_child[2], to_parent[2];
  ASSERT_EQ(pipe(to_child), 0);
  ASSERT_EQ(pipe(to_parent), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    PeerMemory& pm = PeerMemory::instance();
    const size_t before = pm.mapped();  // mappings other tests of this process made (of owners that exited)
    Result<char*> pa = pm.resolve(a);
    if (!pa.is_ok() || pa.value()[0] != 'a') _exit(2);
    if (pm.mapped() != before + 1 || !maps_inode(a.fd_id)) _exit(3);
    send_byte(to_parent[1]);
    if (!recv_byte(to_child[0])) _exit(4);  // the owner has closed A
    Result<char*> pb = pm.resolve(b);
    if (!pb.is_ok() || pb.value()[0] != 'b') _exit(5);
    if (pm.mapped() != before + 1) _exit(6);  // A's mapping was dropped, B's made
    if (maps_inode(a.fd_id)) _exit(7);       // and A's pages are no longer mapped here
    if (!maps_inode(b.fd_id)) _exit(8);
    _exit(0);
  }
  ASSERT_TRUE(recv_byte(to_parent[0]));
  ::close(fa);  // the owner frees A
  send_byte(to_child[1]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "child step " << WEXITSTATUS(status) << " failed";
  ::close(fb);
}

TEST(PeerMemory, AnOwnerThatExitedKeepsItsMappings) {
  // Two child processes own a buffer each; this process maps the first, the first exits, then this process maps
  // the second. Expectation: the exited owner's mapping stays (a call failing because of that peer may still be
  // reading it) and still reads its byte.
  auto spawn_owner = [](char tag, BufferRef* ref, int* release_fd) -> pid_t {
    int out[2], in[2];
    EXPECT_EQ(pipe(out), 0);
    EXPECT_EQ(pipe(in), 0);
    const pid_t p = fork();
    if (p == 0) {
      int fd = -1;
      BufferRef r = make_buffer(tag, &fd);
      if (write(out[1], &r, sizeof(r)) != static_cast<ssize_t>(sizeof(r))) _exit(2);
      char c = 0;
      if (read(in[0], &c, 1) != 1) _exit(3);  // holds the buffer until told to exit
      _exit(0);
    }
    EXPECT_EQ(read(out[0], ref, sizeof(*ref)), static_cast<ssize_t>(sizeof(*ref)));
    *release_fd = in[1];
    return p;
  };
  BufferRef r1, r2;
  int rel1 = -1, rel2 = -1;
  const pid_t o1 = spawn_owner('1', &r1, &rel1);
  const pid_t o2 = spawn_owner('2', &r2, &rel2);
  ASSERT_GT(o1, 0);
  ASSERT_GT(o2, 0);
  PeerMemory& pm = PeerMemory::instance();
  const size_t before = pm.mapped();
  Result<char*> p1 = pm.resolve(r1);
  ASSERT_TRUE(p1.is_ok()) << p1.status().message();
  EXPECT_EQ(p1.value()[0], '1');
  send_byte(rel1);
  int status = 0;
  ASSERT_EQ(waitpid(o1, &status, 0), o1);
  Result<char*> p2 = pm.resolve(r2);
  ASSERT_TRUE(p2.is_ok()) << p2.status().message();
  EXPECT_EQ(p2.value()[0], '2');
  EXPECT_EQ(pm.mapped(), before + 2);
  EXPECT_TRUE(maps_inode(r1.fd_id));
  EXPECT_EQ(p1.value()[0], '1');
  send_byte(rel2);
  ASSERT_EQ(waitpid(o2, &status, 0), o2);
}

}  // namespace
}  // namespace genie::shim
