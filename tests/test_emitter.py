"""OpenCL C emitter: memref-stage MLIR in, kernels run on the CPU OpenCL device
(PoCL), results compared with numpy."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import pyopencl as cl
from mlir import ir

from emitter_opencl import EmittedKernel, OpenCLEmitError, emit_opencl  # noqa: E402
from triton_spirv.memref_stage.copy_lowering import lower_copies_once  # noqa: E402
from emitter_opencl.ctypes_table import float_literal, int_literal  # noqa: E402

# ---------------------------------------------------------------------------
# Harness
# ---------------------------------------------------------------------------

SCALAR_DTYPES = {"char": np.int8, "uchar": np.uint8, "short": np.int16,
                 "ushort": np.uint16, "int": np.int32, "uint": np.uint32,
                 "long": np.int64, "ulong": np.uint64, "float": np.float32,
                 "double": np.float64}
MLIR_DTYPES = {"i1": np.uint8, "i8": np.int8, "i16": np.int16, "i32": np.int32,
               "i64": np.int64, "f16": np.float16, "bf16": np.uint16,
               "f32": np.float32, "f64": np.float64}


def emit(text: str) -> EmittedKernel:
    """The kernel of a memref-stage module whose copies are still `memref.copy`: the
    memref stage's last pass (copy_lowering.py) gives them their forms first."""
    with ir.Context():
        module = ir.Module.parse(text)
        lower_copies_once(module)
        return emit_opencl(module)


@pytest.fixture(scope="module")
def device():
    dev = cl.get_platforms()[0].get_devices()[0]
    ctx = cl.Context([dev])
    return ctx, cl.CommandQueue(ctx)


def run(device, kernel: EmittedKernel, args, groups=(1,)):
    """Build and launch `kernel` over `groups` work-groups. numpy arrays become
    buffers (read back into the same arrays; one array passed twice is one buffer),
    anything else a scalar of the parameter's C type."""
    ctx, queue = device
    program = cl.Program(ctx, kernel.source).build()
    cl_args, buffers = [], {}
    for arg, ctype in zip(args, kernel.arg_types, strict=True):
        if ctype.startswith("__global"):
            assert isinstance(arg, np.ndarray)
            if id(arg) not in buffers:
                flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
                buffers[id(arg)] = (cl.Buffer(ctx, flags, hostbuf=arg), arg)
            cl_args.append(buffers[id(arg)][0])
        else:
            cl_args.append(SCALAR_DTYPES[ctype](arg))
    groups = tuple(groups) + (1,) * (3 - len(groups))
    global_size = tuple(g * l for g, l in zip(groups, kernel.local_size))
    getattr(program, kernel.name)(queue, global_size, kernel.local_size, *cl_args)
    for buffer, array in buffers.values():
        cl.enqueue_copy(queue, array, buffer)
    queue.finish()


def elementwise_kernel(inputs, cases, n):
    """A one-program kernel: for i < n, load each input %x, %y, ... at i, run each
    case (MLIR lines defining %r from the inputs; temporaries named %t...) and store
    %r into that case's output buffer."""
    args = [f"%{name}_buf: memref<?x{t}>" for name, t in inputs]
    args += [f"%out{k}: memref<?x{t}>" for k, (_, t) in enumerate(cases)]
    body = [f"%{name} = memref.load %{name}_buf[%i] : memref<?x{t}>" for name, t in inputs]
    for k, (lines, t) in enumerate(cases):
        body += re.sub(r"%([rt]\w*)", rf"%c{k}_\1", lines).strip().splitlines()
        body.append(f"memref.store %c{k}_r, %out{k}[%i] : memref<?x{t}>")
    return f"""
module {{
  func.func @elementwise({", ".join(args)}) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant {n} : index
    scf.for %i = %c0 to %n step %c1 {{
      {chr(10).join("      " + line.strip() for line in body)}
    }}
    return
  }}
}}"""


def run_elementwise(device, inputs, cases, arrays):
    """Run `elementwise_kernel` and return the output arrays."""
    n = len(arrays[0])
    kernel = emit(elementwise_kernel(inputs, [(c[0], c[1]) for c in cases], n))
    outputs = [np.zeros(n, MLIR_DTYPES[c[1]]) for c in cases]
    run(device, kernel, list(arrays) + outputs)
    return kernel, outputs


# ---------------------------------------------------------------------------
# Vector add: the upstream pipeline's output for a masked Triton vector-add
# ---------------------------------------------------------------------------

VECTOR_ADD = """
#x = loc("/src/kernel.py":10:12)
module {
  func.func @add_kernel(%arg0: memref<?xf32>, %arg1: memref<?xf32>, %arg2: memref<?xf32>, %arg3: i32) attributes {opencl.arg_names = ["x_ptr", "y.ptr", "output_ptr", "n_elements"]} {
    %c1 = arith.constant 1 : index
    %cst = arith.constant 1.000000e+00 : f32
    %c1024 = arith.constant 1024 : index
    %c0 = arith.constant 0 : index
    %block_id_x = gpu.block_id  x loc("pid"("/src/kernel.py":8:10))
    %0 = arith.muli %block_id_x, %c1024 : index loc("offs"("/src/kernel.py":9:10))
    %1 = arith.index_cast %arg3 : i32 to index
    %2 = arith.subi %1, %0 : index
    %3 = arith.maxsi %2, %c0 : index
    %4 = arith.minsi %3, %c1024 : index loc("extent"("/src/kernel.py":9:40))
    %reinterpret_cast = memref.reinterpret_cast %arg0 to offset: [%0], sizes: [1024], strides: [1] : memref<?xf32> to memref<1024xf32, strided<[1], offset: ?>>
    %alloc = memref.alloc() : memref<1024xf32> loc("x"(#x))
    %subview = memref.subview %reinterpret_cast[0] [%4] [1] : memref<1024xf32, strided<[1], offset: ?>> to memref<?xf32, strided<[1], offset: ?>>
    %subview_0 = memref.subview %alloc[0] [%4] [1] : memref<1024xf32> to memref<?xf32, strided<[1]>>
    memref.copy %subview, %subview_0 : memref<?xf32, strided<[1], offset: ?>> to memref<?xf32, strided<[1]>> loc(#x)
    %reinterpret_cast_1 = memref.reinterpret_cast %arg1 to offset: [%0], sizes: [1024], strides: [1] : memref<?xf32> to memref<1024xf32, strided<[1], offset: ?>>
    %alloc_2 = memref.alloc() : memref<1024xf32>
    scf.for %arg4 = %c0 to %c1024 step %c1 {
      memref.store %cst, %alloc_2[%arg4] : memref<1024xf32>
    }
    %subview_3 = memref.subview %reinterpret_cast_1[0] [%4] [1] : memref<1024xf32, strided<[1], offset: ?>> to memref<?xf32, strided<[1], offset: ?>>
    %subview_4 = memref.subview %alloc_2[0] [%4] [1] : memref<1024xf32> to memref<?xf32, strided<[1]>>
    memref.copy %subview_3, %subview_4 : memref<?xf32, strided<[1], offset: ?>> to memref<?xf32, strided<[1]>>
    %alloc_5 = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
    scf.for %arg4 = %c0 to %c1024 step %c1 {
      %5 = memref.load %alloc[%arg4] : memref<1024xf32>
      %6 = memref.load %alloc_2[%arg4] : memref<1024xf32>
      %7 = arith.addf %5, %6 : f32
      memref.store %7, %alloc_5[%arg4] : memref<1024xf32>
    }
    %reinterpret_cast_6 = memref.reinterpret_cast %arg2 to offset: [%0], sizes: [1024], strides: [1] : memref<?xf32> to memref<1024xf32, strided<[1], offset: ?>>
    %subview_7 = memref.subview %alloc_5[0] [%4] [1] : memref<1024xf32> to memref<?xf32, strided<[1]>>
    %subview_8 = memref.subview %reinterpret_cast_6[0] [%4] [1] : memref<1024xf32, strided<[1], offset: ?>> to memref<?xf32, strided<[1], offset: ?>>
    memref.copy %subview_7, %subview_8 : memref<?xf32, strided<[1]>> to memref<?xf32, strided<[1], offset: ?>>
    return
  }
}
"""


