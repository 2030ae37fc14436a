"""Kernel versioning on run-time guards: wrapped and clamped offsets take the block path.

Tutorial 03 builds its row offsets as `(pid * B + arange(B)) % M` and tutorial 09 as
`tl.where(offs < M, offs, 0)`: both are the block `offs` for every program (or, in a
persistent kernel's tile loop, every tile) whose block lies inside the matrix and differ
only for the last block. The converter asks `guard_of` about each op of the kernel's
top-level block and of every `scf.for` body; for such an op it emits

    scf.if <the block does not wrap or clamp> { the rest of the block, with the op's
                                                 result known to be the block }
    else                                      { the rest of the block as before }

so most programs copy whole blocks (and get a register-blocked dot) while the edge
blocks keep the gather path, which is always correct. Only ops whose result reaches a
pointer (`tt.addptr`) are versioned: elsewhere a block gains nothing. Code size stays
bounded: one version per guard, nested in the order of the guards, none inside a
fallback (else) branch.

How the two versions end depends on the block (`BlockExit`): in the kernel's block the
`tt.return` at its end closes each branch, and the `scf.if` is followed by the kernel's
return; in a loop body the body's `scf.yield` closes each branch, the `scf.if` yields the
loop's next values and the body yields the `scf.if`'s results. Loops that carry tensors
are not versioned (`loop_exit`): each branch would hand back its own tile, which the
memref stage cannot hold in one buffer.
"""
from __future__ import annotations

from typing import Callable, List, NamedTuple, Optional, Tuple

from mlir import ir
from mlir.dialects import scf

from ..ir_helpers import named
from . import analysis
from . import builders as b
from .values import AffineIndex, Value

_REMAINDERS = ("arith.remsi", "arith.remui")
_USE_WALK_LIMIT = 200  # ops looked at when asking whether a result reaches a pointer


class BlockExit(NamedTuple):
    """How a block whose rest may be versioned ends: the types its terminator hands on
    (the versions' `scf.if` yields them) and what ends the block after that `scf.if`,
    given its results and the block's TTIR terminator."""
    types: List[ir.Type]
    end: Callable[[List[ir.Value], ir.Operation], None]


def loop_exit(yielded_types: List[ir.Type]) -> Optional[BlockExit]:
    """The exit of an `scf.for` body yielding `yielded_types`; None (no versions) when the
    loop carries a tensor."""
    if any(b.is_tensor(t) for t in yielded_types):
        return None
    return BlockExit(list(yielded_types), _yield_results)


def _yield_results(results: List[ir.Value], terminator: ir.Operation) -> None:
    """The loop body's `scf.yield` of the versions' results, at the TTIR yield's line."""
    with terminator.location:
        scf.YieldOp(results)


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


def versions_location(op: ir.Operation, terminator: ir.Operation) -> ir.Location:
    """Where the versions' `scf.if` is built. When the block's `terminator` hands values
    on (a loop's next values), `op`'s source line named after the first named one: the
    C variable of what the `scf.if` yields is named after it, not after `op`. Otherwise
    `op`'s own location."""
    if not len(terminator.operands):
        return op.location
    line = op.location
    while line.is_a_name():
        line = line.child_loc
    for value in terminator.operands:
        loc = value.owner.location if isinstance(value, ir.OpResult) else value.location
        if loc.is_a_name():
            return named(loc.name_str, line)
    return line


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
