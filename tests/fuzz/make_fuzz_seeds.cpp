// SPDX-License-Identifier: Apache-2.0
// Writes seed corpora that have to be built from binary messages with the real encoders (the text formats'
// seeds are real files: presets, test data, outputs of genie commands; docs/testing.md says how each was made).
// Usage: make_fuzz_seeds bootstrap DIR
#include <arpa/inet.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bootstrap.hpp"

using namespace genie::shim;

namespace {

void write(const std::string& path, const std::vector<uint8_t>& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fclose(f) != 0) {
    std::perror(path.c_str());
    std::exit(1);
  }
}

template <class T>
void append(std::vector<uint8_t>* out, const T& v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out->insert(out->end(), p, p + sizeof(v));
}

/// The job secret of bootstrap_fuzz.cpp's root (kSecret there).
constexpr uint8_t kSecret[16] = {0x47, 0x45, 0x4e, 0x49, 0x45, 0x2d, 0x66, 0x75,
                                 0x7a, 0x7a, 0x2d, 0x73, 0x65, 0x63, 0x72, 0x74};

/// The hello join() sends for `rank` of `nranks` (same fields as communicator.cpp fills in).
wire::Hello hello(int rank, int nranks, const uint8_t secret[16]) {
  wire::Hello h{};
  h.magic = wire::kHelloMagic;
  h.version = wire::kWireVersion;
  std::memcpy(h.secret, secret, 16);
  h.nranks = nranks;
  h.rank = rank;
  h.info.rank = rank;
  h.info.cuda_dev = rank % 8;
  h.info.pid = 4000 + rank;
  h.info.process_rank = rank;
  std::snprintf(h.info.host, sizeof(h.info.host), "node%d", rank / 4);
  std::snprintf(h.info.node, sizeof(h.info.node), "node%d", rank / 4);
  if (rank == 0) h.info.segment_id = 0x1234567890abcdefull;
  return h;
}

void bootstrap(const std::string& dir) {
  uint8_t stranger[16];
  std::memcpy(stranger, kSecret, 16);
  stranger[3] ^= 0x55;
  // Mode 0: hellos to one root.
  for (int n : {1, 2, 4, 8}) {
    std::vector<uint8_t> s{0};
    for (int r = n - 1; r >= 0; --r) append(&s, hello(r, n, kSecret));
    write(dir + "/root_" + std::to_string(n) + "_ranks", s);
  }
  {
    // A stranger, a rank out of range, a duplicate and a different nranks among the members of a 3-rank job.
    std::vector<uint8_t> s{0};
    append(&s, hello(0, 3, stranger));
    append(&s, hello(1, 3, kSecret));
    append(&s, hello(5, 3, kSecret));
    append(&s, hello(1, 3, kSecret));
    append(&s, hello(2, 4, kSecret));
    append(&s, hello(0, 3, kSecret));
    append(&s, hello(2, 3, kSecret));
    write(dir + "/root_refusals", s);
  }
  {
    wire::Hello h = hello(0, 2, kSecret);
    std::memset(h.info.host, 'x', sizeof(h.info.host));  // not NUL-terminated: the root terminates it
    std::memset(h.info.provider, 'p', sizeof(h.info.provider));
    std::vector<uint8_t> s{0};
    append(&s, h);
    append(&s, hello(1, 2, kSecret));
    write(dir + "/root_unterminated", s);
  }
  // Mode 1: a unique id as ncclGetUniqueId makes it.
  UniqueId id;
  id.ipv4 = htonl(0x7f000001);
  id.port = 40123;
  std::memcpy(id.secret.data(), kSecret, 16);
  char raw[128];
  id.encode(raw);
  std::vector<uint8_t> uid{1};
  uid.insert(uid.end(), raw, raw + 128);
  write(dir + "/unique_id", uid);
  // Mode 2: the root's replies (accepted, refused, timed out) to a rank of a 4-rank communicator.
  auto reply = [&](const char* name, int32_t status, const char* text) {
    wire::Reply r{};
    r.magic = wire::kReplyMagic;
    r.status = status;
    r.nranks = 4;
    std::snprintf(r.text, sizeof(r.text), "%s", text);
    std::vector<uint8_t> s{2, 4};
    append(&s, r);
    write(dir + "/" + name, s);
  };
  reply("reply_ok", 0, "");
  reply("reply_refused", static_cast<int32_t>(genie::Errc::kInvalidArgument), "rank 3 joined twice");
  reply("reply_timeout", static_cast<int32_t>(genie::Errc::kTimeout), "bootstrap timed out: not every rank joined");
  // Mode 3: a rank's round-2 header (an endpoint address of 56 bytes), mode 4: the root's answers.
  std::vector<uint8_t> extra{3};
  append(&extra, wire::Extra{wire::kExtraMagic, 56});
  write(dir + "/extra", extra);
  for (auto [name, status] : {std::pair{"extra_reply_ok", 0}, std::pair{"extra_reply_timeout", 7}}) {
    std::vector<uint8_t> s{4, 4};
    append(&s, wire::ExtraReply{wire::kExtraMagic, status, 4});
    write(dir + "/" + name, s);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || std::string(argv[1]) != "bootstrap") {
    std::fprintf(stderr, "usage: %s bootstrap DIR\n", argv[0]);
    return 2;
  }
  bootstrap(argv[2]);
  return 0;
}
