"""The reduction emitter: reduce heroes whose results reach every fusion output through
elementwise ops only. The input is viewed as [K1, R, K2] (kept dims before the
reduced block, the contiguous reduced block, kept dims after it):

  row reduction (K2 == 1, and full reductions), in one of two shapes chosen by the
  device (`builder.target.row_reduction`, see target.py):
    tree (GPUs): one work-group per output element; work-item t accumulates
      elements t, t+L, t+2L, ... of the row, then a tree through a __local array of
      L values (folding 8 per level, a barrier after each, until at most 8 are left;
      every work-item folds those itself);
    per_work_item (CPU devices): one work-item per row, several rows per
      work-group and no barriers; the work-item walks its row `lanes` elements at a
      time, lane j accumulating into accumulators of its own, then combines the
      lanes. The lane loop is marked `hlo.lane_accumulators`, and the
      pack-lane-accumulators pass (lanes.py) turns it into vector code (vloadN and
      one vector accumulator per reduced value) when every lane computes alike;
  column reduction (K2 > 1): a work-group covers 32 consecutive columns with 8 rows
      of work-items; each accumulates every 8th row of its column, then a tree over
      the 8 rows through a __local 8x33 array (one barrier; every work-item folds
      its column's 8 partials).

Each shape is one indexing map `(th_x, bl_x)[symbols] -> (row, reduced position)`
(columns: `(K1 index, reduced row, column)`), printed in the fusion report; the kernel
is built from it: work-group size and grid from the ranges of th_x and bl_x, the walk
along the reduced positions from how the map's result moves with its symbols, the
guards from its constraints (emitters/map_loops.py).

Several heroes (multi-output fusions) and variadic reduces (argmax: several
accumulators reduced together) are supported; each accumulator has its own __local
array in the tree shapes, its own lanes in the per-work-item shape. The work-item
that holds a row's (column's) result computes the epilogue (the fusion roots from the
injected reduced values) and writes the outputs.
"""
from __future__ import annotations

from math import prod

from mlir import ir
from mlir.dialects import arith, scf, tensor

from ...memref_stage.work_group_sharing import local_barrier
from ..elemental import Elemental, compute_type, const_index, reduce_operands
from ..indexing import (Dim, IndexingMap, Sym, add, coefficient, constraints_on, mul,
                        strided_loop, symbol_extent, work_group_size)
from ..lanes import LANE_ATTR, bit_width
from ..partitioner import output_roots
from .heroes import EmitterChoice, reaches_through_elementwise
from .base import (FusionBuilder, cdiv, cmp_lt, delinearize, host_cdiv, host_mul,
                   host_product, index_product, leaf_shape, linearize, named, to_storage,
                   HostSize)
from .map_loops import constraints_hold, emit_expr, grid, loop_bounds

COLUMNS, COLUMN_ROWS = 32, 8
# Per-work-item rows: at most this many rows (work-items) per work-group, and as many
# work-groups as this at least where the rows allow it, so that every core gets rows.
MAX_ROWS_PER_GROUP, MIN_GROUPS = 16, 64
# Lanes of a per-work-item row: 512 bits of accumulators (float16, double8), the
# widest vectors OpenCL C has; the CPU compiler splits them into its registers.
LANE_BITS = 512


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


def _threads_for_row(R, target) -> int:
    """A power of two from 32 up to the row length, at most 256 and the target's
    work-group limit."""
    if R.static is None:
        return target.threads     # any row length: enough work-items for long rows
    most = min(256, target.description.max_work_group_size)
    threads = 32
    while threads < R.static and threads * 2 <= most:
        threads *= 2
    return threads


def _hi(size, minus: int = 1):
    """The upper bound `size - 1` of a domain, symbolic for dynamic sizes."""
    return size.static - minus if size.static is not None else f"{size} - {minus}"


def _initial_values(builder, k, heroes) -> list[ir.Value]:
    """The init operand of every accumulator of every hero, in order."""
    inits = []
    em = Elemental(builder, k.tensors, inline_all=True)
    for h in heroes:
        for init in reduce_operands(h)[1]:
            value = builder.root_values(init, [], k.tensors)[0] if builder.partition.of(init) \
                else em.scalar(init, [])
            inits.append(value)
    return inits


