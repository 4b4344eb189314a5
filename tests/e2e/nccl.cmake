# SPDX-License-Identifier: Apache-2.0
# End-to-end NCCL tests: the NCCL examples (built with nvcc against the toolkit's nccl.h) run on our
# libcudart.so.13 and libnccl.so.2 through LD_PRELOAD. Included at the end of tests/e2e/CMakeLists.txt, whose
# genie_add_e2e (NCCL option), RUN_EXPECT, GENIE_SANITIZER_PRELOAD and GENIE_EXAMPLES_DIR it uses.
if(TARGET nccl2 AND TARGET example_collectives)
  foreach(mode proc threads devices)
    genie_add_e2e(e2e_nccl_collectives_${mode} collectives NCCL ARGS ${mode} 4)
    genie_add_e2e(e2e_nccl_p2p_${mode} p2p NCCL ARGS ${mode} 4)
  endforeach()
  genie_add_e2e(e2e_nccl_comm_ops comm_ops NCCL ARGS 4)
  # Faults: the program checks what each rank observed (exit 0 only if as expected); the regex checks the
  # diagnostic the shim prints on stderr, words the program itself never prints.
  genie_add_e2e(e2e_nccl_faults_mismatch faults NCCL ARGS mismatch 3
    REGEX "collective mismatch on comm 0x[0-9a-f]+ \\(call #2\\): rank 0 called AllReduce\\(count=1024, datatype=float, op=sum\\) but rank 1 called AllReduce\\(count=2048, datatype=float, op=sum\\)")
  genie_add_e2e(e2e_nccl_faults_hang faults NCCL ENV GENIE_HANG_TIMEOUT=2 ARGS hang 3
    REGEX "rank [01]: AllReduce\\(count=1024, datatype=float, op=sum\\) #2 has waited 2\\.[0-9] s \\(GENIE_HANG_TIMEOUT\\) for missing rank 2;")
  genie_add_e2e(e2e_nccl_faults_deadpeer faults NCCL ARGS deadpeer 3
    REGEX "peer rank 2 \\(pid [0-9]+\\) exited during AllReduce\\(count=1024, datatype=float, op=sum\\) #2")
  genie_add_e2e(e2e_nccl_overlap overlap NCCL)
  # NCCL_DEBUG=TRACE names each call (tests/e2e/nccl_pattern.py reads these lines to check training patterns).
  genie_add_e2e(e2e_nccl_trace_collectives collectives NCCL ENV NCCL_DEBUG=TRACE ARGS threads 2
    REGEX "NCCL TRACE ncclReduceScatter: sendbuff 0x[0-9a-f]+ recvbuff 0x[0-9a-f]+ count [0-9]+ datatype [0-9]+ op [0-9]+ root 0 comm 0x[0-9a-f]+ \\[nranks=2\\]")
  genie_add_e2e(e2e_nccl_trace_p2p p2p NCCL ENV NCCL_DEBUG=TRACE ARGS threads 2
    REGEX "NCCL TRACE ncclRecv: buff 0x[0-9a-f]+ count [0-9]+ datatype [0-9]+ peer [01] comm 0x[0-9a-f]+ \\[nranks=2\\]")
  # Virtual host time includes the CUDA API's own CPU time, which sanitizers inflate about tenfold: the host then
  # falls behind the modelled GPU and the timing comparison is meaningless in those builds.
  if(NOT GENIE_SANITIZE)
    genie_add_e2e(e2e_nccl_collective_timing collective_timing NCCL ARGS 4 0.01)
  endif()

  # genie run: one process per rank with torchrun's environment; the examples' env mode reads it.
  add_test(NAME e2e_genie_run_collectives
    COMMAND ${RUN_EXPECT} 0 "\\[rank3\\]: collectives: 0 failed" -- env LD_PRELOAD=${GENIE_SANITIZER_PRELOAD}
            ${CMAKE_BINARY_DIR}/bin/genie run -n 4 -- ${GENIE_EXAMPLES_DIR}/collectives env)
  add_test(NAME e2e_genie_run_p2p_two_nodes
    COMMAND ${RUN_EXPECT} 0 "nNodes 2" -- env LD_PRELOAD=${GENIE_SANITIZER_PRELOAD} NCCL_DEBUG=INFO
            ${CMAKE_BINARY_DIR}/bin/genie run -n 4 --nodes 2 -- ${GENIE_EXAMPLES_DIR}/p2p env)
  # A rank that fails ends the job with its exit code; the others are stopped after the grace period.
  add_test(NAME e2e_genie_run_failure
    COMMAND ${RUN_EXPECT} 3 "genie run: rank 1 exited with code 3" -- env LD_PRELOAD=${GENIE_SANITIZER_PRELOAD}
            ${CMAKE_BINARY_DIR}/bin/genie run -n 3 --grace 0.5
            -- sh -c "[ $RANK = 1 ] && exit 3; sleep 30")
  set_tests_properties(e2e_genie_run_collectives e2e_genie_run_p2p_two_nodes e2e_genie_run_failure PROPERTIES
    LABELS e2e TIMEOUT 180 PROCESSORS 2 FAIL_REGULAR_EXPRESSION "^FAIL ")
endif()
