"""The transpose emitter: a transpose hero that moves the minor-most dimension is
done through a padded 32x33 `__local` tile, so that both the reads of the input and
the writes of the output are coalesced (the seed's transpose example).

Work-group: 256 work-items (tx = 32 columns x ty = 8 rows, 4 rows each). One
work-group per 32x32 tile of the two swapped dimensions (a = the input dimension that
becomes the output's minor dimension, b = the input's minor dimension) and per index
of the other dimensions:
  1. read  in[..., a0 + ty + 8j, ..., b0 + tx]  (prologue: the hero's operand function)
           -> tile[ty + 8j][tx]
  2. barrier
  3. write out[...] with out-minor = a0 + tx, b = b0 + ty + 8j, from tile[tx][ty + 8j]
           (epilogue: the root computed from the injected tile value)
"""
from __future__ import annotations

from math import prod

from mlir import ir
from mlir.dialects import arith, gpu, scf, tensor

from ..elemental import compute_type, const_index
from ..indexing import IndexingMap, Dim, Sym, add, mul
from . import EmitterChoice, reaches_through_elementwise
from .base import (FusionBuilder, apply_linear, cmp_lt, delinearize, dim_value,
                   host_cdiv, host_mul, host_product, linearize, named, to_storage)

TILE = 32
ROWS = 8          # work-item rows; each handles TILE // ROWS tile rows
MIN_TILED = 16    # smaller swapped dimensions are left to the loop emitter


def find_transpose_hero(computation):
    from ..partitioner import output_roots
    roots = output_roots(computation)
    if len(roots) != 1 or roots[0].shape.is_tuple:
        return None
    root = roots[0]
    for instr in computation.post_order():
        if instr.opcode != "transpose":
            continue
        perm = instr.dimensions()
        rank = len(perm)
        if rank < 2 or perm[-1] == rank - 1:
            continue
        in_dims = instr.operands[0].shape.dims
        # (a dynamic dimension counts as large: the tiles check their bounds)
        if any(isinstance(d, int) and d < MIN_TILED for d in (in_dims[perm[-1]], in_dims[-1])):
            continue
        if root.shape.dims != instr.shape.dims:
            continue
        if reaches_through_elementwise(root, {instr}):
            return instr
    return None


def try_transpose(computation):
    hero = find_transpose_hero(computation)
    if hero is None:
        return None
    return EmitterChoice("transpose", [hero], [hero, hero.operands[0]],
                         lambda b: emit_transpose(b, hero), "minor dimension moves")


