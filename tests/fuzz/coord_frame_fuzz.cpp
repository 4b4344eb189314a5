// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the coordinator's frame decoder and payload decoders take bytes from any process that can
// reach the coordinator's port. Byte 0 picks the mode: even, the input is a byte stream fed to one
// FrameDecoder in chunks whose sizes come from the input itself; odd, bytes 1-2 name a message type and
// the rest is decoded as that type's payload. Whatever the bytes, decoding returns a message or an error
// and never crashes, reads out of bounds or loops; a decoded message re-encodes and decodes to the same type.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "genie/sched/coord_protocol.hpp"

using namespace genie::sched::coord;

// Inputs that decoded to at least one message (the replay driver prints it: seeds must reach the decoders).
extern "C" {
size_t genie_fuzz_accepted = 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if ((data[0] & 1) == 0) {
    FrameDecoder dec;
    size_t pos = 1;
    unsigned frames = 0;
    while (pos < size) {
      size_t chunk = 1 + data[pos] % 64;  // the chunking of the stream is part of the input
      ++pos;
      if (chunk > size - pos) chunk = size - pos;
      dec.feed(data + pos, chunk);
      pos += chunk;
      for (;;) {
        auto r = dec.next();
        if (!r.is_ok()) return 0;  // a final error: the connection would close
        if (!r.value()) break;     // needs more bytes
        const Message& m = *r.value();
        if (++frames > 100000) std::abort();  // more frames than bytes: the decoder is looping
        if (frames == 1) ++genie_fuzz_accepted;
        // What decoded re-encodes to a frame of the same type.
        auto again = encode_frame(m, 1);
        FrameDecoder check;
        check.feed(again.data(), again.size());
        auto back = check.next();
        if (!back.is_ok() || !back.value() || type_of(*back.value()) != type_of(m)) std::abort();
      }
    }
    return 0;
  }
  if (size < 3) return 0;
  const uint16_t type = static_cast<uint16_t>(data[1] | (data[2] << 8));
  auto r = decode_payload(type, data + 3, size - 3);
  if (r.is_ok()) {
    ++genie_fuzz_accepted;
    (void)encode_frame(r.value(), 1);
  }
  return 0;
}
