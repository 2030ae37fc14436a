"""The memref ops: views, element loads and stores by buffer kind, the `memref.copy`
marked as a work-group async copy, and work-group barriers.

The memref stage lowers every other copy to loops (memref_stage/copy_lowering.py):
an unmarked copy is outside the contract.

Memref values are never C values: each is a `View` (root buffer + index arithmetic,
views.py), and loads and stores index its root buffer.

Global f16 buffers are read and written with vload_half / vstore_half_rte, global
bf16 buffers hold ushort bit patterns, fp8 ones uchar bit patterns (fp8.py); work-group
arrays of all of them hold float.
"""

from __future__ import annotations

import re
from typing import Sequence

from mlir import ir

from . import ctypes_table as ct
from . import fp8
from .errors import error_at
from .ir_utils import DYNAMIC, operand_segments
from .views import Buffer, Expr, View, atom, product, rank_reduction_mask

# The memref stage's mark of a copy made by the work-group (copy_lowering.py).
ASYNC_COPY = "opencl.async_work_group_copy"


def load_expr(emitter, buffer: Buffer, index: Expr) -> str:
    """Read one element as its value type (f16/bf16 widen to float)."""
    expr = _load_expr(emitter, buffer, index)
    if emitter.bounds is not None:
        return emitter.bounds.load(buffer, index, expr)
    return expr


def _load_expr(emitter, buffer: Buffer, index: Expr) -> str:
    if buffer.is_global and buffer.kind == "f16":
        return f"vload_half({index}, {buffer.name})"
    if buffer.is_global and buffer.kind == "bf16":
        emitter.helpers.need("bf16_bits_to_float")
        return f"bf16_bits_to_float({buffer.name}[{index}])"
    if buffer.is_global and buffer.kind in fp8.KINDS:
        return f"{emitter.helpers.need(fp8.decode(buffer.kind))}({buffer.name}[{index}])"
    return f"{buffer.name}[{index}]"


def store_stmt(emitter, buffer: Buffer, index: Expr, value: str) -> str:
    """Write one element (f16/bf16 rounded to nearest even)."""
    stmt = _store_stmt(emitter, buffer, index, value)
    if emitter.bounds is not None:
        return emitter.bounds.store(buffer, index, stmt)
    return stmt


def _store_stmt(emitter, buffer: Buffer, index: Expr, value: str) -> str:
    if buffer.is_global and buffer.kind == "f16":
        return f"vstore_half_rte({value}, {index}, {buffer.name});"
    if buffer.is_global and buffer.kind == "bf16":
        emitter.helpers.need("float_to_bf16_bits")
        return f"{buffer.name}[{index}] = float_to_bf16_bits({value});"
    if buffer.is_global and buffer.kind in fp8.KINDS:
        return f"{buffer.name}[{index}] = {emitter.helpers.need(fp8.encode(buffer.kind))}({value});"
    return f"{buffer.name}[{index}] = {value};"


def value_role(buffer: Buffer, suffix: str) -> str:
    """The name of a value read from `buffer`: `x_vec` for a vector read from `x_ptr`
    or `x_tile`, `tile0_elem` for an element of `tile0`."""
    base = re.sub(r"_(ptr|tile)(_\d+)?$", "", buffer.name)
    return f"{base}_{suffix}"


def pointer(view: View, index: Expr) -> str:
    """`buffer + index` as a pointer expression (sums parenthesized, so the
    pointer moves once by the whole index)."""
    if index == 0:
        return view.buffer.name
    text = str(index)
    return f"{view.buffer.name} + {atom(index) if ' + ' in text or ' - ' in text else text}"


def _pick_size(a: Expr | None, b: Expr | None) -> Expr | None:
    """Both sides of a copy have the same extent; prefer the one known statically."""
    if isinstance(a, int) or b is None:
        return a
    return b


