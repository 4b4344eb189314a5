// SPDX-License-Identifier: Apache-2.0
// libgenie_runtime.so is made of whole static archives; this file gives the target a source of its own.
namespace genie {
/// Version of the Genie runtime library ("0.1.0").
const char* runtime_version() noexcept { return "0.1.0"; }
}  // namespace genie
