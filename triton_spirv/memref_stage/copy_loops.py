"""Copies lowered to loops of loads and stores, by every rewrite that lowers one.

`copy_loop`: one `scf.parallel`, the form in which the GPU shape hands a copy's
elements to the work-items. Three rewrites make it -- the converting copies from
global memory into a tile (shared_copies.py), the copies a tile's owners run
(owner_copies.py) and the copies between two work-group tiles in a loop's body
(work_group_sharing.py) -- and work_group_sharing.py distributes it like any other
parallel loop.

    copy_loop(src, dst, [32, 128], width=16, extents=[%rows, %cols], vectors=True)
 -> scf.parallel (%i, %j) = (0, 0) to (32, 128) step (1, 16) {
      scf.if (%i < %rows && %j + 16 <= %cols) { dst[%i, %j:+16] = src[%i, %j:+16] }
      else { scf.for %k = 0 to 16 { scf.if (%i < %rows && %j + %k < %cols)
                                      { dst[%i, %j + %k] = src[%i, %j + %k] } } } }

Without `extents` (or with extents equal to the loop's space) there is no bounds check;
with `width` 1 an iteration copies its one element.

`copy_nest` (one work-item's copy: `scf.for` nests, rows in vectors) and `spread_copy`
(a copy the work-items of a group share between barriers, after the loops are
distributed: the SPIR-V stage's form of the work-group async copies, whose barrier
before it the barrier analysis decides) are the forms copy_lowering.py gives the
SPIR-V stage's copies.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, gpu, memref, scf, vector

from ..ir_helpers import constant_index


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


# ----------------------------------------------------- copies of one work-item, spread

def copy_nest(source: ir.Value, target: ir.Value, sizes: list, width: int | None = None,
              unrolled_vectors: int = 0):
    """At the insertion point: `for i0, i1, ...: target[i] = source[i]` over `sizes`
    (ints or index Values), innermost dimension last; with `width`, each row moves in
    vectors of `width` elements (`vector.load`/`vector.store`) up to its last multiple
    of `width`, and the rest of the row element by element. A row of at most
    `unrolled_vectors` vectors, a number known here, moves in straight-line vector
    copies, with no loop."""
    constant = _Constants()
    sizes = [_index(constant, s) for s in sizes]
    # Where the vectors of a row end: computed once, in front of the nest.
    end = _vector_end(sizes[-1], width, constant) if width is not None else None
    row = _Row(width, end, unrolled_vectors, constant)
    _nest(source, target, sizes, row, constant, [])


def _vector_end(count: ir.Value, width: int, constant) -> ir.Value:
    """The last multiple of `width` up to `count`."""
    static = constant_index(count)
    if static is not None:
        return constant(static // width * width)
    return arith.muli(arith.divsi(count, constant(width)), constant(width))


class _Row:
    """How a row moves: vectors of `width` (None: element by element) up to `end`; with
    `offsets`, the columns of its vectors copied with no loop (made in front of the
    nest, where there are at most `unrolled` and `end` is a known number)."""

    def __init__(self, width, end, unrolled: int, constant):
        self.width, self.end, self.offsets = width, end, None
        static_end = constant_index(end) if unrolled and width is not None else None
        if static_end is not None and static_end // width <= unrolled:
            self.offsets = [constant(column) for column in range(0, static_end, width)]


def _nest(source, target, sizes: list, row: _Row, constant, ivs: list) -> None:
    if len(ivs) == len(sizes) - 1 and row.width is not None:
        _row(source, target, sizes[-1], row, constant, ivs)
        return
    if len(ivs) == len(sizes):
        memref.store(memref.load(source, ivs), target, ivs)
        return
    loop = scf.ForOp(constant(0), sizes[len(ivs)], constant(1))
    with ir.InsertionPoint(loop.body):
        _nest(source, target, sizes, row, constant, ivs + [loop.induction_variable])
        scf.YieldOp([])


def _row(source, target, count: ir.Value, row: _Row, constant, ivs: list) -> None:
    """One row of `count` elements: vectors of `row.width` up to `row.end` (a loop, or
    straight-line copies), then the rest one by one."""
    static, width, end = constant_index(count), row.width, row.end
    if row.offsets is not None:
        for column in row.offsets:
            _Copies(source, target, ivs + [column], width, constant).vector()
    else:
        vectors = scf.ForOp(constant(0), end, constant(width))
        with ir.InsertionPoint(vectors.body):
            _Copies(source, target, ivs + [vectors.induction_variable], width, constant).vector()
            scf.YieldOp([])
    if static is not None and static % width == 0:
        return
    rest = scf.ForOp(end, count, constant(1))
    with ir.InsertionPoint(rest.body):
        at = ivs + [rest.induction_variable]
        memref.store(memref.load(source, at), target, at)
        scf.YieldOp([])


def spread_copy(source: ir.Value, target: ir.Value, sizes: list,
                barrier_before: bool = True) -> None:
    """At the insertion point: the copy shared by the work-items of the group, between
    barriers (which order it after the writes of `source` and before the reads of
    `target`): work-item w moves elements w, w + group size, ..., whose row-major number
    splits into indices. Without `barrier_before`, the barrier analysis has ordered it
    after those writes already (work_group_barriers.py, `opencl.copy_barriers_placed`):
    only the barrier after it, which completes it for every work-item as an async
    copy's wait would."""
    constant = _Constants()
    sizes = [_index(constant, s) for s in sizes]
    if barrier_before:
        gpu.barrier()
    dims = [gpu.Dimension.x, gpu.Dimension.y, gpu.Dimension.z]
    ids = [gpu.thread_id(d) for d in dims]
    group = [gpu.block_dim(d) for d in dims]
    lid = arith.addi(ids[0], arith.muli(group[0], arith.addi(ids[1], arith.muli(group[1], ids[2]))))
    count = arith.muli(group[0], arith.muli(group[1], group[2]))
    loop = scf.ForOp(lid, _product(sizes, constant), count)
    with ir.InsertionPoint(loop.body):
        element, indices = loop.induction_variable, []
        for size in reversed(sizes[1:]):
            # Signed: the numbers are never negative, and OpenCL C prints them plainly.
            indices.insert(0, arith.remsi(element, size))
            element = arith.divsi(element, size)
        indices.insert(0, element)
        memref.store(memref.load(source, indices), target, indices)
        scf.YieldOp([])
    gpu.barrier()


def _index(constant, size) -> ir.Value:
    return constant(size) if isinstance(size, int) else size


def _product(sizes: list, constant) -> ir.Value:
    """The product of index Values, constants folded."""
    static, total = 1, None
    for size in sizes:
        value = constant_index(size)
        if value is not None:
            static *= value
        else:
            total = size if total is None else arith.muli(total, size)
    if total is None:
        return constant(static)
    return total if static == 1 else arith.muli(total, constant(static))
