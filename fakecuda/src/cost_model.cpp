// SPDX-License-Identifier: Apache-2.0
// TableCostModel: measured kernel table, default per-thread rule, copy and memset durations.
#include "genie/fakecuda/cost_model.hpp"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace genie::fakecuda {
namespace {

// Copy-engine efficiencies and latencies, from ../shared/calibration/h200/device.json (one H200,
// CUDA events around batches of copies):
//  - pinned H2D/D2H reach 55.2 GB/s at 256 MiB-1 GiB on a PCIe Gen5 x16 link (64 GB/s per direction):
//    efficiency 0.86; at 1 MiB they take 23.0 us, i.e. ~4 us beyond the bandwidth term.
//  - pageable H2D reaches 19.2 GB/s at 256 MiB (staged through a pinned bounce buffer): 0.30 of the link,
//    and 118 us at 1 MiB, i.e. ~60 us of fixed cost.
//  - D2D copies reach 2045-2105 GB/s of copied bytes at 256 MiB-1 GiB; each byte is read and written,
//    so 4.1-4.2 TB/s of HBM traffic on a 4.8 TB/s part: efficiency 0.86.
constexpr double kPinnedPcieEfficiency = 55.2 / 64.0;
constexpr double kPageablePcieEfficiency = 19.2 / 64.0;
constexpr int64_t kPinnedCopyLatencyNs = 4000;
constexpr int64_t kPageableCopyLatencyNs = 60000;
constexpr double kHbmEfficiency = 0.86;
constexpr int64_t kDeviceCopyLatencyNs = 2000;  // a D2D copy is a kernel-like launch on the copy engine
// Peer copies over NVLink: the 8xH100 ring all-reduce table (../shared/calibration/nccl/, NCCL_ALGO=RING)
// peaks at 368 GB/s bus bandwidth (8 GiB) on 450 GB/s-per-direction NVLink4.
constexpr double kNvlinkEfficiency = 368.0 / 450.0;

SimTime bandwidth_time(double bytes, double bytes_per_s) {
  if (bytes_per_s <= 0) return SimTime::zero();
  return SimTime::from_seconds(bytes / bytes_per_s);
}

bool read_dim3(const nlohmann::json& j, uint32_t out[3]) {
  if (!j.is_array() || j.empty() || j.size() > 3) return false;
  for (size_t i = 0; i < 3; ++i) {
    if (i >= j.size()) { out[i] = 1; continue; }
    if (!j[i].is_number_unsigned() || j[i].get<uint64_t>() == 0 || j[i].get<uint64_t>() > 0xffffffffu) return false;
    out[i] = j[i].get<uint32_t>();
  }
  return true;
}

}  // namespace

const char* copy_kind_name(CopyKind k) {
  switch (k) {
    case CopyKind::kHostToHost: return "HtoH";
    case CopyKind::kHostToDevice: return "HtoD";
    case CopyKind::kDeviceToHost: return "DtoH";
    case CopyKind::kDeviceToDevice: return "DtoD";
    case CopyKind::kPeer: return "PtoP";
  }
  return "?";
}

TableCostModel::TableCostModel(const DeviceSpec& spec, std::multimap<std::string, KernelTableEntry, std::less<>> table)
    : spec_(spec), table_(std::move(table)) {}

