// SPDX-License-Identifier: Apache-2.0
// Fuzz target: device description files (GENIE_DEVICE=FILE.json, the fakecuda/presets/*.json schema). The input
// is the file. Whatever the bytes, parse_device_spec returns a DeviceSpec or a Status that names the file;
// a DeviceSpec re-serialises to a document that parses to the same spec, and every property query the
// runtime answers from it (cudaGetDeviceProperties in both ABI layouts, cudaDeviceGetAttribute, the PCI bus
// id) runs without a crash and gives the same name, limits and bus id format.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

#include "fuzz_check.hpp"
#include "genie/fakecuda/device_spec.hpp"

extern "C" {
size_t genie_fuzz_accepted = 0;
}

namespace {

using genie::fakecuda::DeviceSpec;
using nlohmann::json;

/// The spec in the preset schema (what parse_device_spec reads).
std::string spec_json(const DeviceSpec& s) {
  json j = json::object();
  j["name"] = s.name;
  j["compute_capability"] = {{"major", s.cc_major}, {"minor", s.cc_minor}};
  j["sm_count"] = s.sm_count;
  j["memory_bytes"] = s.memory_bytes;
  j["clocks"] = {{"sm_khz", s.sm_clock_khz}, {"mem_khz", s.mem_clock_khz}};
  j["memory_bus_width_bits"] = s.mem_bus_width_bits;
  j["l2_cache_bytes"] = s.l2_cache_bytes;
  j["limits"] = {{"max_threads_per_block", s.max_threads_per_block},
                 {"max_threads_per_sm", s.max_threads_per_sm},
                 {"max_blocks_per_sm", s.max_blocks_per_sm},
                 {"regs_per_block", s.regs_per_block},
                 {"regs_per_sm", s.regs_per_sm},
                 {"shared_mem_per_block", s.shared_mem_per_block},
                 {"shared_mem_per_block_optin", s.shared_mem_per_block_optin},
                 {"shared_mem_per_sm", s.shared_mem_per_sm},
                 {"warp_size", s.warp_size}};
  json pf = json::object();
  for (const auto& [k, v] : s.peak_flops) pf[k] = v;
  j["peak_flops"] = pf;
  j["bandwidth_bytes_per_s"] = {
      {"hbm", s.hbm_bw_bytes_per_s}, {"pcie", s.pcie_bw_bytes_per_s}, {"nvlink", s.nvlink_bw_bytes_per_s}};
  j["nvlink_links"] = s.nvlink_links;
  j["launch"] = {{"overhead_ns", s.launch_overhead.count_ns()}, {"kernel_floor_ns", s.kernel_floor.count_ns()}};
  j["sources"] = s.sources;
  j["async_engine_count"] = s.async_engine_count;
  j["pci"] = {{"domain", s.pci_domain},
              {"bus_base", s.pci_bus_base},
              {"bus_stride", s.pci_bus_stride},
              {"device_id", s.pci_device_id}};
  if (!s.notes.empty()) j["notes"] = s.notes;
  return j.dump();
}

bool same(const DeviceSpec& a, const DeviceSpec& b) {
  return a.name == b.name && a.cc_major == b.cc_major && a.cc_minor == b.cc_minor && a.sm_count == b.sm_count &&
         a.memory_bytes == b.memory_bytes && a.sm_clock_khz == b.sm_clock_khz && a.mem_clock_khz == b.mem_clock_khz &&
         a.mem_bus_width_bits == b.mem_bus_width_bits && a.l2_cache_bytes == b.l2_cache_bytes &&
         a.max_threads_per_block == b.max_threads_per_block && a.max_threads_per_sm == b.max_threads_per_sm &&
         a.max_blocks_per_sm == b.max_blocks_per_sm && a.regs_per_block == b.regs_per_block &&
         a.regs_per_sm == b.regs_per_sm && a.shared_mem_per_block == b.shared_mem_per_block &&
         a.shared_mem_per_block_optin == b.shared_mem_per_block_optin && a.shared_mem_per_sm == b.shared_mem_per_sm &&
         a.warp_size == b.warp_size && a.async_engine_count == b.async_engine_count && a.pci_domain == b.pci_domain &&
         a.pci_bus_base == b.pci_bus_base && a.pci_bus_stride == b.pci_bus_stride &&
         a.pci_device_id == b.pci_device_id && a.peak_flops == b.peak_flops &&
         a.hbm_bw_bytes_per_s == b.hbm_bw_bytes_per_s && a.pcie_bw_bytes_per_s == b.pcie_bw_bytes_per_s &&
         a.nvlink_bw_bytes_per_s == b.nvlink_bw_bytes_per_s && a.nvlink_links == b.nvlink_links &&
         a.launch_overhead == b.launch_overhead && a.kernel_floor == b.kernel_floor && a.sources == b.sources &&
         a.notes == b.notes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto r = genie::fakecuda::parse_device_spec(genie::fuzz::text_of(data, size), "fuzz.json");
  if (!r.is_ok()) {
    GENIE_FUZZ_CHECK(r.status().message().rfind("fuzz.json: ", 0) == 0, "the error does not name the file: " +
                                                                            r.status().message());
    return 0;
  }
  ++genie_fuzz_accepted;
  const DeviceSpec& spec = r.value();
  auto again = genie::fakecuda::parse_device_spec(spec_json(spec), "round trip");
  GENIE_FUZZ_CHECK(again.is_ok(), "the re-serialised spec does not parse: " + again.status().message());
  GENIE_FUZZ_CHECK(same(spec, again.value()), "the spec changed in the round trip");

  for (int ordinal : {0, 1, 7, 1023}) {
    cudaDeviceProp p;
    genie::fakecuda::fill_device_prop(spec, ordinal, &p);
    GENIE_FUZZ_CHECK(std::memchr(p.name, 0, sizeof(p.name)) != nullptr && spec.name == p.name,
                     "cudaDeviceProp::name is not the spec's name");
    GENIE_FUZZ_CHECK(p.totalGlobalMem == spec.memory_bytes && p.multiProcessorCount == spec.sm_count &&
                         p.warpSize == spec.warp_size && p.major == spec.cc_major && p.minor == spec.cc_minor,
                     "cudaDeviceProp does not answer the spec");
    std::vector<unsigned char> p12(genie::fakecuda::device_prop_v12_size());
    genie::fakecuda::fill_device_prop_v12(spec, ordinal, p12.data());
    GENIE_FUZZ_CHECK(spec.name == reinterpret_cast<const char*>(p12.data()), "the CUDA 12 layout's name");
    GENIE_FUZZ_CHECK(genie::fakecuda::pci_bus_id(spec, ordinal).size() == 12, "the PCI bus id is not DDDD:BB:00.0");
    for (int attr = 0; attr < 160; ++attr) (void)genie::fakecuda::device_attribute(spec, ordinal, attr);
  }
  return 0;
}
