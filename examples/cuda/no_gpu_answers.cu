// SPDX-License-Identifier: Apache-2.0
// Prints what the CUDA libraries answer without a GPU, one line per question: every status code's name and text
// (cudaGetErrorName / cudaGetErrorString for codes 0-1023 and 10000, cublas(Lt)GetStatusName / GetStatusString
// 0-31, cudnnGetErrorString 0-5999, ncclGetErrorString -1-15), their versions and properties, and their answers to
// a null or out-of-range argument there. tests/e2e/no_gpu_answers.sh runs it once on NVIDIA's libraries and once
// on Genie's, and the two outputs must be the same.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <library_types.h>
#include <nccl.h>

#include <cstdio>

int main() {
  for (int code = 0; code <= 10000; code = code == 1023 ? 10000 : code + 1) {
    const auto e = static_cast<cudaError_t>(code);
    std::printf("cudart %d %s | %s\n", code, cudaGetErrorName(e), cudaGetErrorString(e));
  }
  for (int code = 0; code < 32; ++code) {
    const auto s = static_cast<cublasStatus_t>(code);
    std::printf("cublas %d %s | %s\n", code, cublasGetStatusName(s), cublasGetStatusString(s));
    std::printf("cublasLt %d %s | %s\n", code, cublasLtGetStatusName(s), cublasLtGetStatusString(s));
  }
  for (int code = 0; code < 6000; ++code)
    std::printf("cudnn %d %s\n", code, cudnnGetErrorString(static_cast<cudnnStatus_t>(code)));
  for (int code = -1; code < 16; ++code)
    std::printf("nccl %d %s\n", code, ncclGetErrorString(static_cast<ncclResult_t>(code)));

  int v = -1;
  std::printf("cudaRuntimeGetVersion %d %d\n", static_cast<int>(cudaRuntimeGetVersion(&v)), v);
  std::printf("cudaRuntimeGetVersion(null) %d\n", static_cast<int>(cudaRuntimeGetVersion(nullptr)));
  v = -1;
  std::printf("ncclGetVersion %d %d\n", static_cast<int>(ncclGetVersion(&v)), v);
  std::printf("ncclGetVersion(null) %d\n", static_cast<int>(ncclGetVersion(nullptr)));
  std::printf("cublasGetCudartVersion %zu\n", cublasGetCudartVersion());
  std::printf("cublasLtGetVersion %zu cudart %zu\n", cublasLtGetVersion(), cublasLtGetCudartVersion());
  std::printf("cudnnGetVersion %zu cudart %zu max device %zu\n", cudnnGetVersion(), cudnnGetCudartVersion(),
              cudnnGetMaxDeviceVersion());
  for (int t = 0; t < 4; ++t) {  // MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL, then one past them
    const auto type = static_cast<libraryPropertyType>(t);
    int a = -1, b = -1, c = -1;
    const int sa = cublasGetProperty(type, &a), sb = cublasLtGetProperty(type, &b), sc = cudnnGetProperty(type, &c);
    std::printf("property %d: cublas %d %d, cublasLt %d %d, cudnn %d %d\n", t, sa, a, sb, b, sc, c);
  }
  std::printf("property(null): cublas %d, cublasLt %d, cudnn %d\n", cublasGetProperty(MAJOR_VERSION, nullptr),
              cublasLtGetProperty(MAJOR_VERSION, nullptr), cudnnGetProperty(MAJOR_VERSION, nullptr));
  return 0;
}
