// SPDX-License-Identifier: Apache-2.0
// Coordinator protocol codec: bounds-checked little-endian encoding of every message, and the frame decoder.
#include "genie/sched/coord_protocol.hpp"

#include <array>
#include <cstring>
#include <tuple>
#include <type_traits>

namespace genie::sched::coord {
namespace {

// Longest string field accepted (node/host names are short; kernel names are mangled C++ templates and
// can run to several KiB).
constexpr uint32_t kMaxString = 1u << 16;

class Writer {
 public:
  template <class T>
  void put(T v) {
    static_assert(std::is_integral_v<T>);
    using U = std::make_unsigned_t<T>;
    U u = static_cast<U>(v);
    for (size_t i = 0; i < sizeof(T); ++i) out_.push_back(static_cast<uint8_t>(u >> (8 * i)));
  }
  void put_bytes(const uint8_t* p, size_t n) { out_.insert(out_.end(), p, p + n); }
  void put_string(const std::string& s) {
    const size_t n = std::min<size_t>(s.size(), kMaxString);
    put(static_cast<uint32_t>(n));
    put_bytes(reinterpret_cast<const uint8_t*>(s.data()), n);
  }
  /// One field of a message: an integer, a string, or a fixed run of bytes.
  template <class T>
  void field(const T& v) {
    if constexpr (std::is_integral_v<T>) {
      put(v);
    } else if constexpr (std::is_same_v<T, std::string>) {
      put_string(v);
    } else {
      static_assert(std::is_same_v<typename T::value_type, uint8_t>);
      put_bytes(v.data(), v.size());
    }
  }
  std::vector<uint8_t>& bytes() { return out_; }

 private:
  std::vector<uint8_t> out_;
};

class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  template <class T>
  bool get(T* v) {
    static_assert(std::is_integral_v<T>);
    if (n_ - pos_ < sizeof(T)) return fail();
    using U = std::make_unsigned_t<T>;
    U u = 0;
    for (size_t i = 0; i < sizeof(T); ++i) u |= static_cast<U>(static_cast<U>(p_[pos_ + i]) << (8 * i));
    pos_ += sizeof(T);
    *v = static_cast<T>(u);
    return true;
  }
  bool get_bytes(uint8_t* out, size_t n) {
    if (n_ - pos_ < n) return fail();
    std::memcpy(out, p_ + pos_, n);
    pos_ += n;
    return true;
  }
  bool get_string(std::string* s) {
    uint32_t n = 0;
    if (!get(&n) || n > kMaxString || n_ - pos_ < n) return fail();
    s->assign(reinterpret_cast<const char*>(p_ + pos_), n);
    pos_ += n;
    return true;
  }
  /// One field of a message, as Writer::field wrote it.
  template <class T>
  bool field(T* v) {
    if constexpr (std::is_integral_v<T>) {
      return get(v);
    } else if constexpr (std::is_same_v<T, std::string>) {
      return get_string(v);
    } else {
      static_assert(std::is_same_v<typename T::value_type, uint8_t>);
      return get_bytes(v->data(), v->size());
    }
  }
  /// A count of items of at least `min_item_bytes` each: rejected when the payload cannot hold them, so a
  /// forged count never makes us allocate more than the frame's size.
  bool get_count(uint32_t* n, size_t min_item_bytes) {
    if (!get(n)) return false;
    if (min_item_bytes > 0 && *n > (n_ - pos_) / min_item_bytes) return fail();
    return true;
  }
  bool ok() const { return ok_; }
  bool done() const { return ok_ && pos_ == n_; }

