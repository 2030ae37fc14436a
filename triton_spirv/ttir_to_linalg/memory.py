"""`tt.load` and `tt.store` on memrefs.

Two paths, chosen per access:
- block access: offsets are an `AffineIndex` and the mask (if any) a `Box`. The tile is a
  `memref.reinterpret_cast` of the kernel buffer (offset = base, strides = the affine
  strides); a load copies the valid sub-box into a fresh tile buffer (`memref.alloc`,
  pre-filled with `other`) and a store materializes the valid sub-box of the value into
  the view. The emitter turns these copies into `async_work_group_copy`.
- gather/scatter: anything else. A load is a `linalg.generic` whose body loads one
  element (guarded by its mask); a store is a loop nest storing element by element.
Both are exact: the block path is taken only when the analysis proves the structure.
"""
from __future__ import annotations

from typing import Optional

from mlir import ir
from mlir.dialects import arith, bufferization, memref, scf, tensor

from ..ir_helpers import named
from . import analysis
from . import builders as b
from .values import Box, Pointer, PointerTensor, Value

DYNAMIC = ir.ShapedType.get_dynamic_stride_or_offset()


def _mixed(scalars):
    """Splits Scalars into (dynamic index Values, static list with DYNAMIC markers)."""
    dynamic, static = [], []
    for s in scalars:
        c = b.constant_int_of(s)
        if c is None:
            dynamic.append(s)
            static.append(DYNAMIC)
        else:
            static.append(c)
    return dynamic, static


def _mixed_sizes(scalars):
    dynamic, static = [], []
    for s in scalars:
        c = b.constant_int_of(s)
        if c is None:
            dynamic.append(s)
            static.append(ir.ShapedType.get_dynamic_size())
        else:
            static.append(c)
    return dynamic, static


def buffer_element_type(buffer: ir.Value) -> ir.Type:
    return ir.MemRefType(buffer.type).element_type


def tile_view(buffer: ir.Value, offset, strides, shape) -> ir.Value:
    """A view of the kernel buffer as the tile `offset + sum(i_d * strides[d])` (the
    sizes in `shape` may be index Values)."""
    dyn_offsets, static_offsets = _mixed([offset])
    dyn_sizes, static_sizes = _mixed_sizes(shape)
    dyn_strides, static_strides = _mixed(strides)
    layout = ir.StridedLayoutAttr.get(static_offsets[0], static_strides)
    result = ir.MemRefType.get(static_sizes, buffer_element_type(buffer), layout)
    return memref.ReinterpretCastOp(result, buffer, dyn_offsets, dyn_sizes, dyn_strides,
                                    static_offsets, static_sizes, static_strides).result


def _whole_tile_view(ptr: PointerTensor) -> Optional[ir.Value]:
    """The view of the tile `ptr` addresses; None for a tile at a static negative offset
    (`x + offs - 1` at offs = 0), which memref cannot express (see `_box_view`)."""
    affine = ptr.offsets.affine
    base = b.constant_int_of(affine.base)
    if base is not None and base < 0:
        return None
    return tile_view(ptr.buffer, affine.base, affine.strides, ptr.shape)


def _box_view(ptr: PointerTensor, whole: Optional[ir.Value], starts, sizes) -> ir.Value:
    """The view of the box [starts, starts + sizes) of the tile `ptr` addresses: a
    sub-box of the whole tile's view, or where there is none (the tile starts before the
    buffer) a view that starts at the first element the mask allows, which the mask
    keeps inside the buffer (`block_fits`)."""
    if whole is not None:
        return sub_box(whole, starts, sizes)
    affine = ptr.offsets.affine
    first = affine.base
    for start, stride in zip(starts, affine.strides):
        first = b.add(first, b.mul(start, stride))
    return tile_view(ptr.buffer, first, affine.strides, sizes)


