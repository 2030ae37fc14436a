"""GPU-shaped kernels: the elements of a tensor atomic are shared by the work-items.

`tl.atomic_add(ptr + idx, vals, mask=...)` over a block lowers to a loop over the
block's elements, each an atomic on a kernel buffer (`memref.atomic_rmw`, or
`memref.generic_atomic_rmw`) reading its address, value and mask from tiles at the
loop's induction variables. Upstream `affine-parallelize` leaves it serial (an atomic
writes memory it cannot analyze), and work_group_sharing.py would run such a loop on
work-item 0 alone. The elements of one Triton atomic are unordered among themselves
(a GPU runs them from the threads that hold them), so the loop is as parallel as an
elementwise one: `atomic_nests` finds it, and work_group_sharing.py distributes it
like any parallel loop (same chunks as the loops that wrote its tiles, which then
stay private arrays: no `__local` round trip and no barrier before the atomics).
"""
from __future__ import annotations

from mlir import ir

from ..ir_helpers import root_buffer
from .affine_nests import matched_loops, op_of, owner

ATOMICS = ("memref.atomic_rmw", "memref.generic_atomic_rmw")
_READS = ("memref.load", "vector.load")
# Ops that make the order of the iterations visible or leave the work-item's share.
_SERIAL = ("scf.while", "memref.alloc", "memref.alloca", "memref.copy", "vector.store",
           "vector.transfer_write", "gpu.printf", "gpu.barrier", "func.call")


def atomic_nests(block: ir.Block, skip: dict) -> list:
    """Perfect `scf.for` nests under `block` (outside the ops of `skip`) whose
    iterations are independent but for atomics on kernel buffers: see `_independent`."""
    return matched_loops(block, _atomic_nest, skip)


def _atomic_nest(loop) -> list | None:
    nest = [loop]
    while True:
        current = nest[-1]
        body = current.regions[0].blocks[0]
        if len(current.results) or len(body.arguments) != 1:
            return None
        ops = list(body.operations)[:-1]
        if len(ops) == 1 and ops[0].operation.name == "scf.for":
            nest.append(ops[0])
            continue
        break
    return nest if _independent(nest) else None


def _independent(nest: list) -> bool:
    """At least one atomic, each on a kernel buffer (not a work-group tile) that no
    plain access of the nest touches; plain stores write work-group tiles exactly at
    the nest's induction variables (an atomic's old value kept per element), and the
    nest reads what it writes only there."""
    ivs = [loop.regions[0].blocks[0].arguments[0] for loop in nest]
    atomics, stores, loads, serial = [], [], [], []

    def visit(inner):
        name = inner.name
        if name in ATOMICS:
            atomics.append(inner)
        if name == "memref.store":
            stores.append(inner)
        elif name in _READS:
            loads.append(inner)
        elif name in _SERIAL or name.startswith("gpu."):
            serial.append(inner)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    op_of(nest[0]).walk(visit)
    if serial or not atomics:
        return False
    targets = {_atomic_buffer(a) for a in atomics}
    if any(_is_tile(t) for t in targets):
        return False
    written = set()
    for store in stores:
        target = store.operands[1]
        if not _is_tile(target) or root_buffer(target) != target or \
                list(store.operands)[2:] != ivs:
            return False
        written.add(target)
    for load in loads:
        source = root_buffer(load.operands[0])
        if source in targets:
            return False
        if source in written and (load.operands[0] not in written or
                                  list(load.operands)[1:] != ivs):
            return False
    return True


def _atomic_buffer(op) -> ir.Value:
    # atomic_rmw(value, memref, indices...); generic_atomic_rmw(memref, indices...)
    memref = op.operands[1] if op.name == "memref.atomic_rmw" else op.operands[0]
    return root_buffer(memref)


def _is_tile(value: ir.Value) -> bool:
    defining = owner(root_buffer(value))
    return defining is not None and defining.name in ("memref.alloc", "memref.alloca")
