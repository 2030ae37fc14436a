"""memref atomics and gpu.printf as OpenCL C 1.2.

- `memref.atomic_rmw` on 32-bit integers of a global or local buffer: the OpenCL 1.2
  builtin (`atomic_add`, `atomic_max`, ... on `volatile int*` / `uint*` for the unsigned
  kinds, `atomic_xchg` also for float). On 64-bit integers the `atom_*` builtins of
  cl_khr_int64_base_atomics / cl_khr_int64_extended_atomics (a device without them
  rejects the kernel at compile time: `EmittedKernel.int64_atomics_line`,
  triton_spirv/target.py's check_kernel_fits).
  Every other kind/type (float add/max/min/mul, integer mul, f64) is a compare-exchange
  loop on the bit pattern (`atomic_cmpxchg`, `atom_cmpxchg` for 64 bits).
- `memref.generic_atomic_rmw`: a compare-exchange loop around the region body: the block
  argument is the current value, `memref.atomic_yield` gives the new one; the result is
  the value the exchange replaced. A body that only combines the bits of an f32 or f64
  with an integer operand (Triton's float max/min: integer max on the bits of
  non-negative values, unsigned min on those of negative ones) is that integer
  builtin on the element's bits instead (`as_float(atomic_max((volatile int*)p, v))`,
  `atom_max` on `long` bits for f64): no loop.
- 8- and 16-bit elements (i8, i16, f16, bf16, fp8) have no OpenCL 1.2 atomics: every
  kind is a compare-exchange loop on the aligned 32-bit word that contains the element,
  replacing only its lanes (`word_lane_shift` finds them by the address and the device's
  byte order). The word may reach up to 3 bytes past either end of the buffer; those
  bytes are written back unchanged, atomically.
- `gpu.printf`: `printf` with the op's format (the producer picks the conversion
  specifiers for the operand types: OpenCL printf needs exact ones).
"""

from __future__ import annotations

from mlir import ir

from . import ctypes_table as ct
from . import fp8
from .control_flow import Target
from .memory import pointer as _pointer
from .errors import error_at
from .locations import real_source_line

# memref.atomic_rmw kind (arith::AtomicRMWKind) -> name
_KIND = {0: "addf", 1: "addi", 2: "andi", 3: "assign", 4: "maximumf", 5: "maxnumf",
         6: "maxs", 7: "maxu", 8: "minimumf", 9: "minnumf", 10: "mins", 11: "minu",
         12: "mulf", 13: "muli", 14: "ori", 15: "xori"}

# kinds with a builtin on 32-bit (atomic_) and 64-bit (atom_) integers: (name, unsigned)
_BUILTIN = {"addi": ("add", False), "andi": ("and", False), "ori": ("or", False),
            "xori": ("xor", False), "maxs": ("max", False), "mins": ("min", False),
            "maxu": ("max", True), "minu": ("min", True), "assign": ("xchg", False)}

# The new value of compare-exchange loops, from the current value {c} and operand {v}.
_COMBINE = {
    "addf": "{c} + {v}", "addi": "{c} + {v}", "mulf": "{c} * {v}",
    "muli": "{c} * {v}", "andi": "{c} & {v}", "ori": "{c} | {v}", "xori": "{c} ^ {v}",
    "maxs": "max({c}, {v})", "mins": "min({c}, {v})", "assign": "{v}",
    "maxnumf": "fmax({c}, {v})", "minnumf": "fmin({c}, {v})",
    "maximumf": "maximum_{T}({c}, {v})", "minimumf": "minimum_{T}({c}, {v})",
    "maxu": "({T})max(({U}){c}, ({U}){v})", "minu": "({T})min(({U}){c}, ({U}){v})",
}

_INT64_PRAGMA = "pragma_int64_atomics"  # see helpers.py


def _element(emitter, op, memref_value, indices):
    view = emitter.view(op, memref_value)
    kind = view.buffer.kind
    if ct.BIT_WIDTH.get(kind) not in (8, 16, 32, 64) or kind in ("index", "i1"):
        raise error_at(op, f"atomics on {kind} elements are not supported")
    index = view.element([emitter.index_expr(v) for v in indices])
    space = "__global" if view.buffer.is_global else "__local"
    return view, kind, space, _pointer(view, index)


