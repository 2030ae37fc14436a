"""Small builders on top of the upstream MLIR Python bindings used by the converter.

Scalar index arithmetic folds Python ints so that static tile shapes stay static; tensor
helpers build `tensor.empty`/`linalg.fill`/`linalg.generic` the way the upstream Python
binding tests do.
"""
from __future__ import annotations

from typing import Callable, Sequence

from mlir import ir
from mlir.dialects import arith, tensor

from . import linalg_ops as linalg
from .values import Scalar

# ---------------------------------------------------------------------------------------
# Types


def index_type() -> ir.Type:
    return ir.IndexType.get()


def i64() -> ir.Type:
    return ir.IntegerType.get_signless(64)


def is_tensor(t: ir.Type) -> bool:
    return isinstance(t, ir.RankedTensorType)


def shape_of(t: ir.Type) -> list:
    return list(ir.RankedTensorType(t).shape)


def element_type(t: ir.Type) -> ir.Type:
    return ir.RankedTensorType(t).element_type if is_tensor(t) else t


def is_integer(t: ir.Type) -> bool:
    return isinstance(t, (ir.IntegerType, ir.IndexType))


def int_width(t: ir.Type) -> int:
    return ir.IntegerType(t).width


# ---------------------------------------------------------------------------------------
# Index scalars (Python int or index Value)


def const_index(v: int) -> ir.Value:
    return arith.constant(index_type(), v)


def as_index(v: Scalar) -> ir.Value:
    return const_index(v) if isinstance(v, int) else v


def constant_int_of(v: Scalar):
    """The Python int behind `v` when it is an index/int constant, else None."""
    if isinstance(v, int):
        return v
    owner = v.owner
    if isinstance(owner, ir.Operation):
        owner = owner.opview
    if isinstance(owner, arith.ConstantOp) and is_integer(v.type):
        return ir.IntegerAttr(owner.value).value
    return None


def add(a: Scalar, b: Scalar) -> Scalar:
    ca, cb = constant_int_of(a), constant_int_of(b)
    if ca is not None and cb is not None:
        return ca + cb
    if ca == 0:
        return b
    if cb == 0:
        return a
    return arith.addi(as_index(a), as_index(b))


def sub(a: Scalar, b: Scalar) -> Scalar:
    ca, cb = constant_int_of(a), constant_int_of(b)
    if ca is not None and cb is not None:
        return ca - cb
    if cb == 0:
        return a
    return arith.subi(as_index(a), as_index(b))


def mul(a: Scalar, b: Scalar) -> Scalar:
    ca, cb = constant_int_of(a), constant_int_of(b)
    if ca is not None and cb is not None:
        return ca * cb
    if ca == 0 or cb == 0:
        return 0
    if ca == 1:
        return b
    if cb == 1:
        return a
    return arith.muli(as_index(a), as_index(b))


def smax(a: Scalar, b: Scalar) -> Scalar:
    ca, cb = constant_int_of(a), constant_int_of(b)
    if ca is not None and cb is not None:
        return max(ca, cb)
    return arith.maxsi(as_index(a), as_index(b))


def smin(a: Scalar, b: Scalar) -> Scalar:
    ca, cb = constant_int_of(a), constant_int_of(b)
    if ca is not None and cb is not None:
        return min(ca, cb)
    return arith.minsi(as_index(a), as_index(b))


def clamp(v: Scalar, lo: Scalar, hi: Scalar) -> Scalar:
    return smin(smax(v, lo), hi)


def to_index(v: ir.Value) -> Scalar:
    """An integer scalar of any width as an index Scalar (folding constants)."""
    c = constant_int_of(v)
    if c is not None:
        return c
    if isinstance(v.type, ir.IndexType):
        return v
    return arith.index_cast(index_type(), v)


def cast_int(v: ir.Value, t: ir.Type, signed: bool = True) -> ir.Value:
    """Sign- (or zero-) extends or truncates a scalar integer to type `t`."""
    src, dst = int_width(v.type), int_width(t)
    if src == dst:
        return v
    if src > dst:
        return arith.trunci(t, v)
    return arith.extsi(t, v) if signed else arith.extui(t, v)


# ---------------------------------------------------------------------------------------
# Tensors


def parallel_maps(rank: int, count: int) -> list:
    return [ir.AffineMap.get_identity(rank)] * count


def iterator_types(kinds: Sequence[str]) -> ir.ArrayAttr:
    return ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{k}>") for k in kinds])


def empty(shape: Sequence[int], elem: ir.Type) -> ir.Value:
    return tensor.EmptyOp(list(shape), elem).result


def splat(scalar: ir.Value, shape: Sequence[int]) -> ir.Value:
    """A tensor of `shape` filled with `scalar`."""
    return linalg.fill(scalar, outs=[empty(shape, scalar.type)])


def generic(inputs: Sequence[ir.Value], input_maps: Sequence[ir.AffineMap],
            result_types: Sequence[ir.Type], body: Callable, kinds: Sequence[str] | None = None,
            output_maps: Sequence[ir.AffineMap] | None = None) -> list:
    """A `linalg.generic` over the shape of the results.

    `body(*input_elements, *output_elements)` builds the scalar computation and returns the
    values to yield. Outputs start as `tensor.empty` (they are written, never read).
    """
    shape = shape_of(result_types[0])
    rank = len(shape)
    outputs = [empty(shape_of(t), element_type(t)) for t in result_types]
    maps = list(input_maps) + list(output_maps or [ir.AffineMap.get_identity(rank)] * len(outputs))
    op = linalg.GenericOp(
        result_tensors=list(result_types),
        inputs=list(inputs),
        outputs=outputs,
        indexing_maps=ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
        iterator_types=iterator_types(kinds or ["parallel"] * rank),
    )
    arg_types = [element_type(v.type) for v in inputs] + [element_type(t) for t in result_types]
    block = op.regions[0].blocks.append(*arg_types)
    with ir.InsertionPoint(block):
        yielded = body(*block.arguments)
        linalg.YieldOp(list(yielded))
    return list(op.results)


def broadcast_map(in_shape: Sequence[int], out_shape: Sequence[int]) -> ir.AffineMap:
    """The indexing map reading an input whose size-1 dims are broadcast to `out_shape`."""
    rank = len(out_shape)
    exprs = [ir.AffineConstantExpr.get(0) if i == 1 and o != 1 else ir.AffineDimExpr.get(d)
             for d, (i, o) in enumerate(zip(in_shape, out_shape))]
    return ir.AffineMap.get(rank, 0, exprs)


def nested_ops(operation, name: str):
    """Every op called `name` inside `operation`'s regions, at any depth, in order."""
    for region in operation.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner = inner.operation
                if inner.name == name:
                    yield inner
                yield from nested_ops(inner, name)
