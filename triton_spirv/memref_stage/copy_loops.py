"""Copies lowered to one `scf.parallel` of loads and stores: the form in which the GPU
shape hands a copy's elements to the work-items. Three rewrites make it -- the
converting copies from global memory into a tile (shared_copies.py), the copies a
tile's owners run (owner_copies.py) and the copies between two work-group tiles in a
loop's body (work_group_sharing.py) -- and work_group_sharing.py distributes it like any
other parallel loop.

    copy_loop(src, dst, [32, 128], width=16, extents=[%rows, %cols], vectors=True)
 -> scf.parallel (%i, %j) = (0, 0) to (32, 128) step (1, 16) {
      scf.if (%i < %rows && %j + 16 <= %cols) { dst[%i, %j:+16] = src[%i, %j:+16] }
      else { scf.for %k = 0 to 16 { scf.if (%i < %rows && %j + %k < %cols)
                                      { dst[%i, %j + %k] = src[%i, %j + %k] } } } }

Without `extents` (or with extents equal to the loop's space) there is no bounds check;
with `width` 1 an iteration copies its one element.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, memref, scf, vector


def copy_loop(source: ir.Value, target: ir.Value, shape: list, width: int = 1,
              extents: list | None = None, vectors: bool = False):
    """At the insertion point: the scf.parallel from 0 to `shape` (ints or index
    Values), stepping by `width` along the last dimension, whose iteration at `ivs`
    copies the `width` elements from `ivs` on from `source` to `target` (views of the
    same shape): one vector load and store when `vectors`, else element by element;
    with `extents`, only the elements inside them."""
    constant = _Constants()
    for v in (0, 1, width):
        constant(v)
    uppers = [constant(s) if isinstance(s, int) else s for s in shape]
    if extents is not None:
        extents = [constant(e) if isinstance(e, int) else e for e in extents]
        if all(e == u for e, u in zip(extents, uppers)):      # no bounds to check
            extents = None
    steps = [constant(1)] * (len(shape) - 1) + [constant(width)]
    index = ir.IndexType.get()
    loop = scf.ParallelOp([], [constant(0)] * len(shape), uppers, steps, [])
    body = loop.region.blocks.append(*[index] * len(shape))
    with ir.InsertionPoint(body):
        copies = _Copies(source, target, list(body.arguments), width, constant)
        if extents is None and vectors:
            copies.vector()
        elif extents is None:
            copies.elements()
        elif vectors:
            bounds = _Bounds(extents, copies.ivs)
            last = arith.addi(copies.ivs[-1], constant(width))
            branch = scf.IfOp(bounds.inside(last, inclusive=True), has_else=True)
            with ir.InsertionPoint(branch.then_block):
                copies.vector()
                scf.YieldOp([])
            with ir.InsertionPoint(branch.else_block):
                copies.elements(bounds)
                scf.YieldOp([])
        else:
            copies.elements(_Bounds(extents, copies.ivs))
        scf.ReduceOp([], 0)
    return loop


class _Constants:
    """One index constant per value, made where the first is asked for (in front of the
    loop)."""

    def __init__(self):
        self.made: dict = {}

    def __call__(self, value: int) -> ir.Value:
        if value not in self.made:
            self.made[value] = arith.constant(ir.IndexType.get(), value)
        return self.made[value]


class _Bounds:
    """Whether a column of the row at `ivs` lies inside the copied `extents`."""

    def __init__(self, extents: list, ivs: list):
        self.columns = extents[-1]
        self.rows = None
        for iv, extent in zip(ivs[:-1], extents[:-1]):
            inside = arith.cmpi(arith.CmpIPredicate.slt, iv, extent)
            self.rows = inside if self.rows is None else arith.andi(self.rows, inside)

    def inside(self, column: ir.Value, inclusive: bool = False) -> ir.Value:
        predicate = arith.CmpIPredicate.sle if inclusive else arith.CmpIPredicate.slt
        fits = arith.cmpi(predicate, column, self.columns)
        return fits if self.rows is None else arith.andi(self.rows, fits)


class _Copies:
    """The copies of one iteration's `width` elements from `ivs` on."""

    def __init__(self, source: ir.Value, target: ir.Value, ivs: list, width: int, constant):
        self.source, self.target, self.ivs, self.width = source, target, ivs, width
        self.constant = constant

    def vector(self) -> None:
        vector_type = ir.VectorType.get([self.width], ir.MemRefType(self.target.type).element_type)
        vector.store(vector.load(vector_type, self.source, self.ivs), self.target, self.ivs)

    def elements(self, bounds: _Bounds | None = None) -> None:
        """One by one (those inside `bounds`)."""
        point, offset = ir.InsertionPoint.current, None
        if self.width > 1:
            inner = scf.ForOp(*(self.constant(v) for v in (0, self.width, 1)))
            point, offset = ir.InsertionPoint(inner.body), inner.induction_variable
        with point:
            column = self.ivs[-1] if offset is None else arith.addi(self.ivs[-1], offset)
            at = [*self.ivs[:-1], column]
            if bounds is None:
                memref.store(memref.load(self.source, at), self.target, at)
            else:
                guard = scf.IfOp(bounds.inside(column))
                with ir.InsertionPoint(guard.then_block):
                    memref.store(memref.load(self.source, at), self.target, at)
                    scf.YieldOp([])
            if offset is not None:
                scf.YieldOp([])
