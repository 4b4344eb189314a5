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
# The one intended difference: Genie serves CUDA 13.2 (torch 2.15's), the toolkit's libcudart may be an older 13.x.
sed -i 's/^cudaRuntimeGetVersion 0 130[0-9][0-9]$/cudaRuntimeGetVersion 0 13020/' "$tmp/nvidia.txt"
# The toolkit's libnccl is 2.28, which has no result code 8; Genie serves NCCL 2.32, whose code 8 is ncclTimeout.
sed -i 's/^nccl 8 unknown result code$/nccl 8 timeout/' "$tmp/nvidia.txt"
env LD_PRELOAD="$preload" "$example" > "$tmp/genie.txt" 2> "$tmp/genie.log"
lines=$(wc -l < "$tmp/nvidia.txt")
if ! diff "$tmp/nvidia.txt" "$tmp/genie.txt" > "$tmp/diff.txt"; then
  echo "FAIL answers differ from NVIDIA's libraries' (< NVIDIA, > Genie), first 40 lines:"
  head -40 "$tmp/diff.txt"
  exit 1
fi
echo "no-GPU answers: all $lines lines as NVIDIA's libraries give them"
