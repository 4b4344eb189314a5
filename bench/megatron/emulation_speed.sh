#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# How much slower than the modelled GPUs Genie runs a Megatron job (issue #32's speed goal): examples/megatron/
# train_gpt.py under `genie run -n 4` for A and then B iterations; the wall time per iteration is the difference of
# the two runs' wall times over B - A (start-up cancels out), set against the mean predicted iteration time (the
# CUDA-event times the example prints, steady iterations 2..B). Prints one line per run and the ratio.
#   bench/megatron/emulation_speed.sh [BUILD] [PYTHON] [A B] -- TRAIN_GPT_ARGS...
# Default: build/, .venv/bin/python, A=2 B=6, --model gpt2-124m --tp 2 --pp 2. GENIE_HOST_CPU_SCALE=0 as the e2e
# tests run (predicted times the same every run).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build}
python=${2:-$here/.venv/bin/python}
a=${3:-2}
b=${4:-6}
shift $(( $# < 4 ? $# : 4 )) || true
[ "${1:-}" = "--" ] && shift
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--model gpt2-124m --tp 2 --pp 2)
run() {
  local n=$1 log
  log=$(mktemp)
  local t0 t1
  t0=$(date +%s.%N)
  GENIE_HOST_CPU_SCALE=0 "$build/bin/genie" run -n 4 --device h200 --report "$(mktemp -d)" -- \
    "$python" "$here/examples/megatron/train_gpt.py" "${args[@]}" --iterations "$n" >"$log" 2>&1 ||
    { tail -20 "$log" >&2; echo "emulation_speed: the run of $n iterations failed" >&2; exit 1; }
  t1=$(date +%s.%N)
  local relaxed
  relaxed=$(grep -o '[0-9]* relaxed steps' "$log" | head -1 | cut -d' ' -f1 || true)
  # Mean predicted time of iterations 2..n on rank 0.
  local pred
  pred=$( (grep -E '^\[rank0\]: iteration [0-9]+ time_ms' "$log" || true) | awk '$3 > 1 {s += $5; k++} END {if (k) printf "%.3f", s / k}')
  echo "$n iterations: wall $(echo "$t1 - $t0" | bc) s, predicted mean iteration ${pred:-?} ms, relaxed steps ${relaxed:-0}" >&2
  echo "$(echo "$t1 - $t0" | bc) ${pred:-0}"
}
read -r wa _ < <(run "$a")
read -r wb pb < <(run "$b")
per_iter=$(echo "($wb - $wa) / ($b - $a)" | bc -l)
printf 'wall time per iteration %.3f s, predicted iteration %.3f ms: %.0fx slower than the modelled GPUs (%s)\n' \
  "$per_iter" "$pb" "$(echo "$per_iter * 1000 / $pb" | bc -l)" "${args[*]}"
