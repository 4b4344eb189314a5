// SPDX-License-Identifier: Apache-2.0
// DeviceSpec: an emulated GPU model loaded from a JSON preset (datasheet values with sources).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "genie/common/sim_time.hpp"
#include "genie/common/status.hpp"

struct cudaDeviceProp;  // CUDA 13 layout, from the toolkit's driver_types.h

namespace genie::fakecuda {

/// Everything the runtime answers about a device, from one preset file. Rates are per device.
struct DeviceSpec {
  std::string preset;             ///< preset name ("h200") or file path it was loaded from
  std::string name;               ///< cudaDeviceProp::name, e.g. "NVIDIA H200"
  int cc_major = 0, cc_minor = 0;  ///< compute capability
  int sm_count = 0;
  uint64_t memory_bytes = 0;      ///< totalGlobalMem (the enforced capacity)
  int sm_clock_khz = 0;           ///< boost clock
  int mem_clock_khz = 0;
  int mem_bus_width_bits = 0;
  int l2_cache_bytes = 0;
  int max_threads_per_block = 1024;
  int max_threads_per_sm = 2048;
  int max_blocks_per_sm = 32;
  int regs_per_block = 65536;
  int regs_per_sm = 65536;
  int shared_mem_per_block = 49152;
  int shared_mem_per_block_optin = 0;
  int shared_mem_per_sm = 0;
  int warp_size = 32;
  int async_engine_count = 2;
  int pci_domain = 0;
  int pci_bus_base = 0x18;        ///< device i gets bus pci_bus_base + i * pci_bus_stride
  int pci_bus_stride = 0x10;
  int pci_device_id = 0;          ///< 16-bit PCI device id (vendor is always NVIDIA, 0x10de); 0 when unknown
  /// Dense peak FLOP/s (OP/s for int8) per dtype. Always present: fp64, fp32, tf32, bf16, fp16, int8.
  /// Optional: fp8 (absent on parts without FP8 tensor cores, e.g. A100) and fp4 (Blackwell).
  std::map<std::string, double> peak_flops;
  double hbm_bw_bytes_per_s = 0;   ///< peak HBM bandwidth
  double pcie_bw_bytes_per_s = 0;  ///< per direction, host link
  double nvlink_bw_bytes_per_s = 0;  ///< per direction, whole GPU (all links)
  int nvlink_links = 0;
  /// Nominal board values that NVML (libnvidia-ml.so.1, genie smi) reports, from the preset's optional "nominal"
  /// object; Genie models neither power nor heat. 0 when absent: NVML then answers NVML_ERROR_NOT_SUPPORTED.
  int power_limit_w = 0;                      ///< board power limit (the datasheet's max TDP)
  int idle_power_w = 0;                       ///< draw when idle; NVML interpolates to power_limit_w by utilization
  int temperature_c = 0;                      ///< GPU temperature, constant
  SimTime launch_overhead = SimTime::zero();  ///< host CPU cost of one kernel launch (API overhead)
  SimTime kernel_floor = SimTime::zero();     ///< smallest GPU duration of any kernel
  std::vector<std::string> sources;           ///< citations for the values above
  std::map<std::string, std::string> notes;   ///< JSON path ("/memory_bytes") -> how the value was derived
};

/// Names of the presets compiled into the library ("a100-sxm4-80gb", "b200", "h100-sxm", "h200").
std::vector<std::string> device_preset_names();

/// Loads a preset by name, or a JSON file by path (anything containing '/' or ending in .json).
/// Errors name the preset or file, the JSON path and what is wrong.
Result<DeviceSpec> load_device_spec(const std::string& name_or_path);
/// Parses a device JSON document; `origin` names it in error messages.
Result<DeviceSpec> parse_device_spec(const std::string& json_text, const std::string& origin);

/// Fills a CUDA 13 `cudaDeviceProp` for device `ordinal` (zeroes it first).
void fill_device_prop(const DeviceSpec& spec, int ordinal, cudaDeviceProp* prop);
/// Fills the CUDA 12.x `cudaDeviceProp` layout (what `cudaGetDeviceProperties_v2` of libcudart.so.12 writes).
/// `prop12` points at caller memory of sizeof the 12.x struct.
void fill_device_prop_v12(const DeviceSpec& spec, int ordinal, void* prop12);
/// Size in bytes of the CUDA 12.x cudaDeviceProp.
size_t device_prop_v12_size();

/// cudaDeviceGetAttribute for `attr` (a cudaDeviceAttr value). kInvalidArgument for unknown attributes.
Result<int> device_attribute(const DeviceSpec& spec, int ordinal, int attr);

/// PCI bus id string "0000:18:00.0" of device `ordinal`.
std::string pci_bus_id(const DeviceSpec& spec, int ordinal);

}  // namespace genie::fakecuda
