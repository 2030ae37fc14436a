"""Pointers chosen between different buffers (`PointerChoice`, values.py).

The memref stage addresses every buffer by its own kernel argument, so a pointer that
may point into `a_ptr` or `b_ptr` cannot become one offset into one memref. It is kept
as one pointer per buffer (`options`) plus `which`, the index of the buffer in force.
Offsets are added to every option alike; a load reads each buffer under its own mask
(`which == k`, and the load's mask) and selects, per element, the value of the buffer in
force; a store writes each buffer under its own mask. So nothing is read from or written
to a buffer an element does not point into. A `which` that is one scalar for the whole
tile (`p = a_ptr if flag else b_ptr`) becomes one branch per buffer instead, each an
ordinary (block) load or store.
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

from mlir import ir
from mlir.dialects import arith, bufferization, scf

from . import analysis
from . import builders as b
from . import memory
from .values import Pointer, PointerChoice, PointerTensor, Value


def buffers_of(converted) -> list:
    """The buffers a converted pointer may point into (none for numbers and for
    pointers that point nowhere)."""
    if isinstance(converted, PointerChoice):
        return converted.buffers
    if isinstance(converted, (Pointer, PointerTensor)) and converted.buffer is not None:
        return [converted.buffer]
    return []


def nowhere(shape: Optional[Sequence[int]]):
    """A pointer (a tensor of them when `shape` is given) into no buffer: `ub.poison`,
    on paths that never reach a memory access."""
    if shape is None:
        return Pointer(None, arith.constant(b.i64(), 0))
    return PointerTensor(None, Value(b.splat(arith.constant(b.i64(), 0), shape),
                                     affine=analysis.uniform(0, len(shape))))


def points_nowhere(converted) -> bool:
    return isinstance(converted, (Pointer, PointerTensor)) and converted.buffer is None


def union(*buffer_lists: Sequence[ir.Value]) -> list:
    """The buffers of all lists, each once, in order of first appearance."""
    out = []
    for buffers in buffer_lists:
        for buffer in buffers:
            if buffer not in out:
                out.append(buffer)
    return out


def elementwise(values: Sequence[ir.Value], result_elem: ir.Type,
                body: Callable[..., ir.Value]) -> ir.Value:
    """`body` on scalars, or per element (a linalg.generic) when any value is a tensor;
    scalar values are used as they are in every element."""
    shape = next((b.shape_of(v.type) for v in values if b.is_tensor(v.type)), None)
    if shape is None:
        return body(*values)
    tensors = [v for v in values if b.is_tensor(v.type)]

    def per_element(*args):
        elements = iter(args)
        return [body(*[next(elements) if b.is_tensor(v.type) else v for v in values])]

    return b.generic(tensors, b.parallel_maps(len(shape), len(tensors)),
                     [ir.RankedTensorType.get(shape, result_elem)], per_element)[0]


def _i32(value: int) -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(32), value)


def _unused_option(like, buffer: ir.Value):
    """A pointer into `buffer` that no element uses (its `which` never names it)."""
    if isinstance(like, Pointer):
        return Pointer(buffer, arith.constant(b.i64(), 0))
    shape = like.shape
    return PointerTensor(buffer, Value(b.splat(arith.constant(b.i64(), 0), shape),
                                       affine=analysis.uniform(0, len(shape))))


def _renumber(which: ir.Value, targets: Sequence[int]) -> ir.Value:
    """`targets[which]`, element by element."""
    if list(targets) == list(range(len(targets))):
        return which

    def pick(w):
        result = _i32(targets[0])
        for k, target in enumerate(targets[1:], start=1):
            result = arith.select(arith.cmpi(arith.CmpIPredicate.eq, w, _i32(k)),
                                  _i32(target), result)
        return result

    return elementwise([which], ir.IntegerType.get_signless(32), pick)


def as_choice(pointer, buffers: Sequence[ir.Value]) -> PointerChoice:
    """`pointer` (into one buffer, or a choice) as a choice over `buffers`, which holds
    every buffer it may point into."""
    own = buffers_of(pointer)
    if points_nowhere(pointer):
        return PointerChoice([_unused_option(pointer, buffer) for buffer in buffers], _i32(0))
    options = pointer.options if isinstance(pointer, PointerChoice) else [pointer]
    which = pointer.which if isinstance(pointer, PointerChoice) else _i32(0)
    which = _renumber(which, [buffers.index(buffer) for buffer in own])
    return PointerChoice([options[own.index(buffer)] if buffer in own
                          else _unused_option(options[0], buffer) for buffer in buffers],
                         which)


def select(conv, cond: Value, x, y, select_in_buffer) -> PointerChoice:
    """`arith.select` between pointers into different buffers: per buffer, a select of
    the two options (`select_in_buffer`, the converter's select within one buffer), and
    a select of `which`."""
    buffers = union(buffers_of(x), buffers_of(y))
    x, y = as_choice(x, buffers), as_choice(y, buffers)
    which = elementwise([cond.value, x.which, y.which], ir.IntegerType.get_signless(32),
                        arith.select)
    return PointerChoice([select_in_buffer(cond, xo, yo)
                          for xo, yo in zip(x.options, y.options)], which)


def map_options(choice: PointerChoice, each, which_fn=None) -> PointerChoice:
    """The choice with `each` applied to every option (addptr, splat, shape ops) and
    `which_fn` to a tensor `which` (shape ops; a scalar `which` stays as it is)."""
    which = choice.which
    if which_fn is not None and b.is_tensor(which.type):
        which = which_fn(which)
    return PointerChoice([each(o) for o in choice.options], which)


def _is_option(choice: PointerChoice, k: int) -> ir.Value:
    return elementwise([choice.which], ir.IntegerType.get_signless(1),
                       lambda w: arith.cmpi(arith.CmpIPredicate.eq, w, _i32(k)))


def _tensor_mask(mask: Optional[Value], is_k: ir.Value) -> Value:
    """`mask & is_k` for a tensor `is_k`."""
    if mask is None:
        return Value(is_k)
    return Value(elementwise([mask.value, is_k], ir.IntegerType.get_signless(1), arith.andi))


def load(choice: PointerChoice, mask: Optional[Value], other: Optional[Value],
         load_scalar, load_tensor) -> ir.Value:
    """The values of the buffer in force (see `per_option`)."""
    def load_option(option, option_mask):
        if isinstance(option, Pointer):
            return load_scalar(option, option_mask.value if option_mask else None, other)
        return load_tensor(option, option_mask, other)

    return per_option(choice, mask, load_option,
                      memory.buffer_element_type(choice.options[0].buffer))


def per_option(choice: PointerChoice, mask: Optional[Value], run,
               elem: ir.Type) -> ir.Value:
    """`run(option, option_mask)` (a load or an atomic: it returns values of `elem`) on
    the buffer in force: one branch per buffer when `which` is a scalar; else every
    buffer under the mask `mask & which == k`, then a select per element."""
    if not b.is_tensor(choice.which.type):
        like = choice.options[0]
        if isinstance(like, Pointer):
            return _branch_per_option(choice, lambda o: run(o, mask), elem)
        tile = memory.tile_buffer(like.shape, elem)

        def into_tile(option):
            bufferization.MaterializeInDestinationOp(None, run(option, mask), tile,
                                                     restrict=False, writable=True)

        _branch_per_option(choice, into_tile, None)
        return memory.as_tensor(tile)
    result = None
    for k, option in enumerate(choice.options):
        is_k = _is_option(choice, k)
        got = run(option, _tensor_mask(mask, is_k))
        result = got if result is None else elementwise([is_k, got, result], elem,
                                                        arith.select)
    return result


def store(choice: PointerChoice, value: Value, mask: Optional[Value], store_scalar,
          store_tensor) -> None:
    """Each buffer written where it is in force (one branch per buffer when `which` is a
    scalar)."""
    def store_option(option, option_mask):
        if isinstance(option, Pointer):
            store_scalar(option, value, option_mask.value if option_mask else None)
        else:
            store_tensor(option, value, option_mask)

    if not b.is_tensor(choice.which.type):
        _branch_per_option(choice, lambda o: store_option(o, mask), None)
        return
    for k, option in enumerate(choice.options):
        store_option(option, _tensor_mask(mask, _is_option(choice, k)))


def _branch_per_option(choice: PointerChoice, build, result_type: Optional[ir.Type]):
    """`if (which == 0) build(options[0]) else if ... else build(options[-1])` for a
    scalar `which`; yields what `build` returns when `result_type` is given."""
    def case(k):
        if k == len(choice.options) - 1:
            return build(choice.options[k])
        cond = arith.cmpi(arith.CmpIPredicate.eq, choice.which, _i32(k))
        if_op = scf.IfOp(cond, [result_type] if result_type else [], has_else=True)
        for block, branch in ((if_op.then_block, lambda: build(choice.options[k])),
                              (if_op.else_block, lambda: case(k + 1))):
            with ir.InsertionPoint(block):
                got = branch()
                scf.YieldOp([got] if result_type else [])
        return if_op.results[0] if result_type else None

    return case(0)
