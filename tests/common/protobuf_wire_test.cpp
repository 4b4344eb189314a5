// SPDX-License-Identifier: Apache-2.0
// Tests of the protobuf wire codec against the encodings protobuf's own documentation gives
// (https://protobuf.dev/programming-guides/encoding/) and against malformed input.
#include "genie/common/protobuf_wire.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "hex_string.hpp"

namespace genie::protowire {
namespace {

using genie::testing::hex;

std::string bytes(std::initializer_list<int> v) {
  std::string s;
  for (int b : v) s.push_back(static_cast<char>(b));
  return s;
}

TEST(ProtobufWire, EncodesTheDocumentedExamples) {
  // "Test1 { int32 a = 1; }" with a = 150 is 08 96 01; "string b = 2" = "testing" is 12 07 74 65 73 74 69 6e 67;
  // "repeated int32 f = 4 [packed]" = [3, 270, 86942] is 22 06 03 8e 02 9e a7 05.
  Writer w;
  w.int32_field(1, 150);
  EXPECT_EQ(hex(w.data()), "089601");
  w.clear();
  w.bytes_field(2, "testing");
  EXPECT_EQ(hex(w.data()), "120774657374696e67");
  w.clear();
  const std::vector<uint64_t> packed{3, 270, 86942};
  w.packed_uint64_field(4, packed);
  EXPECT_EQ(hex(w.data()), "2206038e029ea705");
}

TEST(ProtobufWire, NegativeInt32IsSignExtendedToTenBytes) {
  Writer w;
  w.int32_field(1, -1);
  EXPECT_EQ(hex(w.data()), "08ffffffffffffffffff01");
  Reader r(w.data());
  auto f = r.next();
  ASSERT_TRUE(f.is_ok());
  EXPECT_EQ(static_cast<int32_t>(f->value), -1);
  EXPECT_TRUE(r.done());
}

TEST(ProtobufWire, FixedWidthAndZigzagRoundTrip) {
  Writer w;
  w.double_field(3, 1.0);
  w.float_field(5, 2.5f);
  w.sint64_field(17, -3);
  w.bool_field(27, true);
  EXPECT_EQ(hex(w.data()).substr(0, 18), "19000000000000f03f");
  Reader r(w.data());
  auto d = r.next();
  ASSERT_TRUE(d.is_ok());
  EXPECT_EQ(d->type, WireType::kFixed64);
  double dv;
  std::memcpy(&dv, &d->value, sizeof dv);
  EXPECT_EQ(dv, 1.0);
  auto fl = r.next();
  ASSERT_TRUE(fl.is_ok());
  EXPECT_EQ(fl->type, WireType::kFixed32);
  const auto bits = static_cast<uint32_t>(fl->value);
  float fv;
  std::memcpy(&fv, &bits, sizeof fv);
  EXPECT_EQ(fv, 2.5f);
  auto z = r.next();
  ASSERT_TRUE(z.is_ok());
  EXPECT_EQ(zigzag_decode(z->value), -3);
  auto b = r.next();
  ASSERT_TRUE(b.is_ok());
  EXPECT_EQ(b->number, 27u);
  EXPECT_EQ(b->value, 1u);
  EXPECT_TRUE(r.done());
}

TEST(ProtobufWire, RepeatedVarintAcceptsPackedAndUnpacked) {
  Writer w;
  const std::vector<uint64_t> packed{1, 300};
  w.packed_uint64_field(5, packed);
  w.uint64_field(5, 7);  // an unpacked element of the same field, as a parser must accept
  Reader r(w.data());
  std::vector<uint64_t> out;
  while (!r.done()) {
    auto f = r.next();
    ASSERT_TRUE(f.is_ok());
    ASSERT_TRUE(append_repeated_varint(*f, &out).is_ok());
  }
  EXPECT_EQ(out, (std::vector<uint64_t>{1, 300, 7}));
}

TEST(ProtobufWire, DelimitedStreamRoundTrip) {
  std::string stream;
  append_delimited(&stream, "abc");
  append_delimited(&stream, "");
  append_delimited(&stream, std::string(200, 'x'));
  size_t pos = 0;
  auto a = next_delimited(stream, &pos);
  ASSERT_TRUE(a.is_ok() && a->has_value());
  EXPECT_EQ(**a, "abc");
  auto e = next_delimited(stream, &pos);
  ASSERT_TRUE(e.is_ok() && e->has_value());
  EXPECT_EQ((*e)->size(), 0u);
  auto x = next_delimited(stream, &pos);
  ASSERT_TRUE(x.is_ok() && x->has_value());
  EXPECT_EQ((*x)->size(), 200u);
  auto end = next_delimited(stream, &pos);
  ASSERT_TRUE(end.is_ok());
  EXPECT_FALSE(end->has_value());
}

TEST(ProtobufWire, MalformedInputIsAnErrorNamingTheOffset) {
  // A varint whose continuation bit runs off the end.
  // (A Reader views its bytes: they must outlive it.)
  const std::string trunc_bytes = bytes({0x08, 0x96});
  Reader trunc(trunc_bytes);
  auto t = trunc.next();
  ASSERT_FALSE(t.is_ok());
  EXPECT_NE(t.status().message().find("truncated varint at byte 1"), std::string::npos) << t.status().message();
  // Eleven continuation bytes.
  const std::string long_bytes = bytes({0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01});
  Reader longv(long_bytes);
  EXPECT_FALSE(longv.next().is_ok());
  // Field number 0, a group (wire type 3), a length past the end.
  EXPECT_FALSE(Reader(bytes({0x00, 0x01})).next().is_ok());
  EXPECT_FALSE(Reader(bytes({0x0b})).next().is_ok());
  auto past = Reader(bytes({0x12, 0x05, 'a'})).next();
  ASSERT_FALSE(past.is_ok());
  EXPECT_NE(past.status().message().find("runs past the end"), std::string::npos);
  // A truncated fixed64.
  EXPECT_FALSE(Reader(bytes({0x09, 0x00, 0x00})).next().is_ok());
  // A delimited message longer than the stream.
  std::string s = bytes({0x05, 'a', 'b'});
  size_t pos = 0;
  EXPECT_FALSE(next_delimited(s, &pos).is_ok());
}

}  // namespace
}  // namespace genie::protowire
