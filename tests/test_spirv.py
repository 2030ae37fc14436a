"""The SPIR-V stage (triton_spirv/spirv) and the launcher's SPIR-V programs (launcher/il.py).

- The rewrites of our own, IR in / IR out: flat buffers with index arithmetic
  (flatten.py), `index` -> `i64` (index_width.py), saturating float -> int (casts.py).
- Every kernel family of the suite, both frontends, run from SPIR-V and from OpenCL C on
  the same device (Intel's OpenCL runtime: `WITH_INTEL_OPENCL=1 bash scripts/setup.sh`,
  then `TRITON_OPENCL_DEVICE=intel`); results must agree, and every module the run
  produced must pass `spirv-val` for OpenCL. Without a device that takes SPIR-V those
  tests skip (the suite's default device, PoCL, takes none).
- Errors: unsupported ops name the op and the Python line; `spirv` on a device without
  SPIR-V and a module the driver rejects name the kernel; `auto` falls back, logged once.
"""
import glob
import logging
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice
from mlir import ir

import ttir_kernels as tk
from hlo_helpers import hlo_path
from test_lang_dot_shapes import matmul_kernel
from test_lang_memory import atomic_kernel, cas_kernel
from test_lang_reduce_scan import reduce_kernel
from test_tutorials import load_tutorial
from triton_spirv.memref_stage.copy_lowering import lower_copies
from triton_spirv.spirv.atomics import atomics_as_compare_exchange_loops
from triton_spirv.spirv.casts import saturate_float_to_int
from triton_spirv.spirv.flatten import SpirvStageError, flatten_buffers
from triton_spirv.spirv.fp8 import fp8_values_as_f32
from triton_spirv.spirv.half_types import bf16_buffers_as_i16, f16_tiles_as_f32
from triton_spirv.spirv.index_width import widen_index
from triton_spirv.spirv.tanh import expand_f32_tanh
from triton_spirv.stages import new_context

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPIRV_VAL = shutil.which("spirv-val")


def _device_takes_spirv() -> bool:
    from launcher import get_device
    from launcher.il import spirv_versions
    return bool(spirv_versions(get_device()))


needs_spirv_device = pytest.mark.skipif(
    not _device_takes_spirv(),
    reason="the OpenCL device takes no SPIR-V: install Intel's runtime (WITH_INTEL_OPENCL=1 "
           "bash scripts/setup.sh) and select it with TRITON_OPENCL_DEVICE=intel")


# --- the rewrites, IR in / IR out -----------------------------------------------------

def _rewritten(text: str, rewrite) -> str:
    with new_context():
        module = ir.Module.parse(text)
        rewrite(module)
        module.operation.verify()
        return str(module)


def copies_then_flatten(module) -> None:
    """The SPIR-V stage's first steps on copies: loops (memref_stage/copy_lowering.py),
    then flat buffers."""
    lower_copies(module)
    flatten_buffers(module)


def _rewritten_func(text: str, rewrite) -> str:
    """`text` after `rewrite` of its first function."""
    return _rewritten(text, lambda module: rewrite(module.body.operations[0].operation))


VIEWS_AND_COPY = """
func.func @k(%x: memref<?xf32>, %off: index, %n: index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %view = memref.reinterpret_cast %x to offset: [%off], sizes: [4, 8], strides: [16, 1]
      : memref<?xf32> to memref<4x8xf32, strided<[16, 1], offset: ?>>
  %tile = memref.alloc() : memref<4x8xf32>
  %src = memref.subview %view[0, 0] [4, %n] [1, 1]
      : memref<4x8xf32, strided<[16, 1], offset: ?>> to memref<4x?xf32, strided<[16, 1], offset: ?>>
  %dst = memref.subview %tile[0, 0] [4, %n] [1, 1] : memref<4x8xf32> to memref<4x?xf32, strided<[8, 1]>>
  memref.copy %src, %dst : memref<4x?xf32, strided<[16, 1], offset: ?>> to memref<4x?xf32, strided<[8, 1]>>
  %v = memref.load %tile[%c2, %c0] : memref<4x8xf32>
  memref.store %v, %view[%c0, %c2] : memref<4x8xf32, strided<[16, 1], offset: ?>>
  return
}
"""


def test_flatten_views_become_index_arithmetic_on_root_buffers():
    out = _rewritten(VIEWS_AND_COPY, copies_then_flatten)
    # No view survives; the tile is a flat work-group array (OpenCL address space 3).
    for view_op in ("reinterpret_cast", "subview", "memref.copy"):
        assert view_op not in out, out
    assert "memref.alloc() : memref<32xf32, 3>" in out
    # The copy is a loop nest: row i, column j -> x[off + i*16 + j] into tile[i*8 + j].
    assert out.count("scf.for") == 2
    assert "arith.constant 16 : index" in out and "arith.constant 8 : index" in out
    # tile[2, 0] is element 16; view[0, 2] is x[off + 2].
    lines = [line.strip() for line in out.splitlines()]
    assert any(line.startswith("%") and "memref.load" in line and ": memref<32xf32, 3>" in line
               for line in lines)
    assert any("memref.store" in line and ": memref<?xf32>" in line for line in lines)


def test_flatten_shared_copy_uses_every_work_item_between_barriers():
    text = VIEWS_AND_COPY.replace("func.func @k(%x: memref<?xf32>, %off: index, %n: index) {",
                                  "func.func @k(%x: memref<?xf32>, %off: index, %n: index) "
                                  "attributes {opencl.local_size = array<i64: 64, 1, 1>} {")
    out = _rewritten(text, copies_then_flatten)
    assert out.count("gpu.barrier") == 2
    assert "gpu.thread_id  x" in out and "gpu.block_dim  x" in out
    assert "arith.divsi" in out and "arith.remsi" in out


