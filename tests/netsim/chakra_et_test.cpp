// SPDX-License-Identifier: Apache-2.0
// Tests of the Chakra ET codec: byte-exact against Python protobuf's encoding of et_def.proto (the expected bytes
// below were printed by protobuf 7.36 with et_def_pb2 compiled from mlcommons/chakra's schema), round trips, and
// strict errors that name the file, the node and the field.
#include "genie/netsim/chakra_et.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "genie/common/protobuf_wire.hpp"

#include "../common/hex_string.hpp"

namespace genie::netsim::chakra {
namespace {

using genie::testing::hex;

std::string unhex(std::string_view h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16)));
  return out;
}

// Node(id=5, name="k", type=COMP_NODE, data_deps=[1, 300], duration_micros=7, attr=[is_cpu_op: bool_val=False,
// comm_size: int64_val=-2, x: double_val=1.5, pg_name: string_val="0"]), serialized by Python protobuf.
constexpr const char* kPythonNode =
    "080512016b18042a0301ac023807520e0a0969735f6370755f6f70d8010052160a09636f6d6d5f73697a6548feffffffffffffffff01520c"
    "0a017819000000000000f83f520d0a0770675f6e616d65ea010130";

Node sample_node() {
  Node n;
  n.id = 5;
  n.name = "k";
  n.type = NodeType::kComp;
  n.data_deps = {1, 300};
  n.duration_micros = 7;
  n.attr = {Attr::boolean("is_cpu_op", false), Attr::int64("comm_size", -2), Attr::dbl("x", 1.5),
            Attr::string("pg_name", "0")};
  return n;
}

TEST(ChakraEt, NodeEncodingMatchesPythonProtobufByteForByte) {
  EXPECT_EQ(hex(encode_node(sample_node())), kPythonNode);
  // GlobalMetadata(version="1.0.0", attr=[rank: uint64_val=3]) and Node(id=1, type=METADATA_NODE,
  // inputs=IOInfo(values="a")).
  GlobalMetadata m;
  m.version = "1.0.0";
  m.attr = {Attr::uint64("rank", 3)};
  EXPECT_EQ(hex(encode_metadata(m)), "0a05312e302e3012080a0472616e6b6803");
  Node md;
  md.id = 1;
  md.type = NodeType::kMetadata;
  md.inputs.present = true;
  md.inputs.values = "a";
  EXPECT_EQ(hex(encode_node(md)), "0801180142030a0161");
}

TEST(ChakraEt, DecodesPythonProtobufsBytes) {
  auto n = decode_node(unhex(kPythonNode));
  ASSERT_TRUE(n.is_ok()) << n.status().message();
  EXPECT_EQ(n->id, 5u);
  EXPECT_EQ(n->name, "k");
  EXPECT_EQ(n->type, NodeType::kComp);
  EXPECT_EQ(n->data_deps, (std::vector<uint64_t>{1, 300}));
  EXPECT_EQ(n->duration_micros, 7u);
  ASSERT_EQ(n->attr.size(), 4u);
  EXPECT_EQ(n->find("is_cpu_op")->kind, Attr::Kind::kBool);
  EXPECT_EQ(n->find("is_cpu_op")->as_int(), 0);
  EXPECT_EQ(n->find("comm_size")->as_int(), -2);
  EXPECT_EQ(n->find("x")->d, 1.5);
  EXPECT_EQ(n->find("pg_name")->s, "0");
  EXPECT_EQ(n->find("missing"), nullptr);
}

TEST(ChakraEt, EveryAttributeKindRoundTrips) {
  std::vector<Attr> attrs;
  for (Attr::Kind k : {Attr::Kind::kInt32, Attr::Kind::kInt64, Attr::Kind::kUint32, Attr::Kind::kUint64,
                       Attr::Kind::kSint32, Attr::Kind::kSint64, Attr::Kind::kFixed32, Attr::Kind::kFixed64,
                       Attr::Kind::kSfixed32, Attr::Kind::kSfixed64, Attr::Kind::kBool}) {
    Attr a;
    a.name = attr_kind_name(k);
    a.kind = k;
    a.i = k == Attr::Kind::kBool ? 1 : (k == Attr::Kind::kUint32 || k == Attr::Kind::kFixed32 ? 7 : -7);
    if (k == Attr::Kind::kUint64 || k == Attr::Kind::kFixed64) a.i = 1234567890123;
    attrs.push_back(a);
  }
  Attr f;
  f.name = "f";
  f.kind = Attr::Kind::kFloat;
  f.d = 0.25;
  attrs.push_back(f);
  Attr list;
  list.name = "l";
  list.kind = Attr::Kind::kInt64List;
  list.s = unhex("0a0201");  // Int64List{values: [1]} packed
  attrs.push_back(list);
  for (const Attr& a : attrs) {
    auto back = decode_attr(encode_attr(a));
    ASSERT_TRUE(back.is_ok()) << a.name << ": " << back.status().message();
    EXPECT_EQ(back->kind, a.kind) << a.name;
    EXPECT_EQ(back->i, a.i) << a.name;
    EXPECT_EQ(back->d, a.d) << a.name;
    EXPECT_EQ(back->s, a.s) << a.name;
  }
  // A uint64 above INT64_MAX is no integer a reader can use.
  EXPECT_FALSE(Attr::uint64("big", ~0ull).as_int().has_value());
}

