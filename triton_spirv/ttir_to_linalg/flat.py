"""tt.int_to_ptr and tt.ptr_to_int, for devices whose buffers are host memory.

Triton code may load addresses from memory (`data_ptr()`s in an int64 tensor, as the
grouped-GEMM tutorial does) and cast them to pointers. A kernel here reaches memory only
through its buffer arguments, so a kernel with `tt.int_to_ptr` gets one hidden
`memref<?xT>` argument per pointee type T (`flat_memory_T`, after its own arguments; the
function attribute `opencl.flat_memory = N` counts them). The launcher passes any buffer
that aliases host memory there (launcher/launch.py: only on zero-copy devices, whose
device addresses are host addresses), and an address `a` becomes the element offset
`(a - base) / sizeof(T)` from that buffer's base address (`memref.
extract_aligned_pointer_as_index`). `tt.ptr_to_int` is the reverse: the buffer's base
address plus the offset in bytes. Addresses of well-formed Triton pointers are aligned
to their element size, so the division is exact.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, memref

from . import builders as b
from .values import Pointer, PointerTensor, Value


def _memory_element(pointee: ir.Type) -> ir.Type:
    if isinstance(pointee, ir.IntegerType) and ir.IntegerType(pointee).width == 1:
        return ir.IntegerType.get_signless(8)  # bool buffers hold bytes
    return pointee


def _element_bytes(t: ir.Type) -> int:
    width = ir.FloatType(t).width if isinstance(t, ir.FloatType) else b.int_width(t)
    return max(1, width // 8)


def collect_pointees(tt_func, pointee_of) -> list:
    """Element types (as buffers hold them) of the pointers that tt.int_to_ptr makes,
    in order of first use."""
    found = []
    for make_ptr in b.nested_ops(tt_func, "tt.int_to_ptr"):
        t = make_ptr.results[0].type
        pointee = pointee_of(b.element_type(t) if b.is_tensor(t) else t)
        if pointee is not None:
            elem = _memory_element(pointee)
            if str(elem) not in [str(e) for e in found]:
                found.append(elem)
    return found


def _base_address(buffer: ir.Value) -> ir.Value:
    return arith.index_cast(b.i64(), memref.extract_aligned_pointer_as_index(buffer))


def _elementwise(value: ir.Value, fn) -> ir.Value:
    """fn on a scalar, or on each element of a tensor."""
    if not b.is_tensor(value.type):
        return fn(value)
    shape = b.shape_of(value.type)
    out_type = ir.RankedTensorType.get(shape, b.i64())
    return b.generic([value], b.parallel_maps(len(shape), 1), [out_type],
                     lambda x, _o: [fn(x)])[0]


def int_to_ptr(conv, op, pointee_of):
    t = op.results[0].type
    elem = _memory_element(pointee_of(b.element_type(t) if b.is_tensor(t) else t))
    buffer = conv.flat_buffers.get(str(elem))
    if buffer is None:
        raise conv.error(op, f"no flat memory argument for pointers to {elem}")
    base = _base_address(buffer)
    size = arith.constant(b.i64(), _element_bytes(elem))
    address = conv.get_value(op, op.operands[0]).value
    offsets = _elementwise(address, lambda a: arith.divsi(arith.subi(a, base), size))
    if b.is_tensor(t):
        conv.set(op.results[0], PointerTensor(buffer, Value(offsets)))
    else:
        conv.set(op.results[0], Pointer(buffer, offsets))


def ptr_to_int(conv, op):
    src = conv.get(op.operands[0])
    if isinstance(src, Pointer):
        offsets = src.offset
    elif isinstance(src, PointerTensor):
        offsets = src.offsets.value if src.offsets is not None else None
    else:
        raise conv.error(op, "tt.ptr_to_int of a value that is not a pointer")
    if offsets is None:
        raise conv.error(op, "tt.ptr_to_int of a pointer without a known offset")
    elem = ir.MemRefType(src.buffer.type).element_type
    base = _base_address(src.buffer)
    size = arith.constant(b.i64(), _element_bytes(elem))
    address = _elementwise(offsets, lambda o: arith.addi(base, arith.muli(o, size)))
    if op.results[0].type != b.i64() and not b.is_tensor(op.results[0].type):
        raise conv.error(op, f"tt.ptr_to_int to {op.results[0].type} (only i64)")
    conv.set(op.results[0], Value(address))
