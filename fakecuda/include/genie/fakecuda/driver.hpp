// SPDX-License-Identifier: Apache-2.0
// The emulated CUDA driver API (libcuda.so.1 and cudaGetDriverEntryPoint share
// these functions).
#pragma once

namespace genie::fakecuda {

/// Marks the driver as initialised (as cuInit(0) does) so that driver functions
/// stop answering CUDA_ERROR_NOT_INITIALIZED. Called by cuInit and by the
/// cudart layer on its first call: the real cudart initialises the driver, so
/// libraries reaching the driver after the runtime (torch's LazyNVRTC dlopen of
/// libcuda.so.1) never call cuInit themselves.
void driver_mark_initialized() noexcept;

/// Address of the emulated driver function `name` ("cuMemCreate") for a client
/// of CUDA version `cuda_version` (e.g. 12030), or nullptr when it is not
/// emulated or `cuda_version` predates it. The functions have the exact
/// signatures of the toolkit's cuda.h: the versioned implementation the name
/// maps to for that version, as cuGetProcAddress answers (cuMemAlloc ->
/// cuMemAlloc_v2 from 3020 on). Also marks the driver initialised
/// (cudaGetDriverEntryPoint is a runtime call).
void* driver_entry_point(const char* name, int cuda_version) noexcept;

/// Logs (warn) that driver function `name` is not emulated and returns
/// CUDA_ERROR_NOT_SUPPORTED (801): the body of libcuda.so.1's exports that have
/// no emulation.
int driver_not_emulated(const char* name) noexcept;

}  // namespace genie::fakecuda
