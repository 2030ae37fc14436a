"""Tiles of the exclusive branches of an scf.if share memory (triton_spirv/memref_stage/branch_tiles.py).
How much the tutorial matmul needs on GPU shapes: tests/test_target.py."""
from mlir import ir

from triton_spirv.memref_stage.branch_tiles import share_branch_tiles
from triton_spirv.stages import new_context

VERSIONED = """
func.func @k(%c: i1, %out: memref<16xf32>) {
  %i = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  %kept_for_after = memref.alloc() : memref<4x4xf32>
  scf.if %c {
    %block = memref.alloc() : memref<4x4xf32>
    %ints = memref.alloc() : memref<8xi32>
    memref.store %f, %block[%i, %i] : memref<4x4xf32>
    %z = arith.constant 0 : i32
    memref.store %z, %ints[%i] : memref<8xi32>
    memref.store %f, %kept_for_after[%i, %i] : memref<4x4xf32>
  } else {
    %gather = memref.alloc() : memref<4x4xf32>
    %second = memref.alloc() : memref<4x4xf32>
    memref.store %f, %gather[%i, %i] : memref<4x4xf32>
    memref.store %f, %second[%i, %i] : memref<4x4xf32>
  }
  %v = memref.load %kept_for_after[%i, %i] : memref<4x4xf32>
  memref.store %v, %out[%i] : memref<16xf32>
  return
}
"""


def _allocs_by_block(func) -> list:
    """[(nesting depth, type) of each memref.alloc], in program order."""
    found = []

    def visit(block, depth):
        for op in block.operations:
            if op.operation.name == "memref.alloc":
                found.append((depth, str(op.results[0].type)))
            for region in op.regions:
                for inner in region.blocks:
                    visit(inner, depth + 1)

    visit(func.regions[0].blocks[0], 0)
    return found


def test_same_typed_tiles_of_the_two_branches_become_one():
    with new_context():
        module = ir.Module.parse(VERSIONED)
        share_branch_tiles(module)
        module.operation.verify()
        func = module.body.operations[0]
        # The then-branch's 4x4 tile moved in front of the scf.if and serves the
        # else-branch's first one; the tile also used after the scf.if, the i32 tile
        # and the else-branch's second 4x4 tile keep their own memory.
        assert _allocs_by_block(func) == [(0, "memref<4x4xf32>"), (0, "memref<4x4xf32>"),
                                          (1, "memref<8xi32>"), (1, "memref<4x4xf32>")]
        shared = [op for op in func.regions[0].blocks[0].operations
                  if op.operation.name == "memref.alloc"][1]
        users = {str(use.owner.operation.parent) for use in shared.results[0].uses}
        assert len(users) == 1 and "} else {" in users.pop()  # stores in both branches


def test_without_else_branch_nothing_changes():
    text = VERSIONED.replace("} else {", "}\n  scf.if %c {")
    with new_context():
        module = ir.Module.parse(text)
        before = str(module)
        share_branch_tiles(module)
        assert str(module) == before



# ---------------------------------------------------------------------------------------
# Nested versions: a tile that an outer version's fallback uses too


NESTED_VERSIONS = """
func.func @k(%c: i1, %d: i1, %out: memref<16xf32>) {
  %i = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  %fallback = memref.alloc() : memref<4x4xf32>
  scf.if %c {
    scf.if %d {
      %block = memref.alloc() : memref<4x4xf32>
      memref.store %f, %block[%i, %i] : memref<4x4xf32>
    } else {
      memref.store %f, %fallback[%i, %i] : memref<4x4xf32>
    }
  } else {
    memref.store %f, %fallback[%i, %i] : memref<4x4xf32>
  }
  return
}
"""


def test_a_tile_of_an_enclosing_branch_serves_an_inner_version():
    """`%fallback` is used by the inner else and the outer else, which never run with
    the inner then: the inner then's tile takes it over (the versioned matmul's b tiles)."""
    with new_context():
        module = ir.Module.parse(NESTED_VERSIONS)
        share_branch_tiles(module)
        module.operation.verify()
        func = module.body.operations[0]
        assert _allocs_by_block(func) == [(0, "memref<4x4xf32>")]


def test_a_tile_used_after_the_branch_is_not_taken_over():
    with new_context():
        module = ir.Module.parse(NESTED_VERSIONS.replace(
            "  return\n", "  memref.store %f, %fallback[%i, %i] : memref<4x4xf32>\n  return\n"))
        share_branch_tiles(module)
        module.operation.verify()
        assert len(_allocs_by_block(module.body.operations[0])) == 2
