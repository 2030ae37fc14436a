"""Triton is loaded before the backend's entry modules, without the package importing it.

`import triton` runs Triton's backend discovery, which imports `triton_spirv.compiler`
and `triton_spirv.driver` itself. When one of them is imported before Triton, its own
`from triton... import` would start that discovery half way through the module, and the
discovery would find it empty ("Found 0 concrete subclasses"). The finder installed here
loads Triton first in that case and hands back the module that the discovery loaded.
The package itself does not import Triton, so the HLO frontend (`triton_spirv.hlo`)
runs without it.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

BACKEND_MODULES = ("triton_spirv.compiler", "triton_spirv.driver",
                   "triton_spirv.inductor.compiler", "triton_spirv.inductor.driver")


class TritonFirst(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds a backend entry module only while Triton is not loaded; loading it loads
    Triton, whose discovery (or, without the entry point, a plain import) loads the
    module the ordinary way."""

    def __init__(self):
        self.own_specs: dict = {}

    def find_spec(self, name, path=None, target=None):
        if name not in BACKEND_MODULES or "triton" in sys.modules:
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        import triton  # noqa: F401  (its backend discovery imports spec.name)
        module = importlib.import_module(spec.name)  # loaded by now, unless no entry point
        self.own_specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module):
        # Already executed; the import system set our spec on it, give it back its own.
        module.__spec__ = self.own_specs.pop(module.__name__)


def install() -> None:
    if not any(isinstance(finder, TritonFirst) for finder in sys.meta_path):
        sys.meta_path.insert(0, TritonFirst())
