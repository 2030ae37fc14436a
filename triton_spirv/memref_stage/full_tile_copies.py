"""Copies into the operand tiles of a contraction, versioned on filling the whole tile.

A masked `tl.load` of a block becomes a copy of a sub-block whose extents are known only
at run time (the mask's bounds, clamped to the block):

    %src = memref.subview %block[0, 0] [%rows, %cols] [1, 1]    (%block: 128x64, global)
    %dst = memref.subview %tile[0, 0] [%rows, %cols] [1, 1]     (%tile: alloc 128x64)
    memref.copy %src, %dst

Inside a matmul's k loop the block is almost always whole. Both printers make a copy
of run-time extents a loop of a run-time row count around a loop of vectors that stops
at a run-time multiple of 16, then a loop for the rest of the row; with constant extents
the row is a fixed number of vectors and nothing is left over, which CPU compilers
unroll. This rewrite gives such a copy two versions:

    scf.if (%rows == 128 && %cols == 64) {
      memref.copy %block, %tile                                  (constant extents)
    } else {
      memref.copy %src, %dst                                     (as it was)
    }

Measured on the benchmark's matmul kernel alone (1024^3, 128x64x64 blocks, one
work-item per group; old and new kernels alternated, median of 12-15 pairs on a shared
host): 9% less time with fp32 inputs and 6% with fp16 on the default CPU runtime, 15% and 9% on Intel's
runtime from SPIR-V.

Only copies whose both sides are sub-blocks from the origin of blocks of the tile's
shape, with unit strides and the same extents, are versioned; anything else is left. The
condition tests the extent of every dimension: a constant one must be the tile's (a
constant mask bound that cuts a dimension, `k < 16` in a 32-wide block, means the block
is never whole, and such a copy is left as it is), and each run-time one is compared
with the tile's. The whole copy moves every row and column of the block, so a dimension
left out of the test would read past the mask, and past the end of the buffer.
Kernels of one work-item per group only (register_blocking.py calls it for them), by
design: the gain is the CPU compilers' unrolled constant-extent loops; in larger groups
the copy is a work-group async copy the work-items share.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, memref, scf

from ..ir_helpers import named
from .affine_nests import owner


def version_tile_copies(tile: ir.Value) -> list:
    """Versions every copy into a sub-block of `tile` (a static `memref.alloc`) on
    whether it fills the whole tile; returns the copies of whole blocks it made."""
    copies = [copy for view in _views_of(tile) for copy in _copies_into(view)]
    whole_copies = []
    for copy in copies:
        whole = _whole_block(copy.operands[0], copy.operands[1], tile)
        if whole is not None:
            whole_copies.append(_version(copy, tile, *whole))
    return whole_copies


def _views_of(tile: ir.Value) -> list:
    return [use.owner.results[0] for use in tile.uses if use.owner.name == "memref.subview"]


def _copies_into(view: ir.Value) -> list:
    return [use.owner for use in view.uses
            if use.owner.name == "memref.copy" and use.owner.operands[1] == view]


def _origin_sub_block(view: ir.Value):
    """(block, static sizes, run-time extents) when `view` is `memref.subview
    %block[0, ...] [sizes] [1, ...]` of a block with a static shape, else None."""
    sub = owner(view)
    if sub is None or sub.name != "memref.subview":
        return None
    sub = sub.opview
    offsets = list(ir.DenseI64ArrayAttr(sub.attributes["static_offsets"]))
    strides = list(ir.DenseI64ArrayAttr(sub.attributes["static_strides"]))
    block_type = ir.MemRefType(sub.operands[0].type)
    if any(offsets) or any(s != 1 for s in strides) or not block_type.has_static_shape:
        return None
    if len(offsets) != block_type.rank:
        return None  # rank-reducing view
    return sub.operands[0], list(ir.DenseI64ArrayAttr(sub.attributes["static_sizes"])), \
        list(sub.sizes)


def _whole_block(source: ir.Value, target: ir.Value, tile: ir.Value):
    """(block, extents per dimension) when the copy `source` -> `target` moves the same
    extents of `block` and of `tile` (whose shape it has), at least one of them known
    only at run time and every constant one the tile's, else None."""
    src, dst = _origin_sub_block(source), _origin_sub_block(target)
    if src is None or dst is None or dst[0] != tile:
        return None
    block, src_static, src_dynamic = src
    _, dst_static, dst_dynamic = dst
    shape = ir.MemRefType(tile.type).shape
    same_shape = ir.MemRefType(block.type).shape == shape
    if not same_shape or src_static != dst_static or src_dynamic != dst_dynamic:
        return None
    if not src_dynamic:
        return None  # constant extents: nothing to version
    extents = _extents_by_dimension(src_static, src_dynamic)
    if any(isinstance(extent, int) and extent != dim for extent, dim in zip(extents, shape)):
        return None  # a dimension the mask always cuts: never the whole block
    return block, extents


def _extents_by_dimension(static: list, dynamic: list) -> list:
    """The subview's size in each dimension: its constant (int) or its run-time Value."""
    values = iter(dynamic)
    return [next(values) if size == ir.ShapedType.get_dynamic_size() else size
            for size in static]


def _version(copy, tile: ir.Value, block: ir.Value, extents: list):
    """`if (every extent is the tile's) copy block -> tile; else the copy as it was`;
    returns the copy of the whole block. Constant extents are the tile's
    (`_whole_block`); each run-time one is tested."""
    shape = ir.MemRefType(tile.type).shape
    loc = named("is_full", copy.location)
    with ir.InsertionPoint(copy), loc:
        full = None
        for extent, dim in zip(extents, shape):
            if isinstance(extent, int):
                continue
            whole = arith.cmpi(arith.CmpIPredicate.eq, extent,
                               arith.constant(ir.IndexType.get(), dim))
            full = whole if full is None else arith.andi(full, whole)
        branch = scf.IfOp(full, [], has_else=True)
    with ir.InsertionPoint(branch.then_block), copy.location:
        whole_copy = memref.copy(block, tile)
        scf.yield_([])
    with ir.InsertionPoint(branch.else_block), copy.location:
        done = scf.yield_([])
    copy.move_before(done)
    return whole_copy
