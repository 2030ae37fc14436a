"""GPU-shaped kernels: row reductions of tiles with fewer rows than the work-group has
work-items keep every work-item busy.

`tl.max(x, axis=1)` over a [ROWS, COLS] tile lowers to a parallel loop over the rows
around a serial loop over the columns (the first column initialized the accumulator):

    parallel r in [0, ROWS):  for c in [lb, ub):  acc[r] = acc[r] <op> view[r, c]

Distributed as it stands, only ROWS work-items take part, each walking the whole row.
When ROWS is at most half the work-group, `split_row_reductions` rewrites it, before
work_group_distribution.py distributes the parallel loops, into

    parallel (r, s) in [0, ROWS) x [0, S):          # S = work_items / ROWS strips
        partials[r, s] = view[r, lb + s] <op> view[r, lb + s + S] <op> ...
    parallel r in [0, ROWS):  for s in [0, S):  acc[r] = acc[r] <op> partials[r, s]

Every work-item folds every S-th column of a row; after the barrier the analysis puts
before the second loop, each owner of `acc[r]` folds its row's S partials -- the same
distribution as the loops that fill and read `acc`. The strip index is the parallel
loop's fastest dimension, so the S work-items of a row are lid-consecutive and read S
consecutive columns at each step (interleaved, not contiguous strips: strips of a
power-of-two width would start on one bank).
The combiner is associative and commutative (COMBINERS), so the strips may regroup it.
"""
from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, memref, scf

from ..ir_helpers import root_buffer
from .affine_nests import body_ops, constant_index
from .work_group_columns import COMBINERS, is_tile, load_from_partials, scalar_combiner

_STORES = ("memref.store",)


@dataclass
class RowReduction:
    """`scf.parallel %r { scf.for %c = lb to ub { x = load view[%r, %c];
    a = load acc[%r]; store combiner(a, x), acc[%r] } }`, or the same over blocks of
    rows (`_row_and_columns`)."""
    rows: object          # the scf.parallel over the rows
    columns: object       # the scf.for over the columns
    view_load: object
    combiner: object
    row_count: int        # ROWS
    first_column: int     # lb
    column_count: int     # ub - lb


def split_row_reductions(block: ir.Block, work_items: int) -> None:
    """Rewrites every row reduction under `block` that at most half the work-group
    would run (see the module docstring)."""
    for match in _row_reductions(block, work_items):
        _split(match, _strips(match, work_items))


