# SPDX-License-Identifier: Apache-2.0
# Host hygiene (docs/SECURITY.md): no shared-memory file of a job is left in /dev/shm when a rank is killed or
# dies in the middle of a collective (simulated fabric, libfabric shm, under genie run), the job's files are
# owner-only with unpredictable names, and `genie testbed` never removes what it did not create. Included at
# the end of tests/e2e/CMakeLists.txt.
if(NOT (TARGET nccl2 AND TARGET example_faults AND TARGET example_soak_collectives))
  return()
endif()
set(HYGIENE_SH ${CMAKE_CURRENT_SOURCE_DIR}/hygiene.sh)
foreach(t shm_sim_killed shm_fabric_killed shm_fabric_deadpeer shm_genie_run_killed shm_genie_run_leftover listen_loopback)
  add_test(NAME e2e_hygiene_${t} COMMAND ${HYGIENE_SH} ${t} ${CMAKE_BINARY_DIR} ${GENIE_EXAMPLES_DIR})
  set_tests_properties(e2e_hygiene_${t} PROPERTIES LABELS e2e TIMEOUT 120 PROCESSORS 2
    ENVIRONMENT "GENIE_SANITIZER_PRELOAD=${GENIE_SANITIZER_PRELOAD}" FAIL_REGULAR_EXPRESSION "^FAIL "
    SKIP_RETURN_CODE 77)
endforeach()
foreach(t testbed_foreign_bridge testbed_foreign_namespace testbed_forged_state)
  add_test(NAME e2e_hygiene_${t} COMMAND ${HYGIENE_SH} ${t} ${CMAKE_BINARY_DIR} ${GENIE_EXAMPLES_DIR})
  set_tests_properties(e2e_hygiene_${t} PROPERTIES LABELS e2e TIMEOUT 120 SKIP_RETURN_CODE 77
    RESOURCE_LOCK genie_testbed FAIL_REGULAR_EXPRESSION "^FAIL ")
endforeach()
