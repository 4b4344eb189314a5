// SPDX-License-Identifier: Apache-2.0
// Chakra execution traces (MLCommons Chakra, schema/protobuf/et_def.proto, package ChakraProtoMsg): the messages
// Genie writes and replays, encoded and decoded with genie/common/protobuf_wire.hpp. A trace file is a varint-length-
// prefixed GlobalMetadata followed by varint-length-prefixed Nodes (docs/chakra.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "genie/common/status.hpp"

namespace genie::netsim::chakra {

/// et_def.proto `NodeType`.
enum class NodeType : int32_t {
  kInvalid = 0,
  kMetadata = 1,
  kMemLoad = 2,
  kMemStore = 3,
  kComp = 4,
  kCommSend = 5,
  kCommRecv = 6,
  kCommColl = 7,
  kStorage = 8,
  kBatch = 9,
  kCheckpoint = 10,
};
const char* node_type_name(NodeType t) noexcept;  ///< "COMP_NODE", ...; "?" for values the schema lacks

/// et_def.proto `CollectiveCommType`.
enum class CommType : int32_t {
  kAllReduce = 0,
  kReduce = 1,
  kAllGather = 2,
  kGather = 3,
  kScatter = 4,
  kBroadcast = 5,
  kAllToAll = 6,
  kReduceScatter = 7,
  kReduceScatterBlock = 8,
  kBarrier = 9,
};
const char* comm_type_name(CommType t) noexcept;  ///< "ALL_REDUCE", ...

/// One AttributeProto. `kind` is the oneof case, named by its field number in et_def.proto; integer kinds and
/// bool keep their value in `i` (unsigned 64-bit values as their bit pattern), double and float in `d`, string
/// and bytes in `s`. List kinds are kept as their raw payload (`s`) so that they survive a round trip.
struct Attr {
  enum class Kind : uint8_t {
    kNone = 0,
    kDouble = 3,
    kDoubleList = 4,
    kFloat = 5,
    kFloatList = 6,
    kInt32 = 7,
    kInt32List = 8,
    kInt64 = 9,
    kInt64List = 10,
    kUint32 = 11,
    kUint32List = 12,
    kUint64 = 13,
    kUint64List = 14,
    kSint32 = 15,
    kSint32List = 16,
    kSint64 = 17,
    kSint64List = 18,
    kFixed32 = 19,
    kFixed32List = 20,
    kFixed64 = 21,
    kFixed64List = 22,
    kSfixed32 = 23,
    kSfixed32List = 24,
    kSfixed64 = 25,
    kSfixed64List = 26,
    kBool = 27,
    kBoolList = 28,
    kString = 29,
    kStringList = 30,
    kBytes = 31,
    kBytesList = 32,
  };
  std::string name;
  std::string doc_string;
  Kind kind = Kind::kNone;
  int64_t i = 0;
  double d = 0;
  std::string s;

  static Attr int64(std::string name, int64_t v);
  static Attr int32(std::string name, int32_t v);
  static Attr uint64(std::string name, uint64_t v);
  static Attr boolean(std::string name, bool v);
  static Attr dbl(std::string name, double v);
  static Attr string(std::string name, std::string v);

  /// The value of an integer or bool attribute (any width or signedness; uint64 values above INT64_MAX are
  /// refused), nullopt otherwise: readers convert as ASTRA-sim's feeder does.
  std::optional<int64_t> as_int() const;
  bool is_string() const { return kind == Kind::kString || kind == Kind::kBytes; }
};
const char* attr_kind_name(Attr::Kind k) noexcept;  ///< "int64_val", ...

/// et_def.proto `IOInfo` (strings in PyTorch's formatting; METADATA_NODEs carry process groups in `values`).
struct IOInfo {
  std::string values, shapes, types;
  bool present = false;  ///< the field was set (a reader tells has_inputs() from it)
};

/// et_def.proto `Node` (the storage field is not used by Genie: skipped on reading).
struct Node {
  uint64_t id = 0;
  std::string name;
  NodeType type = NodeType::kInvalid;
  std::vector<uint64_t> ctrl_deps, data_deps;
  uint64_t start_time_micros = 0;
  uint64_t duration_micros = 0;
  IOInfo inputs, outputs;
  std::vector<Attr> attr;

  /// The attribute named `name` (the first one), or null.
  const Attr* find(std::string_view name) const;
};

/// et_def.proto `GlobalMetadata`.
struct GlobalMetadata {
  std::string version;
  std::vector<Attr> attr;
  const Attr* find(std::string_view name) const;
};

/// A whole trace: the metadata and the nodes in file order.
struct Trace {
  GlobalMetadata metadata;
  std::vector<Node> nodes;
};

/// Protobuf encodings (proto3: scalars equal to their default are left out; an attribute's value always written).
std::string encode_attr(const Attr& a);
std::string encode_node(const Node& n);
std::string encode_metadata(const GlobalMetadata& m);
/// The file's bytes: delimited metadata, then delimited nodes.
std::string encode_trace(const Trace& t);

/// Decoders. Strict about what the schema says (a known field with the wrong wire type, a bad varint, a length past
/// the end, an enum or attribute kind the schema lacks are errors naming the field); unknown fields are skipped as
/// protobuf parsers do. Errors are InvalidArgument.
Result<Attr> decode_attr(std::string_view bytes);
Result<Node> decode_node(std::string_view bytes);
Result<GlobalMetadata> decode_metadata(std::string_view bytes);
/// A whole file's bytes; `origin` (the path) starts every error, which then names the node by its position and id
/// and the field: "t/genie.3.et: node #17 (id 42): field 'data_deps': ...". Gzip-compressed traces (Chakra's tools
/// read those too) are refused with a message saying so.
Result<Trace> parse_trace(std::string_view bytes, const std::string& origin);

/// Reads and parses a file. Errors: kSystem (cannot read it), InvalidArgument (parse_trace).
Result<Trace> read_trace(const std::string& path);
/// Writes `t` to `path` through a temporary file renamed into place. Errors: kSystem naming the path.
Status write_trace(const std::string& path, const Trace& t);

}  // namespace genie::netsim::chakra
