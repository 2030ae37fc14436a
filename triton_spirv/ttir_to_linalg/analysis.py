"""Structure of integer and mask tensors: which offsets are blocks, which masks are boxes.

The rules follow the ops Triton kernels use to build offsets and masks
(`pid * BLOCK + tl.arange(0, BLOCK)`, `offs[:, None] * stride + offs[None, :]`,
`offs < n`, `(rows < M)[:, None] & (cols < N)[None, :]`). Anything else has no
structure (None), and the loads and stores that use it take the gather/scatter path,
which is always correct.
"""
from __future__ import annotations

from typing import Optional

from mlir import ir
from mlir.dialects import arith

from ..ir_helpers import named
from . import builders as b
from . import linalg_ops as linalg
from .values import AffineIndex, Box, Scalar, Value

# ---------------------------------------------------------------------------------------
# Affine integer tensors


def uniform(base: Scalar, rank: int) -> AffineIndex:
    return AffineIndex(base, [0] * rank)


def is_uniform(a: AffineIndex) -> bool:
    return all(b.constant_int_of(s) == 0 for s in a.strides)


def affine_add(x: AffineIndex, y: AffineIndex) -> AffineIndex:
    return AffineIndex(b.add(x.base, y.base), [b.add(s, t) for s, t in zip(x.strides, y.strides)])


def affine_sub(x: AffineIndex, y: AffineIndex) -> AffineIndex:
    return AffineIndex(b.sub(x.base, y.base), [b.sub(s, t) for s, t in zip(x.strides, y.strides)])


def affine_scale(x: AffineIndex, factor: Scalar) -> AffineIndex:
    return AffineIndex(b.mul(x.base, factor), [b.mul(s, factor) for s in x.strides])


def affine_mul(x: AffineIndex, y: AffineIndex) -> Optional[AffineIndex]:
    if is_uniform(y):
        return affine_scale(x, y.base)
    if is_uniform(x):
        return affine_scale(y, x.base)
    return None  # a product of two varying tensors is not affine


def affine_broadcast(x: AffineIndex, in_shape, out_shape) -> AffineIndex:
    # A broadcast dimension repeats the single element: its stride becomes 0.
    return AffineIndex(x.base, [0 if i == 1 and o != 1 else s
                                for s, i, o in zip(x.strides, in_shape, out_shape)])


def affine_expand(x: AffineIndex, axis: int) -> AffineIndex:
    strides = list(x.strides)
    strides.insert(axis, 0)
    return AffineIndex(x.base, strides)


def affine_permute(x: AffineIndex, order) -> AffineIndex:
    return AffineIndex(x.base, [x.strides[d] for d in order])


def same_strides(x: AffineIndex, y: AffineIndex) -> bool:
    def same(s, t):
        cs, ct = b.constant_int_of(s), b.constant_int_of(t)
        if cs is not None or ct is not None:
            return cs == ct
        return s == t
    return all(same(s, t) for s, t in zip(x.strides, y.strides))


def materialize(a: AffineIndex, shape) -> ir.Value:
    """The i64 tensor `base + sum_d(index_d * strides[d])` of `shape`."""
    rank = len(shape)
    result = ir.RankedTensorType.get(list(shape), b.i64())

    def body(_out):
        total = b.as_index(a.base)
        for d, stride in enumerate(a.strides):
            if b.constant_int_of(stride) != 0:
                total = arith.addi(total, arith.muli(linalg.IndexOp(d).result, b.as_index(stride)))
        return [arith.index_cast(b.i64(), total)]

    return b.generic([], [], [result], body)[0] if rank else b.splat(
        arith.index_cast(b.i64(), b.as_index(a.base)), shape)


def affine_binary(name: str, x: AffineIndex, y: AffineIndex) -> Optional[AffineIndex]:
    if name == "arith.addi":
        return affine_add(x, y)
    if name == "arith.subi":
        return affine_sub(x, y)
    if name == "arith.muli":
        return affine_mul(x, y)
    return None


# ---------------------------------------------------------------------------------------
# Box masks

# cmpi predicate numbers (arith::CmpIPredicate).
EQ, NE, SLT, SLE, SGT, SGE, ULT, ULE, UGT, UGE = range(10)
_SWAPPED = {SLT: SGT, SLE: SGE, SGT: SLT, SGE: SLE, ULT: UGT, ULE: UGE, UGT: ULT, UGE: ULE}


def full_box(rank: int) -> Box:
    return Box([None] * rank, [None] * rank)


def box_from_compare(predicate: int, lhs: AffineIndex, rhs: AffineIndex) -> Optional[Box]:
    """The box of `lhs <pred> rhs` when one side varies along a single dim with stride 1.

    Signed predicates only: an unsigned one reads a negative side as a large value
    (`(rn - 5).to(tl.uint32) < 3` is false at rn = 0), which no interval of a signed
    index holds.
    """
    if predicate in (ULT, ULE, UGT, UGE):
        return None
    if is_uniform(lhs) and not is_uniform(rhs):
        if predicate not in _SWAPPED:
            return None
        return box_from_compare(_SWAPPED[predicate], rhs, lhs)
    if not is_uniform(rhs):
        return None
    varying = [d for d, s in enumerate(lhs.strides) if b.constant_int_of(s) != 0]
    rank = len(lhs.strides)
    box = full_box(rank)
    if not varying:
        return None  # a uniform condition; handled by the caller as a scalar mask
    if len(varying) != 1 or b.constant_int_of(lhs.strides[varying[0]]) != 1:
        return None
    d = varying[0]
    # lhs(i) = lhs.base + i, so `lhs < rhs` <=> `i < rhs.base - lhs.base`.
    bound = b.sub(rhs.base, lhs.base)
    pred = {ULT: SLT, ULE: SLE, UGT: SGT, UGE: SGE}.get(predicate, predicate)
    if pred == SLT:
        box.hi[d] = bound
    elif pred == SLE:
        box.hi[d] = b.add(bound, 1)
    elif pred == SGE:
        box.lo[d] = bound
    elif pred == SGT:
        box.lo[d] = b.add(bound, 1)
    elif pred == EQ:
        box.lo[d], box.hi[d] = bound, b.add(bound, 1)
    else:
        return None
    return box


