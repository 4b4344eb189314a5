// SPDX-License-Identifier: Apache-2.0
// Tests of the wheel version lookup (fakecuda/src/wheel_version.cpp): what Genie's cuDNN and cuBLAS report.
#include "genie/fakecuda/wheel_version.hpp"

#include <gtest/gtest.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "genie/common/config.hpp"

namespace genie::fakecuda {
namespace {

namespace fs = std::filesystem;

/// A fake site-packages folder holding the given dist-info folders, removed at the end.
class SitePackages {
 public:
  explicit SitePackages(std::initializer_list<const char*> dist_infos) {
    dir_ = fs::temp_directory_path() / ("genie_wheel_" + std::to_string(::getpid()) + "_" + std::to_string(next_++));
    fs::create_directories(dir_);
    for (const char* d : dist_infos) fs::create_directories(dir_ / d);
  }
  ~SitePackages() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path() const { return dir_.string(); }
  void write(const fs::path& rel, const std::string& text) const {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << text;
  }

 private:
  static inline int next_ = 0;
  fs::path dir_;
};

TEST(WheelVersion, ParsesDottedVersions) {
  EXPECT_EQ(parse_library_version("9.26.0.51"), (LibraryVersion{9, 26, 0}));
  EXPECT_EQ(parse_library_version("13.4.1"), (LibraryVersion{13, 4, 1}));
  EXPECT_EQ(parse_library_version("13.4"), (LibraryVersion{13, 4, 0}));
  EXPECT_FALSE(parse_library_version("9"));
  EXPECT_FALSE(parse_library_version("9.26."));
  EXPECT_FALSE(parse_library_version("9.x.0"));
  EXPECT_FALSE(parse_library_version("1.2.3.4.5"));
  EXPECT_FALSE(parse_library_version(""));
  EXPECT_EQ((LibraryVersion{9, 26, 0}).encoded(), 92600);   // cudnnGetVersion of NVIDIA's 9.26.0
  EXPECT_EQ((LibraryVersion{13, 4, 1}).encoded(), 130401);  // cublasLtGetVersion of NVIDIA's 13.4.1
}

TEST(WheelVersion, ReadsTheVersionOfTheNamedPackageOnly) {
  EXPECT_EQ(dist_info_version("nvidia_cudnn_cu13-9.19.0.56.dist-info", "nvidia_cudnn_cu13"),
            (LibraryVersion{9, 19, 0}));
  EXPECT_EQ(dist_info_version("nvidia_cublas-13.4.1.3.dist-info", "nvidia_cublas"), (LibraryVersion{13, 4, 1}));
  // nvidia_cublas_cu12 is another package than nvidia_cublas.
  EXPECT_FALSE(dist_info_version("nvidia_cublas_cu12-12.9.1.4.dist-info", "nvidia_cublas"));
  EXPECT_FALSE(dist_info_version("nvidia_cudnn_cu13-9.19.0.56.egg-info", "nvidia_cudnn_cu13"));
  EXPECT_FALSE(dist_info_version("nvidia_cudnn_cu13", "nvidia_cudnn_cu13"));
}

TEST(WheelVersion, ParsesCudnnVersionHeader) {
  const std::string header =
      "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 26\n#define CUDNN_PATCHLEVEL 0\n"
      "#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n";
  EXPECT_EQ(parse_cudnn_version_header(header), (LibraryVersion{9, 26, 0}));
  EXPECT_FALSE(parse_cudnn_version_header("#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 26\n"));
}

TEST(WheelVersion, FindsTheWheelWhoseMajorMatchesTheSoname) {
  // The layout of torch 2.15's venv (nvidia-cublas 13.4.1.3, nvidia-cudnn-cu13 9.26.0.51), plus a CUDA 12 cuBLAS.
  SitePackages site({"torch", "nvidia_cublas-13.4.1.3.dist-info", "nvidia_cudnn_cu13-9.26.0.51.dist-info",
                     "nvidia_cublas_cu12-12.9.1.4.dist-info"});
  EXPECT_EQ(find_wheel_version(WheelLibrary::kCudnn9, {site.path()}), (LibraryVersion{9, 26, 0}));
  EXPECT_EQ(find_wheel_version(WheelLibrary::kCublas13, {site.path()}), (LibraryVersion{13, 4, 1}));
  EXPECT_EQ(find_wheel_version(WheelLibrary::kCublas12, {site.path()}), (LibraryVersion{12, 9, 1}));
  // A folder without wheels, then the one with them: the first that has the library wins.
  SitePackages empty({});
  EXPECT_EQ(find_wheel_version(WheelLibrary::kCudnn9, {empty.path(), site.path()}), (LibraryVersion{9, 26, 0}));
  EXPECT_FALSE(find_wheel_version(WheelLibrary::kCudnn9, {empty.path(), "/nonexistent/site-packages"}));
}

TEST(WheelVersion, TwoVersionsOfOneWheelGiveTheNewest) {
  SitePackages site({"nvidia_cudnn_cu13-9.19.0.56.dist-info", "nvidia_cudnn_cu13-9.26.0.51.dist-info"});
  EXPECT_EQ(find_wheel_version(WheelLibrary::kCudnn9, {site.path()}), (LibraryVersion{9, 26, 0}));
}

TEST(WheelVersion, CudnnHeaderInTheWheelWhenNoMetadata) {
  SitePackages site({});
  site.write("nvidia/cudnn/include/cudnn_version.h",
             "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 21\n#define CUDNN_PATCHLEVEL 1\n");
  EXPECT_EQ(find_wheel_version(WheelLibrary::kCudnn9, {site.path()}), (LibraryVersion{9, 21, 1}));
}

TEST(WheelVersion, ConfigOverridesTheWheelAndTheHeadersAreTheLastResort) {
  SitePackages site({"nvidia_cudnn_cu13-9.26.0.51.dist-info"});
  const LibraryVersion headers{9, 19, 0};
  auto plain = config::Config::load({});
  ASSERT_TRUE(plain.is_ok());
  EXPECT_EQ(resolve_library_version(WheelLibrary::kCudnn9, headers, plain.value(), {site.path()}),
            (LibraryVersion{9, 26, 0}));
  EXPECT_EQ(resolve_library_version(WheelLibrary::kCudnn9, headers, plain.value(), {}), headers);
  auto set = config::Config::load({{"GENIE_FAKECUDA_CUDNN_VERSION", "9.30.2"}});
  ASSERT_TRUE(set.is_ok());
  EXPECT_EQ(resolve_library_version(WheelLibrary::kCudnn9, headers, set.value(), {site.path()}),
            (LibraryVersion{9, 30, 2}));
  // The cuBLAS key is separate, and an unparsable value is ignored.
  auto bad = config::Config::load({{"GENIE_FAKECUDA_CUBLAS_VERSION", "latest"}});
  ASSERT_TRUE(bad.is_ok());
  EXPECT_EQ(resolve_library_version(WheelLibrary::kCublas13, {13, 1, 0}, bad.value(), {}), (LibraryVersion{13, 1, 0}));
}

TEST(WheelVersion, LoadedSitePackagesFindsTheFolderOfALoadedLibrary) {
  // System: a shared library (a copy of zlib, which nothing here loads) inside <tmp>/site-packages/probe/, dlopen'ed
  // as Python loads torch/lib/libtorch_cuda.so. Expectation: that site-packages folder is listed, once.
  const char* zlib = "/usr/lib/x86_64-linux-gnu/libz.so.1";
  if (!fs::exists(zlib)) GTEST_SKIP() << "no " << zlib;
  SitePackages root({});
  const fs::path site = fs::path(root.path()) / "lib" / "python3.11" / "site-packages";
  fs::create_directories(site / "probe");
  fs::copy_file(zlib, site / "probe" / "libz.so.1");
  void* h = dlopen((site / "probe" / "libz.so.1").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  std::vector<std::string> dirs = loaded_site_packages();
  EXPECT_EQ(std::count(dirs.begin(), dirs.end(), site.string()), 1) << "found " << dirs.size() << " folders";
  dlclose(h);
}

}  // namespace
}  // namespace genie::fakecuda
