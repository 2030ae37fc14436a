"""Prefetches of the blocks that the next iteration of a matmul's k loop copies.

In kernels of one work-item per group, each iteration of the k loop first copies the
operand blocks from global memory into their tiles (full_tile_copies.py), then runs the
register-blocked micro-kernel on the tiles (register_blocking.py). The copies wait for
memory: a block's rows are a few cache lines each, one matrix row apart, too short for
the hardware prefetchers. This rewrite asks for every cache line of the blocks that the
next iteration copies while the micro-kernel runs, a share of their rows in each
iteration of its loop of row blocks, so that the requests neither queue up at once nor
evict all at once the tiles the micro-kernel works on:

    scf.for %k = %lb to %ub step %s iter_args(%offset = ...) {
      %block = memref.reinterpret_cast %base to offset: [%offset] ...
      (the copy of %block into its tile)
      %more = arith.cmpi slt, (%k + %s), %ub
      %next_offset = (the value the loop yields for %offset, recomputed here)
      %next = memref.reinterpret_cast %base to offset: [%next_offset] ...
      affine.for %row = 0 to M step ROWS {                 (T iterations)
        %from = (%row / ROWS) * P,  %to = min(%from + P, R)   (P = R / T rounded up)
        scf.if %more {
          scf.for %r = %from to %to { scf.for %c = 0 to COLUMNS step LINE {
            memref.prefetch %next[%r, %c], read, locality<3>, data } }
        }
        (the micro-kernels of the row block)
      }
      scf.yield %offset + %step_of_offset, ...

Measured on the benchmark's matmul kernel (1024^3, 128x64x64 blocks; kernels with and
without the prefetch instructions alternated in one process on a shared 2-core host, 20
pairs): on the default CPU runtime, where the prefetch is an instruction, 7-11% less time in the median with
fp32 inputs (two runs) and 16% with fp16, CPU time alike; all of a block's lines at once
after its copy saved 2-7%, and prefetching to L2 only (locality 2) less than locality 3.
Intel's runtime gets no prefetch (emitter_opencl/prefetch.py) and the SPIR-V stage drops it.

Only blocks of a copy into an operand tile from a `memref.reinterpret_cast` whose one
dynamic offset is an iter_arg of the enclosing `scf.for`, and whose next value the
loop computes from iter_args and values defined outside the loop with `arith` ops, get
prefetches; others are left.
"""
from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import affine, arith, memref, scf

from ..ir_helpers import named
from .affine_nests import ancestor_in, is_nested_in, owner

# Bytes per cache line on the CPUs the OpenCL runtimes target (x86-64, AArch64).
LINE_BYTES = 64


