"""Tuples, nested or not, between the host and the kernels.

Kernels see flat lists of arrays: a fusion's outputs are the leaves of its result shape
in order, its parameters arrays. HLO nests tuples freely: a multi-output fusion of
variadic reductions returns `((f32[N], s32[N]), (f32[N], s32[N]))`, an ENTRY takes and
returns tuples of tuples, and `get-tuple-element` of `get-tuple-element` picks a leaf.

On the host a tuple value is a Python tuple (nested like its shape), so
`get-tuple-element`, `tuple`, `while` and `call` work at any depth. Here:
  * `leaves` / `nest`: a nested value <-> its flat list of leaves, following a shape;
  * `flatten_fused_tuples`: the rewrite that gives a fused computation only array
    parameters and a flat root tuple, before it is compiled (the kernels' view).
"""
from __future__ import annotations

from .errors import HloUnsupportedError, where
from .reader import HloInstruction
from .shapes import Shape


def leaves(value) -> list:
    """The arrays of a nested tuple value, depth first."""
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in leaves(v)]
    return [value]


def nest(flat: list, shape: Shape):
    """Flat leaves -> the value of `shape` (nested tuples), consuming them in order."""
    items = iter(flat)

    def build(s: Shape):
        if s.is_tuple:
            return tuple(build(t) for t in s.tuple_shapes)
        return next(items)
    value = build(shape)
    rest = sum(1 for _ in items)
    if rest:
        raise ValueError(f"{rest} leaves left over after nesting into {shape}")
    return value


def leaf_paths(shape: Shape, prefix: tuple[int, ...] = ()) -> list[tuple[int, ...]]:
    """The shape index (XLA's `{0,1}`) of each leaf of `shape`, in leaf order."""
    if not shape.is_tuple:
        return [prefix]
    return [p for k, s in enumerate(shape.tuple_shapes) for p in leaf_paths(s, prefix + (k,))]


# -- fused computations --------------------------------------------------------


def flatten_fused_tuples(computation) -> None:
    """Rewrites a fused computation in place so that the kernels see flat tuples:

    * a tuple-shaped parameter becomes one parameter per leaf (numbered in leaf order,
      the order in which the host passes `leaves(operand)`), and each chain of
      `get-tuple-element`s that reaches a leaf is replaced by that leaf's parameter;
    * a root `tuple` whose operands are `tuple`s becomes one flat tuple of their
      operands (tuple-shaped non-tuple roots, like variadic reductions, stay: the
      emitters write each of their leaves).

    The fusion's result leaves keep their order, so the host nests them back by the
    fusion instruction's shape. Idempotent; a computation without tuples is unchanged."""
    _flatten_parameters(computation)
    _flatten_root(computation)


def _flatten_parameters(computation) -> None:
    params = computation.parameters
    if not any(p.shape.is_tuple for p in params):
        return
    number = 0
    replaced: dict = {}
    for p in params:
        if not p.shape.is_tuple:
            p.parameter_number = number
            number += 1
            continue
        new = []
        for path, leaf_shape in zip(leaf_paths(p.shape), p.shape.leaves()):
            leaf = HloInstruction(f"{p.name}.{'.'.join(map(str, path))}", "parameter",
                                  leaf_shape, [], {}, p.line, p.column,
                                  parameter_number=number, computation=computation)
            number += 1
            new.append(leaf)
            replaced[(p, path)] = leaf
        at = computation.instructions.index(p)
        computation.instructions[at:at] = new
        _replace_leaf_reads(p, replaced)
        computation.instructions.remove(p)


def _replace_leaf_reads(param, replaced) -> None:
    """Points every user of a leaf reached by get-tuple-elements from `param` at the
    leaf's parameter; anything else that reads a tuple is not lowered."""
    stack = [(param, ())]
    while stack:
        value, path = stack.pop()
        for user in list(value.users):
            if user.opcode != "get-tuple-element":
                raise HloUnsupportedError(
                    f"{where(user)}: reads the tuple parameter %{param.name} whole; only "
                    f"get-tuple-element of a tuple parameter is lowered in a fusion")
            sub = path + (user.int_attr("index"),)
            if user.shape.is_tuple:
                stack.append((user, sub))
                continue
            _forward(user, replaced[(param, sub)])


def _forward(old: HloInstruction, new: HloInstruction) -> None:
    """Replaces every use of `old` by `new` and drops `old` from its computation."""
    for user in old.users:
        user.operands = [new if o is old else o for o in user.operands]
        if user not in new.users:
            new.users.append(user)
    if old.is_root:
        new.is_root, old.is_root = True, False
    old.users = []
    _drop_unused(old)


def _drop_unused(instr: HloInstruction) -> None:
    """Removes an instruction nothing reads, and the get-tuple-elements and tuple
    parameters that fed only it."""
    if instr.users or instr.is_root:
        return
    if instr in instr.computation.instructions:
        instr.computation.instructions.remove(instr)
    for operand in instr.operands:
        if instr in operand.users:
            operand.users.remove(instr)
        if operand.opcode == "get-tuple-element":
            _drop_unused(operand)


def _flatten_root(computation) -> None:
    root = computation.root
    if root.opcode != "tuple" or not any(o.opcode == "tuple" for o in root.operands):
        return
    flat = []
    stack = list(reversed(root.operands))
    while stack:
        item = stack.pop()
        if item.opcode == "tuple":
            stack.extend(reversed(item.operands))
        else:
            flat.append(item)
    for operand in root.operands:
        if root in operand.users:
            operand.users.remove(root)
    root.operands = flat
    for operand in flat:
        operand.users.append(root)
    root.shape = Shape(tuple_shapes=tuple(o.shape for o in flat))
