// SPDX-License-Identifier: Apache-2.0
// Device status: what a process's emulated devices are doing (memory in use, utilization from the virtual timeline),
// as NVML (libnvidia-ml.so.1) answers it and as each rank of a `genie run` job publishes it for `genie smi`
// (docs/nvml.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "genie/common/sim_time.hpp"
#include "genie/common/status.hpp"

namespace genie::fakecuda {

class Runtime;
struct DeviceSpec;

/// The NVIDIA driver that NVML (nvmlSystemGetDriverVersion) and genie smi report: the one of the H200 calibration run
/// (tests/data/calibration/h200/device.json, driver_version 580.159.04) whose measurements the presets use. Its CUDA
/// version is kDriverVersion (driver.hpp).
inline constexpr const char* kReportedDriverVersion = "580.159.04";

/// One emulated device as one process uses it.
struct DeviceUsage {
  int index = 0;            ///< the device's ordinal on its node (NVML index: before CUDA_VISIBLE_DEVICES)
  uint64_t used_bytes = 0;  ///< device memory this process holds on it
  int util_gpu_pct = 0;     ///< % of the utilization window in which a kernel, memset or collective of it ran there
  int util_mem_pct = 0;     ///< % of the window in which a copy of the process ran on it
};

/// The state one process publishes (a file in the job's status folder, refreshed every status interval).
struct ProcessStatus {
  int pid = 0;
  int rank = -1;             ///< RANK (or the MPI/Slurm equivalent), -1 when not a rank
  std::string node;          ///< emulated node (GENIE_NODE, else the hostname)
  std::string program;       ///< the process's name (/proc/self/comm)
  std::string preset;        ///< GENIE_DEVICE: the preset name or device file its devices come from
  int gpus = 0;              ///< devices of its node (GENIE_GPUS)
  std::string clock;         ///< "virtual" or "realtime"
  int64_t host_time_ns = 0;  ///< the process's host time when the record was made (the window's end)
  int64_t updated_unix_ms = 0;
  std::vector<DeviceUsage> devices;  ///< the devices it uses (holds memory on, or ran work on), by index
};

/// Utilization over [now - window, now) of host time (virtual or realtime), in percent, rounded to nearest.
int busy_percent(SimTime busy, SimTime window);

/// The length of the utilization window (fakecuda.nvml_window_ms).
SimTime utilization_window();

/// The end of the utilization window for `rt`: virtual mode, the largest host time any thread of the process has
/// reached; realtime, the wall clock.
SimTime status_now(Runtime& rt);

/// Usage of the runtime's device `device` (a CUDA ordinal of this process) over the window ending at `now`.
DeviceUsage device_usage(Runtime& rt, int device, SimTime now, SimTime window);

/// This process's status: every device it holds memory on or ran work on.
ProcessStatus local_status(Runtime& rt);

/// Emulated node name of this process: GENIE_NODE, else the hostname.
std::string local_node_name();

/// JSON form of a status record, and back. Errors: kInvalidArgument naming what is wrong.
std::string status_to_json(const ProcessStatus& s);
Result<ProcessStatus> status_from_json(const std::string& text);

/// The records in `dir` (proc-<pid>.json) of processes that are alive, by pid, except `skip_pid`'s.
std::vector<ProcessStatus> read_status_dir(const std::string& dir, int skip_pid = 0);

/// The job status folder this process publishes to (fakecuda.status_dir, GENIE_FAKECUDA_STATUS_DIR; genie run sets
/// it), "" when none.
std::string status_dir();

/// Starts (once per process) the thread that writes local_status to <status_dir>/proc-<pid>.json every
/// fakecuda.status_interval_ms, when status_dir() is set; the file is removed at exit. Called when the runtime
/// starts. Never fails the runtime: problems are logged once.
void start_status_publisher(Runtime& rt);

/// Writes this process's record now (the publisher's step; tests call it directly). Errors: kSystem.
Status publish_status(Runtime& rt, const std::string& dir);

/// Power draw in mW that NVML reports for a device at `util_gpu_pct`: the preset's nominal idle draw, plus the
/// utilization's share of the way to its power limit (0 when the preset has no nominal power values).
unsigned nominal_power_mw(const DeviceSpec& spec, int util_gpu_pct);

}  // namespace genie::fakecuda
