// SPDX-License-Identifier: Apache-2.0
// libfabric, loaded on first use. libnccl.so.2 is preloaded into every program Genie runs, and Debian's
// libfabric.so.1 pulls in the PSM providers (libpsm_infinipath, libinfinipath), whose constructors install
// handlers for SIGSEGV, SIGBUS, SIGABRT, SIGINT and SIGTERM that end the process with exit code 1: a
// program that aborts (PyTorch's NCCL watchdog) would no longer die by SIGABRT. So the shim does not link
// libfabric: these definitions of the five functions it calls (hidden, so they stay inside libnccl.so.2)
// dlopen it when the real fabric is first used, restore every signal disposition the load changed, and
// forward to the versioned symbols of the ABI our headers describe.
#include <dlfcn.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <signal.h>

#include <cstring>
#include <mutex>

#include "genie/common/log.hpp"

namespace {

struct FabricLib {
  int (*getinfo)(uint32_t, const char*, const char*, uint64_t, const fi_info*, fi_info**) = nullptr;
  void (*freeinfo)(fi_info*) = nullptr;
  fi_info* (*dupinfo)(const fi_info*) = nullptr;
  int (*fabric)(fi_fabric_attr*, fid_fabric**, void*) = nullptr;
  const char* (*strerror)(int) = nullptr;
  std::string error;  // why it could not be loaded
};

template <class F>
bool resolve(void* h, const char* name, const char* version, F* out, std::string* error) {
  void* p = dlvsym(h, name, version);
  if (p == nullptr) {
    *error = std::string("libfabric.so.1 has no ") + name + "@" + version;
    return false;
  }
  *out = reinterpret_cast<F>(p);
  return true;
}

const FabricLib& lib() {
  static FabricLib l;
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction before[NSIG];
    for (int s = 1; s < NSIG; ++s) sigaction(s, nullptr, &before[s]);
    void* h = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    for (int s = 1; s < NSIG; ++s) {
      struct sigaction now {};
      if (sigaction(s, nullptr, &now) != 0) continue;
      if (now.sa_handler == before[s].sa_handler && now.sa_flags == before[s].sa_flags) continue;
      sigaction(s, &before[s], nullptr);
      GENIE_LOG_DEBUG("shim", "loading libfabric changed the handler of signal {} ({}); restored", s, strsignal(s));
    }
    if (h == nullptr) {
      const char* e = dlerror();
      l.error = std::string("cannot load libfabric.so.1: ") + (e ? e : "unknown error");
      GENIE_LOG_ERROR("shim", "{} (install libfabric1; the real fabric is unavailable)", l.error);
      return;
    }
    FabricLib t;
    if (resolve(h, "fi_getinfo", "FABRIC_1.3", &t.getinfo, &l.error) &&
        resolve(h, "fi_freeinfo", "FABRIC_1.3", &t.freeinfo, &l.error) &&
        resolve(h, "fi_dupinfo", "FABRIC_1.3", &t.dupinfo, &l.error) &&
        resolve(h, "fi_fabric", "FABRIC_1.1", &t.fabric, &l.error) &&
        resolve(h, "fi_strerror", "FABRIC_1.0", &t.strerror, &l.error)) {
      t.error.clear();
      l = t;
    } else {
      GENIE_LOG_ERROR("shim", "{}: the real fabric is unavailable", l.error);
    }
  });
  return l;
}

}  // namespace

extern "C" {

int fi_getinfo(uint32_t version, const char* node, const char* service, uint64_t flags, const struct fi_info* hints,
               struct fi_info** info) {
  const FabricLib& l = lib();
  if (!l.getinfo) return -FI_ENOSYS;
  return l.getinfo(version, node, service, flags, hints, info);
}

void fi_freeinfo(struct fi_info* info) {
  const FabricLib& l = lib();
  if (l.freeinfo) l.freeinfo(info);
}

struct fi_info* fi_dupinfo(const struct fi_info* info) {
  const FabricLib& l = lib();
  return l.dupinfo ? l.dupinfo(info) : nullptr;
}

int fi_fabric(struct fi_fabric_attr* attr, struct fid_fabric** fabric, void* context) {
  const FabricLib& l = lib();
  if (!l.fabric) return -FI_ENOSYS;
  return l.fabric(attr, fabric, context);
}

const char* fi_strerror(int errnum) {
  const FabricLib& l = lib();
  if (!l.strerror) return l.error.empty() ? "libfabric is not loaded" : l.error.c_str();
  return l.strerror(errnum);
}

}  // extern "C"
