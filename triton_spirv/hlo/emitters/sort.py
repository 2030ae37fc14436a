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

Rows longer than RUN elements are sorted in passes, each a fusion of its own
(`lower_sort_to_passes`, run by the runtime in place of the sort): the rank sort
within runs of RUN elements, then merge passes in which every element of a sorted run
finds its place in the merge with the neighbouring run by a binary search of it.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Callable

from mlir import ir
from mlir.dialects import arith, scf, tensor

from ..elemental import Elemental, compute_type, const_index
from ..elementwise import total_order_key
from ..errors import HloUnsupportedError, where
from ..reader import custom_call_target
from ..scalar_code import if_else
from .heroes import EmitterChoice
from .base import (FusionBuilder, apply_linear, cdiv, cmp_lt, delinearize, linearize,
                   named, to_storage)

THREADS = 128
# Rows longer than this are sorted in passes (lower_sort_to_passes): a rank sort within
# runs of this many elements, then merges of neighbouring runs.
RUN = 64
# The attribute that marks the sorts of those passes (not one of XLA's).
PASS_ATTR = "sort_pass"


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
    runs: int | None = None        # a first pass: rank within runs of this many elements
    merge: int | None = None       # a merge pass: the row holds sorted runs of this width

    @property
    def length(self) -> int:
        return self.input_dims[self.dimension]


def try_sort(computation):
    root = computation.root
    if root.opcode == "sort":
        spec = lambda b, em, tensors: _sort_spec(b, em, tensors, root)
    elif root.opcode == "topk" or (root.opcode == "custom-call" and
                                   custom_call_target(root) == "TopK"):
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
    spec = SortSpec(root, operands[0].shape.dims, dims[0], sources, less, length)
    kind, _, width = root.attrs.get(PASS_ATTR, "").partition("=")
    if kind == "runs_of":
        spec.runs = int(width)
    elif kind == "merge_runs_of":
        spec.merge = int(width)
    return spec


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
            f"({total}); rows of {spec.length} along dimension {spec.dimension}, "
            f"{spec.kept} kept per row; {_what_this_pass_does(spec)}")
        linear = apply_linear([(k.block_id, THREADS), (k.thread_id, 1)])
        outputs = list(k.outputs)
        guard = scf.IfOp(cmp_lt(linear, const_index(total)), [o.type for o in outputs],
                         has_else=True)
        with ir.InsertionPoint(guard.then_block):
            scf.yield_(_place_element(builder, spec, linear, outputs))
        with ir.InsertionPoint(guard.else_block):
            scf.yield_(outputs)
        k.finish(list(guard.results), blocks, f"{root.opcode}: {_what_this_pass_does(spec)}")


def _what_this_pass_does(spec: SortSpec) -> str:
    if spec.merge:
        return f"merge of sorted runs of {spec.merge}"
    if spec.runs:
        return f"rank sort within runs of {spec.runs}"
    return "rank sort of the row"


def _place_element(builder, spec: SortSpec, linear, outputs) -> list[ir.Value]:
    indices = delinearize(linear, spec.input_dims)
    mine = [source(indices) for source in spec.sources]
    position = indices[spec.dimension]
    if spec.merge:
        rank = _merged_position(spec, indices, mine, position)
    elif spec.runs:
        with named("run"):
            start = arith.muli(arith.divui(position, const_index(spec.runs)),
                               const_index(spec.runs))
            end = arith.minui(arith.addi(start, const_index(spec.runs)),
                              const_index(spec.length))
        rank = arith.addi(start, _rank(spec, indices, mine, position, start, end))
    else:
        rank = _rank(spec, indices, mine, position, const_index(0), const_index(spec.length))
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


def _rank(spec: SortSpec, indices, mine, position, start, end) -> ir.Value:
    """How many elements j in [start, end) of the row go before this one (see the
    module docstring). Top-k stops counting at k: the element is not written then,
    and most elements of a long row get there after a few comparisons."""
    index = ir.IndexType.get()

    def counted(j, count):
        other = _element_at(spec, indices, j)
        not_after = arith.xori(spec.less(mine, other), _true())
        before = arith.select(cmp_lt(j, position), not_after, spec.less(other, mine))
        return arith.addi(count, _as_index(before))

    with named("rank"):
        if spec.kept == spec.length:
            loop = scf.ForOp(start, end, const_index(1), [const_index(0)])
            with ir.InsertionPoint(loop.body):
                scf.yield_([counted(loop.induction_variable, loop.inner_iter_args[0])])
            return loop.results[0]
        loop = scf.WhileOp([index, index], [start, const_index(0)])
        before = loop.before.blocks.append(index, index)
        after = loop.after.blocks.append(index, index)
        with ir.InsertionPoint(before):
            j, count = before.arguments
            going = arith.andi(cmp_lt(j, end), cmp_lt(count, const_index(spec.kept)))
            scf.ConditionOp(going, [j, count])
        with ir.InsertionPoint(after):
            j, count = after.arguments
            scf.yield_([arith.addi(j, const_index(1)), counted(j, count)])
        return loop.results[1]


