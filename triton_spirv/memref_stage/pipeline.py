"""Linalg on tensors -> memref stage: the one pass pipeline both frontends share.

The memref stage is documented in docs/memref-stage.md. Every step here is an upstream
MLIR pass run through `mlir.passmanager`, except our rewrites: three on the affine loops
between the first pass lists (`AFFINE_REWRITES`: register blocking of contraction nests,
register_blocking.py; direct global access for full tiles of elementwise nests,
stream_forwarding.py; vectors for elementwise loops, elementwise_vectors.py, since
upstream's affine-super-vectorize failed on the softmax module when tried), then on GPU
shapes fill forwarding, in-place updates, block ownership, owner copies and work-group
sharing, then on scf loops a quirk's doubled barriers, streaming stores (CPU shapes),
branch tiles, local padding (GPU shapes), a quirk's negations as fma in kernels with
barriers, and program loops (CPU shapes); docs/architecture.md says what each does.
This file is the only place the pipeline is written down.
"""
from __future__ import annotations

from mlir import ir, passmanager

from .barrier_negations import negate_by_fma
from .block_ownership import align_to_blocks
from .branch_tiles import share_branch_tiles
from .fill_forwarding import forward_fills
from .in_place_updates import update_in_place
from .program_loops import loop_programs
from ..ir_dump import dump_after, dump_requested
from .elementwise_vectors import vectorize_elementwise, vectorize_elementwise_per_work_item
from .owner_copies import copy_by_owners
from .local_padding import pad_local_tiles
from .register_blocking import block_contractions, block_contractions_exactly
from .stream_forwarding import forward_streams
from .streaming_stores import stream_stores
from .work_group_sharing import double_barriers_in_branches, share_work_group

# Order matters:
# - fuse elementwise producers into consumers while still on tensors, so one loop nest
#   computes a whole chain of elementwise TTIR ops; named ops (tt.dot's linalg.contract,
#   transposes) are generalized only afterwards, so nothing is fused into a contraction,
#   where it would be recomputed for every element of the other operand;
# - one-shot bufferization turns tensors into memref.alloc buffers (the `__local` tiles);
# - linalg ops become affine loops, allocs inside loops are hoisted to kernel scope
#   (OpenCL requires `__local` arrays at kernel scope), then affine lowers to scf/arith.
LINALG_TO_AFFINE = (
    "canonicalize",
    "cse",
    "linalg-fuse-elementwise-ops",
    "linalg-generalize-named-ops",
    "canonicalize",
    "one-shot-bufferize{bufferize-function-boundaries=false}",
    "canonicalize",
    "cse",
    "func.func(convert-linalg-to-affine-loops)",
    "func.func(buffer-loop-hoisting)",
)
# ... AFFINE_REWRITES run here, on affine loops with analyzable accesses ...
AFFINE_REWRITES = (block_contractions, forward_streams, vectorize_elementwise)
AFFINE_TO_MEMREF = (
    "lower-affine",
    "canonicalize",
    "cse",
)
# GPU targets (several work-items per program): provably parallel loops become
# scf.parallel, perfectly nested ones merge into one (canonicalize), copies out of
# constant-filled tiles become fills (fill_forwarding.py), loop-carried tiles are
# updated in place (in_place_updates.py), the loops over a register-blocked
# accumulator step by its blocks (block_ownership.py), the copies into and out of
# tiles that only their owners access run on their owners (owner_copies.py: after
# block_ownership.py, whose steps make a tile's loops agree), and
# work_group_sharing.py distributes the outermost over the work-items.
PARALLELIZE = ("func.func(affine-parallelize)", "lower-affine", "canonicalize")


class PipelineError(Exception):
    """An upstream pass failed on a frontend's Linalg module (a frontend bug)."""


LINALG_TO_MEMREF = LINALG_TO_AFFINE + AFFINE_TO_MEMREF


def pipeline_text(passes: tuple[str, ...] = LINALG_TO_MEMREF) -> str:
    return "builtin.module(" + ",".join(passes) + ")"