def _is_narrow(kind: str) -> bool:
    return ct.BIT_WIDTH[kind] < 32


def _bits_type(kind: str) -> str:
    return "uint" if ct.BIT_WIDTH[kind] == 32 else "ulong"


def _to_bits(kind: str, text: str) -> str:
    return f"as_{_bits_type(kind)}({text})" if ct.is_float(kind) else f"({_bits_type(kind)}){text}"


def _from_bits(kind: str, text: str) -> str:
    T = ct.VALUE_CTYPE[kind]
    return f"as_{T}({text})" if ct.is_float(kind) else f"({T}){text}"


def _needs_int64_atomics(emitter, op) -> None:
    """The extension pragmas, and the first source line that needs them (the compiler
    rejects the kernel on a device without the extensions, naming that line)."""
    emitter.helpers.need(_INT64_PRAGMA)
    if not emitter.int64_atomics_line:
        line = real_source_line(op.location)
        emitter.int64_atomics_line = line.short if line is not None else "(line unknown)"


def _prefix(emitter, op, kind: str) -> str:
    if ct.BIT_WIDTH[kind] == 64:
        _needs_int64_atomics(emitter, op)
        return "atom_"
    return "atomic_"


def atomic_rmw(emitter, op) -> None:
    from mlir import ir
    kind_name = _KIND[ir.IntegerAttr(op.attributes["kind"]).value]
    value = emitter.operand(op.operands[0], typed=True)  # an operand of max(), min()
    view, kind, space, pointer = _element(emitter, op, op.operands[1],
                                          list(op.operands)[2:])
    T = ct.VALUE_CTYPE[kind]
    builtin = None if _is_narrow(kind) else _BUILTIN.get(kind_name)
    if builtin is not None and (ct.is_int(kind) or (kind == "f32" and kind_name == "assign")):
        name, unsigned = builtin
        ctype = (ct.UNSIGNED_CTYPE[kind] if unsigned else T) if ct.is_int(kind) else T
        call = (f"{_prefix(emitter, op, kind) if ct.is_int(kind) else 'atomic_'}{name}("
                f"(volatile {space} {ctype}*)({pointer}), ({ctype}){value})")
        _builtin_call(emitter, op, call, call if ctype == T else f"({T}){call}", T)
        return
    fmt = _COMBINE.get(kind_name)
    if fmt is None:
        raise error_at(op, f"atomic {kind_name} on {kind} is not supported")
    if "maximum_" in fmt or "minimum_" in fmt:
        emitter.helpers.need(f"{'maximum' if 'maximum_' in fmt else 'minimum'}_{T}")
    _cas_loop(emitter, op, kind, space, pointer,
              lambda current: fmt.format(c=current, v=value, T=T,
                                         U=ct.UNSIGNED_CTYPE.get(kind, T)))


def _builtin_call(emitter, op, call: str, old_value: str, ctype: str) -> None:
    """An atomic builtin's `call`, defining the old value (`old_value`, of `ctype`)
    where something reads it, else a statement."""
    if any(True for _ in op.results[0].uses):
        emitter.define(op, op.results[0], old_value, ctype, role="old")
    else:
        emitter.stmt(op, f"{call};")