def test_flatten_private_arrays_and_copies_under_a_branch_stay_with_one_work_item():
    """GPU-shaped kernels (work_group_sharing.py): a `memref.alloca` is each work-item's
    own array, and a copy inside `if (work-item 0)` is run by that work-item alone; sharing
    either between the work-items (or a barrier inside the branch) gives wrong results."""
    text = """
func.func @k(%x: memref<?xf32>) attributes {opencl.local_size = array<i64: 64, 1, 1>} {
  %c0 = arith.constant 0 : index
  %mine = memref.alloca() : memref<4x4xf32>
  %tile = memref.alloc() : memref<16xf32>
  %src = memref.reinterpret_cast %x to offset: [0], sizes: [16], strides: [1]
      : memref<?xf32> to memref<16xf32, strided<[1]>>
  %t = gpu.thread_id x
  %first = arith.cmpi eq, %t, %c0 : index
  scf.if %first {
    memref.copy %src, %tile : memref<16xf32, strided<[1]>> to memref<16xf32>
  }
  %flat = memref.collapse_shape %mine [[0, 1]] : memref<4x4xf32> into memref<16xf32>
  memref.copy %tile, %flat : memref<16xf32> to memref<16xf32>
  return
}
"""
    out = _rewritten(text, copies_then_flatten)
    assert "memref.alloca() : memref<16xf32, #spirv.storage_class<Function>>" in out
    assert "memref.alloc() : memref<16xf32, 3>" in out
    assert "gpu.barrier" not in out          # neither copy is shared between work-items
    assert "gpu.block_dim" not in out


def test_flatten_shares_copies_of_uniform_branches_only():
    """A branch every work-item takes alike (an early return on a loaded value) shares
    its copy between the work-items between barriers; a section marked
    `opencl.single_work_item` (memref_stage/work_group_sharing.py) and a branch on the
    work-item id keep theirs with whoever reaches them, with no barrier inside."""
    text = """
func.func @k(%x: memref<?xf32>, %flag: i1) attributes {opencl.local_size = array<i64: 64, 1, 1>} {
  %c0 = arith.constant 0 : index
  %tile = memref.alloc() : memref<16xf32>
  %src = memref.reinterpret_cast %x to offset: [0], sizes: [16], strides: [1]
      : memref<?xf32> to memref<16xf32, strided<[1]>>
  scf.if %flag {
    memref.copy %src, %tile : memref<16xf32, strided<[1]>> to memref<16xf32>
  }
  scf.if %flag {
    memref.copy %tile, %src : memref<16xf32> to memref<16xf32, strided<[1]>>
  } {opencl.single_work_item}
  %t = gpu.thread_id x
  %few = arith.cmpi ult, %t, %c0 : index
  scf.if %few {
    memref.copy %tile, %src : memref<16xf32> to memref<16xf32, strided<[1]>>
  }
  return
}
"""
    out = _rewritten(text, copies_then_flatten)
    assert "memref.copy" not in out
    branches = [m.start() for m in re.finditer(r"scf\.if ", out)]
    assert len(branches) == 3, out
    barriers = [m.start() for m in re.finditer(r"gpu\.barrier", out)]
    # the shared copy: barriers before and after it, inside the first branch only
    assert len(barriers) == 2 and all(branches[0] < b < branches[1] for b in barriers), out
    assert out.count("gpu.block_dim") == 3      # x, y, z: the group's size, once


def test_flatten_copies_of_views_of_each_work_item_stay_with_it():
    """A distributed loop counts its rounds from 0 (work_group_sharing.py): every
    work-item runs each round, but a copy between views at its own offsets is its own,
    not one the work-group shares (which would copy one work-item's views and put
    barriers in its loop)."""
    text = """
func.func @k(%x: memref<?xf32>) attributes {opencl.local_size = array<i64: 64, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  %tile = memref.alloc() : memref<512xf32>
  %t = gpu.thread_id x
  scf.for %k = %c0 to %c2 step %c1 {
    %round = arith.muli %k, %c128 : index
    %item = arith.addi %round, %t : index
    %at = arith.muli %item, %c4 : index
    %src = memref.reinterpret_cast %x to offset: [%at], sizes: [4], strides: [1]
        : memref<?xf32> to memref<4xf32, strided<[1], offset: ?>>
    %dst = memref.subview %tile[%at] [4] [1] : memref<512xf32> to memref<4xf32, strided<[1], offset: ?>>
    memref.copy %src, %dst : memref<4xf32, strided<[1], offset: ?>> to memref<4xf32, strided<[1], offset: ?>>
  }
  return
}
"""
    out = _rewritten(text, copies_then_flatten)
    assert "memref.copy" not in out and "gpu.barrier" not in out, out
    assert "gpu.block_dim" not in out, out
    # the shared form of the same copy, with offsets every work-item shares
    shared = _rewritten(text.replace("%item = arith.addi %round, %t : index",
                                     "%item = arith.addi %round, %c1 : index"), copies_then_flatten)
    assert shared.count("gpu.barrier") == 2 and "gpu.block_dim" in shared, shared


def test_flatten_copy_of_one_work_item_moves_rows_in_vectors():
    """Rows that can reach 16 elements move 16 per vector load and store, the rest of
    each row one by one; tiles with shorter rows (VIEWS_AND_COPY) keep the element loop,
    and work-groups of several work-items the shared copy."""
    text = (VIEWS_AND_COPY.replace("sizes: [4, 8], strides: [16, 1]", "sizes: [4, 32], strides: [64, 1]")
            .replace("4x8xf32", "4x32xf32").replace("strided<[16, 1]", "strided<[64, 1]")
            .replace("strided<[8, 1]>", "strided<[32, 1]>"))
    out = _rewritten(text, copies_then_flatten)
    assert "memref.alloc() : memref<128xf32, 3>" in out
    assert out.count("vector.load") == 1 and "vector<16xf32>" in out
    assert out.count("vector.store") == 1
    # rows, the vectors of a row (n / 16 * 16 elements, step 16), the rest of the row
    assert out.count("scf.for") == 3 and "arith.divsi" in out
    assert out.count("memref.load") == 2 and out.count("memref.store") == 2  # rest + load/store below
    assert "vector." not in _rewritten(VIEWS_AND_COPY, copies_then_flatten)
    shared = text.replace("func.func @k(%x: memref<?xf32>, %off: index, %n: index) {",
                          "func.func @k(%x: memref<?xf32>, %off: index, %n: index) "
                          "attributes {opencl.local_size = array<i64: 64, 1, 1>} {")
    assert "vector." not in _rewritten(shared, copies_then_flatten)


