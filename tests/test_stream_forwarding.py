"""Direct global access for full tiles of elementwise nests
(triton_spirv/memref_stage/stream_forwarding.py): when it applies, and that kernels keep Triton's
block semantics when stored and loaded ranges overlap."""
import re
import numpy as np
import pytest
import torch

import triton
import triton.language as tl
from mlir import ir

from triton_spirv.memref_stage import passes
from triton_spirv.stages import new_context
from triton_spirv.memref_stage.stream_forwarding import forward_streams

# The affine stage of `out = x + y` on 1024-element blocks (as the Linalg pipeline
# leaves it before lower-affine). {BETWEEN} is placed between the loads and the nest.
VECTOR_ADD = """
func.func @add(%x: memref<?xf32>, %y: memref<?xf32>, %out: memref<?xf32>, %n: index,
               %off: index) attributes {opencl.arg_names = ["x", "y", "out", "n", "off"]} {
  %zero = arith.constant 0.0 : f32
  %c1024 = arith.constant 1024 : index
  %xv = memref.reinterpret_cast %x to offset: [%off], sizes: [1024], strides: [1] : memref<?xf32> to memref<1024xf32, strided<[1], offset: ?>>
  %xt = memref.alloc() : memref<1024xf32>
  %partial = arith.cmpi ne, %n, %c1024 : index
  scf.if %partial {
    affine.for %i = 0 to 1024 {
      affine.store %zero, %xt[%i] : memref<1024xf32>
    }
  }
  %xs = memref.subview %xv[0] [%n] [1] : memref<1024xf32, strided<[1], offset: ?>> to memref<?xf32, strided<[1], offset: ?>>
  %xts = memref.subview %xt[0] [%n] [1] : memref<1024xf32> to memref<?xf32, strided<[1]>>
  memref.copy %xs, %xts : memref<?xf32, strided<[1], offset: ?>> to memref<?xf32, strided<[1]>>
  %yv = memref.reinterpret_cast %y to offset: [%off], sizes: [1024], strides: [1] : memref<?xf32> to memref<1024xf32, strided<[1], offset: ?>>
  %yt = memref.alloc() : memref<1024xf32>
  %ys = memref.subview %yv[0] [%n] [1] : memref<1024xf32, strided<[1], offset: ?>> to memref<?xf32, strided<[1], offset: ?>>
  %yts = memref.subview %yt[0] [%n] [1] : memref<1024xf32> to memref<?xf32, strided<[1]>>
  memref.copy %ys, %yts : memref<?xf32, strided<[1], offset: ?>> to memref<?xf32, strided<[1]>>
  {BETWEEN}
  %ot = memref.alloc() : memref<1024xf32>
  affine.for %i = 0 to 1024 {
    %a = affine.load %xt[%i] : memref<1024xf32>
    %b = affine.load %yt[%i] : memref<1024xf32>
    %s = arith.addf %a, %b : f32
    affine.store %s, %ot[%i] : memref<1024xf32>
  }
  %ov = memref.reinterpret_cast %out to offset: [%off], sizes: [1024], strides: [1] : memref<?xf32> to memref<1024xf32, strided<[1], offset: ?>>
  %os = memref.subview %ot[0] [%n] [1] : memref<1024xf32> to memref<?xf32, strided<[1]>>
  %ovs = memref.subview %ov[0] [%n] [1] : memref<1024xf32, strided<[1], offset: ?>> to memref<?xf32, strided<[1], offset: ?>>
  memref.copy %os, %ovs : memref<?xf32, strided<[1]>> to memref<?xf32, strided<[1], offset: ?>>
  return
}
"""


def _forward(between: str = "") -> tuple[int, str]:
    with new_context():
        module = ir.Module.parse(VECTOR_ADD.replace("{BETWEEN}", between))
        count = forward_streams(module)
        module.operation.verify()
        return count, str(module)


def _branches(text: str) -> tuple[str, str]:
    """The then and else parts of the one scf.if with an else branch."""
    head, else_part = text.split("} else {")
    return head[head.rindex("scf.if"):], else_part


