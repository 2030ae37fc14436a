"""The transpose emitter: a transpose hero that moves the minor-most dimension. Of the
two swapped dimensions, a = the input dimension that becomes the output's minor
dimension, b = the input's minor dimension. Two kernel shapes, chosen by the target
(`builder.target.transpose`, see target.py):

tiles (GPUs): a padded 32x33 `__local` tile, so that both the reads of the input and
the writes of the output are coalesced (the seed's transpose example). Work-group:
256 work-items (tx = 32 columns x ty = 8 rows, 4 rows each). One work-group per 32x32
tile of a and b and per index of the other dimensions:
  1. read  in[..., a0 + ty + 8j, ..., b0 + tx]  (prologue: the hero's operand function)
           -> tile[ty + 8j][tx]
  2. barrier
  3. write out[...] with out-minor = a0 + tx, b = b0 + ty + 8j, from tile[tx][ty + 8j]
           (epilogue: the root computed from the injected tile value)

segments (CPU devices): no `__local` memory and no barrier (the default CPU runtime splits a kernel at
every barrier and runs a work-group's work-items one after the other; the 256-item
tile kernel ran 2-4x slower than this shape on the default CPU runtime and Intel's CPU runtime). Each
work-item writes one segment of 16 consecutive output elements (a0 .. a0 + 15 along
a, one index of b and of the other dimensions) as one vector store, gathering them
from input column b; consecutive work-items take consecutive b, so that the CPU
compilers, which vectorize across work-items, read the input in contiguous rows.
A segment cut short by the end of a is written element by element.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod

from mlir import ir
from mlir.dialects import arith, gpu, scf, tensor, vector

from ..mlir_types import compute_type, const_index, storage_type
from ..indexing import IndexingMap, Dim, Sym, add, mul
from ..scalar_code import apply_expr
from .heroes import EmitterChoice, reaches_through_elementwise
from .base import (FusionBuilder, apply_linear, cdiv, cmp_lt, delinearize, dim_value,
                   host_cdiv, host_mul, host_product, index_product, linearize, named,
                   to_storage)

TILE = 32
ROWS = 8          # work-item rows; each handles TILE // ROWS tile rows
MIN_TILED = 16    # smaller swapped dimensions are left to the loop emitter
SEGMENT = 16      # output elements per work-item in the segments shape (a float16 store)
# Element types whose segments are one vector store (vstoreN / vstore_halfN); the others
# (bf16, fp8, pred) have no vector stores in the memref stage and are stored one by one.
VECTOR_STORES = ("f16", "f32", "f64", "s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64")


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


@dataclass(frozen=True)
class Swap:
    """The dimensions of a transpose hero's operand: `a` becomes the output's minor
    dimension, `b` is the input's minor dimension, `others` are the rest, in order."""
    perm: list[int]
    in_dims: tuple
    a: int
    b: int
    others: list[int]

    def input_index(self, other_idx, ia, ib) -> list:
        """The operand index of (other dimensions, a, b)."""
        idx = [None] * len(self.in_dims)
        for d, v in zip(self.others, other_idx):
            idx[d] = v
        idx[self.a], idx[self.b] = ia, ib
        return idx


def swap_of(hero) -> Swap:
    perm = hero.dimensions()
    in_dims = hero.operands[0].shape.dims
    a, b = perm[-1], len(in_dims) - 1
    return Swap(perm, in_dims, a, b, [d for d in range(len(in_dims)) if d not in (a, b)])


def emit_transpose(builder: FusionBuilder, hero) -> None:
    if builder.target.transpose == "segments":
        _emit_segments(builder, hero, swap_of(hero))
    else:
        _emit_tiles(builder, hero, swap_of(hero))


def _emit_tiles(builder: FusionBuilder, hero, swap: Swap) -> None:
    perm, in_dims, a, b, others = swap.perm, swap.in_dims, swap.a, swap.b, swap.others
    operand = hero.operands[0]
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
            return swap.input_index(other_idx, row_a, col_b)

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