def test_f16_tiles_hold_f32():
    text = """
func.func @k(%x: memref<?xf16>, %i: index) {
  %tile = memref.alloc() : memref<32xf16, 3>
  %v = vector.load %x[%i] : memref<?xf16>, vector<16xf16>
  vector.store %v, %tile[%i] : memref<32xf16, 3>, vector<16xf16>
  %a = memref.load %tile[%i] : memref<32xf16, 3>
  %w = arith.extf %a : f16 to f32
  %b = memref.load %tile[%i] : memref<32xf16, 3>
  %s = arith.addf %b, %b : f16
  %t = arith.truncf %w : f32 to f16
  %u = arith.addf %s, %t : f16
  memref.store %u, %x[%i] : memref<?xf16>
  return
}
"""
    out = _rewritten_func(text, f16_tiles_as_f32)
    assert "memref.alloc() : memref<32xf32, 3>" in out
    # stored widened once; the load widened for its user is that user's f32 value
    assert "%1 = arith.extf %0 : vector<16xf16> to vector<16xf32>" in out
    assert "vector.store %1, %alloc[%arg1] : memref<32xf32, 3>, vector<16xf32>" in out
    assert "%2 = memref.load %alloc[%arg1] : memref<32xf32, 3>" in out
    assert "arith.extf %2" not in out and "%6 = arith.truncf %2 : f32 to f16" in out
    # an f16 user of a load gets the value narrowed (exactly: the element is an f16)
    assert "%4 = arith.truncf %3 : f32 to f16" in out and "arith.addf %4, %4 : f16" in out
    # global f16 buffers stay f16
    assert "memref<?xf16>" in out


def test_bf16_buffers_become_i16_and_half_scalars_f32():
    text = """
func.func @k(%x: memref<?xbf16>, %s: f16) {
  %c0 = arith.constant 0 : index
  %tile = memref.alloc() : memref<8xbf16, 3>
  %v = memref.load %x[%c0] : memref<?xbf16>
  memref.store %v, %tile[%c0] : memref<8xbf16, 3>
  %w = arith.extf %v : bf16 to f32
  %h = arith.extf %s : f16 to f32
  %sum = arith.addf %w, %h : f32
  %b = arith.truncf %sum : f32 to bf16
  memref.store %b, %x[%c0] : memref<?xbf16>
  return
}
"""
    out = _rewritten_func(text, bf16_buffers_as_i16)
    assert "func.func @k(%arg0: memref<?xi16>, %arg1: f32)" in out
    assert "arith.truncf %arg1 : f32 to f16" in out              # the launcher passes float
    assert "memref.alloc() : memref<8xi16, 3>" in out
    assert "memref.load %arg0[%c0] : memref<?xi16>" in out
    assert "arith.bitcast %1 : i16 to bf16" in out
    assert out.count("arith.bitcast") == 3                        # one load, two stores


def test_a_bf16_tile_allocated_first_becomes_i16_too():
    # the alloc is the function's first op (program loops put the tiles in front)
    text = """
func.func @k(%x: memref<?xbf16>) {
  %tile = memref.alloc() : memref<8xbf16, 3>
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<?xbf16>
  memref.store %v, %tile[%c0] : memref<8xbf16, 3>
  return
}
"""
    out = _rewritten_func(text, bf16_buffers_as_i16)
    assert "memref.alloc() : memref<8xi16, 3>" in out and "bf16, 3>" not in out


def test_widen_index_leaves_index_only_at_accesses():
    text = """
func.func @k(%x: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = gpu.block_id x
  scf.for %i = %c0 to %n step %c1 {
    %j = arith.addi %i, %b : index
    %v = memref.load %x[%j] : memref<?xf32>
    memref.store %v, %x[%i] : memref<?xf32>
  }
  return
}
"""
    def rewrite(module):
        widen_index(module.body.operations[0].operation)
    out = _rewritten(text, rewrite)
    assert "func.func @k(%arg0: memref<?xf32>, %arg1: i64)" in out
    assert "scf.for %arg2 = %c0_i64 to %arg1 step %c1_i64  : i64" in out
    assert "arith.addi %arg2, %0 : i64" in out
    assert out.count("arith.index_cast") == 3     # block id in, two accesses out


def test_saturating_float_to_int():
    text = """
func.func @k(%f: f32) -> i32 {
  %i = arith.fptosi %f : f32 to i32
  return %i : i32
}
"""
    def rewrite(module):
        saturate_float_to_int(module.body.operations[0].operation)
    out = _rewritten(text, rewrite)
    assert "arith.constant 2.14748365E+9 : f32" in out       # 2^31
    assert "arith.constant -2.14748365E+9 : f32" in out
    assert "arith.constant 2147483647 : i32" in out and "arith.constant -2147483648 : i32" in out
    assert "arith.cmpf uno" in out and out.count("arith.select") == 3
    assert "return %5 : i32" in out or "return %" in out.split("arith.select")[-1]


