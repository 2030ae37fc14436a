"""Tiles of exclusive branches share their memory.

A versioned kernel (ttir_to_linalg/versioning.py) runs either its block path or its
gather fallback, the two branches of one `scf.if`; stream forwarding versions nests the
same way. Every `memref.alloc` becomes a `__local` array at kernel scope, so without
this rewrite a kernel would need the tiles of both versions at once, although no
work-group ever uses both. Here a tile of the `else` branch takes over a tile of the
same type from the `then` branch: that alloc moves in front of the `scf.if` and serves
both. Inner `scf.if`s go first, so the tiles they share can pair again further out.
"""
from __future__ import annotations

from collections import defaultdict

from mlir import ir


def share_branch_tiles(module: ir.Module) -> None:
    """Pairs same-typed tiles of the two branches of every two-branch `scf.if`."""
    for func in module.body.operations:
        if func.operation.name == "func.func" and func.regions[0].blocks:
            for if_op in _ifs_innermost_first(func.regions[0].blocks[0]):
                _share(if_op.operation)


def _ifs_innermost_first(block: ir.Block) -> list:
    found = []
    for op in block.operations:
        for region in op.regions:
            for inner in region.blocks:
                found.extend(_ifs_innermost_first(inner))
        if op.operation.name == "scf.if" and len(op.regions[1].blocks):
            found.append(op)
    return found


def _share(if_op) -> None:
    allocs = _allocs(_function_of(if_op))
    then_block, else_block = if_op.regions[0].blocks[0], if_op.regions[1].blocks[0]
    then_tiles = _tiles_by_type(allocs, then_block, else_block, if_op)
    else_tiles = _tiles_by_type(allocs, else_block, then_block, if_op)
    for tile_type, candidates in then_tiles.items():
        others = list(else_tiles.get(tile_type, []))
        for then_tile in candidates:
            partner = next((o for o in others if _can_pair(then_tile, o, then_block, else_block)),
                           None)
            if partner is None:
                continue
            others.remove(partner)
            _merge(then_tile, partner, then_block, else_block, if_op)


def _can_pair(then_tile, else_tile, then_block: ir.Block, else_block: ir.Block) -> bool:
    """At most one of the two is used outside its branch: two such tiles may both be
    used in the same branch further out."""
    return _within(then_tile, then_block) or _within(else_tile, else_block)


def _merge(then_tile, else_tile, then_block: ir.Block, else_block: ir.Block, if_op) -> None:
    """One of the two tiles serves both: the one used outside its branch (defined in
    front of the `scf.if`, so it dominates the other's uses), else the `then` one, moved
    in front of the `scf.if`."""
    if not _within(else_tile, else_block):
        kept, replaced = else_tile, then_tile
    else:
        kept, replaced = then_tile, else_tile
        if _inside(kept, then_block):
            kept.move_before(if_op)
    replaced.results[0].replace_all_uses_with(kept.results[0])
    replaced.erase()


def _allocs(op) -> list:
    """The statically shaped memref.allocs nested in `op`, in program order."""
    found = []
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner = inner.operation
                if inner.name == "memref.alloc" and not len(inner.operands):
                    found.append(inner)
                found.extend(_allocs(inner))
    return found


def _tiles_by_type(allocs: list, branch: ir.Block, other: ir.Block, if_op) -> dict:
    """The allocs used in `branch`, never in the other branch, and elsewhere only in
    branches exclusive with the `scf.if` (a version's tile that an enclosing if's other
    version uses too: the two versions of a versioned matmul's operand tiles), grouped
    by type: while the `scf.if` runs, only `branch` reads and writes them, so the other
    branch may use their memory."""
    tiles = defaultdict(list)
    for alloc in allocs:
        users = [use.owner for use in alloc.results[0].uses]
        inside = [user for user in users if _inside(user, branch)]
        if not inside or any(_inside(user, other) for user in users):
            continue
        outside = [user for user in users if not _inside(user, branch)]
        if all(_exclusive(user, if_op) for user in outside) and \
                (not outside or _dominates_if(alloc, if_op)):
            tiles[str(alloc.results[0].type)].append(alloc)
    return tiles


def _function_of(op):
    op = op.operation
    while op.name != "func.func":
        op = op.parent
    return op


def _within(alloc, branch: ir.Block) -> bool:
    """Every use of `alloc` lies in `branch`."""
    return all(_inside(use.owner, branch) for use in alloc.results[0].uses)


def _exclusive(op, if_op) -> bool:
    """`op` lies in one branch of an `scf.if` enclosing `if_op`, which lies in the other:
    the two never run in one execution of that `scf.if`."""
    child = if_op.operation
    while (parent := child.parent) is not None and parent.name != "func.func":
        if parent.name == "scf.if" and len(parent.regions[1].blocks):
            branches = [parent.regions[0].blocks[0], parent.regions[1].blocks[0]]
            mine = next(b for b in branches if _inside(child, b))
            theirs = branches[1] if mine == branches[0] else branches[0]
            if _inside(op, theirs):
                return True
        child = parent
    return False


def _dominates_if(alloc, if_op) -> bool:
    """`alloc` is defined in a block enclosing `if_op`, in front of it."""
    child = if_op.operation
    while child is not None and child.name != "func.func":
        if alloc.operation.block == child.block:
            for op in child.block.operations:
                if op.operation == alloc.operation:
                    return True
                if op.operation == child:
                    return False
        child = child.parent
    return False


def _inside(op, block: ir.Block) -> bool:
    """Whether `op` is in `block` or nested in an op of it."""
    op = op.operation
    while True:
        if op.block == block:
            return True
        parent = op.parent
        if parent is None or parent.name == "func.func":
            return False
        op = parent
