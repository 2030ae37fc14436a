"""`memref.copy` as loops of loads and stores, in the forms the SPIR-V stage gives its
copies (upstream's SPIR-V dialect has no OpGroupAsyncCopy to print a work-group copy
with, and its conversions do not legalize `memref.copy`).

    lower_copies(module)

A copy reached by every work-item of a group of several becomes a copy shared by them
between barriers, as `async_work_group_copy` + `wait_group_events` would be
(copy_loops.py, `spread_copy`): work-item w moves elements w, w + group size, ...
Whoever runs any other copy does all of it, with no barrier (copy_loops.py,
`copy_nest`): in kernels of one work-item per group, inside a single-work-item
section (an `scf.if` marked `opencl.single_work_item` by work_group_sharing.py), under
a branch or loop whose condition or bounds depend on the work-item id, between views
that depend on it (an iteration of a distributed loop, whose rounds every work-item
runs alike) and into or out of a work-item's private array (`memref.alloca`). Rows with
unit stride on both sides, of one element type with a vector form, that can reach 16
elements move in vectors of 16 (Intel's compiler vectorizes only explicit vectors in a
kernel of one work-item per group; the OpenCL C emitter prints the same for its
vector copies), the rest element by element.

The loops index the copy's views; the SPIR-V stage's flattening turns their accesses
into index arithmetic on the root buffers like every other access.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, memref

from ..ir_helpers import owner, root_buffer
from .copy_loops import copy_nest, spread_copy
from .work_group_sharing import SINGLE_WORK_ITEM

VECTOR_WIDTH = 16
VECTOR_ELEMENTS = ("f16", "f32", "f64", "i8", "i16", "i32", "i64")


def lower_copies(module: ir.Module) -> ir.Module:
    """Replaces every `memref.copy` of `module`'s kernels by loops (module docstring)."""
    for op in module.body.operations:
        if op.operation.name == "func.func":
            _lower_kernel_copies(op.operation)
    return module


def _lower_kernel_copies(func) -> None:
    copies = []

    def collect(op):
        if op.name == "memref.copy":
            copies.append(op.opview)
        return ir.WalkResult.ADVANCE

    func.walk(collect, ir.WalkOrder.PRE_ORDER)
    shared = _work_items(func) > 1
    divergence = Divergence()
    for copy in copies:
        source, target = copy.operands[0], copy.operands[1]
        with ir.InsertionPoint(copy), copy.location:
            sizes = _sizes(source, target)
            if shared and not divergence.reaches_some(copy) and \
                    not any(divergence.depends_on_work_item(v) for v in (source, target)) and \
                    not any(_is_private(v) for v in (source, target)):
                spread_copy(source, target, sizes)
            else:
                width = VECTOR_WIDTH if _vector_rows(source, target, sizes[-1] if sizes else None) \
                    else None
                copy_nest(source, target, sizes, width)
        copy.operation.erase()


def _work_items(func) -> int:
    if "opencl.local_size" not in func.attributes:
        return 1
    count = 1
    for size in ir.DenseI64ArrayAttr(func.attributes["opencl.local_size"]):
        count *= size
    return count


def _sizes(source: ir.Value, target: ir.Value) -> list:
    """The copy's extent per dimension: an int where either side's type knows it, else
    the target's run-time size (the source's where the target is a whole kernel
    argument)."""
    sizes = []
    for dim, (a, b) in enumerate(zip(ir.MemRefType(source.type).shape,
                                     ir.MemRefType(target.type).shape)):
        if not ir.ShapedType.is_dynamic_size(a):
            sizes.append(a)
        elif not ir.ShapedType.is_dynamic_size(b):
            sizes.append(b)
        else:
            side = source if isinstance(target, ir.BlockArgument) else target
            sizes.append(memref.dim(side, arith.constant(ir.IndexType.get(), dim)))
    return sizes


def _is_private(view: ir.Value) -> bool:
    defining = owner(root_buffer(view))
    return defining is not None and defining.name == "memref.alloca"


def _vector_rows(source: ir.Value, target: ir.Value, count) -> bool:
    """Whether rows of `count` elements move as vectors: unit stride on both sides, one
    element type with a vector form, rows that can reach VECTOR_WIDTH (`count` itself,
    else the row pitch of each side whose pitch is known)."""
    types = [ir.MemRefType(v.type) for v in (source, target)]
    if count is None or types[0].element_type != types[1].element_type or \
            str(types[0].element_type) not in VECTOR_ELEMENTS:
        return False
    strides = [t.get_strides_and_offset()[0] for t in types]
    if any(s[-1] != 1 for s in strides):
        return False
    if isinstance(count, int):
        return count >= VECTOR_WIDTH
    pitches = [s[-2] for s in strides if len(s) >= 2 and not ir.ShapedType.is_dynamic_size(s[-2])]
    return all(pitch >= VECTOR_WIDTH for pitch in pitches)


class Divergence:
    """Which ops only some work-items of a group reach: those inside a single-work-item
    section, or under an `scf.if`/`scf.while`/`scf.for` whose operands (condition,
    bounds) depend on `gpu.thread_id`. Values loaded at the same index by every
    work-item are the same for all (the memref stage's sharing reads uniform values
    redundantly), so a branch on them is taken by the whole group."""

    def __init__(self):
        self.known: dict = {}       # Value -> whether it depends on the work-item id

    def reaches_some(self, op) -> bool:
        parent = op.parent
        while parent is not None and parent.name != "func.func":
            if SINGLE_WORK_ITEM in parent.attributes:
                return True
            if parent.name in ("scf.if", "scf.while", "scf.for") and \
                    any(self.depends_on_work_item(v) for v in _control_operands(parent)):
                return True
            parent = parent.parent
        return False

    def depends_on_work_item(self, value: ir.Value) -> bool:
        if value in self.known:
            return self.known[value]
        self.known[value] = False       # cycles through loop-carried values
        if isinstance(value, ir.OpResult):
            op = value.owner
            found = op.name == "gpu.thread_id" or \
                any(self.depends_on_work_item(v) for v in _control_operands(op))
        else:       # a block argument: the induction variable or iter_arg of a loop
            op = value.owner.owner
            found = op is not None and op.name != "func.func" and \
                any(self.depends_on_work_item(v) for v in _control_operands(op))
        self.known[value] = found
        return found


def _control_operands(op) -> list:
    """The operands of `op`, and for an `scf.while` the condition that ends it."""
    operands = list(op.operands)
    if op.name == "scf.while":
        operands.append(op.regions[0].blocks[0].operations[-1].operands[0])
    return operands
