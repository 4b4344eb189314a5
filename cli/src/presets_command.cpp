// SPDX-License-Identifier: Apache-2.0
// `genie presets`: the device presets (fakecuda) and topology presets (netsim) this build knows.
#include <cstdio>

#include "commands.hpp"
#include "genie/fakecuda/device_spec.hpp"
#include "genie/netsim/topology.hpp"

namespace genie::cli {

void register_presets_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("presets", "List the device presets (GENIE_DEVICE) and topology presets (--topology)");
  cmd->callback([exit_code] {
    *exit_code = 0;
    std::printf("Devices (GENIE_DEVICE=NAME, or a device JSON file):\n");
    for (const std::string& name : fakecuda::device_preset_names()) {
      auto spec = fakecuda::load_device_spec(name);
      if (!spec.is_ok()) {
        std::fprintf(stderr, "genie presets: %s\n", spec.status().message().c_str());
        *exit_code = 1;
        continue;
      }
      std::printf("  %-16s %s, compute capability %d.%d, %d SMs, %.1f GiB, HBM %.2f TB/s\n", name.c_str(),
                  spec->name.c_str(), spec->cc_major, spec->cc_minor, spec->sm_count,
                  static_cast<double>(spec->memory_bytes) / (1u << 30), spec->hbm_bw_bytes_per_s / 1e12);
    }
    std::printf("Topologies (--topology NAME, or a .json graph / ASTRA-sim .yaml file; --nodes K for clusters):\n");
    for (const std::string& name : netsim::preset_names()) {
      auto topo = netsim::load_topology(name, {});
      if (topo.is_ok())
        std::printf("  %-16s %d GPUs per server, %zu nodes in the graph\n", name.c_str(), topo.value()->num_gpus(),
                    topo.value()->nodes().size());
      else
        std::printf("  %-16s generic shape\n", name.c_str());
    }
  });
}

}  // namespace genie::cli