def _emit_segments(builder: FusionBuilder, hero, swap: Swap) -> None:
    perm, in_dims, a, b, others = swap.perm, swap.in_dims, swap.a, swap.b, swap.others
    operand = hero.operands[0]
    segments = host_cdiv(host_product([in_dims[a]]), SEGMENT)
    items = host_mul(host_mul(host_product([in_dims[d] for d in others]), segments),
                     host_product([in_dims[b]]))
    threads = builder.target.threads
    blocks = host_cdiv(items, threads)
    root = builder.outputs[0][0]
    out_dims, storage = root.shape.dims, root.shape.element
    vectors = storage.name in VECTOR_STORES
    builder.report.launch.append(
        f"{builder.name}: grid {blocks} x local {threads} work-items, one per segment of "
        f"{SEGMENT} output elements along dim {a} of {list(in_dims)} "
        f"({'one vector store' if vectors else 'stored one by one'}), consecutive "
        f"work-items along dim {b}; no __local memory")
    builder.report.maps.append(_segment_map(in_dims, a, b, others, segments, threads))
    with builder.kernel("", threads) as k:
        size_a = dim_value(k.tensors, in_dims[a])
        count = (const_index(segments.static) if segments.static is not None else
                 arith.ceildivsi(size_a, const_index(SEGMENT)))
        grid_dims = [in_dims[d] for d in others] + [count, in_dims[b]]
        with named("item"):
            item = apply_linear([(k.block_id, threads), (k.thread_id, 1)])
        position = delinearize(item, grid_dims, k.tensors)
        other_idx, segment, ib = position[:-2], position[-2], position[-1]
        with named("a0"):
            a0 = apply_linear([(segment, SEGMENT)])

        def element(ia):
            """(output index, stored value) of the element at input index a = ia."""
            in_idx = swap.input_index(other_idx, ia, ib)
            value = builder.root_values(operand, in_idx, k.tensors)[0]
            out_idx = [in_idx[p] for p in perm]
            result = builder.epilogue(root, out_idx, k.tensors, {hero: [value]})[0]
            return linearize(out_idx, out_dims, k.tensors), to_storage(result, storage)

        def vector_segment(out):
            """Elements a0 .. a0 + 15 built into one vector, written by one transfer."""
            stores = [element(apply_linear([(a0, 1)], i) if i else a0) for i in range(SEGMENT)]
            lanes = vector.broadcast(ir.VectorType.get([SEGMENT], storage_type(storage)),
                                     _zero(storage_type(storage)))
            for i, (_, value) in enumerate(stores):
                lanes = vector.insert(value, lanes, [], [i])
            return [vector.transfer_write(out.type, lanes, out, [stores[0][0]],
                                          _minor_identity(), in_bounds=[True])]

        def scalar_segment(out):
            """Elements a0 .. min(a0 + 16, size of a) - 1, one store each."""
            end = arith.minsi(arith.addi(a0, const_index(SEGMENT)), size_a)
            loop = scf.ForOp(a0, end, const_index(1), [out])
            with ir.InsertionPoint(loop.body):
                at, value = element(loop.induction_variable)
                scf.yield_([tensor.insert(value, loop.inner_iter_args[0], [at])])
            return list(loop.results)

        def segment_of(out):
            if not vectors:
                return scalar_segment(out)
            if isinstance(in_dims[a], int) and in_dims[a] % SEGMENT == 0:
                return vector_segment(out)
            whole = arith.cmpi(arith.CmpIPredicate.sle,
                               arith.addi(a0, const_index(SEGMENT)), size_a)
            return _if(whole, [out], lambda: vector_segment(out), lambda: scalar_segment(out))

        out = k.outputs[0]
        if items.static is not None and items.static % threads == 0:
            out = segment_of(out)[0]
        else:
            total = index_product([in_dims[d] for d in others] + [in_dims[b]], k.tensors)
            inside = cmp_lt(item, arith.muli(total, count))
            out = _if(inside, [out], lambda: segment_of(out), lambda: [out])[0]
        k.finish([out], blocks, "transpose")


def _zero(element_type):
    if isinstance(element_type, ir.IntegerType):
        return arith.constant(element_type, 0)
    return arith.constant(element_type, 0.0)


def _minor_identity():
    return ir.AffineMapAttr.get(ir.AffineMap.get_minor_identity(1, 1))


def _segment_map(in_dims, a, b, others, segments, threads) -> str:
    """(th_x, bl_x)[i] -> the input index the segments shape reads for lane i."""
    if segments.static is None or not all(isinstance(d, int) for d in in_dims):
        names = ", ".join([str(in_dims[d]) for d in others] + [str(segments), str(in_dims[b])])
        return (f"(th_x, bl_x)[i] -> input index: (others..., segment, b) = delinearize("
                f"bl_x * {threads} + th_x, ({names})), dim {a} = segment * {SEGMENT} + i, "
                f"dim {b} = b")
    from ..indexing import delinearize as sym_delinearize
    grid_dims = [in_dims[d] for d in others] + [segments.static, in_dims[b]]
    position = sym_delinearize(add(mul(Dim(1), threads), Dim(0)), grid_dims)
    results = [None] * len(in_dims)
    for d, e in zip(others, position[:-2]):
        results[d] = e
    results[a] = add(mul(position[-2], SEGMENT), Sym(0))
    results[b] = position[-1]
    return str(IndexingMap([(0, threads - 1), (0, cdiv(prod(grid_dims), threads) - 1)],
                           results, symbol_ranges=[(0, SEGMENT - 1)],
                           constraints=[(results[a], 0, in_dims[a] - 1)],
                           dim_names=["th_x", "bl_x"], symbol_names=["i"]))
