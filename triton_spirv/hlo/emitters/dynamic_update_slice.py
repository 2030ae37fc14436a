"""The in-place dynamic-update-slice emitter: the output buffer takes the operand
(a copy kernel, the loop emitter over the operand), then a second kernel writes only
the update's elements at the clamped start (XLA updates the operand's buffer in
place; here the output buffer plays that role)."""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf, tensor

from ..elemental import Elemental, const_index
from ..scalar_code import clamp_index, to_index
from .heroes import EmitterChoice
from .base import FusionBuilder, apply_linear, cdiv, cmp_lt, delinearize, linearize, to_storage
from .loop import emit_loop



def try_dynamic_update_slice(computation):
    root = computation.root
    if root.opcode != "dynamic-update-slice":
        return None
    forced = [root] + list(root.operands)
    return EmitterChoice("dynamic_update_slice", [root], forced,
                         lambda b: emit_dynamic_update_slice(b, root), "root is a dynamic-update-slice")


def emit_operand_copy(builder: FusionBuilder, root, operand) -> None:
    """Kernel 1: output = operand (the loop emitter with the operand as value)."""
    emit_loop(builder, value_fn=lambda r, idx, tensors: builder.root_values(operand, idx, tensors),
              suffix="copy", description="copy of the operand")


def emit_dynamic_update_slice(builder: FusionBuilder, root) -> None:
    operand, update = root.operands[0], root.operands[1]
    emit_operand_copy(builder, root, operand)
    size = update.shape.size
    threads = builder.target.threads
    blocks = cdiv(max(size, 1), threads)
    builder.report.launch.append(f"{builder.name}_update: grid {blocks} x local {threads} "
                                 f"work-items over the update ({size} elements)")
    with builder.kernel("update", threads) as k:
        linear = apply_linear([(k.block_id, threads), (k.thread_id, 1)])
        out = k.outputs[0]
        em = Elemental(builder, k.tensors, inline_all=True)
        op = scf.IfOp(cmp_lt(linear, const_index(size)), [out.type], has_else=True)
        with ir.InsertionPoint(op.then_block):
            idx = delinearize(linear, update.shape.dims)
            starts = []
            for s, d, u in zip(root.operands[2:], operand.shape.dims, update.shape.dims):
                v = builder.root_values(s, [], k.tensors)[0] if builder.partition.of(s) \
                    else em.scalar(s, [])
                starts.append(clamp_index(to_index(v, s.shape.element), 0, d - u))
            value = builder.root_values(update, idx, k.tensors)[0]
            out_idx = [arith.addi(i, s) for i, s in zip(idx, starts)]
            scf.yield_([tensor.insert(to_storage(value, root.shape.element), out,
                                      [linearize(out_idx, root.shape.dims)])])
        with ir.InsertionPoint(op.else_block):
            scf.yield_([out])
        k.finish([op.results[0]], blocks, "update")
