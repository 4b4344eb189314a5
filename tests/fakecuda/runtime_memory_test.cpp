// SPDX-License-Identifier: Apache-2.0
// Tests of runtime_memory.cpp (and memory.cpp) in timing-only runs (GENIE_DATA=none, RuntimeOptions::move_data off):
// copies and memsets keep their modelled times but touch no page beyond control data, capacity stays exact.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "genie/fakecuda/runtime.hpp"

#include "proc_memory.hpp"

namespace genie::fakecuda {
namespace {

using genie::fakecuda::testing::resident_pages;
using genie::fakecuda::testing::peak_rss_bytes;
using genie::fakecuda::testing::vm_flags_of;

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kGiB = size_t{1} << 30;

// One H100 (85,520,809,984 bytes), virtual time with host CPU time not charged: host time is the modelled API costs
// and waits only, so two runs of the same calls end at the same virtual time whatever this machine does.
RuntimeOptions h100_options(bool move_data) {
  RuntimeOptions o;
  o.spec = load_device_spec("h100-sxm").value();
  o.device_count = 1;
  o.clock.mode = sched::ClockMode::kVirtual;
  o.clock.cpu_time_scale = 0.0;
  o.api_overhead = SimTime::ns(500);
  o.move_data = move_data;
  return o;
}

// The virtual time at which `s` has run everything enqueued so far.
SimTime drain(Runtime& rt, Stream& s) {
  EXPECT_TRUE(rt.synchronize(s).is_ok());
  return rt.clock().now();
}

// System: one H100, 64 MiB buffers a, b on the device and a 64 MiB host buffer h; memset(a, 0xab), H2D h -> a, D2D
// a -> b, D2H b -> h, memset(b, 0), each synchronised.
// Expectations: the host's virtual time after each op is the same with and without GENIE_DATA=none (the copy model
// decides the durations, not whether bytes move); with none no page of a or b is resident and h keeps its bytes.
TEST(TimingOnly, CopiesAndMemsetsKeepTheirTimesAndTouchNothing) {
  constexpr size_t kSize = 64 * kMiB;
  std::vector<SimTime> times[2];
  for (bool move : {true, false}) {
    Runtime rt(h100_options(move));
    Stream& s = rt.device(0).legacy_stream();
    auto* a = static_cast<unsigned char*>(rt.device_alloc(0, kSize).value());
    auto* b = static_cast<unsigned char*>(rt.device_alloc(0, kSize).value());
    std::vector<unsigned char> h(kSize, 0x5a);
    std::vector<SimTime>& t = times[move ? 0 : 1];
    ASSERT_TRUE(rt.memset_async(a, 0xab, kSize, s).is_ok());
    t.push_back(drain(rt, s));
    ASSERT_TRUE(rt.copy_async(a, h.data(), kSize, s, 1).is_ok());
    t.push_back(drain(rt, s));
    ASSERT_TRUE(rt.copy_async(b, a, kSize, s, 3).is_ok());
    t.push_back(drain(rt, s));
    h[0] = 0x11;  // a real copy brings back what the H2D copy put in: 0x5a
    ASSERT_TRUE(rt.copy_async(h.data(), b, kSize, s, 2).is_ok());
    t.push_back(drain(rt, s));
    ASSERT_TRUE(rt.memset_async(b, 0, kSize, s).is_ok());
    t.push_back(drain(rt, s));
    if (move) {
      EXPECT_EQ(h[0], 0x5a);
      EXPECT_EQ(resident_pages(a, kSize), kSize / 4096);
    } else {
      EXPECT_EQ(resident_pages(a, kSize), 0u);
      EXPECT_EQ(resident_pages(b, kSize), 0u);
      EXPECT_EQ(h[0], 0x11) << "a timing-only D2H copy leaves the host destination as it was";
      EXPECT_EQ(h[kSize - 1], 0x5a);
    }
  }
  ASSERT_EQ(times[0].size(), times[1].size());
  for (size_t i = 0; i < times[0].size(); ++i) EXPECT_EQ(times[0][i], times[1][i]) << "op " << i;
  // The ops took time: 64 MiB at HBM speed is tens of microseconds each, not nothing.
  EXPECT_GT(times[1].back() - times[1].front(), SimTime::us(40));
}

// System: GENIE_DATA=none on one H100 (85.52 GB). 70 GiB allocated in 35 allocations of 2 GiB, each memset to 0x7f,
// then copied device to device onto the next one, and read back (D2H) in 1 GiB pieces into one host buffer.
// Expectations: every op succeeds; the process's peak resident set grows by less than 64 MiB (the host buffer's pages
// are the program's and untouched: it is never written); used bytes are exactly the 70 GiB charged; 10 GiB more does
// not fit (kOutOfMemory), 5 GiB does.
TEST(TimingOnly, SeventyGigabytesOnAnH100CostNoHostMemory) {
  Runtime rt(h100_options(false));
  Stream& s = rt.device(0).legacy_stream();
  const uint64_t before = peak_rss_bytes();
  std::vector<void*> blocks;
  for (int i = 0; i < 35; ++i) {
    auto p = rt.device_alloc(0, 2 * kGiB);
    ASSERT_TRUE(p.is_ok()) << i << ": " << p.status().to_string();
    blocks.push_back(p.value());
  }
  EXPECT_EQ(rt.device(0).used_bytes(), 70 * kGiB);
  void* host = mmap(nullptr, kGiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(host, MAP_FAILED);
  for (size_t i = 0; i < blocks.size(); ++i) {
    ASSERT_TRUE(rt.memset_async(blocks[i], 0x7f, 2 * kGiB, s).is_ok());
    ASSERT_TRUE(rt.copy_async(blocks[(i + 1) % blocks.size()], blocks[i], 2 * kGiB, s, 3).is_ok());
    for (size_t off = 0; off < 2 * kGiB; off += kGiB)
      ASSERT_TRUE(rt.copy_async(host, static_cast<char*>(blocks[i]) + off, kGiB, s, 2).is_ok());
  }
  const SimTime t0 = rt.clock().now();
  ASSERT_TRUE(rt.synchronize(s).is_ok());
  EXPECT_GT(rt.clock().now() - t0, SimTime::ms(10));  // ~280 GB of modelled HBM and PCIe traffic
  EXPECT_LT(peak_rss_bytes() - before, 64 * kMiB);
  EXPECT_EQ(resident_pages(host, kGiB), 0u);
  size_t resident = 0;
  for (void* p : blocks) resident += resident_pages(p, 2 * kGiB);
  EXPECT_EQ(resident, 0u);
  auto too_much = rt.device_alloc(0, 10 * kGiB);
  ASSERT_FALSE(too_much.is_ok());
  EXPECT_EQ(too_much.status().code(), Errc::kOutOfMemory);
  EXPECT_EQ(rt.device(0).used_bytes(), 70 * kGiB);
  auto fits = rt.device_alloc(0, 5 * kGiB);
  ASSERT_TRUE(fits.is_ok());
  EXPECT_EQ(rt.device(0).used_bytes(), 75 * kGiB);
  EXPECT_EQ(rt.device(0).spec().memory_bytes - rt.device(0).used_bytes(), 85520809984u - 75 * kGiB);
  for (void* p : blocks) ASSERT_TRUE(rt.free_memory(p, false).is_ok());
  ASSERT_TRUE(rt.free_memory(fits.value(), false).is_ok());
  EXPECT_EQ(rt.device(0).used_bytes(), 0u);
  munmap(host, kGiB);
}

// System: GENIE_DATA=none; a 512 KiB round trip host -> device -> host, a 4 KiB memset, a device-to-host copy of one
// byte more than kControlDataMaxBytes and a host-to-host one of that size. Expectations: control data (at most 512 KiB)
// moves as with GENIE_DATA=copy, so programs that read sizes, flags or a loss see them; the larger device-to-host copy
// leaves its destination as it was; the host-to-host one moves (no device memory in it).
TEST(TimingOnly, ControlDataStillMoves) {
  Runtime rt(h100_options(false));
  Stream& s = rt.device(0).legacy_stream();
  constexpr size_t kSmall = kControlDataMaxBytes, kLarge = kControlDataMaxBytes + 1;
  auto* d = static_cast<unsigned char*>(rt.device_alloc(0, 4 * kMiB).value());
  std::vector<unsigned char> in(kLarge), out(kLarge, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 7 + 1);
  ASSERT_TRUE(rt.copy_async(d, in.data(), kSmall, s, 1).is_ok());
  ASSERT_TRUE(rt.copy_async(out.data(), d, kSmall, s, 2).is_ok());
  ASSERT_TRUE(rt.synchronize(s).is_ok());
  EXPECT_EQ(std::memcmp(in.data(), out.data(), kSmall), 0);
  ASSERT_TRUE(rt.memset_async(d + kMiB, 0x3c, 4096, s).is_ok());
  ASSERT_TRUE(rt.copy_async(out.data(), d + kMiB, 4096, s, 2).is_ok());
  ASSERT_TRUE(rt.synchronize(s).is_ok());
  EXPECT_EQ(out[0], 0x3c);
  EXPECT_EQ(out[4095], 0x3c);
  std::fill(out.begin(), out.end(), 0xee);
  ASSERT_TRUE(rt.copy_async(out.data(), d, kLarge, s, 2).is_ok());
  ASSERT_TRUE(rt.synchronize(s).is_ok());
  EXPECT_EQ(out[0], 0xee);
  EXPECT_EQ(out[kLarge - 1], 0xee);
  // Host to host: no device page involved, the program's memory on both sides: it moves whatever its size.
  ASSERT_TRUE(rt.copy_async(out.data(), in.data(), kLarge, s, 0).is_ok());
  ASSERT_TRUE(rt.synchronize(s).is_ok());
  EXPECT_EQ(std::memcmp(in.data(), out.data(), kLarge), 0);
}

// System: GENIE_DATA=none; copies of 1 MiB (not control data) to and from a host range that is no longer mapped.
// Expectations: both are refused with kInvalidArgument before anything is queued, as copies that move bytes are;
// the same copy with a mapped host range succeeds. MemoryRegistry::check_mapped reads no page to tell.
TEST(TimingOnly, UnmappedHostMemoryIsStillRefused) {
  Runtime rt(h100_options(false));
  Stream& s = rt.device(0).legacy_stream();
  void* d = rt.device_alloc(0, 4 * kMiB).value();
  void* gone = mmap(nullptr, 2 * kMiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(gone, MAP_FAILED);
  EXPECT_TRUE(MemoryRegistry::check_mapped(gone, 2 * kMiB).is_ok());
  EXPECT_EQ(resident_pages(gone, 2 * kMiB), 0u);
  EXPECT_TRUE(rt.copy_async(d, gone, kMiB, s, 1).is_ok());
  ASSERT_TRUE(rt.synchronize(s).is_ok());
  munmap(gone, 2 * kMiB);
  EXPECT_EQ(MemoryRegistry::check_mapped(gone, 1).code(), Errc::kInvalidArgument);
  EXPECT_EQ(rt.copy_async(d, gone, kMiB, s, 1).code(), Errc::kInvalidArgument);
  EXPECT_EQ(rt.copy_async(gone, d, kMiB, s, 2).code(), Errc::kInvalidArgument);
  EXPECT_EQ(MemoryRegistry::check_mapped(nullptr, 16).code(), Errc::kInvalidArgument);
  EXPECT_TRUE(MemoryRegistry::check_mapped(nullptr, 0).is_ok());
}

// System: 8 MiB device allocations with and without GENIE_DATA=none, on a memfd and anonymous.
// Expectations: MADV_HUGEPAGE ("hg" in VmFlags) only when bytes move; in a timing-only run the few pages control data
// writes must not each become a 2 MiB page.
TEST(TimingOnly, NoHugePagesForDeviceMemory) {
  for (bool shareable : {true, false}) {
    for (bool move : {true, false}) {
      RuntimeOptions o = h100_options(move);
      o.shareable_memory = shareable;
      Runtime rt(o);
      void* p = rt.device_alloc(0, 8 * kMiB).value();
      const std::string flags = vm_flags_of(p);
      ASSERT_NE(flags, "");
      EXPECT_EQ(flags.find(" hg") != std::string::npos, move) << "shareable " << shareable << ": " << flags;
    }
  }
}

}  // namespace
}  // namespace genie::fakecuda
