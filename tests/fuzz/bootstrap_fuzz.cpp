// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the shim's bootstrap handshake (shim/src/bootstrap.cpp), the bytes any process that reaches a
// root's port, or poses as the root, can send. Byte 0 picks the message: 0, a sequence of Hellos to one
// root (RootAdmission, job secret kSecret); 1, a unique id (ncclCommInitRank's argument, 128 bytes); 2, the
// root's Reply to a rank that asked for byte 1 ranks; 3, a rank's round-2 Extra header; 4, the root's
// ExtraReply. No sockets: the checks the socket code calls. Invariants: only a hello with the job secret is
// ever answered or admitted; admitted ranks are distinct and in range, the table holds each at its index with
// NUL-terminated strings; a unique id re-encodes to the same id; a failed reply is a refusal (kInvalidArgument
// or kTimeout) or a malformed message (kRemote), a failed round 2 is kRemote or kTimeout.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>
#include <type_traits>

#include "bootstrap.hpp"
#include "fuzz_check.hpp"

extern "C" {
size_t genie_fuzz_accepted = 0;
}

namespace {

using namespace genie;
using namespace genie::shim;

/// The job secret of the fuzzed root (the seeds' hellos carry it).
constexpr std::array<uint8_t, 16> kSecret = {0x47, 0x45, 0x4e, 0x49, 0x45, 0x2d, 0x66, 0x75,
                                             0x7a, 0x7a, 0x2d, 0x73, 0x65, 0x63, 0x72, 0x74};

/// A wire struct from the bytes a peer sent (the socket code reads exactly sizeof(T); short inputs keep the
/// struct's initial values in the rest).
template <class T>
T from_bytes(const uint8_t* data, size_t size) {
  static_assert(std::is_trivially_copyable_v<T>);
  T v{};
  std::memcpy(static_cast<void*>(&v), data, std::min(size, sizeof(v)));
  return v;
}

bool terminated(const char* s, size_t n) { return std::memchr(s, 0, n) != nullptr; }

void fuzz_root(const uint8_t* data, size_t size) {
  wire::RootAdmission root(kSecret);
  std::set<int> admitted;
  bool any = false;
  for (size_t pos = 0; pos + sizeof(wire::Hello) <= size; pos += sizeof(wire::Hello)) {
    const auto h = from_bytes<wire::Hello>(data + pos, sizeof(wire::Hello));
    const bool member = h.magic == wire::kHelloMagic && h.version == wire::kWireVersion &&
                        std::memcmp(h.secret, kSecret.data(), kSecret.size()) == 0;
    const bool was_complete = root.complete();
    const auto d = root.admit(h);
    GENIE_FUZZ_CHECK(member || d.verdict == wire::RootAdmission::Verdict::kDrop,
                     "a hello without the job secret was answered");
    if (d.verdict == wire::RootAdmission::Verdict::kRefuse) GENIE_FUZZ_CHECK(!d.why.empty(), "a refusal without why");
    if (d.verdict != wire::RootAdmission::Verdict::kAdmit) continue;
    any = true;
    GENIE_FUZZ_CHECK(!was_complete, "a rank was admitted after the communicator was complete");
    GENIE_FUZZ_CHECK(d.rank >= 0 && d.rank < root.nranks() && d.rank == h.rank, "an admitted rank is out of range");
    GENIE_FUZZ_CHECK(admitted.insert(d.rank).second, "a rank was admitted twice");
  }
  GENIE_FUZZ_CHECK(root.joined() == static_cast<int>(admitted.size()), "joined() is not the admitted count");
  if (root.nranks() > 0) {
    GENIE_FUZZ_CHECK(root.table().size() == static_cast<size_t>(root.nranks()), "the table is not nranks long");
    for (int r : admitted) {
      const RankInfo& info = root.table()[static_cast<size_t>(r)];
      GENIE_FUZZ_CHECK(info.rank == r, "a table entry is not at its rank's index");
      GENIE_FUZZ_CHECK(terminated(info.host, sizeof(info.host)) && terminated(info.node, sizeof(info.node)),
                       "a table entry's host or node is not NUL-terminated");
    }
  }
  if (any) ++genie_fuzz_accepted;
}

void fuzz_unique_id(const uint8_t* data, size_t size) {
  char in[128] = {};
  std::memcpy(in, data, std::min<size_t>(size, sizeof(in)));
  auto id = UniqueId::decode(in);
  if (!id.is_ok()) {
    GENIE_FUZZ_CHECK(id.status().code() == Errc::kInvalidArgument, "a bad unique id is not an InvalidArgument");
    return;
  }
  ++genie_fuzz_accepted;
  char out[128];
  id.value().encode(out);
  auto again = UniqueId::decode(out);
  GENIE_FUZZ_CHECK(again.is_ok() && again.value().ipv4 == id.value().ipv4 && again.value().port == id.value().port &&
                       again.value().secret == id.value().secret,
                   "a unique id does not re-encode to itself");
}

void fuzz_reply(int nranks, const uint8_t* data, size_t size) {
  const auto r = from_bytes<wire::Reply>(data, size);
  const Status st = wire::check_reply(r, nranks);
  if (r.magic == wire::kReplyMagic) ++genie_fuzz_accepted;  // decoded: an answer or a refusal
  if (st.is_ok()) {
    GENIE_FUZZ_CHECK(r.magic == wire::kReplyMagic && r.status == 0 && r.nranks == nranks, "a bad reply was accepted");
    return;
  }
  GENIE_FUZZ_CHECK(st.code() == Errc::kInvalidArgument || st.code() == Errc::kTimeout || st.code() == Errc::kRemote,
                   "a failed reply is not a refusal or a malformed message: " + st.to_string());
}

void fuzz_extra(const uint8_t* data, size_t size) {
  const auto e = from_bytes<wire::Extra>(data, size);
  auto len = wire::check_extra(e);
  if (!len.is_ok()) {
    GENIE_FUZZ_CHECK(len.status().code() == Errc::kRemote, "a bad round-2 header is not kRemote");
    return;
  }
  GENIE_FUZZ_CHECK(len.value() <= BootstrapSession::kMaxBlob, "a round-2 blob above kMaxBlob was accepted");
  ++genie_fuzz_accepted;
}

void fuzz_extra_reply(int nranks, const uint8_t* data, size_t size) {
  const auto r = from_bytes<wire::ExtraReply>(data, size);
  const Status st = wire::check_extra_reply(r, nranks);
  if (r.magic == wire::kExtraMagic) ++genie_fuzz_accepted;  // decoded: the blobs follow, or a failure
  if (st.is_ok()) return;
  GENIE_FUZZ_CHECK(st.code() == Errc::kRemote || st.code() == Errc::kTimeout,
                   "a failed address exchange is not kRemote or kTimeout: " + st.to_string());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const int nranks = data[1];
  switch (data[0] % 5) {
    case 0: fuzz_root(data + 1, size - 1); break;
    case 1: fuzz_unique_id(data + 1, size - 1); break;
    case 2: fuzz_reply(nranks, data + 2, size - 2); break;
    case 3: fuzz_extra(data + 1, size - 1); break;
    default: fuzz_extra_reply(nranks, data + 2, size - 2); break;
  }
  return 0;
}
