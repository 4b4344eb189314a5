// SPDX-License-Identifier: Apache-2.0
// library_load <fatbin> <cubin>: device code loaded at run time through the runtime's library API, as torch 2.15
// loads its kernels (cudaLibraryLoadData): kernels counted, enumerated, found by name, launched with
// cudaLaunchKernel and cudaLaunchKernelExC and timed with events; an initialised __device__ variable read back;
// unload invalidates the kernels; the same from a cubin file (cudaLibraryLoadFromFile). Run with
// GENIE_FAKECUDA_COST_TABLE=tests/e2e/data/library_table.json (lib_scale 2 ms, lib_count 0.5 ms).
#include <cuda_runtime.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "check.cuh"

namespace {

std::vector<char> read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}


}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: library_load <fatbin> <cubin>\n");
    return 2;
  }
  std::vector<char> fatbin = read_file(argv[1]);
  EXPECT_EQ_INT("fat binary read", 1, fatbin.size() > 64);
  cudaLibrary_t lib = nullptr;
  CHECK_CUDA(cudaLibraryLoadData(&lib, fatbin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));

  unsigned count = 0;
  CHECK_CUDA(cudaLibraryGetKernelCount(&count, lib));
  EXPECT_EQ_INT("kernels in the fat binary (the __device__ function is none)", 2, count);
  cudaKernel_t all[2] = {nullptr, nullptr};
  CHECK_CUDA(cudaLibraryEnumerateKernels(all, 2, lib));
  EXPECT_EQ_INT("enumerated kernels are two handles", 1, all[0] != nullptr && all[1] != nullptr && all[0] != all[1]);

  cudaKernel_t scale = nullptr, counter_kernel = nullptr;
  CHECK_CUDA(cudaLibraryGetKernel(&scale, lib, "lib_scale"));
  CHECK_CUDA(cudaLibraryGetKernel(&counter_kernel, lib, "lib_count"));
  EXPECT_EQ_INT("GetKernel answers an enumerated handle", 1,
                (scale == all[0] || scale == all[1]) && (counter_kernel == all[0] || counter_kernel == all[1]));
  cudaKernel_t none = nullptr;
  EXPECT_ERR("a __device__ function is no kernel", cudaErrorSymbolNotFound,
             cudaLibraryGetKernel(&none, lib, "lib_twice"));
  EXPECT_ERR("an unknown name", cudaErrorSymbolNotFound, cudaLibraryGetKernel(&none, lib, "no_such_kernel"));
  cudaGetLastError();

  EXPECT_ERR("per-device attribute", cudaSuccess,
             cudaKernelSetAttributeForDevice(scale, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 << 10, 0));
  EXPECT_ERR("per-device attribute on no device", cudaErrorInvalidDevice,
             cudaKernelSetAttributeForDevice(scale, cudaFuncAttributeMaxDynamicSharedMemorySize, 0, 4096));
  cudaGetLastError();

  // Launches of library kernels are timed by the cost model like any kernel: 2 ms + 0.5 ms from the cost table.
  const int n = 1 << 20;
  float *in = nullptr, *out = nullptr;
  CHECK_CUDA(cudaMalloc(&in, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&out, n * sizeof(float)));
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int nn = n;
  void* scale_args[] = {&out, &in, &nn};
  int threads = 32;
  void* count_args[] = {&threads};
  float ms = event_timed_ms(s, [&] {
    CHECK_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(scale), dim3(n / 256), dim3(256), scale_args, 0, s));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(1);
    cfg.blockDim = dim3(32);
    cfg.stream = s;
    CHECK_CUDA(cudaLaunchKernelExC(&cfg, reinterpret_cast<const void*>(counter_kernel), count_args));
  });
  if (on_genie())
    EXPECT_NEAR_DBL("modelled time of lib_scale + lib_count (ms)", 2.5, ms, 0.05);
  else
    SKIP_ON_REAL_GPU("modelled time", "the cost table's times are Genie's");

  // The variable starts with the image's initial bytes (read from the fat binary's cubin).
  int* dvar = nullptr;
  size_t bytes = 0;
  CHECK_CUDA(cudaLibraryGetGlobal(reinterpret_cast<void**>(&dvar), &bytes, lib, "lib_counter"));
  EXPECT_EQ_INT("size of lib_counter", 16, bytes);
  int host[4] = {};
  CHECK_CUDA(cudaMemcpy(host, dvar, sizeof(host), cudaMemcpyDeviceToHost));
  if (on_genie())
    EXPECT_EQ_INT("lib_counter as the image initialises it (kernels do not run here)", 7 * 1000 + 10,
                  host[0] * 1000 + host[3]);
  EXPECT_ERR("unknown variable", cudaErrorSymbolNotFound,
             cudaLibraryGetGlobal(reinterpret_cast<void**>(&dvar), &bytes, lib, "no_such_variable"));
  cudaGetLastError();
  if (on_genie()) {
    // All memory is host memory here: a variable serves as managed memory too (a GPU needs __managed__).
    void* managed = nullptr;
    CHECK_CUDA(cudaLibraryGetManaged(&managed, &bytes, lib, "lib_counter"));
    EXPECT_EQ_INT("GetManaged answers the same variable", 1, managed == dvar);
    void* fn = nullptr;
    EXPECT_ERR("no unified functions (device code does not run)", cudaErrorSymbolNotFound,
               cudaLibraryGetUnifiedFunction(&fn, lib, "lib_twice"));
    cudaGetLastError();
  }

  CHECK_CUDA(cudaLibraryUnload(lib));
  if (on_genie()) {
    EXPECT_ERR("a kernel of an unloaded library", cudaErrorInvalidDeviceFunction,
               cudaLaunchKernel(reinterpret_cast<const void*>(scale), dim3(1), dim3(1), scale_args, 0, s));
    EXPECT_ERR("unload twice", cudaErrorInvalidResourceHandle, cudaLibraryUnload(lib));
    cudaGetLastError();
  }

  // The same kernels from a cubin file.
  cudaLibrary_t from_file = nullptr;
  CHECK_CUDA(cudaLibraryLoadFromFile(&from_file, argv[2], nullptr, nullptr, 0, nullptr, nullptr, 0));
  CHECK_CUDA(cudaLibraryGetKernelCount(&count, from_file));
  EXPECT_EQ_INT("kernels in the cubin", 2, count);
  cudaKernel_t k = nullptr;
  CHECK_CUDA(cudaLibraryGetKernel(&k, from_file, "lib_count"));
  ms = event_timed_ms(
      s, [&] { CHECK_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(k), dim3(1), dim3(32), count_args, 0, s)); });
  if (on_genie()) EXPECT_NEAR_DBL("modelled time of lib_count from the cubin (ms)", 0.5, ms, 0.05);
  CHECK_CUDA(cudaLibraryUnload(from_file));

  cudaLibrary_t bad = nullptr;
  EXPECT_ERR("text that is no code", cudaErrorInvalidPtx,
             cudaLibraryLoadData(&bad, "int main() {}", nullptr, nullptr, 0, nullptr, nullptr, 0));
  EXPECT_ERR("a missing file", cudaErrorFileNotFound,
             cudaLibraryLoadFromFile(&bad, "/nonexistent/library.cubin", nullptr, nullptr, 0, nullptr, nullptr, 0));
  cudaGetLastError();
  CHECK_CUDA(cudaFree(in));
  CHECK_CUDA(cudaFree(out));
  CHECK_CUDA(cudaStreamDestroy(s));
  return finish("library_load");
}
