"""tt.atomic_rmw and tt.atomic_cas on global memory.

Both become upstream memref atomics on the kernel buffer, one element at a time:
- `tt.atomic_rmw` -> `memref.atomic_rmw <kind>` (returns the old value);
- `tt.atomic_cas` -> `memref.generic_atomic_rmw` whose region yields `val` when the
  current value equals `cmp` (bit patterns, as Triton's `atom.cas.bN`) and the current
  value otherwise: a compare-and-swap that returns the old value.
A scalar pointer gives one atomic (under `scf.if` when masked; a masked-off atomic
returns 0). A tensor of pointers gives a loop nest over the tile, element by element in
row-major order, each atomic under its mask, the old values stored into a result tile.
`sem` and `scope` are accepted: OpenCL 1.2 atomics are relaxed and device-wide, and the
emitter's compare-exchange loops are sequentially consistent per address.
Float max/min reach here as integer max/umin on bit patterns (Triton's own lowering).
- `tt.atomic_poll` -> per element, an `scf.while` that reads the element atomically (a
  `memref.generic_atomic_rmw` yielding the value it read) until it equals `expected`;
  the result is true. OpenCL devices have no global timer: a `timeout_ns` is rejected.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, memref, scf, tensor

from . import builders as b
from . import memory
from . import choices
from .values import Pointer, PointerChoice, PointerTensor, Value

# tt.atomic_rmw `atomic_rmw_op` (TritonAttrEnums.td) -> (kind for ints, kind for floats)
_KINDS = {
    1: ("andi", None), 2: ("ori", None), 3: ("xori", None), 4: ("addi", None),
    5: (None, "addf"), 6: ("maxs", None), 7: ("mins", None), 8: ("maxu", None),
    9: ("minu", None), 10: ("assign", "assign"),
}
_KIND_VALUES = {name: value for name, value in
                [("addf", 0), ("addi", 1), ("andi", 2), ("assign", 3), ("maximumf", 4),
                 ("maxnumf", 5), ("maxs", 6), ("maxu", 7), ("minimumf", 8), ("minnumf", 9),
                 ("mins", 10), ("minu", 11), ("mulf", 12), ("muli", 13), ("ori", 14),
                 ("xori", 15)]}


def _rmw_kind(conv, op, elem: ir.Type) -> ir.Attribute:
    code = ir.IntegerAttr(op.attributes["atomic_rmw_op"]).value
    int_kind, float_kind = _KINDS.get(code, (None, None))
    kind = float_kind if isinstance(elem, ir.FloatType) else int_kind
    if kind is None:
        raise conv.error(op, f"atomic_rmw op {code} on {elem} is not supported")
    return ir.Attribute.parse(f"{_KIND_VALUES[kind]} : i64")


_INT_COMBINE = {"addi": arith.addi, "andi": arith.andi, "ori": arith.ori,
                "xori": arith.xori, "maxs": arith.maxsi, "mins": arith.minsi,
                "maxu": arith.maxui, "minu": arith.minui, "assign": lambda cur, v: v}


def _rmw_bits_one(kind_name, buffer, offset, value, mask, int_type):
    """An integer rmw on the bit patterns of a float buffer (Triton's float max/min):
    a generic atomic that bitcasts, combines and bitcasts back; returns the old bits."""
    elem = memory.buffer_element_type(buffer)

    def do():
        generic = memref.GenericAtomicRMWOp(elem, buffer, [_index(offset)])
        block = generic.regions[0].blocks.append(elem)
        with ir.InsertionPoint(block):
            current = arith.bitcast(int_type, block.arguments[0])
            new = _INT_COMBINE[kind_name](current, value)
            memref.AtomicYieldOp(arith.bitcast(elem, new))
        return arith.bitcast(int_type, generic.result)

    return memory.guarded(mask, do, lambda: memory.zero(int_type), int_type)


def _index(offset: ir.Value) -> ir.Value:
    return arith.index_cast(b.index_type(), offset)


def _rmw_one(kind, buffer, offset, value, mask):
    elem = memory.buffer_element_type(buffer)

    def do():
        return memref.AtomicRMWOp(kind, value, buffer, [_index(offset)]).result

    return memory.guarded(mask, do, lambda: memory.zero(elem), elem)


def cas_one(buffer, offset, cmp, value, int_type=None):
    """Compare-and-swap of one element; with `int_type`, on the integer bit patterns of
    a float buffer (a pointer Triton bitcast: `cmp`, `value` and the result are bits)."""
    elem = memory.buffer_element_type(buffer)
    generic = memref.GenericAtomicRMWOp(elem, buffer, [_index(offset)])
    block = generic.regions[0].blocks.append(elem)
    with ir.InsertionPoint(block):
        current = block.arguments[0]
        new = value
        if int_type is not None:
            same = arith.cmpi(0, arith.bitcast(int_type, current), cmp)
            new = arith.bitcast(elem, value)
        elif isinstance(elem, ir.FloatType):
            bits = ir.IntegerType.get_signless(ir.FloatType(elem).width)
            same = arith.cmpi(0, arith.bitcast(bits, current), arith.bitcast(bits, cmp))
        else:
            same = arith.cmpi(0, current, cmp)
        memref.AtomicYieldOp(arith.select(same, new, current))
    return generic.result if int_type is None else arith.bitcast(int_type, generic.result)


def _each_element(conv, op, ptr: PointerTensor, operands, one, elem=None):
    """Runs `one(offset, *elements)` for every element of the tile; returns the tile of
    results."""
    shape = ptr.shape
    elem = elem or memory.buffer_element_type(ptr.buffer)
    tile = memory.tile_buffer(shape, elem)

    def body(indices):
        offset = tensor.extract(ptr.offsets.value, indices)
        elements = [None if v is None else
                    (tensor.extract(v, indices) if b.is_tensor(v.type) else v)
                    for v in operands]
        memref.store(one(offset, *elements), tile, indices)

    memory.loop_nest(shape, body)
    return memory.as_tensor(tile)


def _operand(conv, op, i):
    return conv.get_value(op, op.operands[i]).value if len(op.operands) > i else None


def atomic_rmw(conv, op):
    ptr = conv.get(op.operands[0])
    value, mask = _operand(conv, op, 1), _operand(conv, op, 2)
    if isinstance(ptr, PointerChoice):
        result = _on_choice(conv, op, ptr, mask,
                            lambda option, m: _rmw(conv, op, option, value, m))
    elif isinstance(ptr, (Pointer, PointerTensor)):
        result = _rmw(conv, op, ptr, value, mask)
    else:
        raise conv.error(op, "atomic on a value that is not a pointer")
    conv.set(op.results[0], Value(result))


def _rmw(conv, op, ptr, value, mask):
    int_type = conv.reinterpreted.get(op.operands[0])
    if int_type is not None:
        code = ir.IntegerAttr(op.attributes["atomic_rmw_op"]).value
        kind_name = _KINDS.get(code, (None, None))[0]
        if kind_name not in _INT_COMBINE:
            raise conv.error(op, f"atomic_rmw op {code} on reinterpreted floats")
        one = lambda off, v, m: _rmw_bits_one(kind_name, ptr.buffer, off, v, m,  # noqa
                                              int_type)
        return one(ptr.offset, value, mask) if isinstance(ptr, Pointer) else \
            _each_element(conv, op, ptr, [value, mask], one, int_type)
    kind = _rmw_kind(conv, op, memory.buffer_element_type(ptr.buffer))
    if isinstance(ptr, Pointer):
        return _rmw_one(kind, ptr.buffer, ptr.offset, value, mask)
    return _each_element(conv, op, ptr, [value, mask],
                         lambda off, v, m: _rmw_one(kind, ptr.buffer, off, v, m))


def atomic_cas(conv, op):
    ptr = conv.get(op.operands[0])
    cmp, value = _operand(conv, op, 1), _operand(conv, op, 2)
    if isinstance(ptr, PointerChoice):
        result = _on_choice(conv, op, ptr, None,
                            lambda option, m: _cas(conv, op, option, cmp, value, m))
    elif isinstance(ptr, (Pointer, PointerTensor)):
        result = _cas(conv, op, ptr, cmp, value, None)
    else:
        raise conv.error(op, "atomic on a value that is not a pointer")
    conv.set(op.results[0], Value(result))


def _atomic_read(buffer, offset) -> ir.Value:
    """The element, read atomically: a read-modify-write that writes back what it read."""
    elem = memory.buffer_element_type(buffer)
    generic = memref.GenericAtomicRMWOp(elem, buffer, [_index(offset)])
    block = generic.regions[0].blocks.append(elem)
    with ir.InsertionPoint(block):
        memref.AtomicYieldOp(block.arguments[0])
    return generic.result


def _poll_one(buffer, offset, expected) -> ir.Value:
    """Waits until the element equals `expected`; returns true."""
    loop = scf.WhileOp([], [])
    before = loop.before.blocks.append()
    with ir.InsertionPoint(before):
        differs = arith.cmpi(arith.CmpIPredicate.ne, _atomic_read(buffer, offset), expected)
        scf.ConditionOp(differs, [])
    with ir.InsertionPoint(loop.after.blocks.append()):
        scf.YieldOp([])
    return arith.constant(ir.IntegerType.get_signless(1), 1)


def atomic_poll(conv, op):
    ptr = conv.get(op.operands[0])
    if not isinstance(ptr, (Pointer, PointerTensor)):
        raise conv.error(op, "atomic_poll on a value that is not a pointer")
    if len(op.operands) > 2:
        raise conv.error(op, "atomic_poll with timeout_ns is not supported: OpenCL devices "
                             "have no global timer (poll without a timeout)")
    expected = _operand(conv, op, 1)
    if isinstance(ptr, Pointer):
        result = _poll_one(ptr.buffer, ptr.offset, expected)
    else:
        result = _each_element(conv, op, ptr, [expected],
                               lambda off, e: _poll_one(ptr.buffer, off, e),
                               ir.IntegerType.get_signless(1))
    conv.set(op.results[0], Value(result))


def _cas(conv, op, ptr, cmp, value, mask):
    """Compare-and-swap through one buffer; `mask` (from a pointer choice) guards each
    element, a masked-off one returns 0."""
    int_type = conv.reinterpreted.get(op.operands[0])
    elem = int_type or memory.buffer_element_type(ptr.buffer)

    def one(off, c, v, m):
        return memory.guarded(m, lambda: cas_one(ptr.buffer, off, c, v, int_type),
                               lambda: memory.zero(elem), elem)

    if isinstance(ptr, Pointer):
        return one(ptr.offset, cmp, value, mask)
    return _each_element(conv, op, ptr, [cmp, value, mask], one, int_type)


def _on_choice(conv, op, choice: PointerChoice, mask, run) -> ir.Value:
    """An atomic through a pointer chosen between buffers, on the buffer in force."""
    int_type = conv.reinterpreted.get(op.operands[0])
    elem = int_type or memory.buffer_element_type(choice.options[0].buffer)
    return choices.per_option(choice, Value(mask) if mask is not None else None,
                              lambda option, m: run(option, m.value if m else None), elem)


def barrier(conv, op):
    from mlir.dialects import gpu
    gpu.barrier()


HANDLERS = {
    "tt.atomic_rmw": atomic_rmw,
    "tt.atomic_cas": atomic_cas,
    "tt.atomic_poll": atomic_poll,
    "ttg.barrier": barrier,
}
