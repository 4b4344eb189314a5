// SPDX-License-Identifier: Apache-2.0
// Fuzz target: topology JSON files (--topology FILE.json, GENIE_TOPOLOGY): server presets and explicit graphs.
// Byte 0 picks the TopologyOptions the command line would add (--nodes 1-4, --gpus-per-node, --fabric,
// --oversubscription); the rest is the file. Whatever the bytes, parsing returns a topology or a Status; a
// topology re-serialises as an explicit graph that parses to the same nodes and links, its routes are
// connected channel chains, and planning a collective on it returns a Schedule or a Status.
#include <cstddef>
#include <cstdint>

#include "topology_check.hpp"

extern "C" {
size_t genie_fuzz_accepted = 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t o = data[0];
  genie::netsim::TopologyOptions opts;
  opts.nodes = 1 + (o & 3);
  opts.fabric = (o & 4) ? "fat-tree" : "rail";
  opts.gpus_per_node = (o >> 3) & 3;  // 0: the preset's count
  opts.oversubscription = (o & 0x20) ? 2.0 : 1.0;
  const std::string text = genie::fuzz::text_of(data + 1, size - 1);
  auto t = genie::netsim::parse_topology_json(text, "fuzz.json", opts);
  if (!t.is_ok()) {
    GENIE_FUZZ_CHECK(t.status().code() == genie::Errc::kInvalidArgument && !t.status().message().empty(),
                     "a bad file is an InvalidArgument with a message, not " + t.status().to_string());
    return 0;
  }
  ++genie_fuzz_accepted;
  genie::fuzz::check_topology(*t.value());
  return 0;
}