def test_atomics_become_compare_exchange_loops():
    text = """
func.func @k(%x: memref<?xf32>, %v: f32, %i: index) {
  %o = memref.atomic_rmw addf %v, %x[%i] : (f32, memref<?xf32>) -> f32
  %m = memref.generic_atomic_rmw %x[%i] : memref<?xf32> {
  ^bb0(%cur: f32):
    %n = arith.maximumf %cur, %o : f32
    memref.atomic_yield %n : f32
  }
  memref.store %m, %x[%i] : memref<?xf32>
  return
}
"""
    out = _rewritten(text, atomics_as_compare_exchange_loops)
    assert "atomic_rmw" not in out
    assert "func.func private @__atomic_cas_global_f32(i64, i64, f32, f32) -> f32" in out \
        or "func.func private @__atomic_cas_global_f32(%arg0: i64, %arg1: i64, %arg2: f32, %arg3: f32) -> f32" in out
    assert out.count("scf.while") == 2 and out.count("call @__atomic_cas_global_f32") == 2
    assert "arith.addf" in out and "arith.maximumf" in out
    assert out.count("arith.bitcast") == 4       # old and current bits, per loop
    assert "memref.extract_aligned_pointer_as_index" in out


def test_f32_tanh_becomes_the_emitter_formula():
    """f32 tanh (scalar and vector) becomes the OpenCL C emitter's helper, op for op;
    f64 keeps math.tanh (the driver's, as in OpenCL C)."""
    text = """
func.func @k(%x: f32, %v: vector<4xf32>, %d: f64) -> (f32, vector<4xf32>, f64) {
  %t = math.tanh %x : f32
  %u = math.tanh %v : vector<4xf32>
  %w = math.tanh %d : f64
  return %t, %u, %w : f32, vector<4xf32>, f64
}
"""
    out = _rewritten(text, lambda module: expand_f32_tanh(module.body.operations[0].operation))
    assert out.count("math.tanh") == 1 and "math.tanh %arg2 : f64" in out
    scalar, vector = out.split("math.absf")[1:3]
    assert "arith.constant 9.500000e+00 : f32" in scalar      # |x| clamped where tanh rounds to 1
    assert "arith.constant 0x4B400000 : f32" in scalar        # 1.5 * 2^23 rounds k to an integer
    assert "arith.cmpf oge" in scalar and "arith.constant 0.899999976 : f32" in scalar
    assert "arith.constant -2147483648 : i32" in scalar       # the sign of x, copied
    assert scalar.count("math.fma") == 6 + 2 + 7              # the two polynomials, r = y - k ln 2
    assert "arith.constant dense<9.500000e+00> : vector<4xf32>" in vector
    assert "arith.fptosi %" in vector and ": vector<4xf32> to vector<4xi32>" in vector


CALLS_WITHOUT_SPIRV = """
module {
  func.func private @opencl_ldexp_f32_i32_f32(f32, i32) -> f32
  func.func @k(%x: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %c3 = arith.constant 3 : i32
    %a = memref.load %x[%c0] : memref<?xf32>
    %c = func.call @opencl_ldexp_f32_i32_f32(%a, %c3) {opencl.call = "ldexp"} : (f32, i32) -> f32 loc("k.py":7:5)
    memref.store %c, %x[%c0] : memref<?xf32>
    return
  }
}"""


def test_opencl_builtin_call_is_an_error_naming_op_and_line():
    """libdevice calls printed as OpenCL C builtins other than opencl_std.py's have no
    SPIR-V lowering."""
    from triton_spirv.spirv import lower_to_spirv
    with new_context():
        module = ir.Module.parse(CALLS_WITHOUT_SPIRV)
        with pytest.raises(SpirvStageError, match=r"^func.call at k.py:7: calls the OpenCL C function "
                                                  r"'ldexp', which the SPIR-V stage has no lowering for$"):
            lower_to_spirv(module)


@triton.jit
def _ldexp_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, libdevice.ldexp(tl.load(x_ptr + offs), 3))


@needs_spirv_device
def test_libdevice_call_raises_in_spirv_mode_and_runs_from_c_in_auto(monkeypatch):
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    x = torch.linspace(-2, 2, 16)
    with pytest.raises(SpirvStageError, match=r"kernel '_?ldexp_kernel': func.call at .*test_spirv.py:\d+: "
                                              r"calls the OpenCL C function 'ldexp'"):
        _ldexp_kernel[(1,)](x.clone(), BLOCK=16, program="spirv")
    out = x.clone()
    _ldexp_kernel[(1,)](out, BLOCK=16, program="auto")
    torch.testing.assert_close(out, x * 8, rtol=0, atol=0)


def test_fp8_values_become_f32_and_buffers_bytes():
    """As in the OpenCL C emitter: i8 buffers, f32 values of the format, the conversions
    as bit arithmetic (decode on loads and i8 -> fp8 bitcasts, round on truncf, encode on
    stores and fp8 -> i8 bitcasts), never an fp8 type left for upstream's conversions."""
    text = """
func.func @k(%x: memref<?xf8E5M2>, %y: memref<?xi8>, %z: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %tile = memref.alloc() : memref<8xf8E4M3FNUZ, 3>
  %one = arith.constant 1.0 : f8E5M2
  %v = memref.load %x[%c0] : memref<?xf8E5M2>
  %w = arith.extf %v : f8E5M2 to f32
  %t = arith.truncf %w toward_zero : f32 to f8E4M3FNUZ
  memref.store %t, %tile[%c0] : memref<8xf8E4M3FNUZ, 3>
  %b = arith.bitcast %one : f8E5M2 to i8
  memref.store %b, %y[%c0] : memref<?xi8>
  %r = memref.load %y[%c0] : memref<?xi8>
  %f = arith.bitcast %r : i8 to f8E5M2
  %d = arith.extf %f : f8E5M2 to f64
  memref.store %d, %z[%c0] : memref<?xf64>
  return
}
"""
    out = _rewritten_func(text, fp8_values_as_f32)
    assert "f8E" not in out
    assert "func.func @k(%arg0: memref<?xi8>, %arg1: memref<?xi8>, %arg2: memref<?xf64>)" in out
    assert "memref.alloc() : memref<8xi8, 3>" in out
    assert "arith.constant 1.000000e+00 : f32" in out
    assert out.count("math.trunc") == 1                 # truncf toward_zero
    assert out.count("math.roundeven") == 2             # encodes round to nearest even first
    assert out.count("arith.extui") == 2                # decodes: the load and the bitcast
    assert "arith.extf %" in out and ": f32 to f64" in out


