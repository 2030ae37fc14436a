"""GPU-shaped kernels: a work-item owns whole register blocks of an accumulator tile.

Register blocking (register_blocking.py) turns a contraction into an `scf.parallel`
over blocks of `ROWS x WIDTH` accumulator elements (steps `(ROWS, WIDTH)`), and
work_group_sharing.py gives each work-item some of those blocks. The other loops over
the same tile -- the `tl.zeros` that fills it, elementwise epilogues, the conversion
before the store -- step element by element (or one vector at a time), so they would
hand the tile's elements to work-items in another pattern, and the tile would have to
live in `__local` memory for the work-items to exchange its elements (for the
128x64 fp32 accumulator of the tutorial matmul, 32 KB of a GPU's 64 KB).

This rewrite runs on the scf stage before work_group_sharing.py distributes the loops.
For every tile whose accesses are all inside outermost `scf.parallel` loops over the
whole tile, at the loops' induction variables (plus offsets inside a step), it gives
those loops the steps of the coarsest of them when every step divides it: the body of a
loop with finer steps goes into inner `scf.for` loops over the offsets of one block.

    scf.parallel (%i, %j) = (0, 0) to (128, 64) step (1, 16) { store %acc[%i, %j] }
 -> scf.parallel (%i, %j) = (0, 0) to (128, 64) step (4, 16) {
      scf.for %r = 0 to 4 { store %acc[%i + %r, %j] } }

All of them then distribute alike, each work-item touches only the blocks it owns, and
work_group_sharing.py makes the tile a private array of those blocks (`block_offsets`
proves that each access stays inside its block). Barriers and results are unchanged:
the loops' iterations were independent before and are now only grouped.
"""
from __future__ import annotations

from math import prod

from mlir import ir
from mlir.dialects import arith, scf

from .affine_nests import (constant_index, memory_access, op_of, outermost_parallel_loops,
                           owner)


def align_to_blocks(module: ir.Module) -> int:
    """Gives the loops over each blocked tile of `module` the tile's block steps;
    returns how many loops changed."""
    changed = 0
    for func in module.body.operations:
        if func.operation.name == "func.func" and func.regions[0].blocks:
            changed += _align_function(func.regions[0].blocks[0])
    return changed


def _align_function(entry: ir.Block) -> int:
    loops = outermost_parallel_loops(entry)
    chosen = {}     # loop -> the steps it gets
    users_of = [(tile, users) for tile in _tiles(entry)
                if (users := _loops_over(tile, loops))]
    # A loop over two tiles (acc * alpha reading one accumulator tile and writing its
    # loop-carried partner) passes the blocks of one to the other: repeat until stable.
    changed = True
    while changed:
        changed = False
        for tile, users in users_of:
            steps = _block_steps(tile, users, chosen)
            if steps is None or any(chosen.get(op_of(loop), steps) != steps for loop in users):
                continue    # a loop over two tiles blocked differently keeps its own steps
            for loop in users:
                if op_of(loop) not in chosen:
                    chosen[op_of(loop)] = steps
                    changed = True
    regrouped = 0
    for loop in loops:
        steps = chosen.get(op_of(loop))
        if steps is not None and steps != _constant_steps(loop):
            _regroup(loop, steps)
            regrouped += 1
    return regrouped


def _tiles(block: ir.Block) -> list:
    """Static tiles of rank >= 1: the memref.allocs under `block`."""
    found = []
    for op in block.operations:
        if op.operation.name == "memref.alloc":
            tile_type = ir.MemRefType(op.results[0].type)
            if tile_type.has_static_shape and tile_type.rank >= 1:
                found.append(op.results[0])
        for region in op.regions:
            for inner in region.blocks:
                found.extend(_tiles(inner))
    return found


def _loops_over(tile: ir.Value, loops: list) -> list | None:
    """The loops among `loops` holding every element access of `tile`, each at the
    loop's induction variables plus offsets; None when some use is of another kind.
    Whole-tile copies (loop-carried tiles) are left to work_group_sharing.py."""
    users = []
    for use in tile.uses:
        user = use.owner
        if user.name == "memref.copy":
            continue
        access = memory_access(user)
        loop = _enclosing(user, loops)
        if access is None or access[0] != tile or loop is None:
            return None
        ivs = list(loop.regions[0].blocks[0].arguments)
        if len(access[1]) != len(ivs) or \
                any(_base_and_offset(index, iv) is None for index, iv in zip(access[1], ivs)):
            return None
        if not any(op_of(loop) == op_of(seen) for seen in users):
            users.append(loop)
    return users


