// SPDX-License-Identifier: Apache-2.0
// Testbed: H emulated hosts on one machine as network namespaces, each joined to a Linux bridge by a veth
// pair shaped with TBF on both ends, plus the same network written as a netsim topology (`genie testbed`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "genie/common/status.hpp"

namespace genie::sched {

/// What `genie testbed up` asks for.
struct TestbedSpec {
  std::string name = "genie";      ///< prefix of everything created (namespaces <name>-h<i>, bridge <name>-br)
  int hosts = 2;
  double link_bits_per_s = 1e9;    ///< TBF rate of every link, each direction
  double latency_us = -1;          ///< requested one-way latency (< 0: none requested)
  std::string subnet = "10.213.0"; ///< /24 prefix of the hosts' addresses (.1 .. .H), used only inside the testbed
  std::string topology_out;        ///< where to write the netsim topology too ("" : only the state directory)
};

/// A testbed that is up, as recorded in its state file.
struct Testbed {
  std::string name;
  int hosts = 0;
  double link_bits_per_s = 0;
  uint64_t burst_bytes = 0;
  std::string bridge;
  std::vector<std::string> namespaces;    ///< by host
  std::vector<std::string> addresses;     ///< IPv4 of each host
  std::vector<std::string> bridge_ports;  ///< veth end on the bridge, by host
  std::string latency_note;               ///< what happened to a --latency-us request
  double measured_latency_us = 0;         ///< one-way, from UDP ping-pong h0 <-> h1
  double measured_goodput_bits_per_s = 0; ///< TCP payload rate h0 -> h1
  double measured_ring_goodput_bits_per_s = 0;  ///< slowest TCP stream of host i -> i+1, all hosts at once
  std::string topology_file;              ///< the netsim topology of this network
};

/// TBF burst for a link rate: max(64 KiB, rate x 1 ms) (DESIGN.md "Real fabric": a smaller burst than one
/// GSO super-packet drops it, and 64 KiB at 10 Gbit/s halves throughput).
uint64_t tbf_burst_bytes(double link_bits_per_s);

/// Parses "1gbit", "500mbit", "2.5G", "1e9" (bits per second). InvalidArgument names the text.
Result<double> parse_rate(const std::string& text);

/// Directory of testbed state files (/run/genie).
std::string testbed_state_dir();

/// Creates the testbed (root needed: kInvalidUsage with a clear message otherwise). Up twice is harmless:
/// `*already` is set and the existing testbed is returned unchanged.
Result<Testbed> testbed_up(const TestbedSpec& spec, bool* already);
/// Removes exactly what testbed_up created (from the state file). `*was_up` is false when nothing was up.
Status testbed_down(const std::string& name, bool* was_up);
/// Reads the state of a testbed that is up (NotFound when none is).
Result<Testbed> testbed_load(const std::string& name);
/// The netsim topology (explicit JSON graph) of a testbed with the given measured link parameters.
std::string testbed_topology_json(const Testbed& tb);

/// Operational state of each host's link ("up", "down", ...), by host, read from the bridge ports.
std::vector<std::string> testbed_link_states(const Testbed& tb);

/// In a forked child before exec: enters host `host`'s network namespace and its own UTS namespace with
/// hostname <name>-h<host> (so ranks on different testbed hosts see different hosts). Async-signal-safe
/// enough for use between fork and exec (no allocation). Returns 0 or an errno.
int testbed_enter_host(const char* netns_path, const char* hostname);

}  // namespace genie::sched