FP8_ATOMIC = """
module {
  func.func @k(%x: memref<?xf8E5M2>, %v: f32) {
    %c0 = arith.constant 0 : index
    %m = memref.generic_atomic_rmw %x[%c0] : memref<?xf8E5M2> {
    ^bb0(%cur: f8E5M2):
      %n = arith.truncf %v : f32 to f8E5M2
      memref.atomic_yield %n : f8E5M2
    } loc("k.py":6:9)
    return
  }
}"""

FP8_VECTOR = """
module {
  func.func @k(%x: memref<?xf8E4M3FN>, %y: memref<?xf8E4M3FN>) {
    %c0 = arith.constant 0 : index
    %a = vector.load %x[%c0] : memref<?xf8E4M3FN>, vector<4xf8E4M3FN> loc("k.py":7:9)
    vector.store %a, %y[%c0] : memref<?xf8E4M3FN>, vector<4xf8E4M3FN> loc("k.py":8:5)
    return
  }
}"""

FP8_DOT_BODY = """
module {
  func.func @k(%x: memref<4xf8E5M2>, %y: memref<f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %c0 to %c4 step %c1 {
      %a = memref.load %x[%i] : memref<4xf8E5M2> loc("k.py":9:13)
      %b = arith.extf %a : f8E5M2 to f32 loc(unknown)
      %s = memref.load %y[] : memref<f32> loc("k.py":9:13)
      %t = arith.addf %s, %b : f32 loc(unknown)
      %u = vector.broadcast %t : f32 to vector<2xf32> loc(unknown)
      %w = arith.truncf %u : vector<2xf32> to vector<2xf8E5M2> loc(unknown)
    } loc("k.py":9:13)
    return
  }
}"""


@pytest.mark.parametrize("text, expected", [
    (FP8_ATOMIC, r"^memref.generic_atomic_rmw at k.py:6: atomics on fp8 elements are not supported"),
    (FP8_VECTOR, r"^vector.load at k.py:7: uses a value of type vector<4xf8E4M3FN>, and fp8 has no "
                 r"SPIR-V conversion"),
    # A linalg body's ops come out of bufferization without a location: the loop's line.
    (FP8_DOT_BODY, r"^arith.truncf at k.py:9: converts vector<2xf32> to vector<2xf8E5M2>, and fp8 has "
                   r"no SPIR-V conversion"),
], ids=["atomic", "vector", "unlocated_in_loop"])
def test_unconverted_fp8_is_an_error_naming_op_and_line(text, expected):
    """What the fp8 rewrite leaves (vectors of fp8, fp8 atomics) is named before
    upstream's conversions (whose verifier would reject an FConvert of an i8, with no
    line)."""
    from triton_spirv.spirv import lower_to_spirv
    with new_context():
        module = ir.Module.parse(text)
        with pytest.raises(SpirvStageError, match=expected):
            lower_to_spirv(module)


@triton.jit
def _fp8_round_trip_kernel(x_ptr, bits_ptr, out_ptr, n, FP8: tl.constexpr, ROUNDING: tl.constexpr,
                           BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(x_ptr + offs, mask=mask).to(FP8, fp_downcast_rounding=ROUNDING)
    tl.store(bits_ptr + offs, y.to(tl.uint8, bitcast=True), mask=mask)
    decoded = tl.load(bits_ptr + offs, mask=mask).to(FP8, bitcast=True).to(tl.float32)
    tl.store(out_ptr + offs, decoded, mask=mask)


def _fp8_sweep() -> torch.Tensor:
    """f32 values at every f32 exponent with several mantissas each (ties and
    neighbours of fp8 values among them), both signs: zeros, subnormals, infinities and
    NaNs with various payloads included."""
    exponents = torch.arange(256, dtype=torch.int64) << 23
    mantissas = torch.tensor([0, 1, 0x80000, 0x100000, 0x180000, 0x200000, 0x280000, 0x7fffff],
                             dtype=torch.int64)
    bits = (exponents[:, None] | mantissas[None, :]).flatten()
    bits = torch.cat([bits, bits | (1 << 31)])
    return bits.to(torch.int64).to(torch.int32).view(torch.float32)


@needs_spirv_device
@pytest.mark.parametrize("fp8", ["float8e5", "float8e4nv", "float8e4b8", "float8e5b16", "float8e4b15"])
@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
def test_fp8_from_spirv_gives_the_opencl_c_bits(fp8, rounding, monkeypatch):
    """Rounding, encoding and decoding in SPIR-V give the OpenCL C helpers' bits, NaN
    payloads and signs of zeros included (test_lang_fp8.py checks the values against
    torch in either format)."""
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    x = torch.cat([_fp8_sweep(), torch.linspace(-500, 500, 4001)])
    results = {}
    for mode in ("source", "spirv"):
        bits = torch.empty(x.numel(), dtype=torch.uint8)
        out = torch.empty_like(x)
        _fp8_round_trip_kernel[(triton.cdiv(x.numel(), 1024),)](
            x, bits, out, x.numel(), FP8=getattr(tl, fp8), ROUNDING=rounding, BLOCK=1024, program=mode)
        results[mode] = (bits, out.view(torch.int32))
    assert torch.equal(results["spirv"][0], results["source"][0])
    assert torch.equal(results["spirv"][1], results["source"][1])


@triton.jit
def _tanh_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, libdevice.tanh(tl.load(x_ptr + offs, mask=mask)), mask=mask)


