// SPDX-License-Identifier: Apache-2.0
// The `genie` command: launcher, simulator, reports and environment helpers.
#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "sim_command.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Genie: run GPU programs that communicate through NCCL on machines without GPUs."};
  app.require_subcommand(1);
  int exit_code = 0;
  genie::cli::register_run_command(app, &exit_code);
  genie::cli::register_env_command(app, &exit_code);
  genie::cli::register_sim_command(app, &exit_code);
  genie::cli::register_presets_command(app, &exit_code);
  genie::cli::register_report_command(app, &exit_code);
  genie::cli::register_coordinator_command(app, &exit_code);
  genie::cli::register_testbed_command(app, &exit_code);
  genie::cli::register_cost_command(app, &exit_code);
  genie::cli::register_calibrate_command(app, &exit_code);
  genie::cli::register_smi_command(app, &exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
