#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Genie predicts the gpt2-124m step time measured on a real H200 (30.030 ms, tests/e2e/data/real_h200/real_gpu.log,
# examples/pytorch/gpt.py). Mode `table`: the PyTorch profiler trace of three steps on the H200
# (scripts/real-gpu-profile.py) becomes a kernel table (`genie calibrate --from-trace`) that Genie runs with. Mode
# `model`: the cost model alone. Either way GENIE_HOST_CPU_SCALE=0 (modelled host costs only, deterministic), and
# the mean step time must be within TOLERANCE of the measured one.
#   gpt_real_table.sh <build-dir> <python> <work-dir> [tolerance=0.05] [table|model]
set -euo pipefail
build=$1 py=$2 work=$3 tol=${4:-0.05} mode=${5:-table}
here=$(cd "$(dirname "$0")/../.." && pwd)
data=$here/tests/e2e/data/real_h200
mkdir -p "$work"
table=()
case $mode in
  table)
    gunzip -c "$data/gpt2-124m.trace.json.gz" > "$work/trace.json"
    "$build/bin/genie" calibrate --from-trace "$work/trace.json" -o "$work/table.json"
    table=(GENIE_FAKECUDA_COST_TABLE="$work/table.json") ;;
  model) ;;
  *) echo "gpt_real_table.sh: mode '$mode' is not table or model" >&2; exit 2 ;;
esac
real=$(sed -n '/^=== gpt_gpt2-124m:/,/^=== rc/p' "$data/real_gpu.log" | sed -n 's/^gpt.py: mean step time_ms \([0-9.]*\) .*/\1/p')
[ -n "$real" ] || { echo "FAIL no gpt2-124m mean step time in $data/real_gpu.log"; exit 1; }
out=$(env "${table[@]}" GENIE_HOST_CPU_SCALE=0 "$build/bin/genie" run -n 1 --device h200 -- \
  "$py" "$here/examples/pytorch/gpt.py" --model gpt2-124m --batch 8 --seq 1024 --steps 10 2>&1) || {
  echo "$out"
  echo "FAIL gpt.py on Genie"
  exit 1
}
genie=$(echo "$out" | sed -n 's/.*gpt.py: mean step time_ms \([0-9.]*\) .*/\1/p')
[ -n "$genie" ] || { echo "$out"; echo "FAIL no mean step time in Genie's run"; exit 1; }
python3 - "$real" "$genie" "$tol" "$mode" <<'EOF'
import sys
real, genie, tol = map(float, sys.argv[1:4])
what = "the H200's kernel table" if sys.argv[4] == "table" else "the cost model"
err = genie / real - 1
ok = abs(err) <= tol
print(f"{'ok  ' if ok else 'FAIL'} gpt2-124m step time with {what}: real {real:.3f} ms, Genie "
      f"{genie:.3f} ms ({err:+.1%}, tolerance {tol:.0%})")
print(f"gpt_real_table: {0 if ok else 1} failed")
sys.exit(0 if ok else 1)
EOF
