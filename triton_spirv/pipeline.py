"""Linalg on tensors -> memref stage: the one pass pipeline both frontends share.

The memref stage is documented in docs/memref-stage.md. Every step here is an upstream
MLIR pass run through `mlir.passmanager`; this file is the only place the pipeline is
written down.
"""
from __future__ import annotations

from mlir import ir, passmanager

# Order matters:
# - generalize named ops and fuse elementwise producers into consumers while still on
#   tensors, so one loop nest computes a whole chain of elementwise TTIR ops;
# - one-shot bufferization turns tensors into memref.alloc buffers (the `__local` tiles);
# - linalg ops become affine loops, allocs inside loops are hoisted to kernel scope
#   (OpenCL requires `__local` arrays at kernel scope), then affine lowers to scf/arith.
LINALG_TO_MEMREF = (
    "canonicalize",
    "cse",
    "linalg-generalize-named-ops",
    "linalg-fuse-elementwise-ops",
    "canonicalize",
    "one-shot-bufferize{bufferize-function-boundaries=false}",
    "canonicalize",
    "cse",
    "func.func(convert-linalg-to-affine-loops)",
    "func.func(buffer-loop-hoisting)",
    "lower-affine",
    "canonicalize",
    "cse",
)


class PipelineError(Exception):
    """An upstream pass failed on a frontend's Linalg module (a frontend bug)."""


def pipeline_text() -> str:
    return "builtin.module(" + ",".join(LINALG_TO_MEMREF) + ")"


def lower_to_memref(module: ir.Module) -> ir.Module:
    """Lowers `module` in place from Linalg on tensors to the memref stage."""
    with module.context:
        pm = passmanager.PassManager.parse(pipeline_text())
        try:
            pm.run(module.operation)
        except ir.MLIRError as err:
            raise PipelineError(f"Linalg -> memref pipeline failed: {err}") from None
    return module
