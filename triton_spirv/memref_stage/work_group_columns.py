"""GPU-shaped kernels: column reductions of narrow tiles keep every work-item busy.

`tl.sum(x, axis=0)` over a [ROWS, COLS] tile lowers to a serial loop over the rows
around a parallel loop over the columns (steps of V: float4 vectors after
elementwise_vectors.py):

    for r in [lb, ub):  parallel c in [0, COLS) step V:  acc[c] = acc[c] <op> view[r, c]

Distributed as it stands, only COLS / V work-items take part, each walking every row.
When COLS is smaller than the work-group, `split_column_reductions` rewrites it, before
work_group_sharing.py distributes the parallel loops, into

    parallel (s, c) in [0, S) x [0, COLS):          # S = work_items / COLS row strips
        if lb + s < ub:  partials[s, c] = view[lb + s, c] <op> view[lb + s + S, c] <op> ...
    for g in [0, min(ub - lb, S)):  parallel c in [0, COLS) step V:
        acc[c] = acc[c] <op> partials[g, c]

Every work-item sums one strip of rows for one column (lid-consecutive columns: a warp
reads whole rows); one barrier, then each owner of `acc` folds the S partials of its
columns -- the same distribution as the loops that fill and store `acc`, which stays a private array.
The combiner is associative and commutative (COMBINERS), so the strips may regroup it.
"""
from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu, memref, scf, vector

from ..ir_helpers import root_buffer
from .affine_nests import body_ops, constant_index, op_of, owner, static_trip_count

# Associative and commutative: row strips may combine in any order (as the tree
# reductions of work_group_sharing.py).
COMBINERS = ("arith.addf", "arith.mulf", "arith.maximumf", "arith.minimumf", "arith.maxnumf",
             "arith.minnumf", "arith.addi", "arith.muli", "arith.andi", "arith.ori",
             "arith.xori", "arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui")
_LOADS = ("memref.load", "vector.load")
_STORES = ("memref.store", "vector.store")


@dataclass
class ColumnReduction:
    """`scf.for %r { scf.parallel %c step V { x = load view[%r, %c];
    a = load acc[%c]; store combiner(a, x), acc[%c] } }`."""
    rows: object          # the scf.for over the rows
    columns: object       # the scf.parallel over the columns
    view_load: object
    combiner: object
    width: int            # V: columns per iteration of the parallel loop
    column_count: int     # COLS


