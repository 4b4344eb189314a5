# SPDX-License-Identifier: Apache-2.0
# End-to-end NCCL tests: the NCCL examples (built with nvcc against the toolkit's nccl.h) run on our
# libcudart.so.13 and libnccl.so.2 through LD_PRELOAD. Included at the end of tests/e2e/CMakeLists.txt, whose
# genie_add_e2e (NCCL option), RUN_EXPECT, GENIE_SANITIZER_PRELOAD and GENIE_EXAMPLES_DIR it uses.
if(TARGET nccl2 AND TARGET example_collectives)
  foreach(mode proc threads devices)
    genie_add_e2e(e2e_nccl_collectives_${mode} collectives NCCL ARGS ${mode} 4)
    genie_add_e2e(e2e_nccl_p2p_${mode} p2p NCCL ARGS ${mode} 4)
  endforeach()
  # Each device's NULL stream, from one thread (nccl-tests -y 1 -g N): a call runs on its communicator's device's
  # legacy stream, not the current device's.
  genie_add_e2e(e2e_nccl_collectives_devices_null collectives NCCL ARGS devices-null 2)
  genie_add_e2e(e2e_nccl_p2p_devices_null p2p NCCL ARGS devices-null 3)
  genie_add_e2e(e2e_nccl_comm_ops comm_ops NCCL ARGS 4)
  # NCCL 2.29-2.32: grow, one-sided put/signal/wait, suspend/resume, per-call config, parameters, encryption.
  genie_add_e2e(e2e_nccl_232_api nccl232_api NCCL ARGS 4)
  # ncclCollConfig_t reaches netsim's tuning: maxCTAs=1 with algSelection=ring gives a one-channel ring.
  genie_add_e2e(e2e_nccl_232_call_config nccl232_api NCCL ENV NCCL_DEBUG=INFO ARGS 2
    REGEX "all_reduce: 67108864 x float on 2 ranks -> Ring/[A-Za-z0-9]+, 1 channels, [0-9.]+ us \\(ncclCollConfig_t: minCTAs 0 maxCTAs 1 algSelection 'ring'\\)")
  # NCCL_DEBUG_FILE: one file per process (%h, %p expanded), nothing on stderr.
  add_test(NAME e2e_nccl_debug_file
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/nccl_debug_file.sh
            ${GENIE_SANITIZER_PRELOAD}${GENIE_LIB_DIR}/libcudart.so.13:${GENIE_LIB_DIR}/libnccl.so.2
            ${GENIE_EXAMPLES_DIR}/collectives)
  set_tests_properties(e2e_nccl_debug_file PROPERTIES LABELS e2e TIMEOUT 120 FAIL_REGULAR_EXPRESSION "^FAIL ")
  # NCCL_DEBUG=WARN: each refused call is an NCCL WARN line with the text ncclGetLastError returns.
  genie_add_e2e(e2e_nccl_debug_warn comm_ops NCCL ENV NCCL_DEBUG=WARN ARGS 2
    REGEX "NCCL WARN ncclBroadcast: root 2 is out of range for a communicator of 2 ranks")
  # One rank, as on a single real GPU (scripts/real-gpu-check.sh): NCCL copies instead of reducing, refuses fp8
  # avg/PreMulSum there, and leaves ncclGroupSimulateEnd's estimate undefined.
  genie_add_e2e(e2e_nccl_collectives_one_rank collectives NCCL ARGS devices 1)
  genie_add_e2e(e2e_nccl_comm_ops_one_rank comm_ops NCCL ARGS 1)
  # fp8 reductions need sm90 (NCCL's taskAppend): on A100s the first fp8 AllReduce is refused, and says why.
  genie_add_e2e(e2e_nccl_fp8_needs_sm90 collectives NCCL ENV GENIE_DEVICE=a100-sxm4-80gb ARGS devices 2 RC 2
    REGEX "AllReduce fp8_e4m3 op=sum count=1000 root=0 out-of-place: ncclInvalidArgument \\(ncclAllReduce: FP8 reduction support begins with sm90 capable devices\\.\\)")
  # NCCL_ALGO / NCCL_PROTO: honoured per collective; a collective they leave no algorithm for is refused when it is
  # called (ncclInvalidUsage, as NCCL's "no algorithm/protocol available"); a malformed list fails the init.
  genie_add_e2e(e2e_nccl_algo_allreduce_tree_ll collectives NCCL ENV NCCL_ALGO=allreduce:tree NCCL_PROTO=LL
    NCCL_DEBUG=INFO ARGS threads 2 REGEX "NCCL INFO all_reduce: 1000 x int8 on 2 ranks -> Tree/LL")
  genie_add_e2e(e2e_nccl_algo_none_left collectives NCCL ENV NCCL_ALGO=PAT ARGS devices 2 RC 2
    REGEX "AllReduce int8 op=sum count=1000 root=0 out-of-place: ncclInvalidUsage \\(ncclAllReduce: no enabled algorithm/protocol can run all_reduce on hgx-h200")
  genie_add_e2e(e2e_nccl_algo_malformed collectives NCCL ENV NCCL_ALGO=Bogus ARGS proc 2 RC 1
    REGEX "ncclCommInitRank: NCCL_ALGO=.Bogus.: unknown value 'Bogus'")
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
  set(GENIE_BIN ${CMAKE_BINARY_DIR}/bin/genie)
  set(REPORT_TOOL ${CMAKE_CURRENT_SOURCE_DIR}/report_tool.py)
  set(REPORTS ${CMAKE_CURRENT_BINARY_DIR}/reports)
  add_test(NAME e2e_genie_run_collectives
    COMMAND ${RUN_EXPECT} 0 "\\[rank3\\]: collectives: 0 failed" -- env
            ${GENIE_BIN} run -n 4 --report ${REPORTS}/collectives -- ${GENIE_EXAMPLES_DIR}/collectives env)
  # The report of that job: schema, invariants (start = last arrival, busbw = algbw x factor, ...), trace.
  add_test(NAME e2e_report_collectives COMMAND python3 ${REPORT_TOOL} check ${REPORTS}/collectives --ranks 4)
  set_tests_properties(e2e_report_collectives PROPERTIES DEPENDS e2e_genie_run_collectives)
  add_test(NAME e2e_genie_run_p2p_two_nodes
    COMMAND ${RUN_EXPECT} 0 "nNodes 2" -- env NCCL_DEBUG=INFO
            ${GENIE_BIN} run -n 4 --nodes 2 --report ${REPORTS}/p2p -- ${GENIE_EXAMPLES_DIR}/p2p env)
  add_test(NAME e2e_report_p2p COMMAND python3 ${REPORT_TOOL} check ${REPORTS}/p2p --ranks 4)
  set_tests_properties(e2e_report_p2p PROPERTIES DEPENDS e2e_genie_run_p2p_two_nodes)
  # A rank that fails ends the job with its exit code; the others are stopped after the grace period, and the
  # report still says what happened.
  add_test(NAME e2e_genie_run_failure
    COMMAND ${RUN_EXPECT} 3 "genie run: rank 1 exited with code 3" -- env
            ${GENIE_BIN} run -n 3 --grace 0.5 --report ${REPORTS}/failure
            -- sh -c "[ $RANK = 1 ] && exit 3; sleep 30")
  add_test(NAME e2e_report_failure COMMAND python3 ${REPORT_TOOL} expect ${REPORTS}/failure
           "r['job']['exit_code'] == 3 and r['job']['first_failed_rank'] == 1 and [k['exit_code'] for k in r['job']['ranks']][1] == 3")
  set_tests_properties(e2e_report_failure PROPERTIES DEPENDS e2e_genie_run_failure)

  # Two communicators whose traffic shares the one 10 GB/s link of two_servers.json: all-reducing together
  # takes twice as long as one pair alone (the flow engine shares the link equally), and the report's
  # resolutions match the CUDA-event times the ranks measured.
  add_test(NAME e2e_coordinator_contention
    COMMAND ${RUN_EXPECT} 0 "rank 0 alone_ms [0-9.]+ together_ms [0-9.]+ ratio (1\\.9[5-9]|2\\.0[0-5])" --
            env GENIE_HOST_CPU_SCALE=0
            ${GENIE_BIN} run -n 4 --nodes 2 --gpus-per-node 2 --topology ${E2E_DATA}/two_servers.json
            --report ${REPORTS}/contention -- ${GENIE_EXAMPLES_DIR}/contention 4194304 3 0)
  # On an NVSwitch server the two pairs do not interfere.
  add_test(NAME e2e_coordinator_no_contention_nvswitch
    COMMAND ${RUN_EXPECT} 0 "rank 0 alone_ms [0-9.]+ together_ms [0-9.]+ ratio 1\\.00" --
            env GENIE_HOST_CPU_SCALE=0
            ${GENIE_BIN} run -n 4 --no-report -- ${GENIE_EXAMPLES_DIR}/contention 4194304 3 0)
  # Order independence: the same job with ranks delayed differently in wall time (jitter seeds 1 and 2) gives
  # identical virtual timelines.
  add_test(NAME e2e_coordinator_jitter_a
    COMMAND ${RUN_EXPECT} 0 "contention: 0 failed" -- env GENIE_HOST_CPU_SCALE=0
            ${GENIE_BIN} run -n 4 --nodes 2 --gpus-per-node 2 --topology ${E2E_DATA}/two_servers.json
            --report ${REPORTS}/jitter_a -- ${GENIE_EXAMPLES_DIR}/contention 1048576 3 1)
  add_test(NAME e2e_coordinator_jitter_b
    COMMAND ${RUN_EXPECT} 0 "contention: 0 failed" -- env GENIE_HOST_CPU_SCALE=0
            ${GENIE_BIN} run -n 4 --nodes 2 --gpus-per-node 2 --topology ${E2E_DATA}/two_servers.json
            --report ${REPORTS}/jitter_b -- ${GENIE_EXAMPLES_DIR}/contention 1048576 3 2)
  add_test(NAME e2e_coordinator_order_independent
    COMMAND python3 ${REPORT_TOOL} same ${REPORTS}/jitter_a ${REPORTS}/jitter_b)
  set_tests_properties(e2e_coordinator_order_independent PROPERTIES
    DEPENDS "e2e_coordinator_jitter_a;e2e_coordinator_jitter_b")
  add_test(NAME e2e_report_contention COMMAND python3 ${REPORT_TOOL} check ${REPORTS}/contention --ranks 4)
  set_tests_properties(e2e_report_contention PROPERTIES DEPENDS e2e_coordinator_contention)
  # genie report: the HTML page renders its charts in headless Chromium.
  add_test(NAME e2e_report_html
    COMMAND bash -c "${GENIE_BIN} report ${REPORTS}/contention -o ${REPORTS}/contention.html && python3 ${REPORT_TOOL} html ${REPORTS}/contention.html --png ${REPORTS}/contention.png")
  set_tests_properties(e2e_report_html PROPERTIES DEPENDS e2e_coordinator_contention TIMEOUT 180)
  add_test(NAME e2e_report_bad_input
    COMMAND ${RUN_EXPECT} 2 "genie report: .*/collectives/trace.json: \\$\\.schema: missing" --
            ${GENIE_BIN} report ${REPORTS}/collectives/trace.json -o ${REPORTS}/bad.html)
  set_tests_properties(e2e_report_bad_input PROPERTIES DEPENDS e2e_genie_run_collectives)
  # NVTX ranges (genie run points NVTX_INJECTION64_PATH at libgenie_nvtx.so): every rank's "step" range holds
  # its two 500 us kernels (1000 us of compute), one AllReduce not overlapped by compute (all of it exposed),
  # and compute + communication + idle add up to the range; the nested domain range and the start/end range
  # are recorded under their names.
  add_test(NAME e2e_genie_run_nvtx
    COMMAND ${RUN_EXPECT} 0 "\\[rank1\\]: nvtx_steps: 0 failed" -- env
            GENIE_HOST_CPU_SCALE=0 GENIE_FAKECUDA_COST_TABLE=${E2E_DATA}/nvtx_table.json
            ${GENIE_BIN} run -n 2 --report ${REPORTS}/nvtx -- ${GENIE_EXAMPLES_DIR}/nvtx_steps 4 262144)
  add_test(NAME e2e_report_nvtx COMMAND python3 ${REPORT_TOOL} expect ${REPORTS}/nvtx
    "[(x['rank'], x['index']) for x in r['ranges'] if x['name'] == 'step'] == [(k, i) for k in (0, 1) for i in range(4)] and all(abs(x['compute_us'] - 1000) < 0.01 and x['kernels'] == 2 and x['calls'] == 1 and x['communication_us'] > 0 and abs(x['exposed_communication_us'] - x['communication_us']) < 0.01 and abs(x['compute_us'] + x['communication_us'] + x['idle_us'] - x['time_us']) < 0.01 for x in r['ranges'] if x['name'] == 'step') and sorted((t['name'], t['ranks'], t['count']) for t in r['range_totals']) == [('example: forward', 2, 8), ('step', 2, 8), ('sync', 2, 8)]")
  set_tests_properties(e2e_report_nvtx PROPERTIES DEPENDS e2e_genie_run_nvtx)
  # genie report shows them: the per-name means and every range, names escaped.
  add_test(NAME e2e_report_html_nvtx
    COMMAND bash -c "${GENIE_BIN} report ${REPORTS}/nvtx -o ${REPORTS}/nvtx.html && grep -q 'Ranges (NVTX)' ${REPORTS}/nvtx.html && grep -q '<td>example: forward</td><td>2</td><td>8</td>' ${REPORTS}/nvtx.html")
  set_tests_properties(e2e_report_html_nvtx PROPERTIES DEPENDS e2e_genie_run_nvtx)
  # Open MPI's mpirun starting the ranks, on a coordinator started by hand (genie coordinator).
  find_program(GENIE_MPIRUN mpirun)
  if(GENIE_MPIRUN)
    add_test(NAME e2e_coordinator_mpirun
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/other_launchers.sh mpirun ${CMAKE_BINARY_DIR} ${REPORTS}/mpirun)
    set_tests_properties(e2e_coordinator_mpirun PROPERTIES LABELS e2e TIMEOUT 300 PROCESSORS 2
      FAIL_REGULAR_EXPRESSION "^FAIL " PASS_REGULAR_EXPRESSION "other_launchers: 0 failed")
  endif()
  # The coordinator killed mid-job, a rank refused for a wrong secret, a coordinator nobody listens at: the ranks
  # fail (exit non-zero, naming why) and none hangs (tests/e2e/coordinator_faults.sh).
  # The report directory cannot be created, or its file system is full: the job's result and exit code stand, one
  # line says why, nothing half-written is left (tests/e2e/report_faults.sh; `full` needs root, else skipped).
  # A rank computing outside Genie past the stall grace (in its CPU time) is relaxed; a sleeping one is found asleep.
  foreach(c spin sleep)
    add_test(NAME e2e_stall_rule_${c}
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/stall_rule.sh ${c} ${CMAKE_BINARY_DIR} ${GENIE_EXAMPLES_DIR})
    set_tests_properties(e2e_stall_rule_${c} PROPERTIES LABELS e2e TIMEOUT 120 PROCESSORS 2
      FAIL_REGULAR_EXPRESSION "^FAIL " PASS_REGULAR_EXPRESSION "stall_rule ${c}: 0 failed")
  endforeach()
  foreach(c nodir full)
    add_test(NAME e2e_report_fault_${c}
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/report_faults.sh ${c} ${CMAKE_BINARY_DIR} ${GENIE_EXAMPLES_DIR})
    set_tests_properties(e2e_report_fault_${c} PROPERTIES LABELS e2e TIMEOUT 120 PROCESSORS 2 SKIP_RETURN_CODE 77
      FAIL_REGULAR_EXPRESSION "^FAIL " PASS_REGULAR_EXPRESSION "report_faults ${c}: 0 failed")
  endforeach()
  if(TARGET example_soak_collectives)
    foreach(c killed secret unreachable)
      add_test(NAME e2e_coordinator_fault_${c}
        COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/coordinator_faults.sh ${c} ${CMAKE_BINARY_DIR} ${GENIE_EXAMPLES_DIR})
      set_tests_properties(e2e_coordinator_fault_${c} PROPERTIES LABELS e2e TIMEOUT 120 PROCESSORS 2
        FAIL_REGULAR_EXPRESSION "^FAIL " PASS_REGULAR_EXPRESSION "coordinator_faults ${c}: 0 failed")
    endforeach()
  endif()
  set_tests_properties(e2e_genie_run_collectives e2e_genie_run_p2p_two_nodes e2e_genie_run_failure
    e2e_coordinator_contention e2e_coordinator_no_contention_nvswitch e2e_coordinator_jitter_a e2e_genie_run_nvtx
    e2e_coordinator_jitter_b PROPERTIES
    LABELS e2e TIMEOUT 180 PROCESSORS 2 FAIL_REGULAR_EXPRESSION "^FAIL ")
  set_tests_properties(e2e_report_collectives e2e_report_p2p e2e_report_failure e2e_coordinator_order_independent
    e2e_report_contention e2e_report_html e2e_report_bad_input e2e_report_nvtx e2e_report_html_nvtx PROPERTIES LABELS e2e FAIL_REGULAR_EXPRESSION "^FAIL ")
endif()
