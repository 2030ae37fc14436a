"""The vector dialect as OpenCL vector types: 1-D unit-stride transfers become
vloadN / vstoreN (vload_halfN / vstore_halfN_rte for global f16 buffers), lanes are
`.sN` components, scalar broadcasts and vectors built from scalars are vector
literals."""

from __future__ import annotations

from typing import Sequence

from mlir import ir

from . import ctypes_table as ct
from .errors import error_at
from .helpers import HELPER_NAMES
from .ir_utils import operand_segments
from .memory import pointer, value_role
from .names import is_identifier
from .views import Buffer, atom


def _access(emitter, op, memref_value: ir.Value, indices: Sequence[ir.Value],
            vector_type: ir.Type) -> tuple[Buffer, str, int, str]:
    """(buffer, pointer to the first element, width, element kind) of a 1-D
    unit-stride vector access."""
    shape = ct.vector_shape(vector_type)
    view = emitter.view(op, memref_value)
    if shape is None or view.rank == 0 or view.strides[-1] != 1:
        raise error_at(op, "only 1-D vectors of width 2, 3, 4, 8, 16 over unit-"
                           "stride memory are supported")
    if "permutation_map" in op.attributes:
        amap = ir.AffineMapAttr(op.attributes["permutation_map"]).value
        if amap != ir.AffineMap.get_minor_identity(amap.n_dims, 1):
            raise error_at(op, "transposing vector transfers are not supported")
    if "in_bounds" in op.attributes:
        if not all(ir.BoolAttr(b).value for b in ir.ArrayAttr(op.attributes["in_bounds"])):
            raise error_at(op, "vector transfers must be in bounds")
    kind, width = shape
    if kind in ("i1", "bf16") + ct.FP8_KINDS:
        raise error_at(op, f"vector loads/stores of {kind} are not supported")
    index = view.element([emitter.index_expr(v) for v in indices])
    emitter.vector_index = index  # for bounds checks
    return view.buffer, pointer(view, index), width, kind


def _read(emitter, op) -> None:
    name = op.operation.name
    segments = operand_segments(op) if name == "vector.transfer_read" else None
    if segments is not None and len(segments) > 3 and len(segments[3]):
        raise error_at(op, "masked vector transfers are not supported")
    indices = segments[1] if segments is not None else list(op.operands)[1:]
    buffer, first, width, kind = _access(emitter, op, op.operands[0], indices,
                                         op.results[0].type)
    if buffer.is_global and kind == "f16":
        expr = f"vload_half{width}(0, {first})"
    else:
        expr = f"vload{width}(0, {first})"
    if emitter.bounds is not None:
        expr = emitter.bounds.vector_load(buffer, emitter.vector_index, width, first, expr)
    # A slice of a tile, never the whole Python value: named after the buffer.
    emitter.define(op, op.results[0], expr, role=value_role(buffer, "vec"), python_name=False)


def _write(emitter, op) -> None:
    name = op.operation.name
    if name == "vector.transfer_write":
        segments = operand_segments(op)
        if len(segments) > 3 and len(segments[3]):
            raise error_at(op, "masked vector transfers are not supported")
        indices = segments[2]
    else:
        indices = list(op.operands)[2:]
    buffer, first, width, kind = _access(emitter, op, op.operands[1], indices,
                                         op.operands[0].type)
    value = emitter.operand(op.operands[0])
    if buffer.is_global and kind == "f16":
        text = f"vstore_half{width}_rte({value}, 0, {first});"
    # A streaming store; bounds-checked mode stores through its checking helper instead.
    elif buffer.is_global and _nontemporal(op) and emitter.bounds is None and \
            (store := f"store_nontemporal_{ct.GLOBAL_ELEM_CTYPE[kind]}{width}") in HELPER_NAMES:
        text = f"{emitter.helpers.need(store)}({value}, {first});"
    else:
        text = f"vstore{width}({value}, 0, {first});"
    if emitter.bounds is not None:
        text = emitter.bounds.vector_store(buffer, emitter.vector_index, width, first,
                                           value, text)
    emitter.stmt(op, text)


def _nontemporal(op) -> bool:
    """vector.store's streaming hint (memref_stage/streaming_stores.py)."""
    return "nontemporal" in op.attributes and ir.BoolAttr(op.attributes["nontemporal"]).value


def _lane(op, position_operands: Sequence[ir.Value]) -> str:
    positions = [int(p) for p in ir.DenseI64ArrayAttr(op.attributes["static_position"])]
    if len(positions) != 1 or positions[0] < 0 or len(position_operands):
        raise error_at(op, "only constant positions in 1-D vectors are supported")
    return f"s{positions[0]:x}"


def _extract(emitter, op) -> None:
    lane = _lane(op, list(op.operands)[1:])
    emitter.define(op, op.results[0], f"{atom(emitter.operand(op.operands[0]))}.{lane}")


def _insert(emitter, op) -> None:
    lane = _lane(op, list(op.operands)[2:])
    name = emitter.define(op, op.results[0], emitter.operand(op.operands[1]))
    emitter.stmt(op, f"{name}.{lane} = {emitter.operand(op.operands[0])};")


def _broadcast(emitter, op) -> None:
    source, result = op.operands[0], op.results[0]
    if source.type == result.type:
        emitter.alias(result, source)
        return
    if ct.scalar_kind(source.type) is None:
        raise error_at(op, "only scalar-to-vector broadcasts are supported")
    ctype = emitter.ctype_of(op, result)
    text = emitter.operand(source)
    # A splat is never the Python value itself: named after the scalar it repeats.
    role = f"{text}_splat" if is_identifier(text) else "splat"
    emitter.define(op, result, f"({ctype})({_mask_lane(source, text)})", role=role,
                   python_name=False)


def _mask_lane(value: ir.Value, text: str) -> str:
    """A scalar as a vector lane: a bool is 0 / -1 there, as comparisons of vectors
    give and select() reads (its top bit)."""
    return f"{text} ? -1 : 0" if ct.scalar_kind(value.type) == "i1" else text


def _from_elements(emitter, op) -> None:
    result = op.results[0]
    if ir.VectorType(result.type).rank != 1:
        raise error_at(op, "only 1-D vectors are supported")
    lanes = ", ".join(_mask_lane(v, emitter.operand(v)) for v in op.operands)
    emitter.define(op, result, f"({emitter.ctype_of(op, result)})({lanes})", role="lanes")


HANDLERS = {
    "vector.transfer_read": _read,
    "vector.load": _read,
    "vector.transfer_write": _write,
    "vector.store": _write,
    "vector.extract": _extract,
    "vector.insert": _insert,
    "vector.broadcast": _broadcast,
    "vector.splat": _broadcast,
    "vector.from_elements": _from_elements,
}
