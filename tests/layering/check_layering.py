#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Checks the module layering common <- netsim <- scheduler <- fakecuda <- shim <- cli over #include lines and links.
"""Fails, naming file:line, when a module reaches a module above it.

Rules, for every source file under <module>/src and <module>/include of the six modules:
  1. `#include "genie/<ns>/..."` (or <...>) names the public header of module <ns>; it must not be above the
     including module (genie/sched/ is the scheduler's).
  2. A header that is not under genie/ and resolves into another module's src/ folder (its private headers,
     e.g. "algorithms/dag_builder.hpp" or "../../netsim/src/...") is never allowed: modules talk through
     include/genie/<ns>/ only.
  3. A public header (include/) must not include its own module's private src/ headers: whoever includes it would
     reach them.
  4. <module>/CMakeLists.txt must not link a library target of a module above it.

Usage: check_layering.py [REPO_ROOT]      (default: two folders up from this script)
       check_layering.py --self-test       (runs the rules on a small tree with one violation of each kind)
"""
import os
import re
import sys
import tempfile

# Lowest first: a module may include and link the modules before it, never those after it.
MODULES = ["common", "netsim", "scheduler", "fakecuda", "shim", "cli"]
RANK = {m: i for i, m in enumerate(MODULES)}
# Public include namespace (include/genie/<ns>/) -> module.
NAMESPACES = {"common": "common", "netsim": "netsim", "sched": "scheduler", "fakecuda": "fakecuda", "shim": "shim",
              "cli": "cli"}
# Library targets -> the module that defines them.
TARGETS = {"genie_common": "common", "genie_netsim": "netsim", "genie_scheduler": "scheduler",
           "genie_fakecuda": "fakecuda", "genie_cost_tools": "fakecuda", "genie_runtime": "fakecuda",
           "genie_shim": "shim", "genie_shim_obj": "shim", "nccl2": "shim", "genie": "cli"}
SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".h", ".hpp", ".inc", ".cu", ".cuh")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
LINK_RE = re.compile(r"target_link_libraries\s*\(([^)]*)\)", re.S)


def module_files(root, module):
    for area in ("src", "include"):
        top = os.path.join(root, module, area)
        for d, _, files in os.walk(top):
            for f in sorted(files):
                if f.endswith(SOURCE_SUFFIXES):
                    yield os.path.join(d, f)


def owner(root, path):
    """(module, area) of a path inside the repository, or (None, None)."""
    rel = os.path.relpath(os.path.normpath(path), root).split(os.sep)
    if len(rel) >= 3 and rel[0] in RANK and rel[1] in ("src", "include"):
        return rel[0], rel[1]
    return None, None


def resolve(root, including, header):
    """Where a header that is not under genie/ resolves, in include-search order: the including file's folder,
    then each module's src/ (which one a compiler would use depends on the target's include folders, so every
    existing candidate is returned)."""
    candidates = [os.path.normpath(os.path.join(os.path.dirname(including), header))]
    candidates += [os.path.join(root, m, "src", header) for m in MODULES]
    return [c for c in candidates if os.path.isfile(c)]


def check_includes(root):
    errors = []
    for module in MODULES:
        for path in module_files(root, module):
            _, area = owner(root, path)
            rel = os.path.relpath(path, root)
            with open(path, encoding="utf-8", errors="replace") as f:
                for lineno, line in enumerate(f, 1):
                    m = INCLUDE_RE.match(line)
                    if not m:
                        continue
                    header = m.group(2)
                    parts = header.split("/")
                    if parts[0] == "genie" and len(parts) >= 3:
                        target = NAMESPACES.get(parts[1])
                        if target is None:
                            errors.append(f"{rel}:{lineno}: {module} includes \"{header}\": no module serves "
                                          f"genie/{parts[1]}/")
                        elif RANK[target] > RANK[module]:
                            errors.append(f"{rel}:{lineno}: {module} includes \"{header}\", a header of {target}, "
                                          f"which is above it ({' <- '.join(MODULES)})")
                        continue
                    found = resolve(root, path, header)
                    own = [c for c in found if owner(root, c)[0] == module]
                    foreign = [c for c in found if owner(root, c)[0] not in (None, module)]
                    if foreign and not own:
                        where = os.path.relpath(foreign[0], root)
                        errors.append(f"{rel}:{lineno}: {module} includes \"{header}\", a private header of "
                                      f"{owner(root, foreign[0])[0]} ({where}); include its genie/<ns>/ "
                                      f"public headers only")
                    elif area == "include" and own and all(owner(root, c)[1] == "src" for c in own):
                        where = os.path.relpath(own[0], root)
                        errors.append(f"{rel}:{lineno}: public header includes \"{header}\", a private header "
                                      f"of {module} ({where}): whoever includes it would reach {module}/src")
    return errors