def sub_box(view: ir.Value, starts, sizes) -> ir.Value:
    """`memref.subview` of the box [starts, starts + sizes) with unit steps."""
    mtype = ir.MemRefType(view.type)
    src_strides, src_offset = mtype.get_strides_and_offset()
    dyn_offsets, static_offsets = _mixed(starts)
    dyn_sizes, static_sizes = _mixed_sizes(sizes)
    # The verifier wants the exact inferred layout: a static offset when everything that
    # makes it up is static.
    # (terms whose offset or stride is a static 0 vanish, even when the other factor is
    # dynamic: a stride-0 dimension, where every lane addresses one element, adds nothing)
    terms = [(o, st) for o, st in zip(static_offsets, src_strides) if o != 0 and st != 0]
    parts = [src_offset] + [x for term in terms for x in term]
    if DYNAMIC in parts:
        offset = DYNAMIC
    else:
        offset = src_offset + sum(o * st for o, st in terms)
    layout = ir.StridedLayoutAttr.get(offset, list(src_strides))
    result = ir.MemRefType.get(static_sizes, mtype.element_type, layout)
    return memref.SubViewOp(result, view, dyn_offsets, dyn_sizes, [], static_offsets,
                            static_sizes, [1] * len(static_sizes)).result


def tile_buffer(shape, elem: ir.Type) -> ir.Value:
    return memref.AllocOp(ir.MemRefType.get(list(shape), elem), [], []).result


def as_tensor(buffer: ir.Value) -> ir.Value:
    mtype = ir.MemRefType(buffer.type)
    ttype = ir.RankedTensorType.get(list(mtype.shape), mtype.element_type)
    return bufferization.ToTensorOp(ttype, buffer, restrict=True, writable=True).result


def zero(elem: ir.Type) -> ir.Value:
    if b.is_integer(elem):
        return arith.constant(elem, 0)
    return arith.constant(elem, 0.0)


def _when_partial(starts, sizes, shape, build):
    """Runs `build()` under `scf.if` unless the box [starts, starts+sizes) is the whole
    tile (statically known: then not at all)."""
    partial = None
    for start, size, n in zip(starts, sizes, shape):
        for value, full in ((start, 0), (size, n)):
            if b.constant_int_of(value) == full:
                continue
            with named("is_partial", ir.Location.current):
                differs = arith.cmpi(arith.CmpIPredicate.ne, b.as_index(value),
                                     b.const_index(full))
                partial = differs if partial is None else arith.ori(partial, differs)
    if partial is None:
        return
    if_op = scf.IfOp(partial, [], has_else=False)
    with ir.InsertionPoint(if_op.then_block):
        build()
        scf.YieldOp([])


def _fill(buffer: ir.Value, scalar: ir.Value):
    from . import linalg_ops as linalg
    linalg.fill(scalar, outs=[buffer])


# ---------------------------------------------------------------------------------------
# Block path


def block_fits(ptr: PointerTensor, box: Optional[Box]) -> bool:
    """Whether the block path can view the access: not when the first element it may
    touch lies before the buffer for certain (a static negative offset, which memref
    cannot express; the gather path reads such elements)."""
    first = b.constant_int_of(ptr.offsets.affine.base)
    if first is None or first >= 0:
        return True
    lows = box.lo if box is not None else [None] * len(ptr.shape)
    for low, stride, n in zip(lows, ptr.offsets.affine.strides, ptr.shape):
        low = 0 if low is None else b.constant_int_of(low)
        stride = b.constant_int_of(stride)
        if low is None or stride is None:
            return True  # a run-time offset: the mask keeps it inside the buffer
        first += min(max(low, 0), n) * stride
    return first >= 0


def block_load(ptr: PointerTensor, box: Optional[Box], other: Optional[ir.Value]) -> ir.Value:
    shape = ptr.shape
    view = _whole_tile_view(ptr)
    elem = buffer_element_type(ptr.buffer)
    tile = tile_buffer(shape, elem)
    if box is None:
        memref.copy(view, tile)
    else:
        # Masked-off elements read as `other`; Triton leaves them undefined without one,
        # zero keeps results deterministic. Only a partial tile needs the fill: most
        # programs of a kernel see the whole tile valid.
        starts, sizes = analysis.box_extents(box, shape)
        fill_value = other if other is not None else zero(elem)
        _when_partial(starts, sizes, shape, lambda: _fill(tile, fill_value))
        memref.copy(_box_view(ptr, view, starts, sizes), sub_box(tile, starts, sizes))
    return as_tensor(tile)


