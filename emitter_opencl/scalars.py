"""Scalar and elementwise ops (arith, math, libdevice calls, casts, work-item ids) as
C expressions; constants become literals at their uses. The same handlers print
OpenCL vector types for vector operands."""

from __future__ import annotations

from mlir import ir

from . import ctypes_table as ct
from .casts import CAST_OPS, FOLDABLE_INT_CASTS, cast_expr, fold_int_cast, vector_cast_expr
from .errors import error_at
from .names import is_named
from .optable import (ELEMENTWISE, CMPF, CMPI, CMPI_SIGNED, HELPER_OF, I1_ELEMENTWISE,
                      UNSIGNED_RESULT, VECTOR_ELEMENTWISE, VECTOR_WRAPPING, WRAPPING,
                      WRAPPING_KINDS, is_call)

_GPU_INDEX = {  # op -> (OpenCL builtin, default variable name)
    "gpu.block_id": ("get_group_id", "pid"),
    "gpu.grid_dim": ("get_num_groups", "num_pids"),
    "gpu.thread_id": ("get_local_id", "lid"),
    "gpu.block_dim": ("get_local_size", "lsize"),
}

# Lane type of a vector mask over lanes of each kind: what OpenCL relational
# builtins and operators return (-1 for true), and what select() expects.
_MASK_LANE = {"i1": "int", "i8": "char", "i16": "short", "i32": "int", "i64": "long",
              "index": "long", "f16": "int", "bf16": "int", "f32": "int", "f64": "long",
              **{kind: "int" for kind in ct.FP8_KINDS}}

_SHIFTS = {"arith.shli", "arith.shrsi", "arith.shrui"}


def _scalar_attr_value(attr: ir.Attribute, kind: str):
    if kind == "i1":
        return bool(ir.BoolAttr(attr).value) if isinstance(attr, ir.BoolAttr) \
            else bool(ir.IntegerAttr(attr).value)
    if ct.is_int(kind):
        return ir.IntegerAttr(attr).value
    return ir.FloatAttr(attr).value


def _constant(emitter, op) -> None:
    result = op.results[0]
    attr = op.attributes["value"]
    if ct.scalar_kind(result.type) is None and ct.vector_shape(result.type) is None:
        # Let the consumer report the problem: it is the op outside the contract.
        emitter.literals[result] = lambda typed: _reject(op, result)
        return
    kind, width = emitter.shape_of(op, result)
    if width > 1:
        _vector_constant(emitter, op, result, attr, kind, width)
        return
    if ct.is_int(kind):
        value = int(_scalar_attr_value(attr, kind))
        emitter.literals[result] = lambda typed, v=value: ct.int_literal(v, kind, typed)
        emitter.int_constants[result] = value
    else:
        value = ir.FloatAttr(attr).value
        emitter.literals[result] = lambda typed, v=value: ct.float_literal(v, kind)


def _vector_constant(emitter, op, result, attr, kind: str, width: int) -> None:
    ctype = emitter.ctype_of(op, result)
    dense = ir.DenseElementsAttr(attr)
    if dense.is_splat:
        values = [_scalar_attr_value(dense.get_splat_value(), kind)]
    else:
        typed = ir.DenseFPElementsAttr(attr) if ct.is_float(kind) \
            else ir.DenseIntElementsAttr(attr)
        values = [typed[i] for i in range(width)]
    if kind == "i1":  # vector lanes hold -1 for true
        texts = [ct.int_literal(-int(bool(v)), "i32") for v in values]
    elif ct.is_int(kind):
        texts = [ct.int_literal(v, kind) for v in values]
    else:
        texts = [ct.float_literal(v, kind) for v in values]
    text = f"({ctype})({', '.join(texts)})"
    emitter.literals[result] = lambda typed: text


def _reject(op, value: ir.Value) -> str:
    raise error_at(op, f"values of type {value.type} are outside the contract")


def _wrapping_format(name: str, kind: str, width: int) -> str | None:
    """Wrap-around formats for signed +, -, *, << (see optable.WRAPPING)."""
    if kind not in WRAPPING_KINDS:
        return None
    return (VECTOR_WRAPPING if width > 1 else WRAPPING).get(name)


def _needs_wide_literal(name: str, kind: str, is_literal: list[bool]) -> bool:
    """Whether the first operand of a 64-bit op must be spelled `5L`: C types an
    expression by its operands, so `1 << n` and `1024 * 1048576` would be int."""
    return (ct.BIT_WIDTH.get(kind) == 64 and ct.is_int(kind) and bool(is_literal)
            and is_literal[0] and (name in _SHIFTS or all(is_literal)))


def _elementwise(emitter, op) -> None:
    name = op.operation.name
    result = op.results[0]
    kind, width = emitter.shape_of(op, result)
    operand_kind, _ = emitter.shape_of(op, op.operands[0])
    fmt = ((I1_ELEMENTWISE.get(name) if kind == "i1" else None)
           or _wrapping_format(name, kind, width)
           or (VECTOR_ELEMENTWISE.get(name) if width > 1 else None)
           or ELEMENTWISE[name])
    ctype = emitter.ctype_of(op, result) if kind != "i1" else _mask_ctype(emitter, op, result)
    typed = [is_call(fmt)] * len(op.operands)
    if _needs_wide_literal(name, operand_kind, [v in emitter.literals for v in op.operands]):
        typed[0] = True
    texts = [emitter.operand(v, t) for v, t in zip(op.operands, typed)]
    fields = dict(zip("abc", texts))
    fields.update({f"u{k}": emitter.unsigned(t, operand_kind, width)
                   for k, t in zip("abc", texts)})
    expr = fmt.format(T=ctype, **fields)
    if name in HELPER_OF:
        emitter.helpers.need(f"{HELPER_OF[name]}_{ctype}")
    expr_ctype = None
    if name in UNSIGNED_RESULT:
        if width > 1:
            expr = f"as_{ctype}({expr})"
        else:
            expr_ctype = ct.UNSIGNED_CTYPE[kind]
    emitter.define(op, result, expr, ctype, expr_ctype=expr_ctype)


