"""`MLIR_ENABLE_DUMP`: the IR after each pass of our pipelines, as Triton does for its own.

Triton's pass managers (our `ttir` stage runs one) print the IR around each pass when
`MLIR_ENABLE_DUMP=1`, or only for the kernel it names (`MLIR_ENABLE_DUMP=my_kernel`),
to stderr or to the file `MLIR_DUMP_PATH`. Our stages after it (TTIR -> Linalg, the
upstream pass pipeline to the memref stage with its rewrites, the HLO frontend's steps)
do the same here: with dumping on, memref_stage/pipeline.py runs its passes one at a time and prints
the module after each, under MLIR's header line
`// -----// IR Dump After canonicalize ('builtin.module' operation) //----- //`.
"""
from __future__ import annotations

import os
import sys

from mlir import ir

DUMP_ENV = "MLIR_ENABLE_DUMP"
DUMP_PATH_ENV = "MLIR_DUMP_PATH"
_TRUE = ("1", "true", "on", "yes", "y")
_FALSE = ("", "0", "false", "off", "no", "n")


def _function_names(module: ir.Module) -> set[str]:
    names = set()
    for op in module.body.operations:
        if "sym_name" in op.attributes:
            names.add(ir.StringAttr(op.attributes["sym_name"]).value)
    return names


def dump_requested(module: ir.Module) -> bool:
    """Whether MLIR_ENABLE_DUMP asks for this module's IR (all kernels, or this one)."""
    value = os.environ.get(DUMP_ENV, "").strip()
    if value.lower() in _FALSE:
        return False
    return value.lower() in _TRUE or value in _function_names(module)


def dump_after(step: str, module: ir.Module) -> None:
    """Prints the module after `step` where MLIR_ENABLE_DUMP asks for it."""
    if not dump_requested(module):
        return
    text = (f"// -----// IR Dump After {step} ('builtin.module' operation) //----- //\n"
            f"{module.operation.get_asm()}\n")
    path = os.environ.get(DUMP_PATH_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stderr.write(text)
        sys.stderr.flush()
