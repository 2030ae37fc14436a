"""GPU-shaped kernels: the copies into and out of a tile that only its owners access
run on its owners.

A masked `tl.load` bufferizes to a tile, a fill of `other` when the block is partial,
and a `memref.copy` of the block's valid part from global memory into the tile; a
masked `tl.store` to a copy of a tile's valid part into global memory; `tl.sum` over
rows to a copy of the first row into the sum's tile. On GPU shapes such a copy is an
async work-group copy, or one work-item's loop (work_group_sharing.py), which hands
the tile's elements to work-items in another pattern than the elementwise loops that
compute with them: the tile has to live in `__local` memory, with barriers around the
copy (the layer norm backward's dw/db kernel loads two 32x128 fp32 tiles per
iteration so).

When every other access of the tile is an element (or vector) access inside an
`scf.parallel` over the whole tile at its induction variables, with the same steps
`(1, ..., 1, W)` for all of them (or another such copy), the copy becomes one more
such loop (copy_loops.py): each iteration copies its own W elements, one vector load
and store when they all lie inside the copied extents (f32 elements), else element by
element under a bounds check.

    memref.copy %global_part, %tile_part       (subviews [0, 0] [%rows, %cols] [1, 1])
 -> scf.parallel (%i, %j) = (0, 0) to (32, 128) step (1, 16) {
      scf.if (%i < %rows && %j + 16 <= %cols) { tile[%i, %j:+16] = global[%i, %j:+16] }
      else { scf.for %k = 0 to 16 { scf.if (%i < %rows && %j + %k < %cols)
                                      { tile[%i, %j + %k] = global[%i, %j + %k] } } } }

The other side is a global block (tl.load, tl.store) or, for copies into the tile, a
view of another tile with the tile's shape copied whole. The elements copied are the
copy's, so results are unchanged. All accesses of the tile then distribute alike and
work_group_sharing.py makes it a private array of each work-item's elements: no
`__local` memory and no barriers for it.

It runs on the scf stage of GPU-shaped kernels after block_ownership.py, whose steps
make the loops over a tile agree (an elementwise loop stepping by one element and a
reduction's stepping by vectors), and before work_group_sharing.py.
"""
from __future__ import annotations

from mlir import ir

from ..ir_helpers import root_buffer
from .affine_nests import (access_width, is_alloc, kernel_ops, memory_access, op_of,
                           users_through_views, whole_tile_steps)
from .block_ownership import block_offsets
from .copy_loops import copy_loop
from .stream_forwarding import global_block

# Element types moved by vector loads: those of the tiles elementwise_vectors.py
# vectorizes (the loops stepping by vectors that read them). Others move element by
# element (bf16 and fp8 have no vector loads at all).
_VECTOR_ELEMENTS = ("f32",)


def copy_by_owners(module: ir.Module) -> int:
    """Turns the copies of `module` between global memory (or another tile) and tiles
    that only their owners access into loops over the owners' elements; returns how
    many changed."""
    return sum(_copy_by_owners(copy) for copy in kernel_ops(module, "memref.copy"))


def _copy_by_owners(copy) -> int:
    tile, into_tile = _tile_of(copy)
    if tile is None:
        return 0
    block, extents = _block(copy, tile, into_tile)
    if block is None:
        return 0
    steps = _owner_steps(tile, copy)
    if steps is None:
        return 0
    views = list(copy.operands)
    with copy.location, ir.InsertionPoint(copy):
        if into_tile:
            _owners_copy(block, tile, tile, extents, steps)
        else:
            _owners_copy(tile, block, tile, extents, steps)
    copy.erase()
    for view in views:
        if view not in (tile, block) and not list(view.uses):
            op_of(view.owner).erase()
    return 1


def _tile_of(copy) -> tuple:
    """(the tile, whether the copy writes it) of a copy into a tile (from any memory)
    or out of one into global memory; (None, None) otherwise."""
    if is_alloc(root_buffer(copy.operands[1])):
        return root_buffer(copy.operands[1]), True
    if is_alloc(root_buffer(copy.operands[0])):
        return root_buffer(copy.operands[0]), False
    return None, None


def _block(copy, tile: ir.Value, into_tile: bool) -> tuple:
    """(the whole block the copy moves between memory and `tile`, the copied extents):
    a global block and its masked extents (stream_forwarding.py), or a view of the
    tile's shape of another tile, copied whole; (None, None) otherwise."""
    other, tile_side = copy.operands[0], copy.operands[1]
    if not into_tile:
        other, tile_side = tile_side, other
    if not is_alloc(root_buffer(other)):
        return global_block(copy, tile, into_tile)
    other_type = ir.MemRefType(other.type)
    shape = list(ir.MemRefType(tile.type).shape)
    if into_tile and tile_side == tile and root_buffer(other) != tile and \
            other_type.has_static_shape and list(other_type.shape) == shape:
        return other, shape
    return None, None


def _owner_steps(tile: ir.Value, copy) -> list | None:
    """The steps `(1, ..., 1, W)` of the scf.parallel loops over the whole tile that hold
    every access of `tile` but `copy`, each inside its iteration's W elements."""
    found = None
    for user in users_through_views(tile):
        if op_of(user) == op_of(copy) or _owners_may_copy(user, tile):
            continue
        access = memory_access(user)
        loop = _enclosing_parallel(user)
        if access is None or access[0] != tile or loop is None:
            return None
        steps = whole_tile_steps(loop, ir.MemRefType(tile.type).shape)
        if steps is None or found not in (None, steps):
            return None
        ivs = tuple(loop.regions[0].blocks[0].arguments)
        if block_offsets(access[1], ivs, tuple(steps), access_width(user)) is None:
            return None
        found = steps
    return found


def _owners_may_copy(op, tile: ir.Value) -> bool:
    """A copy of `tile` that this rewrite also turns into a loop when the tile's other
    accesses allow it."""
    if op.name != "memref.copy":
        return False
    found, into_tile = _tile_of(op)
    return found == tile and _block(op, tile, into_tile)[0] is not None


def _enclosing_parallel(op):
    parent = op_of(op).parent
    while parent is not None and parent.name != "func.func":
        if parent.name == "scf.parallel":
            return parent
        parent = parent.parent
    return None


def _owners_copy(source: ir.Value, target: ir.Value, tile: ir.Value, extents: list,
                 steps: list) -> None:
    """At the insertion point: the loop over `tile` (the source or the target, the other
    a block of its shape) in `steps` whose iterations copy their elements inside
    `extents`."""
    width = steps[-1]
    copy_loop(source, target, list(ir.MemRefType(tile.type).shape), width, extents,
              vectors=width > 1 and _vector_copyable(source, target))


def _vector_copyable(source: ir.Value, target: ir.Value) -> bool:
    """Unit stride along the last dimension on both sides, and an element type of
    `_VECTOR_ELEMENTS`."""
    element = str(ir.MemRefType(target.type).element_type)
    return element in _VECTOR_ELEMENTS and all(
        ir.MemRefType(side.type).get_strides_and_offset()[0][-1] == 1 for side in (source, target))
