// SPDX-License-Identifier: Apache-2.0
// The protobuf wire format: varints, fixed-width and length-delimited fields, packed repeated varints.
#include "genie/common/protobuf_wire.hpp"

#include <cstring>

namespace genie::protowire {

namespace {
// A varint carries 7 bits per byte: 64 bits need at most 10 bytes.
constexpr int kMaxVarintBytes = 10;

std::string at(size_t offset) { return " at byte " + std::to_string(offset); }
}  // namespace

void Writer::varint(uint64_t v) {
  while (v >= 0x80) {
    buf_.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  buf_.push_back(static_cast<char>(v));
}

void Writer::tag(uint32_t field, WireType t) { varint((static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(t)); }

void Writer::uint64_field(uint32_t field, uint64_t v) {
  tag(field, WireType::kVarint);
  varint(v);
}

void Writer::sint64_field(uint32_t field, int64_t v) { uint64_field(field, zigzag_encode(v)); }

void Writer::fixed64_field(uint32_t field, uint64_t v) {
  tag(field, WireType::kFixed64);
  for (int i = 0; i < 8; ++i) buf_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void Writer::fixed32_field(uint32_t field, uint32_t v) {
  tag(field, WireType::kFixed32);
  for (int i = 0; i < 4; ++i) buf_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void Writer::double_field(uint32_t field, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  fixed64_field(field, bits);
}

void Writer::float_field(uint32_t field, float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  fixed32_field(field, bits);
}

void Writer::bytes_field(uint32_t field, std::string_view bytes) {
  tag(field, WireType::kLen);
  varint(bytes.size());
  buf_.append(bytes.data(), bytes.size());
}

void Writer::packed_uint64_field(uint32_t field, std::span<const uint64_t> values) {
  if (values.empty()) return;
  Writer payload;
  for (uint64_t v : values) payload.varint(v);
  bytes_field(field, payload.data());
}

Result<uint64_t> read_varint(std::string_view buf, size_t* pos) {
  uint64_t v = 0;
  const size_t start = *pos;
  for (int i = 0; i < kMaxVarintBytes; ++i) {
    if (*pos >= buf.size()) return invalid_argument("truncated varint" + at(start));
    const auto b = static_cast<uint8_t>(buf[(*pos)++]);
    // The tenth byte may only carry the top bit of a 64-bit value.
    if (i == kMaxVarintBytes - 1 && b > 1) return invalid_argument("varint overflows 64 bits" + at(start));
    v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) return v;
  }
  return invalid_argument("varint longer than 10 bytes" + at(start));
}

Result<Field> Reader::next() {
  Field f;
  f.offset = pos_;
  GENIE_ASSIGN_OR_RETURN(uint64_t key, read_varint(buf_, &pos_));
  const uint64_t number = key >> 3;
  if (number == 0 || number > kMaxFieldNumber)
    return invalid_argument("bad field number " + std::to_string(number) + at(f.offset));
  f.number = static_cast<uint32_t>(number);
  const auto wt = static_cast<uint8_t>(key & 7);
  switch (wt) {
    case 0: {
      f.type = WireType::kVarint;
      GENIE_ASSIGN_OR_RETURN(f.value, read_varint(buf_, &pos_));
      return f;
    }
    case 1:
    case 5: {
      const size_t n = wt == 1 ? 8 : 4;
      f.type = wt == 1 ? WireType::kFixed64 : WireType::kFixed32;
      if (buf_.size() - pos_ < n)
        return invalid_argument("truncated fixed-width field " + std::to_string(number) + at(f.offset));
      for (size_t i = 0; i < n; ++i) f.value |= static_cast<uint64_t>(static_cast<uint8_t>(buf_[pos_ + i])) << (8 * i);
      pos_ += n;
      return f;
    }
    case 2: {
      f.type = WireType::kLen;
      GENIE_ASSIGN_OR_RETURN(uint64_t len, read_varint(buf_, &pos_));
      if (len > buf_.size() - pos_)
        return invalid_argument("field " + std::to_string(number) + " of " + std::to_string(len) +
                                " bytes runs past the end of its message" + at(f.offset));
      f.bytes = buf_.substr(pos_, static_cast<size_t>(len));
      pos_ += static_cast<size_t>(len);
      return f;
    }
    default:
      return invalid_argument("field " + std::to_string(number) + " has unsupported wire type " + std::to_string(wt) +
                              at(f.offset));
  }
}

Status append_repeated_varint(const Field& f, std::vector<uint64_t>* out) {
  if (f.type == WireType::kVarint) {
    out->push_back(f.value);
    return Status::ok();
  }
  if (f.type != WireType::kLen)
    return invalid_argument("repeated varint field " + std::to_string(f.number) + " has a fixed-width wire type");
  size_t pos = 0;
  while (pos < f.bytes.size()) {
    auto v = read_varint(f.bytes, &pos);
    if (!v.is_ok()) return invalid_argument("packed field " + std::to_string(f.number) + ": " + v.status().message());
    out->push_back(v.value());
  }
  return Status::ok();
}

void append_delimited(std::string* out, std::string_view message) {
  Writer w;
  w.varint(message.size());
  out->append(w.data());
  out->append(message.data(), message.size());
}

Result<std::optional<std::string_view>> next_delimited(std::string_view stream, size_t* pos) {
  if (*pos >= stream.size()) return std::optional<std::string_view>();
  const size_t start = *pos;
  GENIE_ASSIGN_OR_RETURN(uint64_t len, read_varint(stream, pos));
  if (len > stream.size() - *pos)
    return invalid_argument("message of " + std::to_string(len) + " bytes" + at(start) + " runs past the end (" +
                            std::to_string(stream.size() - *pos) + " bytes left)");
  std::string_view m = stream.substr(*pos, static_cast<size_t>(len));
  *pos += static_cast<size_t>(len);
  return std::optional<std::string_view>(m);
}

}  // namespace genie::protowire
