"""`tt.reduce` and `tt.dot` as Linalg ops.

tt.reduce: a `linalg.generic` with a reduction iterator over `axis`. Triton's combine
region has no identity value, so the accumulator starts as the first slice along the axis
and the generic combines the remaining slices in order (`acc = combine(acc, element)`),
exactly Triton's left-to-right semantics for non-commutative combines. The combine region
is converted with the kernel's own op handlers, into the generic's body.

tt.dot: `linalg.matmul` (`linalg.batch_matmul` for 3-D) accumulating into the converted
accumulator; fp16/bf16/int8 inputs are widened to the accumulator type element by element
by linalg's own cast semantics.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import linalg, tensor

from . import builders as b
from .values import Value


def _slice_along(value: ir.Value, axis: int, start: int, size: int, drop: bool) -> ir.Value:
    """`value[..., start:start+size, ...]` along `axis`; with `drop`, the axis removed."""
    shape = b.shape_of(value.type)
    offsets = [0] * len(shape)
    offsets[axis] = start
    sizes = list(shape)
    sizes[axis] = size
    result_shape = [s for d, s in enumerate(sizes) if not (drop and d == axis)]
    result = ir.RankedTensorType.get(result_shape, b.element_type(value.type))
    return tensor.ExtractSliceOp(result, value, [], [], [], offsets, sizes,
                                 [1] * len(shape)).result


def reduce(conv, op):
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    inputs = [conv.get_value(op, v).value for v in op.operands]
    shape = b.shape_of(inputs[0].type)
    rank = len(shape)
    out_shape = [s for d, s in enumerate(shape) if d != axis]
    # Start from the first slice; reduce the rest into it.
    accumulators = [_slice_along(v, axis, 0, 1, drop=True) for v in inputs]
    if shape[axis] > 1:
        rest = [_slice_along(v, axis, 1, shape[axis] - 1, drop=False) for v in inputs]
        accumulators = _reduce_into(conv, op, rest, accumulators, axis, rank)
    for old, acc in zip(op.results, accumulators):
        if out_shape:
            conv.set(old, Value(acc))
        else:
            conv.set(old, Value(tensor.extract(acc, [])))


def _reduce_into(conv, op, inputs, inits, axis, rank):
    in_map = ir.AffineMap.get_identity(rank)
    out_map = ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(d) for d in range(rank) if d != axis])
    kinds = ["reduction" if d == axis else "parallel" for d in range(rank)]
    count = len(inputs)
    generic = linalg.GenericOp(
        result_tensors=[v.type for v in inits], inputs=inputs, outputs=inits,
        indexing_maps=ir.ArrayAttr.get([ir.AffineMapAttr.get(m)
                                        for m in [in_map] * count + [out_map] * count]),
        iterator_types=b.iterator_types(kinds))
    block = generic.regions[0].blocks.append(
        *[b.element_type(v.type) for v in inputs + inits])
    elements, accs = list(block.arguments)[:count], list(block.arguments)[count:]
    combine = op.regions[0].blocks[0]
    with ir.InsertionPoint(block):
        # combine(acc..., element...): the accumulated values come first.
        for arg, value in zip(combine.arguments, accs + elements):
            conv.set(arg, Value(value))
        conv.convert_region(combine, lambda results: linalg.YieldOp([r.value for r in results]))
    return list(generic.results)


def dot(conv, op):
    a, bm, acc = (conv.get_value(op, v).value for v in list(op.operands)[:3])
    rank = len(b.shape_of(a.type))
    if rank == 2:
        result = linalg.matmul(a, bm, outs=[acc])
    elif rank == 3:
        result = linalg.batch_matmul(a, bm, outs=[acc])
    else:
        raise conv.error(op, f"tt.dot of rank-{rank} operands is not supported")
    conv.set(op.results[0], Value(result))
