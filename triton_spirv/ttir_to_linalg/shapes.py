"""Shape ops on tensors: tt.reshape, tt.join, tt.split, tt.cat, tt.gather, tt.histogram,
tt.unsplat.

All work on numbers and (except gather/histogram) on pointer tensors too, by applying the
same shape op to the pointer offsets. Block structure (AffineIndex / Box) is kept where it
is simple to keep (reshapes that only add or drop unit dims); elsewhere it is dropped and
loads/stores through the result take the always-correct gather/scatter path.

- reshape: `tensor.collapse_shape` to 1-D then `tensor.expand_shape` (row-major order,
  the order Triton's reshape keeps; `allow_reorder` may pick any order, row-major is one).
- join: a `linalg.generic` over the result whose last index picks lhs or rhs.
- split: two `linalg.generic`s reading index 0 / 1 of the last dim.
- cat: `tensor.insert_slice` of both operands along dim 0 (Triton's `can_reorder` allows
  any order; we keep lhs then rhs).
- gather: `out[i] = src[i with i[axis] replaced by indices[i]]`, a generic whose body
  extracts from `src`.
- histogram: a generic over (bins, elements) with a reduction over the elements, counting
  `x == bin` (values outside [0, bins) are not counted, masked-off elements neither).
- unsplat: `tensor.extract` of the single element.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, tensor

from . import builders as b
from . import linalg_ops as linalg
from . import choices
from .values import AffineIndex, Box, Pointer, PointerChoice, PointerTensor, Value


def _reassociation(groups):
    return ir.ArrayAttr.get(
        [ir.ArrayAttr.get([ir.IntegerAttr.get(b.i64(), x) for x in g]) for g in groups])


def _unit_dims_only(in_shape, out_shape):
    """For reshapes that only insert/drop unit dims: for each output dim the input dim it
    comes from (None for an inserted unit dim); else None."""
    src = [d for d, s in enumerate(in_shape) if s != 1]
    dst = [d for d, s in enumerate(out_shape) if s != 1]
    if [in_shape[d] for d in src] != [out_shape[d] for d in dst]:
        return None
    mapping = [None] * len(out_shape)
    for i, o in zip(src, dst):
        mapping[o] = i
    return mapping


def reshape_value(value: ir.Value, out_shape) -> ir.Value:
    in_shape = b.shape_of(value.type)
    elem = b.element_type(value.type)
    if list(in_shape) == list(out_shape):
        return value
    flat = value
    if len(in_shape) != 1:
        total = 1
        for s in in_shape:
            total *= s
        flat_type = ir.RankedTensorType.get([total], elem)
        if in_shape:
            flat = tensor.CollapseShapeOp(flat_type, value,
                                          _reassociation([list(range(len(in_shape)))])).result
        else:
            flat = tensor.ExpandShapeOp(flat_type, value, _reassociation([]), [], [1]).result
    if len(out_shape) == 1:
        return flat
    out_type = ir.RankedTensorType.get(list(out_shape), elem)
    if not out_shape:
        return tensor.CollapseShapeOp(out_type, flat, _reassociation([])).result
    return tensor.ExpandShapeOp(out_type, flat, _reassociation([list(range(len(out_shape)))]),
                                [], list(out_shape)).result


def _reshape_structure(src: Value, in_shape, out_shape):
    mapping = _unit_dims_only(in_shape, out_shape)
    if mapping is None:
        return None, None
    affine = box = None
    if src.affine is not None:
        affine = AffineIndex(src.affine.base,
                             [0 if m is None else src.affine.strides[m] for m in mapping])
    if src.box is not None:
        dropped = [d for d in range(len(in_shape)) if d not in mapping]
        if all(src.box.lo[d] is None and src.box.hi[d] is None for d in dropped):
            box = Box([None if m is None else src.box.lo[m] for m in mapping],
                      [None if m is None else src.box.hi[m] for m in mapping])
    return affine, box


def reshape(conv, op):
    out_shape = b.shape_of(op.results[0].type)
    in_shape = b.shape_of(op.operands[0].type)
    src = conv.get(op.operands[0])

    def reshaped(src):
        target = src.offsets if isinstance(src, PointerTensor) else src
        if not isinstance(target, Value):
            raise conv.error(op, "tt.reshape of a scalar pointer")
        affine, box = _reshape_structure(target, in_shape, out_shape)
        value = Value(reshape_value(target.value, out_shape), affine=affine, box=box,
                      splat_of=target.splat_of)
        return PointerTensor(src.buffer, value) if isinstance(src, PointerTensor) else value

    if isinstance(src, PointerChoice):
        conv.set(op.results[0], choices.map_options(
            src, reshaped, lambda which: reshape_value(which, out_shape)))
    else:
        conv.set(op.results[0], reshaped(src))


def _offsets_or_values(conv, op, operands):
    """The values to combine, and a function wrapping the result back (pointer tensors
    must point into one buffer)."""
    converted = [conv.get(v) for v in operands]
    if all(isinstance(c, PointerTensor) for c in converted):
        buffer = converted[0].buffer
        if any(c.buffer != buffer for c in converted):
            raise conv.error(op, f"{op.name} of pointers into different buffers is not "
                                 f"supported")
        return [c.offsets.value for c in converted], \
            lambda v: PointerTensor(buffer, Value(v))
    if any(isinstance(c, PointerTensor) for c in converted):
        raise conv.error(op, f"{op.name} mixes pointers and numbers")
    return [conv.get_value(op, v).value for v in operands], Value


def join(conv, op):
    (lhs, rhs), wrap = _offsets_or_values(conv, op, list(op.operands))
    in_shape = b.shape_of(lhs.type)
    rank = len(in_shape) + 1
    out_type = ir.RankedTensorType.get(in_shape + [2], b.element_type(lhs.type))
    in_map = ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(d) for d in range(rank - 1)])

    def body(x, y, _out):
        first = arith.cmpi(0, linalg.IndexOp(rank - 1).result, b.const_index(0))
        return [arith.select(first, x, y)]

    conv.set(op.results[0], wrap(b.generic([lhs, rhs], [in_map, in_map], [out_type], body)[0]))


def split(conv, op):
    (src,), wrap = _offsets_or_values(conv, op, [op.operands[0]])
    out_shape = b.shape_of(src.type)[:-1]
    rank = len(out_shape)
    out_type = ir.RankedTensorType.get(out_shape, b.element_type(src.type))
    for half, result in enumerate(op.results):
        in_map = ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(d) for d in range(rank)]
                                  + [ir.AffineConstantExpr.get(half)])
        if rank == 0:
            value = tensor.extract(src, [b.const_index(half)])
            buffer = getattr(conv.get(op.operands[0]), "buffer", None)
            conv.set(result, Value(value) if buffer is None else Pointer(buffer, value))
            continue
        value = b.generic([src], [in_map], [out_type], lambda x, _o: [x])[0]
        conv.set(result, wrap(value))


def cat(conv, op):
    (lhs, rhs), wrap = _offsets_or_values(conv, op, list(op.operands))
    in_shape = b.shape_of(lhs.type)
    out_shape = b.shape_of(op.results[0].type)
    elem = b.element_type(lhs.type)
    result = b.empty(out_shape, elem)
    for i, part in enumerate((lhs, rhs)):
        offsets = [0] * len(in_shape)
        offsets[0] = i * in_shape[0]
        result = tensor.InsertSliceOp(part, result, [], [], [], offsets, in_shape,
                                      [1] * len(in_shape)).result
    conv.set(op.results[0], wrap(result))


def gather(conv, op):
    src = conv.get_value(op, op.operands[0]).value
    indices = conv.get_value(op, op.operands[1]).value
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    out_type = op.results[0].type
    rank = len(b.shape_of(out_type))
    src_shape = b.shape_of(src.type)

    def body(index, _out):
        coords = []
        for d in range(rank):
            if d == axis:
                i = arith.index_cast(b.index_type(), index)
                # Out-of-range indices are undefined in Triton; clamp so that no load
                # leaves the tile.
                i = arith.maxsi(arith.minsi(i, b.const_index(src_shape[d] - 1)),
                                b.const_index(0))
                coords.append(i)
            else:
                coords.append(linalg.IndexOp(d).result)
        return [tensor.extract(src, coords)]

    value = b.generic([indices], b.parallel_maps(rank, 1), [out_type], body)[0]
    conv.set(op.results[0], Value(value))


def histogram(conv, op):
    src = conv.get_value(op, op.operands[0]).value
    mask = conv.get_value(op, op.operands[1]).value if len(op.operands) > 1 else None
    out_type = op.results[0].type
    bins = b.shape_of(out_type)[0]
    out_elem = b.element_type(out_type)
    src_elem = b.element_type(src.type)
    zero = arith.constant(out_elem, 0)
    init = linalg.fill(zero, outs=[b.empty([bins], out_elem)])
    in_map = ir.AffineMap.get(2, 0, [ir.AffineDimExpr.get(1)])
    out_map = ir.AffineMap.get(2, 0, [ir.AffineDimExpr.get(0)])
    inputs = [src] + ([mask] if mask is not None else [])
    generic = linalg.GenericOp(
        result_tensors=[out_type], inputs=inputs, outputs=[init],
        indexing_maps=ir.ArrayAttr.get([ir.AffineMapAttr.get(m)
                                        for m in [in_map] * len(inputs) + [out_map]]),
        iterator_types=b.iterator_types(["parallel", "reduction"]))
    block = generic.regions[0].blocks.append(
        *[b.element_type(v.type) for v in inputs], out_elem)
    with ir.InsertionPoint(block):
        args = list(block.arguments)
        x, acc = args[0], args[-1]
        bin_value = arith.index_cast(src_elem, linalg.IndexOp(0).result)
        hit = arith.cmpi(0, x, bin_value)
        if mask is not None:
            hit = arith.andi(hit, args[1])
        one = arith.extui(out_elem, hit)
        linalg.YieldOp([arith.addi(acc, one)])
    conv.set(op.results[0], Value(generic.results[0]))


def unsplat(conv, op):
    src = conv.get(op.operands[0])
    target = src.offsets if isinstance(src, PointerTensor) else src
    rank = len(b.shape_of(target.value.type))
    value = tensor.extract(target.value, [b.const_index(0)] * rank)
    if isinstance(src, PointerTensor):
        conv.set(op.results[0], Pointer(src.buffer, value))
    else:
        conv.set(op.results[0], Value(value))


HANDLERS = {
    "tt.reshape": reshape,
    "tt.join": join,
    "tt.split": split,
    "tt.cat": cat,
    "tt.gather": gather,
    "tt.histogram": histogram,
    "tt.unsplat": unsplat,
}
