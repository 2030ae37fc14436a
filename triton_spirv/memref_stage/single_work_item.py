"""GPU-shaped kernels, work-group sharing (work_group_sharing.py): single-work-item
sections. An op that writes memory outside the distributed loops would be run by every
work-item; consecutive ones run on work-item 0 (`scf.if lid == 0`, marked
`opencl.single_work_item`), their results that every work-item uses going through
`__local` memory; copies between two work-group tiles are spread over the work-items.

Under the quirk uniform_branches_in_work_item_branch (triton_spirv/target.py) a section does
not nest branches: a conditional write (a masked scalar atomic or store: an `scf.if`
without results or else) is a section of its own, guarded by `lid == 0 & condition`.
"""
from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, memref, scf

from ..ir_helpers import holds
from ..ir_helpers import root_buffer as _root
from .affine_nests import op_of
from .copy_loops import copy_loop
from .work_group_distribution import distribute
from .work_group_sharing import (WRITES, entry_block, functions, is_local, is_private,
                                 sharing_of)


def guard_single_sections(module: ir.Module, config, analyses: dict) -> None:
    """Single-work-item sections: writes every work-item would repeat run on work-item
    0 (guard_block)."""
    branches_apart = config.has_quirk("uniform_branches_in_work_item_branch")
    for func in functions(module):
        guard_block(sharing_of(func, config, analyses), entry_block(func), branches_apart)


def guard_block(sharing, block: ir.Block, branches_apart: bool = False) -> None:
    """Puts each run of consecutive writing ops that every work-item would otherwise
    repeat into one `scf.if lid == 0`; recurses into ops holding shared work. With
    `branches_apart`, a conditional write is a section of its own (_guard_branch)."""
    run = []
    for op in list(block.operations):
        if _tile_to_tile_copy(op):
            _guard(sharing, run)
            run = []
            _spread_copy(sharing, op)
            continue
        if sharing.shared(op) or not _writes_memory(op) or _is_terminator(op):
            _guard(sharing, run)
            run = []
            if sharing.shared(op) and op_of(op) not in sharing.distributed and \
                    op_of(op) not in sharing.partitioned:
                for region in op.regions:
                    for inner in region.blocks:
                        guard_block(sharing, inner, branches_apart)
            continue
        if branches_apart and _conditional_write(op):
            _guard(sharing, run)
            run = []
            _guard_branch(sharing, op)
            continue
        run.append(op)
    _guard(sharing, run)


def _spread_copy(sharing, copy) -> None:
    """A copy between two work-group tiles: work-item `lid` moves elements lid,
    lid + work_items, ... (row-major), a loop distributed in chunks of one: the
    work-group shares the copy instead of waiting on work-item 0's loop."""
    source, target = copy.operands[0], copy.operands[1]
    with copy.location, ir.InsertionPoint(copy):
        loop = copy_loop(source, target, list(ir.MemRefType(source.type).shape))
    copy.operation.erase()
    distribute(sharing, loop, chunk=1)


def _guard(sharing, run: list) -> None:
    if not run:
        return
    first = run[0]
    escaping = [(result, uses) for op in run for result in op.results
                if (uses := [(use.owner, use.operand_number) for use in result.uses
                             if not _inside_any(use.owner, run)])]
    with first.location, ir.InsertionPoint(first):
        index = ir.IndexType.get()
        # Results every work-item uses go through __local memory.
        buffers = [memref.alloc(ir.MemRefType.get([], result.type), [], [])
                   for result, _uses in escaping]
        is_first = arith.cmpi(arith.CmpIPredicate.eq, sharing.lid, arith.constant(index, 0))
        guard = scf.IfOp(is_first)
    with first.location, ir.InsertionPoint(guard.then_block):
        terminator = scf.YieldOp([])
    for op in run:
        op.move_before(terminator)
    with first.location, ir.InsertionPoint(terminator):
        for (result, _uses), buffer in zip(escaping, buffers):
            memref.store(result, buffer, [])
    loads = []
    with first.location, ir.InsertionPoint(guard):
        for (_result, uses), buffer in zip(escaping, buffers):
            shared = memref.load(buffer, [])
            loads.append(shared)
            for owner_op, number in uses:
                owner_op.operands[number] = shared
    if loads:   # the loads were put before the section; it goes first
        op_of(guard).move_before(loads[0].owner)
    sharing.record_single_section(guard)


def _conditional_write(op) -> bool:
    """An `scf.if` with neither results nor else: its condition can take in the
    section's."""
    return op.operation.name == "scf.if" and not op.results and \
        not op.regions[1].blocks


def _guard_branch(sharing, branch) -> None:
    """`if (c) {...}` -> `if (lid == 0 & c) {...}`, a single-work-item section."""
    with branch.location, ir.InsertionPoint(branch):
        is_first = arith.cmpi(arith.CmpIPredicate.eq, sharing.lid,
                              arith.constant(ir.IndexType.get(), 0))
        branch.operands[0] = arith.andi(is_first, branch.operands[0])
    sharing.record_single_section(branch)


def _inside_any(op, run) -> bool:
    """`op` is one of `run` or nested in one."""
    parent = op_of(op)
    while parent is not None:
        if any(op_of(parent) == op_of(r) for r in run):
            return True
        parent = parent.parent if hasattr(parent, "parent") else None
    return False


def _tile_to_tile_copy(op) -> bool:
    """A `memref.copy` of more than one element between two work-group tiles (not
    private arrays) of a static shape."""
    if op.operation.name != "memref.copy":
        return False
    source, target = op.operands[0], op.operands[1]
    if not all(is_local(v) and not is_private(_root(v)) for v in (source, target)):
        return False
    source_type = ir.MemRefType(source.type)
    return source_type.has_static_shape and math.prod(source_type.shape) > 1


def _is_terminator(op) -> bool:
    return op.operation.name in ("scf.yield", "func.return", "scf.condition", "scf.reduce")


def _writes_memory(op) -> bool:
    """Writes memory that other work-items see (not private arrays)."""
    def shared_write(inner) -> bool:
        if inner.name in ("memref.copy", "memref.store") and \
                is_private(_root(inner.operands[1])):
            return False
        return inner.name in WRITES
    return holds(op, shared_write)
