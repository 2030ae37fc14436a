"""The reduction emitter: reduce heroes whose results reach every fusion output through
elementwise ops only. The input is viewed as [K1, R, K2] (kept dims before the
reduced block, the contiguous reduced block, kept dims after it):

  row reduction (K2 == 1, and full reductions): one work-group per output element;
      work-item t accumulates elements t, t+L, t+2L, ... of the row, then a tree
      through a __local array of L values (halving with a barrier per level);
  column reduction (K2 > 1): a work-group covers 32 consecutive columns with 8 rows
      of work-items; each accumulates every 8th row of its column, then a tree over
      the 8 rows through a __local 8x33 array.

Several heroes (multi-output fusions) and variadic reduces (argmax: several
accumulators reduced together) are supported; each accumulator has its own __local
array. Work-item 0 of a row (row 0 of a column) computes the epilogue (the fusion
roots from the injected reduced values) and writes the outputs.
"""
from __future__ import annotations

from math import prod

from mlir import ir
from mlir.dialects import arith, gpu, scf, tensor

from ..elemental import Elemental, const_index, reduce_operands
from ..indexing import Dim, IndexingMap, Sym, add, mul
from ..partitioner import output_roots
from . import EmitterChoice, reaches_through_elementwise
from .base import (FusionBuilder, apply_linear, cdiv, cmp_lt, delinearize, host_cdiv,
                   host_mul, host_product, index_product, leaf_shape, linearize, named,
                   to_storage, HostSize)

COLUMNS, COLUMN_ROWS = 32, 8


def _layout(hero):
    """(K1 dims, reduced dims, K2 dims) or None when the reduced dims are not contiguous."""
    dims = sorted(hero.dimensions())
    in_dims = hero.operands[0].shape.dims
    if not dims or dims != list(range(dims[0], dims[-1] + 1)):
        return None
    return in_dims[:dims[0]], in_dims[dims[0]:dims[-1] + 1], in_dims[dims[-1] + 1:]


def find_reduction_heroes(computation):
    roots = output_roots(computation)
    reduces = [i for i in computation.post_order() if i.opcode == "reduce"]
    if not reduces:
        return None
    heroes = []
    for root in roots:
        found = [r for r in reduces if reaches_through_elementwise(root, {r})]
        if len(found) != 1:
            return None
        if found[0] not in heroes:
            heroes.append(found[0])
    layouts = {(_layout(h), h.operands[0].shape.dims) for h in heroes}
    if len(layouts) != 1 or None in {l for l, _ in layouts}:
        return None
    for root in roots:
        hero = next(h for h in heroes if reaches_through_elementwise(root, {h}))
        if leaf_shape(root, 0).dims != leaf_shape(hero, 0).dims:
            return None
    return heroes


def try_reduction(computation):
    heroes = find_reduction_heroes(computation)
    if heroes is None:
        return None
    forced = list(heroes) + [o for h in heroes for o in h.operands]
    k1, r, k2 = _layout(heroes[0])
    if any(not isinstance(d, int) for d in k2):
        return None   # dynamic columns: the loop emitter (one loop per output element)
    kind = "column" if prod(k2) > 1 else "row"
    return EmitterChoice("reduction", heroes, forced,
                         lambda b: emit_reduction(b, heroes), f"{kind} reduction")


def emit_reduction(builder: FusionBuilder, heroes) -> None:
    """K1 and R may be dynamic (host sizes; the kernel reads them from its dimension
    arguments); K2 is static (dynamic columns go to the loop emitter)."""
    k1, red, k2 = _layout(heroes[0])
    K1, R, K2 = host_product(k1), host_product(red), prod(k2)
    if K2 > 1:
        _column(builder, heroes, (k1, red, k2), K1, R, K2)
    else:
        _row(builder, heroes, (k1, red, k2), K1, R)


def _threads_for_row(R) -> int:
    if R.static is None:
        return 128     # any row length: enough work-items for long rows
    threads = 32
    while threads < R.static and threads < 256:
        threads *= 2
    return threads


