"""GPU-shaped kernels keep register-blocked accumulators private
(triton_spirv/memref_stage/block_ownership.py with work_group_sharing.py): the rewrite's
IR-in/IR-out cases."""
import re

from mlir import ir, passmanager

from triton_spirv.memref_stage.block_ownership import align_to_blocks, block_offsets
from triton_spirv.memref_stage.pipeline import share_work_group
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


def lower(epilogue_indices: str, work_items: int = 4, quirks: tuple[str, ...] = ()) -> tuple[str, str]:
    """(IR after align_to_blocks, IR after share_work_group for a target with `quirks`),
    both simplified."""
    with new_context():
        module = ir.Module.parse(ACCUMULATOR.replace("%EPILOGUE_INDICES", epilogue_indices))
        align_to_blocks(module)
        module.operation.verify()
        aligned = simplified(module)
        share_work_group(module, work_items, quirks=quirks)
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
    # [which of the work-item's blocks, row in the block, column in the block]: one
    # round per distributed loop, its block index counted from 0
    assert re.search(r"vector.load %alloca\[%c0, %c3, %c0\]", out), out
    assert re.search(r"memref.load %alloca\[%c0, %arg\d+, %arg\d+\]", out), out


def test_one_round_loops_keep_their_strided_form_under_the_quirk():
    _aligned, out = lower("%i, %j", quirks=("one_round_loops_strided",))
    # the device quirk (target.py): the block index stays the strided loop's value
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


# ---------------------------------------------------------------------------------------
# Copies out of a zero-filled tile become fills (fill_forwarding.py)

ZERO_TILE = """
func.func @k(%out: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zeros = arith.constant dense<0.0> : vector<16xf32>
  %zero = memref.alloc() : memref<8x16xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c16) step (%c1, %c16) {
    vector.store %zeros, %zero[%i, %j] : memref<8x16xf32>, vector<16xf32>
    scf.reduce
  }
  %acc = memref.alloc() : memref<8x16xf32>
  scf.for %t = %c0 to %n step %c1 {
    memref.copy %zero, %acc : memref<8x16xf32> to memref<8x16xf32>
    scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c16) step (%c1, %c1) {
      %x = memref.load %acc[%i, %j] : memref<8x16xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %out[%j] : memref<?xf32>
      scf.reduce
    }
  }
  return
}
"""


def test_copies_of_a_zero_tile_become_fills():
    from triton_spirv.memref_stage.fill_forwarding import forward_fills
    with new_context():
        module = ir.Module.parse(ZERO_TILE)
        assert forward_fills(module) == 1
        module.operation.verify()
        out = simplified(module)
    assert "memref.copy" not in out and out.count("memref.alloc()") == 1, out
    loop = out[out.index("scf.for"):]
    # the fill now runs in the loop, where the copy was, on the accumulator itself
    assert re.search(r"scf.for .*\n\s+scf.parallel .*\n\s+vector.store %cst, %alloc\[", loop), out


def test_a_tile_written_again_is_not_forwarded():
    from triton_spirv.memref_stage.fill_forwarding import forward_fills
    with new_context():
        module = ir.Module.parse(ZERO_TILE.replace(
            "  %acc = memref.alloc()",
            "  memref.store %zero_f, %zero[%c0, %c0] : memref<8x16xf32>\n  %acc = memref.alloc()"
        ).replace("%zeros = arith.constant dense<0.0> : vector<16xf32>",
                  "%zeros = arith.constant dense<0.0> : vector<16xf32>\n"
                  "  %zero_f = arith.constant 1.0 : f32"))
        assert forward_fills(module) == 0
        assert "memref.copy" in str(module)


# ---------------------------------------------------------------------------------------
# Tiles of stages that run one after the other share memory (sequential_tiles.py)

def read_reversed(tile: str) -> str:
    """A loop in which every work-item reads elements other work-items copied in."""
    return f"""
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {{
      %r = arith.subi %c256, %i : index
      %r1 = arith.subi %r, %c1 : index
      %x = memref.load {tile}[%r1] : memref<256xf32>
      memref.store %x, %out[%i] : memref<?xf32>
      scf.reduce
    }}"""


def copy_in(tile: str) -> str:
    return f"""
    memref.copy %out_view, {tile} : memref<256xf32, strided<[1]>> to memref<256xf32>"""


# Three stages: a and b, each overwritten first, in one loop body; c read before it is
# written (it carries a value across iterations) and e after it in the second; d in
# the third.
STAGES = f"""
func.func @k(%out: memref<?xf32>, %n: index) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %out_view = memref.reinterpret_cast %out to offset: [0], sizes: [256], strides: [1] :
    memref<?xf32> to memref<256xf32, strided<[1]>>
  %a = memref.alloc() : memref<256xf32>
  %b = memref.alloc() : memref<256xf32>
  %c = memref.alloc() : memref<256xf32>
  %d = memref.alloc() : memref<256xf32>
  %e = memref.alloc() : memref<256xf32>
  scf.for %t = %c0 to %n step %c1 {{{copy_in("%a")}{read_reversed("%a")}{copy_in("%b")}{read_reversed("%b")}
  }}
  scf.for %t = %c0 to %n step %c1 {{{read_reversed("%c")}{copy_in("%c")}{copy_in("%e")}{read_reversed("%e")}
  }}
  scf.for %t = %c0 to %n step %c1 {{{copy_in("%d")}{read_reversed("%d")}
  }}
  return
}}
"""


def test_tiles_of_sequential_stages_share_memory_behind_a_barrier():
    with new_context():
        module = ir.Module.parse(STAGES)
        share_work_group(module, 64)
        module.operation.verify()
        out = simplified(module)
    # a and b (one loop body, each overwritten first) share; c (the second loop) and d
    # (the third) take that memory too. c is read before it is written in each
    # iteration (it carries a value across iterations), so e, later in the same body,
    # gets memory of its own.
    assert out.count("memref.alloc() : memref<256xf32>") == 2, out
    # every work-item reads the tile's elements in reverse: a barrier before each copy
    # into it orders the copy after the previous readers (the barrier analysis places
    # it, and marks the copy so), and the copy's wait completes it for every reader
    assert out.count("gpu.barrier") == 4, out
    assert re.search(r"gpu.barrier\n\s+memref.copy %reinterpret_cast, %alloc "
                     r"\{opencl.copy_barriers_placed\}", out), out
