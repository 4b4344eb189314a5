// SPDX-License-Identifier: Apache-2.0
// The version of the NVIDIA library a program brought (the nvidia-cudnn / nvidia-cublas wheel next to it), which
// Genie's drop-in cuDNN and cuBLAS report, so that a framework's "compiled against X, found Y" check passes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace genie::config {
class Config;
}

namespace genie::fakecuda {

/// A library version, MAJOR.MINOR.PATCH (the wheel's fourth number, a build number, is dropped).
struct LibraryVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;
  /// cuDNN 9's and cuBLAS's integer form: MAJOR*10000 + MINOR*100 + PATCH (cudnn_version.h CUDNN_VERSION,
  /// cublasGetVersion). 9.26.0 -> 92600, 13.4.1 -> 130401.
  int encoded() const { return major * 10000 + minor * 100 + patch; }
  bool operator==(const LibraryVersion&) const = default;
};

/// The drop-in libraries whose version follows the program's wheel.
enum class WheelLibrary {
  kCudnn9,    ///< libcudnn.so.9: wheels nvidia-cudnn-cu13 / nvidia-cudnn-cu12, major 9
  kCublas13,  ///< libcublas(Lt).so.13: wheels nvidia-cublas (CUDA 13 wheels have no suffix) / nvidia-cublas-cu13
  kCublas12,  ///< libcublas(Lt).so.12: wheel nvidia-cublas-cu12
};

/// "9.26.0.51", "9.26.0" or "13.4" -> the version (missing parts are 0); nullopt for anything else.
std::optional<LibraryVersion> parse_library_version(std::string_view text);

/// The version in a wheel's metadata folder name, "nvidia_cudnn_cu13-9.26.0.51.dist-info" for package
/// "nvidia_cudnn_cu13"; nullopt when `dir_name` is not that package's dist-info.
std::optional<LibraryVersion> dist_info_version(std::string_view dir_name, std::string_view package);

/// CUDNN_MAJOR / CUDNN_MINOR / CUDNN_PATCHLEVEL of a cudnn_version.h text; nullopt when one is missing.
std::optional<LibraryVersion> parse_cudnn_version_header(std::string_view text);

/// The site-packages (or dist-packages) folders the process's loaded objects live in (dl_iterate_phdr), in load
/// order without duplicates: where torch/lib/libtorch_cuda.so is, the NVIDIA wheels are.
std::vector<std::string> loaded_site_packages();

/// The version of `lib` installed in the first of `site_dirs` that has it: a dist-info folder of one of its wheels
/// whose major version matches the soname, else (cuDNN) the wheel's nvidia/cudnn/include/cudnn_version.h.
std::optional<LibraryVersion> find_wheel_version(WheelLibrary lib, const std::vector<std::string>& site_dirs);

/// What `lib` reports: the config key fakecuda.cudnn_version / fakecuda.cublas_version when set
/// (GENIE_FAKECUDA_CUDNN_VERSION...; an unparsable value is warned about and ignored), else the wheel in
/// `site_dirs`, else `fallback` (the headers Genie was built with).
LibraryVersion resolve_library_version(WheelLibrary lib, const LibraryVersion& fallback, const config::Config& cfg,
                                       const std::vector<std::string>& site_dirs);

/// resolve_library_version with the process configuration and loaded_site_packages(), decided on the first call
/// for each library and then kept (a program sees one version). Thread-safe.
LibraryVersion program_library_version(WheelLibrary lib, const LibraryVersion& fallback) noexcept;

}  // namespace genie::fakecuda
