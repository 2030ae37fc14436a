"""Kernel versioning on run-time guards: wrapped and clamped offsets take the block path.

Tutorial 03 builds its row offsets as `(pid * B + arange(B)) % M` and tutorial 09 as
`tl.where(offs < M, offs, 0)`: both are the block `offs` for every program whose block
lies inside the matrix and differ only for the last block. The converter asks `guard_of`
about each op of the kernel's top-level block; for such an op it emits

    scf.if <the block does not wrap or clamp> { the rest of the kernel, with the op's
                                                 result known to be the block }
    else                                      { the rest of the kernel as before }

so most programs copy whole blocks (and get a register-blocked dot) while the edge
blocks keep the gather path, which is always correct. Only ops whose result reaches a
pointer (`tt.addptr`) are versioned: elsewhere a block gains nothing.
"""
from __future__ import annotations

from typing import Optional, Tuple

from mlir import ir

from ..memref_stage.affine_nests import named
from . import analysis
from . import builders as b
from .values import AffineIndex, Value

_REMAINDERS = ("arith.remsi", "arith.remui")
_USE_WALK_LIMIT = 200  # ops looked at when asking whether a result reaches a pointer


def feeds_pointer(op: ir.Operation) -> bool:
    """Whether a result of `op` flows (through ops of the same kernel) into tt.addptr."""
    pending = list(op.results)
    seen = 0
    while pending and seen < _USE_WALK_LIMIT:
        value = pending.pop()
        for use in value.uses:
            user = use.owner
            seen += 1
            if user.name == "tt.addptr":
                return True
            pending.extend(user.results)
    return False


def guard_location(loc: ir.Location) -> ir.Location:
    """Where a guard's ops are built: `<variable>_is_block` names the condition."""
    variable = loc.name_str if loc.is_a_name() else ""
    return named(f"{variable}_is_block" if variable else "is_block", loc)


def guard_of(converter, op: ir.Operation) -> Optional[Tuple[ir.Value, AffineIndex]]:
    """(i1 condition, block) when `op`'s result equals the block `AffineIndex` wherever the
    condition holds and is worth versioning on; None otherwise. Emits the condition."""
    if op.name not in _REMAINDERS + ("arith.select",) or len(op.results) != 1:
        return None
    result_type = op.results[0].type
    if not b.is_tensor(result_type) or not b.is_integer(b.element_type(result_type)):
        return None
    operands = [converter.get(v) for v in op.operands]
    if not all(isinstance(o, Value) for o in operands) or not feeds_pointer(op):
        return None
    shape = b.shape_of(result_type)
    rank = len(shape)
    if op.name in _REMAINDERS:
        offsets, modulus = (analysis.affine_of(o, rank) for o in operands)
        if offsets is None or modulus is None or not analysis.is_uniform(modulus):
            return None
        return analysis.in_range_guard(offsets, shape, modulus.base), offsets
    condition, chosen = operands[0], analysis.affine_of(operands[1], rank)
    if condition.box is None or chosen is None or not b.is_tensor(condition.type):
        return None
    return analysis.full_box_guard(condition.box, shape), chosen
