// SPDX-License-Identifier: Apache-2.0
// The protobuf wire format (varints, fixed-width and length-delimited fields, packed repeated fields), written and
// read without a protobuf library: enough for Chakra execution traces (docs/chakra.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "genie/common/status.hpp"

namespace genie::protowire {

/// Wire types of the protobuf encoding (https://protobuf.dev/programming-guides/encoding/). Groups (3, 4) are
/// deprecated and refused by the Reader.
enum class WireType : uint8_t { kVarint = 0, kFixed64 = 1, kLen = 2, kFixed32 = 5 };

/// Largest field number protobuf allows (2^29 - 1).
inline constexpr uint32_t kMaxFieldNumber = (1u << 29) - 1;

/// Builds one message's bytes. Every call appends one field, whatever its value: proto3's rule that scalars equal
/// to their default are left out (and that a oneof member is written even when it is zero) is the caller's. Not
/// thread-safe.
class Writer {
 public:
  /// A raw varint (LEB128, 1..10 bytes).
  void varint(uint64_t v);
  /// A field's key: (field << 3) | wire type.
  void tag(uint32_t field, WireType t);
  /// uint32, uint64, int64 and enum fields: the value as a varint (a negative int64 takes 10 bytes).
  void uint64_field(uint32_t field, uint64_t v);
  void int64_field(uint32_t field, int64_t v) { uint64_field(field, static_cast<uint64_t>(v)); }
  /// int32: sign-extended to 64 bits first, as protobuf does (a negative int32 takes 10 bytes).
  void int32_field(uint32_t field, int32_t v) { int64_field(field, v); }
  void bool_field(uint32_t field, bool v) { uint64_field(field, v ? 1 : 0); }
  /// sint32 / sint64: zigzag-encoded varints.
  void sint64_field(uint32_t field, int64_t v);
  void fixed64_field(uint32_t field, uint64_t v);
  void fixed32_field(uint32_t field, uint32_t v);
  void double_field(uint32_t field, double v);
  void float_field(uint32_t field, float v);
  /// string, bytes and embedded messages: length-delimited.
  void bytes_field(uint32_t field, std::string_view bytes);
  void message_field(uint32_t field, const Writer& message) { bytes_field(field, message.data()); }
  /// A packed repeated varint field (proto3's encoding of `repeated uint64`); nothing when `values` is empty.
  void packed_uint64_field(uint32_t field, std::span<const uint64_t> values);

  const std::string& data() const { return buf_; }
  std::string take() { return std::move(buf_); }
  size_t size() const { return buf_.size(); }
  void clear() { buf_.clear(); }

 private:
  std::string buf_;
};

/// One decoded field. `value` holds varint, fixed64 and fixed32 payloads (fixed32 zero-extended); `bytes` the
/// payload of a length-delimited field (a view into the Reader's buffer).
struct Field {
  uint32_t number = 0;
  WireType type = WireType::kVarint;
  uint64_t value = 0;
  std::string_view bytes;
  size_t offset = 0;  ///< where the field's key starts in the message
};

/// Reads the fields of one message in order. Strict: a truncated varint or field, a varint longer than 10 bytes,
/// field number 0, a group or an unknown wire type is an error (InvalidArgument) naming the byte offset.
class Reader {
 public:
  explicit Reader(std::string_view message) : buf_(message) {}
  bool done() const { return pos_ >= buf_.size(); }
  size_t offset() const { return pos_; }
  /// The next field (call only while !done()).
  Result<Field> next();

 private:
  std::string_view buf_;
  size_t pos_ = 0;
};

/// Reads a varint at `*pos` of `buf` and advances `*pos`. InvalidArgument when truncated or over 10 bytes.
Result<uint64_t> read_varint(std::string_view buf, size_t* pos);

/// Zigzag decoding (sint32/sint64).
inline int64_t zigzag_decode(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }
inline uint64_t zigzag_encode(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }

/// Unpacks a repeated varint field into `out`: accepts a packed payload (wire type kLen) and a single unpacked
/// element (kVarint), as protobuf parsers must. InvalidArgument for any other wire type or a bad payload.
Status append_repeated_varint(const Field& f, std::vector<uint64_t>* out);

/// Appends `message` to `out` prefixed with its length as a varint (protobuf's delimited stream, Java's
/// writeDelimitedTo, Chakra's encodeMessage).
void append_delimited(std::string* out, std::string_view message);

/// The next length-prefixed message of a delimited stream at `*pos` (advanced past it); nullopt at the end of
/// `stream`. InvalidArgument when the prefix is bad or the message runs past the end (names the offset).
Result<std::optional<std::string_view>> next_delimited(std::string_view stream, size_t* pos);

}  // namespace genie::protowire
