# SPDX-License-Identifier: Apache-2.0
# End-to-end cuBLAS/cuBLASLt tests: the examples in examples/cublas (nvcc, linked with the toolkit's cuBLAS) run
# with our libcudart.so.13, libcublas.so.13 and libcublasLt.so.13 preloaded. Included at the end of
# tests/e2e/CMakeLists.txt, whose RUN_EXPECT, GENIE_SANITIZER_PRELOAD, GENIE_LIB_DIR and GENIE_EXAMPLES_DIR it uses.
if(NOT TARGET example_cublas_api OR NOT TARGET cublas13)
  return()
endif()
set(GENIE_CUBLAS_PRELOAD
  ${GENIE_SANITIZER_PRELOAD}${GENIE_LIB_DIR}/libcudart.so.13:${GENIE_LIB_DIR}/libcublas.so.13:${GENIE_LIB_DIR}/libcublasLt.so.13)

foreach(ex cublas_api cublaslt_api)
  add_test(NAME e2e_${ex}
    COMMAND ${RUN_EXPECT} 0 "${ex}: 0 failed" -- env LD_PRELOAD=${GENIE_CUBLAS_PRELOAD} ${GENIE_EXAMPLES_DIR}/${ex})
  set_tests_properties(e2e_${ex} PROPERTIES LABELS e2e TIMEOUT 120 FAIL_REGULAR_EXPRESSION "^FAIL ")
endforeach()

if(TARGET example_cudnn_api AND TARGET cudnn9)
  add_test(NAME e2e_cudnn_api
    COMMAND ${RUN_EXPECT} 0 "cudnn_api: 0 failed" -- env
            LD_PRELOAD=${GENIE_SANITIZER_PRELOAD}${GENIE_LIB_DIR}/libcudart.so.13:${GENIE_LIB_DIR}/libcudnn.so.9
            ${GENIE_EXAMPLES_DIR}/cudnn_api)
  set_tests_properties(e2e_cudnn_api PROPERTIES LABELS e2e TIMEOUT 120 FAIL_REGULAR_EXPRESSION "^FAIL ")
endif()

# Status names and texts, versions and properties of cudart, cuBLAS, cuBLASLt, cuDNN and NCCL: the same as NVIDIA's
# libraries give (they answer these without a GPU, from the toolkit's lib64).
if(TARGET example_no_gpu_answers AND TARGET cublas13 AND TARGET cudnn9 AND TARGET nccl2)
  add_test(NAME e2e_no_gpu_answers
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/no_gpu_answers.sh ${GENIE_EXAMPLES_DIR}/no_gpu_answers ${GENIE_CUDA_ROOT}/lib64
            ${GENIE_CUBLAS_PRELOAD}:${GENIE_LIB_DIR}/libcudnn.so.9:${GENIE_LIB_DIR}/libnccl.so.2)
  set_tests_properties(e2e_no_gpu_answers PROPERTIES LABELS e2e TIMEOUT 120)
endif()

# Timing: CUDA events around cuBLAS and cuBLASLt GEMMs must measure what `genie cost gemm` predicts, for each
# dtype, on the default device and on another preset.
set(GENIE_CUBLAS_TIMING ${CMAKE_CURRENT_SOURCE_DIR}/cublas_timing.sh)
foreach(case "h200 bf16 4096 4096 4096" "h200 fp16 8192 1024 3072" "h200 fp32 2048 2048 1024"
             "h200 tf32 4096 1536 2048" "a100-sxm4-80gb bf16 12288 4096 1024")
  string(REPLACE " " ";" args "${case}")
  string(REPLACE " " "_" name "${case}")
  add_test(NAME e2e_cublas_timing_${name}
    COMMAND ${RUN_EXPECT} 0 "cublas_gemm_timing: 0 failed" -- ${GENIE_CUBLAS_TIMING} ${CMAKE_BINARY_DIR}/bin/genie
            ${GENIE_CUBLAS_PRELOAD} ${GENIE_EXAMPLES_DIR}/cublas_gemm_timing ${args})
  set_tests_properties(e2e_cublas_timing_${name} PROPERTIES LABELS e2e TIMEOUT 120 FAIL_REGULAR_EXPRESSION "^FAIL ")
endforeach()
