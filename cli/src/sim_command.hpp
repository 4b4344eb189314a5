// SPDX-License-Identifier: Apache-2.0
// `genie sim`: nccl-tests style sweep on a simulated topology (CLI glue over netsim::run_sweep).
#pragma once

namespace CLI {
class App;
}

namespace genie::cli {

/// Adds the `sim` subcommand to `app`. When it runs, it prints the nccl-tests table on stdout, errors on
/// stderr, and stores 0 (success) or 1 (error) in *exit_code. `app` and `exit_code` must outlive parsing.
void register_sim_command(CLI::App& app, int* exit_code);

}  // namespace genie::cli
