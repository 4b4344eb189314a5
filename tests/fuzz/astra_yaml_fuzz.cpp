// SPDX-License-Identifier: Apache-2.0
// Fuzz target: ASTRA-sim analytical network YAML files (--topology FILE.yaml) and the generic shape names
// (ring:N, torus2d:XxY, torus3d:XxYxZ). Byte 0 even: the rest is a YAML file; odd: a --topology name. Whatever
// the bytes, loading returns a topology or a Status (never a hang or an allocation the size of the input's
// numbers); a topology passes the invariants of topology_check.hpp.
#include <cstddef>
#include <cstdint>

#include "topology_check.hpp"

extern "C" {
size_t genie_fuzz_accepted = 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text = genie::fuzz::text_of(data + 1, size - 1);
  genie::Result<std::shared_ptr<const genie::netsim::Topology>> t =
      genie::invalid_argument("not parsed");
  // At most 2^16 NPUs (TopologyOptions::max_npus; the default is 4 Mi): larger topologies take the same paths at
  // larger n, and a legal 4-million-NPU ring (regress-ring-4000062) takes 11-12 s to build under ASan and coverage
  // on the 2-core VM (2 s natively), past the 10 s per-input timeout. The limit's check itself is fuzzed at 2^16.
  constexpr int64_t kFuzzMaxNpus = int64_t{1} << 16;
  if ((data[0] & 1) == 0) {
    t = genie::netsim::parse_astra_yaml(text, "fuzz.yaml", kFuzzMaxNpus);
  } else {
    // Only shape names: anything ending in .json/.yaml would be opened as a file.
    if (text.rfind("ring:", 0) != 0 && text.rfind("torus2d:", 0) != 0 && text.rfind("torus3d:", 0) != 0) return 0;
    genie::netsim::TopologyOptions opts;
    opts.max_npus = kFuzzMaxNpus;
    t = genie::netsim::load_topology(text, opts);
  }
  if (!t.is_ok()) return 0;
  ++genie_fuzz_accepted;
  // The invariant check writes and re-reads the whole graph as JSON; a legal FullyConnected of 2000 NPUs (4 Mi
  // links, finding timeout-fb8bdc7c of 2026-12-04) takes it past the 10 s timeout under ASan. Built and accepted
  // like any other; the check itself runs on graphs of up to 2^16 links, which take the same paths. Its time grows
  // with the links (route checks up to 512 nodes): under ASan a FullyConnected of 1000 NPUs (~2^20 links) took 11 s
  // (finding timeout-2300e333 of 2026-12-04), of 512 NPUs 10.5 s, of 256 NPUs (2^16 links) 2.7 s.
  if (t.value()->links().size() > (size_t{1} << 16)) return 0;
  genie::fuzz::check_topology(*t.value());
  return 0;
}
