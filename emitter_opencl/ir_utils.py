"""Small queries on MLIR ops, blocks and types that several emitter modules share."""

from __future__ import annotations

from mlir import ir

from .views import View

DYNAMIC = ir.ShapedType.get_dynamic_size()


def walk(region: ir.Region):
    """Every op in `region`, nested ones included, in program order."""
    for block in region.blocks:
        for op in block.operations:
            yield op
            for inner in op.regions:
                yield from walk(inner)


def terminator(block: ir.Block):
    return list(block.operations)[-1]


def operand_segments(op) -> list[list[ir.Value]]:
    """Operands grouped by the op's `operandSegmentSizes`."""
    sizes = [int(s) for s in ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])]
    operands = list(op.operands)
    segments, start = [], 0
    for size in sizes:
        segments.append(operands[start:start + size])
        start += size
    return segments


def has_identity_layout(mt: ir.MemRefType) -> bool:
    """Whether a memref type has the default row-major layout."""
    layout = mt.layout
    if isinstance(layout, ir.AffineMapAttr):
        return ir.AffineMapAttr(layout).value == ir.AffineMap.get_identity(mt.rank)
    strides, offset = mt.get_strides_and_offset()
    return offset == 0 and tuple(strides) == View.contiguous(None, list(mt.shape)).strides