def _block_steps(tile: ir.Value, loops: list, chosen: dict) -> tuple | None:
    """The steps of the coarsest loop (as `chosen` so far, else as it is) when the loops
    all cover the whole tile from 0 with constant steps dividing those, and the
    coarsest divides the tile."""
    shape = ir.MemRefType(tile.type).shape
    all_steps = []
    for loop in loops:
        n = len(loop.regions[0].blocks[0].arguments)
        lbs, ubs = list(loop.operands)[:n], list(loop.operands)[n:2 * n]
        steps = chosen.get(op_of(loop), _constant_steps(loop))
        if steps is None or [constant_index(v) for v in lbs] != [0] * n or \
                [constant_index(v) for v in ubs] != list(shape):
            return None
        all_steps.append(steps)
    coarsest = max(all_steps, key=prod)
    if any(size % step for size, step in zip(shape, coarsest)) or \
            any(c % s for steps in all_steps for c, s in zip(coarsest, steps)):
        return None
    return coarsest


def _constant_steps(loop) -> tuple | None:
    n = len(loop.regions[0].blocks[0].arguments)
    steps = tuple(constant_index(v) for v in list(loop.operands)[2 * n:3 * n])
    return None if None in steps else steps


def _regroup(loop, steps: tuple) -> None:
    """`loop` steps by `steps`; its body runs in inner loops over one block's offsets."""
    n = len(steps)
    old_steps = _constant_steps(loop)
    body = loop.regions[0].blocks[0]
    ivs = list(body.arguments)
    ops = list(body.operations)[:-1]            # all but scf.reduce
    index = ir.IndexType.get()
    with loop.location, ir.InsertionPoint(loop):
        for k, step in enumerate(steps):
            loop.operands[2 * n + k] = arith.constant(index, step)
    point = ir.InsertionPoint.at_block_begin(body)
    offsets = []
    with loop.location:
        for step, old in zip(steps, old_steps):
            if step == old:
                offsets.append(None)
                continue
            with point:
                inner = scf.ForOp(arith.constant(index, 0), arith.constant(index, step),
                                  arith.constant(index, old))
            with ir.InsertionPoint(inner.body):
                point = ir.InsertionPoint(scf.YieldOp([]))
            offsets.append(inner.induction_variable)
        terminator = point.ref_operation
        with point:
            moved = [(iv, arith.addi(iv, offset)) for iv, offset in zip(ivs, offsets)
                     if offset is not None]
    for op in ops:
        op.move_before(terminator)
    for iv, element in moved:
        iv.replace_all_uses_except(element, op_of(element.owner))


# ------------------------------------------------------------------ block offsets

def block_offsets(indices: list, ivs: tuple, steps: tuple, width: int = 1) -> list | None:
    """For an access at `indices` inside a loop over blocks (`ivs`, constant `steps`;
    `width` elements along the last dimension): the offset of the access in its block
    per dimension (a Value, or 0), when each is provably in [0, step); else None."""
    if len(indices) != len(ivs):
        return None
    offsets = []
    for k, (index, iv, step) in enumerate(zip(indices, ivs, steps)):
        split = _base_and_offset(index, iv)
        if split is None:
            return None
        extent = width if k == len(ivs) - 1 else 1
        if split == 0:
            if extent > step:
                return None
            offsets.append(0)
            continue
        low, high = _value_range(split)
        if low is None or low < 0 or high + extent > step:
            return None
        offsets.append(split)
    return offsets


def _base_and_offset(index: ir.Value, iv: ir.Value):
    """`index` as `iv + offset`: 0 for `iv` itself, the offset Value for `iv + x`."""
    if index == iv:
        return 0
    defining = owner(index)
    if defining is None or defining.name != "arith.addi":
        return None
    left, right = defining.operands[0], defining.operands[1]
    if left == iv and right != iv:
        return right
    if right == iv and left != iv:
        return left
    return None


def _value_range(value: ir.Value) -> tuple:
    """(lowest, highest) an index value takes: constants, the induction variables of
    scf.for loops with constant bounds, and sums of those; (None, None) otherwise."""
    constant = constant_index(value)
    if constant is not None:
        return constant, constant
    defining = owner(value)
    if defining is not None and defining.name == "arith.addi":
        (a, b), (c, d) = (_value_range(v) for v in defining.operands)
        return (None, None) if None in (a, b, c, d) else (a + c, b + d)
    if isinstance(value, ir.BlockArgument) and value.arg_number == 0:
        loop = value.owner.owner
        if loop.name == "scf.for":
            lb, ub, step = (constant_index(v) for v in list(loop.operands)[:3])
            if None not in (lb, ub, step) and ub > lb and step > 0:
                return lb, lb + (ub - lb - 1) // step * step
    return None, None


def _enclosing(op, loops: list):
    """The loop of `loops` that holds `op`, else None."""
    parent = op_of(op).parent
    while parent is not None:
        for loop in loops:
            if op_of(loop) == op_of(parent):
                return loop
        parent = parent.parent if hasattr(parent, "parent") else None
    return None