Result<std::multimap<std::string, KernelTableEntry, std::less<>>> TableCostModel::parse_table(
    const std::string& text, const std::string& origin) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    return invalid_argument(origin + ": not valid JSON: " + e.what());
  }
  if (!doc.is_object() || !doc.contains("kernels") || !doc["kernels"].is_array())
    return invalid_argument(origin + ": expected an object with a \"kernels\" array at /kernels");
  std::multimap<std::string, KernelTableEntry, std::less<>> table;
  for (size_t i = 0; i < doc["kernels"].size(); ++i) {
    const auto& k = doc["kernels"][i];
    std::string path = origin + ": /kernels/" + std::to_string(i);
    if (!k.is_object()) return invalid_argument(path + " must be an object");
    for (auto it = k.begin(); it != k.end(); ++it) {
      static const char* kKeys[] = {"name", "grid", "block", "shared_mem", "duration_us"};
      if (std::none_of(std::begin(kKeys), std::end(kKeys), [&](const char* s) { return it.key() == s; }))
        return invalid_argument(path + "/" + it.key() + ": unknown key");
    }
    if (!k.contains("name") || !k["name"].is_string() || k["name"].get<std::string>().empty())
      return invalid_argument(path + "/name: a non-empty string is required");
    if (!k.contains("duration_us") || !k["duration_us"].is_number() || k["duration_us"].get<double>() < 0)
      return invalid_argument(path + "/duration_us: a non-negative number is required");
    KernelTableEntry e;
    e.duration = SimTime::from_ns_double(k["duration_us"].get<double>() * 1e3);
    if (k.contains("grid") || k.contains("block")) {
      if (!k.contains("grid") || !read_dim3(k["grid"], e.shape.grid))
        return invalid_argument(path + "/grid: an array of 1-3 positive integers is required with block");
      if (!k.contains("block") || !read_dim3(k["block"], e.shape.block))
        return invalid_argument(path + "/block: an array of 1-3 positive integers is required with grid");
      e.has_shape = true;
    }
    if (k.contains("shared_mem")) {
      if (!k["shared_mem"].is_number_unsigned()) return invalid_argument(path + "/shared_mem: a non-negative integer");
      e.shape.shared_mem = k["shared_mem"].get<size_t>();
    }
    table.emplace(k["name"].get<std::string>(), e);
  }
  return table;
}

Result<std::multimap<std::string, KernelTableEntry, std::less<>>> TableCostModel::load_table(const std::string& path) {
  std::ifstream in(path);
  if (!in) return invalid_argument("cost table: cannot read file '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_table(ss.str(), path);
}

SimTime TableCostModel::kernel(std::string_view name, const KernelShape& shape) const {
  auto [lo, hi] = table_.equal_range(name);
  const KernelTableEntry* any_shape = nullptr;
  for (auto it = lo; it != hi; ++it) {
    if (it->second.has_shape && it->second.shape == shape) return max(it->second.duration, spec_.kernel_floor);
    if (!it->second.has_shape) any_shape = &it->second;
  }
  if (any_shape) return max(any_shape->duration, spec_.kernel_floor);
  double bytes = static_cast<double>(shape.threads()) * kDefaultBytesPerThread;
  return max(bandwidth_time(bytes, spec_.hbm_bw_bytes_per_s * kHbmEfficiency), spec_.kernel_floor);
}

SimTime TableCostModel::copy(CopyKind kind, size_t bytes, bool pinned) const {
  double b = static_cast<double>(bytes);
  switch (kind) {
    case CopyKind::kHostToHost:
      return SimTime::zero();  // a host memcpy: the CPU time is the caller's
    case CopyKind::kHostToDevice:
    case CopyKind::kDeviceToHost:
      if (pinned)
        return SimTime::ns(kPinnedCopyLatencyNs) + bandwidth_time(b, spec_.pcie_bw_bytes_per_s * kPinnedPcieEfficiency);
      return SimTime::ns(kPageableCopyLatencyNs) +
             bandwidth_time(b, spec_.pcie_bw_bytes_per_s * kPageablePcieEfficiency);
    case CopyKind::kDeviceToDevice:
      // read + write of every byte
      return SimTime::ns(kDeviceCopyLatencyNs) + bandwidth_time(2 * b, spec_.hbm_bw_bytes_per_s * kHbmEfficiency);
    case CopyKind::kPeer:
      return SimTime::ns(kDeviceCopyLatencyNs) + bandwidth_time(b, spec_.nvlink_bw_bytes_per_s * kNvlinkEfficiency);
  }
  return SimTime::zero();
}

SimTime TableCostModel::memset(size_t bytes) const {
  return max(SimTime::ns(kDeviceCopyLatencyNs) +
                 bandwidth_time(static_cast<double>(bytes), spec_.hbm_bw_bytes_per_s * kHbmEfficiency),
             spec_.kernel_floor);
}

}  // namespace genie::fakecuda