def generic_atomic_rmw(emitter, op) -> None:
    view, kind, space, pointer = _element(emitter, op, op.operands[0],
                                          list(op.operands)[1:])
    body = op.regions[0].blocks[0]
    on_bits = _integer_combine_of_bits(op, kind)
    if on_bits is not None:
        name, unsigned, operand = on_bits
        bits_kind = "i32" if kind == "f32" else "i64"
        ctype = (ct.UNSIGNED_CTYPE if unsigned else ct.SIGNED_CTYPE)[bits_kind]
        call = (f"{_prefix(emitter, op, bits_kind)}{name}((volatile {space} {ctype}*)"
                f"({pointer}), ({ctype}){emitter.operand(operand, typed=True)})")
        T = ct.VALUE_CTYPE[kind]
        _builtin_call(emitter, op, call, f"as_{T}({call})", T)
        return

    def new_value(current: str) -> str:
        emitter.exprs[body.arguments[0]] = current
        target = Target(emitter.names.fresh("desired"), ct.VALUE_CTYPE[kind])
        emitter.stmt(op, f"{target.ctype} {target.name};")
        emitter.emit_region_block(body, [target])
        return target.name

    _cas_loop(emitter, op, kind, space, pointer, new_value)


# Integer ops a generic atomic may apply to an element's bits -> (builtin, unsigned)
_BITS_BUILTIN = {"arith.addi": ("add", False), "arith.andi": ("and", False),
                 "arith.ori": ("or", False), "arith.xori": ("xor", False),
                 "arith.maxsi": ("max", False), "arith.minsi": ("min", False),
                 "arith.maxui": ("max", True), "arith.minui": ("min", True)}


def _integer_combine_of_bits(op, kind: str):
    """(builtin, unsigned, operand) when the body of a generic atomic on f32 or f64 is
    `bitcast current to an integer; combine with an operand from outside; bitcast back;
    yield`, else None."""
    if kind not in ("f32", "f64"):
        return None
    body = op.regions[0].blocks[0]
    ops = list(body.operations)
    if len(ops) != 4 or [o.operation.name for o in ops] != \
            ["arith.bitcast", ops[1].operation.name, "arith.bitcast", "memref.atomic_yield"]:
        return None
    to_bits, combine, to_float, yield_ = ops
    builtin = _BITS_BUILTIN.get(combine.operation.name)
    if builtin is None or to_bits.operands[0] != body.arguments[0]:
        return None
    if to_float.operands[0] != combine.results[0] or yield_.operands[0] != to_float.results[0]:
        return None
    lhs, rhs = combine.operands
    operand = rhs if lhs == to_bits.results[0] else lhs if rhs == to_bits.results[0] else None
    if operand is None or _defined_in(operand, body):
        return None
    return (*builtin, operand)


def _defined_in(value, block) -> bool:
    owner = value.owner
    if isinstance(owner, ir.Block):
        return owner == block
    return owner.operation.block == block


class _Word:
    """The memory a compare-exchange loop works on: the element itself (32/64 bits) or
    the aligned 32-bit word around it (8/16 bits). `value(expected)` is the element's
    value in the word's bits, `replaced(expected, desired)` the word with it replaced."""

    def __init__(self, emitter, kind: str, space: str, pointer: str):
        self.kind, self.space = kind, space
        self.narrow = _is_narrow(kind)
        self.bits = "uint" if self.narrow else _bits_type(kind)
        self.pointer = pointer
        if self.narrow:
            emitter.helpers.need("word_lane_shift")
            self.pointer = f"(uintptr_t)({pointer}) & ~(uintptr_t)3"
            self.shift = emitter.names.fresh("lane_shift")
            self.lane_declaration = (f"uint {self.shift} = word_lane_shift((uintptr_t)"
                                     f"({pointer}), {ct.BIT_WIDTH[kind] // 8});")

    def value(self, emitter, expected: str) -> str:
        if not self.narrow:
            return _from_bits(self.kind, expected)
        lane = f"({_LANE_BITS[ct.BIT_WIDTH[self.kind]]})({expected} >> {self.shift})"
        return _lane_value(emitter, self.kind, lane)

    def replaced(self, emitter, expected: str, desired: str) -> str:
        if not self.narrow:
            return _to_bits(self.kind, desired)
        mask = f"({_LANE_MASK[ct.BIT_WIDTH[self.kind]]} << {self.shift})"
        lane = f"(uint){_lane_bits(emitter, self.kind, desired)}"
        return f"({expected} & ~{mask}) | ({lane} << {self.shift})"


_LANE_BITS = {8: "uchar", 16: "ushort"}
_LANE_MASK = {8: "0xffu", 16: "0xffffu"}


