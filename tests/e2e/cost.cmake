# SPDX-License-Identifier: Apache-2.0
# End-to-end tests of the cost-model commands: `genie cost` answers on its last line; `genie calibrate
# --from-trace` turns a Kineto trace into a table that `genie cost` and the runtime (GENIE_FAKECUDA_COST_TABLE)
# use for exact matches. Included at the end of tests/e2e/CMakeLists.txt (RUN_EXPECT, GENIE_EXAMPLES_DIR ...).
set(GENIE_BIN ${CMAKE_BINARY_DIR}/bin/genie)
set(GENIE_TRACE_FIXTURE ${CMAKE_SOURCE_DIR}/tests/fakecuda/data/kineto_step_trace.json)
set(GENIE_TRACE_TABLE ${CMAKE_BINARY_DIR}/tests/kineto_step_table.json)

# The last line is the predicted time in microseconds, alone.
add_test(NAME e2e_genie_cost_gemm
  COMMAND ${RUN_EXPECT} 0 "^[0-9]+\\.[0-9]{3}$" -- ${GENIE_BIN} cost gemm --device h100-sxm --dtype bf16
          --m 8192 --n 8192 --k 8192)
add_test(NAME e2e_genie_cost_kernel
  COMMAND ${RUN_EXPECT} 0 "^[0-9]+\\.[0-9]{3}$" -- ${GENIE_BIN} cost kernel --device h200
          --name "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_"
          --grid 16384 --block 128)
add_test(NAME e2e_genie_cost_bad_grid
  COMMAND ${RUN_EXPECT} 2 "--grid '16384,0': expected" -- ${GENIE_BIN} cost kernel --name k --grid 16384,0 --block 1)

# Trace -> table -> exact matches (the traced median of the add kernel's grid-16384 launches is 49.118 us).
add_test(NAME e2e_genie_calibrate_trace
  COMMAND ${RUN_EXPECT} 0 "7 kernel events, 5 distinct" -- ${GENIE_BIN} calibrate --from-trace ${GENIE_TRACE_FIXTURE}
          -o ${GENIE_TRACE_TABLE})
add_test(NAME e2e_genie_cost_kernel_from_table
  COMMAND ${RUN_EXPECT} 0 "^49\\.118$" -- ${GENIE_BIN} cost kernel --table ${GENIE_TRACE_TABLE}
          --name "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_"
          --grid 16384 --block 128)
set_tests_properties(e2e_genie_cost_kernel_from_table PROPERTIES DEPENDS e2e_genie_calibrate_trace)
add_test(NAME e2e_genie_calibrate_bad_trace
  COMMAND ${RUN_EXPECT} 2 "kineto_bad_trace.json: /traceEvents/1/args/block" -- ${GENIE_BIN} calibrate --from-trace
          ${CMAKE_CURRENT_SOURCE_DIR}/data/kineto_bad_trace.json)
set_tests_properties(e2e_genie_cost_gemm e2e_genie_cost_kernel e2e_genie_cost_bad_grid e2e_genie_calibrate_trace
  e2e_genie_cost_kernel_from_table e2e_genie_calibrate_bad_trace PROPERTIES LABELS e2e TIMEOUT 60)

# The runtime uses the traced table: the timing example's spin() takes the traced 20 ms per launch.
if(TARGET example_timing)
  add_test(NAME e2e_timing_from_trace_table
    COMMAND ${RUN_EXPECT} 0 "timing: 0 failed" -- env LD_PRELOAD=${GENIE_SANITIZER_PRELOAD}${GENIE_LIB_DIR}/libcudart.so.13
            GENIE_FAKECUDA_COST_TABLE=${GENIE_TRACE_TABLE} ${GENIE_EXAMPLES_DIR}/timing 0.0001)
  set_tests_properties(e2e_timing_from_trace_table PROPERTIES LABELS e2e TIMEOUT 60 DEPENDS e2e_genie_calibrate_trace
    FAIL_REGULAR_EXPRESSION "^FAIL ")
endif()
