/* SPDX-License-Identifier: Apache-2.0 */
/* driver_query: a plain C program against the CUDA driver API (cuda.h, -lcuda).
   It lists the devices and round-trips a buffer through device memory. Under
   Genie, run it with LD_LIBRARY_PATH=<build>/lib so Genie's libcuda.so.1 is
   loaded. Exit code 0 when every call succeeds and the data comes back intact.
 */
#include <cuda.h>
#include <stdio.h>
#include <string.h>

#define CHECK(call)                                                            \
  do {                                                                         \
    CUresult err_ = (call);                                                    \
    if (err_ != CUDA_SUCCESS) {                                                \
      const char *msg_ = NULL;                                                 \
      cuGetErrorString(err_, &msg_);                                           \
      fprintf(stderr, "%s:%d: %s failed: %d (%s)\n", __FILE__, __LINE__,       \
              #call, (int)err_, msg_ ? msg_ : "?");                            \
      return 1;                                                                \
    }                                                                          \
  } while (0)

enum { kCount = 1 << 20 }; /* 4 MiB of ints */

int main(void) {
  static int host_in[kCount], host_out[kCount];
  int version = 0, count = 0, i;
  CUdevice dev;
  CUcontext ctx;
  CUdeviceptr buf;
  size_t free_bytes = 0, total_bytes = 0;

  CHECK(cuInit(0));
  CHECK(cuDriverGetVersion(&version));
  CHECK(cuDeviceGetCount(&count));
  printf("driver version %d, %d device(s)\n", version, count);
  for (i = 0; i < count; ++i) {
    char name[256];
    size_t mem = 0;
    int major = 0, minor = 0, sms = 0;
    CHECK(cuDeviceGet(&dev, i));
    CHECK(cuDeviceGetName(name, (int)sizeof(name), dev));
    CHECK(cuDeviceTotalMem(&mem, dev));
    CHECK(cuDeviceGetAttribute(
        &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CHECK(cuDeviceGetAttribute(
        &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    CHECK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                               dev));
    printf("device %d: %s, %zu MiB, compute capability %d.%d, %d SMs\n", i,
           name, mem >> 20, major, minor, sms);
  }
  if (count == 0)
    return 1;

  CHECK(cuDeviceGet(&dev, 0));
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  for (i = 0; i < kCount; ++i)
    host_in[i] = i * 7 + 1;
  CHECK(cuMemAlloc(&buf, sizeof(host_in)));
  CHECK(cuMemGetInfo(&free_bytes, &total_bytes));
  CHECK(cuMemcpyHtoD(buf, host_in, sizeof(host_in)));
  CHECK(cuMemcpyDtoH(host_out, buf, sizeof(host_out)));
  CHECK(cuMemFree(buf));
  CHECK(cuDevicePrimaryCtxRelease(dev));
  if (memcmp(host_in, host_out, sizeof(host_in)) != 0) {
    fprintf(stderr, "data mismatch after the device round trip\n");
    return 1;
  }
  printf("round trip of %zu bytes OK (%zu of %zu MiB free while allocated)\n",
         sizeof(host_in), free_bytes >> 20, total_bytes >> 20);
  return 0;
}