def _copy(emitter, op) -> None:
    """memref.copy marked `opencl.async_work_group_copy` by the memref stage
    (copy_lowering.py): async work-group copies."""
    if ASYNC_COPY not in op.attributes:
        raise error_at(op, f"memref.copy without {ASYNC_COPY}: the memref stage lowers "
                           "every other copy to loops (copy-lowering)")
    src = emitter.view(op, op.operands[0])
    dst = emitter.view(op, op.operands[1])
    if src.rank != dst.rank or src.buffer.kind != dst.buffer.kind:
        raise error_at(op, "copy between views of different rank or element type")
    sizes = [_pick_size(a, b) for a, b in zip(src.sizes, dst.sizes)]
    if any(s is None for s in sizes):
        raise error_at(op, "copy of a view whose extent is unknown (a whole "
                           "kernel argument)")
    emitter.note_source(op)
    placed = COPY_BARRIERS_PLACED in op.attributes
    if not _async_copy(emitter, src, dst, sizes, barriers_placed=placed):
        raise error_at(op, f"memref.copy marked {ASYNC_COPY} is not a copy between "
                           "a __global buffer and a __local tile of one plain element type")


def _async_copy(emitter, src: View, dst: View, sizes: list[Expr], barriers_placed: bool) -> bool:
    """global <-> local copies of plain element types as work-group async copies
    (one per row; strided on the global side when needed), each waited for right
    after. False if the copy is not of that shape. `barriers_placed`: the barrier
    analysis put the barrier the copy needs before it, where any."""
    if {src.buffer.space, dst.buffer.space} != {"global", "local"} or not sizes:
        return False
    if ct.is_narrow_float(src.buffer.kind):
        return False  # the element type changes (half / bits -> float)
    local, glob = (dst, src) if dst.buffer.space == "local" else (src, dst)
    if local.strides[-1] != 1:
        return False
    # One row per async copy, as the memref stage gives it: a copy of one dense block
    # arrives as one row (memref_stage/copy_lowering.py, `_mark_async`).
    rows, count = sizes[:-1], sizes[-1]
    if 0 in rows or count == 0:
        return True  # nothing to copy
    stride = glob.strides[-1]

    def row_copy(row: list[str], event: str, assign: str) -> str:
        """The statement `assign = <copy of one row>;`."""
        row_src, row_dst = pointer(src, src.element(row)), pointer(dst, dst.element(row))
        n = count
        if emitter.bounds is not None:  # nothing copied when the row leaves the buffer
            n = emitter.bounds.copy_count(glob.buffer, glob.element(row), count, stride, glob is dst)
        contiguous = f"{assign} = async_work_group_copy({row_dst}, {row_src}, {n}, {event});"
        if stride == 1 or count == 1:
            # The stride of a one-element row moves nothing: no branch on it (PoCL 3.1
            # also failed to link a kernel holding both copies of one element, leaving
            # `_local_id_z` undefined).
            return contiguous
        strided = (f"{assign} = async_work_group_strided_copy({row_dst}, {row_src}, {n}, "
                   f"{stride}, {event});")
        if isinstance(stride, int):
            return strided
        # A stride known only at run time is most often 1 (Triton does not specialize
        # strides equal to 1), and the default CPU runtime's contiguous copy is several times faster.
        return f"if ({atom(stride)} == 1) {contiguous} else {strided}"

    # The copy is made by the work-group, not by the work-item that wrote the local
    # side (or will write over what it reads): without a barrier first, those accesses
    # race with it (OpenCL C 6.12.10: async copies do not synchronize their source).
    # A one-work-item group has no other work-item to race with, so it is left out
    # there (on every device: a barrier would only cost CPU runtimes compile time), and
    # where the barrier analysis placed the copy's barrier (COPY_BARRIERS_PLACED).
    if not emitter.single_work_item() and not barriers_placed:
        emitter.out.line("barrier(CLK_LOCAL_MEM_FENCE);")
    event = emitter.names.fresh("ev")
    if not rows:
        copy = row_copy([], "0", event)
        if copy.startswith(event):
            emitter.out.line(f"event_t {copy}")
        else:
            emitter.out.line(f"event_t {event};")
            emitter.out.line(copy)
        emitter.out.line(f"wait_group_events(1, &{event});")
        return True
    # One event shared by all row copies; a copy with no rows has none to wait for.
    emitter.out.line(f"event_t {event} = 0;")
    loops = _open_loops(emitter, rows, "r")
    emitter.out.line(row_copy(loops, event, event))
    _close_loops(emitter, loops)
    total_rows = product(rows)
    guard = "" if isinstance(total_rows, int) else f"if ({total_rows} > 0) "
    emitter.out.line(f"{guard}wait_group_events(1, &{event});")
    return True


