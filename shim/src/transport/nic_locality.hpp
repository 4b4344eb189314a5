// SPDX-License-Identifier: Apache-2.0
// NIC locality: which of libfabric's domains (NICs) are nearest to the CPUs a rank runs on, from the machine's
// hwloc topology (PCI devices and their network / OpenFabrics OS devices). An HGX server pairs GPU k with the
// NIC on its PCIe switch; an emulated GPU has no PCI location, so the rank's CPU binding stands in for it.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "genie/common/status.hpp"

struct hwloc_topology;

namespace genie::shim {

/// One NIC as libfabric describes it: its domain name (an interface such as eth0 for tcp, a device such as
/// mlx5_0 for verbs) and, where the provider knows it, its PCI address (domain, bus, device, function).
struct NicDesc {
  std::string domain;
  std::optional<std::array<unsigned, 4>> pci;
};

class HostTopology {
 public:
  /// This machine's topology with its I/O devices (or the file HWLOC_XMLFILE names, as hwloc does); loaded once
  /// per process. hwloc's GPU plugins are left out (they would query the emulated CUDA runtime).
  static Result<std::shared_ptr<const HostTopology>> this_machine();
  /// A topology exported by hwloc as XML (lstopo's .xml): for tests and for describing another machine.
  static Result<std::unique_ptr<HostTopology>> from_xml(const std::string& xml);
  ~HostTopology();
  HostTopology(const HostTopology&) = delete;
  HostTopology& operator=(const HostTopology&) = delete;

  /// How far `nic` is from the CPUs in `cpus` (a list such as "0-3,8"): 0 when its nearest CPU-side object
  /// (package, NUMA node, ...) holds all of them, else the number of levels from that object up to the one
  /// that also holds them; -1 when hwloc does not know the NIC (no PCI address or OS device of that name).
  int distance(const NicDesc& nic, const std::string& cpus) const;
  /// The network interfaces and RDMA devices hwloc places on a PCI device (OS devices of those types).
  std::vector<std::string> nic_names() const;
  /// The CPUs this process may run on (its binding), as a list.
  std::string bound_cpus() const;

 private:
  HostTopology() = default;
  hwloc_topology* topo_ = nullptr;
};

/// The NIC for emulated GPU `gpu` given each NIC's distance (in libfabric's order): among the nearest NICs
/// (least known distance), number gpu mod their count; among all of them when no distance is known.
size_t choose_nic(const std::vector<int>& distances, int gpu);

}  // namespace genie::shim
