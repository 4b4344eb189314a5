#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs Genie's own example programs on a machine with a real NVIDIA GPU, against the real CUDA runtime, NCCL,
# cuBLAS, cuDNN and PyTorch (not Genie's libraries), so the expectations that Genie's e2e tests hold Genie to are
# checked against the libraries Genie stands in for, and the PyTorch GPT step times Genie predicts can be set
# beside measured ones. Nothing here builds or fetches anything: the CUDA examples are the binaries this
# repository's build made (build/examples, nvcc -cudart shared), the PyTorch examples run on the machine's torch.
#   scripts/real-gpu-check.sh <examples-binary-dir> <out-dir> [--genie <build-dir>] [--no-gpt]
# --genie runs the same programs on Genie instead (its libraries preloaded, one emulated H200, the build's .venv
# python), which is what tests/e2e/real_gpu_compare.py sets beside the recorded real run. --no-gpt skips the GPT
# training runs. Writes <out-dir>/real_gpu.log: per program a header line "=== name: command", its output, "=== rc N"; and the
# versions of what ran. docs/validation.md says how its results were read and what they changed.
set -uo pipefail
bin=${1:?usage: real-gpu-check.sh <examples-binary-dir> <out-dir>}
out=${2:?usage: real-gpu-check.sh <examples-binary-dir> <out-dir>}
here=$(cd "$(dirname "$0")/.." && pwd)
shift 2
genie="" gpt=1
while [ $# -gt 0 ]; do
  case $1 in
    --genie) genie=$(cd "${2:?--genie needs the build directory}" && pwd); shift 2 ;;
    --no-gpt) gpt=0; shift ;;
    *) echo "real-gpu-check.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
log=$out/real_gpu.log
: > "$log"
py=${GENIE_REAL_PYTHON:-python3}
pre=()
if [ -n "$genie" ]; then
  # What `genie env` sets up, with one emulated H200 (the real machine has one GPU).
  L=$genie/lib
  # GENIE_HOST_CPU_SCALE=0: host time is the modelled call costs only, as in the e2e tests (this machine's CPU
  # time between launches would only add noise to the timing checks).
  export LD_LIBRARY_PATH=$L GENIE_GPUS=1 GENIE_DEVICE=h200 TORCH_CUDNN_SDPA_DEPRIORITIZED=1 GENIE_HOST_CPU_SCALE=0
  pre=(env "LD_PRELOAD=${GENIE_SANITIZER_PRELOAD:-}$L/libcudart.so.13:$L/libcublas.so.13:$L/libcublasLt.so.13:$L/libcudnn.so.9:$L/libnccl.so.2")
  py=$here/.venv/bin/python
  echo "genie: $genie" >> "$log"
else

# The real libraries: the toolkit's runtime, and NCCL/cuBLAS/cuDNN from the Python packages torch uses.
libdirs=""
for name in libcudart.so.13 libnccl.so.2 libcublas.so.13 libcublasLt.so.13 libcudnn.so.9; do
  f=$(find /usr/local/cuda/lib64/ /usr/local/cuda/targets/ /opt /usr/lib /usr/local/lib -name "$name" 2>/dev/null | head -1)
  echo "library $name: ${f:-not found}" >> "$log"
  [ -n "$f" ] && libdirs="$libdirs:$(dirname "$f")"
done
export LD_LIBRARY_PATH="${libdirs#:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
pre=(stdbuf -oL)  # line-buffered: a program that crashes keeps the lines it printed
fi
{
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
  "$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())' 2>&1
  date -u +"taken %Y-%m-%dT%H:%M:%SZ"
} >> "$log"

run() {  # run <name> <timeout_s> <command...>
  local name=$1 t=$2
  shift 2
  echo "=== $name: $*" >> "$log"
  timeout -k 5 "$t" "${pre[@]}" "$@" >> "$log" 2>&1
  echo "=== rc $?" >> "$log"
}

# CUDA runtime examples (one device here: device_query expects 1).
run device_query 60 "$bin/device_query" 1
for ex in errors streams_events memcpy_kinds oom legacy_stream; do run "$ex" 60 "$bin/$ex"; done
# cuBLAS / cuDNN API examples.
for ex in cublas_api cublaslt_api cudnn_api; do run "$ex" 90 "$bin/$ex"; done
# NCCL with one rank: the only communicator one GPU can hold (NCCL refuses two ranks on one device).
export NCCL_DEBUG=WARN
run collectives_devices_1 120 "$bin/collectives" devices 1
run collectives_proc_1 120 "$bin/collectives" proc 1
run p2p_devices_1 120 "$bin/p2p" devices 1
run comm_ops_1 120 "$bin/comm_ops" 1
# PyTorch: torch.cuda basics, one-rank torch.distributed, and GPT training steps (step time measured by CUDA events).
ex=$here/examples/pytorch
export PYTHONUNBUFFERED=1
run cuda_basics 120 env GENIE_GPUS=1 "$py" "$ex/cuda_basics.py"
run distributed_ops_1 180 env RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=29511 "$py" "$ex/distributed_ops.py"
if [ "$gpt" = 1 ]; then
  for m in gpt2-124m gpt2-350m gpt2-774m; do
    run "gpt_$m" 300 "$py" "$ex/gpt.py" --model "$m" --batch 8 --seq 1024 --steps 10
  done
  run gpt_tiny 120 "$py" "$ex/gpt.py" --model gpt-tiny --batch 8 --seq 256 --steps 10
  # A Kineto trace of three gpt2-124m steps: `genie calibrate --from-trace` makes a measured kernel table of it.
  [ -z "$genie" ] && run gpt_profile 180 "$py" "$here/scripts/real-gpu-profile.py" "$out/gpt2-124m.trace.json.gz" \
    --model gpt2-124m --batch 8 --seq 1024 --steps 3
fi
echo "=== done" >> "$log"
