// SPDX-License-Identifier: Apache-2.0
// module_kernels: the kernels module_launch.c loads from a cubin (nvcc -cubin), named as Triton names its kernels,
// with a __device__ function beside them that a module lookup must not find and a __device__ variable.
__device__ __noinline__ float twice(float x) { return 2.0f * x; }

// A variable with initial values: cuModuleGetGlobal and cuLibraryGetGlobal give its device memory.
__device__ int launch_counts[4] = {1, 2, 3, 4};

extern "C" __global__ void triton_poi_fused_add_mul_0(float* out, const float* in, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = twice(in[i]) + 1.0f;
}

extern "C" __global__ void triton_red_fused_sum_1(float* out, const float* in, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, in[i]);
}
