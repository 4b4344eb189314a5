// SPDX-License-Identifier: Apache-2.0
// Tests of libnvidia-ml.so.1's functions (compiled into this test with the static runtime): identity, memory and
// utilization from the process's Runtime, processes, topology answers, status records of other processes, errors.
#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include "nvml/nvml.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "genie/common/config.hpp"
#include "genie/fakecuda/device_status.hpp"
#include "genie/fakecuda/runtime.hpp"

namespace genie::fakecuda {
namespace {

constexpr int kGpus = 4;
constexpr uint64_t kMiB = 1 << 20;

// One process-wide configuration and Runtime for every test here (NVML reads the process's): 4 H100s, virtual
// clock, host time charged nothing for CPU (the utilization windows below are exact).
Runtime& runtime() {
  static Runtime* rt = [] {
    auto c = config::Config::load(
        {{"GENIE_GPUS", std::to_string(kGpus)}, {"GENIE_DEVICE", "h100-sxm"}, {"GENIE_HOST_CPU_SCALE", "0"}});
    EXPECT_TRUE(c.is_ok());
    config::set_global_for_testing(c.value());
    return Runtime::instance();
  }();
  return *rt;
}

class Nvml : public ::testing::Test {
 protected:
  void SetUp() override {
    (void)runtime();
    ASSERT_EQ(nvmlInit_v2(), NVML_SUCCESS);
  }
  void TearDown() override { EXPECT_EQ(nvmlShutdown(), NVML_SUCCESS); }
  static nvmlDevice_t handle(unsigned i) {
    nvmlDevice_t d = nullptr;
    EXPECT_EQ(nvmlDeviceGetHandleByIndex_v2(i, &d), NVML_SUCCESS);
    return d;
  }
};

TEST(NvmlInit, CallsBeforeInitAndAfterShutdownAreUninitialized) {
  (void)runtime();
  unsigned n = 0;
  EXPECT_EQ(nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(nvmlDeviceGetFanSpeed(nullptr, &n), NVML_ERROR_UNINITIALIZED);  // from the not-supported table
  EXPECT_EQ(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
  // Reference counted: two inits need two shutdowns.
  ASSERT_EQ(nvmlInit_v2(), NVML_SUCCESS);
  ASSERT_EQ(nvmlInitWithFlags(0), NVML_SUCCESS);
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  EXPECT_EQ(nvmlDeviceGetCount_v2(&n), NVML_SUCCESS);
  EXPECT_EQ(n, static_cast<unsigned>(kGpus));
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  EXPECT_EQ(nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
}

TEST_F(Nvml, HandlesByIndexPciBusIdUuidAndSerialAgree) {
  unsigned n = 0;
  ASSERT_EQ(nvmlDeviceGetCount(&n), NVML_SUCCESS);
  ASSERT_EQ(n, static_cast<unsigned>(kGpus));
  for (unsigned i = 0; i < n; ++i) {
    nvmlDevice_t d = handle(i);
    unsigned index = 99;
    ASSERT_EQ(nvmlDeviceGetIndex(d, &index), NVML_SUCCESS);
    EXPECT_EQ(index, i);
    nvmlPciInfo_t pci{};
    ASSERT_EQ(nvmlDeviceGetPciInfo_v3(d, &pci), NVML_SUCCESS);
    // The runtime's cudaDeviceGetPCIBusId of the same ordinal ("0000:18:00.0"), in NVML's 8-digit domain form.
    EXPECT_EQ(std::string(pci.busId), "0000" + pci_bus_id(runtime().options().spec, static_cast<int>(i))) << pci.busId;
    EXPECT_EQ(pci.pciDeviceId, 0x233010deu);  // H100 SXM5 (the preset's pci.device_id) and NVIDIA's vendor id
    nvmlDevice_t by_bus = nullptr, by_legacy = nullptr, by_uuid = nullptr, by_serial = nullptr;
    ASSERT_EQ(nvmlDeviceGetHandleByPciBusId_v2(pci.busId, &by_bus), NVML_SUCCESS);
    ASSERT_EQ(nvmlDeviceGetHandleByPciBusId(pci.busIdLegacy, &by_legacy), NVML_SUCCESS);
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE], serial[NVML_DEVICE_SERIAL_BUFFER_SIZE];
    ASSERT_EQ(nvmlDeviceGetUUID(d, uuid, sizeof(uuid)), NVML_SUCCESS);
    EXPECT_EQ(std::strncmp(uuid, "GPU-", 4), 0) << uuid;
    ASSERT_EQ(nvmlDeviceGetHandleByUUID(uuid, &by_uuid), NVML_SUCCESS);
    ASSERT_EQ(nvmlDeviceGetSerial(d, serial, sizeof(serial)), NVML_SUCCESS);
    ASSERT_EQ(nvmlDeviceGetHandleBySerial(serial, &by_serial), NVML_SUCCESS);
    EXPECT_EQ(by_bus, d);
    EXPECT_EQ(by_legacy, d);
    EXPECT_EQ(by_uuid, d);
    EXPECT_EQ(by_serial, d);
  }
  nvmlDevice_t none = nullptr;
  EXPECT_EQ(nvmlDeviceGetHandleByIndex_v2(kGpus, &none), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetHandleByPciBusId_v2("0000:77:00.0", &none), NVML_ERROR_NOT_FOUND);
  EXPECT_EQ(nvmlDeviceGetHandleByUUID("GPU-00000000-0000-0000-0000-000000000000", &none), NVML_ERROR_NOT_FOUND);
  char small[4];
  EXPECT_EQ(nvmlDeviceGetName(handle(0), small, sizeof(small)), NVML_ERROR_INSUFFICIENT_SIZE);
}

TEST_F(Nvml, IdentityComesFromThePreset) {
  nvmlDevice_t d = handle(1);
  char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
  ASSERT_EQ(nvmlDeviceGetName(d, name, sizeof(name)), NVML_SUCCESS);
  EXPECT_STREQ(name, "NVIDIA H100 80GB HBM3");
  int major = 0, minor = -1;
  ASSERT_EQ(nvmlDeviceGetCudaComputeCapability(d, &major, &minor), NVML_SUCCESS);
  EXPECT_EQ(major * 10 + minor, 90);
  nvmlDeviceArchitecture_t arch = 0;
  ASSERT_EQ(nvmlDeviceGetArchitecture(d, &arch), NVML_SUCCESS);
  EXPECT_EQ(arch, static_cast<nvmlDeviceArchitecture_t>(NVML_DEVICE_ARCH_HOPPER));
  unsigned sm = 0, mem = 0, minor_number = 9;
  ASSERT_EQ(nvmlDeviceGetClockInfo(d, NVML_CLOCK_SM, &sm), NVML_SUCCESS);
  ASSERT_EQ(nvmlDeviceGetMaxClockInfo(d, NVML_CLOCK_MEM, &mem), NVML_SUCCESS);
  EXPECT_EQ(sm, 1980u);
  EXPECT_EQ(mem, 2617u);
  ASSERT_EQ(nvmlDeviceGetMinorNumber(d, &minor_number), NVML_SUCCESS);
  EXPECT_EQ(minor_number, 1u);
  unsigned limit = 0, temp = 0;
  ASSERT_EQ(nvmlDeviceGetPowerManagementLimit(d, &limit), NVML_SUCCESS);
  EXPECT_EQ(limit, 700000u);
  ASSERT_EQ(nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &temp), NVML_SUCCESS);
  EXPECT_EQ(temp, 35u);
  char version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
  ASSERT_EQ(nvmlSystemGetDriverVersion(version, sizeof(version)), NVML_SUCCESS);
  EXPECT_STREQ(version, kReportedDriverVersion);
  int cuda = 0;
  ASSERT_EQ(nvmlSystemGetCudaDriverVersion_v2(&cuda), NVML_SUCCESS);
  EXPECT_EQ(cuda, 13020);
}

TEST_F(Nvml, LegacyPciInfoWritesOnlyTheOldStructSize) {
  // nvmlDeviceGetPciInfo (v1) callers pass the pre-2.285 struct: 16-byte bus id, five words, four reserved words.
  unsigned char buf[sizeof(nvmlPciInfo_t)];
  std::memset(buf, 0xab, sizeof(buf));
  ASSERT_EQ(nvmlDeviceGetPciInfo(handle(0), reinterpret_cast<nvmlPciInfo_t*>(buf)), NVML_SUCCESS);
  const size_t v1_size = offsetof(nvmlPciInfo_t, busId) + 16;
  EXPECT_STREQ(reinterpret_cast<char*>(buf), "0000:18:00.0");
  for (size_t i = v1_size; i < sizeof(buf); ++i) ASSERT_EQ(buf[i], 0xab) << "byte " << i << " written";
}

TEST_F(Nvml, MemoryInfoAndProcessesFollowTheAllocator) {
  Runtime& rt = runtime();
  // System: device 1 holds 64 MiB of this process. Expectations: NVML index 1 reports 64 MiB used and this process
  // with 64 MiB; index 3 (untouched) reports nothing used and no process.
  auto p = rt.device_alloc(1, 64 * kMiB);
  ASSERT_TRUE(p.is_ok());
  nvmlMemory_t m{};
  ASSERT_EQ(nvmlDeviceGetMemoryInfo(handle(1), &m), NVML_SUCCESS);
  EXPECT_EQ(m.used, 64 * kMiB);
  EXPECT_EQ(m.total, rt.options().spec.memory_bytes);
  EXPECT_EQ(m.free, m.total - m.used);
  nvmlMemory_v2_t m2{};
  EXPECT_EQ(nvmlDeviceGetMemoryInfo_v2(handle(1), &m2), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  m2.version = nvmlMemory_v2;
  ASSERT_EQ(nvmlDeviceGetMemoryInfo_v2(handle(1), &m2), NVML_SUCCESS);
  EXPECT_EQ(m2.used, 64 * kMiB);
  ASSERT_EQ(nvmlDeviceGetMemoryInfo(handle(3), &m), NVML_SUCCESS);
  EXPECT_EQ(m.used, 0u);

  // pynvml's protocol: ask with no buffer, get the count and INSUFFICIENT_SIZE, then fetch.
  unsigned count = 0;
  ASSERT_EQ(nvmlDeviceGetComputeRunningProcesses_v3(handle(1), &count, nullptr), NVML_ERROR_INSUFFICIENT_SIZE);
  ASSERT_EQ(count, 1u);
  nvmlProcessInfo_t procs[2];
  count = 2;
  ASSERT_EQ(nvmlDeviceGetComputeRunningProcesses_v3(handle(1), &count, procs), NVML_SUCCESS);
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(procs[0].pid, static_cast<unsigned>(getpid()));
  EXPECT_EQ(procs[0].usedGpuMemory, 64 * kMiB);
  EXPECT_EQ(procs[0].gpuInstanceId, 0xFFFFFFFFu);
  // The unversioned (v1) struct, which torch's c10 uses: pid and memory only.
  nvmlProcessInfo_v1_t v1[1];
  count = 1;
  ASSERT_EQ(nvmlDeviceGetComputeRunningProcesses(handle(1), &count, v1), NVML_SUCCESS);
  EXPECT_EQ(v1[0].usedGpuMemory, 64 * kMiB);
  count = 0;
  EXPECT_EQ(nvmlDeviceGetComputeRunningProcesses_v3(handle(3), &count, nullptr), NVML_SUCCESS);
  EXPECT_EQ(count, 0u);
  ASSERT_TRUE(rt.free_memory(p.value(), false).is_ok());
  ASSERT_EQ(nvmlDeviceGetMemoryInfo(handle(1), &m), NVML_SUCCESS);
  EXPECT_EQ(m.used, 0u);
}

TEST_F(Nvml, UtilizationIsTheBusyShareOfTheLastWindow) {
  Runtime& rt = runtime();
  Stream& s = rt.device(2).legacy_stream();
  nvmlUtilization_t u{};
  unsigned power = 0;
  // System: device 2 idle, then one 400 ms kernel that the host waits for, window 1 s (fakecuda.nvml_window_ms).
  // Expectations: 0% before; 40% right after (power 70 + 0.4 x 630 W = 322 W); 0% once the host is 2 s later.
  ASSERT_EQ(nvmlDeviceGetUtilizationRates(handle(2), &u), NVML_SUCCESS);
  EXPECT_EQ(u.gpu, 0u);
  ASSERT_EQ(nvmlDeviceGetPowerUsage(handle(2), &power), NVML_SUCCESS);
  EXPECT_EQ(power, 70000u);
  sched::OpSpec k;
  k.label = "busy_kernel";
  k.kind = sched::OpKind::kKernel;
  k.duration = SimTime::ms(400);
  ASSERT_TRUE(rt.submit(s, k).is_ok());
  ASSERT_TRUE(rt.synchronize(s).is_ok());
  ASSERT_EQ(nvmlDeviceGetUtilizationRates(handle(2), &u), NVML_SUCCESS);
  EXPECT_NEAR(u.gpu, 40u, 1u);
  EXPECT_EQ(u.memory, 0u);
  ASSERT_EQ(nvmlDeviceGetPowerUsage(handle(2), &power), NVML_SUCCESS);
  EXPECT_NEAR(power, 322000u, 7000u);
  unsigned count = 0;  // a device the process ran work on lists it, though it holds no memory there
  EXPECT_EQ(nvmlDeviceGetComputeRunningProcesses_v3(handle(2), &count, nullptr), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(count, 1u);
  ASSERT_EQ(nvmlDeviceGetUtilizationRates(handle(0), &u), NVML_SUCCESS);
  EXPECT_EQ(u.gpu, 0u) << "another device's work";
  rt.clock().wait_until(rt.clock().now() + SimTime::ms(2000));
  ASSERT_EQ(nvmlDeviceGetUtilizationRates(handle(2), &u), NVML_SUCCESS);
  EXPECT_EQ(u.gpu, 0u);
}

TEST_F(Nvml, TopologyIsOneNvlinkNodeWithoutFabric) {
  nvmlGpuP2PStatus_t st = NVML_P2P_STATUS_UNKNOWN;
  for (auto caps : {NVML_P2P_CAPS_INDEX_READ, NVML_P2P_CAPS_INDEX_WRITE, NVML_P2P_CAPS_INDEX_NVLINK,
                    NVML_P2P_CAPS_INDEX_ATOMICS, NVML_P2P_CAPS_INDEX_PCI}) {
    ASSERT_EQ(nvmlDeviceGetP2PStatus(handle(0), handle(3), caps, &st), NVML_SUCCESS);
    EXPECT_EQ(st, NVML_P2P_STATUS_OK) << caps;
  }
  nvmlEnableState_t active = NVML_FEATURE_DISABLED;
  ASSERT_EQ(nvmlDeviceGetNvLinkState(handle(0), 17, &active), NVML_SUCCESS);
  EXPECT_EQ(active, NVML_FEATURE_ENABLED);
  EXPECT_EQ(nvmlDeviceGetNvLinkState(handle(0), 18, &active), NVML_ERROR_INVALID_ARGUMENT) << "H100 has 18 links";
  nvmlIntNvLinkDeviceType_t type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
  ASSERT_EQ(nvmlDeviceGetNvLinkRemoteDeviceType(handle(0), 0, &type), NVML_SUCCESS);
  EXPECT_EQ(type, NVML_NVLINK_DEVICE_TYPE_SWITCH);
  nvmlGpuFabricInfoV_t fabric{};
  EXPECT_EQ(nvmlDeviceGetGpuFabricInfoV(handle(0), &fabric), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  fabric.version = nvmlGpuFabricInfo_v3;
  fabric.state = NVML_GPU_FABRIC_STATE_COMPLETED;
  ASSERT_EQ(nvmlDeviceGetGpuFabricInfoV(handle(0), &fabric), NVML_SUCCESS);
  EXPECT_EQ(fabric.state, static_cast<nvmlGpuFabricState_t>(NVML_GPU_FABRIC_STATE_NOT_SUPPORTED));
}

TEST_F(Nvml, UnimplementedCallsAnswerNotSupportedAndErrorsHaveNames) {
  unsigned speed = 0;
  EXPECT_EQ(nvmlDeviceGetFanSpeed(handle(0), &speed), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_STREQ(nvmlErrorString(NVML_ERROR_NOT_SUPPORTED), "Not Supported");
  EXPECT_STREQ(nvmlErrorString(NVML_ERROR_UNINITIALIZED), "Uninitialized");
  EXPECT_STREQ(nvmlErrorString(static_cast<nvmlReturn_t>(12345)), "Unknown Error");
  nvmlMemory_t m{};
  EXPECT_EQ(nvmlDeviceGetMemoryInfo(nullptr, &m), NVML_ERROR_INVALID_ARGUMENT);
  int bogus = 0;
  EXPECT_EQ(nvmlDeviceGetMemoryInfo(reinterpret_cast<nvmlDevice_t>(&bogus), &m), NVML_ERROR_INVALID_ARGUMENT);
}

TEST_F(Nvml, OtherProcessesOfTheNodeCountThroughTheirStatusRecords) {
  char tmpl[] = "/tmp/genie-nvml-test-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  // System: this process holds 8 MiB on device 3; the parent process (alive) publishes 100 MiB there at 30%
  // utilization on this node, pid 1 publishes 1 GiB there on another node. Expectations: NVML on index 3 reports
  // 108 MiB, 30% and two processes (this one and the parent), also once this process's own record is in the folder.
  auto mine = runtime().device_alloc(3, 8 * kMiB);
  ASSERT_TRUE(mine.is_ok());
  ProcessStatus peer;
  peer.pid = static_cast<int>(getppid());
  peer.rank = 1;
  peer.node = local_node_name();
  peer.program = "peer";
  peer.gpus = kGpus;
  peer.devices.push_back({3, 100 * kMiB, 30, 0});
  ProcessStatus elsewhere = peer;
  elsewhere.pid = 1;
  elsewhere.node = peer.node + "-other";
  elsewhere.devices[0].used_bytes = 1024 * kMiB;
  std::ofstream(dir + "/proc-" + std::to_string(peer.pid) + ".json") << status_to_json(peer);
  std::ofstream(dir + "/proc-1.json") << status_to_json(elsewhere);
  config::Config c = config::global();
  ASSERT_TRUE(c.set("fakecuda.status_dir", dir).is_ok());
  config::set_global_for_testing(c);
  nvmlMemory_t m{}, again{};
  nvmlUtilization_t u{};
  ASSERT_EQ(nvmlDeviceGetMemoryInfo(handle(3), &m), NVML_SUCCESS);
  ASSERT_EQ(nvmlDeviceGetUtilizationRates(handle(3), &u), NVML_SUCCESS);
  unsigned count = 4;
  nvmlProcessInfo_t procs[4];
  ASSERT_EQ(nvmlDeviceGetComputeRunningProcesses_v3(handle(3), &count, procs), NVML_SUCCESS);
  ASSERT_TRUE(publish_status(runtime(), dir).is_ok());
  ASSERT_EQ(nvmlDeviceGetMemoryInfo(handle(3), &again), NVML_SUCCESS);
  const size_t records = read_status_dir(dir).size();
  ASSERT_TRUE(c.set("fakecuda.status_dir", "").is_ok());
  config::set_global_for_testing(c);
  ASSERT_TRUE(runtime().free_memory(mine.value(), false).is_ok());
  for (int pid : {peer.pid, 1, static_cast<int>(getpid())})
    std::remove((dir + "/proc-" + std::to_string(pid) + ".json").c_str());
  rmdir(dir.c_str());

  EXPECT_EQ(m.used, 108 * kMiB);
  EXPECT_EQ(again.used, 108 * kMiB);
  EXPECT_EQ(u.gpu, 30u);
  ASSERT_EQ(count, 2u);
  EXPECT_EQ(procs[0].pid, static_cast<unsigned>(getpid()));
  EXPECT_EQ(procs[0].usedGpuMemory, 8 * kMiB);
  EXPECT_EQ(procs[1].pid, static_cast<unsigned>(peer.pid));
  EXPECT_EQ(procs[1].usedGpuMemory, 100 * kMiB);
  EXPECT_EQ(records, 3u);  // the peer, pid 1 and this process
}

TEST(DeviceStatus, RecordsRoundTripThroughJson) {
  ProcessStatus s;
  s.pid = 42;
  s.rank = 3;
  s.node = "node1";
  s.program = "train.py";
  s.preset = "h200";
  s.gpus = 8;
  s.clock = "virtual";
  s.host_time_ns = 123456789;
  s.updated_unix_ms = 1700000000000;
  s.devices.push_back({5, 7 * kMiB, 12, 3});
  Result<ProcessStatus> back = status_from_json(status_to_json(s));
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(back->pid, 42);
  EXPECT_EQ(back->rank, 3);
  EXPECT_EQ(back->node, "node1");
  ASSERT_EQ(back->devices.size(), 1u);
  EXPECT_EQ(back->devices[0].index, 5);
  EXPECT_EQ(back->devices[0].used_bytes, 7 * kMiB);
  EXPECT_EQ(back->devices[0].util_gpu_pct, 12);
  EXPECT_FALSE(status_from_json("{\"pid\": 1}").is_ok());
  EXPECT_FALSE(status_from_json("not json").is_ok());
}

TEST(DeviceStatus, NominalPowerInterpolatesBetweenIdleAndLimit) {
  DeviceSpec spec;
  EXPECT_EQ(nominal_power_mw(spec, 50), 0u) << "no nominal values in the preset";
  spec.power_limit_w = 700;
  spec.idle_power_w = 70;
  EXPECT_EQ(nominal_power_mw(spec, 0), 70000u);
  EXPECT_EQ(nominal_power_mw(spec, 100), 700000u);
  EXPECT_EQ(nominal_power_mw(spec, 50), 385000u);
  EXPECT_EQ(busy_percent(SimTime::ms(250), SimTime::ms(1000)), 25);
  EXPECT_EQ(busy_percent(SimTime::ms(2000), SimTime::ms(1000)), 100);
}

}  // namespace
}  // namespace genie::fakecuda
