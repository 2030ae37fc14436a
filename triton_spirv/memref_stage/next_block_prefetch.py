"""Prefetches of the block that the next iteration of a matmul's k loop copies.

In kernels of one work-item per group, each iteration of the k loop first copies an
operand block from global memory into its tile (full_tile_copies.py), then runs the
register-blocked micro-kernel on the tiles. The copy waits for memory: a block's rows
are a few cache lines each, one matrix row apart, too short for the hardware
prefetchers. After the whole-tile copy, this rewrite asks for every cache line of the
block that the next iteration copies, so those lines arrive while the micro-kernel runs:

    scf.for %k = %lb to %ub step %s iter_args(%offset = ...) {
      %block = memref.reinterpret_cast %base to offset: [%offset] ...
      scf.if %is_full {
        memref.copy %block, %tile
        %next_k = arith.addi %k, %s
        %more = arith.cmpi slt, %next_k, %ub
        scf.if %more {
          %next_offset = (the value the loop yields for %offset, recomputed here)
          %next = memref.reinterpret_cast %base to offset: [%next_offset] ...
          scf.for %r = 0 to ROWS { scf.for %c = 0 to COLS step LINE {
            memref.prefetch %next[%r, %c], read, locality<3>, data } }
        }
      } else { ... }
      ...
      scf.yield %offset + %step_of_offset, ...

Measured on the benchmark's matmul kernel (1024^3 fp32, 128x64x64 blocks; old and new
kernels alternated in one process on a shared 2-core host): PoCL, where the prefetch is
an instruction, 15% less time in the median of 12 pairs; Intel's runtime gets no
prefetch (see emitter_opencl/prefetch.py) and the SPIR-V stage drops it.

Only copies from a `memref.reinterpret_cast` whose one dynamic offset is an iter_arg
of the enclosing `scf.for`, and whose next value the loop computes from iter_args and
values defined outside the loop with `arith` ops, get prefetches; others are left.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, memref, scf

from .affine_nests import named, owner

# Bytes per cache line on the CPUs the OpenCL runtimes target (x86-64, AArch64).
LINE_BYTES = 64


def prefetch_next_blocks(copies: list) -> int:
    """Adds, after each whole-tile `memref.copy %block, %tile` in `copies`, prefetches of
    the block the next k iteration copies; returns how many copies got them."""
    return sum(_prefetch_next_block(copy) for copy in copies)


def _prefetch_next_block(copy) -> bool:
    block = copy.operands[0]
    cast = owner(block)
    if cast is None or cast.name != "memref.reinterpret_cast":
        return False
    offsets = list(cast.opview.offsets)
    loop = _enclosing_for(copy)
    block_type = ir.MemRefType(block.type)
    if len(offsets) != 1 or loop is None or block_type.rank != 2 or not block_type.has_static_shape:
        return False
    carried = _iter_arg_index(loop, offsets[0])
    if carried is None:
        return False
    yielded = _terminator(loop.body).operands[carried]
    if not _recomputable(yielded, loop):
        return False
    with named("prefetch_next", copy.location):
        with ir.InsertionPoint.after(copy):
            more = _has_next_iteration(loop)
            branch = scf.IfOp(more, [], has_else=False)
        with ir.InsertionPoint(branch.then_block):
            next_offset = _recompute(yielded, loop)
            next_block = _at_offset(cast, next_offset)
            _prefetch_lines(next_block)
            scf.yield_([])
    return True


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
    while op is not None:
        if op.operation == loop.operation:
            return True
        op = op.operation.parent
    return False


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


def _prefetch_lines(block: ir.Value) -> None:
    """A prefetch of each cache line of the rank-2 `block` (unit inner stride)."""
    block_type = ir.MemRefType(block.type)
    rows, columns = block_type.shape
    per_line = max(1, LINE_BYTES * 8 // _element_bits(block_type.element_type))
    index = ir.IndexType.get()
    zero, one = arith.constant(index, 0), arith.constant(index, 1)
    row_count, column_count = arith.constant(index, rows), arith.constant(index, columns)
    line_step = arith.constant(index, min(per_line, columns))
    row_loop = scf.ForOp(zero, row_count, one)
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
