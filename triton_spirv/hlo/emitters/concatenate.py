"""The concatenate emitter: the root is a concatenate. Work-items walk the elements of
the largest operand once; for each operand that has the element, its value (the
operand's function) is written at the operand's offset along the concatenated
dimension. Every operand is read coalesced and exactly once."""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf, tensor

from ..elemental import const_index
from ..indexing import operand_map
from .heroes import EmitterChoice
from .base import FusionBuilder, apply_linear, cdiv, cmp_lt, delinearize, linearize, to_storage



def try_concatenate(computation):
    root = computation.root
    if root.opcode != "concatenate":
        return None
    return EmitterChoice("concatenate", [root], [root] + list(root.operands),
                         lambda b: emit_concatenate(b, root), "root is a concatenate")


def emit_concatenate(builder: FusionBuilder, root) -> None:
    axis = root.dimensions()[0]
    threads = builder.target.threads
    largest = max(o.shape.size for o in root.operands)
    blocks = cdiv(largest, threads)
    builder.report.launch.append(f"{builder.name}: grid {blocks} x local {threads} "
                                 f"work-items over the largest operand ({largest} elements)")
    for k in range(len(root.operands)):
        builder.report.maps.append(f"operand {k}: {operand_map(root, k)}")
    with builder.kernel("", threads) as k:
        linear = apply_linear([(k.block_id, threads), (k.thread_id, 1)])
        out = k.outputs[0]
        offset = 0
        for operand in root.operands:
            dims = operand.shape.dims
            if operand.shape.size == 0:
                continue
            ok = cmp_lt(linear, const_index(operand.shape.size))
            op = scf.IfOp(ok, [out.type], has_else=True)
            with ir.InsertionPoint(op.then_block):
                idx = delinearize(linear, dims)
                value = builder.root_values(operand, idx, k.tensors)[0]
                out_idx = list(idx)
                out_idx[axis] = arith.addi(idx[axis], const_index(offset))
                scf.yield_([tensor.insert(to_storage(value, root.shape.element), out,
                                          [linearize(out_idx, root.shape.dims)])])
            with ir.InsertionPoint(op.else_block):
                scf.yield_([out])
            out = op.results[0]
            offset += dims[axis]
        k.finish([out], blocks, "concatenate")
