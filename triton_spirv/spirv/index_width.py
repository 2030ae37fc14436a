"""`index` -> `i64` in a flattened kernel, so that every upstream SPIR-V conversion
agrees on the width of index arithmetic.

convert-gpu-to-spirv (which also converts arith, memref, func and vector) takes
`use-64bit-index`, but convert-scf-to-spirv and convert-cf-to-spirv always make `index`
32 bits wide; a loop bound computed by the first and used by the second would not
type-check, and 32-bit buffer addresses (memref.extract_aligned_pointer_as_index) would
be wrong. With every index value an `i64` before conversion, the loops carry `i64` and
nothing depends on the width those passes pick. `index` remains only where an op
requires it: the indices of memory accesses (an `arith.index_cast` right before them)
and the results of `gpu` id ops and buffer addresses (cast right after them).
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from .flatten import INDEXED_OPS

# Ops whose index results stay `index` (their own verifiers require it).
INDEX_PRODUCERS = ("gpu.block_id", "gpu.grid_dim", "gpu.thread_id", "gpu.block_dim",
                   "gpu.lane_id", "gpu.subgroup_id", "gpu.num_subgroups",
                   "memref.extract_aligned_pointer_as_index")


def _is_index(t: ir.Type) -> bool:
    return isinstance(t, ir.IndexType)


def widen_index(func) -> None:
    """Rewrites `func` (a func.func) in place; see the module docstring."""
    i64 = ir.IntegerType.get_signless(64)
    _widen_signature(func, i64)
    ops: list = []
    func.walk(lambda o: ops.append(o.opview) or ir.WalkResult.ADVANCE, ir.WalkOrder.PRE_ORDER)
    for op in ops[1:]:
        for region in op.regions:
            for block in region.blocks:
                for arg in block.arguments:
                    if _is_index(arg.type):
                        arg.set_type(i64)
        _widen_op(op, i64)


def _widen_signature(func, i64) -> None:
    fn_type = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    inputs = [i64 if _is_index(t) else t for t in fn_type.inputs]
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, fn_type.results))
    for arg in func.regions[0].blocks[0].arguments:
        if _is_index(arg.type):
            arg.set_type(i64)


def _widen_op(op, i64) -> None:
    name = op.name
    if name in INDEXED_OPS:
        _index_operands(op, *INDEXED_OPS[name])
        return
    if name in INDEX_PRODUCERS:
        with ir.InsertionPoint.after(op), op.location:
            wide = arith.index_cast(i64, op.result)
        op.result.replace_all_uses_except(wide, wide.owner.operation)
        return
    if name == "arith.constant" and _is_index(op.result.type):
        with ir.InsertionPoint(op), op.location:
            wide = arith.constant(i64, ir.IntegerAttr(op.attributes["value"]).value)
        op.result.replace_all_uses_with(wide)
        op.erase()
        return
    if name in ("arith.index_cast", "arith.index_castui"):
        _integer_cast(op, i64, signed=name == "arith.index_cast")
        return
    for result in op.results:
        if _is_index(result.type):
            result.set_type(i64)


def _index_operands(op, memref_pos: int, first_index: int) -> None:
    """The access's (one, flattened) index back to `index`, cast right before it."""
    value = op.operands[first_index]
    if not _is_index(value.type):
        with ir.InsertionPoint(op), op.location:
            op.operands[first_index] = arith.index_cast(ir.IndexType.get(), value)


def _integer_cast(op, i64, signed: bool) -> None:
    """index_cast between an integer and (now) i64: an ext/trunc, or nothing."""
    source = op.operands[0]
    target = i64 if _is_index(op.result.type) else op.result.type
    src_width = ir.IntegerType(source.type).width if not _is_index(source.type) else 64
    dst_width = ir.IntegerType(target).width
    with ir.InsertionPoint(op), op.location:
        if src_width == dst_width:
            replacement = source
        elif src_width < dst_width:
            replacement = arith.extsi(target, source) if signed else arith.extui(target, source)
        else:
            replacement = arith.trunci(target, source)
    op.result.replace_all_uses_with(replacement)
    op.erase()
