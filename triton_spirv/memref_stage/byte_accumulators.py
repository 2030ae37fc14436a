"""Quirk byte_accumulators_in_loops (Intel's CPU OpenCL runtime): reductions of 8-bit
integers accumulate in 32 bits.

Intel's backend dies ("Cannot emit physreg copy instruction", in its post-RA pseudo
instruction expansion, killing the process) on a loop that folds rows of an i8 tile
into an i8 accumulator 8 columns wide with `^`, `|` or `+` (`tl.xor_sum(x, axis=0)` of
a uint8 16x8 tile; 8 or 24 columns over 15 or 31 rows crash, other sizes, `&`,
max/min, `short` accumulators and -cl-opt-disable build; so do 16, 32, 48, 64 and 128
columns, so accumulators whose columns are a multiple of 16 stay bytes). The same loop
with an `int` accumulator builds everywhere and computes the same bytes: the combines
this pass widens (add, sub, mul, and, or, xor) give result bits that depend only on the
operands' bits at and below them, so folding zero-extended bytes in 32 bits and
truncating once at the end is exact. Reproducer: tests/test_intel_quirks.py.

It runs on linalg on tensors, before bufferization, so the accumulator buffer that
bufferization makes is an i32 one, and the truncation a loop of its own.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, tensor
# The generated op classes, not mlir.dialects.linalg (its OpDSL import costs a cold
# compile most of its start: docs/startup.md).
from mlir.dialects._linalg_ops_gen import GenericOp, YieldOp

from ..ir_helpers import ops_named

_LOW_BITS_COMBINES = ("arith.addi", "arith.subi", "arith.muli",
                      "arith.andi", "arith.ori", "arith.xori")
_WIDTH = 32
# Accumulators whose columns are a multiple of this build on that runtime (checked up to
# 128): the byte lanes of reductions in vectors (ttir_to_linalg/reductions.py) keep bytes.
_SAFE_COLUMNS = 16


def widen_byte_accumulators(module: ir.Module) -> int:
    """Every byte reduction of `module` (a linalg.generic with a reduction iterator, one
    i8 result whose columns are not a multiple of 16, i8 operands, a body of the
    low-bits combines) folds in i32 and is truncated after; returns how many."""
    reductions = [op for op in ops_named(module.operation, ("linalg.generic",))
                  if _is_byte_reduction(op)]
    for op in reductions:
        _widen(op)
    return len(reductions)


def _is_byte_reduction(op) -> bool:
    generic = op.opview
    kinds = [str(kind) for kind in generic.iterator_types]
    if not any("reduction" in kind for kind in kinds) or len(op.results) != 1:
        return False
    if not all(_is_byte_tensor(v.type) for v in op.operands):
        return False
    shape = ir.RankedTensorType(op.results[0].type).shape
    if shape and shape[-1] != ir.ShapedType.get_dynamic_size() and shape[-1] % _SAFE_COLUMNS == 0:
        return False    # 16, 32, 48, 64, 128 columns build (vector lanes of bytes among them)
    body = list(generic.regions[0].blocks[0].operations)
    return all(one.operation.name in _LOW_BITS_COMBINES for one in body[:-1])


def _is_byte_tensor(type_: ir.Type) -> bool:
    if not isinstance(type_, ir.RankedTensorType):
        return False
    element = type_.element_type
    return isinstance(element, ir.IntegerType) and element.width == 8


def _widen(op) -> None:
    generic = op.opview
    narrow_type = ir.RankedTensorType(op.results[0].type)
    with ir.InsertionPoint(op), op.location:
        wide = ir.IntegerType.get_signless(_WIDTH)
        wide_type = ir.RankedTensorType.get(narrow_type.shape, wide)
        init = _map_elements(generic.outputs[0], wide_type, lambda v: arith.extui(wide, v))
        folded = GenericOp(
            result_tensors=[wide_type], inputs=list(generic.inputs), outputs=[init],
            indexing_maps=generic.indexing_maps, iterator_types=generic.iterator_types)
        old_block = generic.regions[0].blocks[0]
        block = folded.regions[0].blocks.append(
            *[a.type for a in list(old_block.arguments)[:-1]], wide)
        with ir.InsertionPoint(block):
            _rebuild_wide_body(old_block, block, wide)
        narrowed = _map_elements(folded.result, narrow_type,
                                 lambda v: arith.trunci(narrow_type.element_type, v))
    op.results[0].replace_all_uses_with(narrowed)
    op.erase()


def _rebuild_wide_body(old_block, block, wide: ir.Type) -> None:
    """The old body's combines on zero-extended bytes: the inputs' arguments and any
    byte from outside the body are extended where they are used; the accumulator's
    argument is already wide."""
    arguments = list(block.arguments)
    mapping = {old: new for old, new in zip(list(old_block.arguments)[:-1], arguments[:-1])}
    accumulator = old_block.arguments[len(arguments) - 1]

    def wide_value(value):
        if value == accumulator:
            return arguments[-1]
        found = mapping.get(value, value)
        return found if found.type == wide else arith.extui(wide, found)

    for old in list(old_block.operations):
        operands = [wide_value(v) for v in old.operands]
        if old.operation.name == "linalg.yield":
            YieldOp(operands)
            return
        new = ir.Operation.create(old.operation.name, results=[wide], operands=operands,
                                  loc=old.location)
        mapping[old.results[0]] = new.results[0]


def _map_elements(source: ir.Value, result_type: ir.RankedTensorType, element) -> ir.Value:
    """`element` of each of `source`'s elements, as a parallel linalg.generic."""
    rank = result_type.rank
    identity = ir.AffineMapAttr.get(ir.AffineMap.get_identity(rank))
    parallel = ir.Attribute.parse("#linalg.iterator_type<parallel>")
    sizes = [tensor.dim(source, arith.constant(ir.IndexType.get(), i))
             if size == ir.ShapedType.get_dynamic_size() else size
             for i, size in enumerate(result_type.shape)]
    empty = tensor.EmptyOp(sizes, result_type.element_type).result
    mapped = GenericOp(result_tensors=[result_type], inputs=[source], outputs=[empty],
                              indexing_maps=ir.ArrayAttr.get([identity, identity]),
                              iterator_types=ir.ArrayAttr.get([parallel] * rank))
    block = mapped.regions[0].blocks.append(ir.RankedTensorType(source.type).element_type,
                                            result_type.element_type)
    with ir.InsertionPoint(block):
        YieldOp([element(block.arguments[0])])
    return mapped.result
