"""Small queries on affine loop nests and memref values, shared by the rewrites on the
affine stage (register_blocking.py, stream_forwarding.py) and those on the scf stage
(work_group_sharing.py, block_ownership.py). The queries every stage shares (op_of,
owner, root_buffer, named, remap_operands) are in triton_spirv/ir_helpers.py."""
from __future__ import annotations

from mlir import ir

from ..ir_helpers import VIEW_OPS, constant_index, op_of, owner


def nested_ops(block: ir.Block) -> list:
    """The ops of `block` and of every region nested in it, in program order (each op
    before the ops of its regions)."""
    found = []
    for op in block.operations:
        found.append(op)
        for region in op.regions:
            for inner in region.blocks:
                found.extend(nested_ops(inner))
    return found


def kernel_ops(module: ir.Module, name: str) -> list:
    """The ops named `name` in the bodies of `module`'s functions, in program order."""
    return [op for func in module.body.operations
            if func.operation.name == "func.func" and func.regions[0].blocks
            for op in nested_ops(func.regions[0].blocks[0]) if op.operation.name == name]


def nested_allocs(block: ir.Block) -> list:
    """The `memref.alloc`s of `block` and of the regions nested in it."""
    return [op for op in nested_ops(block) if op.operation.name == "memref.alloc"]


def is_nested_in(op, ancestor) -> bool:
    """Whether `op` is `ancestor` or nested in one of its regions."""
    op, ancestor = op_of(op), op_of(ancestor)
    while op is not None:
        if op == ancestor:
            return True
        op = op.parent
    return False


def ancestor_in(op, block: ir.Block):
    """The op of `block` that is or holds `op`, else None."""
    op = op_of(op)
    while op.parent is not None:   # the module op has no block
        if op.block == block:
            return op
        op = op.parent.operation
    return None


def users_through_views(memref: ir.Value) -> list:
    """The ops that use `memref` or a view of it, other than the view ops themselves."""
    found, pending = [], [memref]
    while pending:
        for use in pending.pop().uses:
            if use.owner.name in VIEW_OPS:
                pending.append(use.owner.results[0])
            else:
                found.append(use.owner)
    return found


def memory_access(op):
    """(memref, indices, writes) of a scalar or vector load or store, else None."""
    name = op.name
    if name in ("memref.load", "vector.load"):
        return op.operands[0], list(op.operands)[1:], False
    if name in ("memref.store", "vector.store"):
        return op.operands[1], list(op.operands)[2:], True
    return None


def access_width(op) -> int:
    """Elements a load or store touches along the last dimension."""
    value = op.results[0] if op.name in ("memref.load", "vector.load") else op.operands[0]
    return ir.VectorType(value.type).shape[-1] if isinstance(value.type, ir.VectorType) else 1


def whole_tile_steps(loop, shape: list) -> list | None:
    """The steps `(1, ..., 1, W)` of an scf.parallel from 0 to `shape` whose last step W
    divides the last dimension: it visits each row of W elements once; else None."""
    n = len(loop.regions[0].blocks[0].arguments)
    lbs, ubs, steps = ([constant_index(v) for v in list(loop.operands)[k * n:(k + 1) * n]]
                       for k in range(3))
    if n != len(shape) or lbs != [0] * n or ubs != list(shape) or \
            steps[:-1] != [1] * (n - 1) or not steps[-1] or shape[-1] % steps[-1]:
        return None
    return steps


def outermost_parallel_loops(block: ir.Block) -> list:
    """The scf.parallel loops under `block` that no other scf.parallel holds."""
    found = []
    for op in block.operations:
        if op.operation.name == "scf.parallel":
            found.append(op)
            continue
        for region in op.regions:
            for inner in region.blocks:
                found.extend(outermost_parallel_loops(inner))
    return found


def matched_loops(block: ir.Block, match, skip: dict) -> list:
    """`match(loop)` of every `scf.for` under `block` for which it is not None, without
    looking inside a matched loop or an op of `skip`."""
    found = []
    for op in list(block.operations):
        if op_of(op) in skip:
            continue
        if op.operation.name == "scf.for":
            matched = match(op)
            if matched is not None:
                found.append(matched)
                continue
        for region in op.regions:
            for inner in region.blocks:
                found.extend(matched_loops(inner, match, skip))
    return found


def is_alloc(value: ir.Value) -> bool:
    """A work-group buffer (`memref.alloc`) rather than a view of a kernel argument."""
    defining = owner(value)
    return defining is not None and defining.name == "memref.alloc"


def body_ops(loop) -> list:
    """The ops of a loop body without its terminator."""
    return list(loop.regions[0].blocks[0].operations)[:-1]


def static_trip_count(lower: ir.Value, upper: ir.Value, step: ir.Value) -> int | None:
    """Iterations of a loop `lower to upper step step` when all three are constants
    (and the step positive), else None."""
    bounds = [constant_index(v) for v in (lower, upper, step)]
    if None in bounds or bounds[2] <= 0:
        return None
    low, high, stride = bounds
    return max(0, -(-(high - low) // stride))


def induction_var(loop) -> ir.Value:
    return loop.regions[0].blocks[0].arguments[0]


def constant_extent(loop) -> int | None:
    """N of `affine.for %i = 0 to N` (constant N, step 1, no results), else None."""
    if len(loop.results) or ir.IntegerAttr(loop.attributes["step"]).value != 1:
        return None
    if _single_constant(ir.AffineMapAttr(loop.attributes["lowerBoundMap"]).value) != 0:
        return None
    return _single_constant(ir.AffineMapAttr(loop.attributes["upperBoundMap"]).value)


def _single_constant(amap: ir.AffineMap) -> int | None:
    if amap.n_inputs or len(amap.results) != 1:
        return None
    expr = amap.results[0]
    return expr.value if isinstance(expr, ir.AffineConstantExpr) else None