def _strips(match: RowReduction, work_items: int) -> int:
    """Strips per row: as many as the work-group has work-items per row, each of at
    least two columns, rounded down to a power of two (a work-item's row and strip are
    then a shift and a mask of its id, not a division)."""
    most = min(work_items // match.row_count, match.column_count // 2)
    return 1 << (most.bit_length() - 1) if most >= 1 else 0


def _row_reductions(block: ir.Block, work_items: int) -> list:
    found = []
    for op in block.operations:
        if op.operation.name == "scf.parallel":
            match = _match(op)
            if match is not None and _strips(match, work_items) >= 2:
                found.append(match)
            continue
        for region in op.regions:
            for inner in region.blocks:
                found.extend(_row_reductions(inner, work_items))
    return found


def _match(rows) -> RowReduction | None:
    arguments = rows.regions[0].blocks[0].arguments
    lb, ub, step = (constant_index(v) for v in rows.operands[:3])
    if len(arguments) != 1 or len(rows.results) or lb != 0 or ub is None or not step or \
            ub % step:
        return None
    found = _row_and_columns(rows, arguments[0], step)
    if found is None:
        return None
    r, columns = found
    first, last, column_step = (constant_index(v) for v in columns.operands[:3])
    if first is None or last is None or column_step != 1 or len(columns.results) or \
            last <= first:
        return None
    c = columns.regions[0].blocks[0].arguments[0]
    inner = body_ops(columns)
    if len(inner) != 4 or [op.operation.name == "memref.load" for op in inner[:2]] != [True, True] \
            or inner[2].operation.name not in COMBINERS or inner[3].operation.name not in _STORES:
        return None
    store, combiner = inner[3], inner[2]
    accumulator = store.operands[1]
    acc_load = next((op for op in inner[:2] if op.operands[0] == accumulator), None)
    view_load = next((op for op in inner[:2] if op.operands[0] != accumulator), None)
    if acc_load is None or view_load is None:
        return None
    view = view_load.operands[0]
    view_indices = list(view_load.operands)[1:]
    if not _row_element(accumulator, list(acc_load.operands)[1:], r) or \
            not _row_element(accumulator, list(store.operands)[2:], r) or \
            len(view_indices) < 2 or view_indices[-1] != c or \
            not _row_element(view, view_indices[:-1], r, trailing=1) or \
            store.operands[0] != combiner.results[0] or \
            set(combiner.operands) != {acc_load.results[0], view_load.results[0]} or \
            not is_tile(accumulator) or root_buffer(view) == root_buffer(accumulator):
        return None
    return RowReduction(rows, columns, view_load, combiner, ub, first, last - first)


def _row_element(memref_value: ir.Value, indices: list, row: ir.Value, trailing: int = 0) -> bool:
    """Whether `indices` are [row, 0, ..., 0] on dimensions of size 1 (but the last
    `trailing` ones): Inductor's `[XBLOCK, 1]` row statistics, and a `[XBLOCK, 1, R]`
    view of its rows, hold one element per row in those."""
    shape = ir.MemRefType(memref_value.type).shape
    if not indices or indices[0] != row:
        return False
    return all(size == 1 and constant_index(index) == 0
               for size, index in zip(shape[1:len(shape) - trailing], indices[1:]))


def _row_and_columns(rows, index: ir.Value, step: int):
    """The row index and the loop over the columns in the body of the parallel loop:
    `scf.for %c` itself (step 1), or `scf.for %k = 0 to step { %row = %index + %k;
    scf.for %c }` (rows in blocks of `step`, as block_ownership.py aligns them)."""
    ops = _without_constants(body_ops(rows))
    if len(ops) != 1 or ops[0].operation.name != "scf.for":
        return None
    if step == 1:
        return index, ops[0]
    block_rows = ops[0]
    bounds = [constant_index(v) for v in block_rows.operands[:3]]
    inner = _without_constants(body_ops(block_rows))
    if bounds != [0, step, 1] or len(block_rows.results) or len(inner) != 2 or \
            inner[0].operation.name != "arith.addi" or inner[1].operation.name != "scf.for":
        return None
    offset = block_rows.regions[0].blocks[0].arguments[0]
    if list(inner[0].operands) not in ([index, offset], [offset, index]):
        return None
    return inner[0].results[0], inner[1]


def _without_constants(ops: list) -> list:
    return [op for op in ops if op.operation.name != "arith.constant"]


def _split(match: RowReduction, strips: int) -> None:
    rows, columns = match.rows, match.columns
    index = ir.IndexType.get()
    view = match.view_load.operands[0]
    element_type = ir.MemRefType(view.type).element_type
    with rows.location, ir.InsertionPoint(rows):
        c = lambda v: arith.constant(index, v)  # noqa: E731
        partials = memref.alloc(ir.MemRefType.get([match.row_count, strips], element_type), [], [])
        strip_loop = scf.ParallelOp([], [c(0), c(0)], [c(match.row_count), c(strips)],
                                    [c(1), c(1)], [])
        body = strip_loop.region.blocks.append(index, index)
    with rows.location, ir.InsertionPoint(body):
        row, strip = body.arguments
        first = arith.addi(strip, c(match.first_column)) if match.first_column else strip
        _strip_fold(match, view, row, first, c(match.first_column + match.column_count),
                    c(strips), partials, strip)
        scf.ReduceOp([], 0)
    # The columns loop now folds the row's partials into the accumulator.
    with rows.location, ir.InsertionPoint(rows):
        columns.operands[0], columns.operands[1] = c(0), c(strips)
    # view[row, 0..., column] -> partials[row, strip]: the columns loop runs over strips.
    indices = list(match.view_load.operands)[1:]
    load_from_partials(match.view_load, partials, [indices[0], indices[-1]])


def _strip_fold(match, view, row, first, end, stride, partials, strip) -> None:
    """partials[row, strip] = view[row, first] <op> view[row, first + stride] ... (< end)."""
    zeros = [arith.constant(ir.IndexType.get(), 0)] * (ir.MemRefType(view.type).rank - 2)
    start = memref.load(view, [row, *zeros, first])
    folded = scf.ForOp(arith.addi(first, stride), end, stride, [start])
    with ir.InsertionPoint(folded.body):
        value = memref.load(view, [row, *zeros, folded.induction_variable])
        scf.YieldOp([scalar_combiner(match.combiner, folded.inner_iter_args[0], value)])
    memref.store(folded.results[0], partials, [row, strip])

