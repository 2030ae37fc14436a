"""What the emitters share about a fusion's heroes: the choice an emitter's `try_*`
returns, and whether a root reads its heroes through elementwise ops only. Below the
emitters and their chooser (emitters/__init__.py), which imports the emitters."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..elementwise import is_elementwise


@dataclass
class EmitterChoice:
    kind: str
    heroes: list = field(default_factory=list)
    forced_roots: list = field(default_factory=list)
    emit: Callable = None
    reason: str = ""


def depends_on(instr, targets: set, memo: dict | None = None) -> bool:
    memo = {} if memo is None else memo
    if instr in targets:
        return True
    if instr in memo:
        return memo[instr]
    memo[instr] = False
    result = any(depends_on(o, targets, memo) for o in instr.operands)
    memo[instr] = result
    return result


def reaches_through_elementwise(root, heroes: set) -> bool:
    """Whether every path from `root` to a hero passes through elementwise ops only
    (the epilogue reads each hero at the root's own index)."""
    memo: dict = {}

    def ok(instr) -> bool:
        if instr in heroes:
            return True
        if not depends_on(instr, heroes, memo):
            return True
        if not is_elementwise(instr):
            return False
        if any(o.shape.dims != instr.shape.dims for o in instr.operands
               if depends_on(o, heroes, memo)):
            return False
        return all(ok(o) for o in instr.operands)
    return depends_on(root, heroes, memo) and ok(root)
