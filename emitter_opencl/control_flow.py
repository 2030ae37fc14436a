"""Structured control flow (scf) as C loops and ifs.

Values an scf op yields (loop-carried values, if results) become C variables declared
before the construct and assigned by its terminator (`scf.yield`, `scf.condition`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from mlir import ir

from .errors import error_at
from .ir_utils import terminator
from .locations import source_name
from .names import sanitize
from .views import atom

_LOOP_VAR_NAMES = ("i", "j", "k", "l")


@dataclass
class Target:
    """A C variable that a terminator (scf.yield / scf.condition) assigns."""
    name: str
    ctype: str


def _value_name(value: ir.Value) -> str | None:
    """The source name of a block argument or of the op defining a value."""
    owner = value.owner
    loc = value.location if isinstance(owner, ir.Block) else owner.location
    return source_name(loc)


def _has_code(block: ir.Block) -> bool:
    ops = list(block.operations)
    return len(ops) > 1 or (len(ops) == 1 and len(ops[0].operands) > 0)


def _declare_targets(emitter, op, results: Sequence[ir.Value],
                     namesakes: Sequence[Sequence[ir.Value]],
                     inits: Sequence[str] | None, fallback: str) -> list[Target]:
    """C variables for loop-carried values / if results, declared before the
    construct (initialized when `inits` is given). Each is named after the first
    of its `namesakes` (block argument, yielded value) with a source name."""
    targets = []
    for i, result in enumerate(results):
        candidates = [_value_name(v[i]) for v in namesakes if i < len(v)]
        wanted = next((c for c in candidates if c), None) or source_name(op.location)
        name = emitter.names.from_source(wanted, fallback)
        ctype = emitter.ctype_of(op, result)
        init = f" = {inits[i]}" if inits is not None else ""
        emitter.stmt(op, f"{ctype} {name}{init};")
        targets.append(Target(name, ctype))
        emitter.exprs[result] = name
    return targets


def _for(emitter, op) -> None:
    body = op.regions[0].blocks[0]
    operands = list(op.operands)
    lower, upper, step = (emitter.operand(v) for v in operands[:3])
    inits = [emitter.operand(v) for v in operands[3:]]
    iv, carried_args = body.arguments[0], list(body.arguments)[1:]
    yielded = list(terminator(body).operands)
    targets = _declare_targets(emitter, op, list(op.results), [carried_args, yielded],
                               inits, "acc")
    for arg, target in zip(carried_args, targets):
        emitter.exprs[arg] = target.name
    emitter.names.push_scope()
    # The loop over a work-group's programs (`opencl.program_loop`) wraps the whole
    # kernel: its variable is the program, and the loops inside keep their names.
    program_loop = "opencl.program_loop" in op.attributes
    depth_name = "program" if program_loop else _LOOP_VAR_NAMES[min(emitter.loop_depth, len(_LOOP_VAR_NAMES) - 1)]
    var = emitter.names.fresh(sanitize(source_name(iv.location) or "") or depth_name)
    emitter.exprs[iv] = var
    iv_ctype = emitter.ctype_of(op, iv)
    bound = f"{var} < {upper}"
    if "unsignedCmp" in op.attributes:
        iv_kind, _ = emitter.shape_of(op, iv)
        bound = f"{emitter.unsigned(var, iv_kind, 1)} < {emitter.unsigned(upper, iv_kind, 1)}"
    increment = f"++{var}" if step == "1" else f"{var} += {step}"
    emitter.open_stmt(op, f"for ({iv_ctype} {var} = {lower}; {bound}; {increment})")
    nesting = 0 if program_loop else 1
    emitter.loop_depth += nesting
    emitter.emit_region_block(body, targets)
    emitter.loop_depth -= nesting
    emitter.out.close()
    emitter.names.pop_scope()


def _if(emitter, op) -> None:
    results = list(op.results)
    yielded = list(terminator(op.regions[0].blocks[0]).operands)
    targets = _declare_targets(emitter, op, results, [yielded], None, "r")
    emitter.open_stmt(op, f"if ({emitter.operand(op.operands[0])})")
    emitter.emit_region_block(op.regions[0].blocks[0], targets)
    else_region = op.regions[1]
    if len(else_region.blocks) and _has_code(else_region.blocks[0]):
        emitter.out.close("} else {")
        emitter.out.depth += 1
        emitter.emit_region_block(else_region.blocks[0], targets)
    emitter.out.close()


def _while(emitter, op) -> None:
    before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    inits = [emitter.operand(v) for v in op.operands]
    carried = _declare_targets(
        emitter, op, list(before.arguments),
        [list(before.arguments), list(terminator(after).operands)], inits, "w")
    results = _declare_targets(
        emitter, op, list(op.results),
        [list(after.arguments), list(terminator(before).operands)[1:]], None, "r")
    for arg, target in zip(after.arguments, results):
        emitter.exprs[arg] = target.name
    emitter.open_stmt(op, "while (1)")
    # Both regions print into the one C block of the loop: one name scope.
    emitter.names.push_scope()
    emitter.emit_region_block(before, results, own_scope=False)
    emitter.emit_region_block(after, carried, own_scope=False)
    emitter.names.pop_scope()
    emitter.out.close()


def _yield(emitter, op) -> None:
    targets = emitter.targets[-1] if emitter.targets else []
    values = [emitter.operand(v) for v in op.operands]
    _assign_all(emitter, op, targets, values)


def _condition(emitter, op) -> None:
    operands = list(op.operands)
    _assign_all(emitter, op, emitter.targets[-1], [emitter.operand(v) for v in operands[1:]])
    emitter.stmt(op, f"if (!{atom(emitter.operand(operands[0]))}) break;")


def _assign_all(emitter, op, targets: list[Target], values: list[str]) -> None:
    """targets[i] = values[i] for all i at once. Assignments are ordered so that
    no target is overwritten while another assignment still reads it; a cycle
    (a swap of loop-carried values) saves one target in a temporary first."""
    pending = [(t, v) for t, v in zip(targets, values) if t.name != v]
    while pending:
        still_read = {v for _, v in pending}
        ready = next((p for p in pending if p[0].name not in still_read), None)
        if ready is None:
            target = pending[0][0]
            saved = emitter.names.fresh(f"{target.name}_prev")
            emitter.stmt(op, f"{target.ctype} {saved} = {target.name};")
            pending = [(t, saved if v == target.name else v) for t, v in pending]
            continue
        emitter.stmt(op, f"{ready[0].name} = {ready[1]};")
        pending.remove(ready)


def _return(emitter, op) -> None:
    if len(op.operands):
        raise error_at(op, "kernels return nothing")


HANDLERS = {
    "scf.for": _for,
    "scf.if": _if,
    "scf.while": _while,
    "scf.yield": _yield,
    "scf.condition": _condition,
    "func.return": _return,
}
