"""Host-side tensor descriptors (`triton.tools.tensor_descriptor.TensorDescriptor`).

The compiler's TTIR stage rewrites descriptors into plain pointer arithmetic, so a
descriptor argument of type `tensordesc<fp16[64, 64]>` reaches the kernel as the
parameters Triton's own launchers pass when a backend has no descriptor hardware
(`triton.backends.driver.decompose_descriptor` / `expand_signature` without
descriptor metadata):

    base pointer, shape (i64 each), strides (i64 each), padding is NaN (i1),
    round f32 to tf32 (i1), shape again (i32 each), strides again (i64 each)

This module gives those parameter types and values; it does not import Triton.
"""

import re

_DESCRIPTOR = re.compile(r"tensordesc(?:_im2col)?<([^[>]*)\[([^\]]*)\]")
_INPUT_RANK = re.compile(r",input_rank=(\d+)")


def is_descriptor_type(ty):
    return isinstance(ty, str) and ty.startswith("tensordesc")


def descriptor_param_types(ty):
    """The flattened Triton types a descriptor argument is passed as."""
    element, rank = _parse(ty)
    return (["*" + element] + ["i64"] * (2 * rank) + ["i1", "i1"] + ["i32"] * rank + ["i64"] * rank)


def descriptor_param_names(name, ty):
    _element, rank = _parse(ty)
    dims = range(rank)
    return ([f"{name}.base"] + [f"{name}.shape[{d}]" for d in dims] + [f"{name}.strides[{d}]" for d in dims]
            + [f"{name}.padding", f"{name}.round_f32_to_tf32"] + [f"{name}.shape[{d}]" for d in dims]
            + [f"{name}.strides[{d}]" for d in dims])


def descriptor_values(value):
    """The argument values of one host descriptor, in the order of descriptor_param_types."""
    try:
        shape = [int(s) for s in value.shape]
        strides = [int(s) for s in value.strides]
        base = value.base
    except AttributeError:
        raise TypeError(f"must be a TensorDescriptor (base, shape, strides), got {type(value).__name__}") from None
    padding_nan = getattr(value, "padding", "zero") == "nan"
    round_to_tf32 = bool(getattr(value, "round_f32_to_tf32", False))
    return [base, *shape, *strides, padding_nan, round_to_tf32, *shape, *strides]


def _parse(ty):
    match = _DESCRIPTOR.match(ty)
    if not match:
        raise ValueError(f"malformed tensor descriptor type {ty!r}")
    element, block_shape = match.group(1), match.group(2)
    rank = _INPUT_RANK.search(ty)
    return element, int(rank.group(1)) if rank else block_shape.count(",") + 1
