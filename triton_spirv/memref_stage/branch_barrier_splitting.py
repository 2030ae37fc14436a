"""Quirk barrier_in_uniform_branch (PoCL 3.1): no barrier inside a branch.

PoCL's work-group compiler (its default `loopvec` method) loses work between barriers
inside a branch: an early-returning program's stores after a reduction never land, or
land with values read as zeros from a `__local` tile (tests/test_pocl_early_return_store.py,
tests/test_device_quirks.py::test_early_return_rows). The same kernel with every barrier
at the function's top level (or in loops there) computes right, so on that driver a
uniform `scf.if` holding barriers is split at them:

    if (c) { A; barrier; B }        if (c) { A } else { C }
    else   { C; barrier; D }   ->   barrier;
                                    if (c) { B } else { D }

Each stretch between barriers becomes a guarded `scf.if`; the barriers of the two
branches pair up (a barrier both reach keeps the wider fence). A loop holding barriers
leaves the branch whole, its trip count made zero where the branch is not taken
(upper bound `c ? ub : lb`); then the branches' stretches are not paired: the taken
branch's sequence runs, the other's stretches are skipped and its loops run no trip.
A value one stretch defines and a later one (or a loop, or the `scf.if`'s result)
uses leaves its stretch's `scf.if` as a result (a zero where the stretch is not taken,
never read); an i1 leaves it as an i8, since PoCL loses a `bool` that both branches
set and a work-item keeps across a barrier (tests/test_pocl_early_return_store.py). The conditions are uniform (barriers in a branch require it), so every
work-item meets every barrier as before, in the same order.

Branches are split innermost first. One whose stretches pass on a buffer (a memref a
stretch defines) or that holds another barrier-holding op (a while loop) stays as it
is; `double-barriers` (work_group_barriers.py) then handles it.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ..ir_helpers import VIEW_OPS, block_order, op_of, owner
from .work_group_barriers import has_barrier
from .work_group_sharing import LOCAL_FENCE


def split_barrier_branches(module: ir.Module) -> int:
    """Splits every `scf.if` holding barriers at its barriers; returns how many."""
    split = 0
    for func in module.body.operations:
        for branch in _barrier_branches_innermost_first(func):
            split += _split(branch)
    return split


def _barrier_branches_innermost_first(op) -> list:
    found = []

    def visit(inner):
        if inner.name == "scf.if" and has_barrier(inner):
            found.append(inner)
        return ir.WalkResult.ADVANCE
    op_of(op).walk(visit, ir.WalkOrder.POST_ORDER)
    return found


class _Unsplittable(Exception):
    pass


def _split(branch: ir.Operation) -> int:
    """Splits one `scf.if` (its nested ones are split already); 0 where it stays."""
    for region in branch.regions:
        _hoist_buffers(region, branch)
    arms = [_arm(region) for region in branch.regions]
    try:
        for arm in arms:
            _check(arm)
    except _Unsplittable:
        return 0
    condition = branch.operands[0]
    with branch.location, ir.InsertionPoint(branch):
        conditions = _Conditions(condition)
        if all(kind != "loop" for arm in arms for kind, _ in arm["items"]):
            _emit_paired(conditions, arms)
        else:
            _emit_in_turn(conditions, arms[0], taken=True)
            if _does_work(arms[1]):
                _emit_in_turn(conditions, arms[1], taken=False)
        results = _results(branch, condition, arms)
    for old, new in zip(branch.results, results):
        old.replace_all_uses_with(new)
    branch.erase()
    return 1


def _hoist_buffers(region: ir.Region, branch: ir.Operation) -> None:
    """Buffers a branch allocates and views it takes move before it, with the pure
    index arithmetic they need: where a buffer lives does not depend on the branch
    (`__local` ones live at kernel scope in OpenCL C anyway), and a stretch then
    passes on no buffer. A buffer whose shape needs a loaded value stays."""
    if not region.blocks:
        return
    for op in [op_of(op) for op in region.blocks[0].operations]:
        if any(isinstance(r.type, ir.MemRefType) for r in op.results):
            needed = _pure_slice(op, branch)
            for one in sorted(needed or (), key=block_order):
                one.move_before(branch)


def _pure_slice(op: ir.Operation, branch: ir.Operation) -> list | None:
    """`op` and the ops of `branch` it depends on, where all are pure and without
    regions; else None."""
    slice_, pending = [], [op]
    while pending:
        one = pending.pop()
        if one in slice_:
            continue
        if one.regions or not _is_pure(one.name):
            return None
        slice_.append(one)
        for operand in one.operands:
            defining = owner(operand)
            if defining is None:
                if _inside(op_of(operand.owner.owner), branch):
                    return None
            elif _inside(op_of(defining), branch):
                pending.append(op_of(defining))
    return slice_


def _is_pure(name: str) -> bool:
    """Whether an op may run where its branch is not taken: integer division could
    trap there (on a divisor the branch excludes)."""
    return name in _ALLOCATIONS or name in VIEW_OPS or name in _INDEX_OPS or \
        name.startswith("arith.") and not any(d in name for d in ("div", "rem"))


_ALLOCATIONS = ("memref.alloc", "memref.alloca")
_INDEX_OPS = ("affine.apply", "affine.min", "affine.max", "memref.dim")


def _arm(region: ir.Region) -> dict:
    """A branch's items: ("run", ops without barriers), ("barrier", op), ("loop", a
    loop holding barriers), and the values it yields."""
    if not region.blocks:
        return {"items": [], "terminator": None}
    ops = [op_of(op) for op in region.blocks[0].operations]
    items, run = [], []
    for op in ops[:-1]:
        if op.name == "gpu.barrier":
            items += [("run", run), ("barrier", op)]
            run = []
        elif has_barrier(op):
            items += [("run", run), ("loop", op)]
            run = []
        else:
            run.append(op)
    items.append(("run", run))
    return {"items": items, "terminator": ops[-1]}


def _does_work(arm: dict) -> bool:
    return any(kind != "run" or item for kind, item in arm["items"])


def _check(arm: dict) -> None:
    for kind, item in arm["items"]:
        if kind == "loop" and item.name != "scf.for":
            raise _Unsplittable(item.name)
        if kind == "run":
            for value in _escaping(item):
                _zero_type_check(value.type)


def _zero_type_check(type_: ir.Type) -> None:
    if not (isinstance(type_, (ir.IntegerType, ir.IndexType, ir.VectorType))
            or _is_float(type_)):
        raise _Unsplittable(str(type_))


def _is_float(type_: ir.Type) -> bool:
    return isinstance(type_, ir.FloatType)


def _escaping(run: list) -> list:
    """The results of `run`'s ops used by an op outside `run` (nested ones count as
    their enclosing op of `run`'s block)."""
    inside = set()
    for op in run:
        inside.add(op)
    escaping = []
    for op in run:
        for result in op.results:
            if any(_enclosing(use.owner, op.block) not in inside for use in result.uses):
                escaping.append(result)
    return escaping


