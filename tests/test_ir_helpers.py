"""The shared IR queries of triton_spirv/ir_helpers.py that the memref stage, the
SPIR-V stage and the HLO frontend match constants and nested ops with."""
import re

from mlir import ir
from mlir.dialects import func  # noqa: F401  (registers func.func for parsing)

from triton_spirv.ir_helpers import constant_attr, constant_index, holds, with_element_type

MODULE = """
func.func @k(%buffer: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c7 = arith.constant 7 : i32
  %ones = arith.constant -1 : i32
  %mask = arith.constant true
  %minus_one = arith.constant -1.0 : f32
  %splat = arith.constant dense<-0.0> : vector<4xf32>
  %mixed = arith.constant dense<[1.0, 2.0]> : vector<2xf32>
  %isplat = arith.constant dense<3> : vector<4xindex>
  %x = memref.load %buffer[%c0] : memref<?xf32>
  scf.if %mask {
    gpu.barrier
  }
  return
}
"""


def _values(module) -> dict:
    """The results of the kernel's ops by their names in MODULE, and its body."""
    names = re.findall(r"^  (%\w+) = ", MODULE, re.MULTILINE)
    body = module.body.operations[0].regions[0].blocks[0]
    results = [result for op in body.operations for result in op.results]
    return dict(zip(names, results)), body


def test_constants():
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(MODULE)
        values, _body = _values(module)
        assert constant_index(values["%c0"]) == 0
        assert constant_index(values["%c7"]) == 7
        assert constant_index(values["%isplat"]) is None      # a vector, not an index
        assert constant_index(values["%x"]) is None
        assert constant_index(values["%minus_one"]) is None
        assert constant_attr(values["%minus_one"]).value == -1.0
        assert repr(constant_attr(values["%splat"]).value) == "-0.0"   # a splat's element
        assert constant_attr(values["%isplat"]).value == 3
        assert constant_attr(values["%mixed"]) is None         # several values
        assert constant_attr(values["%x"]) is None
        ones, mask = constant_attr(values["%ones"]), constant_attr(values["%mask"])
        assert ir.IntegerType(ones.type).width == 32 and ones.value == -1
        assert ir.IntegerType(mask.type).width == 1


def test_holds_finds_nested_ops():
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(MODULE)
        _values_by_name, body = _values(module)
        branch = next(op for op in body.operations if op.operation.name == "scf.if")
        load = next(op for op in body.operations if op.operation.name == "memref.load")
        is_barrier = lambda op: op.name == "gpu.barrier"  # noqa: E731
        assert holds(branch, is_barrier) and holds(module.operation, is_barrier)
        assert not holds(load, is_barrier)
        assert holds(load, lambda op: op.name == "memref.load")     # the op itself counts


def test_with_element_type():
    with ir.Context(), ir.Location.unknown():
        f32, i32 = ir.F32Type.get(), ir.IntegerType.get_signless(32)
        tile = ir.Type.parse("memref<4x8xf16, strided<[9, 1], offset: 3>, 3>")
        widened = ir.MemRefType(with_element_type(tile, f32))
        assert str(widened) == "memref<4x8xf32, strided<[9, 1], offset: 3>, 3>"
        assert str(with_element_type(ir.Type.parse("vector<4xi8>"), i32)) == "vector<4xi32>"
        assert with_element_type(ir.Type.parse("i8"), i32) == i32


def test_ops_named_finds_nested_ops():
    from triton_spirv.ir_helpers import ops_named
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(MODULE)
        assert [op.name for op in ops_named(module.operation, ("gpu.barrier", "memref.load"))] == \
            ["memref.load", "gpu.barrier"]
        assert ops_named(module.operation, ("math.absi",)) == []


def test_wrapping_abs_builds_a_max():
    from triton_spirv.ir_helpers import wrapping_abs
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse("func.func @k(%x: vector<4xi8>) -> vector<4xi8> {\n"
                                 "  return %x : vector<4xi8>\n}")
        body = module.body.operations[0].regions[0].blocks[0]
        ret = body.operations[0]
        with ir.InsertionPoint(ret):
            value = wrapping_abs(body.arguments[0])
        text = str(module)
        assert "arith.subi" in text
        assert value.owner.name == "arith.maxsi"
        assert "dense<0> : vector<4xi8>" in text
