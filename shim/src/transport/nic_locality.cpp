// SPDX-License-Identifier: Apache-2.0
// NIC locality from hwloc: the NIC's PCI device (by bus id, else its OS device by name), its nearest CPU-side
// ancestor, and how many levels up from there the rank's CPUs are covered.
#include "transport/nic_locality.hpp"

#include <hwloc.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <mutex>

namespace genie::shim {
namespace {

// Components hwloc is told to leave out. Its GPU plugins (cuda, nvml, opencl, rsmi, levelzero, gl) enumerate GPUs
// through their runtimes, which in a Genie process are the emulated ones; only PCI and Linux OS devices matter for
// NICs. Its `pci` plugin (libpciaccess) is left out too: the Linux backend reads the same PCI devices, bridges and
// NIC parents from sysfs, and the plugin, loaded into every rank, leaks ~1 KiB per topology load (LeakSanitizer:
// 9 callocs from the unloaded hwloc_pci.so, hwloc 2.9 on Debian 12).
constexpr const char* kLeftOutComponents[] = {"cuda", "nvml", "opencl", "rsmi", "levelzero", "gl", "pci"};

Status prepare(hwloc_topology_t t) {
  if (hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) != 0)
    return system_error("hwloc: cannot keep I/O devices");
  // One name per call; a plugin this hwloc was built without is simply not there to leave out.
  for (const char* name : kLeftOutComponents) (void)hwloc_topology_set_components(t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, name);
  return Status::ok();
}

struct Bitmap {
  hwloc_bitmap_t b = hwloc_bitmap_alloc();
  ~Bitmap() { hwloc_bitmap_free(b); }
};

}  // namespace

HostTopology::~HostTopology() {
  if (topo_) hwloc_topology_destroy(topo_);
}

Result<std::shared_ptr<const HostTopology>> HostTopology::this_machine() {
  static std::mutex mu;
  static std::shared_ptr<const HostTopology> loaded;
  static Status failed;
  std::lock_guard<std::mutex> lock(mu);
  if (loaded) return loaded;
  if (!failed.is_ok()) return failed;
  std::unique_ptr<HostTopology> h(new HostTopology());
  if (hwloc_topology_init(&h->topo_) != 0) {
    h->topo_ = nullptr;
    return failed = system_error("hwloc: cannot initialise a topology");
  }
  if (Status s = prepare(h->topo_); !s.is_ok()) return failed = s;
  if (hwloc_topology_load(h->topo_) != 0)
    return failed = system_error(std::string("hwloc: cannot load this machine's topology: ") + std::strerror(errno));
  loaded = std::move(h);
  return loaded;
}

Result<std::unique_ptr<HostTopology>> HostTopology::from_xml(const std::string& xml) {
  std::unique_ptr<HostTopology> h(new HostTopology());
  if (hwloc_topology_init(&h->topo_) != 0) {
    h->topo_ = nullptr;
    return system_error("hwloc: cannot initialise a topology");
  }
  GENIE_TRY(prepare(h->topo_));
  if (hwloc_topology_set_xmlbuffer(h->topo_, xml.data(), static_cast<int>(xml.size()) + 1) != 0 ||
      hwloc_topology_load(h->topo_) != 0)
    return invalid_argument("hwloc: the XML topology could not be read");
  return h;
}

int HostTopology::distance(const NicDesc& nic, const std::string& cpus) const {
  hwloc_obj_t dev = nullptr;
  if (nic.pci) {
    const auto& p = *nic.pci;
    dev = hwloc_get_pcidev_by_busid(topo_, p[0], p[1], p[2], p[3]);
  }
  for (hwloc_obj_t o = nullptr; dev == nullptr && (o = hwloc_get_next_osdev(topo_, o)) != nullptr;)
    if (o->name && nic.domain == o->name) dev = o;
  if (dev == nullptr) return -1;
  hwloc_obj_t near = hwloc_get_non_io_ancestor_obj(topo_, dev);
  Bitmap set;
  if (near == nullptr || hwloc_bitmap_list_sscanf(set.b, cpus.c_str()) != 0 || hwloc_bitmap_iszero(set.b)) return -1;
  if (hwloc_bitmap_isincluded(set.b, near->cpuset)) return 0;
  hwloc_obj_t cover = hwloc_get_obj_covering_cpuset(topo_, set.b);
  if (cover == nullptr) cover = hwloc_get_root_obj(topo_);
  hwloc_obj_t common = hwloc_get_common_ancestor_obj(topo_, near, cover);
  return std::max(1, near->depth - common->depth);
}

std::vector<std::string> HostTopology::nic_names() const {
  std::vector<std::string> names;
  for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_osdev(topo_, o)) != nullptr;)
    if (o->name && (o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK || o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS))
      names.emplace_back(o->name);
  return names;
}

std::string HostTopology::bound_cpus() const {
  Bitmap set;
  if (hwloc_get_cpubind(topo_, set.b, HWLOC_CPUBIND_PROCESS) != 0 || hwloc_bitmap_iszero(set.b))
    hwloc_bitmap_copy(set.b, hwloc_topology_get_allowed_cpuset(topo_));
  char* s = nullptr;
  if (hwloc_bitmap_list_asprintf(&s, set.b) < 0 || s == nullptr) return "";
  std::string out(s);
  free(s);
  return out;
}

size_t choose_nic(const std::vector<int>& distances, int gpu) {
  if (distances.empty()) return 0;
  int best = INT_MAX;
  for (int d : distances)
    if (d >= 0) best = std::min(best, d);
  std::vector<size_t> nearest;
  for (size_t i = 0; i < distances.size(); ++i)
    if (best == INT_MAX || distances[i] == best) nearest.push_back(i);
  return nearest[static_cast<size_t>(std::max(gpu, 0)) % nearest.size()];
}

}  // namespace genie::shim