def lower_to_memref(module: ir.Module, rewrites=AFFINE_REWRITES,
                    work_items: int = 1, program_loops: bool = False,
                    streaming_stores: bool = False, collectives: bool = False,
                    quirks: tuple[str, ...] = (), local_mem_bytes: int | None = None) -> ir.Module:
    """Lowers `module` in place from Linalg on tensors to the memref stage; with
    `work_items` > 1 (GPU targets) the work-items of a work-group share each program
    (reducing through work-group collective functions with `collectives`);
    with `program_loops` (CPU targets, one work-item per group) a work-group runs
    consecutive programs of kernels that allow it (program_loops.py); with
    `streaming_stores` (CPU targets, one work-item per group) large launches write
    results they never read with non-temporal stores (streaming_stores.py); `quirks`:
    the target's device quirks (triton_spirv/target.py) the GPU shape works around;
    `local_mem_bytes`: the target's local memory, which padded tiles must still fit
    (local_padding.py)."""
    with module.context:
        _run(module, LINALG_TO_AFFINE)
        if work_items > 1:
            # Stream forwarding (full tiles straight from global memory, versioned on
            # `if (full tiles)`) is for one work-item's loops: work-items that share a
            # program read its tiles through __local memory, shared by their copies.
            rewrites = tuple(r for r in rewrites if r is not forward_streams)
            # Work-items share the row blocks: blocks that divide the rows, one loop.
            rewrites = tuple(block_contractions_exactly if r is block_contractions else r
                             for r in rewrites)
            # One float4 per work-item and iteration instead of a float16 row.
            rewrites = tuple(vectorize_elementwise_per_work_item
                             if r is vectorize_elementwise else r for r in rewrites)
        for rewrite in rewrites:
            rewrite(module)
            _verify(module, rewrite.__name__)
            dump_after(rewrite.__name__, module)
        if work_items > 1:
            _run(module, PARALLELIZE)
            for rewrite in (forward_fills, update_in_place, align_to_blocks, copy_by_owners):
                rewrite(module)
                _verify(module, rewrite.__name__)
                dump_after(rewrite.__name__, module)
            share_work_group(module, work_items, collectives, quirks)
            _verify(module, share_work_group.__name__)
            dump_after(share_work_group.__name__, module)
        _run(module, AFFINE_TO_MEMREF)
        if work_items > 1 and "barrier_in_uniform_branch" in quirks:
            double_barriers_in_branches(module)     # after canonicalize, which undoes it
            _verify(module, double_barriers_in_branches.__name__)
            dump_after(double_barriers_in_branches.__name__, module)
        if streaming_stores and work_items == 1:
            # On scf loops: lower-affine's vector.store has no nontemporal flag to keep.
            stream_stores(module)
            _verify(module, stream_stores.__name__)
            dump_after(stream_stores.__name__, module)
        share_branch_tiles(module)
        _verify(module, share_branch_tiles.__name__)
        dump_after(share_branch_tiles.__name__, module)
        if work_items > 1:
            # __local tiles read along their columns: rows padded off the same bank,
            # within the target's `local_mem_bytes`.
            pad_local_tiles(module, local_mem_bytes)
            _verify(module, pad_local_tiles.__name__)
            dump_after(pad_local_tiles.__name__, module)
        if "fneg_across_barrier" in quirks:
            negate_by_fma(module)
            _verify(module, negate_by_fma.__name__)
            dump_after(negate_by_fma.__name__, module)
        if program_loops and work_items == 1:
            loop_programs(module)
            _verify(module, loop_programs.__name__)
            dump_after(loop_programs.__name__, module)
    return module


def _run(module: ir.Module, passes: tuple[str, ...]) -> None:
    """Runs the passes as one pipeline; one at a time when MLIR_ENABLE_DUMP asks for
    the IR after each (ir_dump.py)."""
    if not dump_requested(module):
        _run_pipeline(module, passes)
        return
    for one in passes:
        _run_pipeline(module, (one,))
        dump_after(one, module)


def _run_pipeline(module: ir.Module, passes: tuple[str, ...]) -> None:
    pm = passmanager.PassManager.parse(pipeline_text(passes))
    try:
        pm.run(module.operation)
    except ir.MLIRError as err:
        raise PipelineError(f"Linalg -> memref pipeline failed: {err}") from None


def _verify(module: ir.Module, rewrite: str) -> None:
    try:
        module.operation.verify()
    except ir.MLIRError as err:
        raise PipelineError(f"{rewrite} produced invalid IR: {err}") from None
