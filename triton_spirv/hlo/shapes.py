"""HLO element types and shapes, and what each element type becomes downstream:
the MLIR storage type, the MLIR compute type (16-bit floats compute in f32), the
numpy dtype of host buffers and the launcher's signature type."""
from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

import numpy as np


@dataclass(frozen=True)
class ElementType:
    name: str          # HLO spelling: f32, bf16, s8, u32, pred, ...
    bits: int
    kind: str          # "float", "signed", "unsigned", "pred"
    numpy: str         # host dtype (bf16 travels as its uint16 bit pattern)
    launcher: str      # launcher signature element type (pointer: "*" + this)

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_unsigned(self) -> bool:
        return self.kind in ("unsigned", "pred")

    @property
    def is_integer(self) -> bool:
        return self.kind in ("signed", "unsigned", "pred")

    @property
    def is_pred(self) -> bool:
        return self.kind == "pred"

    @property
    def storage_mlir(self) -> str:
        """The MLIR type of buffer elements (signless integers)."""
        if self.is_float:
            return self.name
        return "i1" if self.is_pred else f"i{self.bits}"

    @property
    def compute_mlir(self) -> str:
        """The MLIR type of values in registers: f16/bf16 compute in f32."""
        return "f32" if self.name in ("f16", "bf16") else self.storage_mlir


ELEMENT_TYPES = {t.name: t for t in (
    ElementType("pred", 8, "pred", "bool", "i1"),
    ElementType("s8", 8, "signed", "int8", "i8"),
    ElementType("s16", 16, "signed", "int16", "i16"),
    ElementType("s32", 32, "signed", "int32", "i32"),
    ElementType("s64", 64, "signed", "int64", "i64"),
    ElementType("u8", 8, "unsigned", "uint8", "u8"),
    ElementType("u16", 16, "unsigned", "uint16", "u16"),
    ElementType("u32", 32, "unsigned", "uint32", "u32"),
    ElementType("u64", 64, "unsigned", "uint64", "u64"),
    ElementType("f16", 16, "float", "float16", "fp16"),
    ElementType("bf16", 16, "float", "uint16", "bf16"),
    ElementType("f32", 32, "float", "float32", "fp32"),
    ElementType("f64", 64, "float", "float64", "fp64"),
)}
# Types that may appear in text but carry no data we lower.
OPAQUE_TYPES = ("token", "opaque")


@dataclass(frozen=True)
class Shape:
    """An array shape (`f32[2,3]{1,0}`) or a tuple of shapes.

    A dimension is an int (static), or a str: a named symbolic dimension (`f32[M,K]`) or
    `"?"` (anonymous) as written in the text. `dynamic_shapes.check_module_shapes` gives
    each anonymous dimension the name of its class (`"?1"`, `"?2"`, ...)."""
    element: ElementType | None = None
    dims: tuple[int, ...] = ()
    layout: tuple[int, ...] | None = None          # minor-to-major, when printed
    tuple_shapes: tuple["Shape", ...] | None = None
    opaque: str | None = None                      # token[] and friends
    dynamic: tuple[bool, ...] = field(default=())  # `<=` bounded dimensions

    @property
    def is_tuple(self) -> bool:
        return self.tuple_shapes is not None

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def is_static(self) -> bool:
        if self.is_tuple:
            return all(s.is_static for s in self.tuple_shapes)
        return all(isinstance(d, int) for d in self.dims)

    @property
    def symbols(self) -> list[str]:
        """The symbolic dimensions, in order of appearance (tuple leaves included)."""
        found: list[str] = []
        for leaf in self.leaves():
            for d in leaf.dims:
                if not isinstance(d, int) and d not in found:
                    found.append(d)
        return found

    @property
    def size(self) -> int:
        if not self.is_static:
            raise TypeError(f"shape {self} has dynamic dimensions: its size is known only at "
                            f"run time")
        return prod(self.dims)

    @property
    def minor_to_major(self) -> tuple[int, ...]:
        """The layout, defaulting to row-major (`{n-1,...,0}`)."""
        if self.layout is not None and len(self.layout) == self.rank:
            return self.layout
        return tuple(range(self.rank - 1, -1, -1))

    @property
    def has_default_layout(self) -> bool:
        return self.minor_to_major == tuple(range(self.rank - 1, -1, -1))

    def leaves(self) -> list["Shape"]:
        if not self.is_tuple:
            return [self]
        return [leaf for s in self.tuple_shapes for leaf in s.leaves()]

    def __str__(self) -> str:
        if self.is_tuple:
            return "(" + ", ".join(str(s) for s in self.tuple_shapes) + ")"
        if self.opaque:
            return f"{self.opaque}[]"
        return f"{self.element.name}[{','.join(str(d) for d in self.dims)}]"


def strides_of(dims) -> list[int]:
    """Row-major element strides."""
    strides, step = [], 1
    for d in reversed(dims):
        strides.append(step)
        step *= d
    return strides[::-1]


def round_to_bf16(value: float) -> float:
    """Round a number to the nearest bfloat16 (ties to even), as a Python float."""
    bits = np.array([value], dtype=np.float32).view(np.uint32)
    return float(bf16_bits_to_f32(f32_to_bf16_bits(bits.view(np.float32)))[0])


def f32_to_bf16_bits(values: np.ndarray) -> np.ndarray:
    """float32 array -> bfloat16 bit patterns (uint16), rounding to nearest even."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    nan = np.isnan(np.asarray(values, dtype=np.float32))
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    out = rounded.astype(np.uint16)
    out[nan] = 0x7FC0
    return out


def bf16_bits_to_f32(bits: np.ndarray) -> np.ndarray:
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)