@needs_spirv_device
def test_tanh_from_spirv_is_the_opencl_c_helper(monkeypatch):
    """Same bits from both program formats, exactly +-1 in the tails (fp64 reference)."""
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    x = torch.cat([torch.linspace(-12, 12, 20001), torch.tensor([0.0, -0.0, float("inf"), -float("inf")])])
    outs = {}
    for mode in ("source", "spirv"):
        outs[mode] = torch.empty_like(x)
        compiled = _tanh_kernel[(triton.cdiv(x.numel(), 1024),)](x, outs[mode], x.numel(), BLOCK=1024,
                                                                 program=mode)
    assert "CL.tanh" not in compiled.asm["spvasm"]
    assert torch.equal(outs["spirv"], outs["source"])
    exact = torch.tanh(x.double()).float()
    assert torch.equal(outs["spirv"][exact.abs() == 1], exact[exact.abs() == 1])
    torch.testing.assert_close(outs["spirv"], exact, rtol=1.2e-7, atol=1e-45)


# --- every kernel family: SPIR-V against OpenCL C on the same device ------------------

def _vector_add():
    x, y = torch.rand(3000), torch.rand(3000)
    out = torch.empty_like(x)
    tk.vector_add[(triton.cdiv(3000, 1024),)](x, y, out, 3000, BLOCK=1024)
    return [out]


def _softmax():
    x = torch.randn(36, 100)     # whole blocks of ROWS rows: the kernel masks columns only
    out = torch.empty_like(x)
    tk.softmax[(36 // 4,)](x, out, x.stride(0), 100, ROWS=4, BLOCK=128)
    return [out]


def _matmul():
    a, b = torch.randn(40, 48), torch.randn(48, 36)
    c = torch.empty(40, 36, dtype=torch.float16)
    tk.matmul[(3, 2)](a, b, c, 40, 36, 48, a.stride(0), b.stride(0), c.stride(0), BM=16, BN=32, BK=16)
    return [c]


def _reductions():
    x = torch.randn(13, 37)
    outs = []
    for op in ("sum", "max", "argmin"):
        out, idx = torch.empty(37), torch.empty(37, dtype=torch.int32)
        reduce_kernel[(1,)](x, out, idx, 13, 37, BM=16, BN=64, AXIS=0, OP=op, KEEP=False)
        outs += [out, idx] if op == "argmin" else [out]
    return outs


def _scans():
    x = torch.rand(64) + 0.5
    out = torch.empty_like(x)
    tk.scans[(1,)](x, out, BLOCK=64)
    return [out]


def _random():
    out = torch.empty(512)
    tk.random[(2,)](out, 1234, BLOCK=256)
    return [out]


def _atomics():
    outs = []
    for op, dtype in (("add", torch.float32), ("max", torch.int32), ("xchg", torch.float32)):
        ptr = torch.arange(32).to(dtype)
        val = (torch.arange(32) * 3 % 7).to(dtype)
        old = torch.zeros_like(ptr)       # the masked tail stays as it is
        atomic_kernel[(2,)](ptr, val, old, 27, N=32, OP=op)
        outs += [ptr, old]
    mem, cmp = torch.arange(8).to(torch.float32), torch.tensor([0., 9, 2, 9, 4, 9, 6, 9])
    old = torch.empty_like(mem)
    cas_kernel[(1,)](mem, cmp, torch.full((8,), 5.0), old, N=8)
    return outs + [mem, old]


def _bf16_dot():
    a = torch.randn(64, 48).to(torch.bfloat16)
    b = torch.randn(48, 32).to(torch.bfloat16)
    c = torch.empty(64, 32)
    matmul_kernel[(2, 1)](a, b, c, 64, 32, 48, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                          c.stride(0), c.stride(1), BM=32, BN=32, BK=16, PRECISION="ieee", ACC_INT=False)
    return [c]


def _layer_norm():
    tutorial = load_tutorial("05-layer-norm.py")
    x = torch.randn(31, 256)
    weight, bias = torch.rand(256), torch.rand(256)
    return [tutorial.layer_norm(x, (256,), weight, bias, 1e-5)]


def _attention():
    tutorial = load_tutorial("06-fused-attention.py")
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 64, 64, generator=gen, dtype=torch.float32).to(torch.float16)
               for _ in range(3))
    return [tutorial.attention(q, k, v, True, 0.125)]


def _hlo(name):
    def run():
        from hlo_helpers import run_file
        data = np.load(hlo_path("jax", f"{name}.npz"))
        inputs = [data[k] for k in sorted(data) if k.startswith("arg")]
        _runner, outputs = run_file(hlo_path("jax", f"{name}.hlo"), inputs)
        return [torch.from_numpy(np.asarray(o)) for o in outputs]
    run.hlo_path = hlo_path("jax", f"{name}.hlo")
    return run


def _hlo_module(path, *shapes):
    def run():
        from hlo_helpers import run_file
        rng = np.random.default_rng(0)
        inputs = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
        _runner, outputs = run_file(path, inputs)
        return [torch.from_numpy(np.asarray(o)) for o in outputs]
    run.hlo_path = path
    return run


