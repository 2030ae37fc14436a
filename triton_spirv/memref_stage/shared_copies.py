"""GPU shapes: the work-items of a work-group share each copy between a tile and global
memory that converts its elements (fp16 / bf16 rows into the float tiles the emitter
prints for them, and the tiles' floats back into fp16 / bf16 rows), as they share the
async copies of other element types.

Such a copy (`memref.copy` of a global view into a `__local` tile, or of a tile into a
global view) would otherwise be a single-work-item section (work_group_sharing.py):
work-item 0 converts the whole tile while the others wait at the next barrier. It
becomes an `scf.parallel` over the tile's static shape whose body loads and stores one
element where it lies within the copy's extent (copy_loops.py); work_group_sharing
distributes it over the work-items like any parallel loop (chunks of consecutive
elements, barriers from its ownership analysis).

fp8 copies are shared alike. Sharing the fp16 copies
also avoids a device bug (docs/memref-stage.md).
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, memref

from ..ir_helpers import root_buffer
from .affine_nests import op_of, owner
from .copy_loops import copy_loop
from .work_group_sharing import is_local

_NARROW = (ir.F16Type, ir.BF16Type)
_FP8 = (ir.Float8E4M3FNType, ir.Float8E5M2Type, ir.Float8E4M3FNUZType, ir.Float8E5M2FNUZType,
        ir.Float8E4M3B11FNUZType)


def converting_copy_loops(block: ir.Block) -> list:
    """Replaces every global <-> `__local` copy of fp16 / bf16 / fp8 under `block`
    (outside `scf.parallel` bodies) by an `scf.parallel` of element loads and stores
    (_as_loop, copy_loops.py); -> the loops."""
    return [_as_loop(copy) for copy in _converting_copies(block, _NARROW + _FP8)]


def _converting_copies(block: ir.Block, narrow: tuple) -> list:
    found = []
    for op in block.operations:
        if _is_converting_copy(op, narrow):
            found.append(op)
        elif op.operation.name != "scf.parallel":
            for region in op.regions:
                for inner in region.blocks:
                    found.extend(_converting_copies(inner, narrow))
    return found


def _is_converting_copy(op, narrow: tuple) -> bool:
    if op.operation.name != "memref.copy":
        return False
    source, target = op.operands[0], op.operands[1]
    source_type = ir.MemRefType(source.type)
    if not isinstance(source_type.element_type, narrow) or source_type.rank == 0:
        return False
    return (not is_local(source) and _is_tile(target)) or (_is_tile(source) and not is_local(target))


def _is_tile(value: ir.Value) -> bool:
    """A view of a `__local` tile (memref.alloc; memref.alloca is private memory)."""
    defining = owner(root_buffer(value))
    return defining is not None and defining.name == "memref.alloc"



def _as_loop(copy):
    """The loop runs over the tile's own (static) shape where it has the copy's rank,
    skipping what lies beyond the copy's extent: the distribution then splits a static
    space (no division by a run-time extent per element)."""
    source, target = copy.operands[0], copy.operands[1]
    with op_of(copy).location, ir.InsertionPoint(copy):
        index = ir.IndexType.get()
        sizes = [size if not ir.ShapedType.is_dynamic_size(size)
                 else memref.dim(source, arith.constant(index, dim))
                 for dim, size in enumerate(ir.MemRefType(source.type).shape)]
        shape = _tile_shape(target if _is_tile(target) else source, len(sizes))
        loop = copy_loop(source, target, sizes) if shape is None else \
            copy_loop(source, target, shape, extents=sizes)
    op_of(copy).erase()
    return loop


def _tile_shape(view: ir.Value, rank: int) -> list | None:
    """The static shape of the tile under `view` when it has `rank` dimensions (an upper
    bound of the view's), else None."""
    shape = ir.MemRefType(root_buffer(view).type).shape
    if len(shape) != rank or any(ir.ShapedType.is_dynamic_size(size) for size in shape):
        return None
    return list(shape)
