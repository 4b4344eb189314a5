// SPDX-License-Identifier: Apache-2.0
// Example: CUDA IPC between two processes on one host (as torch.multiprocessing does): the parent
// exports device memory and an interprocess event; the child maps the memory, waits for the event,
// reads the parent's bytes and writes its own, which the parent then sees.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "check.cuh"

extern char** environ;

static std::string to_hex(const void* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<const unsigned char*>(p)[i];
    s += d[c >> 4];
    s += d[c & 15];
  }
  return s;
}
static void from_hex(const char* s, void* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    auto v = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
    static_cast<unsigned char*>(p)[i] = static_cast<unsigned char>(v(s[2 * i]) << 4 | v(s[2 * i + 1]));
  }
}

static const size_t kBytes = 1 << 20;

static int child(const char* mem_hex, const char* ev_hex) {
  cudaIpcMemHandle_t mh;
  cudaIpcEventHandle_t eh;
  from_hex(mem_hex, &mh, sizeof(mh));
  from_hex(ev_hex, &eh, sizeof(eh));
  void* d = nullptr;
  CHECK_CUDA(cudaIpcOpenMemHandle(&d, mh, cudaIpcMemLazyEnablePeerAccess));
  cudaEvent_t ev;
  CHECK_CUDA(cudaIpcOpenEventHandle(&ev, eh));
  CHECK_CUDA(cudaEventSynchronize(ev));  // the parent's copy into d is complete
  std::vector<unsigned char> host(kBytes);
  CHECK_CUDA(cudaMemcpy(host.data(), d, kBytes, cudaMemcpyDeviceToHost));
  EXPECT_EQ_INT("child reads the parent's bytes", 42, host[kBytes - 1]);
  CHECK_CUDA(cudaMemset(d, 7, 16));
  CHECK_CUDA(cudaIpcCloseMemHandle(d));
  return finish("ipc child");
}

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "child") == 0) return child(argv[2], argv[3]);
  unsigned char* d;
  CHECK_CUDA(cudaMalloc(&d, kBytes));
  std::vector<unsigned char> host(kBytes, 42);
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreate(&s));
  cudaEvent_t ev;
  CHECK_CUDA(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming | cudaEventInterprocess));
  cudaIpcMemHandle_t mh;
  cudaIpcEventHandle_t eh;
  CHECK_CUDA(cudaIpcGetMemHandle(&mh, d));
  CHECK_CUDA(cudaIpcGetEventHandle(&eh, ev));
  CHECK_CUDA(cudaMemcpyAsync(d, host.data(), kBytes, cudaMemcpyHostToDevice, s));
  CHECK_CUDA(cudaEventRecord(ev, s));
  std::string mhex = to_hex(&mh, sizeof(mh)), ehex = to_hex(&eh, sizeof(eh));
  char* args[] = {argv[0], const_cast<char*>("child"), mhex.data(), ehex.data(), nullptr};
  pid_t pid;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, args, environ) != 0) return 3;
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_EQ_INT("child exit code", 0, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  CHECK_CUDA(cudaMemcpy(host.data(), d, 16, cudaMemcpyDeviceToHost));
  EXPECT_EQ_INT("parent sees the child's write", 7, host[0]);
  cudaEvent_t plain;
  CHECK_CUDA(cudaEventCreate(&plain));
  EXPECT_ERR("non-interprocess event has no handle", cudaErrorInvalidResourceHandle, cudaIpcGetEventHandle(&eh, plain));
  return finish("ipc");
}
