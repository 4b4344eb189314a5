#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Creates .venv at the repository root with the CUDA 13.0 build of torch 2.11.0 from PyPI
# (scripts/torch-requirements.txt), for the PyTorch examples and e2e tests; with --newest, .venv-newest with the
# newest torch the tests pin (scripts/torch-newest-requirements.txt: torch 2.15.0, the CUDA 13.2 build). An existing
# venv made from the same requirements is reused; an incomplete one or one from other requirements is made again.
# Exit code 0 when the environment is ready, otherwise 1 with the reason on stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = "--newest" ]; then
  venv=${GENIE_VENV_NEWEST:-$here/.venv-newest}
  req=$here/scripts/torch-newest-requirements.txt
else
  venv=${GENIE_VENV:-$here/.venv}
  req=$here/scripts/torch-requirements.txt
fi
what=$(grep -m1 '^torch==' "$req")
stamp=$venv/.genie-requirements
python=${GENIE_PYTHON:-python3}

if [ -x "$venv/bin/python" ] && cmp -s "$req" "$stamp"; then
  exit 0
fi
if ! command -v "$python" >/dev/null; then
  echo "genie: setup-venv: $python not found (set GENIE_PYTHON)" >&2
  exit 1
fi
echo "genie: creating $venv with $what from PyPI: ~3 GB download, ~5 GB installed" >&2
rm -rf "$venv"
start=$(date +%s)
if ! "$python" -m venv "$venv" ||
   ! "$venv/bin/python" -m pip install --no-input --disable-pip-version-check -q -r "$req"; then
  echo "genie: setup-venv: could not install $req into $venv (PyPI unreachable?); the torch e2e tests will fail" >&2
  rm -rf "$venv"
  exit 1
fi
cp "$req" "$stamp"
echo "genie: $venv ready in $(( $(date +%s) - start )) s" >&2