def _reduce_step(builder, k, heroes, accs, index) -> list[ir.Value]:
    """Every hero's computation applied to its accumulators and its inputs at `index`."""
    em = Elemental(builder, k.tensors, inline_all=True)
    new, pos = [], 0
    for h in heroes:
        inputs, _ = reduce_operands(h)
        n = len(inputs)
        vals = [builder.root_values(x, index, k.tensors)[0] for x in inputs]
        new += em.apply_computation(h.called_computation(), accs[pos:pos + n] + vals)
        pos += n
    return new


def _accumulate(builder, k, heroes, input_index, start, stop, step, inits=None):
    """Per work-item partial results: an scf.for over the reduced positions."""
    inits = inits if inits is not None else _initial_values(builder, k, heroes)
    loop = scf.ForOp(start, stop, step, inits)
    _name_loop_values(loop, "pos", "acc")
    with ir.InsertionPoint(loop.body):
        new = _reduce_step(builder, k, heroes, list(loop.inner_iter_args),
                           input_index(loop.induction_variable))
        scf.yield_(new)
    return list(loop.results), [v.type for v in inits]


def _combine(builder, k, heroes, a, b):
    em = Elemental(builder, k.tensors, inline_all=True)
    out, pos = [], 0
    for h in heroes:
        n = len(reduce_operands(h)[0])
        out += em.apply_computation(h.called_computation(), a[pos:pos + n] + b[pos:pos + n])
        pos += n
    return out


# Partials a work-item folds per tree level, and how many every work-item folds itself
# at the end (broadcast reads): 256 partials take two levels (256 -> 32 -> 8) and a
# fold of 8, three barriers where halving took nine. (Only the work-item that writes a
# result uses the last fold, so compilers sink it into that work-item's branch: a
# longer last fold would save a barrier at the cost of that work-item's time.)
TREE_FANOUT = 8
FINAL_FOLD = 8


