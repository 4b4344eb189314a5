// SPDX-License-Identifier: Apache-2.0
// The predicted-versus-measured plot as a PNG, rasterised here and written with stored (uncompressed) deflate blocks,
// so no image library is needed (PNG: RFC 2083; zlib stream: RFC 1950; deflate stored blocks: RFC 1951 3.2.4).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "genie/fakecuda/calibration.hpp"

namespace genie::fakecuda {
namespace {

constexpr int kW = 640, kH = 560, kLeft = 50, kRight = 20, kTop = 20, kBottom = 40;

struct Canvas {
  std::vector<uint8_t> rgb = std::vector<uint8_t>(static_cast<size_t>(kW) * kH * 3, 255);
  void put(int x, int y, std::array<uint8_t, 3> c) {
    if (x < 0 || y < 0 || x >= kW || y >= kH) return;
    uint8_t* p = &rgb[(static_cast<size_t>(y) * kW + x) * 3];
    p[0] = c[0];
    p[1] = c[1];
    p[2] = c[2];
  }
  void line(double x0, double y0, double x1, double y1, std::array<uint8_t, 3> c, int dash = 0) {
    int n = static_cast<int>(std::max(std::fabs(x1 - x0), std::fabs(y1 - y0))) + 1;
    for (int i = 0; i <= n; ++i) {
      if (dash > 0 && (i / dash) % 2) continue;
      double t = static_cast<double>(i) / n;
      put(static_cast<int>(std::lround(x0 + t * (x1 - x0))), static_cast<int>(std::lround(y0 + t * (y1 - y0))), c);
    }
  }
  void disc(double cx, double cy, double r, std::array<uint8_t, 3> c, bool hollow) {
    for (int y = static_cast<int>(cy - r - 1); y <= cy + r + 1; ++y)
      for (int x = static_cast<int>(cx - r - 1); x <= cx + r + 1; ++x) {
        double d = std::hypot(x - cx, y - cy);
        if (d <= r && (!hollow || d >= r - 1.3)) put(x, y, c);
      }
  }
};

uint32_t crc32(const uint8_t* d, size_t n, uint32_t crc = 0) {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) crc = table[(crc ^ d[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

void be32(std::string& s, uint32_t v) {
  for (int i = 3; i >= 0; --i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void chunk(std::string& out, const char* type, const std::string& data) {
  be32(out, static_cast<uint32_t>(data.size()));
  std::string body = std::string(type, 4) + data;
  out += body;
  be32(out, crc32(reinterpret_cast<const uint8_t*>(body.data()), body.size()));
}

std::array<uint8_t, 3> hex(const char* h) {
  auto v = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
  return {static_cast<uint8_t>(v(h[1]) * 16 + v(h[2])), static_cast<uint8_t>(v(h[3]) * 16 + v(h[4])),
          static_cast<uint8_t>(v(h[5]) * 16 + v(h[6]))};
}

}  // namespace

std::string fit_plot_png(const FitResult& r) {
  Canvas c;
  double lo = 5, hi = 10;
  for (const FitPoint& p : r.points) hi = std::max({hi, p.measured_us, p.predicted_us});
  hi = std::pow(10, std::ceil(std::log10(hi)));
  const double l0 = std::log10(lo), l1 = std::log10(hi);
  auto X = [&](double v) { return kLeft + (std::log10(std::max(v, lo)) - l0) / (l1 - l0) * (kW - kLeft - kRight); };
  auto Y = [&](double v) { return kH - kBottom - (std::log10(std::max(v, lo)) - l0) / (l1 - l0) * (kH - kTop - kBottom); };
  const std::array<uint8_t, 3> grid = {235, 235, 235}, axis = {50, 50, 50}, guide = {150, 150, 150};
  for (double t = 10; t <= hi * 1.001; t *= 10) {
    c.line(X(t), Y(lo), X(t), Y(hi), grid);
    c.line(X(lo), Y(t), X(hi), Y(t), grid);
    c.line(X(t), Y(lo), X(t), Y(lo) + 6, axis);
    c.line(X(lo) - 6, Y(t), X(lo), Y(t), axis);
  }
  c.line(X(lo), Y(lo), X(hi), Y(lo), axis);
  c.line(X(lo), Y(lo), X(lo), Y(hi), axis);
  c.line(X(lo), Y(lo), X(hi), Y(hi), axis);
  c.line(X(lo), Y(lo * 1.1), X(hi / 1.1), Y(hi), guide, 4);
  c.line(X(lo * 1.1), Y(lo), X(hi), Y(hi / 1.1), guide, 4);
  static const char* kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                                   "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939"};
  std::map<std::string, std::array<uint8_t, 3>> colour;
  for (const FitPoint& p : r.points)
    if (!colour.count(p.family)) colour[p.family] = hex(kColours[colour.size() % std::size(kColours)]);
  for (const FitPoint& p : r.points) c.disc(X(p.measured_us), Y(p.predicted_us), 3.2, colour[p.family], p.held_out);

  // PNG: signature, IHDR (8-bit RGB), one IDAT holding a zlib stream of stored blocks, IEND.
  std::string raw;
  raw.reserve(static_cast<size_t>(kH) * (kW * 3 + 1));
  for (int y = 0; y < kH; ++y) {
    raw.push_back(0);  // filter type None
    raw.append(reinterpret_cast<const char*>(&c.rgb[static_cast<size_t>(y) * kW * 3]), kW * 3);
  }
  std::string z = "\x78\x01";  // zlib header: deflate, 32K window, no preset dictionary
  for (size_t off = 0; off < raw.size() || off == 0;) {
    size_t n = std::min<size_t>(65535, raw.size() - off);
    bool last = off + n == raw.size();
    z.push_back(static_cast<char>(last ? 1 : 0));
    z.push_back(static_cast<char>(n & 0xff));
    z.push_back(static_cast<char>(n >> 8));
    z.push_back(static_cast<char>(~n & 0xff));
    z.push_back(static_cast<char>((~n >> 8) & 0xff));
    z.append(raw, off, n);
    off += n;
    if (last) break;
  }
  uint32_t a = 1, b = 0;  // Adler-32 of the uncompressed data
  for (unsigned char ch : raw) {
    a = (a + ch) % 65521;
    b = (b + a) % 65521;
  }
  be32(z, (b << 16) | a);
  std::string png = "\x89PNG\r\n\x1a\n";
  std::string ihdr;
  be32(ihdr, kW);
  be32(ihdr, kH);
  ihdr += std::string("\x08\x02\x00\x00\x00", 5);  // 8 bits, RGB, deflate, adaptive filtering, no interlace
  chunk(png, "IHDR", ihdr);
  chunk(png, "IDAT", z);
  chunk(png, "IEND", "");
  return png;
}

}  // namespace genie::fakecuda