 private:
  bool fail() {
    ok_ = false;
    return false;
  }
  const uint8_t* p_;
  size_t n_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// --- each message's fields, in wire order, once: enc writes them, dec reads them -----------------------

#define GENIE_FIELDS(T, ...)                                   \
  [[maybe_unused]] auto fields(T& m) { return std::tie(__VA_ARGS__); } \
  [[maybe_unused]] auto fields(const T& m) { return std::tie(__VA_ARGS__); }

GENIE_FIELDS(Challenge, m.nonce)
GENIE_FIELDS(Hello, m.mac, m.pid, m.process_rank, m.world_size, m.gpus, m.node, m.host, m.realtime, m.epoch_mono_ns)
GENIE_FIELDS(Welcome, m.process_index, m.engine, m.topology)
GENIE_FIELDS(CommJoin, m.comm, m.nranks, m.comm_rank, m.cuda_dev, m.parent)
GENIE_FIELDS(Coll, m.comm, m.seq, m.comm_rank, m.ready_ns, m.collective, m.datatype, m.redop, m.root, m.count,
             m.min_ctas, m.max_ctas, m.algo)
GENIE_FIELDS(P2p, m.comm, m.src, m.dst, m.index, m.bytes, m.ready_ns, m.is_send, m.comm_rank, m.count, m.datatype)
GENIE_FIELDS(Promise, m.t_ns, m.epoch)
GENIE_FIELDS(OpRecord, m.kind, m.device, m.stream, m.label, m.start_ns, m.end_ns, m.bytes, m.comm, m.seq, m.submit_ns,
             m.deps_end_ns, m.thread, m.flags)
GENIE_FIELDS(Bye, m.exit_code)
GENIE_FIELDS(Resolved, m.is_p2p, m.status, m.comm, m.seq, m.src, m.dst, m.start_ns, m.end_ns, m.algorithm, m.protocol,
             m.nchannels, m.epoch, m.error)
GENIE_FIELDS(Want, m.t_ns, m.safe_ns)
GENIE_FIELDS(Probe, m.round)
GENIE_FIELDS(Quiet, m.round, m.epoch, m.quiet, m.floor_ns)
GENIE_FIELDS(Resume, m.t_ns, m.epoch)
GENIE_FIELDS(Bound, m.is_p2p, m.comm, m.seq, m.src, m.dst, m.end_lb_ns)
#undef GENIE_FIELDS

template <class M>
void enc(Writer& w, const M& m) {
  std::apply([&](const auto&... f) { (w.field(f), ...); }, fields(m));
}
template <class M>
bool dec(Reader& r, M* m) {
  return std::apply([&](auto&... f) { return (r.field(&f) && ...); }, fields(*m));
}

constexpr size_t kOpRecordBytes = 1 + 4 + 4 + 4 + 8 + 8 + 8 + 8 + 8 + 8 + 8 + 4 + 1;

// Records: two counted lists (the frame's size bounds each count).
void enc(Writer& w, const Records& m) {
  w.put(m.label_base);
  w.put(static_cast<uint32_t>(m.labels.size()));
  for (const auto& l : m.labels) w.put_string(l);
  w.put(static_cast<uint32_t>(m.ops.size()));
  for (const auto& o : m.ops) enc(w, o);
}
bool dec(Reader& r, Records* m) {
  uint32_t nl = 0, no = 0;
  if (!r.get(&m->label_base) || !r.get_count(&nl, 4)) return false;
  m->labels.resize(nl);
  for (auto& l : m->labels)
    if (!r.get_string(&l)) return false;
  if (!r.get_count(&no, kOpRecordBytes)) return false;
  m->ops.resize(no);
  for (auto& o : m->ops)
    if (!dec(r, &o)) return false;
  return true;
}

template <class T>
Result<Message> decode_as(const uint8_t* data, size_t len, const char* name) {
  Reader r(data, len);
  T m{};
  if (!dec(r, &m) || !r.done())
    return invalid_argument(std::string("malformed ") + name + " payload (" + std::to_string(len) + " bytes)");
  return Message{std::move(m)};
}

}  // namespace

const char* msg_type_name(MsgType t) noexcept {
  switch (t) {
    case MsgType::kChallenge: return "Challenge";
    case MsgType::kHello: return "Hello";
    case MsgType::kWelcome: return "Welcome";
    case MsgType::kCommJoin: return "CommJoin";
    case MsgType::kColl: return "Coll";
    case MsgType::kP2p: return "P2p";
    case MsgType::kPromise: return "Promise";
    case MsgType::kRecords: return "Records";
    case MsgType::kBye: return "Bye";
    case MsgType::kResolved: return "Resolved";
    case MsgType::kWant: return "Want";
    case MsgType::kProbe: return "Probe";
    case MsgType::kQuiet: return "Quiet";
    case MsgType::kResume: return "Resume";
    case MsgType::kBound: return "Bound";
  }
  return "?";
}

MsgType type_of(const Message& m) noexcept {
  static constexpr MsgType kTypes[] = {MsgType::kChallenge, MsgType::kHello,   MsgType::kWelcome, MsgType::kCommJoin,
                                       MsgType::kColl,      MsgType::kP2p,     MsgType::kPromise, MsgType::kRecords,
                                       MsgType::kBye,       MsgType::kResolved, MsgType::kWant,    MsgType::kProbe,
                                       MsgType::kQuiet,     MsgType::kResume,   MsgType::kBound};
  return kTypes[m.index()];
}

std::vector<uint8_t> hello_mac_input(const std::array<uint8_t, 16>& nonce, int32_t pid, int32_t process_rank) {
  Writer w;
  static const char kTag[] = "genie-coordinator-hello-v1";
  w.put_bytes(reinterpret_cast<const uint8_t*>(kTag), sizeof(kTag) - 1);
  w.put_bytes(nonce.data(), nonce.size());
  w.put(pid);
  w.put(process_rank);
  return std::move(w.bytes());
}

std::vector<uint8_t> encode_frame(const Message& m, uint64_t seq) {
  Writer body;
  std::visit([&](const auto& v) { enc(body, v); }, m);
  Writer w;
  w.put(kMagic);
  w.put(kVersion);
  w.put(static_cast<uint16_t>(type_of(m)));
  w.put(static_cast<uint32_t>(body.bytes().size()));
  w.put(uint32_t{0});
  w.put(seq);
  w.put_bytes(body.bytes().data(), body.bytes().size());
  return std::move(w.bytes());
}

Result<Message> decode_payload(uint16_t type, const uint8_t* data, size_t len) {
  switch (static_cast<MsgType>(type)) {
    case MsgType::kChallenge: return decode_as<Challenge>(data, len, "Challenge");
    case MsgType::kHello: return decode_as<Hello>(data, len, "Hello");
    case MsgType::kWelcome: return decode_as<Welcome>(data, len, "Welcome");
    case MsgType::kCommJoin: return decode_as<CommJoin>(data, len, "CommJoin");
    case MsgType::kColl: return decode_as<Coll>(data, len, "Coll");
    case MsgType::kP2p: return decode_as<P2p>(data, len, "P2p");
    case MsgType::kPromise: return decode_as<Promise>(data, len, "Promise");
    case MsgType::kRecords: return decode_as<Records>(data, len, "Records");
    case MsgType::kBye: return decode_as<Bye>(data, len, "Bye");
    case MsgType::kResolved: return decode_as<Resolved>(data, len, "Resolved");
    case MsgType::kWant: return decode_as<Want>(data, len, "Want");
    case MsgType::kProbe: return decode_as<Probe>(data, len, "Probe");
    case MsgType::kQuiet: return decode_as<Quiet>(data, len, "Quiet");
    case MsgType::kResume: return decode_as<Resume>(data, len, "Resume");
    case MsgType::kBound: return decode_as<Bound>(data, len, "Bound");
  }
  return invalid_argument("unknown message type " + std::to_string(type));
}

void FrameDecoder::feed(const void* data, size_t len) {
  // Compact before growing: keeps the buffer at most one frame plus one read's worth.
  if (pos_ > 0 && pos_ == buf_.size()) {
    buf_.clear();
    pos_ = 0;
  } else if (pos_ > (1u << 16)) {
    buf_.erase(buf_.begin(), buf_.begin() + static_cast<std::ptrdiff_t>(pos_));
    pos_ = 0;
  }
  const auto* p = static_cast<const uint8_t*>(data);
  buf_.insert(buf_.end(), p, p + len);
}

Result<std::optional<Message>> FrameDecoder::next() {
  if (broken_) return invalid_argument("connection stream is broken");
  if (buffered() < kHeaderBytes) return std::optional<Message>{};
  Reader h(buf_.data() + pos_, kHeaderBytes);
  uint32_t magic = 0, length = 0, reserved = 0;
  uint16_t version = 0, type = 0;
  uint64_t seq = 0;
  h.get(&magic);
  h.get(&version);
  h.get(&type);
  h.get(&length);
  h.get(&reserved);
  h.get(&seq);
  if (magic != kMagic) {
    broken_ = true;
    return invalid_argument("bad frame magic (not a Genie coordinator connection)");
  }
  if (version != kVersion) {
    broken_ = true;
    return invalid_argument("protocol version " + std::to_string(version) + " (this build speaks " +
                            std::to_string(kVersion) + ")");
  }
  if (length > kMaxPayload) {
    broken_ = true;
    return invalid_argument("oversized frame: " + std::to_string(length) + " bytes (limit " +
                            std::to_string(kMaxPayload) + ")");
  }
  if (buffered() < kHeaderBytes + length) return std::optional<Message>{};
  const uint8_t* payload = buf_.data() + pos_ + kHeaderBytes;
  pos_ += kHeaderBytes + length;  // the frame is consumed whatever its content: the stream stays in step
  if (seq != expected_seq_)
    return invalid_argument("frame sequence " + std::to_string(seq) + " where " + std::to_string(expected_seq_) +
                            " was expected (replayed or lost frame): dropped");
  ++expected_seq_;
  auto m = decode_payload(type, payload, length);
  if (!m.is_ok()) return Status(m.status().code(), m.status().message() + ": dropped");
  return std::optional<Message>{std::move(m).value()};
}

}  // namespace genie::sched::coord
