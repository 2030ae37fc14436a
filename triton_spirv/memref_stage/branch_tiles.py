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
    allocs = _allocs(if_op.parent)
    then_tiles = _tiles_by_type(allocs, if_op.regions[0].blocks[0])
    else_tiles = _tiles_by_type(allocs, if_op.regions[1].blocks[0])
    for tile_type, owners in then_tiles.items():
        for kept, replaced in zip(owners, else_tiles.get(tile_type, [])):
            if _inside(kept, if_op.regions[0].blocks[0]):
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


def _tiles_by_type(allocs: list, branch: ir.Block) -> dict:
    """The allocs all of whose uses lie in `branch`, grouped by type: the branch alone
    reads and writes them, so the other branch may use their memory."""
    tiles = defaultdict(list)
    for alloc in allocs:
        users = [use.owner for use in alloc.results[0].uses]
        if users and all(_inside(user, branch) for user in users):
            tiles[str(alloc.results[0].type)].append(alloc)
    return tiles


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
