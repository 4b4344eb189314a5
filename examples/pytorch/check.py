# SPDX-License-Identifier: Apache-2.0
"""Self-check helpers for the PyTorch examples, as examples/cuda/check.cuh does for the CUDA ones: each check
prints one `ok`/`FAIL` line with "Expectation ... / Actual ...", and finish() prints "<name>: N failed"."""
import re
import sys

_failures = 0


def _report(ok, what, expected, actual):
    global _failures
    print(f"{'ok  ' if ok else 'FAIL'} {what}: Expectation {expected} / Actual {actual}", flush=True)
    if not ok:
        _failures += 1
    return ok


def expect_eq(what, expected, actual):
    return _report(expected == actual, what, expected, actual)


def expect_true(what, actual, expected_text="true"):
    return _report(bool(actual), what, expected_text, actual)


def expect_near(what, expected, actual, rel_tol):
    ok = abs(actual - expected) <= rel_tol * abs(expected)
    return _report(ok, what, f"{expected:.6g} (within {rel_tol:.0%})", f"{actual:.6g}")


def expect_match(what, pattern, text):
    ok = re.search(pattern, text) is not None
    return _report(ok, what, f"/{pattern}/", repr(text[:300]))


def expect_raises(what, exc_type, pattern, fn):
    """fn() must raise exc_type with a message matching pattern; returns the message."""
    try:
        fn()
    except exc_type as e:  # noqa: PERF203
        expect_match(what, pattern, str(e))
        return str(e)
    except Exception as e:  # noqa: BLE001
        _report(False, what, f"{exc_type.__name__} /{pattern}/", f"{type(e).__name__}: {e}")
        return None
    _report(False, what, f"{exc_type.__name__} /{pattern}/", "no exception")
    return None


def failures():
    return _failures


def finish(name):
    print(f"{name}: {_failures} failed", flush=True)
    sys.exit(0 if _failures == 0 else 1)
