// SPDX-License-Identifier: Apache-2.0
// Subcommands of the `genie` CLI; each registers itself on the app and sets *exit_code when it runs.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace genie::cli {

/// `genie env`: prints the LD_PRELOAD / LD_LIBRARY_PATH lines that put Genie's libraries under a program.
void register_env_command(CLI::App& app, int* exit_code);

/// `genie presets`: lists device and topology presets with one-line descriptions.
void register_presets_command(CLI::App& app, int* exit_code);

/// `genie run`: launches the ranks of a job (launcher.hpp).
void register_run_command(CLI::App& app, int* exit_code);

/// `genie coordinator`: a stand-alone coordinator for ranks of another launcher.
void register_coordinator_command(CLI::App& app, int* exit_code);

/// `genie report`: renders a report directory as HTML.
void register_report_command(CLI::App& app, int* exit_code);
/// `genie testbed up|down|status`: network namespaces as hosts (testbed.hpp).
void register_testbed_command(CLI::App& app, int* exit_code);
/// `genie cost`: predicted GPU time of a GEMM or a kernel launch (cost_command.cpp).
void register_cost_command(CLI::App& app, int* exit_code);

/// `genie calibrate`: kernel tables from profiler traces, parameter fits from calibration data.
void register_calibrate_command(CLI::App& app, int* exit_code);

/// `genie smi`: nvidia-smi's table for the emulated devices of running jobs (smi_command.cpp, docs/nvml.md).
void register_smi_command(CLI::App& app, int* exit_code);

/// Directory holding the drop-in libraries (<build>/lib next to <build>/bin/genie).
std::string library_dir();

}  // namespace genie::cli
