// SPDX-License-Identifier: Apache-2.0
// Example: device discovery as nccl-tests and PyTorch do it; properties and attributes must agree.
#include <cstring>

#include "check.cuh"

int main(int argc, char** argv) {
  int count = 0;
  CHECK_CUDA(cudaGetDeviceCount(&count));
  int expected = argc > 1 ? std::atoi(argv[1]) : 8;
  EXPECT_EQ_INT("device count", expected, count);
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp p;
    CHECK_CUDA(cudaGetDeviceProperties(&p, d));
    int major = 0, minor = 0, sms = 0;
    CHECK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d));
    CHECK_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, d));
    CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d));
    char bus[32];
    CHECK_CUDA(cudaDeviceGetPCIBusId(bus, sizeof(bus), d));
    std::printf("device %d: %s cc %d.%d sms %d mem %zu pci %s [%04x:%02x:%02x]\n", d, p.name, p.major, p.minor,
                p.multiProcessorCount, p.totalGlobalMem, bus, p.pciDomainID, p.pciBusID, p.pciDeviceID);
    EXPECT_EQ_INT("cc major agrees", p.major, major);
    EXPECT_EQ_INT("cc minor agrees", p.minor, minor);
    EXPECT_EQ_INT("sm count agrees", p.multiProcessorCount, sms);
    int back = -1;
    CHECK_CUDA(cudaDeviceGetByPCIBusId(&back, bus));
    EXPECT_EQ_INT("pci bus id round trip", d, back);
  }
  size_t free_b = 0, total = 0;
  CHECK_CUDA(cudaSetDevice(0));
  CHECK_CUDA(cudaMemGetInfo(&free_b, &total));
  cudaDeviceProp p0;
  CHECK_CUDA(cudaGetDeviceProperties(&p0, 0));
  EXPECT_EQ_INT("memgetinfo total == totalGlobalMem", p0.totalGlobalMem, total);
  EXPECT_ERR("invalid ordinal", cudaErrorInvalidDevice, cudaSetDevice(count));
  // Driver entry points (PyTorch's DriverAPI resolves its driver functions this way).
  using DeviceGetCount = int (*)(int*);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q;
  CHECK_CUDA(cudaGetDriverEntryPointByVersion("cuDeviceGetCount", &fn, 12000, cudaEnableDefault, &q));
  EXPECT_EQ_INT("entry point found", cudaDriverEntryPointSuccess, q);
  int via_driver = -1;
  if (fn) reinterpret_cast<DeviceGetCount>(fn)(&via_driver);
  EXPECT_EQ_INT("cuDeviceGetCount through the entry point", count, via_driver);
  fn = reinterpret_cast<void*>(1);
  CHECK_CUDA(cudaGetDriverEntryPointByVersion("cuNoSuchFunction", &fn, 12000, cudaEnableDefault, &q));
  EXPECT_EQ_INT("unknown entry point", cudaDriverEntryPointSymbolNotFound, q);
  int rt = 0, drv = 0;
  CHECK_CUDA(cudaRuntimeGetVersion(&rt));
  CHECK_CUDA(cudaDriverGetVersion(&drv));
  std::printf("runtime %d driver %d\n", rt, drv);
  return finish("device_query");
}