def test_vector_add_source_shape():
    kernel = emit(VECTOR_ADD)
    src = kernel.source
    assert kernel.name == "add_kernel"
    assert kernel.arg_types == ["__global float*"] * 3 + ["int"]
    assert kernel.local_size == (1, 1, 1)
    assert kernel.local_mem_bytes == 3 * 1024 * 4
    # one work-item per group: tiles move 16 elements per vector load and store
    assert "vload16(0, x_ptr" in src and "async_work_group_copy" not in src
    assert "__local float x_tile[1024];" in src
    assert "restrict" not in src  # in-place kernels (x is out) are legal in Triton
    assert "__global float* y_ptr" in src  # "y.ptr" sanitized
    assert "long offs = pid * 1024;" in src
    # the mask's extent, its steps inlined (integer values used once)
    assert "long extent = min(max(((long)n_elements - offs), 0L), 1024L);" in src
    assert "(kernel.py:9)" in src  # source comments, one per line group
    assert src.count("(kernel.py:9)") == 1


ROLES = """
#l = loc("/src/kernel.py":5:3)
#m = loc("/src/kernel.py":6:3)
#k = loc("/src/kernel.py":7:3)
module {
  func.func @roles(%arg0: memref<?xf32>, %arg1: i32, %arg2: f32) attributes {opencl.arg_names = ["x_ptr", "n", "s"]} {
    %c0 = arith.constant 0 : index
    %c5 = arith.constant 5 : index
    %0 = arith.index_cast %arg1 : i32 to index loc("mask"(#l))
    %1 = arith.subi %0, %c5 : index loc("mask"(#l))
    %2 = arith.maxsi %1, %c0 : index loc("mask"(#l))
    %3 = vector.load %arg0[%2] : memref<?xf32>, vector<4xf32> loc("y"(#m))
    %4 = vector.broadcast %arg2 : f32 to vector<4xf32> loc("y"(#m))
    %5 = arith.mulf %3, %4 : vector<4xf32> loc("y"(#m))
    vector.store %5, %arg0[%2] : memref<?xf32>, vector<4xf32> loc("y"(#m))
    %alloc = memref.alloc() : memref<8xf32> loc("b"(#k))
    %6 = arith.addi %2, %c5 : index loc("a"(#k))
    memref.store %arg2, %alloc[%6] : memref<8xf32> loc("a"(#k))
    %7 = memref.load %alloc[%c5] : memref<8xf32> loc("a"(#k))
    memref.store %7, %arg0[%c0] : memref<?xf32> loc("a"(#k))
    return
  }
}
"""


def test_values_carry_a_python_name_only_when_they_are_that_value():
    """Every op of a statement carries its NameLoc; only the op whose result the
    statement assigned gets the name, the others are named by their role."""
    lines = [line.strip() for line in emit(ROLES).source.splitlines()]
    # The cast of `n` and `n - 5` are steps towards `mask`: inlined, not `mask`, `mask_1`.
    assert "long mask = max(((long)n - 5), 0L);" in lines
    # A vector load is a slice of a buffer, a splat repeats a scalar: neither is `y`.
    assert "float4 x_vec = vload4(0, x_ptr + mask);" in lines
    assert "float4 s_splat = (float4)(s);" in lines
    assert "float4 y = x_vec * s_splat;" in lines
    # The tile is named after what its writers compute (its alloc says `b`); the index
    # computed on the way to the store is not `a`, nor is one element of the tile.
    assert "__local float a_tile[8];  // kernel.py:7" in lines  # with its writers' line
    assert "a_tile[(mask + 5)] = s;" in lines
    assert "float a_elem = a_tile[5];" in lines
    assert not any(line.startswith(("long a ", "float a ", "long mask_", "float4 y_"))
                   for line in lines)


def test_local_tiles_name_their_shape_bytes_and_source_line():
    tiles = emit(VECTOR_ADD).local_tiles
    assert [(t.ctype, t.shape, t.bytes) for t in tiles] == [("float", (1024,), 4096)] * 3
    x_tile = next(t for t in tiles if t.name == "x_tile")
    assert x_tile.origin == "kernel.py:10"          # the alloc's location (the file is not on disk)
    assert x_tile.describe() == "x_tile float[1024] = 4096 bytes from kernel.py:10"
    assert sum(t.bytes for t in tiles) == emit(VECTOR_ADD).local_mem_bytes


@pytest.mark.parametrize("n, groups", [(2500, 3), (2048, 3)])  # (2048, 3): empty tail
def test_vector_add_runs(device, n, groups):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    run(device, emit(VECTOR_ADD), [x, y, out, n], groups=(groups,))
    np.testing.assert_array_equal(out, x + y)


def test_vector_add_in_place(device):
    x = np.arange(3000, dtype=np.float32)
    y = np.full(3000, 0.5, np.float32)
    expected = x + y
    run(device, emit(VECTOR_ADD), [x, y, x, 3000], groups=(3,))
    np.testing.assert_array_equal(x, expected)


# ---------------------------------------------------------------------------
# 2-D tiles: strided rows, masked edges on both dims, collapse_shape
# ---------------------------------------------------------------------------

TILE_2D = """
module {
  func.func @scale_tile(%x: memref<?xf32>, %out: memref<?xf32>, %M: i32, %N: i32, %sx: i32, %so: i32) attributes {opencl.arg_names = ["x_ptr", "out_ptr", "M", "N", "stride_x", "stride_out"]} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c128 = arith.constant 128 : index
    %zero = arith.constant 0.0 : f32
    %two = arith.constant 2.0 : f32
    %one = arith.constant 1.0 : f32
    %pid_m = gpu.block_id x
    %pid_n = gpu.block_id y
    %row0 = arith.muli %pid_m, %c16 : index
    %col0 = arith.muli %pid_n, %c8 : index
    %Mi = arith.index_cast %M : i32 to index
    %Ni = arith.index_cast %N : i32 to index
    %sxi = arith.index_cast %sx : i32 to index
    %soi = arith.index_cast %so : i32 to index
    %rrem = arith.subi %Mi, %row0 : index
    %rpos = arith.maxsi %rrem, %c0 : index
    %rows = arith.minsi %rpos, %c16 : index
    %crem = arith.subi %Ni, %col0 : index
    %cpos = arith.maxsi %crem, %c0 : index
    %cols = arith.minsi %cpos, %c8 : index
    %xrow = arith.muli %row0, %sxi : index
    %xoff = arith.addi %xrow, %col0 : index
    %xv = memref.reinterpret_cast %x to offset: [%xoff], sizes: [16, 8], strides: [%sxi, 1] : memref<?xf32> to memref<16x8xf32, strided<[?, 1], offset: ?>>
    %tile = memref.alloc() : memref<16x8xf32>
    scf.for %i = %c0 to %c16 step %c1 {
      scf.for %j = %c0 to %c8 step %c1 {
        memref.store %zero, %tile[%i, %j] : memref<16x8xf32>
      }
    }
    %xs = memref.subview %xv[0, 0] [%rows, %cols] [1, 1] : memref<16x8xf32, strided<[?, 1], offset: ?>> to memref<?x?xf32, strided<[?, 1], offset: ?>>
    %ts = memref.subview %tile[0, 0] [%rows, %cols] [1, 1] : memref<16x8xf32> to memref<?x?xf32, strided<[8, 1]>>
    memref.copy %xs, %ts : memref<?x?xf32, strided<[?, 1], offset: ?>> to memref<?x?xf32, strided<[8, 1]>>
    %res = memref.alloc() : memref<16x8xf32>
    %flat_in = memref.collapse_shape %tile [[0, 1]] : memref<16x8xf32> into memref<128xf32>
    %flat_out = memref.collapse_shape %res [[0, 1]] : memref<16x8xf32> into memref<128xf32>
    scf.for %k = %c0 to %c128 step %c1 {
      %v = memref.load %flat_in[%k] : memref<128xf32>
      %m = arith.mulf %v, %two : f32
      %a = arith.addf %m, %one : f32
      memref.store %a, %flat_out[%k] : memref<128xf32>
    }
    %orow = arith.muli %row0, %soi : index
    %ooff = arith.addi %orow, %col0 : index
    %ov = memref.reinterpret_cast %out to offset: [%ooff], sizes: [16, 8], strides: [%soi, 1] : memref<?xf32> to memref<16x8xf32, strided<[?, 1], offset: ?>>
    %rs = memref.subview %res[0, 0] [%rows, %cols] [1, 1] : memref<16x8xf32> to memref<?x?xf32, strided<[8, 1]>>
    %os = memref.subview %ov[0, 0] [%rows, %cols] [1, 1] : memref<16x8xf32, strided<[?, 1], offset: ?>> to memref<?x?xf32, strided<[?, 1], offset: ?>>
    memref.copy %rs, %os : memref<?x?xf32, strided<[8, 1]>> to memref<?x?xf32, strided<[?, 1], offset: ?>>
    return
  }
}
"""


