// SPDX-License-Identifier: Apache-2.0
// The emulated CUDA driver API (libcuda.so.1 and cudaGetDriverEntryPoint share
// these functions).
#pragma once

namespace genie::fakecuda {

/// The driver version Genie reports (cuDriverGetVersion, and cudaDriverGetVersion from both cudart sonames):
/// CUDA 13.2, the CUDA of PyTorch's current wheels (torch 2.15.0+cu132). One driver serves every runtime, so
/// the CUDA 12 runtime (libcudart.so.12) reports it too, as it does on a machine with a 13.2 driver.
inline constexpr int kDriverVersion = 13020;
/// CUDART_VERSION of the runtimes we serve (cudaRuntimeGetVersion): 13.2 for libcudart.so.13 (whatever the
/// toolkit headers Genie is built with say: 13.0 today), 12.8 for libcudart.so.12.
inline constexpr int kCudart13Version = 13020;
inline constexpr int kCudart12Version = 12080;

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
