"""OpenCL.std extended instructions that upstream's spirv dialect has no op for.

The OpenCL C emitter prints `math.cbrt`, `math.erfc`, `math.expm1`, ... and the
libdevice builtins of ttir_to_linalg/opencl_calls.py (`cospi`, `lgamma`, `hypot`, ...)
as OpenCL C builtins. Each is one instruction of SPIR-V's OpenCL.std set, but
upstream's spirv dialect holds only some of that set (exp, log, pow, erf, ...), and
its math conversion expands others less accurately than the builtin (expm1 as
exp(x) - 1, log1p as log(1 + x), log2 as log(x) / ln 2). So such an op is carried
through the conversion and serialization under a stand-in, in three steps:

    calls_to_stand_ins        before the conversion: the op becomes a `func.call` of a
                              private stand-in function (`opencl_std_<number>_<name>_
                              <types>`, body: return its first operand), which the
                              conversion turns into a spirv.FunctionCall
    stand_ins_as_placeholders after it: each call becomes an OpenCL.std op of the
                              dialect with the same operand types (exp, pow, s_max),
                              decorated `Location <number>`; the stand-ins go
    patch_placeholders        after serialization: each decorated OpExtInst gets the
                              instruction <number>, and the decorations go

`Location` is a Shader decoration that no OpenCL module has otherwise (and spirv-val
would reject); the `spvasm` stage shows the placeholder ops with it.
"""
from __future__ import annotations

import struct

from mlir import ir
from mlir.dialects import func

from .flatten import SpirvStageError

# OpenCL.std instruction numbers (the OpenCL extended instruction set specification).
INSTRUCTIONS = {
    "cbrt": 11, "cospi": 16, "erfc": 17, "exp2": 20, "exp10": 21, "expm1": 22,
    "hypot": 32, "lgamma": 35, "log2": 38, "log10": 39, "log1p": 40, "logb": 41,
    "nextafter": 47, "remainder": 51, "sinpi": 60, "tgamma": 65,
    "s_hadd": 145, "s_rhadd": 147, "s_mul_hi": 160,
}
# Math ops that are one of them (the OpenCL C emitter prints the builtin).
MATH_OPS = {"math.cbrt": "cbrt", "math.erfc": "erfc", "math.exp2": "exp2", "math.expm1": "expm1",
            "math.log2": "log2", "math.log10": "log10", "math.log1p": "log1p"}
# `opencl.call` builtins (ttir_to_linalg/opencl_calls.py) that are one of them, on
# operands of the result's type. (ldexp and ilogb mix types; the rounding-mode
# conversions and the helpers have no single instruction.)
CALLS = {"cospi": "cospi", "sinpi": "sinpi", "hypot": "hypot", "logb": "logb", "lgamma": "lgamma",
         "tgamma": "tgamma", "nextafter": "nextafter", "remainder": "remainder",
         "hadd": "s_hadd", "rhadd": "s_rhadd", "mul_hi": "s_mul_hi"}
PREFIX = "opencl_std_"

OP_EXT_INST = 12
OP_DECORATE = 71
LOCATION = 30


def calls_to_stand_ins(module: ir.Module) -> None:
    """Replaces, in every function of `module`, each op of MATH_OPS or CALLS on float
    (f16, f32, f64) or, for the integer builtins, integer scalars or vectors by a call
    of its stand-in; declarations no call is left to go."""
    ops: list = []
    module.operation.walk(lambda op: ops.append(op.opview) or ir.WalkResult.ADVANCE)
    for op in ops:
        name = _instruction_of(op)
        if name is not None:
            _as_stand_in_call(module, op, name)
    _erase_unused_declarations(module)


def _instruction_of(op) -> str | None:
    if op.name in MATH_OPS:
        name = MATH_OPS[op.name]
    elif op.name == "func.call" and "opencl.call" in op.attributes and "opencl.helper" not in op.attributes:
        name = CALLS.get(ir.StringAttr(op.attributes["opencl.call"]).value)
    else:
        return None
    if name is None or len(op.results) != 1:
        return None
    result_type = op.results[0].type
    same_types = all(operand.type == result_type for operand in op.operands)
    return name if same_types and _element_kind(result_type, integer=name.startswith("s_")) else None


def _element_kind(t: ir.Type, integer: bool) -> bool:
    element = ir.VectorType(t).element_type if isinstance(t, ir.VectorType) else t
    if integer:
        return isinstance(element, ir.IntegerType) and ir.IntegerType(element).width in (8, 16, 32, 64)
    return isinstance(element, (ir.F16Type, ir.F32Type, ir.F64Type))


