"""bf16 in memory as i16, and 16-bit float scalar arguments as f32 (the launcher's ABI).

SPIR-V 1.0 has no bfloat16 type (upstream's type converter would widen bf16 buffers to
f32, reading the wrong bytes). Like the OpenCL C emitter (ushort buffers, bit shifts),
bf16 buffers become i16 buffers: a load becomes an i16 load and a bitcast to bf16, a
store a bitcast to i16 and an i16 store. Upstream passes then take the bf16 values away:
arith-emulate-unsupported-floats computes bf16 arithmetic in f32, and
arith-expand{include-bf16} turns bf16 <-> f32 conversions into integer bit operations
(BF16_PASSES, run by lower.py), after which the bitcasts fold. A bf16 value that `scf.if`
or `scf.for` carries (the element a masked scalar load yields, or `other`; a loop-carried
value) is not arithmetic, so those passes leave it: it is carried as i16 (and a select
of bf16 values selects i16 ones), with bitcasts at the yields and after the op, which
fold away around loads, stores and constants.

The launcher passes f16 and bf16 scalar arguments as `float` (docs/memref-stage.md), so
such an argument becomes f32 and is truncated at the kernel's entry.

f16 work-group tiles hold f32, as the OpenCL C emitter's `__local float` arrays do
(docs/memref-stage.md): an element is widened once when it is stored, not at every
load (a dot's operand tiles are read many times each: tutorial 03 with f16 inputs ran
at half the speed of f32 on Intel's runtime). The values are the same: every stored
value is an f16, exact in f32.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from emitter_opencl.locations import source_line

from ..ir_helpers import with_element_type
from .flatten import error_at

BF16_PASSES = ("arith-emulate-unsupported-floats{source-types=bf16 target-type=f32}",
               "arith-expand{include-bf16=true}", "canonicalize")
LOADS = ("memref.load", "vector.load")
STORES = ("memref.store", "vector.store")          # the stored value is operand 0
CARRIERS = ("scf.if", "scf.for")                   # ops whose regions yield their results


def _bf16_to_i16(t: ir.Type) -> ir.Type | None:
    """The same type with i16 for bf16 elements, or None when `t` has no bf16."""
    i16 = ir.IntegerType.get_signless(16)
    if isinstance(t, ir.BF16Type):
        return i16
    if isinstance(t, ir.MemRefType) and isinstance(t.element_type, ir.BF16Type):
        return ir.MemRefType.get(t.shape, i16, memory_space=t.memory_space, loc=ir.Location.unknown())
    if isinstance(t, ir.VectorType) and isinstance(t.element_type, ir.BF16Type):
        return ir.VectorType.get(t.shape, i16, loc=ir.Location.unknown())
    return None


def bf16_buffers_as_i16(func) -> None:
    """Rewrites `func` (flattened: buffers are arguments and allocs) in place."""
    entry = func.regions[0].blocks[0]
    _scalar_arguments_as_f32(func, entry)
    retype_arguments(func, _bf16_to_i16)
    ops: list = []

    def collect(op):
        ops.append(op.opview)
        return ir.WalkResult.ADVANCE

    func.walk(collect, ir.WalkOrder.PRE_ORDER)
    for op in ops[1:]:      # ops[0] is the function itself
        if op.name in ("memref.alloc", "memref.alloca") and _bf16_to_i16(op.result.type):
            op.result.set_type(_bf16_to_i16(op.result.type))
        elif op.name in LOADS and _bf16_to_i16(op.result.type):
            _load_as_i16(op)
        elif op.name in STORES and _bf16_to_i16(op.operands[0].type):
            _store_as_i16(op)
        elif op.name in CARRIERS and any(_bf16_to_i16(r.type) for r in op.results):
            _carried_as_i16(op)
        elif op.name == "arith.select" and _bf16_to_i16(op.result.type):
            _operand_as_i16(op, 1, op)      # a select moves bits: of i16 values
            _operand_as_i16(op, 2, op)
            _value_as_i16(op.result, ir.InsertionPoint.after(op), op.location)
        elif op.name in ("memref.atomic_rmw", "memref.generic_atomic_rmw") and \
                isinstance(op.results[0].type, ir.BF16Type):
            raise error_at(op, "atomics on bf16 elements are not supported")


def _load_as_i16(op) -> None:
    bf16_type = op.result.type
    op.result.set_type(_bf16_to_i16(bf16_type))
    with ir.InsertionPoint.after(op), op.location:
        value = arith.bitcast(bf16_type, op.result)
    op.result.replace_all_uses_except(value, value.owner.operation)


def _store_as_i16(op) -> None:
    value = op.operands[0]
    with ir.InsertionPoint(op), op.location:
        op.operands[0] = arith.bitcast(_bf16_to_i16(value.type), value)


def _carried_as_i16(op) -> None:
    """Gives the bf16 results of `op` (scf.if, scf.for) i16 types: the values its regions
    yield, its loop-carried block arguments and initial values, and its results, with
    bitcasts between bf16 and i16 where they meet the ops around."""
    carried = [i for i, r in enumerate(op.results) if _bf16_to_i16(r.type)]
    for region in op.regions:
        for block in region.blocks:
            yield_op = block.operations[len(block.operations) - 1]
            for i in carried:
                _operand_as_i16(yield_op, i, yield_op)
            if op.name == "scf.for":      # block arguments: the induction variable, then the carried
                for i in carried:
                    _value_as_i16(block.arguments[1 + i], ir.InsertionPoint.at_block_begin(block), op.location)
    if op.name == "scf.for":              # operands: lower bound, upper bound, step, then the initial values
        for i in carried:
            _operand_as_i16(op, 3 + i, op)
    for i in carried:
        _value_as_i16(op.results[i], ir.InsertionPoint.after(op), op.location)


def _operand_as_i16(op, index: int, before) -> None:
    value = op.operands[index]
    with ir.InsertionPoint(before), op.location:
        op.operands[index] = arith.bitcast(_bf16_to_i16(value.type), value)


def _value_as_i16(value: ir.Value, where: ir.InsertionPoint, location: ir.Location) -> None:
    """Retypes `value` (a result or block argument) to i16; its users get it back as bf16."""
    bf16_type = value.type
    value.set_type(_bf16_to_i16(bf16_type))
    with where, location:
        as_bf16 = arith.bitcast(bf16_type, value)
    value.replace_all_uses_except(as_bf16, as_bf16.owner.operation)


def _scalar_arguments_as_f32(func, entry) -> None:
    f32 = ir.F32Type.get()
    for arg in entry.arguments:
        if isinstance(arg.type, (ir.F16Type, ir.BF16Type)):
            narrow = arg.type
            arg.set_type(f32)
            first = entry.operations[0]
            with ir.InsertionPoint(first), first.location:
                value = arith.truncf(narrow, arg)
            arg.replace_all_uses_except(value, value.owner.operation)


def retype_arguments(func, new_type) -> None:
    """Gives each argument of `func` the type `new_type` returns for its type (None:
    unchanged), in the signature too."""
    entry = func.regions[0].blocks[0]
    for arg in entry.arguments:
        if new_type(arg.type):
            arg.set_type(new_type(arg.type))
    _update_signature(func, entry)


def _update_signature(func, entry) -> None:
    fn_type = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    func.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get([a.type for a in entry.arguments], fn_type.results))


def check_no_bf16(module: ir.Module) -> None:
    """After BF16_PASSES, a bf16 value left (a conversion between bf16 and f16 or f64,
    which arith-expand does not spell out) would be miscompiled: name its op."""
    left: list = []

    def check(op):
        if any(_bf16_to_i16(v.type) for v in list(op.operands) + list(op.results)):
            left.append(op.opview)
        return ir.WalkResult.ADVANCE

    module.operation.walk(check)
    if left:
        # Constants the clean-up hoisted and merged carry no line of their own (the
        # error would name the kernel's `def` line): the first op with one is named.
        located = [op for op in left if source_line(op.location)]
        raise error_at((located or left)[0], "a bf16 value here (other than a bf16 <-> f32 conversion of a "
                       "loaded or stored element) has no SPIR-V lowering")


def f16_tiles_as_f32(func) -> None:
    """Rewrites `func` (flattened) in place: each f16 alloc only loaded and stored
    becomes f32, its stores widen the value, its loads feed f32 users directly (an
    `arith.extf` to f32 of the loaded value goes away) and others through a truncf."""
    allocs: list = []

    def collect(op):
        op = op.opview
        if op.name in ("memref.alloc", "memref.alloca") and \
                isinstance(op.result.type.element_type, ir.F16Type):
            allocs.append(op)
        return ir.WalkResult.ADVANCE

    func.walk(collect)
    for alloc in allocs:
        users = [use.owner for use in alloc.result.uses]
        if all(only_accesses(user, alloc.result) for user in users):
            with alloc.location:
                _widen_tile(alloc, users)


def only_accesses(user, tile: ir.Value) -> bool:
    """`user` loads from or stores to `tile` (and does nothing else with it)."""
    if user.name in LOADS:
        return user.operands[0] == tile
    if user.name in STORES:
        return user.operands[1] == tile and user.operands[0] != tile
    return False


def _with_f32(t: ir.Type) -> ir.Type:
    return with_element_type(t, ir.F32Type.get())


def _widen_tile(alloc, users) -> None:
    alloc.result.set_type(_with_f32(alloc.result.type))
    for user in users:
        if user.name in STORES:
            with ir.InsertionPoint(user), user.location:
                user.operands[0] = arith.extf(_with_f32(user.operands[0].type), user.operands[0])
        else:
            _load_as_f32(user)


def _load_as_f32(load) -> None:
    f16_type, f32_type = load.result.type, _with_f32(load.result.type)
    load.result.set_type(f32_type)
    widened = [use.owner for use in load.result.uses
               if use.owner.name == "arith.extf" and use.owner.results[0].type == f32_type]
    if len(widened) < len(list(load.result.uses)):
        with ir.InsertionPoint.after(load), load.location:
            value = arith.truncf(f16_type, load.result)
        load.result.replace_all_uses_except(value, value.owner.operation)
    for extf in widened:
        extf.results[0].replace_all_uses_with(load.result)
        extf.erase()
