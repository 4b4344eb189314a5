/* SPDX-License-Identifier: Apache-2.0 */
/* module_launch: what a JIT (Triton, Inductor) does with the driver API, as a plain C program (cuda.h, -lcuda).
   Loads a cubin built by nvcc twice (cuModuleLoadData from memory, cuModuleLoad from the file), looks its kernels
   up by name (a __device__ function and an unknown name are not found), reads a kernel's parameter layout
   (cuFuncGetParamInfo) and a variable (cuModuleGetGlobal), and launches one with cuLaunchKernelEx and the
   attributes Triton sets (cluster dimension, programmatic stream serialization, cooperative), then checks what the
   driver refuses: a cluster that does not divide the grid or is too large, an unknown attribute, a cooperative grid
   larger than the device holds, a missing file. It asks the occupancy calculator, times a launch with driver events
   and loads the cubin as a code library (cuLibrary*, cuKernel*: kernels launched as CUkernels and through their
   CUfunctions). Then it launches N more times with cuLaunchKernel, freeing a copy of the kernel's name each time
   (under genie run, the trace must still name every launch, each with its modelled duration). Prints
   "module_launch: 0 failed" when all is as on a GPU.
   Usage: module_launch CUBIN [N] */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failed = 0;

#define CHECK(call)                                                                          \
  do {                                                                                       \
    CUresult err_ = (call);                                                                  \
    if (err_ != CUDA_SUCCESS) {                                                              \
      const char* msg_ = NULL;                                                               \
      cuGetErrorString(err_, &msg_);                                                         \
      fprintf(stderr, "FAIL %s:%d: %s: %d (%s)\n", __FILE__, __LINE__, #call, (int)err_,     \
              msg_ ? msg_ : "?");                                                            \
      return 1;                                                                              \
    }                                                                                        \
  } while (0)

#define EXPECT(call, want)                                                                   \
  do {                                                                                       \
    CUresult got_ = (call);                                                                  \
    if (got_ != (want)) {                                                                    \
      fprintf(stderr, "FAIL %s:%d: %s returned %d, expected %d (%s)\n", __FILE__, __LINE__,  \
              #call, (int)got_, (int)(want), #want);                                         \
      ++failed;                                                                              \
    }                                                                                        \
  } while (0)

static void* read_file(const char* path) {
  FILE* f = fopen(path, "rb");
  long n;
  void* p;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  p = malloc((size_t)n);
  if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
    free(p);
    p = NULL;
  }
  fclose(f);
  return p;
}

/* One launch with `attrs`; returns the launch's result. */
static CUresult launch_ex(CUfunction f, CUstream s, unsigned grid, CUlaunchAttribute* attrs, unsigned nattrs,
                          void** args) {
  CUlaunchConfig cfg;
  memset(&cfg, 0, sizeof(cfg));
  cfg.gridDimX = grid;
  cfg.gridDimY = 1;
  cfg.gridDimZ = 1;
  cfg.blockDimX = 128;
  cfg.blockDimY = 1;
  cfg.blockDimZ = 1;
  cfg.hStream = s;
  cfg.attrs = attrs;
  cfg.numAttrs = nattrs;
  return cuLaunchKernelEx(&cfg, f, args, NULL);
}

