"""GPU-shaped kernels keep register-blocked accumulators private
(triton_spirv/memref_stage/block_ownership.py with work_group_sharing.py): the rewrite's
IR-in/IR-out cases."""
import re

from mlir import ir, passmanager

from triton_spirv.memref_stage.block_ownership import align_to_blocks, block_offsets
from triton_spirv.memref_stage.work_group_sharing import share_work_group
from triton_spirv.stages import new_context

# An 8x32 accumulator: filled with zeros one vector row at a time, updated in blocks of
# 4 rows by 16 columns (the shape register_blocking.py gives a dot), then read element
# by element by an epilogue that writes global memory.
ACCUMULATOR = """
func.func @k(%out: memref<?xf32>, %scale: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %zeros = arith.constant dense<0.0> : vector<16xf32>
  %acc = memref.alloc() : memref<8x32xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c32) step (%c1, %c16) {
    vector.store %zeros, %acc[%i, %j] : memref<8x32xf32>, vector<16xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c32) step (%c4, %c16) {
    %i3 = arith.addi %i, %c3 : index
    %v0 = vector.load %acc[%i, %j] : memref<8x32xf32>, vector<16xf32>
    %v3 = vector.load %acc[%i3, %j] : memref<8x32xf32>, vector<16xf32>
    %w0 = arith.addf %v0, %v3 : vector<16xf32>
    vector.store %w0, %acc[%i, %j] : memref<8x32xf32>, vector<16xf32>
    vector.store %w0, %acc[%i3, %j] : memref<8x32xf32>, vector<16xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c32) step (%c1, %c1) {
    %x = memref.load %acc[%EPILOGUE_INDICES] : memref<8x32xf32>
    %y = arith.mulf %x, %scale : f32
    %row = arith.muli %i, %c32 : index
    %at = arith.addi %row, %j : index
    memref.store %y, %out[%at] : memref<?xf32>
    scf.reduce
  }
  return
}
"""


def simplified(module: ir.Module) -> str:
    copy = ir.Module.parse(str(module))
    passmanager.PassManager.parse("builtin.module(canonicalize,cse)").run(copy.operation)
    return str(copy)


def lower(epilogue_indices: str, work_items: int = 4) -> tuple[str, str]:
    """(IR after align_to_blocks, IR after share_work_group), both simplified."""
    with new_context():
        module = ir.Module.parse(ACCUMULATOR.replace("%EPILOGUE_INDICES", epilogue_indices))
        align_to_blocks(module)
        module.operation.verify()
        aligned = simplified(module)
        share_work_group(module, work_items)
        module.operation.verify()
        return aligned, simplified(module)


def test_loops_over_a_blocked_accumulator_take_its_block_steps():
    aligned, _shared = lower("%i, %j")
    steps = re.findall(r"scf.parallel .* step \((%\w+), (%\w+)\)", aligned)
    assert steps == [("%c4", "%c16")] * 3, aligned
    # the fill's rows and the epilogue's elements run in loops over one block
    assert re.search(r"scf.for %\w+ = %c0\w* to %c4\w* step %c1\w* \{\n\s+%\d+ = arith.addi "
                     r"%arg2, %arg4 : index\n\s+vector.store %cst, %alloc\[%\d+, %arg3\]",
                     aligned), aligned
    assert re.search(r"scf.for %\w+ = %c0\w* to %c16\w* step %c1\w* \{", aligned), aligned


def test_each_work_item_keeps_its_blocks_in_a_private_array():
    _aligned, out = lower("%i, %j")
    # 4 blocks of 4x16 for 4 work-items: one block each, nothing in __local memory
    assert "memref.alloca() : memref<1x4x16xf32>" in out, out
    assert "memref.alloc()" not in out and "memref<8x32xf32>" not in out, out
    # no element changes owner: no barrier
    assert "gpu.barrier" not in out, out
    # [which of the work-item's blocks, row in the block, column in the block]
    assert re.search(r"vector.load %alloca\[%\d+, %c3, %c0\]", out), out
    assert re.search(r"memref.load %alloca\[%\d+, %arg3, %arg4\]", out), out


def test_an_accumulator_read_across_blocks_stays_shared():
    # the epilogue reads the transposed element: another work-item's block
    aligned, out = lower("%j, %i")
    steps = re.findall(r"scf.parallel .* step \((%\w+), (%\w+)\)", aligned)
    assert steps == [("%c1", "%c16"), ("%c4", "%c16"), ("%c1", "%c1")], aligned
    assert "memref.alloc() : memref<8x32xf32>" in out and "memref.alloca" not in out, out
    assert "gpu.barrier" in out, out


def test_block_offsets_must_stay_inside_the_block():
    with new_context(), ir.Location.unknown():
        module = ir.Module.parse("""
func.func @f(%i: index, %j: index) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %a = arith.addi %i, %c3 : index
  %b = arith.addi %i, %c4 : index
  %c = arith.addi %j, %c0 : index
  return
}""")
        func = module.body.operations[0]
        entry = func.regions[0].blocks[0]
        i, j = entry.arguments
        ops = list(entry.operations)
        plus3, plus4, j_plus0 = ops[4].result, ops[5].result, ops[6].result
        assert block_offsets([plus3, j], (i, j), (4, 16), width=16) == [ops[1].result, 0]
        assert block_offsets([plus4, j], (i, j), (4, 16)) is None      # the next block
        assert block_offsets([i, j], (i, j), (4, 8), width=16) is None  # vector too wide
        assert block_offsets([j, i], (i, j), (4, 16)) is None           # another element
        assert block_offsets([i, j_plus0], (i, j), (4, 16), width=16) == [0, ops[0].result]
