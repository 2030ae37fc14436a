"""GPU-shaped kernels, work-group sharing (work_group_sharing.py): tiles whose every
element only the work-item that owns it in one distribution reads and writes become
private arrays of that work-item's elements (registers, not `__local` memory).
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, memref, vector

from .affine_nests import nested_allocs, op_of, owner
from .affine_nests import memory_access as _memory_access
from .block_ownership import block_offsets
from .work_group_sharing import entry_block, functions, sharing_of, vector_width


def privatize_tiles(module: ir.Module, config, analyses: dict) -> None:
    """Tiles only their owners touch become private arrays (privatize)."""
    for func in functions(module):
        privatize(sharing_of(func, config, analyses), entry_block(func))


def privatize(sharing, block: ir.Block) -> None:
    """A tile whose every element is read and written only by the work-item that
    owns it in one distribution (element loads and stores at the induction
    variables, or inside the block of iterations a step covers -- register blocks
    of an accumulator, block_ownership.py --, or whole-tile copies to and from
    other such tiles: loop-carried tiles) becomes a private array of that
    work-item's elements: `[owned]`, or `[owned, offset...]` for blocks."""
    plans = {}
    for op in nested_allocs(block):
        plan = _private_plan(sharing, op)
        if plan is not None:
            plans[op.results[0]] = plan
    changed = True
    while changed:     # a copy keeps both of its tiles private, or neither
        changed = False
        for tile, (_alloc, _accesses, copies, key) in list(plans.items()):
            partners = [c.operands[1] if c.operands[0] == tile else c.operands[0]
                        for c in copies]
            if any(p not in plans or plans[p][3] != key for p in partners):
                del plans[tile]
                changed = True
    privates = {}
    for tile, (alloc, accesses, _copies, _key) in plans.items():
        privates[tile] = _make_private(sharing, alloc, accesses)
    unique = {}
    for _alloc, _accesses, copies, _key in plans.values():
        for copy in copies:
            unique.setdefault(op_of(copy), copy)
    for copy in unique.values():
        with copy.location, ir.InsertionPoint(copy):
            memref.copy(privates[copy.operands[0]], privates[copy.operands[1]])
        copy.operation.erase()
    for alloc, *_rest in plans.values():
        alloc.operation.erase()


def _private_plan(sharing, alloc):
    """(alloc, element accesses, copies, distribution key and size) when the tile
    may be private, else None."""
    tile = alloc.results[0]
    tile_type = ir.MemRefType(tile.type)
    if not tile_type.has_static_shape or tile_type.rank == 0:
        return None
    accesses, copies = [], []
    for use in tile.uses:
        user = use.owner
        if user.name == "memref.copy" and sharing.distributed_loop_of(user) is None and \
                all(owner(v) is not None and owner(v).name == "memref.alloc" and
                    v.type == tile.type for v in user.operands):
            copies.append(user)
            continue
        access = _memory_access(user)
        loop = sharing.distributed_loop_of(user)
        if access is None or access[0] != tile or loop is None:
            return None
        distribution = sharing.distributed[loop]
        steps = _constant_steps(distribution.key)
        offsets = None if steps is None else \
            block_offsets(access[1], distribution.ivs, steps, vector_width(user))
        if offsets is None:
            return None
        accesses.append((user, distribution, loop, offsets))
    if not accesses:
        return None
    key = accesses[0][1].key
    total, chunk = sharing.iterations[accesses[0][2]]
    steps = _constant_steps(key)
    full = all(lb == ("constant", 0) and ub == ("constant", n) and n % step == 0
               for (lb, ub, _step), n, step in zip(key[0], tile_type.shape, steps))
    if any(a[1].key != key for a in accesses) or not full or total is None:
        return None
    return alloc, accesses, copies, (key, total, chunk)


def _make_private(sharing, alloc, accesses) -> ir.Value:
    """The private array of the blocks a work-item owns: one element per owned
    iteration when the loops step by 1, else one block `[steps...]` per iteration."""
    tile_type = ir.MemRefType(alloc.results[0].type)
    _user, distribution, loop, _offsets = accesses[0]
    total, chunk = sharing.iterations[loop]
    per_item = -(-total // (sharing.work_items * chunk)) * chunk
    steps = _constant_steps(distribution.key)
    blocked = any(step != 1 for step in steps)
    shape = [per_item, *steps] if blocked else [per_item]
    with alloc.location, ir.InsertionPoint(alloc):
        private = memref.alloca(ir.MemRefType.get(shape, tile_type.element_type), [], [])
    for user, distribution, _loop, offsets in accesses:
        first = 1 if user.name in ("memref.load", "vector.load") else 2
        user.operands[first - 1] = private
        with user.location, ir.InsertionPoint(user):
            index = ir.IndexType.get()
            within = [arith.constant(index, 0) if offset == 0 else offset
                      for offset in offsets] if blocked else []
        _replace_indices(user, first, [distribution.owned, *within])
    return private


def _replace_indices(op, first: int, indices: list) -> None:
    """A scalar or vector load or store through `indices` from operand `first` on (a
    new op: the number of operands changes)."""
    operands = list(op.operands)
    with op.location, ir.InsertionPoint(op):
        if op.name == "memref.load":
            op.results[0].replace_all_uses_with(memref.load(operands[0], indices))
        elif op.name == "vector.load":
            op.results[0].replace_all_uses_with(
                vector.load(op.results[0].type, operands[0], indices))
        elif op.name == "vector.store":
            vector.store(operands[0], operands[1], indices)
        else:
            memref.store(operands[0], operands[1], indices)
    op.erase()


def _constant_steps(key: tuple) -> tuple | None:
    """The steps of a distribution key's loop space, when all are constants."""
    steps = tuple(step[1] if step[0] == "constant" else None for _lb, _ub, step in key[0])
    return None if None in steps else steps