int main(int argc, char** argv) {
  const char* kKernel = "triton_poi_fused_add_mul_0";
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod, from_file, none;
  CUfunction f, g;
  CUstream s;
  CUdeviceptr out, in;
  CUlaunchAttribute attrs[3];
  int n = 1 << 20, sms = 0, launches, i;
  void* args[3];
  void* image;

  if (argc < 2) {
    fprintf(stderr, "usage: module_launch CUBIN [N]\n");
    return 2;
  }
  launches = argc > 2 ? atoi(argv[2]) : 100;
  image = read_file(argv[1]);
  if (!image) {
    fprintf(stderr, "FAIL cannot read %s\n", argv[1]);
    return 1;
  }
  CHECK(cuInit(0));
  CHECK(cuDeviceGet(&dev, 0));
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  CHECK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));

  /* Modules and their kernels, by name. */
  CHECK(cuModuleLoadData(&mod, image));
  CHECK(cuModuleGetFunction(&f, mod, kKernel));
  CHECK(cuModuleGetFunction(&g, mod, "triton_red_fused_sum_1"));
  EXPECT(cuModuleGetFunction(&g, mod, "_Z5twicef"), CUDA_ERROR_NOT_FOUND); /* a __device__ function */
  EXPECT(cuModuleGetFunction(&g, mod, "triton_missing"), CUDA_ERROR_NOT_FOUND);
  /* The parameter layout nvcc laid out (float*, const float*, int): offsets 0, 8, 16; sizes 8, 8, 4. */
  {
    size_t off = 99, size = 99, want_off[3] = {0, 8, 16}, want_size[3] = {8, 8, 4};
    int p;
    for (p = 0; p < 3; ++p) {
      CHECK(cuFuncGetParamInfo(f, (size_t)p, &off, &size));
      if (off != want_off[p] || size != want_size[p]) {
        fprintf(stderr, "FAIL parameter %d at %zu size %zu, expected %zu size %zu\n", p, off, size, want_off[p],
                want_size[p]);
        ++failed;
      }
    }
    CHECK(cuFuncGetParamInfo(f, 2, &off, NULL)); /* the size is optional */
    EXPECT(cuFuncGetParamInfo(f, 3, &off, &size), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuFuncGetParamInfo(f, 0, NULL, &size), CUDA_ERROR_INVALID_VALUE);
  }
  /* A variable of the module: its size and initial bytes. */
  {
    CUdeviceptr var;
    size_t bytes = 0;
    int host[4] = {0, 0, 0, 0};
    CHECK(cuModuleGetGlobal(&var, &bytes, mod, "launch_counts"));
    CHECK(cuMemcpyDtoH(host, var, sizeof(host)));
    if (bytes != sizeof(host) || host[0] != 1 || host[3] != 4) {
      fprintf(stderr, "FAIL launch_counts: %zu bytes, %d %d %d %d\n", bytes, host[0], host[1], host[2], host[3]);
      ++failed;
    }
    EXPECT(cuModuleGetGlobal(&var, &bytes, mod, "no_such_variable"), CUDA_ERROR_NOT_FOUND);
  }
  CHECK(cuModuleLoad(&from_file, argv[1]));
  CHECK(cuModuleGetFunction(&g, from_file, kKernel));
  EXPECT(cuModuleLoad(&none, "/nonexistent/kernels.cubin"), CUDA_ERROR_FILE_NOT_FOUND);
  CHECK(cuModuleUnload(from_file));

  CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CHECK(cuMemAlloc(&out, (size_t)n * sizeof(float)));
  CHECK(cuMemAlloc(&in, (size_t)n * sizeof(float)));
  args[0] = &out;
  args[1] = &in;
  args[2] = &n;

  /* cuLaunchKernelEx with Triton's attributes: clusters of 2 blocks, programmatic dependent launch. */
  memset(attrs, 0, sizeof(attrs));
  attrs[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attrs[0].value.clusterDim.x = 2;
  attrs[0].value.clusterDim.y = 1;
  attrs[0].value.clusterDim.z = 1;
  attrs[1].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  attrs[1].value.programmaticStreamSerializationAllowed = 1;
  CHECK(launch_ex(f, s, (unsigned)(n / 128), attrs, 2, args));
  CHECK(cuStreamSynchronize(s));

  /* What the driver refuses. */
  attrs[0].value.clusterDim.x = 3; /* 8192 blocks are not a multiple of 3 */
  EXPECT(launch_ex(f, s, (unsigned)(n / 128), attrs, 1, args), CUDA_ERROR_INVALID_CLUSTER_SIZE);
  attrs[0].value.clusterDim.x = 16; /* more than 8 without the non-portable attribute */
  EXPECT(launch_ex(f, s, (unsigned)(n / 128), attrs, 1, args), CUDA_ERROR_INVALID_CLUSTER_SIZE);
  attrs[0].id = (CUlaunchAttributeID)99;
  EXPECT(launch_ex(f, s, 1, attrs, 1, args), CUDA_ERROR_INVALID_VALUE);
  attrs[0].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
  attrs[0].value.cooperative = 1;
  EXPECT(launch_ex(f, s, (unsigned)sms, attrs, 1, args), CUDA_SUCCESS); /* one block per SM fits */
  EXPECT(launch_ex(f, s, (unsigned)(n / 128), attrs, 1, args), CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
  EXPECT(cuLaunchKernelEx(NULL, f, args, NULL), CUDA_ERROR_INVALID_VALUE);

  /* The occupancy calculator: a block size in warps, a grid that fills every SM, shared memory per block. */
  {
    int min_grid = 0, block = 0;
    size_t smem = 0;
    CHECK(cuOccupancyMaxPotentialBlockSize(&min_grid, &block, f, NULL, 0, 0));
    if (block <= 0 || block % 32 != 0 || block > 1024 || min_grid < sms) {
      fprintf(stderr, "FAIL potential block size %d, grid %d (%d SMs)\n", block, min_grid, sms);
      ++failed;
    }
    CHECK(cuOccupancyMaxPotentialBlockSize(&min_grid, &block, f, NULL, 0, 96));
    if (block > 96) {
      fprintf(stderr, "FAIL potential block size %d above the limit 96\n", block);
      ++failed;
    }
    CHECK(cuOccupancyAvailableDynamicSMemPerBlock(&smem, f, 2, 128));
    if (smem == 0) {
      fprintf(stderr, "FAIL no dynamic shared memory for 2 blocks of 128 threads\n");
      ++failed;
    }
    EXPECT(cuOccupancyMaxPotentialBlockSize(NULL, &block, f, NULL, 0, 0), CUDA_ERROR_INVALID_VALUE);
  }

  /* Driver events around a launch: a positive elapsed time; a second stream waits on the event. */
  {
    CUevent e0, e1;
    CUstream s2;
    float ms = 0.0f;
    CHECK(cuEventCreate(&e0, CU_EVENT_DEFAULT));
    CHECK(cuEventCreate(&e1, CU_EVENT_DEFAULT));
    CHECK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CHECK(cuEventRecord(e0, s));
    CHECK(cuLaunchKernel(f, (unsigned)(n / 128), 1, 1, 128, 1, 1, 0, s, args, NULL));
    CHECK(cuEventRecord(e1, s));
    CHECK(cuStreamWaitEvent(s2, e1, 0));
    CHECK(cuStreamSynchronize(s2));
    CHECK(cuEventQuery(e1)); /* complete once s2, which waited on it, is */
    CHECK(cuEventSynchronize(e1));
    CHECK(cuEventElapsedTime(&ms, e0, e1));
    if (!(ms > 0.0f)) {
      fprintf(stderr, "FAIL elapsed time of a launch %f ms\n", ms);
      ++failed;
    }
    EXPECT(cuEventCreate(&e0, 0x100), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuEventElapsedTime(NULL, e0, e1), CUDA_ERROR_INVALID_VALUE);
    CHECK(cuEventDestroy(e1));
    CHECK(cuStreamDestroy(s2));
  }

  /* The same cubin as a code library: its kernels as CUkernels (launched directly and through their CUfunction),
     its variable, and a kernel that is gone after the unload. */
  {
    CUlibrary lib;
    CUkernel kern, all[4];
    CUfunction kf;
    CUdeviceptr var;
    size_t bytes = 0, off = 0;
    unsigned count = 0;
    const char* kname = NULL;
    CHECK(cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0));
    CHECK(cuLibraryGetKernelCount(&count, lib));
    if (count != 2) {
      fprintf(stderr, "FAIL library kernels: %u, expected 2\n", count);
      ++failed;
    }
    CHECK(cuLibraryEnumerateKernels(all, count < 4 ? count : 4, lib));
    CHECK(cuLibraryGetKernel(&kern, lib, kKernel));
    EXPECT(cuLibraryGetKernel(&kern, lib, "_Z5twicef"), CUDA_ERROR_NOT_FOUND);
    CHECK(cuLibraryGetKernel(&kern, lib, kKernel));
    CHECK(cuKernelGetName(&kname, kern));
    if (kname == NULL || strcmp(kname, kKernel) != 0) {
      fprintf(stderr, "FAIL cuKernelGetName: %s\n", kname ? kname : "(null)");
      ++failed;
    }
    CHECK(cuKernelGetParamInfo(kern, 2, &off, &bytes));
    if (off != 16 || bytes != 4) {
      fprintf(stderr, "FAIL kernel parameter 2 at %zu size %zu\n", off, bytes);
      ++failed;
    }
    CHECK(cuKernelGetFunction(&kf, kern));
    CHECK(cuLaunchKernel(kf, (unsigned)(n / 128), 1, 1, 128, 1, 1, 0, s, args, NULL));
    CHECK(cuLaunchKernel((CUfunction)kern, (unsigned)(n / 128), 1, 1, 128, 1, 1, 0, s, args, NULL));
    CHECK(cuLibraryGetGlobal(&var, &bytes, lib, "launch_counts"));
    if (bytes != 4 * sizeof(int)) {
      fprintf(stderr, "FAIL library variable of %zu bytes\n", bytes);
      ++failed;
    }
    CHECK(cuStreamSynchronize(s));
    CHECK(cuLibraryUnload(lib));
    EXPECT(cuKernelGetName(&kname, kern), CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuLaunchKernel(kf, 1, 1, 1, 128, 1, 1, 0, s, args, NULL), CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuLibraryUnload(lib), CUDA_ERROR_INVALID_HANDLE);
  }

  /* Many launches by a name the program frees at once: the trace keeps naming each. */
  for (i = 0; i < launches; ++i) {
    char* name = strdup(kKernel);
    CUfunction h;
    CHECK(cuModuleGetFunction(&h, mod, name));
    memset(name, 'x', strlen(name));
    free(name);
    CHECK(cuLaunchKernel(h, (unsigned)(n / 128), 1, 1, 128, 1, 1, 0, s, args, NULL));
    free(strdup("yyyyyyyyyyyyyyyyyyyyyyyyyy")); /* the size of the name: reuses a freed copy of it */
  }
  CHECK(cuStreamSynchronize(s));
  CHECK(cuModuleUnload(mod));
  CHECK(cuMemFree(out));
  CHECK(cuMemFree(in));
  free(image);
  printf("module_launch: %d failed\n", failed);
  return failed == 0 ? 0 : 1;
}
