#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs examples/pytorch/gpt.py unmodified under torch.profiler (CUDA activity) and writes the Kineto trace,
gzip-compressed: the input of `genie calibrate --from-trace` (a measured kernel table for Genie's runtime).

    real-gpu-profile.py TRACE.json.gz [gpt.py arguments...]
"""
import gzip
import os
import runpy
import shutil
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile

if len(sys.argv) < 2:
    raise SystemExit(__doc__)
out = sys.argv[1]
gpt = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "pytorch", "gpt.py")
sys.argv = [gpt] + sys.argv[2:]
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    try:
        runpy.run_path(gpt, run_name="__main__")
    except SystemExit as e:
        if e.code not in (None, 0):
            raise
torch.cuda.synchronize()
with tempfile.TemporaryDirectory() as tmp:
    raw = os.path.join(tmp, "trace.json")
    prof.export_chrome_trace(raw)
    with open(raw, "rb") as src, gzip.open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
print(f"real-gpu-profile: wrote {out} ({os.path.getsize(out)} bytes)")