def _opencl_call(emitter, op) -> None:
    """func.call of a libdevice function that the converter mapped to an OpenCL
    builtin or a helper family (triton_spirv/ttir_to_linalg/opencl_calls.py)."""
    attrs = op.attributes
    if "opencl.call" not in attrs:
        raise error_at(op, "calls of functions are outside the memref-stage contract")
    name = ir.StringAttr(attrs["opencl.call"]).value
    if "opencl.helper" in attrs:
        name = emitter.helpers.need(f"{name}_{emitter.ctype_of(op, op.operands[0])}")
    args = ", ".join(emitter.operand(v, True) for v in op.operands)
    result = op.results[0]
    emitter.define(op, result, f"{name}({args})", emitter.ctype_of(op, result))


def _mask_ctype(emitter, op, result: ir.Value) -> str:
    """C type of an i1 result: bool for scalars; for vectors the signed lane type
    OpenCL relational ops return for the operands (int4 for float4, long4 for
    double4, ...), or the operand's own mask type."""
    _, width = emitter.shape_of(op, result)
    if width == 1:
        return "bool"
    first = op.operands[0]
    if first in emitter.mask_ctypes:
        ctype = emitter.mask_ctypes[first]
    else:
        kind, _ = emitter.shape_of(op, first)
        ctype = f"{_MASK_LANE[kind]}{width}"
    emitter.mask_ctypes[result] = ctype
    return ctype


def _compare(emitter, op) -> None:
    predicate = ir.IntegerAttr(op.attributes["predicate"]).value
    is_int = op.operation.name == "arith.cmpi"
    fmt = (CMPI if is_int else CMPF)[predicate]
    kind, width = emitter.shape_of(op, op.operands[0])
    ctype = _mask_ctype(emitter, op, op.results[0])
    texts = [emitter.operand(v, is_call(fmt)) for v in op.operands]
    if is_int and kind == "i1" and predicate in CMPI_SIGNED:
        texts = [f"(-(int){t})" for t in texts]  # signed i1: true is -1
    if fmt in ("true", "false") and width > 1:
        expr = f"({ctype})({-1 if fmt == 'true' else 0})"
    else:
        expr = fmt.format(a=texts[0], b=texts[1],
                          ua=emitter.unsigned(texts[0], kind, width),
                          ub=emitter.unsigned(texts[1], kind, width))
    emitter.define(op, op.results[0], expr, ctype)


def _select(emitter, op) -> None:
    # Typed values: C would type `c ? 1 : 0` of an index as int, and select() wants
    # vectors of one type.
    cond = emitter.operand(op.operands[0])
    if_true, if_false = (emitter.operand(v, typed=True) for v in op.operands[1:])
    result = op.results[0]
    _, width = emitter.shape_of(op, result)
    _, cond_width = emitter.shape_of(op, op.operands[0])
    if cond_width == 1:
        emitter.define(op, result, f"{cond} ? {if_true} : {if_false}")
        return
    # Lane-wise: select() reads the top bit of a mask lane as wide as the data.
    kind, _ = emitter.shape_of(op, result)
    wanted = f"{_MASK_LANE[kind]}{width}"
    if emitter.mask_ctypes.get(op.operands[0], f"int{width}") != wanted:
        cond = f"convert_{wanted}({cond})"
    emitter.define(op, result, f"select({if_false}, {if_true}, {cond})")


def _cast(emitter, op) -> None:
    name = op.operation.name
    source, result = op.operands[0], op.results[0]
    if "roundingmode" in op.attributes and str(result.type) not in ct.FP8_KINDS and \
            "to_nearest_even" not in str(op.attributes["roundingmode"]):
        raise error_at(op, f"rounding mode {op.attributes['roundingmode']} is not "
                           f"supported (only to_nearest_even)")
    src_kind, width = emitter.shape_of(op, source)
    dst_kind, _ = emitter.shape_of(op, result)
    if source in emitter.int_constants and name in FOLDABLE_INT_CASTS and width == 1:
        value = fold_int_cast(name, emitter.int_constants[source], src_kind, dst_kind)
        emitter.literals[result] = lambda typed: ct.int_literal(value, dst_kind, typed)
        emitter.int_constants[result] = value
        return
    text = emitter.operand(source)
    expr = (cast_expr if width == 1 else vector_cast_expr)(
        emitter, op, name, text, src_kind, dst_kind, width)
    if expr is None:
        emitter.alias(result, source)
    else:
        # A kernel argument in another type is still that argument, not the Python
        # value of the statement that converts it (`mask = offs < n` casts `n`).
        emitter.define(op, result, expr, role=text if is_named(text) else None,
                       python_name=not emitter.is_kernel_argument(source))


def _gpu_index(emitter, op) -> None:
    builtin, default = _GPU_INDEX[op.operation.name]
    dim = str(op.attributes["dimension"]).rstrip(">")[-1]
    emitter.define(op, op.results[0], f"{builtin}({'xyz'.index(dim)})", "long",
                   role=f"{default}_{dim}")


HANDLERS = {
    "arith.constant": _constant,
    "arith.cmpi": _compare,
    "arith.cmpf": _compare,
    "arith.select": _select,
    **{name: _elementwise for name in ELEMENTWISE},
    **{name: _cast for name in CAST_OPS},
    "func.call": _opencl_call,
    **{name: _gpu_index for name in _GPU_INDEX},
}