@dataclass
class RowBlocks:
    """The loop of a register-blocked contraction over its row blocks
    (register_blocking.py): `affine.for %row = first to end step rows`."""
    loop: affine.AffineForOp
    first: int
    end: int
    rows: int

    @property
    def count(self) -> int:
        return -(-(self.end - self.first) // self.rows)


def prefetch_next_blocks(copies: list, row_blocks: RowBlocks) -> int:
    """Spreads, over the iterations of `row_blocks`, prefetches of the blocks that the
    next k iteration copies into the operand tiles (`copies`: `memref.copy %block,
    %tile`); returns how many blocks get them."""
    return sum(_prefetch_next_block(copy, row_blocks) for copy in copies)


def _prefetch_next_block(copy, row_blocks: RowBlocks) -> bool:
    block = copy.operands[0]
    cast = owner(block)
    if cast is None or cast.name != "memref.reinterpret_cast":
        return False
    offsets = list(cast.opview.offsets)
    loop = _enclosing_for(copy)
    if len(offsets) != 1 or loop is None or "unsignedCmp" in loop.attributes:
        return False
    block_type = ir.MemRefType(block.type)
    if not _rows_of_lines(block_type):
        return False
    carried = _iter_arg_index(loop, offsets[0])
    if carried is None or not is_nested_in(row_blocks.loop, loop):
        return False
    yielded = _terminator(loop.body).operands[carried]
    if not _recomputable(yielded, loop):
        return False
    with named("prefetch_next", copy.location):
        with ir.InsertionPoint(ancestor_in(row_blocks.loop, loop.body)):
            more = _has_next_iteration(loop)
            next_block = _at_offset(cast, _recompute(yielded, loop))
        with ir.InsertionPoint.at_block_begin(row_blocks.loop.body):
            first, end = _share_of_rows(block_type.shape[0], row_blocks, copy.location)
            branch = scf.IfOp(more, [], has_else=False)
        with ir.InsertionPoint(branch.then_block):
            _prefetch_lines(next_block, first, end)
            scf.yield_([])
    return True


def _rows_of_lines(block_type: ir.MemRefType) -> bool:
    """Whether the block is a static rank-2 shape whose rows have unit stride."""
    if block_type.rank != 2 or not block_type.has_static_shape:
        return False
    strides, _offset = block_type.get_strides_and_offset()
    return strides[-1] == 1


def _enclosing_for(op):
    """The nearest `scf.for` around `op`, else None."""
    parent = op.operation.parent
    while parent is not None and parent.name != "func.func":
        if parent.name == "scf.for":
            return parent.opview
        parent = parent.parent
    return None


def _iter_arg_index(loop, value: ir.Value):
    """The position of `value` among the iter_args of `loop`'s body, else None."""
    for position, arg in enumerate(loop.inner_iter_args):
        if arg == value:
            return position
    return None


def _terminator(block: ir.Block):
    return list(block.operations)[-1]


def _inside(value: ir.Value, loop) -> bool:
    """Whether `value` is defined by an op nested in `loop` (not a block argument)."""
    op = owner(value)
    return op is not None and is_nested_in(op, loop)


def _recomputable(value: ir.Value, loop) -> bool:
    """Whether `value` is an iter_arg, defined outside `loop`, or an `arith` op of
    such values directly in its body."""
    if _iter_arg_index(loop, value) is not None or not _inside(value, loop):
        return True
    op = owner(value)
    if op.operation.parent != loop.operation or not op.name.startswith("arith.") or len(op.regions):
        return False
    return all(_recomputable(operand, loop) for operand in op.operands)


def _recompute(value: ir.Value, loop) -> ir.Value:
    """`value` (see _recomputable) recomputed at the insertion point."""
    if _iter_arg_index(loop, value) is not None or not _inside(value, loop):
        return value
    op = owner(value)
    operands = [_recompute(operand, loop) for operand in op.operands]
    clone = op.clone()
    for position, operand in enumerate(operands):
        clone.operands[position] = operand
    return clone.results[list(op.results).index(value)]


def _has_next_iteration(loop) -> ir.Value:
    """`iv + step < upper bound`: whether the loop runs again after this iteration."""
    next_iv = arith.addi(loop.induction_variable, loop.step)
    return arith.cmpi(arith.CmpIPredicate.slt, next_iv, loop.upperBound)


def _at_offset(cast, offset: ir.Value) -> ir.Value:
    """`cast` (a reinterpret_cast with one dynamic offset) at `offset`."""
    clone = cast.clone()
    clone.operands[1] = offset   # operand 0 is the source, then the dynamic offset
    return clone.results[0]


def _share_of_rows(rows: int, row_blocks: RowBlocks,
                   loc: ir.Location) -> tuple[ir.Value, ir.Value]:
    """This iteration's rows of a block of `rows` rows: `t * P` to `min((t + 1) * P,
    rows)` in the t-th iteration of `row_blocks`, P = rows / iterations rounded up."""
    index = ir.IndexType.get()
    per_iteration = -(-rows // row_blocks.count)
    offset = row_blocks.loop.induction_variable
    if row_blocks.first:
        offset = arith.subi(offset, arith.constant(index, row_blocks.first))
    iteration = arith.divsi(offset, arith.constant(index, row_blocks.rows),
                            loc=named("row_block", loc))
    first = arith.muli(iteration, arith.constant(index, per_iteration),
                       loc=named("prefetch_from", loc))
    last = arith.addi(first, arith.constant(index, per_iteration), loc=named("prefetch_to", loc))
    end = arith.minsi(last, arith.constant(index, rows), loc=named("prefetch_to", loc))
    return first, end


def _prefetch_lines(block: ir.Value, first: ir.Value, end: ir.Value) -> None:
    """Prefetches of each cache line of rows `first` to `end` of the rank-2 `block`
    (unit inner stride)."""
    block_type = ir.MemRefType(block.type)
    columns = block_type.shape[1]
    per_line = max(1, LINE_BYTES * 8 // _element_bits(block_type.element_type))
    index = ir.IndexType.get()
    zero, one = arith.constant(index, 0), arith.constant(index, 1)
    column_count = arith.constant(index, columns)
    line_step = arith.constant(index, min(per_line, columns))
    row_loop = scf.ForOp(first, end, one)
    with ir.InsertionPoint(row_loop.body):
        line_loop = scf.ForOp(zero, column_count, line_step)
        with ir.InsertionPoint(line_loop.body):
            memref.prefetch(block, [row_loop.induction_variable, line_loop.induction_variable],
                            is_write=False, locality_hint=3, is_data_cache=True)
            scf.yield_([])
        scf.yield_([])


def _element_bits(element: ir.Type) -> int:
    """Bits of a float or integer element (index: 64)."""
    return getattr(element, "width", 64)
