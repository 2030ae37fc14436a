"""The Python modules the MLIR bindings load for three dialects, lighter than theirs.

When an op, attribute or type of a dialect first reaches Python (a walk, `value.owner`,
a parsed attribute), the bindings import the dialect's module, `mlir.dialects.<name>`,
for its Python classes; a dialect without a module is looked for again every time.
For three dialects that costs a compile more than it gives:

- linalg: `mlir.dialects.linalg` runs the OpDSL definition of every named op on import,
  which loads PyYAML and the complex and math dialects' modules (0.15-0.3 s of a cold
  compile), and its generated op classes alone take 0.05-0.1 s, which only the converter
  needs (it imports them to build ops; the HLO frontend and the later stages do not).
- spirv: the SPIR-V stage walks the converted module; the dialect's generated classes
  take 0.07-0.15 s to import, and only kernels with atomics build spirv ops in Python.
- tt: TTIR ops (unregistered) have no Python classes. Without a module, every `tt.*` op
  that reaches Python retries the failing import of `mlir.dialects.tt`, some 200 times
  per kernel.

`use_light_dialect_modules()` has the bindings load this package's empty modules for
these, once per process. An op of theirs reaches Python as a plain `OpView` until a
module registers its dialect's classes (`mlir.dialects.spirv`, `mlir.dialects.linalg` or
its `_linalg_ops_gen`, imported before or after): from then on it comes as that class,
as without this package. A dialect whose module the bindings loaded already keeps it.
"""
from __future__ import annotations

import threading

from mlir._mlir_libs import _mlir as _bindings

# Dialect namespaces with a module in this package.
NAMESPACES = ("linalg", "spirv", "tt")

_lock = threading.Lock()
_loaded = False


def use_light_dialect_modules() -> None:
    """Has the bindings take this package's modules for NAMESPACES (once per process)."""
    global _loaded
    if _loaded:
        return
    registry = _bindings.globals
    with _lock:
        if _loaded:
            return
        # The bindings look for a dialect's module under these packages, in order, and
        # remember a namespace once its module is loaded; only this package is searched
        # while ours are loaded.
        search = registry.dialect_search_modules
        registry.dialect_search_modules = [__name__]
        try:
            for namespace in NAMESPACES:
                if not registry._check_dialect_module_loaded(namespace):
                    raise ImportError(f"no module {__name__}.{namespace} for MLIR dialect '{namespace}'")
        finally:
            registry.dialect_search_modules = search
        _loaded = True
