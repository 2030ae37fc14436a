"""GPU-shaped kernels: a tile copied from a constant-filled tile is filled directly.

`acc = tl.zeros(...)` inside a loop (tutorial 09 zeroes its accumulator for every
output tile; layer norm's backward starts two sums from one zero tile) bufferizes to
one zero-filled tile, created once, and a `memref.copy` of it into the accumulator at
each use. On GPU shapes such a copy between two `__local` tiles runs on one work-item
(work_group_sharing.py) and keeps both tiles in `__local` memory. Here each such copy
becomes a clone of the fill loop writing the copy's target, and the filled tile, now
unused, goes: a parallel fill every work-item shares, and one tile less.

The filled tile must be written by exactly one loop, an `scf.parallel` over the whole
tile storing a value defined outside it at the loop's induction variables, and
otherwise only be the source of whole-tile copies (it never changes after the fill).
"""
from __future__ import annotations

from mlir import ir

from .affine_nests import constant_index, is_nested_in, memory_access, nested_allocs, op_of


def forward_fills(module: ir.Module) -> int:
    """Replaces the copies out of constant-filled tiles of `module` by fills; returns
    how many tiles went."""
    forwarded = 0
    for func in module.body.operations:
        if func.operation.name != "func.func" or not func.regions[0].blocks:
            continue
        for alloc in [a for a in nested_allocs(func.regions[0].blocks[0]) if not len(a.operands)]:
            forwarded += _forward(alloc)
    return forwarded



def _forward(alloc) -> int:
    tile = alloc.results[0]
    fills, copies = [], []
    for use in tile.uses:
        user = use.owner
        if user.name == "memref.copy" and user.operands[0] == tile and \
                user.operands[1].type == tile.type:
            copies.append(user)
        else:
            fills.append(user)
    if len(fills) != 1 or not copies:
        return 0
    loop = _fill_loop(fills[0], tile)
    if loop is None:
        return 0
    for copy in copies:
        target = copy.operands[1]
        clone = op_of(loop).clone(ir.InsertionPoint(copy))
        _retarget(clone, tile, target)
        copy.erase()
    op_of(loop).erase()
    op_of(alloc).erase()
    return 1


def _fill_loop(store, tile: ir.Value):
    """The scf.parallel of `store` when it fills all of `tile` with one value."""
    access = memory_access(store)
    loop = op_of(store).parent
    if access is None or not access[2] or loop is None or loop.name != "scf.parallel":
        return None
    body = loop.regions[0].blocks[0]
    ops = list(body.operations)
    if len(ops) != 2 or op_of(ops[0]) != op_of(store):
        return None
    value = store.operands[0]
    if not isinstance(value, ir.OpResult) or is_nested_in(value.owner, loop):
        return None
    ivs = list(body.arguments)
    if access[1] != ivs:
        return None
    n = len(ivs)
    lbs, ubs, steps = (
        [constant_index(v) for v in list(loop.operands)[k * n:(k + 1) * n]] for k in range(3))
    shape = list(ir.MemRefType(tile.type).shape)
    width = ir.VectorType(value.type).shape[-1] if isinstance(value.type, ir.VectorType) else 1
    full = lbs == [0] * n and ubs == shape and None not in steps and \
        steps[:-1] == [1] * (n - 1) and steps[-1] == width
    return loop if full else None



def _retarget(clone, old: ir.Value, new: ir.Value) -> None:
    def visit(inner):
        for i, operand in enumerate(inner.operands):
            if operand == old:
                inner.operands[i] = new
        return ir.WalkResult.ADVANCE
    clone.walk(visit)
