// SPDX-License-Identifier: Apache-2.0
// Writes the seed corpus of coord_frame_fuzz: one file per message type (a stream of valid frames, seq 1..),
// a stream of every type, and payload-mode seeds. Run once to (re)make tests/fuzz/corpus/coord_frame.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "genie/sched/coord_protocol.hpp"

using namespace genie::sched::coord;

namespace {
void write(const std::string& path, const std::vector<uint8_t>& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fclose(f) != 0) {
    std::perror(path.c_str());
    std::exit(1);
  }
}
// Stream mode: byte 0 even, then (chunk length byte, chunk) pairs.
std::vector<uint8_t> stream(const std::vector<uint8_t>& frames) {
  std::vector<uint8_t> out{0};
  for (size_t i = 0; i < frames.size(); i += 48) {
    size_t n = std::min<size_t>(48, frames.size() - i);
    out.push_back(static_cast<uint8_t>(n - 1));
    out.insert(out.end(), frames.begin() + static_cast<long>(i), frames.begin() + static_cast<long>(i + n));
  }
  return out;
}
}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::fprintf(stderr, "make_coord_seeds: %s: %s\n", dir.c_str(), ec.message().c_str());
    return 1;
  }
  Records rec;
  rec.labels = {"ncclAllReduce", "gemm"};
  rec.ops.push_back(OpRecord{3, 0, 1, 0, 1000, 2000, 4096, 77, 1});
  Resolved res;
  res.comm = 77;
  res.seq = 1;
  res.end_ns = 5000;
  res.epoch = 1;
  Resolved bad = res;
  bad.status = 3;
  bad.error = "peer exited";
  std::vector<Message> all = {Challenge{}, Hello{}, Welcome{}, CommJoin{}, Coll{}, P2p{}, Promise{}, rec, Bye{}, res,
                              bad, Want{7000, 6000}, Probe{3}, Quiet{3, 1, 1, 2500}, Resume{5000, 2},
                              Bound{0, 77, 1, -1, -1, 4000}};
  std::vector<uint8_t> every;
  uint64_t seq = 1;
  for (size_t i = 0; i < all.size(); ++i) {
    auto f = encode_frame(all[i], 1);
    write(dir + "/stream_" + std::to_string(i), stream(f));
    auto g = encode_frame(all[i], seq++);
    every.insert(every.end(), g.begin(), g.end());
    // Payload mode: byte 0 odd, the type, the payload (the frame minus its header).
    const uint16_t t = static_cast<uint16_t>(type_of(all[i]));
    std::vector<uint8_t> p{1, static_cast<uint8_t>(t & 0xff), static_cast<uint8_t>(t >> 8)};
    p.insert(p.end(), f.begin() + static_cast<long>(std::min<size_t>(f.size(), kHeaderBytes)), f.end());
    write(dir + "/payload_" + std::to_string(i), p);
  }
  write(dir + "/stream_all", stream(every));
  std::printf("wrote %zu seeds to %s\n", all.size() * 2 + 1, dir.c_str());
  return 0;
}