FAMILIES = {
    "vector add": _vector_add,
    "softmax": _softmax,
    "matmul": _matmul,
    "reductions": _reductions,
    "scans": _scans,
    "random": _random,
    "atomics": _atomics,
    "bf16 dot": _bf16_dot,
    "layer norm": _layer_norm,
    "attention": _attention,
    "hlo loop (gelu)": _hlo("gelu_f32"),
    "hlo loop (gelu bf16)": _hlo("gelu_bf16"),
    "hlo transpose": _hlo_module(hlo_path("log_transpose_add.hlo"), (64, 64)),
    "hlo row reduction": _hlo("row_sum"),
    "hlo column reduction": _hlo("column_sum"),
    "hlo argmax": _hlo("argmax"),
    "hlo concatenate": _hlo("concat_slices"),
    "hlo dot": _hlo("batched_dot"),
    "hlo layer norm": _hlo("layer_norm"),
    "hlo scatter": _hlo("scatter_add"),
    "hlo dynamic-update-slice": _hlo("dynamic_update_slice"),
    "hlo cumsum": _hlo("cumsum"),
}


def _forget_compiled_kernels():
    """Triton keeps launched kernels per function keyed by the launch's own options;
    the program mode comes from the environment, so each run compiles afresh."""
    for kernel in (tk.vector_add, tk.softmax, tk.matmul, tk.scans, tk.random, atomic_kernel, cas_kernel,
                   matmul_kernel, reduce_kernel):
        kernel.device_caches.clear()


def _run_as(mode, run, monkeypatch, dump_dir=None):
    _forget_compiled_kernels()
    monkeypatch.setenv("TRITON_SPIRV_PROGRAM", mode)
    if dump_dir:
        # Compiled here even when Triton's cache has the kernel, so that it is dumped.
        monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
        monkeypatch.setenv("TRITON_SPIRV_DUMP_DIR", str(dump_dir / "dump"))
    else:
        monkeypatch.delenv("TRITON_SPIRV_DUMP_DIR", raising=False)
    return [t.clone() for t in run()]