def _open_loops(emitter, extents: Sequence[Expr], prefix: str) -> list[str]:
    """Nested `for` loops over `extents`; returns the induction variables."""
    emitter.names.push_scope()
    variables = []
    for n in extents:
        var = emitter.names.fresh(prefix) if len(extents) == 1 else \
            emitter.names.fresh(f"{prefix}{len(variables)}")
        emitter.out.open(f"for (long {var} = 0; {var} < {n}; ++{var})")
        variables.append(var)
    return variables


def _close_loops(emitter, variables: list[str]) -> None:
    for _ in variables:
        emitter.out.close()
    emitter.names.pop_scope()


# ------------------------------------------------------------------- handlers

def _mixed(emitter, static_attr: ir.Attribute, dynamic: Sequence[ir.Value]) -> list[Expr]:
    """Static offsets/sizes/strides with the dynamic ones filled in."""
    dynamic_values = iter(dynamic)
    result: list[Expr] = []
    for value in ir.DenseI64ArrayAttr(static_attr):
        if value == DYNAMIC:
            result.append(emitter.index_expr(next(dynamic_values)))
        else:
            result.append(int(value))
    return result


def _offsets_sizes_strides(emitter, op) -> tuple[list[Expr], list[Expr], list[Expr]]:
    segments = operand_segments(op)
    return (_mixed(emitter, op.attributes["static_offsets"], segments[1]),
            _mixed(emitter, op.attributes["static_sizes"], segments[2]),
            _mixed(emitter, op.attributes["static_strides"], segments[3]))


def _reassociation(op) -> list[list[int]]:
    return [[ir.IntegerAttr(d).value for d in ir.ArrayAttr(group)]
            for group in ir.ArrayAttr(op.attributes["reassociation"])]


def _reinterpret_cast(emitter, op) -> None:
    source = emitter.view(op, op.operands[0])
    offsets, sizes, strides = _offsets_sizes_strides(emitter, op)
    emitter.views[op.results[0]] = source.reinterpret(offsets[0], sizes, strides)


def _subview(emitter, op) -> None:
    source = emitter.view(op, op.operands[0])
    offsets, sizes, strides = _offsets_sizes_strides(emitter, op)
    # Which unit dims a rank-reducing subview drops follows from the static sizes
    # and the result type, exactly as the verifier decides it.
    static_sizes = [None if s == DYNAMIC else s
                    for s in ir.DenseI64ArrayAttr(op.attributes["static_sizes"])]
    result_shape = [None if s == DYNAMIC else s
                    for s in ir.MemRefType(op.results[0].type).shape]
    dropped = rank_reduction_mask(static_sizes, result_shape)
    if dropped is None:
        raise error_at(op, "cannot tell which dimensions this subview drops")
    emitter.views[op.results[0]] = source.subview(offsets, sizes, strides, dropped)


def _collapse_shape(emitter, op) -> None:
    groups = _reassociation(op)
    emitter.views[op.results[0]] = emitter.view(op, op.operands[0]).collapse(groups)


def _expand_shape(emitter, op) -> None:
    groups = _reassociation(op)
    sizes = _mixed(emitter, op.attributes["static_output_shape"], list(op.operands)[1:])
    emitter.views[op.results[0]] = emitter.view(op, op.operands[0]).expand(groups, sizes)