def _enclosing(op, block: ir.Block) -> ir.Operation:
    """The op of `block` that is or holds `op` (`op` itself where it is elsewhere)."""
    op = op_of(op)
    current = op
    while current is not None and current.block != block:
        current = current.parent
        if current is not None and current.name == "func.func":
            return op
    return current if current is not None else op


class _Conditions:
    """A branch's condition and its negation, made once where first needed (at the
    insertion point then: before every stretch that uses it)."""

    def __init__(self, condition: ir.Value):
        self.taken = condition
        self._not_taken = None

    @property
    def not_taken(self) -> ir.Value:
        if self._not_taken is None:
            true = arith.constant(ir.IntegerType.get_signless(1), 1)
            self._not_taken = arith.xori(self.taken, true)
        return self._not_taken

    def of(self, taken: bool) -> ir.Value:
        return self.taken if taken else self.not_taken


def _emit_paired(conditions: _Conditions, arms: list) -> None:
    """Stretch i of each branch in one `scf.if`, then the i-th barriers as one."""
    runs = [[item for kind, item in arm["items"] if kind == "run"] for arm in arms]
    barriers = [[item for kind, item in arm["items"] if kind == "barrier"] for arm in arms]
    for i in range(max(len(r) for r in runs)):
        pair = [r[i] if i < len(r) else [] for r in runs]
        _guarded(conditions, pair[0], pair[1])
        _move_barriers([b[i] for b in barriers if i < len(b)])


def _emit_in_turn(conditions: _Conditions, arm: dict, taken: bool) -> None:
    """One branch's items in order (`taken`: the then-branch): stretches guarded,
    barriers as they are, loops with no trip where the branch is not taken."""
    for kind, item in arm["items"]:
        if kind == "run":
            if taken:
                _guarded(conditions, item, [])
            else:
                _guarded(conditions, [], item)
        elif kind == "barrier":
            _move_barriers([item])
        else:
            _move_loop(conditions.of(taken), item)