def box_from_condition(cond: ir.Value, shape) -> Box:
    """A mask that splats the scalar i1 `cond`: all of the tile, or nothing."""
    box = full_box(len(shape))
    if shape:
        box.hi[0] = arith.select(cond, b.const_index(shape[0]), b.const_index(0))
    return box


def _tighter(x, y, pick):
    if x is None:
        return y
    if y is None:
        return x
    return pick(x, y)


def box_and(x: Box, y: Box) -> Box:
    return Box([_tighter(p, q, b.smax) for p, q in zip(x.lo, y.lo)],
               [_tighter(p, q, b.smin) for p, q in zip(x.hi, y.hi)])


def box_expand(x: Box, axis: int) -> Box:
    lo, hi = list(x.lo), list(x.hi)
    lo.insert(axis, None)
    hi.insert(axis, None)
    return Box(lo, hi)


def box_permute(x: Box, order) -> Box:
    return Box([x.lo[d] for d in order], [x.hi[d] for d in order])


def box_broadcast(x: Box, in_shape, out_shape) -> Box:
    lo, hi = list(x.lo), list(x.hi)
    for d, (i, o) in enumerate(zip(in_shape, out_shape)):
        if i == 1 and o != 1 and (lo[d] is not None or hi[d] is not None):
            # Along a broadcast dim the mask is its value at index 0 everywhere: all or
            # nothing. `lo <= 0` is clamp(1 - lo, 0, 1); `0 < hi` is clamp(hi, 0, 1).
            lo_ok = b.clamp(b.sub(1, lo[d]), 0, 1) if lo[d] is not None else 1
            hi_ok = b.clamp(hi[d], 0, 1) if hi[d] is not None else 1
            lo[d] = None
            hi[d] = b.mul(b.mul(lo_ok, hi_ok), o)
    return Box(lo, hi)


def box_extents(box: Box, shape):
    """Per dimension, the first valid index and the number of valid indices, clamped to
    the tile (so a mask that selects nothing gives extent 0)."""
    with named("extent", ir.Location.current):
        return _box_extents(box, shape)


def _box_extents(box: Box, shape):
    starts, sizes = [], []
    for lo, hi, n in zip(box.lo, box.hi, shape):
        start = b.clamp(lo, 0, n) if lo is not None else 0
        stop = b.clamp(hi, start, n) if hi is not None else n
        starts.append(start)
        sizes.append(b.sub(stop, start))
    return starts, sizes


def affine_of(v: Value, rank: int) -> Optional[AffineIndex]:
    if v.affine is not None:
        return v.affine
    if v.splat_of is not None and b.is_integer(v.splat_of.type):
        return uniform(b.to_index(v.splat_of), rank)
    return None


# ---------------------------------------------------------------------------------------
# Run-time guards: offsets that are a block only for most programs
#
# `(pid * B + arange(B)) % M` (tutorial 03) and `tl.where(offs < M, offs, 0)` (tutorial 09)
# are `offs` itself for every program whose block lies inside [0, M); only the last one
# wraps or clamps. The converter versions the kernel on these conditions (versioning.py):
# the block path where they hold, the gather path where they do not.


def affine_bounds(a: AffineIndex, shape):
    """The smallest and largest element of `a` over a tile of `shape` (index Scalars)."""
    low, high = a.base, a.base
    for stride, n in zip(a.strides, shape):
        span = b.mul(stride, n - 1)
        low, high = b.add(low, b.smin(0, span)), b.add(high, b.smax(0, span))
    return low, high


def _index_compare(predicate, x, y) -> ir.Value:
    return arith.cmpi(predicate, b.as_index(x), b.as_index(y))


def _all_of(conditions) -> ir.Value:
    result = conditions[0]
    for c in conditions[1:]:
        result = arith.andi(result, c)
    return result


def in_range_guard(a: AffineIndex, shape, modulus) -> ir.Value:
    """i1: every element of `a` lies in [0, modulus), so `a % modulus` is `a` (signed and
    unsigned remainders alike: the elements are non-negative)."""
    low, high = affine_bounds(a, shape)
    return _all_of([_index_compare(arith.CmpIPredicate.sge, low, 0),
                    _index_compare(arith.CmpIPredicate.slt, high, modulus)])


def full_box_guard(box: Box, shape) -> ir.Value:
    """i1: the mask `box` is true on the whole tile of `shape`."""
    conditions = [_index_compare(arith.CmpIPredicate.sle, lo, 0) for lo in box.lo if lo is not None]
    conditions += [_index_compare(arith.CmpIPredicate.sge, hi, n)
                   for hi, n in zip(box.hi, shape) if hi is not None]
    return _all_of(conditions) if conditions else arith.constant(ir.IntegerType.get_signless(1), 1)
