// SPDX-License-Identifier: Apache-2.0
// Tests of the emulated CUDA driver API (genie::fakecuda::drv) and of its
// entry-point table.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <driver_types.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "genie/common/log.hpp"
#include "genie/fakecuda/device_spec.hpp"
#include "genie/fakecuda/driver.hpp"
#include "genie/fakecuda/driver_api.hpp"
#include "genie/fakecuda/runtime.hpp"

namespace {

namespace drv = genie::fakecuda::drv;
using genie::fakecuda::Runtime;

constexpr size_t kGranularity = size_t{2} << 20;  // what cuMemGetAllocationGranularity reports

// CUdevice_attribute and cudaDeviceAttr share values: the driver forwards to
// device_attribute() on that basis.
static_assert(static_cast<int>(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK) == cudaDevAttrMaxThreadsPerBlock);
static_assert(static_cast<int>(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) == cudaDevAttrMultiProcessorCount);
static_assert(static_cast<int>(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) == cudaDevAttrComputeCapabilityMajor);
static_assert(static_cast<int>(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) == cudaDevAttrComputeCapabilityMinor);
static_assert(static_cast<int>(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN) ==
              cudaDevAttrMaxSharedMemoryPerBlockOptin);
static_assert(static_cast<int>(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE) == cudaDevAttrL2CacheSize);
static_assert(static_cast<int>(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID) == cudaDevAttrPciBusId);
static_assert(static_cast<int>(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING) == cudaDevAttrUnifiedAddressing);
static_assert(static_cast<int>(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) == cudaDevAttrMemoryPoolsSupported);
static_assert(static_cast<int>(CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH) == cudaDevAttrClusterLaunch);
static_assert(static_cast<int>(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR) ==
              cudaDevAttrMaxBlocksPerMultiprocessor);
static_assert(static_cast<int>(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED) == cudaDevAttrGPUDirectRDMASupported);

// A PTX module with one entry, `name`, taking one pointer.
std::string one_entry_ptx(const std::string& name) {
  return "//\n.version 8.0\n.target sm_90\n.address_size 64\n.visible .entry " + name +
         "(\n\t.param .u64 p\n)\n{\n\tret;\n}\n";
}

Runtime& rt() {
  EXPECT_EQ(drv::cuInit(0), CUDA_SUCCESS);
  Runtime* r = Runtime::instance();
  if (r == nullptr) std::abort();  // the default configuration (8 x h200) always starts
  return *r;
}

CUdeviceptr dptr(const void* p) { return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p)); }
void* ptr(CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }

CUmemAllocationProp device_prop(int device, bool shareable) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.requestedHandleTypes = shareable ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
  return prop;
}

/// What a process that never called cuInit (nor the runtime) sees; true when
/// every answer is right.
bool calls_before_cu_init_behave() {
  int count = -1;
  int version = 0;
  CUdeviceptr p = 0;
  CUcontext ctx = nullptr;
  void* fn = nullptr;
  CUdriverProcAddressQueryResult st{};
  return drv::cuDeviceGetCount(&count) == CUDA_ERROR_NOT_INITIALIZED &&
         drv::cuMemAlloc_v2(&p, 1024) == CUDA_ERROR_NOT_INITIALIZED &&
         drv::cuCtxGetCurrent(&ctx) == CUDA_ERROR_NOT_INITIALIZED &&
         // Answered before cuInit, as by the real driver (cudart finds cuInit
         // through cuGetProcAddress).
         drv::cuDriverGetVersion(&version) == CUDA_SUCCESS && version == 13020 &&  // CUDA 13.2 (driver.hpp)
         drv::cuGetProcAddress_v2("cuInit", &fn, 13000, 0, &st) == CUDA_SUCCESS && fn != nullptr &&
         drv::cuInit(1) == CUDA_ERROR_INVALID_VALUE && drv::cuInit(0) == CUDA_SUCCESS &&
         drv::cuDeviceGetCount(&count) == CUDA_SUCCESS && count == 8;
}

// Runs in a fresh process (the threadsafe death-test style re-executes the
// binary for this test only), so nothing has initialised the driver yet
// whatever ran before in this one.
TEST(DriverApi, CallsBeforeCuInitAnswerNotInitialized) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::exit(calls_before_cu_init_behave() ? 0 : 1), ::testing::ExitedWithCode(0), "");
}

