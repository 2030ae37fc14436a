"""Small queries on MLIR ops and values that every stage may use: a leaf, importing
nothing of the project's (tests/test_import_graph.py), so the Triton frontend, the
memref-stage rewrites, the emitter and the HLO frontend share them without importing
each other."""
from __future__ import annotations

import functools

from mlir import ir

# Ops that give another view of the same buffer.
VIEW_OPS = ("memref.subview", "memref.cast", "memref.reinterpret_cast",
            "memref.expand_shape", "memref.collapse_shape")


def op_of(op) -> ir.Operation:
    """The Operation of an OpView (walks over uses and blocks yield both kinds)."""
    return op.operation if hasattr(op, "operation") else op


def owner(value: ir.Value):
    """The op defining `value`, or None for a block argument."""
    defining = value.owner
    return defining if isinstance(defining, (ir.OpView, ir.Operation)) else None


def root_buffer(memref: ir.Value) -> ir.Value:
    """The buffer a memref view was taken from (through subviews and casts)."""
    while (defining := owner(memref)) is not None and defining.name in VIEW_OPS:
        memref = defining.operands[0]
    return memref


def position_in_block(op) -> int:
    """The index of `op` among the ops of its block: a walk over the block, so callers
    that only order ops of one block use `block_order` instead."""
    op = op_of(op)
    for i, other in enumerate(op.block.operations):
        if op_of(other) == op:
            return i
    raise ValueError("op is not in its block")


@functools.total_ordering
class BlockOrder:
    """A sort key that orders ops of one block as they stand in it. MLIR numbers a
    block's ops once and keeps the numbers until the block changes, so a comparison
    costs O(1) where `position_in_block` walks the block: sorting the ops of a large
    block by position would cost O(n^2)."""

    __slots__ = ("op",)

    def __init__(self, op):
        self.op = op_of(op)

    def __eq__(self, other) -> bool:
        return self.op == other.op

    def __lt__(self, other) -> bool:
        if self.op.block != other.op.block:  # as position_in_block compares them
            return position_in_block(self.op) < position_in_block(other.op)
        return self.op != other.op and self.op.is_before_in_block(other.op)

    __hash__ = None  # a key to compare, not to keep


def block_order(op) -> BlockOrder:
    """`op`'s place in its block, comparable with other ops' of the same block."""
    return BlockOrder(op)


def with_element_type(type_: ir.Type, element: ir.Type) -> ir.Type:
    """`type_` with `element` for its elements: a memref keeps its shape, layout and
    memory space, a vector its shape; any other type becomes `element`."""
    if isinstance(type_, ir.MemRefType):
        return ir.MemRefType.get(type_.shape, element, layout=type_.layout,
                                 memory_space=type_.memory_space)
    if isinstance(type_, ir.VectorType):
        return ir.VectorType.get(type_.shape, element)
    return element


def holds(op, predicate) -> bool:
    """Whether `op` or an op nested in it satisfies `predicate` (an `ir.Operation` in,
    a bool out); the walk stops at the first that does."""
    found = []

    def visit(inner):
        if predicate(inner):
            found.append(inner)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    op_of(op).walk(visit)
    return bool(found)


def constant_attr(value: ir.Value) -> ir.Attribute | None:
    """The value of the `arith.constant` defining `value`: a scalar's attribute, or the
    element of a dense splat; None for anything else (a block argument, another op, a
    dense constant of several values)."""
    defining = owner(value)
    if defining is None or defining.name != "arith.constant":
        return None
    attr = defining.attributes["value"]
    if isinstance(attr, ir.DenseElementsAttr):
        return attr.get_splat_value() if attr.is_splat else None
    return attr


def constant_index(value: ir.Value) -> int | None:
    """The value of a scalar `arith.constant` integer or index, else None (a splat is a
    vector, not an index)."""
    defining = owner(value)
    if defining is not None and defining.name == "arith.constant":
        attr = defining.attributes["value"]
        if isinstance(attr, ir.IntegerAttr):
            return attr.value
    return None


def ops_named(op, names: tuple[str, ...]) -> list:
    """The ops named `names` nested in `op` (as OpViews, in MLIR's walk order: inner
    ops first), collected before a caller rewrites them."""
    found = []

    def collect(inner):
        if inner.name in names:
            found.append(inner.opview)
        return ir.WalkResult.ADVANCE

    op_of(op).walk(collect)
    return found


def wrapping_abs(x: ir.Value) -> ir.Value:
    """`max(x, 0 - x)` at the insertion point: the absolute value with INT_MIN wrapping
    to itself, which read as unsigned is its true magnitude 2^(bits-1). A max, not the
    select `x < 0 ? 0 - x : x`: LLVM's instcombine turns that select into `llvm.abs`,
    which Oclgrind 21.10's interpreter lacks (it refuses the kernel)."""
    from mlir.dialects import arith
    return arith.maxsi(x, arith.subi(integer_zero(x.type), x))


def integer_zero(kind: ir.Type):
    """An `arith.constant` 0 of integer or integer-vector type `kind` (a splat), at the
    insertion point."""
    from mlir.dialects import arith
    if isinstance(kind, ir.VectorType):
        element = ir.VectorType(kind).element_type
        return arith.constant(kind, ir.DenseElementsAttr.get_splat(kind, ir.IntegerAttr.get(element, 0)))
    return arith.constant(kind, 0)


def named(name: str, loc: ir.Location | None = None) -> ir.Location:
    """`loc` (by default the current location) under a variable name: the emitter names
    the C variable of an op after its NameLoc. A name `loc` has already gives way."""
    loc = ir.Location.current if loc is None else loc
    while loc.is_a_name():
        loc = loc.child_loc
    return ir.Location.name(name, childLoc=loc)


def remap_operands(op, mapping: dict) -> None:
    """Replaces, in `op` and its regions, every operand found in `mapping`."""
    def visit(inner):
        for i, operand in enumerate(inner.operands):
            if operand in mapping:
                inner.operands[i] = mapping[operand]
        return ir.WalkResult.ADVANCE
    op.walk(visit)