def _hi(size, minus: int = 1):
    """The upper bound `size - 1` of a domain, symbolic for dynamic sizes."""
    return size.static - minus if size.static is not None else f"{size} - {minus}"


def _accumulate(builder, k, heroes, input_index, start, stop, step):
    """Per work-item partial results: an scf.for over the reduced positions."""
    inits, types = [], []
    em = Elemental(builder, k.tensors, inline_all=True)
    for h in heroes:
        for init in reduce_operands(h)[1]:
            value = builder.root_values(init, [], k.tensors)[0] if builder.partition.of(init) \
                else em.scalar(init, [])
            inits.append(value)
            types.append(value.type)
    loop = scf.ForOp(start, stop, step, inits)
    with ir.InsertionPoint(loop.body):
        accs = list(loop.inner_iter_args)
        idx = input_index(loop.induction_variable)
        new, pos = [], 0
        for h in heroes:
            inputs, _ = reduce_operands(h)
            n = len(inputs)
            vals = [builder.root_values(x, idx, k.tensors)[0] for x in inputs]
            new += em.apply_computation(h.called_computation(), accs[pos:pos + n] + vals)
            pos += n
        scf.yield_(new)
    return list(loop.results), types


def _combine(builder, k, heroes, a, b):
    em = Elemental(builder, k.tensors, inline_all=True)
    out, pos = [], 0
    for h in heroes:
        n = len(reduce_operands(h)[0])
        out += em.apply_computation(h.called_computation(), a[pos:pos + n] + b[pos:pos + n])
        pos += n
    return out


def _tree(builder, k, heroes, partials, types, slot, lane, levels, shape):
    """Stores the partials in __local arrays, then halves them `levels` times;
    `slot(i)` is the array index of lane i (same row/column)."""
    tiles = []
    for n, (p, t) in enumerate(zip(partials, types)):
        with named(f"partial{n}"):
            tile = tensor.empty(shape, t)
        tiles.append(tensor.insert(p, tile, slot(lane)))
    gpu.barrier()
    for stride in levels:
        active = cmp_lt(lane, const_index(stride))
        op = scf.IfOp(active, [t.type for t in tiles], has_else=True)
        with ir.InsertionPoint(op.then_block):
            other = arith.addi(lane, const_index(stride))
            mine = [tensor.extract(t, slot(lane)) for t in tiles]
            theirs = [tensor.extract(t, slot(other)) for t in tiles]
            combined = _combine(builder, k, heroes, mine, theirs)
            scf.yield_([tensor.insert(c, t, slot(lane)) for c, t in zip(combined, tiles)])
        with ir.InsertionPoint(op.else_block):
            scf.yield_(tiles)
        tiles = list(op.results)
        gpu.barrier()
    return tiles


def _write_outputs(builder, k, heroes, reduced, out_index, condition):
    """Epilogue: each fusion output from the injected reduced values."""
    injected, pos = {}, 0
    for h in heroes:
        n = len(reduce_operands(h)[0])
        injected[h] = reduced[pos:pos + n]
        pos += n
    outputs = list(k.outputs)
    op = scf.IfOp(condition, [o.type for o in outputs], has_else=True)
    with ir.InsertionPoint(op.then_block):
        new = list(outputs)
        cache = {}
        for n, (root, leaf) in enumerate(builder.outputs):
            if root not in cache:
                cache[root] = builder.epilogue(root, out_index, k.tensors, injected)
            shape = leaf_shape(root, leaf)
            new[n] = tensor.insert(to_storage(cache[root][leaf], shape.element), new[n],
                                   [linearize(out_index, shape.dims, k.tensors)])
        scf.yield_(new)
    with ir.InsertionPoint(op.else_block):
        scf.yield_(outputs)
    return list(op.results)


