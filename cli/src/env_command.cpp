// SPDX-License-Identifier: Apache-2.0
// `genie env`: shell lines that make a program load Genie's CUDA runtime, driver and NCCL.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <vector>

#include "commands.hpp"
#include "genie/sched/launcher.hpp"

namespace genie::cli {

std::string library_dir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "lib";
  return (exe.parent_path().parent_path() / "lib").lexically_normal().string();
}

void register_env_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("env", "Print the environment lines that run a program on Genie's libraries");
  static int cuda_major = 13;
  cmd->add_option("--cuda", cuda_major, "CUDA major version of the program's runtime (12 or 13)")
      ->check(CLI::IsMember({12, 13}));
  cmd->callback([exit_code] {
    std::string lib = library_dir();
    std::vector<std::string> preload = {lib + "/libcudart.so." + std::to_string(cuda_major)};
    // cuBLAS and cuBLASLt of the same CUDA major (PyTorch wheels find NVIDIA's through DT_RPATH: only a preload
    // replaces them), then NCCL.
    for (const char* name : {"libcublas.so.", "libcublasLt.so."}) {
      std::string path = lib + "/" + name + std::to_string(cuda_major);
      if (std::filesystem::exists(path)) preload.push_back(path);
    }
    const bool cudnn = std::filesystem::exists(lib + "/libcudnn.so.9");
    if (cudnn) preload.push_back(lib + "/libcudnn.so.9");
    if (std::filesystem::exists(lib + "/libnccl.so.2")) preload.push_back(lib + "/libnccl.so.2");
    std::string joined;
    for (auto& p : preload) joined += (joined.empty() ? "" : ":") + p;
    joined = sched::with_sanitizer_runtime(joined);  // a sanitizer build's libraries need its runtime first
    std::cout << "export LD_LIBRARY_PATH=" << lib << "${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\n";
    std::cout << "export LD_PRELOAD=" << joined << "${LD_PRELOAD:+:$LD_PRELOAD}\n";
    // Genie's cuDNN has no engines: keep PyTorch's SDPA off cuDNN attention (docs/costmodel.md "cuDNN").
    if (cudnn) std::cout << "export TORCH_CUDNN_SDPA_DEPRIORITIZED=${TORCH_CUDNN_SDPA_DEPRIORITIZED:-1}\n";
    // NVTX ranges recorded for the report (docs/report.md "Ranges"), unless another tool is set.
    if (std::filesystem::exists(lib + "/libgenie_nvtx.so"))
      std::cout << "export NVTX_INJECTION64_PATH=${NVTX_INJECTION64_PATH:-" << lib << "/libgenie_nvtx.so}\n";
    *exit_code = 0;
  });
}

}  // namespace genie::cli
