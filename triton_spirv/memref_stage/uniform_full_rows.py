"""Uniform full rows (GPU shape): a fused loop over a work-item's private rows gets a
version for full tiles, chosen by the whole work-group at once.

After private row fusion (private_row_fusion.py) each round of a work-item's loop asks
for itself whether its row lies inside the masked tile (`if (v0 + 4 <= extent) { vector
load } else { element loop }`). On a device that runs a group's work-items as SIMD lanes
(Intel's CPU runtime, and GPUs with predication) that branch is divergent in principle,
so both arms run under masks and the private rows, indexed by the element loop, live in
memory. Yet for every tile but the last, `extent` is the tile's size and every row is
full. This pass versions the loop on that, a condition every work-item of the group
computes alike:

    if (extent == 1024 [&& other extents full]) { the loop, each such branch replaced by its
                                                   vector arm, the partial tiles' fills
                                                   gone, its own private rows }
    else                                         { the loop as it was }

A branch is taken as a row test only when its condition is `a <= extent`, `extent` is
`min(x, C)` defined before the loop, and the largest `a` over the loop's rounds and the
group's work-items is at most C, so the replaced arm is the one the original takes in
every round of a full tile. The fills removed are branches on `extent != C`.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, memref, scf

from ..ir_helpers import constant_index, holds, named, op_of, owner
from .affine_nests import is_nested_in
from .private_row_fusion import holds_synchronization
from .work_group_sharing import is_private

_CMPI_NE, _CMPI_SLE = 1, 3
_THREAD_DIMENSIONS = {"x": 0, "y": 1, "z": 2}


def version_full_rows(module: ir.Module) -> int:
    """Versions each loop of `module` that private row fusion left with row tests (the
    module docstring); returns how many."""
    versioned = 0
    for func in module.body.operations:
        if func.operation.name != "func.func" or "opencl.local_size" not in func.attributes:
            continue
        sizes = list(ir.DenseI64ArrayAttr(func.attributes["opencl.local_size"]))
        for loop in _top_level_loops(func):
            versioned += _version(loop, sizes)
    return versioned


def _top_level_loops(func) -> list:
    loops = []
    for block in func.regions[0].blocks:
        loops += [op_of(op) for op in block.operations
                  if op_of(op).name == "scf.for" and not op_of(op).results]
    return loops


def _version(loop, sizes: list) -> int:
    if holds_synchronization(loop):
        # Both versions would hold the barriers: barriers in the arms of a uniform
        # branch, which some drivers miscompile (PoCL's barrier_in_uniform_branch).
        return 0
    body = loop.regions[0].blocks[0]
    tests = [op for op in map(op_of, body.operations) if _row_test(op, loop, sizes) is not None]
    if not tests:
        return 0
    extents = []
    for test in tests:
        extent = _row_test(test, loop, sizes)
        if not any(extent[0] == known[0] for known in extents):
            extents.append(extent)
    if not _has_private_rows(loop):
        return 0
    with ir.InsertionPoint(loop), named("is_full", loop.location):
        full = None
        for value, size in extents:
            equal = arith.cmpi(arith.CmpIPredicate.eq, value, arith.constant(ir.IndexType.get(), size))
            full = equal if full is None else arith.andi(full, equal)
    with ir.InsertionPoint(loop), loop.location:
        branch = scf.IfOp(full, has_else=True)
    whole = op_of(loop.clone(ip=ir.InsertionPoint(branch.then_block)))
    with ir.InsertionPoint(branch.then_block), loop.location:
        scf.YieldOp([])
    with ir.InsertionPoint(branch.else_block), loop.location:
        scf.YieldOp([])
    loop.move_before(op_of(list(branch.else_block.operations)[0]))
    _keep_full_arms(whole, extents, sizes)
    _own_private_rows(whole, loop, op_of(branch))
    return 1


def _row_test(op, loop, sizes: list):
    """(extent, C) when `op` is a branch with an else on `a <= extent` with `extent =
    min(x, C)` defined outside `loop` and a <= C in every round; else None."""
    if op.name != "scf.if" or op.results or len(op.regions[1].blocks) == 0:
        return None
    compare = owner(op.operands[0])
    if compare is None or compare.name != "arith.cmpi" or \
            ir.IntegerAttr(compare.attributes["predicate"]).value != _CMPI_SLE:
        return None
    bound, extent = compare.operands
    clamp = owner(extent)
    if clamp is None or clamp.name != "arith.minsi" or is_nested_in(clamp, loop):
        return None
    size = constant_index(clamp.operands[1])
    largest = _upper_bound(bound, loop, sizes)
    if size is None or largest is None or largest > size:
        return None
    return extent, size


def _upper_bound(value: ir.Value, loop, sizes: list, depth: int = 0):
    """The largest value `value` takes over `loop`'s rounds and the group's work-items,
    for sums and products of non-negative rounds, work-item ids and constants; else
    None."""
    interval = _interval(value, loop, sizes, depth)
    return interval[1] if interval is not None else None


def _interval(value: ir.Value, loop, sizes: list, depth: int):
    if depth > 12:
        return None
    known = constant_index(value)
    if known is not None:
        return known, known
    if value == loop.regions[0].blocks[0].arguments[0]:
        lower, upper, step = (constant_index(v) for v in list(loop.operands)[:3])
        if lower is None or upper is None or step != 1 or upper <= lower:
            return None
        return lower, upper - 1
    defining = owner(value)
    if defining is None:
        return None
    if defining.name == "gpu.thread_id":
        dimension = _THREAD_DIMENSIONS.get(str(defining.attributes["dimension"]).split()[-1].strip(">"))
        return (0, sizes[dimension] - 1) if dimension is not None else None
    if defining.name in ("arith.addi", "arith.muli"):
        a = _interval(defining.operands[0], loop, sizes, depth + 1)
        b = _interval(defining.operands[1], loop, sizes, depth + 1)
        if a is None or b is None or a[0] < 0 or b[0] < 0:
            return None
        if defining.name == "arith.addi":
            return a[0] + b[0], a[1] + b[1]
        return a[0] * b[0], a[1] * b[1]
    return None


def _has_private_rows(loop) -> bool:
    return holds(loop, lambda op: any(is_private(v) for v in op.operands))


def _keep_full_arms(loop, extents: list, sizes: list) -> None:
    """In the full tiles' loop: each row test becomes its vector arm; each fill on
    `extent != C` of a versioned (extent, C) goes."""
    body = loop.regions[0].blocks[0]
    for op in [op_of(o) for o in body.operations]:
        if _row_test(op, loop, sizes) is not None:
            then_block = op.regions[0].blocks[0]
            for inner in [op_of(o) for o in then_block.operations][:-1]:
                inner.move_before(op)
            op.erase()
        elif _is_partial_fill(op, extents):
            op.erase()


def _is_partial_fill(op, extents: list) -> bool:
    if op.name != "scf.if" or op.results or len(op.regions[1].blocks) != 0:
        return False
    compare = owner(op.operands[0])
    return compare is not None and compare.name == "arith.cmpi" and \
        ir.IntegerAttr(compare.attributes["predicate"]).value == _CMPI_NE and \
        any(compare.operands[0] == extent and constant_index(compare.operands[1]) == size
            for extent, size in extents)


def _own_private_rows(whole, original, anchor) -> None:
    """The full tiles' loop `whole` gets arrays of its own, made before `anchor`, for
    the private rows that only it and the `original` loop use, so that the compiler sees
    only constant indices into them; arrays used after the loops stay shared."""
    uses = []

    def visit(inner):
        uses.extend((inner, i) for i, operand in enumerate(inner.operands) if is_private(operand))
        return ir.WalkResult.ADVANCE
    whole.walk(visit)
    originals, copies = [], []
    for inner, i in uses:
        array = inner.operands[i]
        if array not in originals:
            local = all(is_nested_in(use.owner, whole) or is_nested_in(use.owner, original)
                        for use in array.uses)
            copy = None
            if local:
                with ir.InsertionPoint(anchor), op_of(owner(array)).location:
                    copy = memref.AllocaOp(ir.MemRefType(array.type), [], []).result
            originals.append(array)
            copies.append(copy)
        copy = copies[originals.index(array)]
        if copy is not None:
            inner.operands[i] = copy
