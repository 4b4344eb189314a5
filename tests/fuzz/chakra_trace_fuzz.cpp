// SPDX-License-Identifier: Apache-2.0
// Fuzz target: Chakra execution traces read by `genie sim --workload` (netsim::chakra::parse_trace). The input is a
// trace file. Whatever the bytes, parsing returns a trace or an error that names the file; a trace that parses
// encodes to bytes that parse to the same encoding again (decoding keeps everything the encoder writes).
#include <cstddef>
#include <cstdint>

#include "fuzz_check.hpp"
#include "genie/netsim/chakra_et.hpp"

extern "C" {
size_t genie_fuzz_accepted = 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace genie::netsim::chakra;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto r = parse_trace(bytes, "fuzz.et");
  if (!r.is_ok()) {
    GENIE_FUZZ_CHECK(r.status().message().rfind("fuzz.et: ", 0) == 0,
                     "the error does not name the file: " + r.status().message());
    return 0;
  }
  ++genie_fuzz_accepted;
  const std::string once = encode_trace(r.value());
  auto again = parse_trace(once, "re-encoded");
  GENIE_FUZZ_CHECK(again.is_ok(), "a parsed trace re-encodes to bytes that do not parse: " + again.status().message());
  GENIE_FUZZ_CHECK(encode_trace(again.value()) == once, "re-encoding a parsed trace is not stable");
  GENIE_FUZZ_CHECK(again->nodes.size() == r->nodes.size(), "re-encoding changed the number of nodes");
  return 0;
}