def split_column_reductions(block: ir.Block, work_items: int) -> None:
    """Rewrites every column reduction under `block` that fewer work-items than the
    work-group would run (see the module docstring)."""
    for match in _column_reductions(block, work_items):
        _split(match, work_items // match.column_count)


def _column_reductions(block: ir.Block, work_items: int) -> list:
    found = []
    for op in block.operations:
        if op.operation.name == "scf.parallel":
            continue                  # inside a parallel loop: each iteration's own work
        if op.operation.name == "scf.for":
            match = _match(op)
            if match is not None and 2 * match.column_count <= work_items:
                found.append(match)
                continue
        for region in op.regions:
            for inner in region.blocks:
                found.extend(_column_reductions(inner, work_items))
    return found


def _match(loop) -> ColumnReduction | None:
    ops = body_ops(loop)
    if len(loop.results) or constant_index(loop.operands[2]) != 1 or len(ops) != 1 or \
            ops[0].operation.name != "scf.parallel":
        return None
    columns = ops[0]
    arguments = columns.regions[0].blocks[0].arguments
    if len(arguments) != 1 or len(columns.results):
        return None
    lb, ub, step = (constant_index(v) for v in columns.operands[:3])
    if lb != 0 or ub is None or not step or ub % step:
        return None
    c, r = arguments[0], loop.regions[0].blocks[0].arguments[0]
    inner = body_ops(columns)
    if len(inner) != 4 or [op.operation.name in _LOADS for op in inner[:2]] != [True, True] \
            or inner[2].operation.name not in COMBINERS or inner[3].operation.name not in _STORES:
        return None
    store, combiner = inner[3], inner[2]
    accumulator = store.operands[1]
    loads = {op_of(op): op for op in inner[:2]}
    acc_load = next((op for op in inner[:2] if op.operands[0] == accumulator), None)
    view_load = next((op for op in inner[:2] if op.operands[0] != accumulator), None)
    if acc_load is None or view_load is None or len(loads) != 2:
        return None
    view = view_load.operands[0]
    if list(acc_load.operands)[1:] != [c] or list(store.operands)[2:] != [c] or \
            list(view_load.operands)[1:] != [r, c] or store.operands[0] != combiner.results[0] or \
            set(combiner.operands) != {acc_load.results[0], view_load.results[0]} or \
            not is_tile(accumulator) or root_buffer(view) == root_buffer(accumulator) or \
            ir.MemRefType(accumulator.type).rank != 1:
        return None
    return ColumnReduction(loop, columns, view_load, combiner, step, ub)


def _split(match: ColumnReduction, strips: int) -> None:
    loop, cols = match.rows, match.column_count
    index = ir.IndexType.get()
    view = match.view_load.operands[0]
    element_type = ir.MemRefType(view.type).element_type
    lb, ub = loop.operands[0], loop.operands[1]
    with loop.location, ir.InsertionPoint(loop):
        c = lambda v: arith.constant(index, v)  # noqa: E731
        partials = memref.alloc(ir.MemRefType.get([strips, cols], element_type), [], [])
        strip_loop = scf.ParallelOp([], [c(0), c(0)], [c(strips), c(cols)], [c(1), c(1)], [])
        body = strip_loop.region.blocks.append(index, index)
    with loop.location, ir.InsertionPoint(body):
        strip, column = body.arguments
        first = arith.addi(lb, strip)
        count = static_trip_count(lb, ub, c(1))
        reduce = scf.ReduceOp([], 0)
        point = ir.InsertionPoint(reduce)
        if count is None or count < strips:       # strips past the last row hold nothing
            with point:
                has_rows = scf.IfOp(arith.cmpi(arith.CmpIPredicate.slt, first, ub))
            with ir.InsertionPoint(has_rows.then_block):
                point = ir.InsertionPoint(scf.YieldOp([]))
        with point:
            _strip_sum(match, view, first, ub, c(strips), column, partials, strip)
    # The rows loop now folds the strips' partials into the accumulator, after one
    # barrier (the analysis of work_group_sharing.py would put it inside the loop,
    # before the distributed loop of each round).
    with loop.location, ir.InsertionPoint(loop):
        gpu.barrier()
        valid = arith.minsi(arith.subi(ub, lb), c(strips))
        loop.operands[0], loop.operands[1] = c(0), valid
    load_from_partials(match.view_load, partials)


def load_from_partials(old, partials, indices: list | None = None) -> None:
    """The folding loop's load of the view becomes the same load of the partials (at
    `indices`, else at the view's)."""
    indices = list(old.operands)[1:] if indices is None else indices
    with old.location, ir.InsertionPoint(old):
        if old.name == "vector.load":
            new = vector.load(old.results[0].type, partials, indices)
        else:
            new = memref.load(partials, indices)
    old.results[0].replace_all_uses_with(new)
    old.operation.erase()


def _strip_sum(match, view, first, ub, stride, column, partials, strip) -> None:
    """partials[strip, column] = view[first, column] <op> view[first + stride, column] ..."""
    start = memref.load(view, [first, column])
    rows = scf.ForOp(arith.addi(first, stride), ub, stride, [start])
    with ir.InsertionPoint(rows.body):
        value = memref.load(view, [rows.induction_variable, column])
        scf.YieldOp([scalar_combiner(match.combiner, rows.inner_iter_args[0], value)])
    memref.store(rows.results[0], partials, [strip, column])


def scalar_combiner(combiner, left, right) -> ir.Value:
    """The combiner on scalars (the matched one may combine vectors)."""
    attributes = {name: combiner.attributes[name] for name in combiner.attributes}
    made = ir.Operation.create(combiner.name, results=[left.type], operands=[left, right],
                               attributes=attributes)
    return made.results[0]


def is_tile(value: ir.Value) -> bool:
    defining = owner(root_buffer(value))
    return defining is not None and defining.name == "memref.alloc"
