"""The sort emitter: `sort` (any number of operands, a comparator computation, along
any dimension) and the top-k forms (`topk(x), k=, largest=` and XLA:CPU's
`custom-call TopK` with its comparator), as a rank sort.

Every element finds its own place: one work-item per element counts the elements
of its row that go before it,

    rank(i) = #{j < i : !less(x_i, x_j)} + #{j > i : less(x_j, x_i)}

(`less` is the comparator; equal elements keep their order, so the sort is stable
whether or not `is_stable` asks for it) and writes every operand's element at
position `rank(i)` of its row. For a strict weak order (what XLA requires of a
comparator) the ranks are a permutation of the row. This costs n comparisons per
element (n: the row length), needs no scratch memory and no synchronization; top-k
writes only the elements whose rank is below k.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Callable

from mlir import ir
from mlir.dialects import arith, scf, tensor

from ..elemental import Elemental, compute_type, const_index, if_else, total_order_key
from ..errors import HloUnsupportedError, where
from . import EmitterChoice
from .base import (FusionBuilder, apply_linear, cdiv, cmp_lt, delinearize, linearize,
                   named, to_storage)

THREADS = 128


@dataclass
class SortSpec:
    """What to sort: `sources[k](indices)` gives output k's value of the element at
    `indices` (of the unsorted input); `less(lhs, rhs)` compares two elements given
    as lists of source values; rows have `length` elements along `dimension`, of
    which the first `kept` go to the outputs."""
    root: object
    input_dims: tuple[int, ...]
    dimension: int
    sources: list[Callable]
    less: Callable
    kept: int


def try_sort(computation):
    root = computation.root
    if root.opcode == "sort":
        spec = lambda b, em, tensors: _sort_spec(b, em, tensors, root)
    elif root.opcode == "topk" or (root.opcode == "custom-call" and
                                   root.attrs.get("custom_call_target", "").strip('"') == "TopK"):
        spec = lambda b, em, tensors: _topk_spec(b, em, tensors, root)
    else:
        return None
    return EmitterChoice("sort", [root], [root] + list(root.operands),
                         lambda b: emit_sort(b, root, spec), f"root is a {root.opcode}")


def _sort_spec(builder, em, tensors, root) -> SortSpec:
    dims = root.dimensions()
    if len(dims) != 1:
        raise HloUnsupportedError(f"{where(root)}: sort needs one dimension, has {dims}")
    operands = list(root.operands)
    shapes = {o.shape.dims for o in operands}
    if len(shapes) != 1:
        raise HloUnsupportedError(f"{where(root)}: sort operands differ in shape")
    comparator = root.called_computation()

    def less(lhs, rhs):
        args = [v for pair in zip(lhs, rhs) for v in pair]
        return em.apply_computation(comparator, args)[0]
    sources = [_operand_source(builder, o, tensors) for o in operands]
    length = operands[0].shape.dims[dims[0]]
    return SortSpec(root, operands[0].shape.dims, dims[0], sources, less, length)


def _topk_spec(builder, em, tensors, root) -> SortSpec:
    """Top-k along the last dimension: (values, s32 indices) of the k first elements
    in the comparator's order (XLA:CPU's TopK) or the total order (`topk`)."""
    operand = root.operands[0]
    rank = operand.shape.rank
    values_shape, indices_shape = root.shape.tuple_shapes
    k = values_shape.dims[-1]
    if root.opcode == "topk":
        largest = root.attrs.get("largest", "true").lower() != "false"
        et = operand.shape.element

        def less(lhs, rhs):
            a, b = (lhs[0], rhs[0]) if not largest else (rhs[0], lhs[0])
            return total_order_less(a, b, et)
    else:
        comparator = root.called_computation()

        def less(lhs, rhs):
            return em.apply_computation(comparator, [lhs[0], rhs[0], lhs[1], rhs[1]])[0]
    index_type = compute_type(indices_shape.element)

    def position(indices):
        return arith.index_cast(index_type, indices[rank - 1])
    sources = [_operand_source(builder, operand, tensors), position]
    return SortSpec(root, operand.shape.dims, rank - 1, sources, less, k)


def _operand_source(builder, operand, tensors):
    return lambda indices: builder.root_values(operand, indices, tensors)[0]


def total_order_less(a: ir.Value, b: ir.Value, et) -> ir.Value:
    """a < b in IEEE total order for floats, plain order for integers."""
    if et.is_float:
        return arith.cmpi(arith.CmpIPredicate.slt, total_order_key(a), total_order_key(b))
    pred = arith.CmpIPredicate.ult if et.is_unsigned else arith.CmpIPredicate.slt
    return arith.cmpi(pred, a, b)


def emit_sort(builder: FusionBuilder, root, make_spec) -> None:
    if any(r is not root for r, _ in builder.outputs):
        raise HloUnsupportedError(f"{where(root)}: a {root.opcode} must be the only root "
                                  f"of its fusion")
    if not all(leaf.is_static for leaf in root.shape.leaves()):
        raise HloUnsupportedError(f"{where(root)}: {root.opcode} of dynamic shapes is "
                                  f"not supported")
    with builder.kernel("", THREADS) as k:
        em = Elemental(builder, k.tensors, inline_all=True)
        spec = make_spec(builder, em, k.tensors)
        total = prod(spec.input_dims)
        blocks = max(1, cdiv(total, THREADS))
        builder.report.launch.append(
            f"{builder.name}: grid {blocks} x local {THREADS} work-items, one per element "
            f"({total}); rows of {spec.input_dims[spec.dimension]} along dimension "
            f"{spec.dimension}, {spec.kept} kept per row")
        linear = apply_linear([(k.block_id, THREADS), (k.thread_id, 1)])
        outputs = list(k.outputs)
        guard = scf.IfOp(cmp_lt(linear, const_index(total)), [o.type for o in outputs],
                         has_else=True)
        with ir.InsertionPoint(guard.then_block):
            scf.yield_(_place_element(builder, spec, linear, outputs))
        with ir.InsertionPoint(guard.else_block):
            scf.yield_(outputs)
        k.finish(list(guard.results), blocks, f"{root.opcode}: rank sort")


def _place_element(builder, spec: SortSpec, linear, outputs) -> list[ir.Value]:
    indices = delinearize(linear, spec.input_dims)
    mine = [source(indices) for source in spec.sources]
    position = indices[spec.dimension]
    rank = _rank(spec, indices, mine, position)
    out_dims = list(spec.input_dims)
    out_dims[spec.dimension] = spec.kept

    def write():
        target = list(indices)
        target[spec.dimension] = rank
        flat = linearize(target, out_dims)
        written = []
        for leaf, value, out in zip(spec.root.shape.leaves(), mine, outputs):
            written.append(tensor.insert(to_storage(value, leaf.element), out, [flat]))
        return written
    if spec.kept == spec.input_dims[spec.dimension]:
        return write()
    return if_else(cmp_lt(rank, const_index(spec.kept)), [o.type for o in outputs],
                   write, lambda: list(outputs))


def _rank(spec: SortSpec, indices, mine, position) -> ir.Value:
    """How many elements of the row go before this one (see the module docstring).
    Top-k stops counting at k: the element is not written then, and most elements
    of a long row get there after a few comparisons."""
    length = spec.input_dims[spec.dimension]
    index = ir.IndexType.get()

    def counted(j, count):
        other_indices = list(indices)
        other_indices[spec.dimension] = j
        other = [source(other_indices) for source in spec.sources]
        not_after = arith.xori(spec.less(mine, other), _true())
        before = arith.select(cmp_lt(j, position), not_after, spec.less(other, mine))
        return arith.addi(count, arith.index_cast(index, arith.extui(
            ir.IntegerType.get_signless(32), before)))

    with named("rank"):
        if spec.kept == length:
            loop = scf.ForOp(const_index(0), const_index(length), const_index(1),
                             [const_index(0)])
            with ir.InsertionPoint(loop.body):
                scf.yield_([counted(loop.induction_variable, loop.inner_iter_args[0])])
            return loop.results[0]
        loop = scf.WhileOp([index, index], [const_index(0), const_index(0)])
        before = loop.before.blocks.append(index, index)
        after = loop.after.blocks.append(index, index)
        with ir.InsertionPoint(before):
            j, count = before.arguments
            going = arith.andi(cmp_lt(j, const_index(length)),
                               cmp_lt(count, const_index(spec.kept)))
            scf.ConditionOp(going, [j, count])
        with ir.InsertionPoint(after):
            j, count = after.arguments
            scf.yield_([arith.addi(j, const_index(1)), counted(j, count)])
        return loop.results[1]


def _true() -> ir.Value:
    i1 = ir.IntegerType.get_signless(1)
    return arith.constant(i1, ir.IntegerAttr.get(i1, 1))
