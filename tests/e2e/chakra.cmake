# SPDX-License-Identifier: Apache-2.0
# Chakra execution traces (docs/chakra.md): a job recorded with genie run --chakra and replayed with genie sim
# --workload at its own size gives back the live run's times (tests/e2e/chakra_replay.py). Included from
# tests/e2e/CMakeLists.txt. Tolerances: measured agreement is exact to the nanosecond for these jobs (0.000%,
# docs/validation.md "Record and replay"); 0.1% leaves room for the engine's event rounding, not for model error.
set(CHAKRA_REPLAY ${CMAKE_CURRENT_SOURCE_DIR}/chakra_replay.py)
find_program(GENIE_CHAKRA_PYTHON NAMES python3 REQUIRED)
if(TARGET nccl2 AND TARGET example_collectives)
  foreach(ex collectives p2p)
    add_test(NAME e2e_chakra_replay_${ex}
      COMMAND ${GENIE_CHAKRA_PYTHON} ${CHAKRA_REPLAY} --genie ${CMAKE_BINARY_DIR}/bin/genie --ranks 3 --tolerance 0.1
              -- ${GENIE_EXAMPLES_DIR}/${ex} env)
    set_tests_properties(e2e_chakra_replay_${ex} PROPERTIES LABELS e2e TIMEOUT 300 PROCESSORS 2
      PASS_REGULAR_EXPRESSION "chakra_replay: 0 failed" FAIL_REGULAR_EXPRESSION "^FAIL ")
  endforeach()
endif()
# A trace that is not one: genie sim says which file and where, and exits 1.
add_test(NAME e2e_chakra_bad_trace
  COMMAND bash -c "d=$(mktemp -d) && printf '\\x05\\x0a\\x03' > $d/x.0.et && ${CMAKE_BINARY_DIR}/bin/genie sim --workload $d; rc=$?; rm -rf $d; exit $rc")
set_tests_properties(e2e_chakra_bad_trace PROPERTIES LABELS e2e TIMEOUT 60
  PASS_REGULAR_EXPRESSION "genie sim: .*/x\\.0\\.et: GlobalMetadata: .*runs past the end")

# gpt.py (gpt-tiny) with data, pipeline, tensor and fully sharded data parallelism on 2 ranks (torch from .venv).
if(NOT GENIE_SANITIZE)
  foreach(mode ddp fsdp tp pp)
    set(args --ddp)
    if(mode STREQUAL "fsdp")
      set(args --fsdp)
    elseif(mode STREQUAL "tp")
      set(args --tp 2)
    elseif(mode STREQUAL "pp")
      set(args --pp 2)
    endif()
    add_test(NAME e2e_torch_chakra_replay_gpt_${mode}_2
      COMMAND ${GENIE_CHAKRA_PYTHON} ${CHAKRA_REPLAY} --genie ${CMAKE_BINARY_DIR}/bin/genie --ranks 2 --tolerance 0.1
              -- ${CMAKE_SOURCE_DIR}/.venv/bin/python ${CMAKE_SOURCE_DIR}/examples/pytorch/gpt.py --model gpt-tiny
              --batch 8 --seq 256 --steps 5 ${args})
    set_tests_properties(e2e_torch_chakra_replay_gpt_${mode}_2 PROPERTIES LABELS "e2e;torch" TIMEOUT 900 PROCESSORS 2
      FIXTURES_REQUIRED torch_venv PASS_REGULAR_EXPRESSION "chakra_replay: 0 failed" FAIL_REGULAR_EXPRESSION "^FAIL ")
  endforeach()
endif()
