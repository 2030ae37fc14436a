"""Unstructured control flow in TTIR -> scf, with upstream `lift-cf-to-scf`.

Triton prints an early `return` inside an `if` as `cf.cond_br`/`cf.br` between blocks of
the `tt.func`. The converter (converter.py) walks structured regions only, so functions
with more than one block are first lifted to `scf.if`/`scf.while` by the upstream pass.

That pass works on `func.func` and recognizes `func.return` as the function's exit (the
unregistered `tt.func`/`tt.return` have no interfaces it could use). So each function
with several blocks moves its blocks into a `func.func` with the same attributes, the
pass runs, and the single block left moves back into a `tt.func`. Everything in between
stays in generic form; the TTIR ops themselves are never rewritten.
"""
from __future__ import annotations

from mlir import ir, passmanager

LIFT_PIPELINE = "builtin.module(lift-cf-to-scf)"


class ControlFlowError(Exception):
    """Control flow that lift-cf-to-scf cannot make structured."""


def lift_control_flow(module: ir.Module) -> ir.Module:
    """Rewrites, in place, every `tt.func` of `module` with several blocks into one block
    of structured control flow. Functions with one block are left untouched."""
    functions = [op.operation for op in list(module.body.operations)
                 if op.operation.name == "tt.func"]
    for func_op in functions:
        _erase_unreachable_blocks(func_op)
    lifted = [_retarget(op, "func.func", "tt.return", "func.return")
              for op in functions if _has_several_blocks(op)]
    if not lifted:
        return module
    try:
        passmanager.PassManager.parse(LIFT_PIPELINE).run(module.operation)
    except ir.MLIRError as err:
        raise ControlFlowError(f"cannot turn the branches of this kernel into structured "
                               f"control flow (lift-cf-to-scf): {err}") from None
    for func_op in lifted:
        if _has_several_blocks(func_op):
            raise ControlFlowError(
                f"function {_name(func_op)} keeps unstructured control flow after "
                f"lift-cf-to-scf")
        _retarget(func_op, "tt.func", "func.return", "tt.return")
    return module


def _erase_unreachable_blocks(func_op: ir.Operation) -> None:
    """Triton's front end ends every function with results in a block no branch reaches
    (it returns ub.poison); lift-cf-to-scf rejects unreachable blocks."""
    region = func_op.regions[0]
    while True:
        dead = [block for block in list(region.blocks)[1:] if not list(block.predecessors)]
        if not dead:
            return
        # Blocks cannot be erased one by one from Python: move them into a scratch op
        # and erase that.
        with func_op.location, ir.InsertionPoint(func_op):
            scratch = ir.Operation.create("tt.unreachable_blocks", regions=1)
        for block in dead:
            block.append_to(scratch.regions[0])
        scratch.erase()


def _has_several_blocks(op: ir.Operation) -> bool:
    return len(op.regions) > 0 and len(op.regions[0].blocks) > 1


def _name(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def _retarget(op: ir.Operation, func_name: str, old_return: str,
              new_return: str) -> ir.Operation:
    """A new `func_name` op with `op`'s attributes and blocks (moved, not copied), whose
    `old_return` terminators became `new_return`; `op` is erased."""
    attributes = {name: op.attributes[name] for name in op.attributes}
    with op.location, ir.InsertionPoint(op):
        new = ir.Operation.create(func_name, regions=1, attributes=attributes)
    for block in list(op.regions[0].blocks):
        block.append_to(new.regions[0])
    for block in new.regions[0].blocks:
        terminator = block.operations[len(block.operations) - 1].operation
        if terminator.name == old_return:
            with terminator.location, ir.InsertionPoint(terminator):
                ir.Operation.create(new_return, operands=list(terminator.operands))
            terminator.erase()
    op.erase()
    return new
