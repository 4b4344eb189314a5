# SPDX-License-Identifier: Apache-2.0
# End-to-end PyTorch tests: the CUDA 13 build of torch 2.11.0 from PyPI, unmodified, in the .venv that
# scripts/setup-venv.sh makes (./scripts/test.sh runs it before ctest), on our libraries. Included from
# tests/e2e/CMakeLists.txt. They are always registered: without the .venv e2e_torch_venv fails with the reason
# and every other torch test, which requires it as a fixture, is reported as not run (a failure), never skipped.
# Labels: e2e (or slow) and torch, so `ctest -L torch` runs them and `ctest -LE torch` leaves them out.
# The pattern checker's own tests (plain Python, no torch).
find_program(GENIE_SYSTEM_PYTHON NAMES python3 REQUIRED)
add_test(NAME e2e_nccl_pattern_unit COMMAND ${GENIE_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/nccl_pattern_test.py)
set_tests_properties(e2e_nccl_pattern_unit PROPERTIES LABELS unit TIMEOUT 60)

# Not in sanitizer builds: torch is not instrumented, and under ASan/TSan its start-up alone takes minutes.
if(GENIE_SANITIZE)
  return()
endif()
set(GENIE_VENV ${CMAKE_SOURCE_DIR}/.venv CACHE PATH "Python environment with torch for the PyTorch e2e tests")
set(GENIE_TORCH_PY ${GENIE_VENV}/bin/python)
set(GENIE_TORCH_EXAMPLES ${CMAKE_SOURCE_DIR}/examples/pytorch)
set(GENIE_BIN ${CMAKE_BINARY_DIR}/bin/genie)

add_test(NAME e2e_torch_venv
  COMMAND bash -c "if [ ! -x '${GENIE_TORCH_PY}' ]; then echo 'FAIL no ${GENIE_TORCH_PY}: the PyTorch tests need the .venv that scripts/setup-venv.sh makes (./scripts/test.sh runs it; it needs PyPI)'; exit 1; fi; '${GENIE_TORCH_PY}' -c 'import torch, sys; v = (torch.__version__, torch.version.cuda); print(\"torch\", *v); sys.exit(0 if v[0].startswith(\"2.11.0\") and v[1].startswith(\"13.\") else 1)'")
set_tests_properties(e2e_torch_venv PROPERTIES LABELS "e2e;torch" TIMEOUT 120 FIXTURES_SETUP torch_venv
  PASS_REGULAR_EXPRESSION "torch 2\\.11\\.0\\+cu130 13\\.")

# The newest torch on PyPI (scripts/torch-newest-requirements.txt: torch 2.15.0+cu132, NCCL 2.30.7's API, cuDNN 9.26)
# in .venv-newest, which `scripts/setup-venv.sh --newest` makes (./scripts/test.sh runs it). Which tests run on it
# and why: docs/testing.md, "Two torch versions".
set(GENIE_VENV_NEWEST ${CMAKE_SOURCE_DIR}/.venv-newest CACHE PATH "Python environment with the newest torch")
set(GENIE_TORCH_NEWEST_PY ${GENIE_VENV_NEWEST}/bin/python)
add_test(NAME e2e_torch_newest_venv
  COMMAND bash -c "if [ ! -x '${GENIE_TORCH_NEWEST_PY}' ]; then echo 'FAIL no ${GENIE_TORCH_NEWEST_PY}: the newest-torch tests need the .venv-newest that scripts/setup-venv.sh --newest makes (./scripts/test.sh runs it; it needs PyPI)'; exit 1; fi; '${GENIE_TORCH_NEWEST_PY}' -c 'import torch, sys; v = (torch.__version__, torch.version.cuda); print(\"torch\", *v); sys.exit(0 if v[0].startswith(\"2.15.0\") and v[1].startswith(\"13.\") else 1)'")
set_tests_properties(e2e_torch_newest_venv PROPERTIES LABELS "e2e;torch" TIMEOUT 120 FIXTURES_SETUP torch_venv_newest
  PASS_REGULAR_EXPRESSION "torch 2\\.15\\.0\\+cu13[0-9] 13\\.")

# Sets `py` and `fixture` in the caller: the venv's Python and the fixture that checks it (NEWEST: the newest torch).
macro(genie_torch_venv newest)
  set(py ${GENIE_TORCH_PY})
  set(fixture torch_venv)
  if(${newest})
    set(py ${GENIE_TORCH_NEWEST_PY})
    set(fixture torch_venv_newest)
  endif()
endmacro()

# genie_add_torch(<name> RANKS n|0 [NEWEST] [RC rc] [REGEX re] [ENV k=v...] [LABEL l] ARGS script args...): RANKS 0
# runs one process with our libraries preloaded; otherwise `genie run -n RANKS`. NEWEST: on the newest torch.
function(genie_add_torch name)
  cmake_parse_arguments(T "NEWEST" "RANKS;RC;REGEX;LABEL;TIMEOUT" "ENV;ARGS" ${ARGN})
  genie_torch_venv(T_NEWEST)
  if(NOT T_RC)
    set(T_RC 0)
  endif()
  if(NOT T_LABEL)
    set(T_LABEL e2e)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  if(T_RANKS EQUAL 0)
    # What `genie env` prints: the libraries genie run preloads (torch's DT_RPATH wins over LD_LIBRARY_PATH).
    set(L ${GENIE_LIB_DIR})
    set(launch LD_PRELOAD=${L}/libcudart.so.13:${L}/libcublas.so.13:${L}/libcublasLt.so.13:${L}/libcudnn.so.9:${L}/libcupti.so.13:${L}/libnccl.so.2:${L}/libnvidia-ml.so.1
        LD_LIBRARY_PATH=${L} TORCH_CUDNN_SDPA_DEPRIORITIZED=1 PYTHONPATH=${L}/python ${py})
  else()
    set(launch ${GENIE_BIN} run -n ${T_RANKS} --device h200 -- ${py})
  endif()
  add_test(NAME ${name}
    COMMAND ${RUN_EXPECT} ${T_RC} ${T_REGEX} -- env ${T_ENV} ${launch} ${T_ARGS})
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABEL};torch" TIMEOUT ${T_TIMEOUT} PROCESSORS 2
    FIXTURES_REQUIRED ${fixture} FAIL_REGULAR_EXPRESSION "^FAIL ")
