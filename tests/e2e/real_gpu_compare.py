#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Sets Genie's run of the example programs beside a recorded run of the same programs on a real GPU
(scripts/real-gpu-check.sh writes both logs). Every check line of the real run ("ok  |FAIL <check>: Expectation E /
Actual A") must, on Genie, exist and have the same Actual: where a real GPU answered, Genie answers the same. A
check whose Actual differs for a known reason (a measured quantity such as a memory size or a time, an example
fixed after the recording) is listed in the differences file with that reason and skipped.

    real_gpu_compare.py REAL_LOG GENIE_LOG DIFFERENCES.json

DIFFERENCES.json: {"program": {"check": "reason", ...}, ...}; "program" is the name after "=== " in the logs, and
the check "*" stands for all of that program's checks.
Exit status 0 when everything agrees, 1 when something does not (each disagreement printed), 2 on bad input.
"""
import json
import re
import sys

CHECK = re.compile(r"^(ok  |FAIL) (.*): Expectation (.*) / Actual (.*)$")
HEADER = re.compile(r"^=== ([A-Za-z0-9_.-]+): ")


def parse(path):
    """{program: {check: actual}}; a check seen twice keeps its first Actual (the programs print each once)."""
    out, program = {}, None
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                line = line.rstrip("\n")
                h = HEADER.match(line)
                if h:
                    program = h.group(1)
                    out.setdefault(program, {})
                    continue
                m = CHECK.match(line)
                if m and program is not None:
                    out[program].setdefault(m.group(2), m.group(4))
    except OSError as e:
        raise SystemExit(f"real_gpu_compare: {path}: {e.strerror}") from e
    if not out:
        print(f"real_gpu_compare: {path}: no '=== program: command' sections (not a real-gpu-check.sh log)",
              file=sys.stderr)
        sys.exit(2)
    return out


def load_differences(path):
    try:
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
    except OSError as e:
        print(f"real_gpu_compare: {path}: {e.strerror}", file=sys.stderr)
        sys.exit(2)
    except json.JSONDecodeError as e:
        print(f"real_gpu_compare: {path}: not valid JSON: {e}", file=sys.stderr)
        sys.exit(2)
    if not isinstance(d, dict):
        print(f"real_gpu_compare: {path}: $: an object of programs is required", file=sys.stderr)
        sys.exit(2)
    for prog, checks in d.items():
        if not isinstance(checks, dict) or not all(isinstance(v, str) and v for v in checks.values()):
            print(f"real_gpu_compare: {path}: $.{prog}: an object of check -> reason (non-empty text) is required",
                  file=sys.stderr)
            sys.exit(2)
    return d


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    real, genie, diffs = parse(argv[1]), parse(argv[2]), load_differences(argv[3])
    agreed = skipped = 0
    bad = []
    for prog, checks in sorted(diffs.items()):
        for check in checks:
            if check != "*" and check not in real.get(prog, {}):
                bad.append(f"{prog}: '{check}' is listed as a difference but is not in the real run")
    for prog, checks in real.items():
        if not checks:  # a program that printed no check (a GPT run's step times, a crash before its first check)
            continue
        if "*" in diffs.get(prog, {}):
            skipped += len(checks)
            print(f"skip {prog}: {len(checks)} checks: {diffs[prog]['*']}")
            continue
        if prog not in genie:
            bad.append(f"{prog}: not run on Genie")
            continue
        for check, actual in checks.items():
            reason = diffs.get(prog, {}).get(check)
            if reason is not None:
                skipped += 1
                print(f"skip {prog}: {check}: real {actual}, Genie {genie[prog].get(check, '(not run)')}: {reason}")
                continue
            if check not in genie[prog]:
                bad.append(f"{prog}: '{check}' ran on the real GPU, not on Genie (renamed or removed since the "
                           f"recording? run scripts/real-gpu-check.sh on a real GPU again, or list it with a reason)")
            elif genie[prog][check] != actual:
                bad.append(f"{prog}: '{check}': real GPU {actual}, Genie {genie[prog][check]}")
            else:
                agreed += 1
    for b in bad:
        print(f"FAIL {b}")
    print(f"real_gpu_compare: {agreed} checks agree, {skipped} known differences, {len(bad)} disagreements")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