def check_links(root):
    errors = []
    for module in MODULES:
        path = os.path.join(root, module, "CMakeLists.txt")
        if not os.path.isfile(path):
            continue
        text = open(path, encoding="utf-8").read()
        for m in LINK_RE.finditer(text):
            lineno = text.count("\n", 0, m.start()) + 1
            # The first word is the target being linked; the rest are what it links.
            for word in re.findall(r"[A-Za-z0-9_:]+", m.group(1))[1:]:
                target = TARGETS.get(word)
                if target is not None and RANK[target] > RANK[module]:
                    errors.append(f"{module}/CMakeLists.txt:{lineno}: {module} links {word}, a library of "
                                  f"{target}, which is above it")
    return errors


def self_test():
    """One violation of each rule in a throw-away tree; the check must name each file:line, and nothing else."""
    files = {
        "common/include/genie/common/ok.hpp": '#include <vector>\n',
        "netsim/src/fine.cpp": '#include "genie/common/ok.hpp"\n#include "engine/own.hpp"\n',
        "netsim/src/engine/own.hpp": '#pragma once\n',
        "netsim/include/genie/netsim/leaky.hpp": '#pragma once\n#include "engine/own.hpp"\n',
        "scheduler/src/up.cpp": '// comment\n#include "genie/fakecuda/runtime.hpp"\n',
        "fakecuda/src/peek.cpp": '#include <cstdio>\n\n#include "engine/own.hpp"\n',
        "fakecuda/src/rel.cpp": '#include "../../netsim/src/engine/own.hpp"\n',
        "cli/src/main.cpp": '#include "genie/shim/x.hpp"\n#include "genie/sched/launcher.hpp"\n',
        "netsim/CMakeLists.txt": 'add_library(genie_netsim x.cpp)\ntarget_link_libraries(genie_netsim PUBLIC\n'
                                 '  genie_common genie_scheduler)\n',
    }
    expected = ["netsim/include/genie/netsim/leaky.hpp:2:", "scheduler/src/up.cpp:2:", "fakecuda/src/peek.cpp:3:",
                "fakecuda/src/rel.cpp:1:", "netsim/CMakeLists.txt:2:"]
    with tempfile.TemporaryDirectory() as root:
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        errors = check_includes(root) + check_links(root)
    got = sorted(e.split(" ", 1)[0] for e in errors)
    if got != sorted(expected):
        print("layering self-test FAILED\nexpected: " + " ".join(sorted(expected)) + "\ngot:\n  " + "\n  ".join(errors))
        return 1
    print(f"layering self-test: the {len(expected)} planted violations are reported, nothing else")
    return 0


def main(argv):
    if len(argv) > 1 and argv[1] == "--self-test":
        return self_test()
    root = os.path.abspath(argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    missing = [m for m in MODULES if not os.path.isdir(os.path.join(root, m))]
    if missing:
        print(f"check_layering: {root} lacks the module folders {missing}")
        return 2
    errors = check_includes(root) + check_links(root)
    for e in errors:
        print(e)
    nfiles = sum(1 for m in MODULES for _ in module_files(root, m))
    if errors:
        print(f"layering: {len(errors)} violation(s) of {' <- '.join(MODULES)} in {nfiles} files")
        return 1
    print(f"layering: {nfiles} files of {', '.join(MODULES)} include and link only modules below them")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
