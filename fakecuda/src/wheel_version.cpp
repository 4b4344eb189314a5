// SPDX-License-Identifier: Apache-2.0
// The version of the cuDNN / cuBLAS wheel a program brought (see wheel_version.hpp).
#include "genie/fakecuda/wheel_version.hpp"

#include <link.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "genie/common/config.hpp"
#include "genie/common/log.hpp"

namespace genie::fakecuda {
namespace {

const config::Param<std::string> kCudnnVersion{
    "fakecuda.cudnn_version", "",
    "Version libcudnn.so.9 reports (cudnnGetVersion, cudnnGetProperty), as MAJOR.MINOR.PATCH. Empty: the version "
    "of the nvidia-cudnn-cu13/-cu12 wheel next to the program (found from the loaded libraries' site-packages), "
    "else the cuDNN headers Genie was built with."};
const config::Param<std::string> kCublasVersion{
    "fakecuda.cublas_version", "",
    "Version libcublas.so / libcublasLt.so report (cublasGetVersion, cublasLtGetVersion, cublas(Lt)GetProperty), "
    "as MAJOR.MINOR.PATCH. Empty: the version of the nvidia-cublas wheel next to the program whose major matches "
    "the soname, else the cuBLAS headers Genie was built with (13) or 12.9.1 (12)."};

/// Wheel (dist-info) names of each library, and the major version its soname serves.
struct WheelPackages {
  std::array<std::string_view, 2> packages;
  int major;
};
WheelPackages packages_of(WheelLibrary lib) {
  switch (lib) {
    case WheelLibrary::kCudnn9:
      return {{"nvidia_cudnn_cu13", "nvidia_cudnn_cu12"}, 9};
    case WheelLibrary::kCublas13:
      return {{"nvidia_cublas", "nvidia_cublas_cu13"}, 13};
    case WheelLibrary::kCublas12:
      return {{"nvidia_cublas_cu12", ""}, 12};
  }
  return {{"", ""}, 0};
}

bool parse_int(std::string_view s, int* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && *out >= 0;
}

int collect_site_packages(dl_phdr_info* info, size_t, void* data) {
  auto* out = static_cast<std::vector<std::string>*>(data);
  if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') return 0;
  std::string_view path(info->dlpi_name);
  for (std::string_view marker : {"/site-packages/", "/dist-packages/"}) {
    size_t at = path.find(marker);
    if (at == std::string_view::npos) continue;
    std::string dir(path.substr(0, at + marker.size() - 1));
    if (std::find(out->begin(), out->end(), dir) == out->end()) out->push_back(std::move(dir));
    break;
  }
  return 0;
}

}  // namespace

std::optional<LibraryVersion> parse_library_version(std::string_view text) {
  LibraryVersion v;
  int* parts[3] = {&v.major, &v.minor, &v.patch};
  size_t i = 0;
  while (!text.empty()) {
    size_t dot = text.find('.');
    std::string_view part = text.substr(0, dot);
    int n = 0;
    if (!parse_int(part, &n)) return std::nullopt;
    if (i < 3) *parts[i] = n;  // a fourth number (the wheel's build) is dropped
    ++i;
    if (dot == std::string_view::npos) break;
    text.remove_prefix(dot + 1);
    if (text.empty()) return std::nullopt;  // "9.26."
  }
  if (i < 2 || i > 4) return std::nullopt;
  return v;
}

std::optional<LibraryVersion> dist_info_version(std::string_view dir_name, std::string_view package) {
  constexpr std::string_view kSuffix = ".dist-info";
  if (package.empty() || dir_name.size() <= package.size() + 1 + kSuffix.size()) return std::nullopt;
  if (dir_name.substr(0, package.size()) != package || dir_name[package.size()] != '-') return std::nullopt;
  if (dir_name.substr(dir_name.size() - kSuffix.size()) != kSuffix) return std::nullopt;
  return parse_library_version(
      dir_name.substr(package.size() + 1, dir_name.size() - package.size() - 1 - kSuffix.size()));
}

std::optional<LibraryVersion> parse_cudnn_version_header(std::string_view text) {
  auto define = [&](std::string_view name) -> std::optional<int> {
    std::string key = "#define " + std::string(name);
    for (size_t at = text.find(key); at != std::string_view::npos; at = text.find(key, at + 1)) {
      size_t p = at + key.size();
      if (p >= text.size() || (text[p] != ' ' && text[p] != '\t')) continue;  // CUDNN_MAJOR vs CUDNN_MAJORX
      while (p < text.size() && (text[p] == ' ' || text[p] == '\t')) ++p;
      size_t e = p;
      while (e < text.size() && text[e] >= '0' && text[e] <= '9') ++e;
      int n = 0;
      if (parse_int(text.substr(p, e - p), &n)) return n;
    }
    return std::nullopt;
  };
  auto major = define("CUDNN_MAJOR"), minor = define("CUDNN_MINOR"), patch = define("CUDNN_PATCHLEVEL");
  if (!major || !minor || !patch) return std::nullopt;
  return LibraryVersion{*major, *minor, *patch};
}

std::vector<std::string> loaded_site_packages() {
  std::vector<std::string> dirs;
  dl_iterate_phdr(collect_site_packages, &dirs);
  return dirs;
}

std::optional<LibraryVersion> find_wheel_version(WheelLibrary lib, const std::vector<std::string>& site_dirs) {
  namespace fs = std::filesystem;
  const WheelPackages wp = packages_of(lib);
  for (const std::string& dir : site_dirs) {
    std::error_code ec;
    std::optional<LibraryVersion> best;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      for (std::string_view pkg : wp.packages) {
        auto v = dist_info_version(name, pkg);
        // Of several (a broken upgrade leaves two), the newest: what pip's last install put in the lib folder.
        if (v && v->major == wp.major && (!best || v->encoded() > best->encoded())) best = v;
      }
    }
    if (best) return best;
    if (lib == WheelLibrary::kCudnn9) {
      std::ifstream in(fs::path(dir) / "nvidia" / "cudnn" / "include" / "cudnn_version.h");
      if (in) {
        std::stringstream text;
        text << in.rdbuf();
        auto v = parse_cudnn_version_header(text.str());
        if (v && v->major == wp.major) return v;
      }
    }
  }
  return std::nullopt;
}

