# SPDX-License-Identifier: Apache-2.0
"""Genie's Python start-up hook. `genie run` and `genie env` put this folder first on PYTHONPATH, so Python imports
this file at start-up (the `site` module imports `sitecustomize`). It does two things:

1. It runs the sitecustomize that this one hides (Debian's, a virtual environment's), if there is one.
2. When the program imports torch, it installs genie_small_values (docs/pytorch.md, "Small values"), unless
   GENIE_TORCH_SMALL_VALUES=0. A program that never imports torch pays for one import hook and nothing else.
"""
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))


def _chain():
    """Runs the next sitecustomize on sys.path after this folder (the one this file hides)."""
    rest = [p for p in sys.path if os.path.abspath(p or ".") != _here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None or os.path.abspath(spec.origin or "") == os.path.abspath(__file__):
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


class _TorchHook(importlib.abc.MetaPathFinder):
    """Waits for `import torch` to finish, then installs the small-value mechanism once."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        exec_module = loader.exec_module

        def exec_and_install(module):
            exec_module(module)
            try:
                import genie_small_values
                genie_small_values.install()
            except Exception as e:  # noqa: BLE001 - never break the program's import of torch
                print(f"[genie] small values not installed: {type(e).__name__}: {e}", file=sys.stderr)

        loader.exec_module = exec_and_install
        return spec


try:
    _chain()
except Exception as e:  # noqa: BLE001 - a broken sitecustomize elsewhere must not stop the program
    print(f"[genie] the next sitecustomize failed: {type(e).__name__}: {e}", file=sys.stderr)

if os.environ.get("GENIE_TORCH_SMALL_VALUES", "1").lower() not in ("0", "false", "off", "no"):
    sys.meta_path.insert(0, _TorchHook())
