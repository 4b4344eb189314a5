// SPDX-License-Identifier: Apache-2.0
// Prints the name and text every library gives each status code: cudaGetErrorName / cudaGetErrorString (codes
// 0-1023 and 10000), cublas(Lt)GetStatusName / GetStatusString (0-31), cudnnGetErrorString (0-5999) and
// ncclGetErrorString (0-15), one line per code. Needs no GPU: tests/e2e/status_strings.sh runs it once on NVIDIA's
// libraries and once on Genie's, and the two outputs must be the same.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
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
  for (int code = 0; code < 16; ++code)
    std::printf("nccl %d %s\n", code, ncclGetErrorString(static_cast<ncclResult_t>(code)));
  return 0;
}