def test_2d_masked_tiles(device):
    M, N, sx, so = 37, 21, 24, 29
    rng = np.random.default_rng(1)
    x = rng.standard_normal(M * sx).astype(np.float32)
    out = np.full(M * so, -7.0, np.float32)
    kernel = emit(TILE_2D)
    assert kernel.source.count("async_work_group_copy") == 2  # one per row, in loops
    assert "__local float tile0[16 * 8];" in kernel.source
    run(device, kernel, [x, out, M, N, sx, so], groups=(3, 3))
    got = out.reshape(M, so)
    np.testing.assert_array_equal(got[:, :N], x.reshape(M, sx)[:, :N] * 2 + 1)
    assert (got[:, N:] == -7.0).all()  # row padding is never written


# ---------------------------------------------------------------------------
# Rank-3 and rank-0 views, expand_shape, strided copies
# ---------------------------------------------------------------------------

VIEWS = """
module {
  func.func @views(%x: memref<?xf32>, %out: memref<?xf32>, %s0: index, %s1: index) {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %c7 = arith.constant 7 : index
    %xv = memref.reinterpret_cast %x to offset: [%c7], sizes: [2, 3, 5], strides: [%s0, %s1, 1] : memref<?xf32> to memref<2x3x5xf32, strided<[?, ?, 1], offset: ?>>
    %tile = memref.alloc() : memref<2x3x5xf32>
    memref.copy %xv, %tile : memref<2x3x5xf32, strided<[?, ?, 1], offset: ?>> to memref<2x3x5xf32>
    %flat = memref.collapse_shape %tile [[0, 1, 2]] : memref<2x3x5xf32> into memref<30xf32>
    %ov = memref.reinterpret_cast %out to offset: [0], sizes: [30], strides: [1] : memref<?xf32> to memref<30xf32, strided<[1]>>
    memref.copy %flat, %ov : memref<30xf32> to memref<30xf32, strided<[1]>>
    %elem = memref.subview %tile[1, 2, 3] [1, 1, 1] [1, 1, 1] : memref<2x3x5xf32> to memref<f32, strided<[], offset: 28>>
    %v = memref.load %elem[] : memref<f32, strided<[], offset: 28>>
    %o30 = memref.reinterpret_cast %out to offset: [30], sizes: [], strides: [] : memref<?xf32> to memref<f32, strided<[], offset: 30>>
    memref.store %v, %o30[] : memref<f32, strided<[], offset: 30>>
    %grid = memref.expand_shape %flat [[0, 1]] output_shape [5, 6] : memref<30xf32> into memref<5x6xf32>
    %w = memref.load %grid[%c4, %c5] : memref<5x6xf32>
    %c31 = arith.constant 31 : index
    memref.store %w, %out[%c31] : memref<?xf32>
    %row = memref.subview %tile[1, 0, 0] [1, 3, 5] [1, 1, 1] : memref<2x3x5xf32> to memref<3x5xf32, strided<[5, 1], offset: 15>>
    %oo = memref.reinterpret_cast %out to offset: [32], sizes: [3, 5], strides: [5, 1] : memref<?xf32> to memref<3x5xf32, strided<[5, 1], offset: 32>>
    memref.copy %row, %oo : memref<3x5xf32, strided<[5, 1], offset: 15>> to memref<3x5xf32, strided<[5, 1], offset: 32>>
    return
  }
}
"""


def test_rank3_rank0_and_expand_views(device):
    s0, s1 = 40, 9
    x = np.arange(7 + 2 * s0, dtype=np.float32)
    out = np.zeros(47, np.float32)
    kernel = emit(VIEWS)
    run(device, kernel, [x, out, s0, s1])
    block = np.array([[[x[7 + a * s0 + b * s1 + c] for c in range(5)] for b in range(3)]
                      for a in range(2)], np.float32)
    np.testing.assert_array_equal(out[:30], block.reshape(-1))
    assert out[30] == block[1, 2, 3]
    assert out[31] == block.reshape(5, 6)[4, 5]
    np.testing.assert_array_equal(out[32:47], block[1].reshape(-1))


STRIDED = """
module {
  func.func @strided(%x: memref<?xf32>, %out: memref<?xf32>, %sx: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c3 = arith.constant 3.0 : f32
    %xv = memref.reinterpret_cast %x to offset: [%c1], sizes: [16], strides: [%sx] : memref<?xf32> to memref<16xf32, strided<[?], offset: ?>>
    %tile = memref.alloc() : memref<16xf32>
    memref.copy %xv, %tile : memref<16xf32, strided<[?], offset: ?>> to memref<16xf32>
    scf.for %i = %c0 to %c16 step %c1 {
      %v = memref.load %tile[%i] : memref<16xf32>
      %m = arith.mulf %v, %c3 : f32
      memref.store %m, %tile[%i] : memref<16xf32>
    }
    %ov = memref.reinterpret_cast %out to offset: [0], sizes: [16], strides: [2] : memref<?xf32> to memref<16xf32, strided<[2]>>
    memref.copy %tile, %ov : memref<16xf32> to memref<16xf32, strided<[2]>>
    %half = memref.subview %tile[0] [8] [2] : memref<16xf32> to memref<8xf32, strided<[2]>>
    %o2 = memref.reinterpret_cast %out to offset: [40], sizes: [8], strides: [1] : memref<?xf32> to memref<8xf32, strided<[1], offset: 40>>
    memref.copy %half, %o2 : memref<8xf32, strided<[2]>> to memref<8xf32, strided<[1], offset: 40>>
    return
  }
}
"""


def test_strided_copies(device):
    x = np.arange(64, dtype=np.float32)
    out = np.full(48, -1.0, np.float32)
    kernel = emit(STRIDED)
    assert kernel.source.count("async_work_group_strided_copy") == 2
    run(device, kernel, [x, out, 3])
    tile = x[1:1 + 16 * 3:3] * 3
    np.testing.assert_array_equal(out[0:32:2], tile)
    np.testing.assert_array_equal(out[1:32:2], -1.0)
    np.testing.assert_array_equal(out[40:48], tile[::2])  # local side strided: a loop


# ---------------------------------------------------------------------------
# f16 and bf16 buffers
# ---------------------------------------------------------------------------