# 16-bit float kinds: the helpers that decode an element's bits and encode a value.
_HALF_CODECS = {"f16": ("half_bits_to_float", "float_to_half_bits"),
                "bf16": ("bf16_bits_to_float", "float_to_bf16_bits")}


def _codec(kind: str):
    """(decode helper, encode helper) of a float kind stored as bits, or None."""
    if kind in _HALF_CODECS:
        return _HALF_CODECS[kind]
    if kind in fp8.KINDS:
        return fp8.decode(kind), fp8.encode(kind)
    return None


def _lane_value(emitter, kind: str, lane: str) -> str:
    """The value of an element from its bits (f16/bf16/fp8 decode to float)."""
    codec = _codec(kind)
    if codec:
        return f"{emitter.helpers.need(codec[0])}({lane})"
    return f"({ct.VALUE_CTYPE[kind]}){lane}"


def _lane_bits(emitter, kind: str, value: str) -> str:
    """The bits of an element's value (f16/bf16/fp8 rounded to nearest even)."""
    codec = _codec(kind)
    if codec:
        return f"{emitter.helpers.need(codec[1])}({value})"
    return f"({_LANE_BITS[ct.BIT_WIDTH[kind]]}){value}"


def _cas_loop(emitter, op, kind: str, space: str, pointer: str, new_value) -> None:
    """`old = atomic read of *p; do { next = f(old) } while (!cmpxchg(p, old, next))`;
    the result is the value that was replaced. 8/16-bit elements: on their aligned 32-bit word."""
    T = ct.VALUE_CTYPE[kind]
    word = _Word(emitter, kind, space, pointer)
    U = word.bits
    cmpxchg = "atomic_cmpxchg" if U == "uint" else "atom_cmpxchg"
    if U == "ulong":
        _needs_int64_atomics(emitter, op)
    result = emitter.names.fresh("old")
    p = emitter.names.fresh("atomic_word" if word.narrow else "atomic_ptr")
    expected = emitter.names.fresh("expected")
    emitter.stmt(op, f"{T} {result};")
    emitter.out.line("{")
    emitter.out.depth += 1
    emitter.stmt(op, f"volatile {space} {U}* {p} = (volatile {space} {U}*)({word.pointer});")
    if word.narrow:
        emitter.stmt(op, word.lane_declaration)
    # An atomic read (a plain one would race with the other work-items' exchanges).
    emitter.stmt(op, f"{U} {expected} = {cmpxchg}({p}, 0, 0);")
    emitter.out.open("while (1)")
    emitter.names.push_scope()
    current = emitter.names.fresh("current")
    emitter.stmt(op, f"{T} {current} = {word.value(emitter, expected)};")
    desired = new_value(current)
    seen = emitter.names.fresh("seen")
    emitter.stmt(op, f"{U} {seen} = {cmpxchg}({p}, {expected}, "
                     f"{word.replaced(emitter, expected, desired)});")
    emitter.stmt(op, f"if ({seen} == {expected}) {{ {result} = {current}; break; }}")
    emitter.stmt(op, f"{expected} = {seen};")
    emitter.names.pop_scope()
    emitter.out.close()
    emitter.out.close()
    emitter.exprs[op.results[0]] = result


def atomic_yield(emitter, op) -> None:
    target = emitter.targets[-1][0]
    emitter.stmt(op, f"{target.name} = {emitter.operand(op.operands[0])};")


def printf(emitter, op) -> None:
    from mlir import ir
    fmt = ir.StringAttr(op.attributes["format"]).value
    escaped = (fmt.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
               .replace("\t", "\\t"))
    args = "".join(f", {emitter.operand(v)}" for v in op.operands)
    emitter.stmt(op, f'printf("{escaped}"{args});')


HANDLERS = {
    "memref.atomic_rmw": atomic_rmw,
    "memref.generic_atomic_rmw": generic_atomic_rmw,
    "memref.atomic_yield": atomic_yield,
    "gpu.printf": printf,
}