TEST(DriverApi, DevicesAndAttributesMatchTheRuntime) {
  Runtime& r = rt();
  int count = 0;
  ASSERT_EQ(drv::cuDeviceGetCount(&count), CUDA_SUCCESS);
  EXPECT_EQ(count, r.device_count());
  const genie::fakecuda::DeviceSpec& spec = r.device(0).spec();

  CUdevice dev = -1;
  ASSERT_EQ(drv::cuDeviceGet(&dev, 3), CUDA_SUCCESS);
  EXPECT_EQ(dev, 3);
  EXPECT_EQ(drv::cuDeviceGet(&dev, count), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(drv::cuDeviceGet(nullptr, 0), CUDA_ERROR_INVALID_VALUE);

  char name[128];
  ASSERT_EQ(drv::cuDeviceGetName(name, sizeof(name), 0), CUDA_SUCCESS);
  EXPECT_EQ(std::string(name), spec.name);
  char tiny[6];
  ASSERT_EQ(drv::cuDeviceGetName(tiny, sizeof(tiny), 0),
            CUDA_SUCCESS);  // truncated, terminated
  EXPECT_EQ(std::string(tiny), spec.name.substr(0, 5));

  size_t total = 0;
  ASSERT_EQ(drv::cuDeviceTotalMem_v2(&total, 0), CUDA_SUCCESS);
  EXPECT_EQ(total, spec.memory_bytes);

  // Every attribute both layers answer agrees, except the driver-only ones
  // listed in driver_device.cpp.
  int answered = 0;
  for (int a = 1; a < CU_DEVICE_ATTRIBUTE_MAX; ++a) {
    int v = 0;
    auto rv = genie::fakecuda::device_attribute(spec, 0, a);
    if (drv::cuDeviceGetAttribute(&v, static_cast<CUdevice_attribute>(a), 0) != CUDA_SUCCESS) {
      EXPECT_FALSE(rv.is_ok()) << "attribute " << a << " is answered by the runtime but not by the driver";
      continue;
    }
    ++answered;
    bool driver_only = a == CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS ||
                       a == CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR ||
                       a == CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED ||
                       a == CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS;
    if (rv.is_ok() && !driver_only) {
      EXPECT_EQ(v, rv.value()) << "attribute " << a;
    }
  }
  EXPECT_GT(answered, 130);
  int v = 0;
  ASSERT_EQ(drv::cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0), CUDA_SUCCESS);
  EXPECT_EQ(v, spec.sm_count);
  ASSERT_EQ(drv::cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0), CUDA_SUCCESS);
  EXPECT_EQ(v, 1);
  ASSERT_EQ(drv::cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 0),
            CUDA_SUCCESS);
  EXPECT_EQ(v, 1);
  EXPECT_EQ(drv::cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(drv::cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, -1), CUDA_ERROR_INVALID_DEVICE);

  // UUIDs: the runtime's (cudaDeviceProp::uuid), distinct per device.
  CUuuid u0{}, u1{};
  ASSERT_EQ(drv::cuDeviceGetUuid_v2(&u0, 0), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuDeviceGetUuid_v2(&u1, 1), CUDA_SUCCESS);
  auto prop = std::make_unique<cudaDeviceProp>();
  genie::fakecuda::fill_device_prop(spec, 0, prop.get());
  EXPECT_EQ(std::memcmp(&u0, &prop->uuid, sizeof(u0)), 0);
  EXPECT_NE(std::memcmp(&u0, &u1, sizeof(u0)), 0);

  const char* s = nullptr;
  ASSERT_EQ(drv::cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &s), CUDA_SUCCESS);
  EXPECT_STREQ(s, "out of memory");
  ASSERT_EQ(drv::cuGetErrorName(CUDA_ERROR_INVALID_DEVICE, &s), CUDA_SUCCESS);
  EXPECT_STREQ(s, "CUDA_ERROR_INVALID_DEVICE");
  EXPECT_EQ(drv::cuGetErrorName(static_cast<CUresult>(12345), &s), CUDA_ERROR_INVALID_VALUE);
}