def block_store(ptr: PointerTensor, value: ir.Value, box: Optional[Box]):
    shape = ptr.shape
    view = _whole_tile_view(ptr)
    if box is not None:
        starts, sizes = analysis.box_extents(box, shape)
        dyn_offsets, static_offsets = _mixed(starts)
        dyn_sizes, static_sizes = _mixed_sizes(sizes)
        slice_type = ir.RankedTensorType.get(static_sizes, b.element_type(value.type))
        value = tensor.ExtractSliceOp(slice_type, value, dyn_offsets, dyn_sizes, [],
                                      static_offsets, static_sizes, [1] * len(shape)).result
        view = _box_view(ptr, view, starts, sizes)
    bufferization.MaterializeInDestinationOp(None, value, view, restrict=False, writable=True)


# ---------------------------------------------------------------------------------------
# Gather/scatter path


def _element_index(offset: ir.Value) -> ir.Value:
    return arith.index_cast(b.index_type(), offset)


def guarded(cond: Optional[ir.Value], then_fn, else_fn, result_type):
    """`then_fn()` when `cond` holds, else `else_fn()` (no guard when `cond` is None)."""
    if cond is None:
        return then_fn()
    if_op = scf.IfOp(cond, [result_type] if result_type else [], has_else=result_type is not None)
    with ir.InsertionPoint(if_op.then_block):
        r = then_fn()
        scf.YieldOp([r] if result_type else [])
    if result_type:
        with ir.InsertionPoint(if_op.else_block):
            scf.YieldOp([else_fn()])
        return if_op.results[0]
    return None


def gather_load(ptr: PointerTensor, mask: Optional[Value], other: Optional[Value]) -> ir.Value:
    shape = ptr.shape
    elem = buffer_element_type(ptr.buffer)
    inputs = [ptr.offsets.value]
    if mask is not None:
        inputs.append(mask.value)
    if other is not None:
        inputs.append(other.value)
    rank = len(shape)

    def body(offset, *rest):
        m = rest[0] if mask is not None else None
        o = rest[1] if (mask is not None and other is not None) else None
        load = lambda: memref.load(ptr.buffer, [_element_index(offset)])  # noqa: E731
        fallback = (lambda: o) if o is not None else (lambda: zero(elem))
        return [guarded(m, load, fallback, elem)]

    result_type = ir.RankedTensorType.get(shape, elem)
    return b.generic(inputs, b.parallel_maps(rank, len(inputs)), [result_type], body)[0]


def loop_nest(shape, body):
    """Calls `body(indices)` inside a nest of scf.for loops over `shape`."""
    indices = []

    def build(dim):
        if dim == len(shape):
            body(indices)
            return
        loop = scf.ForOp(b.const_index(0), b.const_index(shape[dim]), b.const_index(1))
        with ir.InsertionPoint(loop.body):
            indices.append(loop.induction_variable)
            build(dim + 1)
            scf.YieldOp([])

    build(0)


def scatter_store(ptr: PointerTensor, value: ir.Value, mask: Optional[Value]):
    def store_one(indices):
        offset = tensor.extract(ptr.offsets.value, indices)
        element = tensor.extract(value, indices)
        cond = tensor.extract(mask.value, indices) if mask is not None else None
        guarded(cond, lambda: memref.store(element, ptr.buffer, [_element_index(offset)]),
                 None, None)

    loop_nest(ptr.shape, store_one)


# ---------------------------------------------------------------------------------------
# Scalar pointers


def scalar_load(ptr: Pointer, mask: Optional[ir.Value], other: Optional[ir.Value]) -> ir.Value:
    elem = buffer_element_type(ptr.buffer)
    load = lambda: memref.load(ptr.buffer, [_element_index(ptr.offset)])  # noqa: E731
    fallback = (lambda: other) if other is not None else (lambda: zero(elem))
    return guarded(mask, load, fallback, elem)


def scalar_store(ptr: Pointer, value: ir.Value, mask: Optional[ir.Value]):
    guarded(mask, lambda: memref.store(value, ptr.buffer, [_element_index(ptr.offset)]),
             None, None)