LibraryVersion resolve_library_version(WheelLibrary lib, const LibraryVersion& fallback, const config::Config& cfg,
                                       const std::vector<std::string>& site_dirs) {
  const config::Param<std::string>& key = lib == WheelLibrary::kCudnn9 ? kCudnnVersion : kCublasVersion;
  const std::string text = cfg.get(key);
  if (!text.empty()) {
    if (auto v = parse_library_version(text)) return *v;
    GENIE_LOG_WARN(log::kFakecuda, "{}={}: not a version (MAJOR.MINOR.PATCH); ignored", key.key(), text);
  }
  if (auto v = find_wheel_version(lib, site_dirs)) return *v;
  return fallback;
}

LibraryVersion program_library_version(WheelLibrary lib, const LibraryVersion& fallback) noexcept {
  static std::mutex mu;
  static std::array<std::optional<LibraryVersion>, 3> decided;
  try {
    std::lock_guard lk(mu);
    auto& slot = decided[static_cast<size_t>(lib)];
    if (!slot) {
      slot = resolve_library_version(lib, fallback, config::global(), loaded_site_packages());
      GENIE_LOG_INFO(log::kFakecuda, "{} reports version {}.{}.{}", lib == WheelLibrary::kCudnn9 ? "cuDNN" : "cuBLAS",
                     slot->major, slot->minor, slot->patch);
    }
    return *slot;
  } catch (...) {
    return fallback;  // out of memory while scanning: the headers' version
  }
}

}  // namespace genie::fakecuda