def _memref_cast(emitter, op) -> None:
    emitter.views[op.results[0]] = emitter.view(op, op.operands[0])


def _dim(emitter, op) -> None:
    """memref.dim of a view along a constant dimension: its size (the extents of the
    copies the memref stage lowers to loops, copy_lowering.py)."""
    view = emitter.view(op, op.operands[0])
    dim = emitter.index_expr(op.operands[1])
    size = view.sizes[dim] if isinstance(dim, int) and 0 <= dim < view.rank else None
    if size is None:
        raise error_at(op, "asks for a size the view does not know")
    result = op.results[0]
    if isinstance(size, int):
        emitter.int_constants[result] = size
        emitter.literals[result] = lambda typed, v=size: ct.int_literal(v, "index", typed)
    else:       # an expression of values already defined, as every view's sizes
        emitter.exprs[result] = atom(size)


def _extract_pointer(emitter, op) -> None:
    """memref.extract_aligned_pointer_as_index of a global buffer: its address."""
    view = emitter.view(op, op.operands[0])
    if not view.buffer.is_global:
        raise error_at(op, "the address of a __local buffer is not available")
    emitter.define(op, op.results[0], f"(long){view.buffer.name}",
                   role=f"{view.buffer.name}_addr")


def _no_code(emitter, op) -> None:
    """Ops that print nothing: allocs are hoisted, deallocs are implicit."""


def _load(emitter, op) -> None:
    view = emitter.view(op, op.operands[0])
    index = view.element([emitter.index_expr(v) for v in list(op.operands)[1:]])
    # An element of a work-group or private array is a piece of a tile, never the
    # Python value itself (that is the tile).
    emitter.define(op, op.results[0], load_expr(emitter, view.buffer, index),
                   role=value_role(view.buffer, "elem"), python_name=view.buffer.is_global)


def _store(emitter, op) -> None:
    value = emitter.operand(op.operands[0])
    view = emitter.view(op, op.operands[1])
    index = view.element([emitter.index_expr(v) for v in list(op.operands)[2:]])
    emitter.stmt(op, store_stmt(emitter, view.buffer, index, value))


def _barrier(emitter, op) -> None:
    if emitter.single_work_item():
        # A one-work-item group has no one to wait for: the barrier's remaining effect
        # is ordering this work-item's memory accesses, which is a fence, on
        # every device (a CPU runtime's work-group compiler can take minutes on kernels
        # with barriers; fences it compiles as usual).
        emitter.stmt(op, "mem_fence(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);")
        return
    if LOCAL_FENCE in op.attributes:
        # The barrier analysis found only `__local` memory shared across this barrier
        # (memref_stage/work_group_barriers.py).
        emitter.stmt(op, "barrier(CLK_LOCAL_MEM_FENCE);")
        return
    emitter.stmt(op, "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);")


# A gpu.barrier's unit attribute: the work-items communicate through `__local` memory
# alone across it.
LOCAL_FENCE = "opencl.local_fence"  # set by memref_stage/work_group_barriers.py
# A memref.copy's unit attribute: the barrier analysis placed the barrier an async
# work-group copy needs before it, where any (memref_stage/work_group_barriers.py).
COPY_BARRIERS_PLACED = "opencl.copy_barriers_placed"


HANDLERS = {
    "memref.alloc": _no_code,
    "memref.alloca": _no_code,
    "memref.dealloc": _no_code,
    "memref.reinterpret_cast": _reinterpret_cast,
    "memref.subview": _subview,
    "memref.collapse_shape": _collapse_shape,
    "memref.expand_shape": _expand_shape,
    "memref.cast": _memref_cast,
    "memref.extract_aligned_pointer_as_index": _extract_pointer,
    "memref.dim": _dim,
    "memref.load": _load,
    "memref.store": _store,
    "memref.copy": _copy,
    "gpu.barrier": _barrier,
}
