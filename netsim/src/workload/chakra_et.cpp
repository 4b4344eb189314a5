// SPDX-License-Identifier: Apache-2.0
// Chakra ET messages (et_def.proto) to and from the protobuf wire format, and trace files.
#include "genie/netsim/chakra_et.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "genie/common/protobuf_wire.hpp"

namespace genie::netsim::chakra {

using protowire::Field;
using protowire::Reader;
using protowire::WireType;
using protowire::Writer;

namespace {

// et_def.proto field numbers.
namespace f_attr {
constexpr uint32_t kName = 1, kDoc = 2;
}
namespace f_node {
constexpr uint32_t kId = 1, kName = 2, kType = 3, kCtrlDeps = 4, kDataDeps = 5, kStart = 6, kDuration = 7, kInputs = 8,
                   kOutputs = 9, kAttr = 10;
}
namespace f_io {
constexpr uint32_t kValues = 1, kShapes = 2, kTypes = 3;
}
namespace f_meta {
constexpr uint32_t kVersion = 1, kAttr = 2;
}
constexpr int32_t kMaxNodeType = static_cast<int32_t>(NodeType::kCheckpoint);

const char* wire_name(WireType t) {
  switch (t) {
    case WireType::kVarint:
      return "varint";
    case WireType::kFixed64:
      return "fixed64";
    case WireType::kLen:
      return "length-delimited";
    case WireType::kFixed32:
      return "fixed32";
  }
  return "?";
}

Status wrong_type(const char* field, const Field& f, WireType want) {
  return invalid_argument(std::string("field '") + field + "' (number " + std::to_string(f.number) +
                          ") has wire type " + wire_name(f.type) + ", expected " + wire_name(want));
}

Status expect(const char* field, const Field& f, WireType want) {
  return f.type == want ? Status::ok() : wrong_type(field, f, want);
}

// The wire type each oneof value of AttributeProto is encoded with (0: not a value field).
bool attr_wire_type(uint32_t number, WireType* out) {
  if (number < 3 || number > 32) return false;
  if (number % 2 == 0) {  // the *_list members are messages
    *out = WireType::kLen;
    return true;
  }
  switch (static_cast<Attr::Kind>(number)) {
    case Attr::Kind::kDouble:
    case Attr::Kind::kFixed64:
    case Attr::Kind::kSfixed64:
      *out = WireType::kFixed64;
      return true;
    case Attr::Kind::kFloat:
    case Attr::Kind::kFixed32:
    case Attr::Kind::kSfixed32:
      *out = WireType::kFixed32;
      return true;
    case Attr::Kind::kString:
    case Attr::Kind::kBytes:
      *out = WireType::kLen;
      return true;
    default:
      *out = WireType::kVarint;
      return true;
  }
}

Status decode_io(std::string_view bytes, IOInfo* io) {
  io->present = true;
  Reader r(bytes);
  while (!r.done()) {
    GENIE_ASSIGN_OR_RETURN(Field f, r.next());
    std::string* dst = f.number == f_io::kValues   ? &io->values
                       : f.number == f_io::kShapes ? &io->shapes
                       : f.number == f_io::kTypes  ? &io->types
                                                   : nullptr;
    if (!dst) continue;
    GENIE_TRY(expect(f.number == f_io::kValues   ? "values"
                     : f.number == f_io::kShapes ? "shapes"
                                                 : "types",
                     f, WireType::kLen));
    dst->assign(f.bytes);
  }
  return Status::ok();
}

std::string encode_io(const IOInfo& io) {
  Writer w;
  if (!io.values.empty()) w.bytes_field(f_io::kValues, io.values);
  if (!io.shapes.empty()) w.bytes_field(f_io::kShapes, io.shapes);
  if (!io.types.empty()) w.bytes_field(f_io::kTypes, io.types);
  return w.take();
}

// Decodes one node into `n` (what was read before an error stays, so the caller can name the node's id).
Status decode_node_into(std::string_view bytes, Node* n) {
  Reader r(bytes);
  while (!r.done()) {
    auto field = r.next();
    if (!field.is_ok()) return invalid_argument("bad encoding: " + field.status().message());
    const Field& f = field.value();
    switch (f.number) {
      case f_node::kId:
        GENIE_TRY(expect("id", f, WireType::kVarint));
        n->id = f.value;
        break;
      case f_node::kName:
        GENIE_TRY(expect("name", f, WireType::kLen));
        n->name.assign(f.bytes);
        break;
      case f_node::kType: {
        GENIE_TRY(expect("type", f, WireType::kVarint));
        const auto t = static_cast<int64_t>(f.value);
        if (t < 0 || t > kMaxNodeType)
          return invalid_argument("field 'type': " + std::to_string(t) + " is not a NodeType of et_def.proto");
        n->type = static_cast<NodeType>(t);
        break;
      }
      case f_node::kCtrlDeps:
      case f_node::kDataDeps: {
        const char* name = f.number == f_node::kCtrlDeps ? "ctrl_deps" : "data_deps";
        if (f.type != WireType::kLen && f.type != WireType::kVarint) return wrong_type(name, f, WireType::kLen);
        Status s = protowire::append_repeated_varint(f, f.number == f_node::kCtrlDeps ? &n->ctrl_deps : &n->data_deps);
        if (!s.is_ok()) return invalid_argument(std::string("field '") + name + "': " + s.message());
        break;
      }
      case f_node::kStart:
        GENIE_TRY(expect("start_time_micros", f, WireType::kVarint));
        n->start_time_micros = f.value;
        break;
      case f_node::kDuration:
        GENIE_TRY(expect("duration_micros", f, WireType::kVarint));
        n->duration_micros = f.value;
        break;
      case f_node::kInputs:
      case f_node::kOutputs: {
        const char* name = f.number == f_node::kInputs ? "inputs" : "outputs";
        GENIE_TRY(expect(name, f, WireType::kLen));
        Status s = decode_io(f.bytes, f.number == f_node::kInputs ? &n->inputs : &n->outputs);
        if (!s.is_ok()) return invalid_argument(std::string("field '") + name + "': " + s.message());
        break;
      }
      case f_node::kAttr: {
        GENIE_TRY(expect("attr", f, WireType::kLen));
        auto a = decode_attr(f.bytes);
        if (!a.is_ok())
          return invalid_argument("field 'attr' #" + std::to_string(n->attr.size()) + ": " + a.status().message());
        n->attr.push_back(std::move(a).value());
        break;
      }
      default:
        break;  // unknown or unused (storage): skipped, as protobuf parsers do
    }
  }
  return Status::ok();
}

}  // namespace

const char* node_type_name(NodeType t) noexcept {
  switch (t) {
    case NodeType::kInvalid:
      return "INVALID_NODE";
    case NodeType::kMetadata:
      return "METADATA_NODE";
    case NodeType::kMemLoad:
      return "MEM_LOAD_NODE";
    case NodeType::kMemStore:
      return "MEM_STORE_NODE";
    case NodeType::kComp:
      return "COMP_NODE";
    case NodeType::kCommSend:
      return "COMM_SEND_NODE";
    case NodeType::kCommRecv:
      return "COMM_RECV_NODE";
    case NodeType::kCommColl:
      return "COMM_COLL_NODE";
    case NodeType::kStorage:
      return "STORAGE_NODE";
    case NodeType::kBatch:
      return "BATCH_NODE";
    case NodeType::kCheckpoint:
      return "CHECKPOINT_NODE";
  }
  return "?";
}

const char* comm_type_name(CommType t) noexcept {
  switch (t) {
    case CommType::kAllReduce:
      return "ALL_REDUCE";
    case CommType::kReduce:
      return "REDUCE";
    case CommType::kAllGather:
      return "ALL_GATHER";
    case CommType::kGather:
      return "GATHER";
    case CommType::kScatter:
      return "SCATTER";
    case CommType::kBroadcast:
      return "BROADCAST";
    case CommType::kAllToAll:
      return "ALL_TO_ALL";
    case CommType::kReduceScatter:
      return "REDUCE_SCATTER";
    case CommType::kReduceScatterBlock:
      return "REDUCE_SCATTER_BLOCK";
    case CommType::kBarrier:
      return "BARRIER";
  }
  return "?";
}

const char* attr_kind_name(Attr::Kind k) noexcept {
  static const char* const kNames[] = {"none",
                                       "?",
                                       "?",
                                       "double_val",
                                       "double_list",
                                       "float_val",
                                       "float_list",
                                       "int32_val",
                                       "int32_list",
                                       "int64_val",
                                       "int64_list",
                                       "uint32_val",
                                       "uint32_list",
                                       "uint64_val",
                                       "uint64_list",
                                       "sint32_val",
                                       "sint32_list",
                                       "sint64_val",
                                       "sint64_list",
                                       "fixed32_val",
                                       "fixed32_list",
                                       "fixed64_val",
                                       "fixed64_list",
                                       "sfixed32_val",
                                       "sfixed32_list",
                                       "sfixed64_val",
                                       "sfixed64_list",
                                       "bool_val",
                                       "bool_list",
                                       "string_val",
                                       "string_list",
                                       "bytes_val",
                                       "bytes_list"};
  const auto i = static_cast<size_t>(k);
  return i < sizeof(kNames) / sizeof(kNames[0]) ? kNames[i] : "?";
}

Attr Attr::int64(std::string name, int64_t v) {
  Attr a;
  a.name = std::move(name);
  a.kind = Kind::kInt64;
  a.i = v;
  return a;
}
Attr Attr::int32(std::string name, int32_t v) {
  Attr a = int64(std::move(name), v);
  a.kind = Kind::kInt32;
  return a;
}
Attr Attr::uint64(std::string name, uint64_t v) {
  Attr a = int64(std::move(name), static_cast<int64_t>(v));
  a.kind = Kind::kUint64;
  return a;
}
Attr Attr::boolean(std::string name, bool v) {
  Attr a = int64(std::move(name), v ? 1 : 0);
  a.kind = Kind::kBool;
  return a;
}
Attr Attr::dbl(std::string name, double v) {
  Attr a;
  a.name = std::move(name);
  a.kind = Kind::kDouble;
  a.d = v;
  return a;
}
Attr Attr::string(std::string name, std::string v) {
  Attr a;
  a.name = std::move(name);
  a.kind = Kind::kString;
  a.s = std::move(v);
  return a;
}

std::optional<int64_t> Attr::as_int() const {
  switch (kind) {
    case Kind::kInt32:
    case Kind::kInt64:
    case Kind::kUint32:
    case Kind::kSint32:
    case Kind::kSint64:
    case Kind::kFixed32:
    case Kind::kSfixed32:
    case Kind::kSfixed64:
    case Kind::kBool:
      return i;
    case Kind::kUint64:
    case Kind::kFixed64:
      if (i < 0) return std::nullopt;  // above INT64_MAX
      return i;
    default:
      return std::nullopt;
  }
}

const Attr* Node::find(std::string_view n) const {
  for (const Attr& a : attr)
    if (a.name == n) return &a;
  return nullptr;
}

const Attr* GlobalMetadata::find(std::string_view n) const {
  for (const Attr& a : attr)
    if (a.name == n) return &a;
  return nullptr;
}

std::string encode_attr(const Attr& a) {
  Writer w;
  if (!a.name.empty()) w.bytes_field(f_attr::kName, a.name);
  if (!a.doc_string.empty()) w.bytes_field(f_attr::kDoc, a.doc_string);
  const auto field = static_cast<uint32_t>(a.kind);
  WireType wt;
  if (a.kind == Attr::Kind::kNone || !attr_wire_type(field, &wt)) return w.take();
  switch (a.kind) {
    case Attr::Kind::kDouble:
      w.double_field(field, a.d);
      break;
    case Attr::Kind::kFloat:
      w.float_field(field, static_cast<float>(a.d));
      break;
    case Attr::Kind::kSint32:
    case Attr::Kind::kSint64:
      w.sint64_field(field, a.i);
      break;
    case Attr::Kind::kUint32:
    case Attr::Kind::kFixed32:
      if (wt == WireType::kFixed32)
        w.fixed32_field(field, static_cast<uint32_t>(a.i));
      else
        w.uint64_field(field, static_cast<uint32_t>(a.i));
      break;
    case Attr::Kind::kSfixed32:
      w.fixed32_field(field, static_cast<uint32_t>(static_cast<int32_t>(a.i)));
      break;
    case Attr::Kind::kFixed64:
    case Attr::Kind::kSfixed64:
      w.fixed64_field(field, static_cast<uint64_t>(a.i));
      break;
    default:
      if (wt == WireType::kLen)
        w.bytes_field(field, a.s);
      else
        w.uint64_field(field, static_cast<uint64_t>(a.i));  // int32 sign-extends through int64, as protobuf does
      break;
  }
  return w.take();
}

Result<Attr> decode_attr(std::string_view bytes) {
  Attr a;
  Reader r(bytes);
  while (!r.done()) {
    auto field = r.next();
    if (!field.is_ok()) return invalid_argument("bad encoding: " + field.status().message());
    const Field& f = field.value();
    if (f.number == f_attr::kName || f.number == f_attr::kDoc) {
      GENIE_TRY(expect(f.number == f_attr::kName ? "name" : "doc_string", f, WireType::kLen));
      (f.number == f_attr::kName ? a.name : a.doc_string).assign(f.bytes);
      continue;
    }
    WireType want;
    if (!attr_wire_type(f.number, &want)) continue;  // unknown field: skipped
    const auto kind = static_cast<Attr::Kind>(f.number);
    if (f.type != want) {
      Status s = wrong_type(attr_kind_name(kind), f, want);
      return invalid_argument((a.name.empty() ? "" : "attribute '" + a.name + "': ") + s.message());
    }
    a.kind = kind;
    a.i = 0;
    a.d = 0;
    a.s.clear();
    switch (kind) {
      case Attr::Kind::kDouble: {
        double v;
        std::memcpy(&v, &f.value, sizeof v);
        a.d = v;
        break;
      }
      case Attr::Kind::kFloat: {
        const auto bits = static_cast<uint32_t>(f.value);
        float v;
        std::memcpy(&v, &bits, sizeof v);
        a.d = v;
        break;
      }
      case Attr::Kind::kInt32:
      case Attr::Kind::kSfixed32:
        a.i = static_cast<int32_t>(static_cast<uint32_t>(f.value));
        break;
      case Attr::Kind::kUint32:
      case Attr::Kind::kFixed32:
        a.i = static_cast<uint32_t>(f.value);
        break;
      case Attr::Kind::kSint32:
      case Attr::Kind::kSint64:
        a.i = protowire::zigzag_decode(f.value);
        if (kind == Attr::Kind::kSint32) a.i = static_cast<int32_t>(a.i);
        break;
      case Attr::Kind::kBool:
        a.i = f.value != 0 ? 1 : 0;
        break;
      default:
        if (want == WireType::kLen)
          a.s.assign(f.bytes);
        else
          a.i = static_cast<int64_t>(f.value);
        break;
    }
  }
  return a;
}

std::string encode_node(const Node& n) {
  Writer w;
  if (n.id != 0) w.uint64_field(f_node::kId, n.id);
  if (!n.name.empty()) w.bytes_field(f_node::kName, n.name);
  if (n.type != NodeType::kInvalid) w.uint64_field(f_node::kType, static_cast<uint64_t>(n.type));
  w.packed_uint64_field(f_node::kCtrlDeps, n.ctrl_deps);
  w.packed_uint64_field(f_node::kDataDeps, n.data_deps);
  if (n.start_time_micros != 0) w.uint64_field(f_node::kStart, n.start_time_micros);
  if (n.duration_micros != 0) w.uint64_field(f_node::kDuration, n.duration_micros);
  if (n.inputs.present) w.bytes_field(f_node::kInputs, encode_io(n.inputs));
  if (n.outputs.present) w.bytes_field(f_node::kOutputs, encode_io(n.outputs));
  for (const Attr& a : n.attr) w.bytes_field(f_node::kAttr, encode_attr(a));
  return w.take();
}

Result<Node> decode_node(std::string_view bytes) {
  Node n;
  GENIE_TRY(decode_node_into(bytes, &n));
  return n;
}

std::string encode_metadata(const GlobalMetadata& m) {
  Writer w;
  if (!m.version.empty()) w.bytes_field(f_meta::kVersion, m.version);
  for (const Attr& a : m.attr) w.bytes_field(f_meta::kAttr, encode_attr(a));
  return w.take();
}

Result<GlobalMetadata> decode_metadata(std::string_view bytes) {
  GlobalMetadata m;
  Reader r(bytes);
  while (!r.done()) {
    auto field = r.next();
    if (!field.is_ok()) return invalid_argument("bad encoding: " + field.status().message());
    const Field& f = field.value();
    if (f.number == f_meta::kVersion) {
      GENIE_TRY(expect("version", f, WireType::kLen));
      m.version.assign(f.bytes);
    } else if (f.number == f_meta::kAttr) {
      GENIE_TRY(expect("attr", f, WireType::kLen));
      auto a = decode_attr(f.bytes);
      if (!a.is_ok())
        return invalid_argument("field 'attr' #" + std::to_string(m.attr.size()) + ": " + a.status().message());
      m.attr.push_back(std::move(a).value());
    }
  }
  return m;
}

std::string encode_trace(const Trace& t) {
  std::string out;
  protowire::append_delimited(&out, encode_metadata(t.metadata));
  for (const Node& n : t.nodes) protowire::append_delimited(&out, encode_node(n));
  return out;
}

Result<Trace> parse_trace(std::string_view bytes, const std::string& origin) {
  if (bytes.size() >= 2 && static_cast<uint8_t>(bytes[0]) == 0x1f && static_cast<uint8_t>(bytes[1]) == 0x8b)
    return invalid_argument(origin + ": gzip-compressed; decompress it first (gunzip)");
  if (bytes.empty()) return invalid_argument(origin + ": empty file (a Chakra trace starts with its GlobalMetadata)");
  Trace t;
  size_t pos = 0;
  auto meta = protowire::next_delimited(bytes, &pos);
  if (!meta.is_ok()) return invalid_argument(origin + ": GlobalMetadata: " + meta.status().message());
  auto m = decode_metadata(**meta);
  if (!m.is_ok()) return invalid_argument(origin + ": GlobalMetadata: " + m.status().message());
  t.metadata = std::move(m).value();
  for (size_t k = 0;; ++k) {
    const size_t at = pos;
    auto msg = protowire::next_delimited(bytes, &pos);
    if (!msg.is_ok())
      return invalid_argument(origin + ": node #" + std::to_string(k) + " (byte " + std::to_string(at) +
                              "): " + msg.status().message());
    if (!msg->has_value()) break;
    Node n;
    Status s = decode_node_into(**msg, &n);
    if (!s.is_ok())
      return invalid_argument(origin + ": node #" + std::to_string(k) + " (id " + std::to_string(n.id) + ", byte " +
                              std::to_string(at) + "): " + s.message());
    t.nodes.push_back(std::move(n));
  }
  return t;
}

Result<Trace> read_trace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Errc::kSystem, path + ": cannot open: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status(Errc::kSystem, path + ": read error");
  const std::string bytes = ss.str();
  return parse_trace(bytes, path);
}

Status write_trace(const std::string& path, const Trace& t) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const std::string bytes = encode_trace(t);
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return Status(Errc::kSystem, tmp + ": " + std::strerror(errno));
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (std::fclose(f) != 0 || !ok) {
    std::remove(tmp.c_str());
    return Status(Errc::kSystem, tmp + ": write failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    return Status(Errc::kSystem, path + ": " + why);
  }
  return Status::ok();
}

}  // namespace genie::netsim::chakra
