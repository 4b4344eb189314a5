#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# libnccl.so.2 exports exactly NCCL 2.32.6's functions (tests/data/reference/libnccl-2.32.6.exports.txt) and their
# pnccl* aliases (every function but ncclResetDebugInitInternal has one, as in NCCL's library), nothing else.
# Usage: nccl_exports_check.sh LIBNCCL REFERENCE
set -euo pipefail
lib=$1
ref=$2
want=$(grep -v '^#\|^function' "$ref" | awk 'NF {print $1}' | sort)
want_alias=$(echo "$want" | grep -vx ncclResetDebugInitInternal | sed 's/^/p/' | sort)
have=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TWiV]$/ {print $3}' | sed 's/@.*//' | sort -u)
status=0
missing=$(comm -23 <(echo "$want") <(echo "$have" | grep '^nccl' || true))
missing_alias=$(comm -23 <(echo "$want_alias") <(echo "$have" | grep '^pnccl' || true))
extra=$(comm -13 <(printf '%s\n%s\n' "$want" "$want_alias" | sort) <(echo "$have"))
[ -n "$missing" ] && { echo "FAIL missing NCCL 2.32 functions:"; echo "$missing"; status=1; }
[ -n "$missing_alias" ] && { echo "FAIL missing pnccl aliases:"; echo "$missing_alias"; status=1; }
[ -n "$extra" ] && { echo "FAIL exports that NCCL 2.32.6 does not have:"; echo "$extra"; status=1; }
echo "libnccl.so.2: $(echo "$want" | wc -l) functions and $(echo "$want_alias" | wc -l) aliases expected, $(echo "$have" | wc -l) exported"
exit $status