HALF = """
module {
  func.func @half_ops(%xh: memref<?xf16>, %oh: memref<?xf16>, %xb: memref<?xbf16>, %ob: memref<?xbf16>, %ob2: memref<?xbf16>, %s: f16) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %k15 = arith.constant 1.5 : f32
    %k025 = arith.constant 0.25 : f32
    %k3 = arith.constant 3.0 : f32
    %xv = memref.reinterpret_cast %xh to offset: [0], sizes: [64], strides: [1] : memref<?xf16> to memref<64xf16, strided<[1]>>
    %t = memref.alloc() : memref<64xf16>
    memref.copy %xv, %t : memref<64xf16, strided<[1]>> to memref<64xf16>
    %r = memref.alloc() : memref<64xf16>
    scf.for %i = %c0 to %c64 step %c1 {
      %v = memref.load %t[%i] : memref<64xf16>
      %e = arith.extf %v : f16 to f32
      %m = arith.mulf %e, %k15 : f32
      %a = arith.addf %m, %k025 : f32
      %h = arith.truncf %a : f32 to f16
      %p = arith.mulf %h, %s : f16
      memref.store %p, %r[%i] : memref<64xf16>
    }
    %ov = memref.reinterpret_cast %oh to offset: [0], sizes: [64], strides: [1] : memref<?xf16> to memref<64xf16, strided<[1]>>
    memref.copy %r, %ov : memref<64xf16> to memref<64xf16, strided<[1]>>
    scf.for %i = %c0 to %c64 step %c1 {
      %v = memref.load %xb[%i] : memref<?xbf16>
      %e = arith.extf %v : bf16 to f32
      %m = arith.mulf %e, %k3 : f32
      %b = arith.truncf %m : f32 to bf16
      memref.store %b, %ob[%i] : memref<?xbf16>
    }
    %bv = memref.reinterpret_cast %xb to offset: [0], sizes: [64], strides: [1] : memref<?xbf16> to memref<64xbf16, strided<[1]>>
    %bt = memref.alloc() : memref<64xbf16>
    memref.copy %bv, %bt : memref<64xbf16, strided<[1]>> to memref<64xbf16>
    %bo = memref.reinterpret_cast %ob2 to offset: [0], sizes: [64], strides: [1] : memref<?xbf16> to memref<64xbf16, strided<[1]>>
    memref.copy %bt, %bo : memref<64xbf16> to memref<64xbf16, strided<[1]>>
    return
  }
}
"""


def test_f16_and_bf16_buffers(device):
    import torch
    rng = np.random.default_rng(2)
    xh = (rng.standard_normal(64) * 100).astype(np.float16)
    xh[:4] = [np.inf, -np.inf, 60000, 6e-6]
    xb_t = torch.tensor(rng.standard_normal(64) * 1e3, dtype=torch.float32)
    xb_t[:5] = torch.tensor([float("nan"), float("inf"), 3e38, 1.00390625, -2.0])
    xb = xb_t.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16).copy()
    s = np.float16(0.3)
    oh = np.zeros(64, np.float16)
    ob = np.zeros(64, np.uint16)
    ob2 = np.zeros(64, np.uint16)
    kernel = emit(HALF)
    assert kernel.arg_types[:2] == ["__global half*"] * 2
    assert kernel.arg_types[2:] == ["__global ushort*"] * 3 + ["float"]
    assert "vload_half(" in kernel.source and "vstore_half_rte(" in kernel.source
    assert "cl_khr_fp16" not in kernel.source
    run(device, kernel, [xh, oh, xb, ob, ob2, np.float32(s)])

    with np.errstate(over="ignore"):  # 60000 * 1.5 overflows to inf, as on the device
        h = (xh.astype(np.float32) * np.float32(1.5) + np.float32(0.25)).astype(np.float16)
        expected_h = (h.astype(np.float32) * np.float32(s)).astype(np.float16)
    np.testing.assert_array_equal(oh, expected_h)

    xb_f = torch.from_numpy(xb.view(np.int16).copy()).view(torch.bfloat16).float()
    expected_b = (xb_f * 3.0).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    got_b = torch.from_numpy(ob.view(np.int16).copy()).view(torch.bfloat16).float().numpy()
    want_b = torch.from_numpy(expected_b.view(np.int16).copy()).view(torch.bfloat16).float().numpy()
    np.testing.assert_array_equal(got_b, want_b)  # NaN == NaN here; payloads may differ
    assert np.isnan(got_b[0]) and got_b[1] == np.inf and got_b[2] == np.inf
    np.testing.assert_array_equal(ob2, xb)  # bf16 round trip through a float tile


# ---------------------------------------------------------------------------
# Integer arithmetic
# ---------------------------------------------------------------------------

