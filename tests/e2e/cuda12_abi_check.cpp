// SPDX-License-Identifier: Apache-2.0
// A CUDA 12 client's view of libcudart.so.12: symbols carry the libcudart.so.12 version, and
// cudaGetDeviceProperties_v2 writes the 12.x cudaDeviceProp layout (checked field by field against
// the CUDA 13 answer of libcudart.so.13 for the same device).
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "abi/cuda12_device_prop.hpp"

using genie::fakecuda::abi::CudaDevicePropV12;

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  std::string dir = argv[1];
  void* h12 = dlopen((dir + "/libcudart.so.12").c_str(), RTLD_NOW | RTLD_LOCAL);
  void* h13 = dlopen((dir + "/libcudart.so.13").c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h12 || !h13) { std::printf("FAIL dlopen: %s\n", dlerror()); return 1; }
  using GetProp12 = cudaError_t (*)(void*, int);
  using GetProp13 = cudaError_t (*)(cudaDeviceProp*, int);
  auto p12 = reinterpret_cast<GetProp12>(dlvsym(h12, "cudaGetDeviceProperties_v2", "libcudart.so.12"));
  auto p13 = reinterpret_cast<GetProp13>(dlvsym(h13, "cudaGetDeviceProperties", "libcudart.so.13"));
  auto wrong = dlvsym(h12, "cudaGetDeviceProperties_v2", "libcudart.so.13");
  int failures = 0;
  auto expect = [&](const char* what, long long want, long long got) {
    std::printf("%s %s: Expectation %lld / Actual %lld\n", want == got ? "ok  " : "FAIL", what, want, got);
    failures += want != got;
  };
  expect("cudaGetDeviceProperties_v2@libcudart.so.12 found", 1, p12 != nullptr);
  expect("cudaGetDeviceProperties@libcudart.so.13 found", 1, p13 != nullptr);
  expect("no libcudart.so.13 version in the 12 library", 1, wrong == nullptr);
  if (!p12 || !p13) return 1;
  // Guard bytes after the struct catch writes past the 12.x size.
  unsigned char buf[sizeof(CudaDevicePropV12) + 64];
  std::memset(buf, 0xee, sizeof(buf));
  cudaDeviceProp p;
  expect("v2 call", 0, p12(buf, 1));
  expect("13 call", 0, p13(&p, 1));
  CudaDevicePropV12 v12;
  std::memcpy(&v12, buf, sizeof(v12));
  expect("name", 0, std::strcmp(v12.name, p.name));
  expect("totalGlobalMem", (long long)p.totalGlobalMem, (long long)v12.totalGlobalMem);
  expect("major", p.major, v12.major);
  expect("minor", p.minor, v12.minor);
  expect("multiProcessorCount", p.multiProcessorCount, v12.multiProcessorCount);
  expect("pciBusID", p.pciBusID, v12.pciBusID);
  expect("maxThreadsPerMultiProcessor", p.maxThreadsPerMultiProcessor, v12.maxThreadsPerMultiProcessor);
  expect("clockRate (12.x only) is the SM clock in kHz", 1, v12.clockRate > 1000000);
  bool guard_intact = true;
  for (size_t i = sizeof(CudaDevicePropV12); i < sizeof(buf); ++i) guard_intact &= buf[i] == 0xee;
  expect("nothing written past the 12.x struct", 1, guard_intact);
  int v = 0;
  auto rtv = reinterpret_cast<cudaError_t (*)(int*)>(dlvsym(h12, "cudaRuntimeGetVersion", "libcudart.so.12"));
  rtv(&v);
  expect("runtime version is 12.x", 12, v / 1000);
  expect("runtime version of libcudart.so.12 (12.8)", 12080, v);
  // One driver (CUDA 13.2) serves both runtimes; the 13 runtime is 13.2.
  using GetVersion = cudaError_t (*)(int*);
  auto rt13 = reinterpret_cast<GetVersion>(dlvsym(h13, "cudaRuntimeGetVersion", "libcudart.so.13"));
  auto drv12 = reinterpret_cast<GetVersion>(dlvsym(h12, "cudaDriverGetVersion", "libcudart.so.12"));
  auto drv13 = reinterpret_cast<GetVersion>(dlvsym(h13, "cudaDriverGetVersion", "libcudart.so.13"));
  int v13 = 0, d12 = 0, d13 = 0;
  rt13(&v13);
  drv12(&d12);
  drv13(&d13);
  expect("runtime version of libcudart.so.13 (13.2)", 13020, v13);
  expect("driver version seen by the 12 runtime", 13020, d12);
  expect("driver version seen by the 13 runtime", 13020, d13);
  // cudaGetDriverEntryPoint resolves for the runtime's own version: cuCtxGetDevice is the CUDA 12 function for the
  // 12 runtime, cuCtxGetDevice_v2 (CUDA 13.0's new signature) for the 13 runtime.
  using EntryPoint = cudaError_t (*)(const char*, void**, unsigned long long, cudaDriverEntryPointQueryResult*);
  auto ep12 = reinterpret_cast<EntryPoint>(dlvsym(h12, "cudaGetDriverEntryPoint", "libcudart.so.12"));
  auto ep13 = reinterpret_cast<EntryPoint>(dlvsym(h13, "cudaGetDriverEntryPoint", "libcudart.so.13"));
  void* f12 = nullptr;
  void* f13 = nullptr;
  cudaDriverEntryPointQueryResult q12{}, q13{};
  ep12("cuCtxGetDevice", &f12, 0, &q12);
  ep13("cuCtxGetDevice", &f13, 0, &q13);
  expect("cuCtxGetDevice found by both", 1, q12 == cudaDriverEntryPointSuccess && q13 == cudaDriverEntryPointSuccess);
  expect("the 12 runtime gets the CUDA 12 cuCtxGetDevice", 1, f12 != nullptr && f13 != nullptr && f12 != f13);
  // CUDA 12 ABI forms of the graph calls torch 2.15 imports (12.3: _v2 names add edge data).
  for (const char* name : {"cudaGraphAddNode", "cudaGraphAddNode_v2", "cudaStreamUpdateCaptureDependencies",
                           "cudaStreamUpdateCaptureDependencies_v2", "cudaStreamBeginCaptureToGraph"})
    expect(name, 1, dlvsym(h12, name, "libcudart.so.12") != nullptr);
  expect("no _v2 graph names in the 13 library", 1, dlvsym(h13, "cudaGraphAddNode_v2", "libcudart.so.13") == nullptr);
  std::printf("cuda12_abi_check: %d failed\n", failures);
  return failures == 0 ? 0 : 1;
}