TEST(DriverApi, PrimaryContextsFollowTheRuntimeDevice) {
  Runtime& r = rt();
  r.set_current_device(0);
  CUcontext cur = nullptr, c2 = nullptr, popped = nullptr;
  ASSERT_EQ(drv::cuCtxGetCurrent(&cur), CUDA_SUCCESS);
  ASSERT_NE(cur,
            nullptr);  // the runtime's device has its primary context current
  CUdevice d = -1;
  ASSERT_EQ(drv::cuCtxGetDevice(&d), CUDA_SUCCESS);
  EXPECT_EQ(d, 0);

  // A reset context of an unused device is inactive (reset also drops earlier
  // retains of this process).
  ASSERT_EQ(drv::cuDevicePrimaryCtxReset_v2(5), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuDevicePrimaryCtxSetFlags_v2(5, 0), CUDA_SUCCESS);
  unsigned flags = 99;
  int active = -1;
  ASSERT_EQ(drv::cuDevicePrimaryCtxGetState(5, &flags, &active), CUDA_SUCCESS);
  EXPECT_EQ(flags, 0u);
  EXPECT_EQ(active, 0);
  ASSERT_EQ(drv::cuDevicePrimaryCtxRetain(&c2, 5), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuDevicePrimaryCtxGetState(5, &flags, &active), CUDA_SUCCESS);
  EXPECT_EQ(active, 1);
  ASSERT_EQ(drv::cuDevicePrimaryCtxSetFlags_v2(5, CU_CTX_SCHED_BLOCKING_SYNC), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuDevicePrimaryCtxGetState(5, &flags, &active), CUDA_SUCCESS);
  EXPECT_EQ(flags, static_cast<unsigned>(CU_CTX_SCHED_BLOCKING_SYNC));
  EXPECT_EQ(drv::cuDevicePrimaryCtxSetFlags_v2(5, 0x10000), CUDA_ERROR_INVALID_VALUE);

  // Making a context current sets the runtime's device; popping restores the
  // previous one.
  ASSERT_EQ(drv::cuCtxPushCurrent_v2(c2), CUDA_SUCCESS);
  EXPECT_EQ(r.current_device(), 5);
  ASSERT_EQ(drv::cuCtxGetDevice_v2(&d, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(d, 5);
  ASSERT_EQ(drv::cuCtxPopCurrent_v2(&popped), CUDA_SUCCESS);
  EXPECT_EQ(popped, c2);
  EXPECT_EQ(r.current_device(), 0);
  ASSERT_EQ(drv::cuCtxSetCurrent(c2), CUDA_SUCCESS);
  EXPECT_EQ(r.current_device(), 5);
  ASSERT_EQ(drv::cuCtxSynchronize_v2(c2), CUDA_SUCCESS);
  EXPECT_EQ(drv::cuCtxSetCurrent(reinterpret_cast<CUcontext>(&d)), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(drv::cuCtxDestroy_v2(c2),
            CUDA_ERROR_INVALID_CONTEXT);  // primary contexts are not destroyed

  // Popping the last context leaves the thread without one.
  ASSERT_EQ(drv::cuCtxPopCurrent_v2(&popped), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuCtxGetCurrent(&cur), CUDA_SUCCESS);
  EXPECT_EQ(cur, nullptr);
  CUdeviceptr p = 0;
  EXPECT_EQ(drv::cuMemAlloc_v2(&p, 64), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(drv::cuCtxPopCurrent_v2(&popped), CUDA_ERROR_INVALID_CONTEXT);
  ASSERT_EQ(drv::cuCtxSetCurrent(c2), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuDevicePrimaryCtxRelease_v2(5), CUDA_SUCCESS);
  EXPECT_EQ(drv::cuDevicePrimaryCtxRelease_v2(5),
            CUDA_ERROR_INVALID_CONTEXT);  // not retained any more
  r.set_current_device(0);                // cudaSetDevice: the top of the stack follows
  ASSERT_EQ(drv::cuCtxGetDevice(&d), CUDA_SUCCESS);
  EXPECT_EQ(d, 0);
}

TEST(DriverApi, MemoryIsTheRuntimesMemory) {
  Runtime& r = rt();
  r.set_current_device(2);
  uint64_t used_before = r.device(2).used_bytes();
  size_t free0 = 0, total = 0;
  ASSERT_EQ(drv::cuMemGetInfo_v2(&free0, &total), CUDA_SUCCESS);
  EXPECT_EQ(total, r.device(2).spec().memory_bytes);

  constexpr size_t kBytes = 1 << 20;
  CUdeviceptr d = 0;
  ASSERT_EQ(drv::cuMemAlloc_v2(&d, kBytes), CUDA_SUCCESS);
  EXPECT_GE(r.device(2).used_bytes(), used_before + kBytes);
  auto a = r.memory().find(ptr(d), kBytes);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->device, 2);
  size_t free1 = 0;
  ASSERT_EQ(drv::cuMemGetInfo_v2(&free1, &total), CUDA_SUCCESS);
  EXPECT_EQ(free0 - free1, r.device(2).used_bytes() - used_before);
  EXPECT_EQ(drv::cuMemAlloc_v2(&d, 0), CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr big = 0;
  EXPECT_EQ(drv::cuMemAlloc_v2(&big, total + 1), CUDA_ERROR_OUT_OF_MEMORY);

  // Copies, memsets and stream memory ops, on the legacy stream and on a
  // runtime stream (a CUstream).
  std::vector<uint32_t> in(kBytes / 4), out(kBytes / 4);
  std::iota(in.begin(), in.end(), 7u);
  ASSERT_EQ(drv::cuMemcpyHtoD_v2(d, in.data(), kBytes), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuMemcpyDtoH_v2(out.data(), d, kBytes), CUDA_SUCCESS);
  EXPECT_EQ(in, out);
  auto* stream = reinterpret_cast<CUstream>(r.create_stream(2, 0, 0));
  ASSERT_EQ(drv::cuMemsetD32Async(d + 16, 0xabcdef01u, 4, stream), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuStreamWriteValue32_v2(stream, d + 32, 42u, 0), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuMemcpyDtoHAsync_v2(out.data(), d, 64, stream), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_EQ(out[4], 0xabcdef01u);
  EXPECT_EQ(out[7], 0xabcdef01u);
  EXPECT_EQ(out[8], 42u);
  EXPECT_EQ(out[9], in[9]);
  EXPECT_EQ(drv::cuMemsetD32Async(d + 2, 1u, 4, stream),
            CUDA_ERROR_INVALID_VALUE);  // misaligned
  EXPECT_EQ(drv::cuStreamWriteValue32_v2(stream, dptr(out.data()), 1u, 0),
            CUDA_ERROR_INVALID_VALUE);  // not CUDA memory
  EXPECT_EQ(drv::cuMemcpyHtoD_v2(d + kBytes - 8, in.data(), 16),
            CUDA_ERROR_INVALID_VALUE);  // overruns
  EXPECT_EQ(drv::cuMemcpyHtoDAsync_v2(d, in.data(), 16, reinterpret_cast<CUstream>(&d)), CUDA_ERROR_INVALID_HANDLE);
  ASSERT_EQ(drv::cuMemsetD8_v2(d, 0x5a, kBytes), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuMemcpyDtoH_v2(out.data(), d + 4, 4), CUDA_SUCCESS);
  EXPECT_EQ(out[0], 0x5a5a5a5au);

  // Pointer queries.
  CUdeviceptr base = 0;
  size_t size = 0;
  ASSERT_EQ(drv::cuMemGetAddressRange_v2(&base, &size, d + 100), CUDA_SUCCESS);
  EXPECT_EQ(base, d);
  EXPECT_EQ(size, kBytes);
  CUmemorytype type{};
  ASSERT_EQ(drv::cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d + 8), CUDA_SUCCESS);
  EXPECT_EQ(type, CU_MEMORYTYPE_DEVICE);
  int ordinal = -1;
  ASSERT_EQ(drv::cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, d), CUDA_SUCCESS);
  EXPECT_EQ(ordinal, 2);
  CUdeviceptr devp = 0;
  ASSERT_EQ(drv::cuPointerGetAttribute(&devp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, d + 8), CUDA_SUCCESS);
  EXPECT_EQ(devp, d + 8);
  EXPECT_EQ(drv::cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dptr(out.data())),
            CUDA_ERROR_INVALID_VALUE);

  ASSERT_EQ(drv::cuStreamDestroy_v2(stream), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuMemFree_v2(d), CUDA_SUCCESS);
  EXPECT_EQ(drv::cuMemFree_v2(d), CUDA_ERROR_INVALID_VALUE);  // double free
  EXPECT_EQ(r.device(2).used_bytes(), used_before);
  r.set_current_device(0);
}

TEST(DriverApi, VirtualMemoryRoundTripAliasesOnePhysicalAllocation) {
  Runtime& r = rt();
  constexpr int kDev = 1;
  CUmemAllocationProp prop = device_prop(kDev, true);
  size_t gran = 0;
  ASSERT_EQ(drv::cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED), CUDA_SUCCESS);
  ASSERT_EQ(gran, kGranularity);
  uint64_t used_before = r.device(kDev).used_bytes();

  // Reserve 4 granules; map A at 0 and 2 (two views of one allocation), B at 1.
  CUdeviceptr va = 0;
  ASSERT_EQ(drv::cuMemAddressReserve(&va, 4 * gran, 0, 0, 0), CUDA_SUCCESS);
  EXPECT_EQ(va % gran, 0u);
  CUmemGenericAllocationHandle ha = 0, hb = 0;
  ASSERT_EQ(drv::cuMemCreate(&ha, gran, &prop, 0), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuMemCreate(&hb, gran, &prop, 0), CUDA_SUCCESS);
  EXPECT_EQ(r.device(kDev).used_bytes(),
            used_before + 2 * gran);  // physical memory is charged
  ASSERT_EQ(drv::cuMemMap(va, gran, 0, ha, 0), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuMemMap(va + gran, gran, 0, hb, 0), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuMemMap(va + 2 * gran, gran, 0, ha, 0), CUDA_SUCCESS);
  EXPECT_EQ(drv::cuMemMap(va, gran, 0, hb, 0),
            CUDA_ERROR_INVALID_VALUE);                 // already mapped
  EXPECT_FALSE(r.memory().find(ptr(va)).has_value());  // no access yet
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  ASSERT_EQ(drv::cuMemSetAccess(va, 3 * gran, &access, 1), CUDA_SUCCESS);
  EXPECT_EQ(drv::cuMemSetAccess(va, 4 * gran, &access, 1),
            CUDA_ERROR_INVALID_VALUE);  // granule 3 is unmapped

  // Written through the first view of A, read through the second.
  std::vector<uint32_t> in(gran / 4), out(gran / 4, 0);
  std::iota(in.begin(), in.end(), 1u);
  ASSERT_EQ(drv::cuMemcpyHtoD_v2(va, in.data(), gran), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuMemcpyDtoH_v2(out.data(), va + 2 * gran, gran), CUDA_SUCCESS);
  EXPECT_EQ(in, out);
  // A copy spanning A and B is one valid device range (the mappings are
  // registered as one run).
  ASSERT_EQ(drv::cuMemcpyDtoD_v2(va + gran - 64, va + 128, 256), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuMemcpyDtoH_v2(out.data(), va + gran - 64, 256), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(out.data(), in.data() + 32, 256), 0);
  // That copy's first 64 bytes landed at the end of A: the second view of A
  // shows them.
  std::memcpy(reinterpret_cast<char*>(in.data()) + gran - 64, reinterpret_cast<char*>(in.data()) + 128, 64);
  ASSERT_EQ(drv::cuMemcpyDtoH_v2(out.data(), va + 2 * gran, gran), CUDA_SUCCESS);
  EXPECT_EQ(in, out);
  CUdeviceptr base = 0;
  size_t size = 0;
  ASSERT_EQ(drv::cuMemGetAddressRange_v2(&base, &size, va + gran + 5), CUDA_SUCCESS);
  EXPECT_EQ(base, va + gran);
  EXPECT_EQ(size, gran);

  // Handles from addresses, properties, export/import through a file
  // descriptor.
  CUmemGenericAllocationHandle hr = 0;
  ASSERT_EQ(drv::cuMemRetainAllocationHandle(&hr, ptr(va + gran + 100)), CUDA_SUCCESS);
  EXPECT_EQ(hr, hb);
  ASSERT_EQ(drv::cuMemRelease(hr), CUDA_SUCCESS);
  CUmemAllocationProp got{};
  ASSERT_EQ(drv::cuMemGetAllocationPropertiesFromHandle(&got, ha), CUDA_SUCCESS);
  EXPECT_EQ(got.location.id, kDev);
  int fd = -1;
  ASSERT_EQ(drv::cuMemExportToShareableHandle(&fd, ha, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), CUDA_SUCCESS);
  ASSERT_GE(fd, 0);
  CUmemGenericAllocationHandle hi = 0;
  ASSERT_EQ(drv::cuMemImportFromShareableHandle(&hi, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
            CUDA_SUCCESS);
  close(fd);
  ASSERT_EQ(drv::cuMemGetAllocationPropertiesFromHandle(&got, hi), CUDA_SUCCESS);
  EXPECT_EQ(got.location.id, kDev);  // the device travels in the memfd's name
  EXPECT_EQ(r.device(kDev).used_bytes(),
            used_before + 2 * gran);  // importing charges nothing
  ASSERT_EQ(drv::cuMemMap(va + 3 * gran, gran, 0, hi, 0), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuMemSetAccess(va + 3 * gran, gran, &access, 1), CUDA_SUCCESS);
  std::fill(out.begin(), out.end(), 0u);
  ASSERT_EQ(drv::cuMemcpyDtoH_v2(out.data(), va + 3 * gran, gran), CUDA_SUCCESS);
  EXPECT_EQ(in, out);

  // Released handles stay alive while mapped; unmapping frees the physical
  // memory.
  ASSERT_EQ(drv::cuMemRelease(ha), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuMemRelease(hb), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuMemRelease(hi), CUDA_SUCCESS);
  EXPECT_EQ(drv::cuMemRelease(hi), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(r.device(kDev).used_bytes(), used_before + 2 * gran);
  EXPECT_EQ(drv::cuMemUnmap(va, gran / 2),
            CUDA_ERROR_INVALID_VALUE);  // splits a mapping
  ASSERT_EQ(drv::cuMemUnmap(va, 4 * gran), CUDA_SUCCESS);
  EXPECT_FALSE(r.memory().find(ptr(va + gran)).has_value());
  EXPECT_EQ(r.device(kDev).used_bytes(), used_before);
  ASSERT_EQ(drv::cuMemAddressFree(va, 4 * gran), CUDA_SUCCESS);
  EXPECT_EQ(drv::cuMemAddressFree(va, 4 * gran), CUDA_ERROR_INVALID_VALUE);
}

TEST(DriverApi, VirtualMemoryRejectsBadInputAndRespectsCapacity) {
  Runtime& r = rt();
  CUmemAllocationProp prop = device_prop(0, false);
  CUmemGenericAllocationHandle h = 0;
  EXPECT_EQ(drv::cuMemCreate(&h, kGranularity + 1, &prop, 0), CUDA_ERROR_INVALID_VALUE);
  size_t too_big = (r.device(0).spec().memory_bytes / kGranularity + 1) * kGranularity;
  EXPECT_EQ(drv::cuMemCreate(&h, too_big, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);
  CUmemAllocationProp bad = device_prop(99, false);
  EXPECT_EQ(drv::cuMemCreate(&h, kGranularity, &bad, 0), CUDA_ERROR_INVALID_DEVICE);
  CUmemAllocationProp fabric = device_prop(0, false);
  fabric.requestedHandleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
  {  // a fabric-handle probe is answered without a warning (PyTorch's expandable segments make it every run)
    auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(16);
    sink->set_level(spdlog::level::warn);
    genie::log::add_sink(sink);
    EXPECT_EQ(drv::cuMemCreate(&h, kGranularity, &fabric, 0), CUDA_ERROR_NOT_SUPPORTED);
    genie::log::remove_sink(sink);
    EXPECT_TRUE(sink->last_formatted().empty());
  }
  ASSERT_EQ(drv::cuMemCreate(&h, kGranularity, &prop, 0), CUDA_SUCCESS);
  int fd = -1;  // not requested as shareable at creation
  EXPECT_EQ(drv::cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
            CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr va = 0;
  EXPECT_EQ(drv::cuMemAddressReserve(&va, kGranularity + 4096, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(drv::cuMemMap(va, kGranularity, 0, h, 0),
            CUDA_ERROR_INVALID_VALUE);  // no reservation there
  ASSERT_EQ(drv::cuMemRelease(h), CUDA_SUCCESS);
  EXPECT_EQ(drv::cuMemMap(0, kGranularity, 0, h, 0),
            CUDA_ERROR_INVALID_HANDLE);  // released
}

TEST(DriverApi, EntryPointsResolveTorchsRequiredDriverFunctions) {
  // c10::cuda::DriverAPI's required list (client-api-surface.md, "Driver entry
  // points").
  const char* required[] = {"cuDeviceGet",
                            "cuDeviceGetAttribute",
                            "cuMemGetAddressRange",
                            "cuMemAddressReserve",
                            "cuMemRelease",
                            "cuMemMap",
                            "cuMemAddressFree",
                            "cuMemSetAccess",
                            "cuMemUnmap",
                            "cuMemCreate",
                            "cuMemGetAllocationGranularity",
                            "cuMemExportToShareableHandle",
                            "cuMemImportFromShareableHandle",
                            "cuMemRetainAllocationHandle",
                            "cuMemGetAllocationPropertiesFromHandle",
                            "cuMemsetD32Async",
                            "cuStreamWriteValue32",
                            "cuGetErrorString"};
  static_assert(sizeof(required) / sizeof(required[0]) == 18);
  // 13020: torch 2.15 (CUDA 13.2) asks with its own version and gets what 13.0 gets.
  for (int version : {12000, 12080, 13000, 13020}) {
    for (const char* name : required) {
      EXPECT_NE(genie::fakecuda::driver_entry_point(name, version), nullptr) << name << " @ " << version;
      void* fn = nullptr;
      CUdriverProcAddressQueryResult st{};
      EXPECT_EQ(drv::cuGetProcAddress_v2(name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &st), CUDA_SUCCESS);
      EXPECT_EQ(st, CU_GET_PROC_ADDRESS_SUCCESS);
      EXPECT_EQ(fn, genie::fakecuda::driver_entry_point(name, version));
    }
  }
  // The versioned implementation a name maps to.
  EXPECT_EQ(genie::fakecuda::driver_entry_point("cuMemAlloc", 12000), reinterpret_cast<void*>(&drv::cuMemAlloc_v2));
  EXPECT_EQ(genie::fakecuda::driver_entry_point("cuStreamWriteValue32", 12000),
            reinterpret_cast<void*>(&drv::cuStreamWriteValue32_v2));
  EXPECT_EQ(genie::fakecuda::driver_entry_point("cuCtxGetDevice", 12080),
            reinterpret_cast<void*>(&drv::cuCtxGetDevice));
  EXPECT_EQ(genie::fakecuda::driver_entry_point("cuCtxGetDevice", 13000),
            reinterpret_cast<void*>(&drv::cuCtxGetDevice_v2));
  EXPECT_EQ(genie::fakecuda::driver_entry_point("cuCtxGetDevice", 13020),
            reinterpret_cast<void*>(&drv::cuCtxGetDevice_v2));
  void* fn = nullptr;
  ASSERT_EQ(
      drv::cuGetProcAddress_v2("cuLaunchKernel", &fn, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, nullptr),
      CUDA_SUCCESS);
  EXPECT_EQ(fn, reinterpret_cast<void*>(&drv::cuLaunchKernel_ptsz));
  // Typed through cudaTypedefs.h, as clients do.
  auto get = reinterpret_cast<PFN_cuDeviceGet_v2000>(genie::fakecuda::driver_entry_point("cuDeviceGet", 12000));
  CUdevice d = -1;
  ASSERT_EQ(get(&d, 1), CUDA_SUCCESS);
  EXPECT_EQ(d, 1);

  // Unknown names and too-old versions.
  EXPECT_EQ(genie::fakecuda::driver_entry_point("cuNoSuchFunction", 13000), nullptr);
  EXPECT_EQ(genie::fakecuda::driver_entry_point("cuMemAlloc_v2", 13000),
            nullptr);  // base names only
  CUdriverProcAddressQueryResult st{};
  EXPECT_EQ(drv::cuGetProcAddress_v2("cuNoSuchFunction", &fn, 13000, 0, &st), CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(st, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  EXPECT_EQ(fn, nullptr);
  EXPECT_EQ(drv::cuGetProcAddress_v2("cuMemCreate", &fn, 10000, 0, &st), CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  EXPECT_EQ(genie::fakecuda::driver_not_emulated("cuGraphCreate"), static_cast<int>(CUDA_ERROR_NOT_SUPPORTED));
}

TEST(DriverApi, ModulesLaunchAsTimedStreamOps) {
  Runtime& r = rt();
  r.set_current_device(0);
  const std::string text = one_entry_ptx("add_one");
  const char* ptx = text.c_str();
  CUmodule mod = nullptr;
  ASSERT_EQ(drv::cuModuleLoadData(&mod, ptx), CUDA_SUCCESS);
  CUfunction f = nullptr;
  EXPECT_EQ(drv::cuModuleGetFunction(&f, mod, "missing"), CUDA_ERROR_NOT_FOUND);
  ASSERT_EQ(drv::cuModuleGetFunction(&f, mod, "add_one"), CUDA_SUCCESS);
  CUfunction again = nullptr;
  ASSERT_EQ(drv::cuModuleGetFunction(&again, mod, "add_one"), CUDA_SUCCESS);
  EXPECT_EQ(again, f);
  EXPECT_EQ(drv::cuModuleLoadData(&mod, "\x01garbage"), CUDA_ERROR_INVALID_IMAGE);

  int v = 0;
  ASSERT_EQ(drv::cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f), CUDA_SUCCESS);
  EXPECT_EQ(v, r.device(0).spec().max_threads_per_block);
  ASSERT_EQ(drv::cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f), CUDA_SUCCESS);
  EXPECT_EQ(v, r.device(0).spec().shared_mem_per_block);

  auto* stream = reinterpret_cast<CUstream>(r.create_stream(0, 0, 0));
  CUdeviceptr buf = 0;
  ASSERT_EQ(drv::cuMemAlloc_v2(&buf, 256), CUDA_SUCCESS);
  void* args[] = {&buf};
  ASSERT_EQ(drv::cuLaunchKernel(f, 4, 1, 1, 128, 1, 1, 0, stream, args, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(drv::cuLaunchKernel(f, 4, 1, 1, 4096, 1, 1, 0, stream, args, nullptr), CUDA_ERROR_INVALID_VALUE);
  // Dynamic shared memory above 48 KiB needs the opt-in attribute, as on the
  // device.
  constexpr unsigned kBigSmem = 64 << 10;
  EXPECT_EQ(drv::cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, kBigSmem, stream, args, nullptr), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(drv::cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, kBigSmem), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, kBigSmem, stream, args, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_EQ(drv::cuStreamQuery(stream), CUDA_SUCCESS);
  int blocks = 0;
  ASSERT_EQ(drv::cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 256, 0), CUDA_SUCCESS);
  EXPECT_EQ(blocks, r.device(0).spec().max_threads_per_sm / 256);

  // The JIT linker's output loads as a module of any function.
  CUlinkState link = nullptr;
  ASSERT_EQ(drv::cuLinkCreate_v2(0, nullptr, nullptr, &link), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuLinkAddData_v2(link, CU_JIT_INPUT_PTX, const_cast<char*>(ptx), std::strlen(ptx) + 1, "a.ptx", 0,
                                  nullptr, nullptr),
            CUDA_SUCCESS);
  void* cubin = nullptr;
  size_t cubin_size = 0;
  ASSERT_EQ(drv::cuLinkComplete(link, &cubin, &cubin_size), CUDA_SUCCESS);
  CUmodule linked = nullptr;
  ASSERT_EQ(drv::cuModuleLoadData(&linked, cubin), CUDA_SUCCESS);
  CUfunction g = nullptr;
  ASSERT_EQ(drv::cuModuleGetFunction(&g, linked, "anything"), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuLinkDestroy(link), CUDA_SUCCESS);

  // Unloading invalidates the module's functions.
  ASSERT_EQ(drv::cuModuleUnload(mod), CUDA_SUCCESS);
  EXPECT_EQ(drv::cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, stream, args, nullptr), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(drv::cuModuleUnload(mod), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(drv::cuModuleUnload(linked), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuMemFree_v2(buf), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuStreamDestroy_v2(stream), CUDA_SUCCESS);
}

TEST(DriverApi, LaunchKernelExChecksItsConfigAndLaunchAttributesAsTheDriverDoes) {
  // Expectation (CUDA driver API, cuLaunchKernelEx; Programming Guide, thread block clusters): no config or a null
  // attribute list is CUDA_ERROR_INVALID_VALUE; a cluster must divide the grid and hold at most 8 blocks (16 once
  // the function allows non-portable sizes), else CUDA_ERROR_INVALID_CLUSTER_SIZE; a cooperative grid must fit the
  // device at once; an unknown attribute id is CUDA_ERROR_INVALID_VALUE; scheduling hints are accepted.
  Runtime& r = rt();
  r.set_current_device(0);
  CUmodule mod = nullptr;
  ASSERT_EQ(drv::cuModuleLoadData(&mod, one_entry_ptx("triton_poi_fused_0").c_str()), CUDA_SUCCESS);
  CUfunction f = nullptr;
  ASSERT_EQ(drv::cuModuleGetFunction(&f, mod, "triton_poi_fused_0"), CUDA_SUCCESS);
  auto* stream = reinterpret_cast<CUstream>(r.create_stream(0, 0, 0));
  CUdeviceptr buf = 0;
  ASSERT_EQ(drv::cuMemAlloc_v2(&buf, 256), CUDA_SUCCESS);
  void* args[] = {&buf};
  CUlaunchAttribute attr{};
  CUlaunchConfig cfg{};
  cfg.gridDimX = 16, cfg.gridDimY = 1, cfg.gridDimZ = 1;
  cfg.blockDimX = 128, cfg.blockDimY = 1, cfg.blockDimZ = 1;
  cfg.hStream = stream;
  EXPECT_EQ(drv::cuLaunchKernelEx(nullptr, f, args, nullptr), CUDA_ERROR_INVALID_VALUE);
  cfg.numAttrs = 1;
  EXPECT_EQ(drv::cuLaunchKernelEx(&cfg, f, args, nullptr), CUDA_ERROR_INVALID_VALUE);  // attrs NULL
  cfg.attrs = &attr;
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = 2, attr.value.clusterDim.y = 1, attr.value.clusterDim.z = 1;
  EXPECT_EQ(drv::cuLaunchKernelEx(&cfg, f, args, nullptr), CUDA_SUCCESS);
  attr.value.clusterDim.x = 3;
  EXPECT_EQ(drv::cuLaunchKernelEx(&cfg, f, args, nullptr), CUDA_ERROR_INVALID_CLUSTER_SIZE);
  attr.value.clusterDim.x = 16;
  EXPECT_EQ(drv::cuLaunchKernelEx(&cfg, f, args, nullptr), CUDA_ERROR_INVALID_CLUSTER_SIZE);
  ASSERT_EQ(drv::cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1), CUDA_SUCCESS);
  EXPECT_EQ(drv::cuLaunchKernelEx(&cfg, f, args, nullptr), CUDA_SUCCESS);
  attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  attr.value.programmaticStreamSerializationAllowed = 1;
  EXPECT_EQ(drv::cuLaunchKernelEx(&cfg, f, args, nullptr), CUDA_SUCCESS);
  attr.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
  attr.value.cooperative = 1;
  EXPECT_EQ(drv::cuLaunchKernelEx(&cfg, f, args, nullptr), CUDA_SUCCESS);
  cfg.gridDimX = static_cast<unsigned>(r.device(0).spec().sm_count * r.device(0).spec().max_blocks_per_sm + 1);
  EXPECT_EQ(drv::cuLaunchKernelEx(&cfg, f, args, nullptr), CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
  attr.id = static_cast<CUlaunchAttributeID>(99);
  EXPECT_EQ(drv::cuLaunchKernelEx(&cfg, f, args, nullptr), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(drv::cuStreamSynchronize(stream), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuModuleUnload(mod), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuMemFree_v2(buf), CUDA_SUCCESS);
  ASSERT_EQ(drv::cuStreamDestroy_v2(stream), CUDA_SUCCESS);
}

TEST(DriverApi, AnElfImageWhoseHeadersPointAwayLoadsAsAModuleOfAnyFunction) {
  // System: ELF64 images whose section table lies past the memory they are in (the second page unmapped), or past
  // any real cubin's size. Expectation: no crash; the image loads as a module whose names are not known, so any
  // function resolves (as for a fat binary).
  rt();
  const long page = sysconf(_SC_PAGESIZE);
  auto* mem = static_cast<unsigned char*>(
      mmap(nullptr, static_cast<size_t>(2 * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(mem, MAP_FAILED);
  ASSERT_EQ(munmap(mem + page, static_cast<size_t>(page)), 0);
  for (uint64_t shoff : {static_cast<uint64_t>(page), uint64_t{1} << 40}) {
    Elf64_Ehdr eh{};
    std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_shentsize = sizeof(Elf64_Shdr);
    eh.e_shnum = 4;
    eh.e_shoff = shoff;
    std::memcpy(mem, &eh, sizeof(eh));
    CUmodule mod = nullptr;
    ASSERT_EQ(drv::cuModuleLoadData(&mod, mem), CUDA_SUCCESS);
    CUfunction f = nullptr;
    EXPECT_EQ(drv::cuModuleGetFunction(&f, mod, "any_kernel"), CUDA_SUCCESS);
    ASSERT_EQ(drv::cuModuleUnload(mod), CUDA_SUCCESS);
  }
  munmap(mem, static_cast<size_t>(page));
}

TEST(DriverApi, TensorMapEncodeTiledValidatesLikeTheDriver) {
  rt();
  CUtensorMap map{};  // aligned as cuda.h declares it (128 bytes in CUDA 13)
  alignas(16) static uint16_t tensor[64 * 64];
  cuuint64_t dims[2] = {64, 64};
  cuuint64_t strides[1] = {64 * sizeof(uint16_t)};
  cuuint32_t box[2] = {64, 8};
  cuuint32_t elem[2] = {1, 1};
  ASSERT_EQ(drv::cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, tensor, dims, strides, box, elem,
                                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                        CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
            CUDA_SUCCESS);
  EXPECT_NE(std::memcmp(&map, std::vector<char>(sizeof(map), 0).data(), sizeof(map)), 0);
  EXPECT_EQ(drv::cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, tensor + 1, dims, strides, box, elem,
                                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                        CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
            CUDA_ERROR_INVALID_VALUE);  // misaligned global address
  cuuint32_t wide[2] = {512, 8};
  EXPECT_EQ(drv::cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, tensor, dims, strides, wide, elem,
                                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                        CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
            CUDA_ERROR_INVALID_VALUE);  // box dimension above 256
}

// Driver export tables (CUPTI and NVIDIA's cudart ask for them by UUID): a clear refusal with a null table, and
// null arguments are invalid values, never a crash.
TEST(DriverApi, ExportTablesAreRefusedCleanly) {
  CUuuid id{};
  for (int i = 0; i < 16; ++i) id.bytes[i] = static_cast<char>(i * 17);
  const void* table = &id;
  EXPECT_EQ(drv::cuGetExportTable(&table, &id), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(table, nullptr);
  EXPECT_EQ(drv::cuGetExportTable(&table, &id), CUDA_ERROR_NOT_SUPPORTED);  // logged once, same answer
  EXPECT_EQ(drv::cuGetExportTable(nullptr, &id), CUDA_ERROR_INVALID_VALUE);
  table = &id;
  EXPECT_EQ(drv::cuGetExportTable(&table, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(table, nullptr);
}

}  // namespace