def tree_levels(count: int) -> tuple[list, int]:
    """([(stride, fanout)] of the levels that fold `count` (a power of two) partials
    until at most FINAL_FOLD are left: at each, lane i < stride folds lanes
    i + j * stride, j < fanout; the partials left)."""
    assert count & (count - 1) == 0, f"a tree over {count} partials"
    levels = []
    while count > FINAL_FOLD:
        fanout = min(TREE_FANOUT, count // FINAL_FOLD)
        count //= fanout
        levels.append((count, fanout))
    return levels, count


def _tree(builder, k, heroes, partials, types, slot, lane, count, shape):
    """Stores the partials in __local arrays and folds the `count` of them
    (tree_levels), a barrier after each level that writes them, fencing `__local`
    memory alone (nothing else is shared across it); every work-item folds the
    partials left itself, in registers: -> the reduced values. `slot(i)` is the array
    index of lane i (same row/column)."""
    tiles = []
    for n, (p, t) in enumerate(zip(partials, types)):
        with named(f"partial{n}"):
            tile = tensor.empty(shape, t)
        tiles.append(tensor.insert(p, tile, slot(lane)))
    local_barrier()
    levels, left = tree_levels(count)
    for stride, fanout in levels:
        active = cmp_lt(lane, const_index(stride))
        op = scf.IfOp(active, [t.type for t in tiles], has_else=True)
        with ir.InsertionPoint(op.then_block):
            combined = _fold_slots(builder, k, heroes, tiles, slot, lane, stride, fanout)
            scf.yield_([tensor.insert(c, t, slot(lane)) for c, t in zip(combined, tiles)])
        with ir.InsertionPoint(op.else_block):
            scf.yield_(tiles)
        tiles = list(op.results)
        local_barrier()
    return _fold_slots(builder, k, heroes, tiles, slot, const_index(0), 1, left)


def _fold_slots(builder, k, heroes, tiles, slot, first, stride, fanout) -> list:
    """The partials of slots first, first + stride, ... (`fanout` of them), folded in
    that order."""
    combined = [tensor.extract(t, slot(first)) for t in tiles]
    for j in range(1, fanout):
        other = arith.addi(first, const_index(j * stride))
        theirs = [tensor.extract(t, slot(other)) for t in tiles]
        combined = _combine(builder, k, heroes, combined, theirs)
    return combined



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
    if builder.target.row_reduction == "per_work_item":
        _row_per_work_item(builder, heroes, layout, K1, R)
    else:
        _row_tree(builder, heroes, layout, K1, R)


def _row_tree_map(threads: int, K1, R) -> IndexingMap:
    """(th_x, bl_x)[i] -> (row, reduced position): work-group bl_x reduces row bl_x,
    work-item th_x every `threads`-th position from th_x on."""
    position = add(Dim(0), mul(Sym(0), threads))
    return IndexingMap(
        [(0, threads - 1), (0, _hi(K1))], [Dim(1), position],
        symbol_ranges=[(0, _hi(host_cdiv(R, threads)))], constraints=[(position, 0, _hi(R))],
        dim_names=["th_x", "bl_x"], symbol_names=["i"])


def _row_tree(builder, heroes, layout, K1, R):
    k1, red, k2 = layout
    threads = _threads_for_row(R, builder.target)
    index_map = _row_tree_map(threads, K1, R)
    builder.report.launch.append(
        f"{builder.name}: row reduction, grid {K1} x local {threads} work-items "
        f"(one work-group per row of {R} elements, tree through __local)")
    builder.report.maps.append(f"{index_map}  (row, reduced position)")
    with builder.kernel("", work_group_size(index_map)) as k:
        ids = [k.thread_id, k.block_id]
        tid = k.thread_id
        kept = delinearize(emit_expr(index_map.results[0], ids), k1, k.tensors)

        def input_index(r):
            return kept + delinearize(r, red, k.tensors)
        start, stop, step = loop_bounds(strided_loop(index_map, 1, 0), ids,
                                        index_product(red, k.tensors))
        partials, types = _accumulate(builder, k, heroes, input_index, start, stop, step)
        reduced = _tree(builder, k, heroes, partials, types, lambda i: [i], tid, threads, [threads])
        first = arith.cmpi(arith.CmpIPredicate.eq, tid, const_index(0))
        final = _write_outputs(builder, k, heroes, reduced, kept, first)
        k.finish(final, grid(index_map, K1), "row reduction")


def _row_per_work_item_map(rows: int, groups, lanes: int, K1, R) -> IndexingMap:
    """(th_x, bl_x)[i, lane] -> (row, reduced position): work-item th_x of work-group
    bl_x reduces row bl_x * rows + th_x, `lanes` positions per step i."""
    row = add(mul(Dim(1), rows), Dim(0)) if rows > 1 else Dim(1)
    position = add(mul(Sym(0), lanes), Sym(1))
    rows_exact = K1.static is None or rows * groups.static == K1.static
    return IndexingMap(
        [(0, rows - 1), (0, _hi(groups))], [row, position],
        symbol_ranges=[(0, _hi(host_cdiv(R, lanes))), (0, lanes - 1)],
        constraints=([] if rows_exact else [(row, 0, _hi(K1))]) + [(position, 0, _hi(R))],
        dim_names=["th_x", "bl_x"], symbol_names=["i", "lane"])


def _row_per_work_item(builder, heroes, layout, K1, R):
    k1, red, _ = layout
    rows = _rows_per_group(K1)
    groups = host_cdiv(K1, rows)
    lanes = _lanes_for_row(heroes, R)
    index_map = _row_per_work_item_map(rows, groups, lanes, K1, R)
    builder.report.launch.append(
        f"{builder.name}: row reduction, grid {groups} x local {rows} work-items "
        f"(one work-item per row of {R} elements, {lanes} lanes of accumulators, "
        f"no barriers)")
    builder.report.maps.append(f"{index_map}  (row, reduced position)")
    with builder.kernel("", work_group_size(index_map)) as k:
        ids = [k.thread_id, k.block_id]
        row, row_ok = _row_of_work_item(index_map, ids, k1, k.tensors)
        kept = delinearize(row, k1, k.tensors)

        def input_index(r):
            return kept + delinearize(r, red, k.tensors)
        walk = strided_loop(index_map, 1, 0)
        lane_stride = coefficient(index_map.results[1], 1)
        bounds = loop_bounds(walk, ids, index_product(red, k.tensors))
        per_lane = _lane_accumulate(builder, k, heroes, input_index, bounds, lane_stride,
                                    symbol_extent(index_map, 1), R)
        reduced = _combine_lanes(builder, k, heroes, per_lane)
        final = _write_outputs(builder, k, heroes, reduced, kept, row_ok)
        k.finish(final, grid(index_map, groups), "row reduction")


def _rows_per_group(K1) -> int:
    """Powers of two up to MAX_ROWS_PER_GROUP while MIN_GROUPS work-groups remain; one
    row per group for a dynamic K1 (which may be small)."""
    if K1.static is None:
        return 1
    rows = 1
    while rows < MAX_ROWS_PER_GROUP and K1.static >= 2 * rows * MIN_GROUPS:
        rows *= 2
    return rows


def _lanes_for_row(heroes, R) -> int:
    """LANE_BITS of the widest accumulator (16 f32 lanes, 8 f64), fewer for short rows."""
    widest = max(bit_width(compute_type(init.shape.element))
                 for h in heroes for init in reduce_operands(h)[1])
    lanes = max(1, LANE_BITS // max(widest, 32))
    if R.static is not None:
        while lanes > 1 and lanes > R.static:
            lanes //= 2
    return lanes


def _row_of_work_item(index_map, ids, k1, tensors):
    """(row index, "the row exists"): the map's first result and its constraint. Rows
    past K1 in the last work-group read row 0 and write nothing."""
    with named("row"):
        row = emit_expr(index_map.results[0], ids)
    with named("row_in_range"):
        row_ok = constraints_hold(constraints_on(index_map, index_map.results[0]), ids, [],
                                  _dynamic_bounds(k1, tensors))
    if row_ok is None:
        return row, arith.constant(ir.IntegerType.get_signless(1), 1)
    with named("row_or_0"):
        return arith.select(row_ok, row, const_index(0)), row_ok


def _dynamic_bounds(dims, tensors) -> dict:
    """The index value of the symbolic upper bound `_hi(size)` of `dims`' size."""
    size = host_product(dims)
    return {} if size.static is not None else {_hi(size): index_product(dims, tensors)}


def _lane_accumulate(builder, k, heroes, input_index, bounds, lane_stride, lanes, R):
    """Accumulators of each lane: a loop over the row `lanes` positions at a time (lane
    j accumulates positions pos + j * lane_stride), then the positions left over (fewer
    than `lanes`) into lane 0. `bounds`: (start, stop, step) of the walk along the row."""
    start, length, step = bounds
    inits = _initial_values(builder, k, heroes)
    if lanes == 1:
        return [_accumulate(builder, k, heroes, input_index, start, length, step, inits)[0]]
    main_end = _round_down(length, R, lanes)
    loop = scf.ForOp(start, main_end, step, _by_lane_to_flat([inits] * lanes))
    loop.attributes[LANE_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), lanes)
    _name_loop_values(loop, "pos", "acc")
    with ir.InsertionPoint(loop.body):
        accs = _flat_to_by_lane(list(loop.inner_iter_args), lanes)
        i = loop.induction_variable
        new = [_reduce_step(builder, k, heroes, accs[j],
                            input_index(i if j == 0 else
                                        arith.addi(i, const_index(j * lane_stride))))
               for j in range(lanes)]
        scf.yield_(_by_lane_to_flat(new))
    per_lane = _flat_to_by_lane(list(loop.results), lanes)
    if R.static is None or R.static % lanes:
        per_lane[0] = _accumulate(builder, k, heroes, input_index, main_end, length,
                                  const_index(1), per_lane[0])[0]
    return per_lane


def _name_loop_values(loop, position: str, carried: str) -> None:
    """C names of a loop's induction variable and loop-carried values."""
    args = loop.body.arguments
    args[0].set_location(named(position))
    for arg in list(args)[1:]:
        arg.set_location(named(carried))


def _by_lane_to_flat(by_lane) -> list:
    """Loop-carried order: accumulator-major (all lanes of accumulator 0, then of 1...),
    so that each accumulator's lanes are consecutive (one vector after packing)."""
    return [by_lane[j][a] for a in range(len(by_lane[0])) for j in range(len(by_lane))]


def _flat_to_by_lane(flat, lanes) -> list[list]:
    return [flat[j::lanes] for j in range(lanes)]


def _round_down(length, R, multiple) -> ir.Value:
    """The end of the part of the row that the lanes cover."""
    if R.static is not None:
        return const_index(R.static - R.static % multiple)
    with named("row_rest"):
        rest = arith.remsi(length, const_index(multiple))
    with named("lanes_end"):
        return arith.subi(length, rest)


def _combine_lanes(builder, k, heroes, per_lane) -> list[ir.Value]:
    """The lanes' accumulators combined pairwise (lanes 0+1, 2+3, ..., then again)."""
    while len(per_lane) > 1:
        pairs = zip(per_lane[0::2], per_lane[1::2])
        combined = [_combine(builder, k, heroes, a, b) for a, b in pairs]
        per_lane = combined + ([per_lane[-1]] if len(per_lane) % 2 else [])
    return per_lane[0]


def _column_map(tiles_per_row: int, blocks, K2: int, R) -> IndexingMap:
    """(th_x, bl_x)[i] -> (K1 index, reduced row, column): work-group bl_x covers
    COLUMNS columns of one K1 index; work-item th_x column th_x mod COLUMNS and every
    COLUMN_ROWS-th reduced row from th_x floordiv COLUMNS on."""
    column = add(mul(Dim(1) % tiles_per_row, COLUMNS), Dim(0) % COLUMNS)
    reduced_row = add(Dim(0) // COLUMNS, mul(Sym(0), COLUMN_ROWS))
    constraints = [(reduced_row, 0, _hi(R))]
    if K2 % COLUMNS:
        constraints.append((column, 0, K2 - 1))
    return IndexingMap(
        [(0, COLUMNS * COLUMN_ROWS - 1), (0, _hi(blocks))],
        [Dim(1) // tiles_per_row, reduced_row, column],
        symbol_ranges=[(0, _hi(host_cdiv(R, COLUMN_ROWS)))], constraints=constraints,
        dim_names=["th_x", "bl_x"], symbol_names=["i"])


def _column(builder, heroes, layout, K1, R, K2):
    k1, red, k2 = layout
    tiles_per_row = cdiv(K2, COLUMNS)
    blocks = host_mul(K1, HostSize(tiles_per_row))
    index_map = _column_map(tiles_per_row, blocks, K2, R)
    threads = work_group_size(index_map)
    builder.report.launch.append(
        f"{builder.name}: column reduction, grid {blocks} x local {threads} work-items "
        f"({COLUMNS} columns x {COLUMN_ROWS} rows per work-group, {R} reduced rows)")
    builder.report.maps.append(f"{index_map}  (K1, reduced row, column)")
    with builder.kernel("", threads) as k:
        ids = [k.thread_id, k.block_id]
        k1_index, _, column = index_map.results
        with named("tx"):           # the work-item's column in the work-group's tile
            tx = emit_expr(Dim(0) % COLUMNS, ids)
        walk = strided_loop(index_map, 1, 0)
        with named("ty"):           # the work-item's row in the tile: where its walk starts
            ty = emit_expr(walk.start, ids)
        with named("k1"):
            i1 = emit_expr(k1_index, ids)
        with named("col"):
            col = emit_expr(column, ids)
        with named("col_in_range"):
            col_ok = constraints_hold(constraints_on(index_map, column), ids, [])
        with named("col_or_0"):
            safe_col = col if col_ok is None else arith.select(col_ok, col, const_index(0))
        kept1, kept2 = delinearize(i1, k1, k.tensors), delinearize(safe_col, k2)

        def input_index(r):
            return kept1 + delinearize(r, red, k.tensors) + kept2
        _, stop, step = loop_bounds(walk, ids, index_product(red, k.tensors))
        partials, types = _accumulate(builder, k, heroes, input_index, ty, stop, step)
        reduced = _tree(builder, k, heroes, partials, types, lambda i: [i, tx], ty, COLUMN_ROWS,
                        [COLUMN_ROWS, COLUMNS + 1])
        first = arith.cmpi(arith.CmpIPredicate.eq, ty, const_index(0))
        if col_ok is not None:
            first = arith.andi(first, col_ok)
        final = _write_outputs(builder, k, heroes, reduced, kept1 + kept2, first)
        k.finish(final, grid(index_map, blocks), "column reduction")
