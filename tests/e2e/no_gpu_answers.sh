#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# no_gpu_answers.sh <no_gpu_answers example> <CUDA lib dir> <LD_PRELOAD of Genie's libraries>
# Runs the example on NVIDIA's libraries (the toolkit's libcudart, libcublas, libcublasLt, libcudnn and libnccl
# answer its questions without a GPU) and on Genie's; every line must be the same. Prints the lines that differ.
set -euo pipefail
example=$1 cuda_lib=$2 preload=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
env -u LD_PRELOAD LD_LIBRARY_PATH="$cuda_lib" "$example" > "$tmp/nvidia.txt"
env LD_PRELOAD="$preload" "$example" > "$tmp/genie.txt" 2> "$tmp/genie.log"
lines=$(wc -l < "$tmp/nvidia.txt")
if ! diff "$tmp/nvidia.txt" "$tmp/genie.txt" > "$tmp/diff.txt"; then
  echo "FAIL answers differ from NVIDIA's libraries' (< NVIDIA, > Genie), first 40 lines:"
  head -40 "$tmp/diff.txt"
  exit 1
fi
echo "no-GPU answers: all $lines lines as NVIDIA's libraries give them"
