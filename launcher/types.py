"""Triton signature types and their OpenCL C counterparts.

This table is the contract with the OpenCL emitter: a kernel's parameters are the
non-constexpr signature entries, in order, and each one has the OpenCL C type listed
here. Pointers are `__global X*` buffers; scalars are passed by value.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class ScalarKind:
    """How a by-value Triton argument is passed to an OpenCL kernel."""

    triton: str  # the Triton type, e.g. "i32"
    opencl: str  # the OpenCL C parameter type, e.g. "int"
    pack_char: str  # struct-style code of the bytes passed to clSetKernelArg
    is_float: bool
    min_value: int = 0  # integer range, inclusive (unused for floats)
    max_value: int = 0

    @property
    def nbytes(self):
        return _PACK_CHAR_BYTES[self.pack_char]


_PACK_CHAR_BYTES = {"b": 1, "B": 1, "h": 2, "H": 2, "i": 4, "I": 4, "l": 8, "L": 8, "f": 4, "d": 8}


def _signed(triton, opencl, char, bits):
    return ScalarKind(triton, opencl, char, False, -(1 << (bits - 1)), (1 << (bits - 1)) - 1)


def _unsigned(triton, opencl, char, bits):
    return ScalarKind(triton, opencl, char, False, 0, (1 << bits) - 1)


# fp16 and bf16 scalars travel as float: OpenCL 1.2 devices need not support `half`
# parameters (cl_khr_fp16), and the kernel computes in float anyway.
SCALAR_KINDS = {
    kind.triton: kind
    for kind in (
        _unsigned("i1", "uchar", "B", 1),
        _unsigned("u1", "uchar", "B", 1),
        _signed("i8", "char", "b", 8),
        _signed("i16", "short", "h", 16),
        _signed("i32", "int", "i", 32),
        _signed("i64", "long", "l", 64),
        _unsigned("u8", "uchar", "B", 8),
        _unsigned("u16", "ushort", "H", 16),
        _unsigned("u32", "uint", "I", 32),
        _unsigned("u64", "ulong", "L", 64),
        ScalarKind("fp16", "float", "f", True),
        ScalarKind("bf16", "float", "f", True),
        ScalarKind("fp32", "float", "f", True),
        ScalarKind("f32", "float", "f", True),
        ScalarKind("fp64", "double", "d", True),
    )
}

# Element types of `__global X*` buffers. Half buffers are only touched through
# vload_half/vstore_half (no cl_khr_fp16 needed); bf16 is a bit pattern in ushort;
# fp8 formats are bytes.
BUFFER_ELEMENT_TYPES = {
    "i1": "uchar", "u1": "uchar",
    "i8": "char", "i16": "short", "i32": "int", "i64": "long",
    "u8": "uchar", "u16": "ushort", "u32": "uint", "u64": "ulong",
    "fp16": "half", "bf16": "ushort", "fp32": "float", "f32": "float", "fp64": "double",
    "fp8e4nv": "uchar", "fp8e4b8": "uchar", "fp8e4b15": "uchar", "fp8e5": "uchar", "fp8e5b16": "uchar",
}

# Byte sizes of OpenCL C scalar parameter types, to check a clbin's declared
# parameter types against the packing chosen from the Triton signature.
OPENCL_SCALAR_BYTES = {
    "bool": 1, "char": 1, "uchar": 1, "unsigned char": 1, "short": 2, "ushort": 2, "unsigned short": 2,
    "half": 2, "int": 4, "uint": 4, "unsigned int": 4, "unsigned": 4, "float": 4,
    "long": 8, "ulong": 8, "unsigned long": 8, "double": 8,
}


def is_pointer_type(ty):
    return isinstance(ty, str) and ty.startswith("*")


def pointee_type(ty):
    """`*fp32` -> `fp32`; `*kfp32` (Triton's spelling of a const pointer) -> `fp32`."""
    inner = ty[1:]
    # No Triton element type starts with "k", so a leading "k" is the const marker.
    return inner[1:] if inner.startswith("k") else inner


def opencl_type_of(ty):
    """The OpenCL C parameter type of a Triton signature type (`*fp32` -> `__global float*`)."""
    if is_pointer_type(ty):
        element = BUFFER_ELEMENT_TYPES.get(pointee_type(ty), "uchar")
        return f"__global {element}*"
    if ty in SCALAR_KINDS:
        return SCALAR_KINDS[ty].opencl
    raise KeyError(f"Triton type {ty!r} has no OpenCL kernel parameter type")


def is_opencl_pointer_decl(decl):
    return "*" in decl


def opencl_scalar_bytes(decl):
    """Byte size of an OpenCL C scalar type name, or None if unknown."""
    words = [w for w in decl.replace("const", " ").replace("__private", " ").split()]
    return OPENCL_SCALAR_BYTES.get(" ".join(words))
