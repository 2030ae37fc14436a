"""Kernel code from the emitters' indexing maps.

An emitter describes its kernel by one map `(th_x, bl_x)[symbols] -> (indices)` (the
map the fusion report prints, indexing.py) and builds the kernel from that map: the
work-group size and grid are the ranges of th_x and bl_x, loops walk the map's
symbols with the bounds and strides the map gives, indices are the map's results and
guards its constraints. The report and the code cannot drift apart.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from ..scalar_code import apply_expr
from ..indexing import (Add, Const, Dim, Expr, FloorDiv, IndexingMap, Mod, Mul, Sym,
                        StridedLoop, static_grid)
from ..mlir_types import const_index
from .base import HostSize


def emit_expr(e: Expr, dims: list[ir.Value], syms: list[ir.Value] = ()) -> ir.Value:
    """`e` at work-item ids `dims` and symbol values `syms`. Work-item ids and symbols
    are >= 0, so an expression with no negative factor or constant is too: its
    floordiv and mod are then C's `/` and `%`."""
    return apply_expr(e, dims, syms, nonnegative=not _may_be_negative(e))


def constraints_hold(m: IndexingMap, dims, syms, bounds=None) -> ir.Value | None:
    """i1: every constraint of `m` holds at (dims, syms); None when `m` has none.
    `bounds` gives the index value of each symbolic (dynamic) upper bound."""
    held = None
    for e, lo, hi in m.constraints:
        v = emit_expr(e, dims, syms)
        upper = const_index(hi) if isinstance(hi, int) else bounds[hi]
        ok = arith.cmpi(arith.CmpIPredicate.sle, v, upper)
        if lo != 0 or _may_be_negative(e):
            ok = arith.andi(arith.cmpi(arith.CmpIPredicate.sge, v, const_index(lo)), ok)
        held = ok if held is None else arith.andi(held, ok)
    return held


def _may_be_negative(e: Expr) -> bool:
    """Work-item ids and symbols are >= 0: a sum of them with factors >= 0 is too."""
    terms = e.terms if isinstance(e, Add) else (e,)
    for t in terms:
        if isinstance(t, Mul):
            if t.factor < 0 or _may_be_negative(t.expr):
                return True
        elif isinstance(t, Const):
            if t.value < 0:
                return True
        elif isinstance(t, FloorDiv):
            if _may_be_negative(t.expr):
                return True
        elif not isinstance(t, (Dim, Sym, Mod)):   # mod by a positive number is >= 0
            return True
    return False


def loop_bounds(loop: StridedLoop, dims, stop_value=None) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(start, stop, step) index values of a strided loop; `stop_value` stands for a
    dynamic stop (an index value computed in the kernel)."""
    start = emit_expr(loop.start, dims, [])
    stop = const_index(loop.stop) if isinstance(loop.stop, int) else stop_value
    return start, stop, const_index(loop.step)


def grid(m, dynamic: HostSize) -> HostSize:
    """The kernel's grid: the range of bl_x, or the host-computed size when dynamic."""
    static = static_grid(m)
    return HostSize(static) if static is not None else dynamic