endfunction()

# torch.cuda on one process: discovery, allocator, copies timed against the real H200, streams, OOM, graphs.
# GENIE_HOST_CPU_SCALE=0: the timing checks compare GPU-bound work (a graph replay with the same work run
# eagerly); this machine's CPU time between launches would only add noise (up to +-30% under ctest -j2).
genie_add_torch(e2e_torch_cuda_basics RANKS 0 REGEX "cuda_basics: 0 failed" ENV GENIE_HOST_CPU_SCALE=0
  ARGS ${GENIE_TORCH_EXAMPLES}/cuda_basics.py)
genie_add_torch(e2e_torch_cuda_basics_expandable RANKS 0 REGEX "cuda_basics: 0 failed"
  ENV PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True GENIE_HOST_CPU_SCALE=0
  ARGS ${GENIE_TORCH_EXAMPLES}/cuda_basics.py --expandable)
# The versions torch sees are its wheels' (cuDNN 9.19.0 and cuBLAS 13.1.0 with torch 2.11), CUDA 13.2 for runtime and
# driver; torch's cuDNN compatibility check passes.
genie_add_torch(e2e_torch_library_versions RANKS 0 REGEX "library_versions: 0 failed" ENV GENIE_HOST_CPU_SCALE=0
  ARGS ${GENIE_TORCH_EXAMPLES}/library_versions.py)
# The same with torch 2.15.0+cu132 (cuDNN 9.26, cuBLAS 13.4.1, and the cudart calls 2.15 imports: libraries, graph
# nodes, user objects).
genie_add_torch(e2e_torch_newest_library_versions RANKS 0 NEWEST REGEX "library_versions: 0 failed"
  ENV GENIE_HOST_CPU_SCALE=0 ARGS ${GENIE_TORCH_EXAMPLES}/library_versions.py)
# NVML (libnvidia-ml.so.1) under genie run, 2 ranks: pynvml (nvidia-ml-py, scripts/torch-requirements.txt) and
# torch.cuda's NVML calls (device count before CUDA starts, utilization, memory_usage, temperature, power_draw,
# clock_rate, device_memory_used, list_gpu_processes) agree with the allocator and the timeline (docs/nvml.md).
genie_add_torch(e2e_torch_nvml RANKS 2 REGEX "\\[rank1\\]: nvml_monitoring: 0 failed"
  ARGS ${GENIE_TORCH_EXAMPLES}/nvml_monitoring.py)