def _guarded(conditions: _Conditions, then_ops: list, else_ops: list) -> None:
    """`scf.if taken { then_ops } else { else_ops }` at the insertion point (an
    `scf.if` on the negation where only `else_ops` do work); the values either side
    passes on become its results."""
    condition = conditions.taken
    if not then_ops:
        if not else_ops:
            return
        condition, then_ops, else_ops = conditions.not_taken, else_ops, []
    passed = [_escaping(then_ops), _escaping(else_ops)]
    values = passed[0] + passed[1]
    types = [_carried_type(v.type) for v in values]
    guard = scf.IfOp(condition, types, has_else=bool(else_ops or types))
    sides = [(guard.then_block, then_ops, 0)]
    if else_ops or types:
        sides.append((guard.else_block, else_ops, 1))
    for block, ops, side in sides:
        for op in ops:
            block.append(op)
        with ir.InsertionPoint(block):
            scf.YieldOp([_carried(v) if side == j else _zero(_carried_type(v.type))
                         for j in (0, 1) for v in passed[j]])
    for value, result in zip(values, guard.results):
        _replace_uses_outside(value, _uncarried(result, value.type), op_of(guard))


# PoCL loses an i1 a work-item keeps across a barrier in a variable both branches set
# (a `bool` result of the guard): such values cross as i8.
_I1_CARRIER_BITS = 8


def _carried_type(type_: ir.Type) -> ir.Type:
    if isinstance(type_, ir.IntegerType) and type_.width == 1:
        return ir.IntegerType.get_signless(_I1_CARRIER_BITS)
    return type_


def _carried(value: ir.Value) -> ir.Value:
    """`value` as it crosses (inside the stretch's branch, before its yield)."""
    if _carried_type(value.type) != value.type:
        return arith.extui(_carried_type(value.type), value)
    return value


def _uncarried(result: ir.Value, type_: ir.Type) -> ir.Value:
    """A guard's result as the value it carries (right after the guard)."""
    if result.type == type_:
        return result
    with ir.InsertionPoint.after(op_of(result.owner)):
        return arith.trunci(type_, result)


def _replace_uses_outside(value: ir.Value, new: ir.Value, guard: ir.Operation) -> None:
    for use in list(value.uses):
        if not _inside(op_of(use.owner), guard):
            use.owner.operands[use.operand_number] = new


def _inside(op: ir.Operation, ancestor: ir.Operation) -> bool:
    while op is not None:
        if op == ancestor:
            return True
        if op.name == "func.func":
            return False
        op = op.parent
    return False


def _zero(type_: ir.Type) -> ir.Value:
    if isinstance(type_, ir.VectorType):
        element = type_.element_type
        zero = ir.FloatAttr.get(element, 0.0) if _is_float(element) \
            else ir.IntegerAttr.get(element, 0)
        return arith.constant(type_, ir.DenseElementsAttr.get_splat(type_, zero))
    if _is_float(type_):
        return arith.constant(type_, 0.0)
    return arith.constant(type_, 0)


def _move_barriers(barriers: list) -> None:
    """The barriers at one point of both branches as one, before the branch: the
    wider fence of the two."""
    if not barriers:
        return
    kept = barriers[0]
    kept.move_before(_insertion_anchor())
    for other in barriers[1:]:
        if LOCAL_FENCE not in other.attributes and LOCAL_FENCE in kept.attributes:
            del kept.attributes[LOCAL_FENCE]
        other.erase()


def _move_loop(condition: ir.Value, loop: ir.Operation) -> None:
    """`loop` before the branch, with no trip where `condition` is false."""
    lower, upper = loop.operands[0], loop.operands[1]
    loop.operands[1] = arith.select(condition, upper, lower)
    loop.move_before(_insertion_anchor())


def _insertion_anchor() -> ir.Operation:
    """The op the current insertion point inserts before (the branch being split)."""
    return op_of(ir.InsertionPoint.current.ref_operation)


def _results(branch: ir.Operation, condition: ir.Value, arms: list) -> list:
    """The branch's results, chosen between its arms' yielded values."""
    if not branch.results:
        return []
    yielded = [list(arm["terminator"].operands) for arm in arms]
    values = []
    for then_value, else_value in zip(*yielded):
        values.append(arith.select(condition, then_value, else_value))
    return values
