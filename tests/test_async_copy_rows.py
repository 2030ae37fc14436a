"""Async work-group copies arrive at the emitter in the rows it prints: the memref
stage's copy lowering (memref_stage/copy_lowering.py, `_mark_async`) makes a copy whose
views' types prove both sides one dense block one row, and the OpenCL C emitter prints
one `async_work_group_copy` per row it is given (emitter_opencl/memory.py)."""
import re

from mlir import ir

from emitter_opencl import emit_opencl
from triton_spirv.memref_stage.copy_lowering import lower_copies_once

HEAD = """func.func @k(%x: memref<?xf32>, %off: index, %m: index)
    attributes {opencl.local_size = array<i64: 64, 1, 1>} {
  %c0 = arith.constant 0 : index
  %t = memref.alloc() : memref<4x8xf32>
"""
# A global block of 4 rows of 8, one dense block (its rows' stride is 8).
DENSE_BLOCK = """
  %g = memref.reinterpret_cast %x to offset: [%off], sizes: [4, 8], strides: [8, 1]
      : memref<?xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
"""
TAIL = """  %v = memref.load %t[%c0, %c0] : memref<4x8xf32>
  memref.store %v, %x[%c0] : memref<?xf32>
  return
}
"""


def _lowered(body: str) -> tuple[str, str]:
    """(the memref stage's IR after copy lowering, the emitted OpenCL C)."""
    with ir.Context():
        module = ir.Module.parse(HEAD + body + TAIL)
        lower_copies_once(module)
        return str(module), emit_opencl(module).source


def test_dense_block_is_one_async_copy():
    memref_ir, source = _lowered(DENSE_BLOCK + """
  memref.copy %g, %t : memref<4x8xf32, strided<[8, 1], offset: ?>> to memref<4x8xf32>
""")
    assert re.search(r"memref.copy %\w+, %\w+ \{opencl.async_work_group_copy\} : "
                     r"memref<32xf32, strided<\[1\], offset: \?>> to memref<32xf32>", memref_ir)
    assert source.count("async_work_group_copy(") == 1, source
    assert re.search(r"async_work_group_copy\(tile0, \w+ \+ \w+, 32, 0\)", source), source


def test_dense_block_of_a_run_time_row_count_is_one_async_copy():
    _ir, source = _lowered(DENSE_BLOCK + """
  %gs = memref.subview %g[0, 0] [%m, 8] [1, 1]
      : memref<4x8xf32, strided<[8, 1], offset: ?>> to memref<?x8xf32, strided<[8, 1], offset: ?>>
  %ts = memref.subview %t[0, 0] [%m, 8] [1, 1] : memref<4x8xf32> to memref<?x8xf32, strided<[8, 1]>>
  memref.copy %gs, %ts : memref<?x8xf32, strided<[8, 1], offset: ?>> to memref<?x8xf32, strided<[8, 1]>>
""")
    assert source.count("async_work_group_copy(") == 1, source
    assert re.search(r"async_work_group_copy\(tile0, \w+ \+ \w+, \w+ \* 8, 0\)", source), source


def test_rows_of_a_wider_block_are_copied_one_by_one():
    memref_ir, source = _lowered("""
  %g = memref.reinterpret_cast %x to offset: [%off], sizes: [4, 8], strides: [32, 1]
      : memref<?xf32> to memref<4x8xf32, strided<[32, 1], offset: ?>>
  memref.copy %g, %t : memref<4x8xf32, strided<[32, 1], offset: ?>> to memref<4x8xf32>
""")
    assert "memref.collapse_shape" not in memref_ir
    assert re.search(r"for \(long (\w+) = 0; \1 < 4; \+\+\1\)", source), source
    assert re.search(r"async_work_group_copy\(tile0 \+ \w+ \* 8, .*, 8, ev\)", source), source
