# SPDX-License-Identifier: Apache-2.0
# Timing-only runs (GENIE_DATA=none, genie run --data none; docs/timing-only.md): device memory stays address space
# without host pages while copies, memsets and collectives keep their modelled times, and capacity stays exact.
# Included from tests/e2e/CMakeLists.txt after torch.cmake (whose venv fixture the PyTorch cases use).
set(GENIE_TIMING_ONLY_SH ${CMAKE_CURRENT_SOURCE_DIR}/timing_only.sh)
# Peak resident set bounds (MiB). The sanitizers' allocators and shadow memory have their own footprint: unchecked.
set(timing_only_rss 300)
if(GENIE_SANITIZE)
  set(timing_only_rss 0)
endif()
if(TARGET example_timing_only)
  add_test(NAME e2e_timing_only_cuda
    COMMAND ${GENIE_TIMING_ONLY_SH} cuda ${CMAKE_BINARY_DIR}/bin/genie
            ${GENIE_SANITIZER_PRELOAD}${GENIE_LIB_DIR}/libcudart.so.13 ${GENIE_EXAMPLES_DIR}/timing_only ${timing_only_rss})
  set_tests_properties(e2e_timing_only_cuda PROPERTIES LABELS e2e TIMEOUT 180 FAIL_REGULAR_EXPRESSION "^FAIL ")
endif()
if(TARGET example_timing_only_nccl)
  add_test(NAME e2e_timing_only_nccl
    COMMAND ${GENIE_TIMING_ONLY_SH} nccl ${CMAKE_BINARY_DIR}/bin/genie ${GENIE_EXAMPLES_DIR}/timing_only_nccl
            ${timing_only_rss})
  set_tests_properties(e2e_timing_only_nccl PROPERTIES LABELS e2e TIMEOUT 240 PROCESSORS 2
    FAIL_REGULAR_EXPRESSION "^FAIL ")
endif()
# Configured without genie run, a process with both GENIE_DATA=none and the real fabric is told once that the fabric
# still moves every byte (the collectives example's data checks then pass: its buffers are control data).
if(TARGET example_collectives AND TARGET nccl2)
  genie_add_e2e(e2e_timing_only_real_fabric_warns collectives NCCL
    ENV GENIE_DATA=none GENIE_FABRIC=real:shm GENIE_CLOCK=realtime ARGS proc 2
    REGEX "GENIE_DATA=none does not apply to the real fabric")
endif()

# PyTorch: one H100 holding a 60 GiB training state (15 GiB of bf16 parameters, their gradients and fused Adam's two
# moments) in a rank of a few hundred MB, exact allocator numbers; 80 GiB of it raises torch.OutOfMemoryError; DDP on
# two ranks. tests/e2e/torch_timing_only.py checks itself.
if(GENIE_SANITIZE OR NOT DEFINED GENIE_TORCH_PY)
  return()
endif()
# genie_add_timing_only_torch(<name> <ranks> [ENV k=v ...] ARGS script args...)
function(genie_add_timing_only_torch name ranks)
  cmake_parse_arguments(T "" "" "ENV;ARGS" ${ARGN})
  add_test(NAME ${name}
    COMMAND ${RUN_EXPECT} 0 "torch_timing_only: 0 failed" -- env GENIE_HOST_CPU_SCALE=0 ${T_ENV}
            ${CMAKE_BINARY_DIR}/bin/genie run -n ${ranks} --device h100-sxm --data none --no-report --
            ${GENIE_TORCH_PY} ${CMAKE_CURRENT_SOURCE_DIR}/torch_timing_only.py ${T_ARGS})
  set_tests_properties(${name} PROPERTIES LABELS "e2e;torch" TIMEOUT 300 PROCESSORS 2 FIXTURES_REQUIRED torch_venv
    FAIL_REGULAR_EXPRESSION "FAIL ")
endfunction()
genie_add_timing_only_torch(e2e_torch_timing_only_60g 1 ARGS --layers 30 --checkpoint --max-rss-mib 3072)
genie_add_timing_only_torch(e2e_torch_timing_only_oom 1 ARGS --layers 40 --expect-oom)
genie_add_timing_only_torch(e2e_torch_timing_only_ddp2 2 ARGS --layers 8 --checkpoint --max-rss-mib 3072)
# PyTorch's cudaMallocAsync backend reads its memory statistics from the default pool's attributes.
genie_add_timing_only_torch(e2e_torch_timing_only_async_alloc 1 ENV PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
  ARGS --layers 30 --max-rss-mib 3072)
