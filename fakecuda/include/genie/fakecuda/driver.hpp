// SPDX-License-Identifier: Apache-2.0
// The emulated CUDA driver API (libcuda.so.1 and cudaGetDriverEntryPoint share these functions).
#pragma once

namespace genie::fakecuda {

/// Address of the emulated driver function `name` ("cuMemCreate") for a client of CUDA version
/// `cuda_version` (e.g. 12030), or nullptr when it is not emulated. The functions have the exact
/// signatures of the toolkit's cuda.h (the `_v2`-style versioned implementation the name maps to).
void* driver_entry_point(const char* name, int cuda_version) noexcept;

}  // namespace genie::fakecuda