def _wrap(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


INT_CASES = [  # (MLIR computing %r from %x, %y; reference on Python ints (a, b, bits))
    ("%r = arith.divsi %x, %y : {T}", lambda a, b, w: _trunc_div(a, b)),
    ("%r = arith.remsi %x, %y : {T}", lambda a, b, w: a - b * _trunc_div(a, b)),
    ("%r = arith.divui %x, %y : {T}", lambda a, b, w: (a % 2**w) // (b % 2**w)),
    ("%r = arith.remui %x, %y : {T}", lambda a, b, w: (a % 2**w) % (b % 2**w)),
    ("%r = arith.floordivsi %x, %y : {T}", lambda a, b, w: a // b),
    ("%r = arith.ceildivsi %x, %y : {T}", lambda a, b, w: -((-a) // b)),
    ("%t = arith.constant 3 : {T}\n%r = arith.shrui %x, %t : {T}",
     lambda a, b, w: (a % 2**w) >> 3),
    ("%t = arith.constant 3 : {T}\n%r = arith.shrsi %x, %t : {T}", lambda a, b, w: a >> 3),
    ("%t = arith.constant 5 : {T}\n%r = arith.shli %x, %t : {T}", lambda a, b, w: a << 5),
    ("%r = arith.minui %x, %y : {T}", lambda a, b, w: min(a % 2**w, b % 2**w)),
    ("%r = arith.maxui %x, %y : {T}", lambda a, b, w: max(a % 2**w, b % 2**w)),
    ("%r = arith.minsi %x, %y : {T}", lambda a, b, w: min(a, b)),
    ("%t = arith.constant 0 : {T}\n%r = arith.maxsi %x, %t : {T}", lambda a, b, w: max(a, 0)),
    ("%r = arith.muli %x, %y : {T}", lambda a, b, w: a * b),
    ("%r = arith.subi %x, %y : {T}", lambda a, b, w: a - b),
    ("%r = arith.xori %x, %y : {T}", lambda a, b, w: a ^ b),
    ("%t = arith.andi %x, %y : {T}\n%r = arith.ori %t, %y : {T}", lambda a, b, w: (a & b) | b),
    ("%t = arith.cmpi ult, %x, %y : {T}\n%r = arith.extui %t : i1 to {T}",
     lambda a, b, w: int(a % 2**w < b % 2**w)),
    ("%t = arith.cmpi uge, %x, %y : {T}\n%r = arith.extui %t : i1 to {T}",
     lambda a, b, w: int(a % 2**w >= b % 2**w)),
    ("%t = arith.cmpi sle, %x, %y : {T}\n%r = arith.extsi %t : i1 to {T}",
     lambda a, b, w: -int(a <= b)),
    ("%t = arith.cmpi ne, %x, %y : {T}\n%r = arith.select %t, %x, %y : {T}",
     lambda a, b, w: a),
    ("%t = arith.trunci %x : {T} to i8\n%r = arith.extui %t : i8 to {T}",
     lambda a, b, w: a % 256),
    ("%t = arith.trunci %x : {T} to i8\n%r = arith.extsi %t : i8 to {T}",
     lambda a, b, w: _wrap(a, 8)),
    ("%t = arith.trunci %x : {T} to i1\n%r = arith.extui %t : i1 to {T}",
     lambda a, b, w: a & 1),
    ("%t = arith.index_cast %x : {T} to index\n%t2 = arith.constant 1000 : index\n"
     "%t3 = arith.addi %t, %t2 : index\n%r = arith.index_cast %t3 : index to {T}",
     lambda a, b, w: a + 1000),
    ("%r = math.absi %x : {T}", lambda a, b, w: abs(a)),
    ("%r = math.ctpop %x : {T}", lambda a, b, w: bin(a % 2**w).count("1")),
    ("%r = math.cttz %x : {T}", lambda a, b, w: ((a & -a).bit_length() - 1) if a else w),
    ("%r = math.ctlz %x : {T}", lambda a, b, w: w - (a % 2**w).bit_length()),
]


@pytest.mark.parametrize("T, bits", [("i32", 32), ("i64", 64)])
def test_integer_arithmetic(device, T, bits):
    rng = np.random.default_rng(3)
    big = 2 ** (bits - 2)
    a = np.concatenate([rng.integers(-1000, 1000, 40), rng.integers(-big, big, 20),
                        [-7, 7, -7, 7, 0, -1, 2**(bits - 1) - 1, -2**(bits - 1)]])
    b = np.concatenate([rng.integers(1, 50, 40) * rng.choice([-1, 1], 40),
                        rng.integers(-big, big, 20), [2, 2, -2, -2, 3, 5, 3, 3]])
    b[b == 0] = 1
    dtype = MLIR_DTYPES[T]
    cases = [(text.replace("{T}", T), T, ref) for text, ref in INT_CASES]
    kernel, outputs = run_elementwise(device, [("x", T), ("y", T)], cases,
                                      [a.astype(dtype), b.astype(dtype)])
    for (text, _, ref), got in zip(cases, outputs):
        want = np.array([_wrap(ref(int(p), int(q), bits), bits) for p, q in zip(a, b)],
                        dtype=np.int64).astype(dtype)
        np.testing.assert_array_equal(got, want, err_msg=text)


def test_i1_buffer_and_i8_arithmetic(device):
    x = np.array([3, -4, 127, -128, 0, 1, 100, -100], np.int8)
    y = np.array([2, 3, 1, -1, 5, -1, 100, 100], np.int8)
    cases = [
        ("%t2 = arith.constant true\n%t = arith.cmpi slt, %x, %y : i8\n"
         "%r = arith.xori %t, %t2 : i1", "i1"),
        ("%r = arith.addi %x, %y : i8", "i8"),
        ("%r = arith.divui %x, %y : i8", "i8"),
        ("%t = arith.constant 1 : i8\n%r = arith.shrui %x, %t : i8", "i8"),
    ]
    kernel, (ge, add, divu, shr) = run_elementwise(device, [("x", "i8"), ("y", "i8")],
                                                    cases, [x, y])
    assert kernel.arg_types[2] == "__global uchar*"
    np.testing.assert_array_equal(ge, (x >= y).astype(np.uint8))
    np.testing.assert_array_equal(add, (x.astype(np.int32) + y).astype(np.int8))
    np.testing.assert_array_equal(divu, (x.view(np.uint8) // y.view(np.uint8)).view(np.int8))
    np.testing.assert_array_equal(shr, (x.view(np.uint8) >> 1).view(np.int8))


# ---------------------------------------------------------------------------
# Floats: NaN-propagating min/max, comparisons, math, casts
# ---------------------------------------------------------------------------

def _maximum(a: float, b: float) -> float:
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if a == b:
        return a if not math.copysign(1, a) < 0 else b
    return max(a, b)


def _minimum(a: float, b: float) -> float:
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if a == b:
        return a if math.copysign(1, a) < 0 else b
    return min(a, b)


def _same_floats(got, want, err_msg=""):
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=err_msg)
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got[ok], want[ok], err_msg=err_msg)
    np.testing.assert_array_equal(np.signbit(got[ok]), np.signbit(want[ok]), err_msg=err_msg)


FX = np.array([1.0, np.nan, 2.0, -0.0, 0.0, -3.5, np.inf, np.nan, 5.0, -1.0], np.float32)
FY = np.array([2.0, 1.0, np.nan, 0.0, -0.0, -3.5, 1.0, np.nan, 5.0, -np.inf], np.float32)


def test_nan_propagating_min_max(device):
    cases = [("%r = arith.maximumf %x, %y : f32", "f32"),
             ("%r = arith.minimumf %x, %y : f32", "f32"),
             ("%r = arith.maxnumf %x, %y : f32", "f32"),
             ("%r = arith.minnumf %x, %y : f32", "f32")]
    _, (mx, mn, fmx, fmn) = run_elementwise(device, [("x", "f32"), ("y", "f32")], cases,
                                            [FX, FY])
    _same_floats(mx, np.array([_maximum(a, b) for a, b in zip(FX, FY)], np.float32))
    _same_floats(mn, np.array([_minimum(a, b) for a, b in zip(FX, FY)], np.float32))
    np.testing.assert_array_equal(fmx, np.fmax(FX, FY))
    np.testing.assert_array_equal(fmn, np.fmin(FX, FY))


CMPF = {"oeq": lambda a, b: a == b, "one": lambda a, b: a < b or a > b,
        "ogt": lambda a, b: a > b, "oge": lambda a, b: a >= b,
        "olt": lambda a, b: a < b, "ole": lambda a, b: a <= b,
        "ord": lambda a, b: not (math.isnan(a) or math.isnan(b)),
        "ueq": lambda a, b: not (a < b or a > b), "une": lambda a, b: not a == b,
        "ugt": lambda a, b: not a <= b, "uge": lambda a, b: not a < b,
        "ult": lambda a, b: not a >= b, "ule": lambda a, b: not a > b,
        "uno": lambda a, b: math.isnan(a) or math.isnan(b),
        "true": lambda a, b: True, "false": lambda a, b: False}


def test_float_comparisons(device):
    cases = [(f"%t = arith.cmpf {p}, %x, %y : f32\n%r = arith.extui %t : i1 to i32", "i32")
             for p in CMPF]
    _, outputs = run_elementwise(device, [("x", "f32"), ("y", "f32")], cases, [FX, FY])
    for predicate, got in zip(CMPF, outputs):
        want = [int(CMPF[predicate](float(a), float(b))) for a, b in zip(FX, FY)]
        np.testing.assert_array_equal(got, want, err_msg=predicate)


MATH_CASES = [  # (MLIR, numpy reference)
    ("%r = math.exp %x : {T}", np.exp), ("%r = math.exp2 %x : {T}", np.exp2),
    ("%r = math.log %x : {T}", np.log), ("%r = math.log2 %x : {T}", np.log2),
    ("%r = math.sqrt %x : {T}", np.sqrt), ("%r = math.rsqrt %x : {T}", lambda x: 1 / np.sqrt(x)),
    ("%r = math.sin %x : {T}", np.sin), ("%r = math.cos %x : {T}", np.cos),
    ("%r = math.tan %x : {T}", np.tan), ("%r = math.tanh %x : {T}", np.tanh),
    ("%r = math.erf %x : {T}", lambda x: np.array([math.erf(v) for v in x])),
    ("%r = math.floor %y : {T}", np.floor), ("%r = math.ceil %y : {T}", np.ceil),
    ("%r = math.absf %y : {T}", np.abs), ("%r = math.trunc %y : {T}", np.trunc),
    ("%r = math.round %y : {T}", lambda y: np.sign(y) * np.floor(np.abs(y) + 0.5)),
    ("%r = math.roundeven %y : {T}", np.round),
    ("%r = math.fma %x, %y, %x : {T}", lambda x, y: x * y + x),
    ("%r = math.powf %x, %y : {T}", np.power), ("%r = math.atan2 %y, %x : {T}", None),
    ("%r = math.copysign %x, %y : {T}", np.copysign),
    ("%r = arith.remf %y, %x : {T}", None),
    ("%t = arith.negf %y : {T}\n%r = arith.divf %t, %x : {T}", lambda x, y: -y / x),
]


@pytest.mark.parametrize("T", ["f32", "f64"])
def test_math_ops(device, T):
    dtype = MLIR_DTYPES[T]
    x = np.linspace(0.1, 3.0, 16).astype(dtype)
    y = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.7, 0.7, 3.2, -3.2, 0.0, 1.0,
                  -1.0, 2.49, -2.51, 1e-3], dtype)
    references = {"math.atan2": lambda x, y: np.arctan2(y, x),
                  "arith.remf": lambda x, y: np.fmod(y, x)}
    cases = [(text.replace("{T}", T), T) for text, _ in MATH_CASES]
    kernel, outputs = run_elementwise(device, [("x", T), ("y", T)], cases, [x, y])
    assert ("cl_khr_fp64" in kernel.source) == (T == "f64")
    for (text, ref), got in zip(MATH_CASES, outputs):
        op = re.search(r"%r = (\S+)", text).group(1)
        ref = ref or references[op]
        args = (x,) if "%y" not in text else (y,) if "%x" not in text else (x, y)
        want = ref(*[a.astype(np.float64) for a in args])
        np.testing.assert_allclose(got, want, rtol=1e-5 if T == "f32" else 1e-12,
                                   atol=1e-6 if T == "f32" else 1e-14, err_msg=text)


def test_casts(device):
    x = np.array([-3.7, 2.5, 1e10, -1e10, np.nan, 0.5, 300.0, -0.0], np.float32)
    k = np.array([-1, 7, 2**31 - 1, -2**31, 0, 1, 16777217, -5], np.int32)
    cases = [
        ("%r = arith.fptosi %x : f32 to i32", "i32"),
        ("%r = arith.fptoui %x : f32 to i32", "i32"),
        ("%r = arith.fptosi %x : f32 to i8", "i8"),
        ("%r = arith.sitofp %k : i32 to f32", "f32"),
        ("%r = arith.uitofp %k : i32 to f32", "f32"),
        ("%r = arith.bitcast %x : f32 to i32", "i32"),
        ("%t = arith.extf %x : f32 to f64\n%t2 = arith.constant 0.1 : f64\n"
         "%t3 = arith.addf %t, %t2 : f64\n%r = arith.truncf %t3 : f64 to f32", "f32"),
        ("%t = arith.sitofp %k : i32 to f16\n%r = arith.extf %t : f16 to f32", "f32"),
        ("%t = arith.extsi %k : i32 to i64\n%t2 = arith.constant 4294967296 : i64\n"
         "%r = arith.addi %t, %t2 : i64", "i64"),
        ("%t = arith.extui %k : i32 to i64\n%r = arith.sitofp %t : i64 to f64", "f64"),
        ("%t = arith.bitcast %k : i32 to f32\n%r = arith.bitcast %t : f32 to i32", "i32"),
    ]
    _, out = run_elementwise(device, [("x", "f32"), ("k", "i32")], cases, [x, k])
    sat = lambda v, lo, hi: 0 if math.isnan(v) else int(min(max(math.trunc(float(v)), lo), hi))
    np.testing.assert_array_equal(out[0], [sat(v, -2**31, 2**31 - 1) for v in x])
    np.testing.assert_array_equal(out[1].view(np.uint32), [sat(v, 0, 2**32 - 1) for v in x])
    np.testing.assert_array_equal(out[2], [sat(v, -128, 127) for v in x])
    np.testing.assert_array_equal(out[3], k.astype(np.float32))
    np.testing.assert_array_equal(out[4], k.view(np.uint32).astype(np.float32))
    np.testing.assert_array_equal(out[5], x.view(np.int32))
    _same_floats(out[6], (x.astype(np.float64) + 0.1).astype(np.float32))
    with np.errstate(over="ignore"):  # large ints become inf in f16
        np.testing.assert_array_equal(out[7], k.astype(np.float16).astype(np.float32))
    np.testing.assert_array_equal(out[8], k.astype(np.int64) + 2**32)
    np.testing.assert_array_equal(out[9], k.view(np.uint32).astype(np.float64))
    np.testing.assert_array_equal(out[10], k)


# ---------------------------------------------------------------------------
# Control flow
# ---------------------------------------------------------------------------

LOOPS = """
module {
  func.func @loops(%x: memref<?xf32>, %out: memref<?xf32>, %ints: memref<?xi32>, %K: i32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %i0 = arith.constant 0 : i32
    %i1 = arith.constant 1 : i32
    %i5 = arith.constant 5 : i32
    %i7 = arith.constant 7 : i32
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %pid = gpu.block_id x
    %Ki = arith.index_cast %K : i32 to index
    %base = arith.muli %pid, %Ki : index
    %sum, %mx = scf.for %k = %c0 to %Ki step %c1 iter_args(%s = %zero, %m = %ninf) -> (f32, f32) {
      %idx = arith.addi %base, %k : index
      %v = memref.load %x[%idx] : memref<?xf32>
      %s2 = arith.addf %s, %v : f32
      %m2 = arith.maximumf %m, %v : f32
      scf.yield %s2, %m2 : f32, f32
    } loc("acc"("/src/kernel.py":20:8))
    %o0 = arith.muli %pid, %c2 : index
    %o1 = arith.addi %o0, %c1 : index
    memref.store %sum, %out[%o0] : memref<?xf32>
    memref.store %mx, %out[%o1] : memref<?xf32>
    %fa, %fb = scf.for %k = %i0 to %K step %i1 iter_args(%a = %i0, %b = %i1) -> (i32, i32) : i32 {
      %nb = arith.addi %a, %b : i32
      scf.yield %b, %nb : i32, i32
    }
    %sa, %sb = scf.for %k = %c0 to %Ki step %c1 iter_args(%p = %i5, %q = %i7) -> (i32, i32) {
      scf.yield %q, %p : i32, i32
    }
    %p3 = arith.muli %pid, %c3 : index
    %p31 = arith.addi %p3, %c1 : index
    %p32 = arith.addi %p3, %c2 : index
    memref.store %fa, %ints[%p3] : memref<?xi32>
    memref.store %sa, %ints[%p31] : memref<?xi32>
    memref.store %sb, %ints[%p32] : memref<?xi32>
    return
  }
}
"""


def test_scf_for_with_iter_args(device):
    K, programs = 7, 3
    x = np.random.default_rng(4).standard_normal(K * programs).astype(np.float32)
    x[9] = np.nan
    out = np.zeros(2 * programs, np.float32)
    ints = np.zeros(3 * programs, np.int32)
    kernel = emit(LOOPS)
    assert "float acc = 0.0f;" in kernel.source
    run(device, kernel, [x, out, ints, K], groups=(programs,))
    rows = x.reshape(programs, K)
    np.testing.assert_allclose(out[0::2], rows.sum(axis=1, dtype=np.float32), rtol=1e-6)
    _same_floats(out[1::2], np.maximum.reduce(rows, axis=1))  # NaN row stays NaN
    fib = [0, 1]
    for _ in range(K):
        fib = [fib[1], fib[0] + fib[1]]
    np.testing.assert_array_equal(ints.reshape(programs, 3), [[fib[0], 7, 5]] * programs)


IF_WHILE = """
module {
  func.func @branches(%x: memref<?xf32>, %out: memref<?xf32>, %flags: memref<?xi32>, %starts: memref<?xi32>, %steps: memref<?xi32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %two = arith.constant 2.0 : f32
    %fzero = arith.constant 0.0 : f32
    %i0 = arith.constant 0 : i32
    %i1 = arith.constant 1 : i32
    %i2 = arith.constant 2 : i32
    %i3 = arith.constant 3 : i32
    scf.for %i = %c0 to %c8 step %c1 {
      %v = memref.load %x[%i] : memref<?xf32>
      %pos = arith.cmpf ogt, %v, %fzero : f32
      %r = scf.if %pos -> (f32) {
        %d = arith.mulf %v, %two : f32
        scf.yield %d : f32
      } else {
        %n = arith.negf %v : f32
        scf.yield %n : f32
      }
      memref.store %r, %out[%i] : memref<?xf32>
      scf.if %pos {
        memref.store %i1, %flags[%i] : memref<?xi32>
      }
      %start = memref.load %starts[%i] : memref<?xi32>
      %res:2 = scf.while (%n = %start, %c = %i0) : (i32, i32) -> (i32, i32) {
        %ne = arith.cmpi ne, %n, %i1 : i32
        scf.condition(%ne) %n, %c : i32, i32
      } do {
      ^bb0(%n2: i32, %c2: i32):
        %rem = arith.remsi %n2, %i2 : i32
        %even = arith.cmpi eq, %rem, %i0 : i32
        %half = arith.divsi %n2, %i2 : i32
        %t = arith.muli %n2, %i3 : i32
        %t1 = arith.addi %t, %i1 : i32
        %next = arith.select %even, %half, %t1 : i32
        %c3 = arith.addi %c2, %i1 : i32
        scf.yield %next, %c3 : i32, i32
      }
      memref.store %res#1, %steps[%i] : memref<?xi32>
    }
    return
  }
}
"""


def _collatz_steps(n: int) -> int:
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def test_scf_if_and_while(device):
    x = np.array([1.5, -2.0, 0.0, 3.0, -0.5, np.nan, 7.0, -8.0], np.float32)
    out = np.zeros(8, np.float32)
    flags = np.zeros(8, np.int32)
    starts = np.array([1, 2, 3, 6, 7, 27, 97, 12], np.int32)
    steps = np.zeros(8, np.int32)
    kernel = emit(IF_WHILE)
    assert "while (1) {" in kernel.source and "break;" in kernel.source
    run(device, kernel, [x, out, flags, starts, steps])
    _same_floats(out, np.where(x > 0, x * 2, -x))
    np.testing.assert_array_equal(flags, (x > 0).astype(np.int32))
    np.testing.assert_array_equal(steps, [_collatz_steps(int(n)) for n in starts])


WHILE_SAME_NAMES = """
module {
  func.func @count_down(%starts: memref<?xi32>, %steps: memref<?xi32>) {
    %c0 = arith.constant 0 : index
    %i0 = arith.constant 0 : i32
    %i1 = arith.constant 1 : i32
    %start = memref.load %starts[%c0] : memref<?xi32>
    %res:2 = scf.while (%n = %start, %c = %i0) : (i32, i32) -> (i32, i32) {
      %ne = arith.cmpi ne, %n, %i0 : i32 loc("step")
      scf.condition(%ne) %n, %c : i32, i32
    } do {
    ^bb0(%n2: i32, %c2: i32):
      %next = arith.subi %n2, %i1 : i32 loc("step")
      %c3 = arith.addi %c2, %i1 : i32 loc("step")
      scf.yield %next, %c3 : i32, i32
    }
    memref.store %res#1, %steps[%c0] : memref<?xi32>
    return
  }
}
"""


def test_while_regions_share_one_c_scope(device):
    """The condition and the body of scf.while print into one C block: values of
    both named alike get different C names."""
    kernel = emit(WHILE_SAME_NAMES)
    declared = re.findall(r"\b(?:bool|int) (step\w*) =", kernel.source)
    assert len(declared) >= 3 and len(set(declared)) == len(declared), kernel.source
    steps = np.zeros(1, np.int32)
    run(device, kernel, [np.array([5], np.int32), steps])
    assert steps[0] == 5


# ---------------------------------------------------------------------------
# Vectors (vload / vstore)
# ---------------------------------------------------------------------------

VECTORS = """
module {
  func.func @vec(%x: memref<?xf32>, %y: memref<?xf32>, %out: memref<?xf32>, %h: memref<?xf16>, %oh: memref<?xf16>) {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %pad = arith.constant 0.0 : f32
    %two = arith.constant 2.0 : f32
    %hundred = arith.constant 100.0 : f32
    %cv = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : vector<4xf32>
    scf.for %i = %c0 to %c32 step %c4 {
      %vx = vector.transfer_read %x[%i], %pad {in_bounds = [true]} : memref<?xf32>, vector<4xf32>
      %vy = vector.load %y[%i] : memref<?xf32>, vector<4xf32>
      %s = vector.broadcast %two : f32 to vector<4xf32>
      %m = arith.mulf %vx, %s : vector<4xf32>
      %a = arith.addf %m, %cv : vector<4xf32>
      %mx = arith.maximumf %a, %vy : vector<4xf32>
      %e = vector.extract %mx[1] : f32 from vector<4xf32>
      %e2 = arith.addf %e, %hundred : f32
      %ins = vector.insert %e2, %mx[1] : f32 into vector<4xf32>
      %lt = arith.cmpf olt, %ins, %vy : vector<4xf32>
      %sel = arith.select %lt, %vy, %ins : vector<4xi1>, vector<4xf32>
      vector.transfer_write %sel, %out[%i] {in_bounds = [true]} : vector<4xf32>, memref<?xf32>
      %vh = vector.load %h[%i] : memref<?xf16>, vector<4xf16>
      vector.store %vh, %oh[%i] : memref<?xf16>, vector<4xf16>
    }
    return
  }
}
"""


def test_vectors(device):
    rng = np.random.default_rng(5)
    x = rng.standard_normal(32).astype(np.float32)
    y = (rng.standard_normal(32) * 4).astype(np.float32)
    y[3] = np.nan
    h = rng.standard_normal(32).astype(np.float16)
    out = np.zeros(32, np.float32)
    oh = np.zeros(32, np.float16)
    kernel = emit(VECTORS)
    for needle in ("vload4(", "vstore4(", "vload_half4(", "vstore_half4_rte(", ".s1"):
        assert needle in kernel.source
    run(device, kernel, [x, y, out, h, oh])
    a = x * 2 + np.tile(np.float32([1, 2, 3, 4]), 8)
    mx = np.maximum(a, y)  # numpy maximum propagates NaN like arith.maximumf
    mx[1::4] += 100
    _same_floats(out, np.where(mx < y, y, mx))
    np.testing.assert_array_equal(oh, h)


FROM_ELEMENTS = """
module {
  func.func @gather(%x: memref<?xf32>, %out: memref<?xf32>, %h: memref<?xf16>, %oh: memref<?xf16>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %a = memref.load %x[%c3] : memref<?xf32>
    %b = memref.load %x[%c2] : memref<?xf32>
    %c = memref.load %x[%c1] : memref<?xf32>
    %d = memref.load %x[%c0] : memref<?xf32>
    %v = vector.from_elements %a, %b, %c, %d : vector<4xf32>
    vector.transfer_write %v, %out[%c0] {in_bounds = [true]} : vector<4xf32>, memref<?xf32>
    %ha = memref.load %h[%c1] : memref<?xf16>
    %hb = memref.load %h[%c0] : memref<?xf16>
    %hv = vector.from_elements %ha, %hb : vector<2xf16>
    vector.store %hv, %oh[%c0] : memref<?xf16>, vector<2xf16>
    return
  }
}
"""


def test_vector_from_elements(device):
    """A vector built from scalars (the HLO transpose's segments) prints as an OpenCL
    vector literal, also for f16 values (float lanes, stored with vstore_halfN)."""
    x = np.float32([1.5, -2.0, 3.25, 8.0])
    h = np.float16([0.5, -7.0])
    out, oh = np.zeros(4, np.float32), np.zeros(2, np.float16)
    kernel = emit(FROM_ELEMENTS)
    assert re.search(r"float4 \w+ = \(float4\)\(\w+, \w+, \w+, \w+\);", kernel.source)
    assert re.search(r"float2 \w+ = \(float2\)\(\w+, \w+\);", kernel.source)
    run(device, kernel, [x, out, h, oh])
    np.testing.assert_array_equal(out, x[::-1])
    np.testing.assert_array_equal(oh, h[::-1])


# ---------------------------------------------------------------------------
# Errors and literals
# ---------------------------------------------------------------------------

def test_unsupported_op_names_op_and_location():
    text = """
    module {
      func.func @bad(%x: memref<?xf32>) {
        %t = arith.constant dense<1.0> : tensor<4xf32> loc("/src/kernel.py":11:3)
        %c0 = arith.constant 0 : index
        %v = tensor.extract %t[%c0] : tensor<4xf32> loc("v"("/src/kernel.py":12:7))
        memref.store %v, %x[%c0] : memref<?xf32>
        return
      }
    }"""
    with pytest.raises(OpenCLEmitError, match=r"tensor\.extract.*kernel\.py:12"):
        emit(text)


def test_func_call_is_rejected_with_callsite_location():
    text = """
    module {
      func.func private @helper(f32) -> f32
      func.func @caller(%x: memref<?xf32>) {
        %c0 = arith.constant 0 : index
        %v = memref.load %x[%c0] : memref<?xf32>
        %r = func.call @helper(%v) : (f32) -> f32 loc(callsite("/src/helpers.py":5:3 at "/src/kernel.py":30:1))
        memref.store %r, %x[%c0] : memref<?xf32>
        return
      }
    }"""
    with pytest.raises(OpenCLEmitError, match=r"func\.call.*helpers\.py:5"):
        emit(text)


def test_literals_round_trip():
    assert float_literal(0.1, "f32") == "0.1f"
    assert float_literal(1.0, "f32") == "1.0f"
    assert float_literal(-2.5, "f32") == "(-2.5f)"
    assert float_literal(float("inf"), "f32") == "INFINITY"
    assert float_literal(float("-inf"), "f64") == "(-(double)INFINITY)"
    assert float_literal(float("nan"), "f32") == "NAN"
    assert float_literal(0.1, "f64") == "0.1"
    assert int_literal(-2**31, "i32") == "(-2147483647 - 1)"
    assert int_literal(5, "i64", typed=True) == "5L"
    # Random float32 bit patterns print as literals that parse back to the same bits.
    rng = np.random.default_rng(6)
    for bits in rng.integers(0, 2**32, 2000, dtype=np.uint64).astype(np.uint32):
        value = bits.view(np.float32)
        if np.isfinite(value):
            text = float_literal(float(value), "f32").strip("()").rstrip("f")
            assert np.float32(text).view(np.uint32) == bits, text


# ---------------------------------------------------------------------------
# Work-groups of several work-items: thread ids, barriers, local size
# ---------------------------------------------------------------------------

WORK_GROUP = """
module {
  func.func @reverse4(%x: memref<?xf32>, %out: memref<?xf32>) attributes {opencl.local_size = array<i64: 4, 1, 1>} {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %two = arith.constant 2.0 : f32
    %pid = gpu.block_id x
    %lid = gpu.thread_id x
    %size = gpu.block_dim x
    %base = arith.muli %pid, %c4 : index
    %idx = arith.addi %base, %lid : index
    %tile = memref.alloc() : memref<4xf32>
    %v = memref.load %x[%idx] : memref<?xf32>
    %d = arith.mulf %v, %two : f32
    memref.store %d, %tile[%lid] : memref<4xf32>
    gpu.barrier
    %last = arith.subi %size, %c1 : index
    %mirror = arith.subi %last, %lid : index
    %w = memref.load %tile[%mirror] : memref<4xf32>
    memref.store %w, %out[%idx] : memref<?xf32>
    return
  }
}
"""


def test_work_group_with_barrier(device):
    x = np.arange(12, dtype=np.float32)
    out = np.zeros(12, np.float32)
    kernel = emit(WORK_GROUP)
    assert kernel.local_size == (4, 1, 1)
    assert "reqd_work_group_size(4, 1, 1)" in kernel.source
    assert "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);" in kernel.source
    run(device, kernel, [x, out], groups=(3,))
    np.testing.assert_array_equal(out, (x * 2).reshape(3, 4)[:, ::-1].reshape(-1))


def test_barrier_of_a_one_work_item_group_is_a_fence():
    # nothing to wait for: the barrier only orders the work-item's own memory accesses
    text = WORK_GROUP.replace("opencl.local_size = array<i64: 4, 1, 1>",
                              "opencl.local_size = array<i64: 1, 1, 1>")
    kernel = emit(text)
    assert "mem_fence(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);" in kernel.source
    assert "barrier(" not in kernel.source


def test_unsupported_rounding_mode_is_rejected():
    text = """
    module {
      func.func @k(%x: memref<?xf32>, %o: memref<?xf16>) {
        %c0 = arith.constant 0 : index
        %v = memref.load %x[%c0] : memref<?xf32>
        %h = arith.truncf %v to_nearest_away : f32 to f16 loc("/src/kernel.py":3:1)
        memref.store %h, %o[%c0] : memref<?xf16>
        return
      }
    }"""
    with pytest.raises(OpenCLEmitError, match=r"arith\.truncf.*kernel\.py:3"):
        emit(text)


def test_names_are_sanitized_and_unique():
    text = """
    module {
      func.func @k(%a: memref<?xf32>, %b: i32, %c: i32, %d: i32) attributes {opencl.arg_names = ["max", "float", "2d", "x-y"]} {
        %c0 = arith.constant 0 : index
        %v = memref.load %a[%c0] : memref<?xf32> loc("acc"("/src/kernel.py":4:1))
        %w = arith.addf %v, %v : f32 loc("acc"("/src/kernel.py":5:1))
        memref.store %w, %a[%c0] : memref<?xf32>
        return
      }
    }"""
    kernel = emit(text)
    assert "(__global float* max_1, int float_1, int v2d, int x_y)" in kernel.source
    assert "float acc = max_1[0];" in kernel.source
    assert "float acc_1 = acc + acc;" in kernel.source


NONTEMPORAL = """
module {
  func.func @stream(%x: memref<?xf32>, %out: memref<?xf32>, %h: memref<?xf16>, %oh: memref<?xf16>,
                    %shift: index) {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    scf.for %i = %c0 to %c64 step %c16 {
      %v = vector.load %x[%i] : memref<?xf32>, vector<16xf32>
      %j = arith.addi %i, %shift : index
      vector.store %v, %out[%j] {nontemporal = true} : memref<?xf32>, vector<16xf32>
    }
    %hv = vector.load %h[%c0] : memref<?xf16>, vector<4xf16>
    vector.store %hv, %oh[%c0] {nontemporal = true} : memref<?xf16>, vector<4xf16>
    return
  }
}
"""


@pytest.mark.parametrize("shift", [0, 1, 16])
def test_nontemporal_vector_stores(device, shift):
    """Streaming stores print as the helper around clang's builtin, which stores
    plainly where the address is not aligned to the vector (shift 1); f16 buffers keep
    their converting store."""
    x = np.arange(64, dtype=np.float32)
    out = np.full(96, -1, np.float32)
    h = np.float16([1, 2, 3, 4])
    oh = np.zeros(4, np.float16)
    kernel = emit(NONTEMPORAL)
    assert kernel.source.count("__builtin_nontemporal_store(") == 1
    assert "#if defined(__clang__)" in kernel.source
    assert "store_nontemporal_float16(arg0_vec, arg1 + (i + arg4));" in kernel.source
    assert "vstore_half4_rte(" in kernel.source
    run(device, kernel, [x, out, h, oh, shift])
    expected = np.full(96, -1, np.float32)
    expected[shift:shift + 64] = x
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(oh, h)