def _row(builder, heroes, layout, K1, R):
    k1, red, k2 = layout
    threads = _threads_for_row(R)
    builder.report.launch.append(
        f"{builder.name}: row reduction, grid {K1} x local {threads} work-items "
        f"(one work-group per row of {R} elements, tree through __local)")
    builder.report.maps.append(str(IndexingMap(
        [(0, threads - 1), (0, _hi(K1))], [Dim(1), add(Dim(0), mul(Sym(0), threads))],
        symbol_ranges=[(0, _hi(host_cdiv(R, threads)))],
        constraints=[(add(Dim(0), mul(Sym(0), threads)), 0, _hi(R))],
        dim_names=["th_x", "bl_x"], symbol_names=["i"])) + "  (row, reduced position)")
    with builder.kernel("", threads) as k:
        tid, row = k.thread_id, k.block_id
        kept = delinearize(row, k1, k.tensors)

        def input_index(r):
            return kept + delinearize(r, red, k.tensors)
        partials, types = _accumulate(builder, k, heroes, input_index, tid,
                                      index_product(red, k.tensors), const_index(threads))
        levels = []
        s = threads // 2
        while s >= 1:
            levels.append(s)
            s //= 2
        tiles = _tree(builder, k, heroes, partials, types, lambda i: [i], tid, levels, [threads])
        reduced = [tensor.extract(t, [const_index(0)]) for t in tiles]
        first = arith.cmpi(arith.CmpIPredicate.eq, tid, const_index(0))
        final = _write_outputs(builder, k, heroes, reduced, kept, first)
        k.finish(final, K1, "row reduction")


def _column(builder, heroes, layout, K1, R, K2):
    k1, red, k2 = layout
    tiles_per_row = cdiv(K2, COLUMNS)
    blocks = host_mul(K1, HostSize(tiles_per_row))
    threads = COLUMNS * COLUMN_ROWS
    builder.report.launch.append(
        f"{builder.name}: column reduction, grid {blocks} x local {threads} work-items "
        f"({COLUMNS} columns x {COLUMN_ROWS} rows per work-group, {R} reduced rows)")
    builder.report.maps.append(str(IndexingMap(
        [(0, threads - 1), (0, _hi(blocks))],
        [Dim(1) // tiles_per_row, add(Dim(0) // COLUMNS, mul(Sym(0), COLUMN_ROWS)),
         add(mul(Dim(1) % tiles_per_row, COLUMNS), Dim(0) % COLUMNS)],
        symbol_ranges=[(0, _hi(host_cdiv(R, COLUMN_ROWS)))],
        dim_names=["th_x", "bl_x"], symbol_names=["i"])) + "  (K1, reduced row, column)")
    with builder.kernel("", threads) as k:
        with named("tx"):
            tx = apply_linear_mod(k.thread_id, COLUMNS)
        with named("ty"):
            ty = apply_linear_div(k.thread_id, COLUMNS)
        with named("k1"):
            i1 = apply_linear_div(k.block_id, tiles_per_row)
        col_tile = apply_linear_mod(k.block_id, tiles_per_row)
        col = apply_linear([(col_tile, COLUMNS), (tx, 1)])
        col_ok = cmp_lt(col, const_index(K2))
        safe_col = arith.select(col_ok, col, const_index(0))
        kept1, kept2 = delinearize(i1, k1, k.tensors), delinearize(safe_col, k2)

        def input_index(r):
            return kept1 + delinearize(r, red, k.tensors) + kept2
        partials, types = _accumulate(builder, k, heroes, input_index, ty,
                                      index_product(red, k.tensors), const_index(COLUMN_ROWS))
        levels = [COLUMN_ROWS // 2]
        while levels[-1] > 1:
            levels.append(levels[-1] // 2)
        tiles = _tree(builder, k, heroes, partials, types, lambda i: [i, tx], ty, levels,
                      [COLUMN_ROWS, COLUMNS + 1])
        reduced = [tensor.extract(t, [const_index(0), tx]) for t in tiles]
        first = arith.andi(arith.cmpi(arith.CmpIPredicate.eq, ty, const_index(0)), col_ok)
        final = _write_outputs(builder, k, heroes, reduced, kept1 + kept2, first)
        k.finish(final, blocks, "column reduction")


def apply_linear_mod(value, n):
    from ..elemental import apply_expr
    return apply_expr(Dim(0) % n, [value])


def apply_linear_div(value, n):
    from ..elemental import apply_expr
    return apply_expr(Dim(0) // n, [value])
