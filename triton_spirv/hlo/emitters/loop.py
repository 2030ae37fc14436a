"""The loop emitter (the default): every output element is computed independently.

Output elements are mapped to (work-item, work-group, vector index) as in the seed's
GELU example: work-item th_x of work-group bl_x handles the `vector` consecutive
elements starting at (bl_x * threads + th_x) * vector, so that consecutive work-items
write consecutive vectors (coalesced) and each one can use vloadN/vstoreN:

    (th_x, bl_x)[vector_index] -> delinearize(bl_x * threads * vector + th_x * vector + vector_index)

The vector loop carries the `hlo.vector_loop` attribute for the unroll and vectorize
passes.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf, tensor

from math import prod

from ..indexing import (coefficient, dynamic_thread_map, symbol_extent, thread_linear_index,
                        thread_map, without_symbols, work_group_size)
from ..mlir_types import const_index
from .base import (FusionBuilder, HostSize, cdiv, check_same_size, cmp_lt, delinearize,
                   host_cdiv, host_product, index_product, leaf_shape, to_storage)
from .map_loops import constraints_hold, emit_expr, grid


def vector_width(size: int) -> int:
    for v in (4, 2):
        if size % v == 0 and size >= v * 8:
            return v
    return 1


def dynamic_launch_shape(dims, threads: int) -> tuple[int, HostSize, int, HostSize]:
    """(threads, blocks, vector, size) for a dynamic output shape: the vector width
    divides the static part of the size (so every size is a multiple of it); the grid
    is computed on the host from the dimensions."""
    static = prod(d for d in dims if isinstance(d, int))
    vector = next((v for v in (4, 2) if static % v == 0), 1)
    size = host_product(dims)
    return threads, host_cdiv(size, threads * vector), vector, size


def launch_shape(size: int, most: int) -> tuple[int, int, int]:
    vector = vector_width(size)
    threads = min(most, max(1, cdiv(size, vector)))
    blocks = cdiv(size, threads * vector)
    return threads, blocks, vector


def emit_loop(builder: FusionBuilder, outputs=None, value_fn=None, suffix: str = "",
              description: str = "") -> None:
    """One kernel writing `outputs` ([(root, leaf)], default all fusion outputs);
    `value_fn(root, indices, tensors)` gives a root's leaves (default: its function).
    The kernel is built from the thread map the report prints: its work-group size and
    grid are the ranges of th_x and bl_x, the vector loop the range of vector_index,
    the element written the map's linear index, the guard the map's constraint."""
    outputs = outputs if outputs is not None else builder.outputs
    groups = _same_size_groups(outputs)
    if len(groups) > 1:
        for n, group in enumerate(groups):
            emit_loop(builder, group, value_fn, "_".join(filter(None, [suffix, f"out{n}"])),
                      description)
        return
    size = check_same_size(outputs, builder.name)
    first_shape = leaf_shape(*outputs[0])
    if size is None:     # dynamic shapes
        threads, blocks, vector, total = dynamic_launch_shape(first_shape.dims, builder.target.threads)
        index_map = dynamic_thread_map(threads, blocks, vector, first_shape.dims, total)
    else:
        threads, blocks, vector = launch_shape(size, builder.target.threads)
        total = size
        index_map = thread_map(threads, blocks, vector, first_shape.dims)
    builder.report.launch.append(
        f"{builder.name}{'_' + suffix if suffix else ''}: grid {blocks} x local "
        f"{threads} work-items, {vector} elements per work-item ({total} elements)")
    builder.report.maps.append(str(index_map))
    value_fn = value_fn or builder.root_values
    linear_index = thread_linear_index(index_map, first_shape.dims)
    vector = symbol_extent(index_map, 0)
    # (a vector of one element is consecutive whatever the map: rank 0's linear index 0)
    if vector > 1 and coefficient(linear_index, 0) != 1:
        raise ValueError(f"{index_map}: a vector's elements are not consecutive")
    with builder.kernel(suffix, work_group_size(index_map)) as k:
        ids = [k.thread_id, k.block_id]
        base = emit_expr(without_symbols(linear_index, 2), ids)     # the vector's first element
        slots = [builder.outputs.index((r, leaf)) for r, leaf in outputs]
        carried = [k.outputs[s] for s in slots]

        def body(iv_values, iters):
            linear = arith.addi(base, iv_values) if iv_values is not None else base
            cache = {}
            new = list(iters)
            for n, (root, leaf) in enumerate(outputs):
                shape = leaf_shape(root, leaf)
                key = (id(root), shape.dims)
                if key not in cache:
                    cache[key] = value_fn(root, delinearize(linear, shape.dims, k.tensors),
                                          k.tensors)
                value = to_storage(cache[key][leaf], shape.element)
                new[n] = tensor.insert(value, new[n], [linear])
            return new

        # The vector width divides the size, so a vector is in range when its first
        # element is: the constraint is checked once, at vector_index = 0.
        if size is None:
            guard = cmp_lt(base, index_product(first_shape.dims, k.tensors))
        else:
            guard = constraints_hold(index_map, ids, [const_index(0)])
        exact = size is None or size % vector == 0

        def vector_loop():
            return _vector_loop(vector, carried, body, exact)
        results = vector_loop() if guard is None else _guarded(guard, carried, vector_loop)
        final = list(k.outputs)
        for s, r in zip(slots, results):
            final[s] = r
        k.finish(final, grid(index_map, blocks), description or "loop")


def _same_size_groups(outputs) -> list[list]:
    """Outputs grouped by their (static) number of elements, in order of first
    appearance: one kernel per group, since a kernel walks one range of elements
    (a multi-output fusion such as (f32[], f32[40]) writes its rank-0 leaf in a
    kernel of one element). Dynamic shapes stay one group (check_same_size)."""
    if not all(leaf_shape(r, k).is_static for r, k in outputs):
        return [outputs]
    groups: dict[int, list] = {}
    for root, leaf in outputs:
        groups.setdefault(leaf_shape(root, leaf).size, []).append((root, leaf))
    return list(groups.values())


def _vector_loop(vector, carried, body, exact):
    def run(iters):
        return body(None, iters)
    if vector == 1:
        return run(carried)
    loop = scf.ForOp(const_index(0), const_index(vector), const_index(1), carried)
    loop.attributes["hlo.vector_loop"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), vector)
    with ir.InsertionPoint(loop.body):
        iters = list(loop.inner_iter_args)
        iv = loop.induction_variable
        if exact:
            scf.yield_(body(iv, iters))
        else:
            scf.yield_(iters)  # not reached: inexact sizes use vector 1
    return list(loop.results)


def _guarded(condition, carried, fn):
    op = scf.IfOp(condition, [v.type for v in carried], has_else=True)
    with ir.InsertionPoint(op.then_block):
        scf.yield_(fn())
    with ir.InsertionPoint(op.else_block):
        scf.yield_(carried)
    return list(op.results)