@needs_spirv_device
@pytest.mark.parametrize("family", list(FAMILIES))
def test_family_from_spirv_equals_opencl_c(family, monkeypatch, tmp_path):
    run = FAMILIES[family]
    torch.manual_seed(0)
    from_c = _run_as("source", run, monkeypatch)
    torch.manual_seed(0)
    from_spirv = _run_as("spirv", run, monkeypatch, dump_dir=tmp_path)
    assert len(from_c) == len(from_spirv)
    for c, s in zip(from_c, from_spirv):
        # Same arithmetic in both; the drivers' math builtins (exp, tanh) may differ in
        # the last bit, and OpenCL C keeps fp16 tiles in float (docs/memref-stage.md)
        # where SPIR-V rounds them to fp16: one fp16 ulp.
        tol = dict(rtol=1e-3, atol=1e-3) if c.dtype == torch.float16 else dict(rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(s, c, equal_nan=True, **tol)
    if family.startswith("hlo"):
        return      # HLO kernels are not dumped; test_hlo_emit_writes_spv validates them
    modules = glob.glob(os.path.join(tmp_path, "dump", "*", "*.spv"))
    assert modules, f"{family}: no SPIR-V module was produced"
    _validate(modules)


def _device_environment() -> str:
    """The OpenCL environment of modules built for the device in use: OpenCL 2.0 where
    it has work-group collectives (the Groups capability), else OpenCL 1.2."""
    from triton_spirv.spirv.lower import environment
    from triton_spirv.target import resolve_target
    return environment(bool(resolve_target().work_group_collectives))


def _validate(paths, env=None):
    """spirv-val for the OpenCL environment the modules were built for (`env`, else the
    device's). Its OpenCL environments allow core capabilities only, so a module
    computing in fp16 (the Float16 capability, cl_khr_fp16) is held to everything else
    of that environment: the one error allowed is that capability."""
    if SPIRV_VAL is None:
        pytest.skip("spirv-val is not installed (apt-get install spirv-tools)")
    env = env or _device_environment()
    for path in paths:
        result = subprocess.run([SPIRV_VAL, "--target-env", env, path],
                                capture_output=True, text=True)
        errors = [line for line in (result.stdout + result.stderr).splitlines() if line.startswith("error")]
        only_fp16 = len(errors) == 1 and "Capability Float16 is not allowed" in errors[0]
        assert result.returncode == 0 or only_fp16, f"{path}: {result.stdout}{result.stderr}"


@needs_spirv_device
def test_hlo_emit_writes_spv(tmp_path, monkeypatch):
    monkeypatch.delenv("TRITON_SPIRV_PROGRAM", raising=False)
    from triton_spirv.cli import main
    for name in ("gelu_f32", "row_sum", "concat_slices", "batched_dot", "cumsum"):
        assert main(["hlo", "emit", hlo_path("jax", f"{name}.hlo"), "-o", str(tmp_path / name),
                     "--program", "spirv"]) == 0
    modules = glob.glob(os.path.join(tmp_path, "*", "*.spv"))
    assert len(modules) >= 5
    assert all(os.path.exists(p[:-4] + ".spvasm") for p in modules)
    _validate(modules)


@needs_spirv_device
def test_cli_writes_spv(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    from triton_spirv.cli import main
    assert main(["compile", os.path.join(REPO, "tests", "ttir_kernels.py"), "vector_add",
                 "--signature", "x_ptr=*fp32,y_ptr=*fp32,out_ptr=*fp32,n=i32",
                 "--constexpr", "BLOCK=256", "--stage", "spv", "-o", str(tmp_path)]) == 0
    path = tmp_path / "vector_add.spv"
    assert path.read_bytes()[:4] == b"\x03\x02\x23\x07"
    _validate([str(path)])


@needs_spirv_device
def test_spvasm_and_spv_in_cache_and_clbin(monkeypatch):
    from launcher import unpack_clbin
    monkeypatch.delenv("TRITON_SPIRV_PROGRAM", raising=False)
    x, y = torch.rand(100), torch.rand(100)
    out = torch.empty_like(x)
    compiled = tk.vector_add[(1,)](x, y, out, 100, BLOCK=128, program="spirv")
    assert "spirv.module" in compiled.asm["spvasm"]
    clbin = unpack_clbin(compiled.asm["clbin"])
    assert clbin["spirv"][:4] == b"\x03\x02\x23\x07" and clbin["program"] == "spirv"
    torch.testing.assert_close(out, x + y)
    # auto on this device: SPIR-V too.
    compiled = tk.vector_add[(1,)](x, y, out, 100, BLOCK=128)
    assert unpack_clbin(compiled.asm["clbin"])["spirv"]


# --- errors ----------------------------------------------------------------------------

@triton.jit
def _f64_to_bf16_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(tl.bfloat16))


@needs_spirv_device
def test_unsupported_op_names_op_and_line_or_falls_back_once(monkeypatch, caplog):
    """f64 -> bf16 has no SPIR-V lowering (upstream expands only f32 <-> bf16)."""
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")    # the fallback is logged when compiling
    x = torch.rand(16, dtype=torch.float64)
    out = torch.empty(16, dtype=torch.bfloat16)
    with pytest.raises(SpirvStageError, match=r"kernel '_?f64_to_bf16_kernel': arith.truncf at "
                                              r".*test_spirv.py:\d+: a bf16 value here"):
        _f64_to_bf16_kernel[(1,)](x, out, BLOCK=16, program="spirv")
    with caplog.at_level(logging.WARNING, logger="triton_spirv"):
        _f64_to_bf16_kernel[(1,)](x, out, BLOCK=16, program="auto")
        _f64_to_bf16_kernel[(1,)](x[:8], out[:8], BLOCK=8, program="auto")
    torch.testing.assert_close(out[:8], x[:8].to(torch.bfloat16))
    fallbacks = [r for r in caplog.records if "runs from OpenCL C instead of SPIR-V" in r.getMessage()]
    assert len(fallbacks) == 1       # once, not per specialization or launch
    assert "arith.truncf" in fallbacks[0].getMessage()


@needs_spirv_device
def test_rejected_module_names_kernel_and_driver_log():
    from launcher import get_device
    from launcher.errors import OpenCLBuildError
    from launcher.il import build_il
    with pytest.raises(OpenCLBuildError, match="SPIR-V module of kernel 'broken' was rejected by"):
        build_il(get_device(), b"\x03\x02\x23\x07" + b"\x00" * 16, "broken")


def test_program_mode_is_checked():
    from launcher.il import requested_mode
    assert requested_mode("SPIRV") == "spirv"
    with pytest.raises(ValueError, match="program option is 'spv'; expected one of auto, spirv, source"):
        requested_mode("spv")


def test_spirv_on_device_without_il_names_kernel():
    """On PoCL (no IL version), `spirv` raises naming the kernel; `auto` stays on OpenCL C
    without a spvasm stage."""
    script = f"""
import sys, torch, triton
sys.path.insert(0, {os.path.join(REPO, 'tests')!r})
import ttir_kernels as tk
x = torch.rand(8); out = torch.empty_like(x)
c = tk.vector_add[(1,)](x, x, out, 8, BLOCK=8)
assert "spvasm" not in c.asm, list(c.asm)
try:
    tk.vector_add[(1,)](x, x, out, 8, BLOCK=8, program="spirv")
except Exception as e:
    print(type(e).__name__, e)
"""
    env = dict(os.environ, TRITON_OPENCL_DEVICE="Portable", PYTHONPATH=REPO)
    env.pop("TRITON_SPIRV_PROGRAM", None)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "OpenCLBuildError kernel 'vector_add': program='spirv' was asked for" in result.stdout
    assert "takes no SPIR-V" in result.stdout


# --- capabilities by the target's OpenCL version ----------------------------------------

ALL_REDUCE = """
func.func @k(%f: memref<?xf32>) attributes {opencl.local_size = array<i64: 64, 1, 1>} {
  %c0 = arith.constant 0 : index
  %lid = gpu.thread_id x
  %x = memref.load %f[%lid] : memref<?xf32>
  %sum = gpu.all_reduce add %x uniform {} : (f32) -> f32
  memref.store %sum, %f[%c0] : memref<?xf32>
  return
}"""


def _declared(module) -> str:
    """The capabilities the spirv.module requires (spirv-update-vce: those it uses)."""
    return re.search(r"requires #spirv.vce<[^>]*>", module.assembly).group(0)


def _lowered(text: str, groups: bool):
    from triton_spirv.spirv import lower_to_spirv
    with new_context():
        return lower_to_spirv(ir.Module.parse(text), "k", groups)


def test_groups_only_in_modules_for_opencl_2_targets(tmp_path):
    """A work-group reduction: an OpenCL 2.0 module declaring Groups for a target with
    collectives; refused, naming the op, for an OpenCL 1.2 target."""
    module = _lowered(ALL_REDUCE, groups=True)
    assert module.environment == "opencl2.0" and "Groups" in _declared(module)
    path = tmp_path / "all_reduce.spv"
    path.write_bytes(module.binary)
    _validate([str(path)], module.environment)
    with pytest.raises(SpirvStageError, match="gpu.all_reduce"):
        _lowered(ALL_REDUCE, groups=False)


def test_modules_without_collectives_are_opencl_1_2_modules(tmp_path):
    module = _lowered(ALL_REDUCE.replace("gpu.all_reduce add %x uniform {} : (f32) -> f32",
                                         "arith.addf %x, %x : f32"), groups=True)
    plain = _lowered(ALL_REDUCE.replace("gpu.all_reduce add %x uniform {} : (f32) -> f32",
                                        "arith.addf %x, %x : f32"), groups=False)
    assert plain.environment == "opencl1.2" and "Groups" not in _declared(plain)
    assert "Groups" not in _declared(module)    # declared only where used
    path = tmp_path / "plain.spv"
    path.write_bytes(plain.binary)
    _validate([str(path)], "opencl1.2")