def emit_transpose(builder: FusionBuilder, hero) -> None:
    perm = hero.dimensions()
    operand = hero.operands[0]
    in_dims = operand.shape.dims
    rank = len(in_dims)
    a, b = perm[-1], rank - 1
    others = [d for d in range(rank) if d not in (a, b)]
    static = all(isinstance(d, int) for d in in_dims)
    tiles = [host_cdiv(host_product([in_dims[d]]), TILE) for d in (a, b)]
    blocks = host_mul(host_mul(host_product([in_dims[d] for d in others]), tiles[0]), tiles[1])
    threads = TILE * ROWS
    builder.report.launch.append(
        f"{builder.name}: grid {blocks} x local {threads} work-items "
        f"(tiles {TILE}x{TILE + 1} of dims {a} and {b} of {list(in_dims)}), "
        f"{TILE * (TILE + 1) * 4} bytes of __local memory")
    if static:
        grid_dims = [in_dims[d] for d in others] + [t.static for t in tiles]
        builder.report.maps.append(str(_read_map(in_dims, a, b, others, grid_dims)))
    else:
        builder.report.maps.append(
            f"(th_x, bl_x)[j, {', '.join(s for s in builder.symbols)}] -> input index: "
            f"dim {a} = tile_a * {TILE} + th_x floordiv {TILE} + j * {ROWS}, dim {b} = "
            f"tile_b * {TILE} + th_x mod {TILE}, (others..., tile_a, tile_b) = "
            f"delinearize(bl_x, ({', '.join([str(in_dims[d]) for d in others] + [str(t) for t in tiles])}))")
    root = builder.outputs[0][0]
    out_dims = root.shape.dims
    et = hero.shape.element
    with builder.kernel("", threads) as k:
        tx = apply_expr_named("tx", lambda t: t % TILE, k.thread_id)
        ty = apply_expr_named("ty", lambda t: t // TILE, k.thread_id)
        size_a, size_b = dim_value(k.tensors, in_dims[a]), dim_value(k.tensors, in_dims[b])
        grid_dims = [in_dims[d] for d in others] + [
            t.static if t.static is not None else
            arith.ceildivsi(size, const_index(TILE)) for t, size in zip(tiles, (size_a, size_b))]
        block = delinearize(k.block_id, grid_dims, k.tensors)
        other_idx, ta, tb = block[:-2], block[-2], block[-1]
        a0 = apply_linear([(ta, TILE)])
        b0 = apply_linear([(tb, TILE)])
        with named("tile"):
            tile = tensor.empty([TILE, TILE + 1], compute_type(et))

        def input_index(row_a, col_b):
            idx = [None] * rank
            for d, v in zip(others, other_idx):
                idx[d] = v
            idx[a], idx[b] = row_a, col_b
            return idx

        # 1. coalesced reads along b into the tile
        def read_step(j, t):
            r = apply_linear([(ty, 1)], ROWS * j)
            ia, ib = arith.addi(a0, r), arith.addi(b0, tx)
            ok = arith.andi(cmp_lt(ia, size_a), cmp_lt(ib, size_b))
            return _if(ok, [t], lambda: [tensor.insert(
                builder.root_values(operand, input_index(ia, ib), k.tensors)[0], t, [r, tx])],
                lambda: [t])[0]
        for j in range(TILE // ROWS):
            tile = read_step(j, tile)
        gpu.barrier()

        # 3. coalesced writes along the output's minor dimension (input dim a)
        out = k.outputs[0]
        for j in range(TILE // ROWS):
            r = apply_linear([(ty, 1)], ROWS * j)
            ia, ib = arith.addi(a0, tx), arith.addi(b0, r)
            ok = arith.andi(cmp_lt(ia, size_a), cmp_lt(ib, size_b))

            def write(ia=ia, ib=ib, r=r, out=out):
                value = tensor.extract(tile, [tx, r])
                in_idx = input_index(ia, ib)
                out_idx = [in_idx[p] for p in perm]
                result = builder.epilogue(root, out_idx, k.tensors, {hero: [value]})[0]
                return [tensor.insert(to_storage(result, root.shape.element), out,
                                      [linearize(out_idx, out_dims, k.tensors)])]
            out = _if(ok, [out], write, lambda out=out: [out])[0]
        k.finish([out], blocks, "transpose")


def apply_expr_named(name, fn, value):
    from ..elemental import apply_expr
    with named(name):
        return apply_expr(fn(Dim(0)), [value])


def _if(condition, carried, then_fn, else_fn):
    op = scf.IfOp(condition, [v.type for v in carried], has_else=True)
    with ir.InsertionPoint(op.then_block):
        scf.yield_(then_fn())
    with ir.InsertionPoint(op.else_block):
        scf.yield_(else_fn())
    return list(op.results)


def _read_map(in_dims, a, b, others, grid_dims) -> IndexingMap:
    """(th_x, bl_x)[j] -> input index read by the first phase."""
    from ..indexing import delinearize as sym_delinearize
    block = sym_delinearize(Dim(1), grid_dims)
    results = [None] * len(in_dims)
    for d, e in zip(others, block[:-2]):
        results[d] = e
    results[a] = add(mul(block[-2], TILE), Dim(0) // TILE, mul(Sym(0), ROWS))
    results[b] = add(mul(block[-1], TILE), Dim(0) % TILE)
    return IndexingMap([(0, TILE * ROWS - 1), (0, prod(grid_dims) - 1)], results,
                       symbol_ranges=[(0, TILE // ROWS - 1)],
                       constraints=[(results[a], 0, in_dims[a] - 1), (results[b], 0, in_dims[b] - 1)],
                       dim_names=["th_x", "bl_x"], symbol_names=["j"])
