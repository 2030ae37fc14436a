"""What a TTIR value becomes while it is converted to Linalg on tensors.

Every TTIR value maps to one of:
- `Value`: an ordinary scalar or tensor SSA value of the new module, plus what the
  converter knows about its structure (an `AffineIndex` for integer tensors that are
  `base + sum(iota_d * stride_d)`, a `Box` for masks that select a rectangle, the scalar
  it splats).
- `Pointer`: a scalar `!tt.ptr<T>`: a kernel buffer (`memref<?xT>`) and an element offset.
- `PointerTensor`: a tensor of pointers into one buffer: the buffer and a `Value` holding
  the element offsets (an i64 tensor). When those offsets are an `AffineIndex`, loads and
  stores become block copies; otherwise they go through the gather/scatter path.
- `PointerChoice`: a pointer or tensor of pointers into one of several buffers (Triton
  selected between kernel arguments): one `Pointer`/`PointerTensor` per buffer and an
  i32 `which` naming the buffer in force (choices.py).

Scalars in `AffineIndex`/`Box` are `Scalar`s: a Python int (known at compile time) or an
`index`-typed `ir.Value`. `scalar_ops` folds ints and emits `arith` ops otherwise.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

from mlir import ir

Scalar = Union[int, ir.Value]


@dataclass
class AffineIndex:
    """An integer tensor equal to `base + sum_d(iota_d * strides[d])`."""
    base: Scalar
    strides: list  # one Scalar per dimension; 0 where the value does not vary


@dataclass
class Box:
    """A mask that is true exactly on `lo[d] <= i_d < hi[d]` for every dimension d.

    None stands for "unbounded" on that side.
    """
    lo: list
    hi: list


@dataclass
class Value:
    value: ir.Value
    affine: Optional[AffineIndex] = None
    box: Optional[Box] = None
    splat_of: Optional[ir.Value] = None  # the scalar this tensor splats, when known

    @property
    def type(self) -> ir.Type:
        return self.value.type


@dataclass
class Pointer:
    buffer: ir.Value  # memref<?xT> kernel argument
    offset: ir.Value  # i64 element offset


@dataclass
class PointerTensor:
    buffer: ir.Value
    offsets: Value  # i64 tensor of element offsets

    @property
    def shape(self) -> list:
        return list(ir.RankedTensorType(self.offsets.type).shape)


@dataclass
class PointerChoice:
    """A pointer, or a tensor of pointers, into one of several buffers (Triton selects
    between kernel arguments: `p = a_ptr if flag else b_ptr`, `tl.where(c, a_ptr + i,
    b_ptr + i)`; see choices.py). `options[k]` is where the pointer points if it points
    into the k-th buffer; `which` (an i32 scalar, or an i32 tensor of the pointers' shape)
    is the k in force, per element."""
    options: list  # Pointer or PointerTensor, one per buffer, buffers distinct
    which: ir.Value

    @property
    def buffers(self) -> list:
        return [o.buffer for o in self.options]


Converted = Union[Value, Pointer, PointerTensor, PointerChoice]


def flatten(converted: Converted) -> list:
    """The SSA values that carry `converted` across region boundaries (loops, ifs)."""
    if isinstance(converted, PointerChoice):
        return [converted.which] + [flatten(o)[0] for o in converted.options]
    if isinstance(converted, Pointer):
        return [converted.offset]
    if isinstance(converted, PointerTensor):
        return [converted.offsets.value]
    return [converted.value]


def rebuild(template: Converted, values: list) -> Converted:
    """The inverse of `flatten`: the same kind of value as `template`, from `values`."""
    if isinstance(template, PointerChoice):
        return PointerChoice([rebuild(o, [v]) for o, v in zip(template.options, values[1:])],
                             values[0])
    (value,) = values
    if isinstance(template, Pointer):
        return Pointer(template.buffer, value)
    if isinstance(template, PointerTensor):
        return PointerTensor(template.buffer, Value(value))
    return Value(value)
