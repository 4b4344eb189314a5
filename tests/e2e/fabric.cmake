# SPDX-License-Identifier: Apache-2.0
# End-to-end tests of the real fabric (libfabric): the NCCL correctness examples with GENIE_FABRIC=real on one
# host (shm, and tcp on loopback), and across the hosts of a network-namespace testbed (tcp) through
# `genie run --testbed`, plus the testbed's own behaviour and a link taken down during a run. Included at the
# end of tests/e2e/CMakeLists.txt.
if(NOT (TARGET nccl2 AND TARGET example_collectives))
  return()
endif()
set(REAL_SHM GENIE_FABRIC=real:shm GENIE_CLOCK=realtime)
set(REAL_TCP GENIE_FABRIC=real:tcp GENIE_CLOCK=realtime)
# shm: by default peers read each other's device buffers in place (the messages carry where); the same calls with
# the bytes in libfabric's messages instead. Exit 0 is every data check passing; the regex says which way they went.
genie_add_e2e(e2e_fabric_shm_collectives collectives NCCL ENV ${REAL_SHM} NCCL_DEBUG=INFO ARGS proc 4
  REGEX "rank 3: shm transfers are read in place from the sender's buffers")
genie_add_e2e(e2e_fabric_shm_collectives_messages collectives NCCL
  ENV ${REAL_SHM} GENIE_SHIM_FABRIC_SHM_DIRECT=0 ARGS proc 4)
genie_add_e2e(e2e_fabric_shm_collectives_threads collectives NCCL ENV ${REAL_SHM} ARGS threads 3)
genie_add_e2e(e2e_fabric_shm_p2p p2p NCCL ENV ${REAL_SHM} ARGS proc 4)
genie_add_e2e(e2e_fabric_shm_comm_ops comm_ops NCCL ENV ${REAL_SHM} ARGS 4)
genie_add_e2e(e2e_fabric_tcp_collectives collectives NCCL ENV ${REAL_TCP} ARGS proc 4)
genie_add_e2e(e2e_fabric_tcp_p2p p2p NCCL ENV ${REAL_TCP} ARGS devices 4)
genie_add_e2e(e2e_fabric_missing_provider collectives NCCL ENV GENIE_FABRIC=real:nosuch GENIE_CLOCK=realtime
  ARGS proc 2 RC 1 REGEX "libfabric provider 'nosuch' is not available.*providers present on this machine: .*tcp")
genie_add_e2e(e2e_fabric_needs_realtime collectives NCCL ENV GENIE_FABRIC=real ARGS proc 2 RC 1
  REGEX "needs GENIE_CLOCK=realtime")

# Testbed tests need root and network namespaces; fabric_testbed.sh skips (exit 77) where they are missing.
set(TESTBED_SH ${CMAKE_CURRENT_SOURCE_DIR}/fabric_testbed.sh)
foreach(t lifecycle collectives p2p linkdown compare)
  add_test(NAME e2e_fabric_testbed_${t}
    COMMAND ${TESTBED_SH} ${t} ${CMAKE_BINARY_DIR} ${GENIE_EXAMPLES_DIR})
  set_tests_properties(e2e_fabric_testbed_${t} PROPERTIES LABELS e2e TIMEOUT 240 PROCESSORS 2 SKIP_RETURN_CODE 77
    RESOURCE_LOCK genie_testbed FAIL_REGULAR_EXPRESSION "^FAIL ")
endforeach()
