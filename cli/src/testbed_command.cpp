// SPDX-License-Identifier: Apache-2.0
// `genie testbed up|down|status`: the one-machine network of namespaces the real fabric runs on.
#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "genie/sched/testbed.hpp"

namespace genie::cli {

using sched::parse_rate;
using sched::Testbed;
using sched::testbed_down;
using sched::testbed_link_states;
using sched::testbed_load;
using sched::testbed_up;
using sched::TestbedSpec;
namespace {

void print_testbed(const Testbed& t) {
  std::printf("testbed %s: %d hosts on bridge %s, links %.3g Gbit/s (TBF burst %llu bytes on both ends)\n",
              t.name.c_str(), t.hosts, t.bridge.c_str(), t.link_bits_per_s / 1e9,
              static_cast<unsigned long long>(t.burst_bytes));
  for (int i = 0; i < t.hosts; ++i)
    std::printf("  host %d: namespace %s, address %s, bridge port %s\n", i, t.namespaces[static_cast<size_t>(i)].c_str(),
                t.addresses[static_cast<size_t>(i)].c_str(), t.bridge_ports[static_cast<size_t>(i)].c_str());
  if (t.hosts >= 2)
    std::printf("  measured h0 -> h1: one-way latency %.1f us, TCP goodput %.3f Gbit/s (%.1f%% of the link rate)\n",
                t.measured_latency_us, t.measured_goodput_bits_per_s / 1e9,
                100 * t.measured_goodput_bits_per_s / t.link_bits_per_s);
  if (t.measured_ring_goodput_bits_per_s > 0)
    std::printf("  measured ring (host i -> i+1, all at once): slowest TCP goodput %.3f Gbit/s (%.1f%% of the link rate)\n",
                t.measured_ring_goodput_bits_per_s / 1e9, 100 * t.measured_ring_goodput_bits_per_s / t.link_bits_per_s);
  if (!t.latency_note.empty()) std::printf("  latency: %s\n", t.latency_note.c_str());
  std::printf("  netsim topology: %s (genie run --fabric sim:%s)\n", t.topology_file.c_str(), t.topology_file.c_str());
}

}  // namespace

void register_testbed_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "testbed",
      "A network of H hosts on this machine: network namespaces joined by veth pairs through a Linux bridge, each "
      "link shaped with TBF on both ends. Needs root. genie run --testbed runs rank i in host i mod H.");
  cmd->require_subcommand(1);
  static TestbedSpec spec;
  static std::string link = "1gbit";
  static std::string name = "genie";
  auto* up = cmd->add_subcommand("up", "Create the testbed (harmless when it is already up)");
  up->add_option("--hosts", spec.hosts, "Number of hosts")->required()->check(CLI::Range(1, 250));
  up->add_option("--link", link, "Link rate, each direction: 1gbit, 500mbit, 2.5g ... (default 1gbit)");
  up->add_option("--latency-us", spec.latency_us,
                 "One-way latency to add (needs netem; without it the latency is measured, not set)")
      ->check(CLI::Range(0.0, 1e6));
  up->add_option("--name", name, "Testbed name: prefix of its namespaces and links (default genie)");
  up->add_option("--subnet", spec.subnet, "First three octets of the hosts' /24 (default 10.213.0)");
  up->add_option("--topology-out", spec.topology_out, "Also write the netsim topology to this file");
  up->callback([exit_code] {
    auto rate = parse_rate(link);
    if (!rate.is_ok()) {
      std::cerr << "genie testbed up: " << rate.status().message() << "\n";
      *exit_code = 2;
      return;
    }
    spec.link_bits_per_s = *rate;
    spec.name = name;
    bool already = false;
    auto t = testbed_up(spec, &already);
    if (!t.is_ok()) {
      std::cerr << "genie testbed up: " << t.status().message() << "\n";
      *exit_code = t.status().code() == Errc::kInvalidArgument ? 2 : 1;
      return;
    }
    if (already) std::printf("testbed %s is already up; nothing changed (genie testbed down first to rebuild it)\n",
                             name.c_str());
    print_testbed(*t);
  });
  auto* down = cmd->add_subcommand("down", "Remove exactly what 'up' created (harmless when nothing is up)");
  down->add_option("--name", name, "Testbed name (default genie)");
  down->callback([exit_code] {
    bool was_up = false;
    Status s = testbed_down(name, &was_up);
    if (!s.is_ok()) {
      std::cerr << "genie testbed down: " << s.message() << "\n";
      *exit_code = 1;
      return;
    }
    std::printf(was_up ? "testbed %s removed\n" : "no testbed %s is up; nothing to remove\n", name.c_str());
  });
  auto* status = cmd->add_subcommand("status", "Describe the testbed that is up, with each link's state");
  status->add_option("--name", name, "Testbed name (default genie)");
  status->callback([exit_code] {
    auto t = testbed_load(name);
    if (!t.is_ok()) {
      std::printf("%s\n", t.status().message().c_str());
      *exit_code = 1;
      return;
    }
    print_testbed(*t);
    auto states = testbed_link_states(*t);
    for (size_t i = 0; i < states.size(); ++i) std::printf("  link of host %zu: %s\n", i, states[i].c_str());
  });
}

}  // namespace genie::cli