def _as_stand_in_call(module: ir.Module, op, name: str) -> None:
    types = [operand.type for operand in op.operands]
    symbol = f"{PREFIX}{INSTRUCTIONS[name]}_{name}_" + "_".join(str(t) for t in types)
    _declare_stand_in(module, symbol, types)
    with ir.InsertionPoint(op), op.location:
        call = func.CallOp([op.results[0].type], ir.FlatSymbolRefAttr.get(symbol), list(op.operands))
    op.results[0].replace_all_uses_with(call.result)
    op.erase()


def _declare_stand_in(module: ir.Module, symbol: str, types: list) -> None:
    if any(_symbol(f) == symbol for f in module.body.operations if f.operation.name == "func.func"):
        return
    with ir.InsertionPoint.at_block_begin(module.body), ir.Location.unknown():
        stand_in = func.FuncOp(symbol, ir.FunctionType.get(types, [types[0]]), visibility="private")
        entry = stand_in.add_entry_block()
        with ir.InsertionPoint(entry):
            func.ReturnOp([entry.arguments[0]])


def _erase_unused_declarations(module: ir.Module) -> None:
    called: set = set()

    def collect(op):
        if op.name == "func.call":
            called.add(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
        return ir.WalkResult.ADVANCE

    module.operation.walk(collect)
    for f in list(module.body.operations):
        if f.operation.name == "func.func" and not len(f.regions[0].blocks) and _symbol(f) not in called:
            f.operation.erase()


def _symbol(f) -> str:
    return ir.StringAttr(f.operation.attributes["sym_name"]).value


def stand_ins_as_placeholders(spirv_module) -> None:
    """Replaces each spirv.FunctionCall of a stand-in in `spirv_module` by its
    placeholder op and erases the stand-ins."""
    calls: list = []

    def collect(op):
        if op.name == "spirv.FunctionCall" and _callee(op).startswith(PREFIX):
            calls.append(op.opview)
        return ir.WalkResult.ADVANCE

    spirv_module.operation.walk(collect)
    for call in calls:
        number = int(_callee(call)[len(PREFIX):].split("_")[0])
        with ir.InsertionPoint(call), call.location:
            placeholder = _placeholder(list(call.operands))
        placeholder.attributes["location"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), number)
        call.results[0].replace_all_uses_with(placeholder.results[0])
        call.erase()
    for op in list(spirv_module.regions[0].blocks[0].operations):
        if op.operation.name == "spirv.func" and _symbol(op).startswith(PREFIX):
            op.operation.erase()


def _callee(call) -> str:
    return ir.FlatSymbolRefAttr(call.attributes["callee"]).value


def _placeholder(operands: list):
    """An OpenCL.std op of the dialect on `operands` (all of one type)."""
    # Here, not at the top: the dialect's classes cost a start-up 0.07-0.15 s, and only
    # kernels that call such instructions build spirv ops in Python (dialect_modules).
    from mlir.dialects import spirv

    t = operands[0].type
    element = ir.VectorType(t).element_type if isinstance(t, ir.VectorType) else t
    if len(operands) == 1:
        return spirv.CLExpOp(operands[0]).operation
    if isinstance(element, ir.IntegerType):
        return spirv.CLSMaxOp(*operands).operation
    return spirv.CLPowOp(*operands).operation


def patch_placeholders(binary: bytes) -> bytes:
    """`binary` (SPIR-V words) with each OpExtInst decorated `Location n` made
    instruction n, without those decorations."""
    words = list(struct.unpack(f"<{len(binary) // 4}I", binary))
    numbers: dict[int, int] = {}
    kept = words[:5]                       # the header
    for start, count, opcode in _instructions(words):
        if opcode == OP_DECORATE and words[start + 2] == LOCATION:
            numbers[words[start + 1]] = words[start + 3]
        else:
            kept.extend(words[start:start + count])
    patched = 0
    for start, _, opcode in _instructions(kept):
        if opcode == OP_EXT_INST and kept[start + 2] in numbers:
            kept[start + 4] = numbers[kept[start + 2]]
            patched += 1
    if patched != len(numbers):
        raise SpirvStageError(f"serialization kept {patched} of {len(numbers)} OpenCL.std placeholders")
    return struct.pack(f"<{len(kept)}I", *kept)


def _instructions(words: list):
    """(first word, word count, opcode) of each instruction after the header."""
    start = 5
    while start < len(words):
        count, opcode = words[start] >> 16, words[start] & 0xFFFF
        yield start, count, opcode
        start += count
