#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Reproduces the shipped cost-model fit: builds `genie`, fits the H200 parameters to tests/data/calibration/h200
# and writes fakecuda/cost/h200.json, the predicted-vs-measured plot docs/img/costmodel-h200.svg and the error
# tables docs/img/costmodel-h200.md (docs/costmodel.md quotes them). Rebuild afterwards to embed the parameters.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${GENIE_BUILD_DIR:-$here/build}
data=${1:-tests/data/calibration/h200}  # relative to the checkout: it is recorded in h200.json
cmake --build "$build" -j "${GENIE_JOBS:-2}" --target genie
cd "$here"
mkdir -p docs/img
"$build/bin/genie" calibrate --fit "$data" --device h200 -o fakecuda/cost/h200.json \
  --plot docs/img/costmodel-h200.svg --report docs/img/costmodel-h200.md