def test_vector_add_streams_full_tiles_and_keeps_tiles_for_the_rest():
    count, text = _forward()
    assert count == 1
    then_part, else_part = _branches(text)
    # full tiles: the nest reads and writes the kernel arguments' views
    assert "affine.load %reinterpret_cast[" in then_part and "memref.copy" not in then_part
    # partial tiles: fills, copies in, the nest on tiles and the copy out, in order
    assert else_part.index("scf.if") < else_part.index("memref.copy") < \
        else_part.rindex("affine.for") < else_part.rindex("memref.copy")
    assert "memref.extract_aligned_pointer_as_index" in text  # the overlap check


def test_a_global_store_before_the_nest_keeps_the_tiles():
    # the store must stay after the copies in: they cannot move down to the nest
    count, text = _forward("%c0 = arith.constant 0 : index\n"
                           "  memref.store %zero, %x[%c0] : memref<?xf32>")
    assert count == 0
    assert "else" not in text and text.count("memref.copy") == 3


def test_a_tile_read_elsewhere_stays_a_tile():
    count, text = _forward("%c0 = arith.constant 0 : index\n"
                           "  %again = memref.load %xt[%c0] : memref<1024xf32>")
    assert count == 1
    then_part, _ = _branches(text)
    # x still arrives through its tile (copied before the branch); y streams directly
    assert "memref.load %alloc[" in text and "affine.load %alloc[" in then_part
    assert then_part.count("affine.load %reinterpret_cast") == 1


def test_pipeline_output_prints_both_paths():
    @triton.jit
    def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)

    x = torch.randn(1000)
    y = torch.empty(1000)
    # CPU targets only: GPU-shaped kernels keep their tiles (work_group_sharing.py)
    compiled = scale[(triton.cdiv(1000, 256),)](x, y, 1000, BLOCK=256, opencl_target="cpu")
    source = compiled.asm["cl"]
    # the direct path reads and writes the arguments (16 elements at a time: the
    # elementwise loop is vectorized, elementwise_vectors.py)
    assert re.search(r"vstore16\(x_vec\w*, 0, tile", source)  # the tile path's copy
    assert "vload16(0, x_ptr" in source and "vstore16(" in source and ", y_ptr" in source
    torch.testing.assert_close(y, x * 2.0)


@triton.jit
def _shift_kernel(src_ptr, dst_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs) + 1.0)


@pytest.mark.parametrize("shift", [-3, -1, 0, 1, 5, 64, 200])
def test_overlapping_store_keeps_block_semantics(shift):
    # One program loads a block and stores it shifted into the same memory: Triton's
    # block semantics read the whole block before writing (numpy's view of it).
    storage = torch.arange(1024, dtype=torch.float32)
    base = 256
    src = storage[base:base + 64]
    dst = storage[base + shift:base + shift + 64]
    expected = storage.numpy().copy()
    expected[base + shift:base + shift + 64] = expected[base:base + 64] + 1.0
    _shift_kernel[(1,)](src, dst, BLOCK=64)
    np.testing.assert_array_equal(storage.numpy(), expected)


@triton.jit
def _two_outputs(x_ptr, a_ptr, b_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(a_ptr + offs, x * 2.0)
    tl.store(b_ptr + offs, x * 3.0)


def test_overlapping_outputs_follow_program_order():
    storage = torch.zeros(256)
    x = torch.randn(64)
    a, b = storage[0:64], storage[32:96]
    expected = storage.numpy().copy()
    expected[0:64] = x.numpy() * 2.0
    expected[32:96] = x.numpy() * 3.0
    _two_outputs[(1,)](x, a, b, BLOCK=64)
    np.testing.assert_allclose(storage.numpy(), expected, rtol=1e-6)


def test_pipeline_rewrites_are_listed_once():
    # The CPU shape's rewrites of affine loops, between the registry's upstream passes.
    applied = [p for p in passes.PASSES if p.applies(passes.PipelineConfig())]
    hoisting = [p.name for p in applied].index("func.func(buffer-loop-hoisting)")
    names = []
    for one in applied[hoisting + 1:]:
        if one.upstream is not None:
            break
        names.append(one.name)
    assert names == ["register-blocking", "stream-forwarding", "elementwise-vectors"]
