"""TTIR pointer types: what a `!tt.ptr<T>` points to, and the types that carry pointers
across region boundaries (loop iter_args, branch results; see values.flatten).

A pointer travels as an i64 element offset into its buffer, a tensor of pointers as a
tensor of such offsets; a pointer chosen between buffers (`PointerChoice`) as an i32
`which` followed by one offset per buffer it may point into.
"""
from __future__ import annotations

from typing import Optional

from mlir import ir

from . import builders as b
from .values import PointerChoice


def pointee_of(t: ir.Type) -> Optional[ir.Type]:
    """T for `!tt.ptr<T>`, else None."""
    if not isinstance(t, ir.OpaqueType):
        return None
    opaque = ir.OpaqueType(t)
    if opaque.dialect_namespace != "tt" or not opaque.data.startswith("ptr<"):
        return None
    inner = opaque.data[len("ptr<"):-1]
    # `ptr<f32, 1>` carries an address space after the pointee.
    depth, cut = 0, len(inner)
    for i, ch in enumerate(inner):
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "," and depth == 0:
            cut = i
            break
    return ir.Type.parse(inner[:cut].strip())


def is_pointer_type(t: ir.Type) -> bool:
    return pointee_of(b.element_type(t) if b.is_tensor(t) else t) is not None


def carried_type(t: ir.Type) -> ir.Type:
    """The type that carries a TTIR value across region boundaries (see values.flatten)."""
    if b.is_tensor(t) and pointee_of(b.element_type(t)) is not None:
        return ir.RankedTensorType.get(b.shape_of(t), b.i64())
    if pointee_of(t) is not None:
        return b.i64()
    return t


def carried_types(ttir_type: ir.Type, template) -> list:
    """The types of the values that carry a result of `ttir_type` (see values.flatten)."""
    if not isinstance(template, PointerChoice):
        return [carried_type(ttir_type)]
    i32 = ir.IntegerType.get_signless(32)
    which = ir.RankedTensorType.get(b.shape_of(ttir_type), i32) if b.is_tensor(ttir_type) \
        else i32
    return [which] + [carried_type(ttir_type)] * len(template.options)
