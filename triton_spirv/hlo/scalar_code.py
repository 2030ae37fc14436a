"""The scalar building blocks of one element's code, as arith and scf ops: index
expressions and indexing maps evaluated on index values, integer indices, ifs with
results and loop nests, the input positions of a window tap. elemental.py builds an
instruction's element from them, convolution.py (which elemental.py's table calls) and
the emitters build on them too."""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from .indexing import Add, Const, Dim, Expr, FloorDiv, IndexingMap, Mod, Mul, Sym
from .mlir_types import const_index, index_type
from .shapes import ElementType


def apply_expr(e: Expr, dims: list[ir.Value], syms: list[ir.Value] = (),
               nonnegative: bool = False) -> ir.Value:
    """`e` evaluated on index values with arith ops. (Not affine.apply: the upstream
    inliner refuses to inline affine ops into scf regions, and subgraph functions are
    called from inside loops and ifs.) `nonnegative`: every subexpression is >= 0, so
    floordiv and mod are C's `/` and `%` (divsi, remsi) without sign corrections."""
    def emit(x):
        return apply_expr(x, dims, syms, nonnegative)
    if isinstance(e, Dim):
        return dims[e.index]
    if isinstance(e, Sym):
        return syms[e.index]
    if isinstance(e, Const):
        return const_index(e.value)
    if isinstance(e, Add):
        value = emit(e.terms[0])
        for t in e.terms[1:]:
            value = arith.addi(value, emit(t))
        return value
    if isinstance(e, Mul):
        return arith.muli(emit(e.expr), const_index(e.factor))
    if isinstance(e, FloorDiv):
        divide = arith.divsi if nonnegative else arith.floordivsi
        return divide(emit(e.expr), const_index(e.divisor))
    if isinstance(e, Mod):
        x, c = emit(e.expr), const_index(e.divisor)
        r = arith.remsi(x, c)
        if nonnegative:
            return r
        negative = arith.cmpi(arith.CmpIPredicate.slt, r, const_index(0))
        return arith.select(negative, arith.addi(r, c), r)
    raise TypeError(e)


def apply_map(m: IndexingMap, dims: list[ir.Value], syms=()) -> tuple[list[ir.Value], ir.Value | None]:
    """(operand indices, i1 'constraints hold' or None when there are none)."""
    indices = [apply_expr(r, dims, syms) for r in m.results]
    condition = None
    for e, lo, hi in m.constraints:
        v = apply_expr(e, dims, syms)
        if lo == hi:
            ok = arith.cmpi(arith.CmpIPredicate.eq, v, const_index(lo))
        else:
            ok = arith.andi(arith.cmpi(arith.CmpIPredicate.sge, v, const_index(lo)),
                            arith.cmpi(arith.CmpIPredicate.sle, v, const_index(hi)))
        condition = ok if condition is None else arith.andi(condition, ok)
    return indices, condition


def to_index(value: ir.Value, et: ElementType) -> ir.Value:
    if et.is_unsigned:
        return arith.index_castui(index_type(), value)
    return arith.index_cast(index_type(), value)


def clamp_index(value: ir.Value, lo: int, hi: int) -> ir.Value:
    return arith.minsi(arith.maxsi(value, const_index(lo)), const_index(max(lo, hi)))


def if_else(condition: ir.Value, result_types: list[ir.Type], then_fn, else_fn) -> list[ir.Value]:
    """scf.if with results; the branches return lists of values."""
    op = scf.IfOp(condition, result_types, has_else=True)
    with ir.InsertionPoint(op.then_block):
        scf.yield_(list(then_fn()))
    with ir.InsertionPoint(op.else_block):
        scf.yield_(list(else_fn()))
    return list(op.results)


def loop_nest(extents: list, inits: list[ir.Value], body) -> list[ir.Value]:
    """Nested scf.for over `extents` (ints or index values) carrying `inits`;
    body(ivs, carried) -> new."""
    if not extents:
        return list(body([], inits))

    def level(k, ivs, carried):
        upper = const_index(extents[k]) if isinstance(extents[k], int) else extents[k]
        loop = scf.ForOp(const_index(0), upper, const_index(1), carried)
        with ir.InsertionPoint(loop.body):
            new_ivs = ivs + [loop.induction_variable]
            inner = list(loop.inner_iter_args)
            if k + 1 == len(extents):
                out = body(new_ivs, inner)
            else:
                out = level(k + 1, new_ivs, inner)
            scf.yield_(list(out))
        return list(loop.results)
    return level(0, [], list(inits))


def window_input_positions(out_positions, taps, window: dict, sizes):
    """Where window tap `taps` of output position `out_positions` reads the input
    (reduce-window, convolution; `window` as `HloInstruction.window()` gives it):
    p = s * stride + w * rhs_dilate - pad_low in the lhs-dilated input, an input
    element when 0 <= p <= (size - 1) * lhs_dilate and p % lhs_dilate == 0, at
    p / lhs_dilate; elsewhere padding. Returns (input index per dimension, i1
    'inside the input', or None where every tap is inside)."""
    positions, inside = [], None
    for d, (s, w) in enumerate(zip(out_positions, taps)):
        low, high = window["pad"][d]
        dilate = window["lhs_dilate"][d]
        p = apply_expr(Dim(0) * window["stride"][d] + Dim(1) * window["rhs_dilate"][d] - low,
                       [s, w])
        conditions = []
        if low > 0:
            conditions.append(arith.cmpi(arith.CmpIPredicate.sge, p, const_index(0)))
        if high > 0 or dilate > 1:
            conditions.append(arith.cmpi(arith.CmpIPredicate.slt, p,
                                         const_index((sizes[d] - 1) * dilate + 1)))
        if dilate > 1:
            conditions.append(arith.cmpi(arith.CmpIPredicate.eq,
                                         apply_expr(Dim(0) % dilate, [p]), const_index(0)))
            p = apply_expr(Dim(0) // dilate, [p])
        for c in conditions:
            inside = c if inside is None else arith.andi(inside, c)
        positions.append(p)
    return positions, inside
