"""MLIR types and constants of HLO element types.

An HLO value is stored in its storage type (bf16 and f16 as such in buffers) and
computed in its compute type (16-bit floats widened to f32); see shapes.ElementType.
"""
from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith

from .shapes import ElementType, round_to_bf16


def storage_type(et: ElementType) -> ir.Type:
    return ir.Type.parse(et.storage_mlir)


def compute_type(et: ElementType) -> ir.Type:
    return ir.Type.parse(et.compute_mlir)


def tensor_type(shape) -> ir.RankedTensorType:
    dyn = ir.ShapedType.get_dynamic_size()
    return ir.RankedTensorType.get([d if isinstance(d, int) else dyn for d in shape.dims],
                                   storage_type(shape.element))



def index_type() -> ir.Type:
    return ir.IndexType.get()


def const_index(value: int) -> ir.Value:
    return arith.constant(index_type(), value)


def scalar_constant(et: ElementType, value) -> ir.Value:
    """A compute-type constant of HLO element type `et`."""
    t = compute_type(et)
    if et.is_float:
        v = float(value)
        if et.name == "bf16":
            v = round_to_bf16(v)
        elif et.name == "f16":
            v = float(np.float16(v))
        return arith.constant(t, ir.FloatAttr.get(t, v))
    if et.is_pred:
        return arith.constant(t, ir.IntegerAttr.get(t, int(bool(value))))
    bits = et.bits
    v = int(value) & ((1 << bits) - 1)
    if v >= 1 << (bits - 1):
        v -= 1 << bits
    return arith.constant(t, ir.IntegerAttr.get(t, v))