def _merged_position(spec: SortSpec, indices, mine, position) -> ir.Value:
    """Where this element goes when its sorted run of `merge` elements and the
    neighbouring one become one: its place in its own run plus how many elements
    of the other run go before it, found by binary search (the other run is sorted,
    so those are a prefix of it). Ties: the left run's elements go first."""
    width = const_index(spec.merge)
    with named("run"):
        run = arith.divui(position, width)
    with named("in_run"):
        in_run = arith.subi(position, arith.muli(run, width))
    with named("is_left"):
        is_left = arith.cmpi(arith.CmpIPredicate.eq, arith.remui(run, const_index(2)),
                             const_index(0))
    with named("pair_start"):
        pair_start = arith.muli(arith.subi(run, arith.remui(run, const_index(2))), width)
    with named("other_start"):
        other_start = arith.select(is_left, arith.addi(pair_start, width), pair_start)
    with named("other_end"):
        other_end = arith.minui(arith.addi(other_start, width), const_index(spec.length))
    with named("other_start"):     # past the row's end: an empty run
        other_start = arith.minui(other_start, other_end)

    def goes_before(j):
        other = _element_at(spec, indices, j)
        # left run: the other's elements strictly less; right run: those not after it
        return arith.select(is_left, spec.less(other, mine),
                            arith.xori(spec.less(mine, other), _true()))

    with named("search"):
        found = _lower_bound(other_start, other_end, goes_before, spec.merge)
    with named("merged_pos"):
        return arith.addi(arith.addi(pair_start, in_run), arith.subi(found, other_start))


def _lower_bound(start, end, goes_before, longest: int) -> ir.Value:
    """The first j in [start, end) where `goes_before(j)` is false (it is true on a
    prefix of the range), by bisection: one step per bit of `longest` (the longest
    range), unrolled and without branches (the default CPU runtime runs a loop carrying the bounds
    about seventy times slower)."""
    low, high = start, end
    last = arith.subi(end, const_index(1))
    for _ in range(max(1, longest.bit_length())):
        open_range = cmp_lt(low, high)
        middle = arith.addi(low, arith.divui(arith.subi(high, low), const_index(2)))
        # a closed range still reads an element of the row (and ignores it)
        middle = arith.select(open_range, middle, arith.minui(middle, last))
        go_right = goes_before(middle)
        right = arith.andi(open_range, go_right)
        left = arith.andi(open_range, arith.xori(go_right, _true()))
        low, high = (arith.select(right, arith.addi(middle, const_index(1)), low),
                     arith.select(left, middle, high))
    return low


def _element_at(spec: SortSpec, indices, j) -> list[ir.Value]:
    """The sources' values of element j of this element's row."""
    other_indices = list(indices)
    other_indices[spec.dimension] = j
    return [source(other_indices) for source in spec.sources]


def _as_index(flag: ir.Value) -> ir.Value:
    return arith.index_cast(ir.IndexType.get(),
                            arith.extui(ir.IntegerType.get_signless(32), flag))


def _true() -> ir.Value:
    i1 = ir.IntegerType.get_signless(1)
    return arith.constant(i1, ir.IntegerAttr.get(i1, 1))


def sorted_in_passes(instr) -> bool:
    """Whether a sort's rows are long enough to go through passes."""
    if instr.opcode != "sort" or PASS_ATTR in instr.attrs:
        return False
    dims, shape = instr.dimensions(), instr.operands[0].shape
    return len(dims) == 1 and shape.is_static and shape.dims[dims[0]] > RUN


def lower_sort_to_passes(instr):
    """A sort of long rows as a chain of passes, each its own fusion, so that each
    reads the arrays the previous one wrote and writes new ones: a rank sort within
    runs of RUN elements, then merges of neighbouring runs (doubling their width)
    until one run holds the row. Per row of n elements that is n * RUN +
    n * log2(n / RUN) * log2(n) comparisons instead of the n^2 of one rank sort."""
    from ..computation_builder import ComputationBuilder, wrap_instruction
    from ..reader import HloInstruction
    b = ComputationBuilder(f"{instr.name}_passes", instr)
    inputs = [b.parameter(o.shape, f"{instr.name}_in{k}") for k, o in enumerate(instr.operands)]
    length = instr.operands[0].shape.dims[instr.dimensions()[0]]
    step, width, kind = 0, RUN, "runs_of"
    while True:
        sort = HloInstruction(instr.name, "sort", instr.shape, inputs,
                              {**instr.attrs, PASS_ATTR: f"{kind}={width}"}, instr.line,
                              instr.column, called=list(instr.called))
        sort.computation = instr.computation      # messages name the original
        sorted_pass = b.add(HloInstruction(
            f"{instr.name}_pass{step}", "fusion", instr.shape, inputs, {"kind": "kCustom"},
            instr.line, instr.column, called=[wrap_instruction(sort)]))
        if kind == "merge_runs_of":
            width *= 2
        if width >= length:
            sorted_pass.is_root = True
            return b.computation
        inputs = [sorted_pass] if not instr.shape.is_tuple else [
            b.add(HloInstruction(f"{instr.name}_pass{step}_{k}", "get-tuple-element", leaf,
                                 [sorted_pass], {"index": str(k)}, instr.line, instr.column))
            for k, leaf in enumerate(instr.shape.tuple_shapes)]
        step, kind = step + 1, "merge_runs_of"
