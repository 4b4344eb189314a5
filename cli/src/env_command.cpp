// SPDX-License-Identifier: Apache-2.0
// `genie env`: shell lines that make a program load Genie's CUDA runtime, driver, NCCL and NVML.
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
    // The CUDA runtime, cuBLAS/cuBLASLt of the same major, cuDNN, NCCL and NVML: the list genie run preloads.
    const std::vector<std::string> preload = sched::preload_libraries(lib, cuda_major);
    const bool cudnn = std::filesystem::exists(lib + "/libcudnn.so.9");
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
    // PyTorch: Genie's sitecustomize (small CUDA tensors keep their values; docs/pytorch.md "Small values").
    for (const auto& [k, v] : sched::python_environment(lib)) {
      if (k == "PYTHONPATH") std::cout << "export PYTHONPATH=" << v << "${PYTHONPATH:+:$PYTHONPATH}\n";
      else std::cout << "export " << k << "=" << v << "\n";
    }
    *exit_code = 0;
  });
}

}  // namespace genie::cli
