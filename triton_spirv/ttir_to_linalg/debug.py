"""tt.print (tl.device_print) and tt.assert (tl.device_assert) as `gpu.printf`.

tt.print: one printf per element, like Triton's GPU backends:
`pid (x, y, z) idx (i, j) <prefix><value>` (no idx for scalars). The converter picks the
conversion specifier from the MLIR type (OpenCL printf needs exact ones): small integers
are widened to i32 (`%d`/`%u`, `%x` with hex), i64 `%ld`/`%lu`/`%lx`, floats `%f` (f16
and bf16 widened to f32), pointers print their element offset.

tt.assert: every element whose condition is false prints
`<file>:<line>: <function>: block: [x, y, z], thread: [i]: Assertion `<message>` failed.`
and reports into the assert record, so that the launch raises AssertionError:
a kernel with asserts takes one more `memref<?xi32>` argument after its own
(`assert_record`, laid out as opencl_abi describes: the launcher zeroes it before each
launch) and carries `opencl.asserts = [["<file>", <line>, "<message>"], ...]`. The first
failing element (an atomic compare-exchange on the id word) writes assert id + 1 and its
program id; later failures leave the record alone. The kernel keeps running after a
failure.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, gpu, memref, tensor

from opencl_abi import ASSERT_ID, ASSERT_PROGRAM_ID, AssertSite

from . import builders as b
from . import memory
from .atomics import cas_one
from .values import Pointer, PointerTensor


def _i32():
    return ir.IntegerType.get_signless(32)


def _pid_values():
    ids = []
    for dim in "xyz":
        idx = gpu.block_id(ir.Attribute.parse(f"#gpu<dim {dim}>"))
        ids.append(arith.index_cast(_i32(), idx))
    return ids


def _printable(value: ir.Value, signed: bool, hexadecimal: bool):
    """(format specifier, value to pass) for one scalar."""
    t = value.type
    if isinstance(t, ir.FloatType):
        if ir.FloatType(t).width < 32:
            value = arith.extf(ir.F32Type.get(), value)
        return "%f", value
    if isinstance(t, ir.IndexType):
        value = arith.index_cast(b.i64(), value)
        t = value.type
    width = b.int_width(t)
    if width < 32:
        value = arith.extsi(_i32(), value) if signed and width > 1 else arith.extui(_i32(), value)
        width = 32
    length = "l" if width == 64 else ""
    return "%" + length + ("x" if hexadecimal else "d" if signed else "u"), value


def print_op(conv, op):
    prefix = ir.StringAttr(op.attributes["prefix"]).value
    hexadecimal = ir.BoolAttr(op.attributes["hex"]).value if "hex" in op.attributes else False
    signed_flags = list(ir.DenseI32ArrayAttr(op.attributes["isSigned"])) \
        if "isSigned" in op.attributes else []
    pid = _pid_values()
    if not len(op.operands):
        gpu.printf("pid (%d, %d, %d) " + prefix.replace("%", "%%") + "\n", *pid)
        return
    for i, operand in enumerate(op.operands):
        converted = conv.get(operand)
        values = converted.offsets.value if isinstance(converted, PointerTensor) else \
            converted.offset if isinstance(converted, Pointer) else converted.value
        signed = bool(signed_flags[i]) if i < len(signed_flags) else True
        label = prefix.replace("%", "%%")
        if len(op.operands) > 1:
            label += f"(operand {i}) "
        if not b.is_tensor(values.type):
            spec, v = _printable(values, signed, hexadecimal)
            gpu.printf(f"pid (%d, %d, %d) {label}{spec}\n", *pid, v)
            continue
        shape = b.shape_of(values.type)

        def one(indices, values=values, label=label, signed=signed):
            spec, v = _printable(tensor.extract(values, indices), signed, hexadecimal)
            idx = [arith.index_cast(_i32(), x) for x in indices]
            where = ", ".join(["%d"] * len(idx))
            gpu.printf(f"pid (%d, %d, %d) idx ({where}) {label}{spec}\n", *pid, *idx, v)

        memory.loop_nest(shape, one)


def _assert_site(op) -> AssertSite:
    from ..ttir.reader import source_line
    where = source_line(op.location)
    path, line = (where[0], where[1]) if where else ("", 0)
    return AssertSite(path, int(line), ir.StringAttr(op.attributes["message"]).value)


def collect_asserts(tt_func) -> list[AssertSite]:
    """The site of each distinct tt.assert in the function, in op order."""
    found = []
    for assert_op in b.nested_ops(tt_func, "tt.assert"):
        site = _assert_site(assert_op)
        if site not in found:
            found.append(site)
    return found


def assert_record_type() -> ir.Type:
    """The assert record argument: `__global int*` in the kernel's signature (the
    hidden parameter ASSERT_RECORD of opencl_abi), ASSERT_RECORD_INTS ints long."""
    return ir.MemRefType.get([ir.ShapedType.get_dynamic_size()], _i32())


def asserts_attr(asserts: list[AssertSite]) -> ir.Attribute:
    """`opencl.asserts`: one [file, line, message] array per assert id."""
    return ir.ArrayAttr.get([ir.ArrayAttr.get([
        ir.StringAttr.get(site.path), ir.IntegerAttr.get(_i32(), site.line),
        ir.StringAttr.get(site.message)]) for site in asserts])


def _record_failure(record, assert_id: int, pid):
    """The first failure wins the id word (compare-exchange 0 -> id + 1) and writes its pid."""
    zero = arith.constant(_i32(), 0)
    old = cas_one(record, arith.constant(b.i64(), ASSERT_ID), zero,
                  arith.constant(_i32(), assert_id + 1))
    won = arith.cmpi(0, old, zero)

    def write_pid():
        for k, value in enumerate(pid):
            memref.store(value, record, [b.const_index(ASSERT_PROGRAM_ID + k)])

    memory.guarded(won, write_pid, None, None)


def assert_op(conv, op):
    from ..ttir.reader import source_line
    message = ir.StringAttr(op.attributes["message"]).value
    where = source_line(op.location)
    place = f"{where[0]}:{where[1]}" if where else "unknown location"
    text = (f"{place}: {conv.name}: block: [%d, %d, %d], thread: [%d]: Assertion `"
            f"{message.replace('%', '%%')}` failed.\n")
    cond = conv.get_value(op, op.operands[0]).value
    pid = _pid_values()

    def check(c, indices):
        if c.type != ir.IntegerType.get_signless(1):
            c = arith.cmpi(1, c, arith.constant(c.type, 0))
        failed = arith.xori(c, arith.constant(c.type, 1))
        flat = arith.constant(_i32(), 0) if not indices else \
            arith.index_cast(_i32(), indices[-1])

        def fail():
            gpu.printf(text, *pid, flat)
            if conv.assert_record is not None:
                _record_failure(conv.assert_record, conv.asserts.index(_assert_site(op)), pid)

        memory.guarded(failed, fail, None, None)

    if not b.is_tensor(cond.type):
        check(cond, [])
        return
    memory.loop_nest(b.shape_of(cond.type),
                      lambda idx: check(tensor.extract(cond, idx), idx))


HANDLERS = {
    "tt.print": print_op,
    "tt.assert": assert_op,
}
