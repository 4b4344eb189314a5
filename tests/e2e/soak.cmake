# SPDX-License-Identifier: Apache-2.0
# Soak (label slow): 10^6 kernel launches and 10^6 small all-reduces in one job with flat memory. Each program
# samples its resident set at every tenth of the run and fails if it grew by more than 4 MiB from the 10% sample
# to the last: measured growth is 0.1-0.4 MiB (docs/BENCHMARKS.md, "Soak"), and a leak of 5 bytes per call (4 MiB
# over the last 9 x 10^5 calls) would exceed it. Under genie run the coordinator is held to the same bound once
# the calls it keeps in detail (--report-max-calls) are full. Included at the end of tests/e2e/CMakeLists.txt.
if(NOT TARGET example_soak_launches)
  return()
endif()
set(SOAK_BOUND_MIB 4)
genie_add_e2e(e2e_soak_launches soak_launches ARGS 1000000 ${SOAK_BOUND_MIB} LABELS slow soak)
set_tests_properties(e2e_soak_launches PROPERTIES TIMEOUT 120)
if(TARGET nccl2 AND TARGET example_soak_collectives)
  genie_add_e2e(e2e_soak_collectives_devices soak_collectives NCCL ARGS devices 2 1000000 ${SOAK_BOUND_MIB}
    LABELS slow soak)
  genie_add_e2e(e2e_soak_collectives_proc soak_collectives NCCL ARGS proc 2 1000000 ${SOAK_BOUND_MIB}
    LABELS slow soak)
  # 10^5 calls through the coordinator (150-600 us each on the loaded 2-core VM), 10^4 kept in detail.
  add_test(NAME e2e_soak_collectives_genie_run
    COMMAND ${RUN_EXPECT} 0 "coordinator RSS growth from the 10% sample to the last within ${SOAK_BOUND_MIB} MiB: Expectation 1 / Actual 1"
            -- env ${CMAKE_BINARY_DIR}/bin/genie run -n 2 --no-report
            --report-max-calls 10000 -- ${GENIE_EXAMPLES_DIR}/soak_collectives env 2 100000 ${SOAK_BOUND_MIB} 4 100
            ${SOAK_BOUND_MIB})
  set_tests_properties(e2e_soak_collectives_devices e2e_soak_collectives_proc e2e_soak_collectives_genie_run
    PROPERTIES LABELS "slow;soak" TIMEOUT 300 PROCESSORS 2 FAIL_REGULAR_EXPRESSION "FAIL ")
endif()

# Scale (label slow): 256 ranks on the 2-core machine in virtual mode, as 256 rank processes under genie run (32
# emulated nodes of 8, every call through the coordinator, the report written) and as 256 threads of one process.
# Each rank checks every sampled all-reduce and holds its RSS growth to 64 MiB; run_expect checks the exit code and
# that the last rank finished. Measured: ~12 s and ~8 s on the 2-core Intel VM, 54 s for the processes on the 2-vCPU
# AMD EPYC VM (docs/BENCHMARKS.md, "Scale").
if(TARGET nccl2 AND TARGET example_soak_collectives)
  add_test(NAME e2e_scale_256_processes
    COMMAND ${RUN_EXPECT} 0 "\\[rank255\\]: soak_collectives: 0 failed"
            -- ${CMAKE_BINARY_DIR}/bin/genie run -n 256 --nodes 32 --report ${CMAKE_BINARY_DIR}/tests/e2e/reports/scale256
            -- ${GENIE_EXAMPLES_DIR}/soak_collectives env 256 100 64)
  add_test(NAME e2e_scale_256_threads
    COMMAND ${RUN_EXPECT} 0 "soak_collectives: 0 failed"
            -- env GENIE_GPUS=256 LD_PRELOAD=${GENIE_SANITIZER_PRELOAD}${GENIE_LIB_DIR}/libcudart.so.13:${GENIE_LIB_DIR}/libnccl.so.2
            ${GENIE_EXAMPLES_DIR}/soak_collectives threads 256 100 64)
  set_tests_properties(e2e_scale_256_processes e2e_scale_256_threads
    PROPERTIES LABELS "slow" TIMEOUT 300 PROCESSORS 2 FAIL_REGULAR_EXPRESSION "FAIL ")
endif()