# torch.distributed (nccl backend) on our libnccl.so.2: every collective, with and without device_id.
genie_add_torch(e2e_torch_distributed_4 RANKS 4 REGEX "\\[rank3\\]: distributed_ops rank 3: 0 failed"
  ARGS ${GENIE_TORCH_EXAMPLES}/distributed_ops.py)
genie_add_torch(e2e_torch_distributed_lazy_3 RANKS 3 REGEX "\\[rank2\\]: distributed_ops rank 2: 0 failed"
  ARGS ${GENIE_TORCH_EXAMPLES}/distributed_ops.py --no-device-id)
# Small CUDA tensors carry real values (fakecuda/python/genie_small_values.py, docs/pytorch.md "Small values"):
# reductions, scans, masks and nonzero after a collective, values sent by collectives; the four object collectives,
# which depend on it. Switched off (GENIE_TORCH_SMALL_VALUES=0) the same checks must fail.
genie_add_torch(e2e_torch_small_values_3 RANKS 3 REGEX "\\[rank0\\]: small_values rank 0: 0 failed"
  ARGS ${GENIE_TORCH_EXAMPLES}/small_values.py)
genie_add_torch(e2e_torch_small_values_off RANKS 2 RC 1 REGEX "\\[rank0\\]: small_values rank 0: [1-9][0-9]* failed"
  ENV GENIE_TORCH_SMALL_VALUES=0 ARGS ${GENIE_TORCH_EXAMPLES}/small_values.py)
genie_add_torch(e2e_torch_object_collectives_3 RANKS 3 REGEX "\\[rank2\\]: object_collectives rank 2: 0 failed"
  ARGS ${GENIE_TORCH_EXAMPLES}/object_collectives.py)
# The NCCL watchdog: a rank that never joins makes the others time out; a mismatched count is an async
# NCCL error. Either way torch takes the process down (SIGABRT: exit 134).
genie_add_torch(e2e_torch_watchdog_timeout RANKS 3 RC 134 LABEL slow
  REGEX "Watchdog caught collective operation timeout: WorkNCCL\\(SeqNum=2, OpType=ALLREDUCE, NumelIn=1024"
  ENV TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC=1000 ARGS ${GENIE_TORCH_EXAMPLES}/distributed_ops.py --watchdog-timeout)
genie_add_torch(e2e_torch_watchdog_error RANKS 3 RC 134 LABEL slow
  REGEX "watchdog thread terminated with exception: NCCL error: invalid usage"
  ENV TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC=1000 ARGS ${GENIE_TORCH_EXAMPLES}/distributed_ops.py --watchdog-error)

# The tensor-parallel model computes what the plain one does (on the CPU, gloo: kernels do not run on Genie).
foreach(n 2 4)
  add_test(NAME e2e_torch_gpt_tp_math_${n}
    COMMAND ${RUN_EXPECT} 0 "gpt_tp_cpu rank 0: 0 failed" -- env OMP_NUM_THREADS=1 ${GENIE_TORCH_PY} -m torch.distributed.run
            --standalone --nproc-per-node ${n} ${CMAKE_CURRENT_SOURCE_DIR}/gpt_tp_cpu_check.py)
  set_tests_properties(e2e_torch_gpt_tp_math_${n} PROPERTIES LABELS "e2e;torch" TIMEOUT 300 PROCESSORS 2
    FIXTURES_REQUIRED torch_venv FAIL_REGULAR_EXPRESSION "^FAIL |gpt_tp_cpu rank [0-9]+: [1-9]")
endforeach()

