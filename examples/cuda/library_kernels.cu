// SPDX-License-Identifier: Apache-2.0
// library_kernels: the device code library_load.cu loads at run time with cudaLibraryLoadData /
// cudaLibraryLoadFromFile, built by nvcc as a fat binary (-fatbin) and as a cubin (-cubin): two kernels, a
// __device__ function no kernel lookup may find, and an initialised __device__ variable.
__device__ int lib_counter[4] = {7, 8, 9, 10};

__device__ __noinline__ float lib_twice(float x) { return 2.0f * x; }

extern "C" __global__ void lib_scale(float* out, const float* in, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = lib_twice(in[i]);
}

extern "C" __global__ void lib_count(int n) {
  if (threadIdx.x < n) atomicAdd(&lib_counter[0], 1);
}
