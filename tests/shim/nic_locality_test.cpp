// SPDX-License-Identifier: Apache-2.0
// NIC locality: an hwloc topology of a two-socket server with two NICs per socket (given as hwloc XML), the
// NIC each emulated GPU's endpoint takes for a rank bound to either socket or to none, and this machine's own
// topology through FabricEndpoint::open.
#include "transport/nic_locality.hpp"

#include <gtest/gtest.h>

#include "transport/fabric_endpoint.hpp"

namespace genie::shim {
namespace {

// A PCI NIC with its OpenFabrics OS device (osdev_type 3), as lstopo exports it.
std::string nic(int gp, const char* busid, const char* name) {
  return std::string("<object type=\"PCIDev\" gp_index=\"") + std::to_string(gp) + "\" pci_busid=\"" + busid +
         "\" pci_type=\"0207 [15b3:101b] [15b3:0007] 00\" pci_link_speed=\"0.0\">"
         "<object type=\"OSDev\" gp_index=\"" +
         std::to_string(gp + 1) + "\" name=\"" + name + "\" osdev_type=\"3\"/></object>";
}

// One package: CPUs `cpus` (mask), a NUMA node, two cores, and a host bridge with two NICs.
std::string package(int idx, const char* mask, int pu0, const char* bus, const char* nic_a, const char* nic_b) {
  const std::string i = std::to_string(idx), nodeset = idx == 0 ? "0x00000001" : "0x00000002";
  auto set = [&](const std::string& c) {
    return " cpuset=\"" + c + "\" complete_cpuset=\"" + c + "\" nodeset=\"" + nodeset + "\" complete_nodeset=\"" +
           nodeset + "\"";
  };
  auto pu = [&](int p) {
    const std::string m = p == 0 ? "0x00000001" : p == 1 ? "0x00000002" : p == 2 ? "0x00000004" : "0x00000008";
    const std::string ps = std::to_string(p);
    return "<object type=\"Core\" os_index=\"" + ps + "\"" + set(m) + " gp_index=\"" + std::to_string(100 + p) +
           "\"><object type=\"PU\" os_index=\"" + ps + "\"" + set(m) + " gp_index=\"" + std::to_string(110 + p) +
           "\"/></object>";
  };
  const int g = 20 + 10 * idx;
  return "<object type=\"Package\" os_index=\"" + i + "\"" + set(mask) + " gp_index=\"" + std::to_string(g) + "\">" +
         "<object type=\"NUMANode\" os_index=\"" + i + "\"" + set(mask) + " gp_index=\"" + std::to_string(g + 1) +
         "\" local_memory=\"1073741824\"/>" + pu(pu0) + pu(pu0 + 1) + "<object type=\"Bridge\" gp_index=\"" +
         std::to_string(g + 2) + "\" bridge_type=\"0-1\" depth=\"0\" bridge_pci=\"0000:[" + bus + "-" + bus + "]\">" +
         nic(g + 3, (std::string("0000:") + bus + ":00.0").c_str(), nic_a) +
         nic(g + 5, (std::string("0000:") + bus + ":00.1").c_str(), nic_b) + "</object></object>";
}

// Socket 0: CPUs 0-1, NICs mlx5_0 and mlx5_1 (bus 0x17); socket 1: CPUs 2-3, NICs mlx5_2, mlx5_3 (bus 0x85).
std::string two_socket_server() {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?><!DOCTYPE topology SYSTEM \"hwloc2.dtd\">"
         "<topology version=\"2.0\"><object type=\"Machine\" os_index=\"0\" cpuset=\"0x0000000f\" "
         "complete_cpuset=\"0x0000000f\" allowed_cpuset=\"0x0000000f\" nodeset=\"0x00000003\" "
         "complete_nodeset=\"0x00000003\" allowed_nodeset=\"0x00000003\" gp_index=\"1\">" +
         package(0, "0x00000003", 0, "17", "mlx5_0", "mlx5_1") +
         package(1, "0x0000000c", 2, "85", "mlx5_2", "mlx5_3") + "</object></topology>";
}

std::vector<NicDesc> server_nics() {
  // libfabric's order; the third is found by its PCI address only (as verbs reports it: its domain name is no
  // OS device hwloc knows), the others by name.
  return {{"mlx5_0", {}}, {"mlx5_1", {}}, {"rdma-by-pci", std::array<unsigned, 4>{0, 0x85, 0, 0}}, {"mlx5_3", {}}};
}

std::vector<int> distances(const HostTopology& t, const std::string& cpus) {
  std::vector<int> d;
  for (const NicDesc& n : server_nics()) d.push_back(t.distance(n, cpus));
  return d;
}

TEST(NicLocality, ARankBoundToOneSocketUsesThatSocketsNics) {
  auto t = HostTopology::from_xml(two_socket_server());
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  // Bound to socket 1 (a core of it, or all of it): its NICs are local, socket 0's are one level away.
  EXPECT_EQ(distances(**t, "3"), (std::vector<int>{1, 1, 0, 0}));
  EXPECT_EQ(distances(**t, "2-3"), (std::vector<int>{1, 1, 0, 0}));
  EXPECT_EQ(distances(**t, "0"), (std::vector<int>{0, 0, 1, 1}));
  // GPUs 0..3 of a rank on socket 1 alternate between mlx5_2 and mlx5_3; on socket 0 between mlx5_0, mlx5_1.
  const auto d1 = distances(**t, "2-3"), d0 = distances(**t, "0-1");
  EXPECT_EQ(choose_nic(d1, 0), 2u);
  EXPECT_EQ(choose_nic(d1, 1), 3u);
  EXPECT_EQ(choose_nic(d1, 6), 2u);
  EXPECT_EQ(choose_nic(d0, 5), 1u);
}

TEST(NicLocality, AnUnboundRankSpreadsItsGpusOverEveryNic) {
  auto t = HostTopology::from_xml(two_socket_server());
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  // Every CPU: no NIC's socket holds them all, each is one level below the machine.
  const auto d = distances(**t, "0-3");
  EXPECT_EQ(d, (std::vector<int>{1, 1, 1, 1}));
  for (int g = 0; g < 8; ++g) EXPECT_EQ(choose_nic(d, g), static_cast<size_t>(g % 4));
}

TEST(NicLocality, UnknownNicsAreNeverPreferredAndAllUnknownKeepsLibfabricsOrder) {
  auto t = HostTopology::from_xml(two_socket_server());
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(t.value()->nic_names(), (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}));
  EXPECT_EQ(t.value()->distance({"lo", {}}, "0"), -1);
  EXPECT_EQ(t.value()->distance({"nosuch", std::array<unsigned, 4>{0, 0x99, 0, 0}}, "0"), -1);
  EXPECT_EQ(t.value()->distance({"mlx5_0", {}}, "not-a-cpu-list"), -1);
  EXPECT_EQ(choose_nic({-1, 0}, 0), 1u);
  EXPECT_EQ(choose_nic({-1, 0}, 1), 1u);
  EXPECT_EQ(choose_nic({-1, -1, -1}, 4), 1u);
  EXPECT_EQ(choose_nic({}, 3), 0u);
}

TEST(NicLocality, BadXmlIsAnInvalidArgument) {
  auto t = HostTopology::from_xml("<topology>");
  ASSERT_FALSE(t.is_ok());
  EXPECT_EQ(t.status().code(), Errc::kInvalidArgument);
}

TEST(NicLocality, ThisMachineNeverGivesAGpuANicHwlocCannotPlaceWhenOneItCanExists) {
  // tcp without a source address offers every interface as a domain (here eth0 or the like, and lo).
  auto topo = HostTopology::this_machine();
  ASSERT_TRUE(topo.is_ok()) << topo.status().message();
  const std::string cpus = topo.value()->bound_cpus();
  EXPECT_FALSE(cpus.empty());
  for (int gpu = 0; gpu < 3; ++gpu) {
    auto ep = FabricEndpoint::open("tcp", "", gpu);
    ASSERT_TRUE(ep.is_ok()) << ep.status().message();
    const int d = topo.value()->distance({ep.value()->domain_name(), {}}, cpus);
    const int lo = topo.value()->distance({"lo", {}}, cpus);
    EXPECT_EQ(lo, -1);  // the loopback interface is no PCI device
    if (ep.value()->domain_name() == "lo") {
      // Only acceptable when hwloc places no interface at all (a machine without PCI NICs).
      EXPECT_TRUE(topo.value()->nic_names().empty()) << "GPU " << gpu << " got lo although a PCI interface is known";
    } else {
      EXPECT_GE(d, 0) << ep.value()->domain_name();
    }
  }
}

}  // namespace
}  // namespace genie::shim