# examples/pytorch/gpt.py in every mode, 2 and 4 ranks: exit code, step lines, the NCCL pattern of the mode
# (tests/e2e/nccl_pattern.py) and, with --twice, identical step times in a second run.
set(GPT_TINY --model gpt-tiny --batch 8 --seq 256 --steps 5)
function(genie_add_gpt name ranks)
  cmake_parse_arguments(G "TWICE;NEWEST" "PATTERN;LABEL;KERNELS" "ENV;ARGS" ${ARGN})
  genie_torch_venv(G_NEWEST)
  set(extra "")
  if(G_KERNELS)
    list(APPEND extra --kernels ${G_KERNELS})
  endif()
  if(G_NEWEST)
    list(APPEND extra --torch-version 2.15.0)
  endif()
  if(G_PATTERN)
    list(APPEND extra --pattern ${G_PATTERN})
  endif()
  if(G_TWICE)
    list(APPEND extra --twice)
  endif()
  if(NOT G_LABEL)
    set(G_LABEL e2e)
  endif()
  add_test(NAME ${name}
    COMMAND env ${G_ENV} ${GENIE_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/torch_gpt.py --genie ${GENIE_BIN}
            --python ${py} --ranks ${ranks} ${extra} -- ${G_ARGS})
  set_tests_properties(${name} PROPERTIES LABELS "${G_LABEL};torch" TIMEOUT 900 PROCESSORS 2
    FIXTURES_REQUIRED ${fixture} PASS_REGULAR_EXPRESSION "torch_gpt: 0 failed" FAIL_REGULAR_EXPRESSION "^FAIL ")
endfunction()

# The example programs against a run of the same programs on a real H200 (tests/e2e/data/real_h200/): where the
# real libraries answered, Genie answers the same (tests/e2e/real_gpu_compare.py; docs/validation.md).
set(REAL_H200 ${CMAKE_CURRENT_SOURCE_DIR}/data/real_h200)
add_test(NAME e2e_real_gpu_compare
  COMMAND bash -c "'${CMAKE_SOURCE_DIR}/scripts/real-gpu-check.sh' '${GENIE_EXAMPLES_DIR}' '${CMAKE_CURRENT_BINARY_DIR}/real_gpu' --genie '${CMAKE_BINARY_DIR}' --no-gpt && ${GENIE_SYSTEM_PYTHON} '${CMAKE_CURRENT_SOURCE_DIR}/real_gpu_compare.py' '${REAL_H200}/real_gpu.log' '${CMAKE_CURRENT_BINARY_DIR}/real_gpu/real_gpu.log' '${REAL_H200}/differences.json'")
set_tests_properties(e2e_real_gpu_compare PROPERTIES LABELS "e2e;torch" TIMEOUT 600 PROCESSORS 2
  FIXTURES_REQUIRED torch_venv PASS_REGULAR_EXPRESSION " 0 disagreements")
# Genie's gpt2-124m step time against the one measured on a real H200: with the kernel table of that H200's
# profiler trace within 5%, with the cost model alone within 10% (docs/validation.md).
foreach(m table model)
  set(tol 0.05)
  if(m STREQUAL model)
    set(tol 0.10)
  endif()
  add_test(NAME e2e_torch_gpt2_124m_real_${m}
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/gpt_real_table.sh ${CMAKE_BINARY_DIR} ${GENIE_TORCH_PY}
            ${CMAKE_CURRENT_BINARY_DIR}/gpt_real_${m} ${tol} ${m})
  set_tests_properties(e2e_torch_gpt2_124m_real_${m} PROPERTIES LABELS "e2e;torch" TIMEOUT 600 PROCESSORS 2
    FIXTURES_REQUIRED torch_venv PASS_REGULAR_EXPRESSION "gpt_real_table: 0 failed")
endforeach()

genie_add_gpt(e2e_torch_gpt_single 1 TWICE ARGS ${GPT_TINY})
genie_add_gpt(e2e_torch_gpt_ddp_2 2 PATTERN ddp TWICE ARGS ${GPT_TINY} --ddp)
genie_add_gpt(e2e_torch_gpt_ddp_4 4 PATTERN ddp ARGS ${GPT_TINY} --ddp --no-device-id)
genie_add_gpt(e2e_torch_gpt_fsdp_2 2 PATTERN fsdp ARGS ${GPT_TINY} --fsdp)
genie_add_gpt(e2e_torch_gpt_fsdp_4 4 PATTERN fsdp TWICE ARGS ${GPT_TINY} --fsdp)
genie_add_gpt(e2e_torch_gpt_tp_2 2 PATTERN tp ARGS ${GPT_TINY} --tp 2)
genie_add_gpt(e2e_torch_gpt_tp_4 4 PATTERN tp TWICE ARGS ${GPT_TINY} --tp 4)
genie_add_gpt(e2e_torch_gpt_pp_2 2 PATTERN pp ARGS ${GPT_TINY} --pp 2)
# The hardest case for the clock (docs/coordinator.md, "Measured: a 4-stage pipeline"): its threads sleep outside
# Genie and query collectives in flight all the time.
genie_add_gpt(e2e_torch_gpt_pp_4 4 PATTERN pp TWICE ARGS ${GPT_TINY} --pp 4)
# fp16 autocast with GradScaler: loss scaling, unscale_ and its inf checks on values no kernel computed.
genie_add_gpt(e2e_torch_gpt_fp16_ddp_2 2 PATTERN ddp ARGS ${GPT_TINY} --ddp --amp fp16)
genie_add_gpt(e2e_torch_gpt_tp2_pp2 4 ARGS ${GPT_TINY} --tp 2 --pp 2)
genie_add_gpt(e2e_torch_gpt_tp2_ddp 4 ARGS ${GPT_TINY} --tp 2 --ddp)
# torch.compile (Inductor, Triton kernels loaded with cuModuleLoadData and launched with cuLaunchKernel): the
# compiled model's triton_* kernels in the last step of every rank, counted as compute; with reduce-overhead the last
# step is a CUDA graph replay (its nodes traced one by one). Each run compiles afresh (torch_gpt.py gives it its own
# Inductor and Triton cache folders). DDP on 4 ranks hung before python_gil.hpp (a compile-time torch.tensor on the
# GPU synchronized, holding the GIL, behind a small-value host function). max-autotune (label slow: ~6 min of the
# 2-core VM, most of it compiling autotuning candidates whose benchmarks read modelled times) picks template GEMMs
# costed by their M, N, K (docs/costmodel.md "Kernels costed by their operands").
set(GPT_COMPILE --model gpt-tiny --batch 4 --seq 128 --steps 4)
genie_add_gpt(e2e_torch_gpt_compile_single 1 KERNELS triton_ ARGS ${GPT_COMPILE} --compile default)
genie_add_gpt(e2e_torch_gpt_compile_ddp_4 4 KERNELS triton_ PATTERN ddp ARGS ${GPT_COMPILE} --ddp --compile default)
genie_add_gpt(e2e_torch_gpt_compile_reduce_overhead 1 KERNELS triton_ ARGS ${GPT_COMPILE} --compile reduce-overhead)
genie_add_gpt(e2e_torch_gpt_compile_max_autotune 1 LABEL slow KERNELS triton_ ARGS ${GPT_COMPILE} --compile max-autotune)
genie_add_gpt(e2e_torch_newest_gpt_compile_ddp_2 2 NEWEST KERNELS triton_ PATTERN ddp
  ARGS ${GPT_COMPILE} --ddp --compile default)
# The headline: GPT-2 small (124M) on one emulated H200, batch 8 x 1024 tokens.
genie_add_gpt(e2e_torch_gpt2_124m_h200 1 ARGS --model gpt2-124m --batch 8 --seq 1024 --steps 5)

# torchrun (the venv's) starting a non-Python NCCL program, GENIE_COORDINATOR=auto: rank 0 hosts the coordinator
# and writes the report (docs/coordinator.md "Ranks started by another launcher").
if(TARGET example_collectives)
  add_test(NAME e2e_coordinator_auto_torchrun
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/other_launchers.sh torchrun ${CMAKE_BINARY_DIR}
            ${CMAKE_CURRENT_BINARY_DIR}/reports/auto_torchrun ${GENIE_VENV}/bin)
  set_tests_properties(e2e_coordinator_auto_torchrun PROPERTIES LABELS "e2e;torch" TIMEOUT 300 PROCESSORS 2
    FIXTURES_REQUIRED torch_venv FAIL_REGULAR_EXPRESSION "^FAIL " PASS_REGULAR_EXPRESSION "other_launchers: 0 failed")
endif()

# The newest torch (torch 2.15.0+cu132), with no workaround variable: import (the NCCL 2.32 symbols libtorch_cuda.so
# binds at load), torch.cuda with and without expandable segments (NVML fabric query), torch.distributed's calls,
# object collectives, NVML monitoring, the watchdog, and gpt.py in DDP, FSDP2, TP and PP on 4 ranks with torch's
# default backend (the in-tree ProcessGroupNCCL2); DDP and TP also on the classic ProcessGroupNCCL
# (TORCH_DIST_USE_NCCL2=0). docs/testing.md says why this set.
genie_add_torch(e2e_torch_newest_cuda_basics RANKS 0 NEWEST REGEX "cuda_basics: 0 failed" ENV GENIE_HOST_CPU_SCALE=0
  ARGS ${GENIE_TORCH_EXAMPLES}/cuda_basics.py)
genie_add_torch(e2e_torch_newest_cuda_basics_expandable RANKS 0 NEWEST REGEX "cuda_basics: 0 failed"
  ENV PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True GENIE_HOST_CPU_SCALE=0
  ARGS ${GENIE_TORCH_EXAMPLES}/cuda_basics.py --expandable)
genie_add_torch(e2e_torch_newest_distributed_4 RANKS 4 NEWEST REGEX "\\[rank3\\]: distributed_ops rank 3: 0 failed"
  ARGS ${GENIE_TORCH_EXAMPLES}/distributed_ops.py)
genie_add_torch(e2e_torch_newest_object_collectives_3 RANKS 3 NEWEST
  REGEX "\\[rank2\\]: object_collectives rank 2: 0 failed"
  ARGS ${GENIE_TORCH_EXAMPLES}/object_collectives.py)
genie_add_torch(e2e_torch_newest_nvml RANKS 2 NEWEST REGEX "\\[rank1\\]: nvml_monitoring: 0 failed"
  ARGS ${GENIE_TORCH_EXAMPLES}/nvml_monitoring.py)
genie_add_torch(e2e_torch_newest_watchdog_timeout RANKS 3 NEWEST RC 134 LABEL slow
  REGEX "Watchdog caught collective operation timeout|[Tt]imeout"
  ENV TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC=1000 ARGS ${GENIE_TORCH_EXAMPLES}/distributed_ops.py --watchdog-timeout)
genie_add_gpt(e2e_torch_newest_gpt_ddp_4 4 NEWEST PATTERN ddp ARGS ${GPT_TINY} --ddp)
genie_add_gpt(e2e_torch_newest_gpt_fsdp_4 4 NEWEST PATTERN fsdp ARGS ${GPT_TINY} --fsdp)
genie_add_gpt(e2e_torch_newest_gpt_tp_4 4 NEWEST PATTERN tp ARGS ${GPT_TINY} --tp 4)
genie_add_gpt(e2e_torch_newest_gpt_pp_4 4 NEWEST PATTERN pp ARGS ${GPT_TINY} --pp 4)
genie_add_gpt(e2e_torch_newest_gpt_ddp_4_pgnccl 4 NEWEST PATTERN ddp ENV TORCH_DIST_USE_NCCL2=0
  ARGS ${GPT_TINY} --ddp)
genie_add_gpt(e2e_torch_newest_gpt_tp_4_pgnccl 4 NEWEST PATTERN tp ENV TORCH_DIST_USE_NCCL2=0 ARGS ${GPT_TINY} --tp 4)

# examples/megatron/train_gpt.py (megatron-core from PyPI, unmodified) on 4 ranks: every iteration's NCCL calls per
# communicator against the pattern Megatron's design dictates (tests/e2e/torch_megatron.py): TP 2 x PP 2 on both
# torch versions, DP 4 with the distributed optimizer and overlapped gradient reduction and parameter gathering.
function(genie_add_megatron name)
  cmake_parse_arguments(G "NEWEST" "RANKS" "ARGS" ${ARGN})
  genie_torch_venv(G_NEWEST)
  if(NOT G_RANKS)
    set(G_RANKS 4)
  endif()
  add_test(NAME ${name}
    COMMAND ${GENIE_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/torch_megatron.py --genie ${GENIE_BIN} --python ${py}
            --ranks ${G_RANKS} -- ${G_ARGS})
  set_tests_properties(${name} PROPERTIES LABELS "e2e;torch" TIMEOUT 900 PROCESSORS 2
    FIXTURES_REQUIRED ${fixture} PASS_REGULAR_EXPRESSION "torch_megatron: 0 failed" FAIL_REGULAR_EXPRESSION "^FAIL ")
endfunction()
genie_add_megatron(e2e_torch_megatron_tp2_pp2 ARGS --tp 2 --pp 2 --iterations 3)
genie_add_megatron(e2e_torch_megatron_dp4_distopt ARGS --dist-opt --overlap-grad-reduce --overlap-param-gather
                   --iterations 3)
genie_add_megatron(e2e_torch_newest_megatron_tp2_pp2 NEWEST ARGS --tp 2 --pp 2 --iterations 3)
# Sequence parallelism (TP 2 x PP 2: all-gathers and reduce-scatters on the TP group; the example's LayerNorm marks
# its weights sequence-parallel, as apex's and TE's do), the interleaved schedule (PP 2, 2 model chunks per rank),
# full activation recomputation (the forward's TP all-reduces again in the backward), and TP 2 x PP 2 x DP 2 on 8
# ranks with the distributed optimizer.
genie_add_megatron(e2e_torch_megatron_tp2_sp_pp2 ARGS --tp 2 --sp --pp 2 --iterations 3)
genie_add_megatron(e2e_torch_megatron_tp4_sp ARGS --tp 4 --sp --iterations 3)
genie_add_megatron(e2e_torch_megatron_pp2_interleaved ARGS --pp 2 --vpp 1 --global-batch 8 --iterations 3)
genie_add_megatron(e2e_torch_megatron_tp2_pp2_recompute ARGS --tp 2 --pp 2 --recompute full --iterations 3)
genie_add_megatron(e2e_torch_megatron_tp2_pp2_dp2_distopt RANKS 8 ARGS --tp 2 --pp 2 --dist-opt --iterations 3)
# GENIE_APP_CLOCK=python (genie run --app-clock python): Python's time.time / perf_counter and Megatron's timers read
# the virtual clock (the same GPU work as CUDA events), time.monotonic, threading timeouts and the TCPStore stay real.
# Host time = the modelled API costs (GENIE_HOST_CPU_SCALE=0): the timers compared with the events then differ by
# modelled calls only, not by this machine's Python time between them (0.43 ms of it, over the tolerance, on a loaded
# CI run).
genie_add_torch(e2e_torch_app_clock_python_2 RANKS 2 REGEX "\\[rank1\\]: app_clock rank 1: 0 failed"
  ENV GENIE_APP_CLOCK=python GENIE_HOST_CPU_SCALE=0 ARGS ${GENIE_TORCH_EXAMPLES}/app_clock.py)
# MoE: 4 experts, expert parallelism 2 (all-to-all token dispatcher with the router's data-dependent token counts),
# data parallelism 4 for the dense parameters.
genie_add_megatron(e2e_torch_megatron_moe_ep2 ARGS --experts 4 --ep 2 --iterations 3)

# torch.profiler with activities=[CPU, CUDA] on Genie's libcupti.so.13 (docs/profiler.md): a small MLP's kernels,
# copies and runtime calls in the Chrome trace, every kernel linked to its CPU op, at the report's starts and
# durations (to Kineto's own TSC clock scale); DDP on 2 ranks also shows the NCCL kernels.
foreach(variant single ddp_2)
  set(ranks 1)
  set(extra "")
  if(variant STREQUAL ddp_2)
    set(ranks 2)
    set(extra --ddp)
  endif()
  add_test(NAME e2e_torch_profiler_${variant}
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/torch_profiler.sh ${GENIE_BIN} ${GENIE_TORCH_PY}
            ${GENIE_TORCH_EXAMPLES}/profiler_timeline.py ${CMAKE_CURRENT_BINARY_DIR}/reports/profiler_${variant}
            ${ranks} ${extra})
  set_tests_properties(e2e_torch_profiler_${variant} PROPERTIES LABELS "e2e;torch" TIMEOUT 300 PROCESSORS 2
    FIXTURES_REQUIRED torch_venv FAIL_REGULAR_EXPRESSION "^FAIL |failed: [1-9]| [1-9][0-9]* failed"
    PASS_REGULAR_EXPRESSION "profiler_timeline: 0 failed")
endforeach()
# The same on torch 2.15 (its Kineto, libcupti.so.13 of CUDA 13.2's wheels).
add_test(NAME e2e_torch_newest_profiler_single
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/torch_profiler.sh ${GENIE_BIN} ${GENIE_TORCH_NEWEST_PY}
          ${GENIE_TORCH_EXAMPLES}/profiler_timeline.py ${CMAKE_CURRENT_BINARY_DIR}/reports/profiler_newest_single 1)
set_tests_properties(e2e_torch_newest_profiler_single PROPERTIES LABELS "e2e;torch" TIMEOUT 300 PROCESSORS 2
  FIXTURES_REQUIRED torch_venv_newest FAIL_REGULAR_EXPRESSION "^FAIL |failed: [1-9]| [1-9][0-9]* failed"
  PASS_REGULAR_EXPRESSION "profiler_timeline: 0 failed")