TEST(ChakraEt, TraceFileRoundTripsThroughDisk) {
  Trace t;
  t.metadata.version = "1.0.0";
  t.metadata.attr = {Attr::int64("rank", 2)};
  t.nodes = {sample_node(), sample_node()};
  t.nodes[1].id = 6;
  t.nodes[1].ctrl_deps = {5};
  const std::string path = ::testing::TempDir() + "/chakra_et_test.0.et";
  ASSERT_TRUE(write_trace(path, t).is_ok());
  auto back = read_trace(path);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(back->metadata.version, "1.0.0");
  EXPECT_EQ(back->metadata.find("rank")->as_int(), 2);
  ASSERT_EQ(back->nodes.size(), 2u);
  EXPECT_EQ(back->nodes[1].ctrl_deps, (std::vector<uint64_t>{5}));
  EXPECT_EQ(encode_trace(*back), encode_trace(t));
  std::filesystem::remove(path);
}

TEST(ChakraEt, BadFilesAreErrorsNamingFileNodeAndField) {
  Trace t;
  t.nodes = {sample_node()};
  std::string good = encode_trace(t);
  // A node whose type is no NodeType of the schema.
  {
    Node n = sample_node();
    n.type = static_cast<NodeType>(42);
    Trace bad;
    bad.nodes = {sample_node(), n};
    auto r = parse_trace(encode_trace(bad), "x.1.et");
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find("x.1.et: node #1 (id 5"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("field 'type'"), std::string::npos) << r.status().message();
  }
  // data_deps with a fixed64 wire type.
  {
    protowire::Writer w;
    w.uint64_field(1, 9);
    w.fixed64_field(5, 3);
    std::string file;
    protowire::append_delimited(&file, "");
    protowire::append_delimited(&file, w.data());
    auto r = parse_trace(file, "y.0.et");
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find("y.0.et: node #0 (id 9"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("'data_deps'"), std::string::npos) << r.status().message();
  }
  // An attribute whose int64_val has a length-delimited wire type.
  {
    protowire::Writer a;
    a.bytes_field(1, "comm_size");
    a.bytes_field(9, "zz");
    protowire::Writer w;
    w.uint64_field(1, 3);
    w.bytes_field(10, a.data());
    std::string file;
    protowire::append_delimited(&file, "");
    protowire::append_delimited(&file, w.data());
    auto r = parse_trace(file, "z.0.et");
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find("attribute 'comm_size'"), std::string::npos) << r.status().message();
  }
  // Truncated in the middle of a node, an empty file, a gzip file.
  auto cut = parse_trace(std::string_view(good).substr(0, good.size() - 3), "c.0.et");
  ASSERT_FALSE(cut.is_ok());
  EXPECT_NE(cut.status().message().find("c.0.et: node #0"), std::string::npos) << cut.status().message();
  EXPECT_FALSE(parse_trace("", "e.0.et").is_ok());
  auto gz = parse_trace(unhex("1f8b0800"), "g.0.et");
  ASSERT_FALSE(gz.is_ok());
  EXPECT_NE(gz.status().message().find("gzip"), std::string::npos);
  // A file that cannot be opened.
  auto missing = read_trace("/nonexistent/dir/none.0.et");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), Errc::kSystem);
}

TEST(ChakraEt, UnknownFieldsAreSkipped) {
  // A field the schema does not have (number 99) and the storage field (11): a newer writer's trace still reads.
  protowire::Writer w;
  w.uint64_field(1, 4);
  w.uint64_field(99, 1);
  w.bytes_field(11, "\x08\x01");
  w.uint64_field(3, 4);
  auto n = decode_node(w.data());
  ASSERT_TRUE(n.is_ok()) << n.status().message();
  EXPECT_EQ(n->id, 4u);
  EXPECT_EQ(n->type, NodeType::kComp);
}

}  // namespace
}  // namespace genie::netsim::chakra
