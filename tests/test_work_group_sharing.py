"""GPU-shaped kernels (triton_spirv/memref_stage/work_group_sharing.py): on GPU targets the work-items
of a work-group share a program's loops. The rewrite's IR-in/IR-out cases, GPU-shape
results against torch and against the CPU shape on the same device, and Oclgrind's data
race detector on the multi-work-item kernels (clean, and catching a planted missing
barrier)."""
import json
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
from mlir import ir, passmanager

from triton_spirv.stages import new_context
from triton_spirv.target import NAMED_TARGETS, TARGET_ENV
from triton_spirv.memref_stage.pipeline import share_work_group
from triton_spirv.memref_stage.work_group_sharing import work_group_size

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OCLGRIND = shutil.which("oclgrind")


@pytest.fixture(autouse=True)
def no_target_override(monkeypatch):
    monkeypatch.delenv(TARGET_ENV, raising=False)


# ---------------------------------------------------------------------------------------
# The rewrite, IR in / IR out

HEADER = """
func.func @k(%out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<256xf32>
  %u = memref.alloc() : memref<257xf32>
  scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
    memref.store %zero, %t[%i] : memref<256xf32>
    scf.reduce
  }
"""


def rewrite(body: str, work_items: int = 128, quirks: tuple = ()) -> str:
    return rewrite_module(HEADER + body + "\n  return\n}", work_items, quirks)


def rewrite_module(text: str, work_items: int = 128, quirks: tuple = ()) -> str:
    """`quirks`: device quirks whose workarounds to make (triton_spirv/target.py)."""
    with new_context():
        module = ir.Module.parse(text)
        share_work_group(module, work_items, quirks=quirks)
        module.operation.verify()
        passmanager.PassManager.parse("builtin.module(canonicalize,cse)").run(module.operation)
        return str(module)


def test_tiles_only_their_owners_touch_become_private_without_barriers():
    body = """
  scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
    %x = memref.load %t[%i] : memref<256xf32>
    memref.store %x, %out[%i] : memref<?xf32>
    scf.reduce
  }"""
    out = rewrite(body)
    assert "scf.parallel" not in out and "gpu.thread_id  x" in out
    assert out.count("gpu.barrier") == 0
    # each work-item keeps its own 2 elements of the 256-element tile
    assert "memref.alloca() : memref<2xf32>" in out and "memref<256xf32>" not in out
    # one iteration per round (256 iterations over 128 work-items): elements lid and
    # lid + 128, 2 rounds counted from 0 (the private array's indices the round,
    # constants once unrolled), no bounds check (128 divides 256); not the strided form
    assert re.search(r"scf.for (%arg\d+) = %c0 to %c2 step %c1 \{\n"
                     r"\s*memref.store %cst, %alloca\[\1\] : memref<2xf32>\n\s*\}", out), out
    assert re.search(r"scf.for (%arg\d+) = %c0 to %c2 step %c1 \{\n"
                     r"\s*(%\d+) = arith.muli \1, %c128 : index\n"
                     r"\s*(%\d+) = arith.addi \2, %thread_id_x : index\n"
                     r"\s*(%\d+) = memref.load %alloca\[\1\] : memref<2xf32>\n"
                     r"\s*memref.store \4, %arg0\[\3\] : memref<\?xf32>\n\s*\}", out), out
    assert re.search(r"scf.for %\w+ = %thread_id_x to ", out) is None, out
    assert "scf.if" not in out, out
    assert "opencl.local_size = array<i64: 128, 1, 1>" in out
    # the quirk one_round_loops_strided only touches loops of one round: for 128
    # work-items the same 2 counted rounds; for 256 work-items (one round, element lid)
    # the counted round folds away, while the quirk keeps the strided form
    # (see count_rounds)
    assert rewrite(body, quirks=("one_round_loops_strided",)) == out
    one_round = rewrite(body, work_items=256)
    assert "memref.alloca() : memref<1xf32>" in one_round and "scf.for" not in one_round, one_round
    assert re.search(r"(%\d+) = memref.load %alloca\[%c0\] : memref<1xf32>\n"
                     r"\s*memref.store \1, %arg0\[%thread_id_x\]", one_round), one_round
    strided = rewrite(body, work_items=256, quirks=("one_round_loops_strided",))
    assert "memref.alloca() : memref<1xf32>" in strided and "memref<256xf32>" not in strided
    assert strided.count("scf.for %arg1 = %thread_id_x to %c256 step %c256 {") == 2, strided
    assert "gpu.barrier" not in strided, strided


def test_other_elements_need_a_barrier():
    out = rewrite("""
  scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
    %j = arith.subi %c256, %i : index
    %k = arith.subi %j, %c1 : index
    %x = memref.load %t[%k] : memref<256xf32>
    memref.store %x, %out[%i] : memref<?xf32>
    scf.reduce
  }""")
    assert out.count("gpu.barrier") == 1
    barrier = out.index("gpu.barrier")
    assert out.index("memref.store %cst, %alloc[") < barrier < out.index("memref.load %alloc[")


def test_serial_work_runs_on_work_item_zero_between_barriers():
    # (subtraction does not reassociate: the loop stays serial)
    out = rewrite("""
  %acc = memref.alloc() : memref<f32>
  memref.store %zero, %acc[] : memref<f32>
  scf.for %i = %c0 to %c256 step %c1 {
    %x = memref.load %t[%i] : memref<256xf32>
    %a = memref.load %acc[] : memref<f32>
    %s = arith.subf %a, %x : f32
    memref.store %s, %acc[] : memref<f32>
  }
  %sum = memref.load %acc[] : memref<f32>
  scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
    %x = memref.load %t[%i] : memref<256xf32>
    %y = arith.addf %x, %sum : f32
    memref.store %y, %out[%i] : memref<?xf32>
    scf.reduce
  }""")
    # one section for the store and the loop; before it, the fill's elements change
    # owner; after it, every work-item reads the sum
    assert out.count("scf.if") == 1 and "arith.cmpi eq, %thread_id_x" in out
    assert out.count("gpu.barrier") == 2
    section = out[out.index("scf.if"):]
    assert section.index("memref.store %cst, %alloc_0[]") < section.index("gpu.barrier")
    assert out.index("gpu.barrier") < out.index("scf.if")


def test_single_sections_are_marked_and_uniform_branches_are_not():
    """The `scf.if lid == 0` of a single-work-item section carries the unit attribute
    that later stages read (spirv/flatten.py shares copies between the work-items
    everywhere else); a branch on a loaded value, which every work-item takes alike
    (an early return), is not marked, and its distributed loop stays shared."""
    out = rewrite("""
  %v = memref.load %out[%c0] : memref<?xf32>
  %ignored = arith.cmpf oeq, %v, %zero : f32
  scf.if %ignored {
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
      memref.store %zero, %out[%i] : memref<?xf32>
      scf.reduce
    }
    memref.store %zero, %out[%c256] : memref<?xf32>
  }""")
    branches = re.findall(r"scf\.if (%\w+) \{", out)
    assert len(branches) == 2, out
    marked = re.findall(r"\} \{opencl\.single_work_item\}", out)
    assert len(marked) == 1, out
    # the marked one is the lid == 0 section, inside the uniform branch, after its loop
    section = out.index(f"scf.if {branches[1]} {{")
    assert re.search(rf"{branches[1]} = arith.cmpi eq, %thread_id_x", out), out
    assert f"{branches[0]} = arith.cmpf oeq" in out
    assert out.index("scf.for") < section < out.index("opencl.single_work_item")
    assert out.index("memref.store %cst, %arg0[%c256]") > section


def test_tile_to_tile_copy_is_spread_over_the_work_items():
    """A copy between two work-group tiles in a loop's body moves element lid,
    lid + 128, ... on each work-item (a loop of work-item 0 inside a loop holding
    barriers was skipped by PoCL 3.1), after a barrier (the fill's elements change
    owner) and before one (the read of another work-item's element)."""
    out = rewrite("""
  %c4 = arith.constant 4 : index
  %a = memref.subview %t[0] [16] [1] : memref<256xf32> to memref<16xf32, strided<[1]>>
  %b = memref.subview %u[1] [16] [1] : memref<257xf32> to memref<16xf32, strided<[1], offset: 1>>
  scf.for %r = %c0 to %c4 step %c1 {
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
      memref.store %zero, %t[%i] : memref<256xf32>
      scf.reduce
    }
    memref.copy %a, %b : memref<16xf32, strided<[1]>> to memref<16xf32, strided<[1], offset: 1>>
  }
  %s = memref.load %u[%c1] : memref<257xf32>
  memref.store %s, %out[%c0] : memref<?xf32>""")
    assert "memref.copy" not in out
    spread = re.search(r"gpu.barrier(?: {opencl.local_fence})?\n\s*scf.for (%arg\d+) = %thread_id_x to %c16 step %c128 \{\n"
                       r"\s*(%\w+) = memref.load %subview\[\1\].*\n"
                       r"\s*memref.store \2, %subview_\d+\[\1\]", out)
    assert spread, out
    after = out[spread.end():]
    assert after.index("gpu.barrier") < after.index("memref.load %alloc_0[%c1]"), out
    # the store of the element read: work-item 0's section, the only one
    assert out.count("opencl.single_work_item") == 1
    assert after.index("gpu.barrier") < after.index("scf.if")


def test_reduction_to_a_scalar_becomes_a_work_group_tree():
    out = rewrite("""
  %acc = memref.alloc() : memref<f32>
  memref.store %zero, %acc[] : memref<f32>
  scf.for %i = %c0 to %c256 step %c1 {
    %x = memref.load %t[%i] : memref<256xf32>
    %e = math.exp %x : f32
    %a = memref.load %acc[] : memref<f32>
    %s = arith.addf %a, %e : f32
    memref.store %s, %acc[] : memref<f32>
  }
  %sum = memref.load %acc[] : memref<f32>
  memref.store %sum, %out[%c0] : memref<?xf32>""")
    # partials per work-item, then one step in which 16 work-items fold 8 partials each
    # (128 -> 16), then every work-item folds the 16 from the accumulator's initial value
    # in a register (set right before the loop, read only after it): no section of
    # work-item 0 updates the accumulator, only its store of the result
    assert "memref.alloc() : memref<128xf32>" in out
    assert re.search(r"scf.for %\w+ = %\w+ to %c256 step %c128 iter_args", out), out
    assert out.count("math.exp") == 2              # first element, then the rest
    assert out.count("arith.addf") == 1 + 7 + 1    # fold, the step, the last fold
    assert "arith.cmpi ult, %thread_id_x, %c16 " in out
    assert re.search(r"scf.for %\w+ = %c0 to %c16 step %c1 iter_args\(%\w+ = %cst\)", out), out
    assert "memref<f32>" not in out
    # barriers: fill -> partials (another owner reads the tile), after the partials,
    # after the step; none before the result is used
    assert out.count("gpu.barrier") == 1 + 1 + 1, out


def test_an_atomic_orders_the_other_work_items_global_accesses():
    # A lock taken by work-item 0 (an atomic on %lock) guards the reads of %data by all
    # work-items, and work-item 0 releases it only after their writes: barriers on both
    # sides though the buffers differ (the atomic is a synchronization between programs)
    out = rewrite_module("""
func.func @k(%lock: memref<?xi32>, %data: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %one = arith.constant 1 : i32
  %zero = arith.constant 0 : i32
  %two = arith.constant 2.0 : f32
  %taken = memref.atomic_rmw assign %one, %lock[%c0] : (i32, memref<?xi32>) -> i32
  scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
    %x = memref.load %data[%i] : memref<?xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %data[%i] : memref<?xf32>
    scf.reduce
  }
  %released = memref.atomic_rmw assign %zero, %lock[%c0] : (i32, memref<?xi32>) -> i32
  return
}""")
    first, second = (m.start() for m in re.finditer("memref.atomic_rmw", out))
    loop = out.index("memref.load %arg1")
    assert "gpu.barrier" in out[first:loop], out
    assert "gpu.barrier" in out[loop:second], out


def test_a_short_reduction_gets_a_tree_of_its_own_length():
    # 63 elements for 128 work-items: 63 partials, one step from 64 folding 4 (no step
    # in which no work-item has a partner; only the partner past 63 is tested): 64 -> 16,
    # then every work-item folds the 16
    out = rewrite("""
  %acc = memref.alloc() : memref<f32>
  memref.store %zero, %acc[] : memref<f32>
  %c63 = arith.constant 63 : index
  scf.for %i = %c0 to %c63 step %c1 {
    %x = memref.load %t[%i] : memref<256xf32>
    %a = memref.load %acc[] : memref<f32>
    %m = arith.maxnumf %a, %x : f32
    memref.store %m, %acc[] : memref<f32>
  }
  %max = memref.load %acc[] : memref<f32>
  memref.store %max, %out[%c0] : memref<?xf32>""")
    assert "memref.alloc() : memref<63xf32>" in out and "memref<128xf32>" not in out
    assert out.count("arith.maxnumf") == 1 + 3 + 1   # fold, the step, the last fold
    assert "arith.cmpi ult, %thread_id_x, %c16 " in out
    assert out.count("-> (f32) {") == 3, out   # the two folds' loops, the one partner tested
    assert "arith.cmpi ult, %thread_id_x, %c32 " not in out


def test_vector_loops_give_each_work_item_one_vector_per_step():
    # 256 float4 iterations for 128 work-items: work-item `lid` takes iteration lid, then
    # lid + 128 -- neighbouring work-items on neighbouring 16 bytes (no chunk of two).
    # The tile is private: the loops count their 2 rounds from 0, each round a vector
    # of the work-item's array at a constant index once unrolled (no bounds check: 128
    # divides 256)
    out = rewrite("""
  %v = memref.alloc() : memref<1024xf32>
  %four = arith.constant 4 : index
  %c1024 = arith.constant 1024 : index
  %zeros = arith.constant dense<0.0> : vector<4xf32>
  scf.parallel (%i) = (%c0) to (%c1024) step (%four) {
    vector.store %zeros, %v[%i] : memref<1024xf32>, vector<4xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c1024) step (%four) {
    %x = vector.load %v[%i] : memref<1024xf32>, vector<4xf32>
    vector.store %x, %out[%i] : memref<?xf32>, vector<4xf32>
    scf.reduce
  }""")
    assert "memref.alloca() : memref<2x4xf32>" in out and "memref<1024xf32>" not in out, out
    assert re.search(r"scf.for (%arg\d+) = %c0 to %c2 step %c1 \{\n"
                     r"\s*vector.store %cst\w*, %alloca\[\1, %c0\]", out), out
    assert re.search(r"scf.for (%arg\d+) = %c0 to %c2 step %c1 \{\n"
                     r"\s*(%\d+) = arith.muli \1, %c128 : index\n"
                     r"\s*(%\d+) = arith.addi \2, %thread_id_x : index\n"
                     r"\s*(%\d+) = arith.muli \3, %c4 : index\n"
                     r"\s*(%\d+) = vector.load %alloca\[\1, %c0\] .*\n"
                     r"\s*vector.store \5, %arg0\[\4\]", out), out
    assert "scf.if" not in out and "gpu.barrier" not in out, out



def test_rounds_past_the_end_of_the_loop_are_skipped():
    # 300 iterations over a private tile, one per round: 3 rounds of 128 (elements lid,
    # lid + 128, lid + 256), the third only where lid + 256 is below 300; the array
    # index is the round. A loop over a run-time count n (no private array) keeps
    # `for base = lid; base < n; base += 128`, its chunk of one iteration bounded by
    # min(1, n - base).
    out = rewrite_module("""
func.func @k(%out: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c300 = arith.constant 300 : index
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() : memref<300xf32>
  scf.parallel (%i) = (%c0) to (%c300) step (%c1) {
    memref.store %zero, %p[%i] : memref<300xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c300) step (%c1) {
    %x = memref.load %p[%i] : memref<300xf32>
    memref.store %x, %out[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %out[%i] : memref<?xf32>
    scf.reduce
  }
  return
}""")
    static, dynamic = out.split("gpu.barrier")
    assert "memref.alloca() : memref<3xf32>" in static and "memref<300xf32>" not in out, out
    store = re.search(r"scf.for (%arg\d+) = %c0 to %c3 step %c1 \{\n"
                      r"\s*(%\d+) = arith.muli \1, %c128 : index\n"
                      r"\s*(%\d+) = arith.addi \2, %thread_id_x : index\n"
                      r"\s*(%\d+) = arith.cmpi slt, \3, %c300 : index\n"
                      r"\s*scf.if \4 \{\n"
                      r"\s*memref.store %cst, %alloca\[\1\] : memref<3xf32>\n", static)
    assert store, out
    loop = re.search(r"scf.for (%arg\d+) = %c0 to %c3 step %c1 \{\n"
                     r"\s*(%\d+) = arith.muli \1, %c128 : index\n"
                     r"\s*(%\d+) = arith.addi \2, %thread_id_x : index\n"
                     r"\s*(%\d+) = arith.cmpi slt, \3, %c300 : index\n"
                     r"\s*scf.if \4 \{\n"
                     r"\s*(%\d+) = memref.load %alloca\[\1\] : memref<3xf32>\n"
                     r"\s*memref.store \5, %arg0\[\3\]", static[store.end():])
    assert loop, out
    assert static.count("scf.if") == 2 and "%thread_id_x to" not in static, out
    assert re.search(r"scf.for (%arg\d+) = %thread_id_x to %arg1 step %c128 \{\n"
                     r"\s*(%\d+) = arith.subi %arg1, \1 : index\n"
                     r"\s*(%\d+) = arith.minsi \2, %c1 : index\n"
                     r"\s*scf.for (%arg\d+) = %c0 to \3 step %c1 \{\n"
                     r"\s*(%\d+) = arith.addi \1, \4 : index\n"
                     r"\s*memref.store %cst, %arg0\[\5\]", dynamic), out



# One step of a loop: the tile shifted by one element through %u (other work-items'
# elements: barriers between the two loops and before the next step's first one).
SHIFT_STEP = """
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
      %x = memref.load %t[%i] : memref<256xf32>
      %j = arith.addi %i, %c1 : index
      memref.store %x, %u[%j] : memref<257xf32>
      scf.reduce
    }
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
      %x = memref.load %u[%i] : memref<257xf32>
      memref.store %x, %t[%i] : memref<256xf32>
      scf.reduce
    }"""


def test_loop_carried_reuse_of_a_tile_gets_a_barrier():
    # Each iteration reads the tile at other work-items' elements, then overwrites it:
    # the next iteration's writes must wait for this iteration's reads.
    out = rewrite("""
  scf.for %r = %c0 to %c256 step %c1 {""" + SHIFT_STEP + """
  }""")
    loop = out[out.index("scf.for %arg1"):]
    assert loop.count("gpu.barrier") == 2, out


def test_a_loop_holding_barriers_is_entered_after_a_barrier_not_a_branch():
    # Quirk barrier_loop_after_branch: work-item 0's section before such a loop was
    # lost (tutorial 09's accumulator reset); the loop gets a barrier right before it,
    # outside it (once per entry). Without the quirk, no barrier there.
    body = """
  %c4 = arith.constant 4 : index
  scf.for %r = %c0 to %c4 step %c1 {
    memref.store %zero, %out[%r] : memref<?xf32>
    scf.for %k = %c0 to %c4 step %c1 {""" + SHIFT_STEP + """
    }
  }"""
    plain = rewrite(body)
    assert re.search(r"\} \{opencl.single_work_item\}\n\s*scf.for %arg2 = %c0 to %c4 ", plain), plain
    out = rewrite(body, quirks=("barrier_loop_after_branch",))
    assert re.search(r"scf.if %\w+ \{\n\s*memref.store %cst, %arg0\[%arg1\] .*\n"
                     r"\s*\} \{opencl.single_work_item\}\n"
                     r"\s*gpu.barrier(?: {opencl.local_fence})?\n\s*scf.for %arg2 = %c0 to %c4 ", out), out
    assert out[out.index("scf.for %arg2 = %c0 to %c4 "):].count("gpu.barrier") == 2, out


def test_converting_copies_into_tiles_are_shared_by_the_work_items():
    # An fp16 copy into a __local tile is a loop nest the work-items share, one element
    # per round (elements lid and lid + 128 of 256: neighbouring work-items on
    # neighbouring elements), not work-item 0's section; the loops run over the tile's
    # static shape and skip what lies beyond the copy's extent; the reads wait at a
    # barrier.
    src = """
func.func @k(%src: memref<?xf16>, %out: memref<?xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %tile = memref.alloc() : memref<256xf16>
  %view = memref.subview %tile[0] [%n] [1] : memref<256xf16> to memref<?xf16, strided<[1]>>
  %in = memref.subview %src[0] [%n] [1] : memref<?xf16> to memref<?xf16, strided<[1]>>
  memref.copy %in, %view : memref<?xf16, strided<[1]>> to memref<?xf16, strided<[1]>>
  %x = memref.load %tile[%c0] : memref<256xf16>
  memref.store %x, %out[%c0] : memref<?xf16>
  return
}"""
    # no private array: the strided form (count_rounds)
    out = rewrite_module(src)
    assert "memref.copy" not in out, out
    loop = re.search(r"scf.for (%arg\d+) = %thread_id_x to %c256 step %c128 \{\n"
                     r"\s*(%\d+) = arith.cmpi slt, \1, %arg2 : index\n"
                     r"\s*scf.if \2 \{\n\s*(%\d+) = memref.load %subview_0\[\1\] .*\n"
                     r"\s*memref.store \3, %subview\[\1\] .*\n\s*\}\n\s*\}\n"
                     r"\s*gpu.barrier(?: {opencl.local_fence})?\n", out)
    assert loop, out
    assert out.count("scf.for") == 1, out
    # the one section left is the scalar store, after the barrier
    after = out[out.index("gpu.barrier"):]
    assert out.count("scf.if") == 2 and after.count("scf.if") == 1, out
    assert re.search(r"scf.if %\w+ \{\n\s*memref.store %\w+, %arg1\[%c0\]", after), out


def test_copies_between_tiles_outside_loops_are_spread():
    src = """
func.func @k(%out: memref<?xf16>) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<16xf16>
  %b = memref.alloc() : memref<16xf16>
  memref.copy %a, %b : memref<16xf16> to memref<16xf16>
  %x = memref.load %b[%c0] : memref<16xf16>
  memref.store %x, %out[%c0] : memref<?xf16>
  return
}"""
    # outside loop bodies too, the work-items share it: element lid of 16, no section
    # but the store's
    plain = rewrite_module(src)
    assert "memref.copy" not in plain and plain.count("opencl.single_work_item") == 1, plain
    assert re.search(r"scf.for (%\w+) = %thread_id_x to %c16 step %c128 \{\n"
                     r"\s*%\d+ = memref.load %alloc\[\1\]", plain), plain


def test_gather_nests_are_shared_by_owner():
    # loads through indices read from a tile: upstream affine analysis gives up, but
    # every iteration writes only its own element
    out = rewrite("""
  %g = memref.alloc() : memref<16x16xf32>
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %x = memref.load %t[%j] : memref<256xf32>
      %k = arith.fptosi %x : f32 to i32
      %kk = arith.index_cast %k : i32 to index
      %v = memref.load %out[%kk] : memref<?xf32>
      memref.store %v, %g[%i, %j] : memref<16x16xf32>
    }
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %g[%i, %c0] : memref<16x16xf32>
    memref.store %v, %out[%i] : memref<?xf32>
  }""")
    gather, serial = out.split("scf.if", 1)
    # the gather nest: distributed (one of the 256 iterations per round: lid and
    # lid + 128, row-major, j the fastest), not serial; 2 rounds, no private array: a
    # loop in the strided form, each iteration storing its own element [i, j]
    strided = re.search(r"scf.for (%arg\d+) = %thread_id_x to %c256 step %c128 \{\n"
                        r"\s*(%\d+) = arith.remui \1, %c16 : index\n"
                        r"\s*(%\d+) = arith.divui \1, %c16 : index\n"
                        r"\s*(%\d+) = memref.load %alloc\[\2\] .*\n"
                        r"\s*(%\d+) = arith.fptosi \4 : f32 to i32\n"
                        r"\s*(%\d+) = arith.index_cast \5 : i32 to index\n"
                        r"\s*(%\d+) = memref.load %arg0\[\6\] .*\n"
                        r"\s*memref.store \7, %alloc_0\[\3, \2\] .*\n\s*\}\n",
                        gather.split("%alloc_0 =")[1])
    assert strided, out
    # the second loop reads other work-items' elements: work-item 0, after a barrier
    assert gather.rstrip().endswith("gpu.barrier") and "memref.load %alloc_0[%arg1, %c0]" in serial


def test_loop_carried_tiles_stay_private_through_their_copies():
    # a pointer tile advanced every iteration: next = tile + 1; tile = next (a copy)
    out = rewrite("""
  %next = memref.alloc() : memref<256xf32>
  %one = arith.constant 1.0 : f32
  scf.for %r = %c0 to %c256 step %c1 {
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
      %x = memref.load %t[%i] : memref<256xf32>
      %y = arith.addf %x, %one : f32
      memref.store %y, %next[%i] : memref<256xf32>
      scf.reduce
    }
    memref.copy %next, %t : memref<256xf32> to memref<256xf32>
  }""")
    assert out.count("memref.alloca() : memref<2xf32>") == 2 and "memref<256xf32>" not in out
    assert re.search(r"memref.copy %alloca\w*, %alloca\w* : memref<2xf32> to memref<2xf32>", out)
    assert "gpu.barrier" not in out and "scf.if" not in out


def test_work_group_size_follows_the_target():
    gpu = NAMED_TARGETS["gpu-64k"]
    assert work_group_size(gpu, 4) == 128
    assert work_group_size(gpu, 16) == 256          # the target's limit
    from dataclasses import replace
    assert work_group_size(replace(gpu, device_type="cpu"), 4) == 1


# ---------------------------------------------------------------------------------------
# Results: GPU shape against torch and against the CPU shape


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * stride + offs, mask=mask, other=-float("inf"))
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * stride + offs, num / tl.sum(num, axis=0), mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                  BK: tl.constexpr):
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptr + offs_m[:, None] * K + (k * BK + offs_k)[None, :],
                    mask=(offs_m[:, None] < M) & ((k * BK + offs_k)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k * BK + offs_k)[:, None] * N + offs_n[None, :],
                    mask=((k * BK + offs_k)[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def run_add(target, n=10007, block=1024):
    torch.manual_seed(0)
    x, y = torch.rand(n), torch.rand(n)
    out = torch.empty(n)
    compiled = add_kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block, opencl_target=target)
    return out, x + y, compiled


def run_softmax(target, rows=37, cols=700, **options):
    torch.manual_seed(0)
    x = torch.randn(rows, cols)
    out = torch.empty_like(x)
    compiled = softmax_kernel[(rows,)](out, x, x.stride(0), cols, BLOCK=1024, opencl_target=target,
                                       **options)
    return out, torch.softmax(x, dim=1), compiled


def run_matmul(target, m=70, n=45, k=50):
    torch.manual_seed(0)
    a, b = torch.randn(m, k), torch.randn(k, n)
    c = torch.empty(m, n)
    compiled = matmul_kernel[(triton.cdiv(m, 32), triton.cdiv(n, 32))](
        a, b, c, m, n, k, BM=32, BN=32, BK=32, opencl_target=target)
    return c, a @ b, compiled


FAMILIES = {"elementwise": run_add, "reduction": run_softmax, "dot": run_matmul}


@pytest.mark.parametrize("family", FAMILIES)
def test_gpu_shape_matches_torch_and_cpu_shape(family):
    gpu, expected, compiled = FAMILIES[family]("gpu")
    cpu, _expected, cpu_compiled = FAMILIES[family]("cpu")
    assert list(compiled.metadata.local_size) == [128, 1, 1]
    assert "reqd_work_group_size(128, 1, 1)" in compiled.asm["cl"]
    assert list(cpu_compiled.metadata.local_size) == [1, 1, 1]
    assert "get_local_id" not in cpu_compiled.asm["cl"]
    torch.testing.assert_close(gpu, expected, rtol=1e-5, atol=1e-5)
    if family == "elementwise":
        assert torch.equal(gpu, cpu)
    else:   # the same operations in the same order per element
        torch.testing.assert_close(gpu, cpu, rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------------------------------
# Oclgrind: the GPU-shaped kernels are free of data races; a missing barrier is caught

needs_oclgrind = pytest.mark.skipif(
    OCLGRIND is None,
    reason="oclgrind is not installed (`WITH_OCLGRIND=1 bash scripts/setup.sh` or `apt-get install oclgrind`)")


def oclgrind_run(tmp_path, source: str, kernel: str, grid, local, args):
    """Runs `source` under `oclgrind --data-races` with `args` (numpy arrays or
    (kind, value) scalars): -> (buffers after the run, Oclgrind's messages)."""
    spec_args = []
    for position, arg in enumerate(args):
        if isinstance(arg, np.ndarray):
            np.save(tmp_path / f"arg{position}.npy", arg)
            spec_args.append({"buffer": f"arg{position}.npy"})
        else:
            spec_args.append({arg[0]: arg[1]})
    (tmp_path / "kernel.cl").write_text(source)
    spec = {"source": str(tmp_path / "kernel.cl"), "kernel": kernel, "args": spec_args,
            "global": [g * l for g, l in zip(grid, local)], "local": list(local)}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    proc = subprocess.run([OCLGRIND, "--data-races", sys.executable,
                           os.path.join(ROOT, "tests", "cl_runner.py"), str(tmp_path / "spec.json"),
                           str(tmp_path / "out.npz")],
                          capture_output=True, text=True, timeout=600)
    results = dict(np.load(tmp_path / "out.npz")) if proc.returncode == 0 else {}
    return results, proc.stderr


def softmax_case():
    rows, cols = 3, 700
    x = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    # Oclgrind runs OpenCL C 1.2: the reductions as trees, also where the device in use
    # has work-group collective functions
    _out, _expected, compiled = run_softmax("gpu", rows, cols, work_group_collectives=False)
    args = [np.zeros_like(x), x, ("int", cols), ("int", cols)]
    expected = torch.softmax(torch.from_numpy(x), dim=1).numpy()
    return compiled, (rows, 1, 1), args, 0, expected


def add_case():
    n = 3000
    rng = np.random.default_rng(0)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    _out, _expected, compiled = run_add("gpu", n)
    return compiled, (3, 1, 1), [x, y, np.zeros_like(x), ("int", n)], 2, x + y


def matmul_case():
    m, n, k = 40, 36, 50
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    _out, _expected, compiled = run_matmul("gpu", m, n, k)
    args = [a, b, np.zeros((m, n), np.float32), ("int", m), ("int", n), ("int", k)]
    return compiled, (2, 2, 1), args, 2, a @ b


CASES = {"elementwise": add_case, "reduction": softmax_case, "dot": matmul_case}


@needs_oclgrind
@pytest.mark.parametrize("family", CASES)
def test_gpu_shaped_kernels_are_race_free_under_oclgrind(tmp_path, family):
    # In the elementwise kernel each work-item loads, adds and stores only its own
    # elements (memref_stage/owner_copies.py): no barrier, no __local memory.
    assert_race_free(tmp_path, *CASES[family](), barriers=family != "elementwise")


def assert_race_free(tmp_path, compiled, grid, args, result: int, expected,
                     barriers: bool = True) -> None:
    """The kernel has barriers (none when `barriers` is False), runs under Oclgrind
    without a data race and gives `expected` in argument `result`."""
    source = compiled.asm["cl"]
    assert ("barrier(CLK_LOCAL_MEM_FENCE" in source) == barriers
    results, messages = oclgrind_run(tmp_path, source, compiled.metadata.name, grid,
                                     compiled.metadata.local_size, args)
    assert "data race" not in messages.lower(), messages[-3000:]
    assert results, messages[-3000:]
    np.testing.assert_allclose(results[f"arg{result}"].reshape(expected.shape), expected,
                               rtol=1e-5, atol=1e-5)


@needs_oclgrind
def test_oclgrind_catches_a_missing_barrier(tmp_path):
    # softmax: 16 work-items fold the row's partial results in a __local array that
    # every work-item then folds itself; without the barrier between, the reads race
    # with the writes. (Other barriers of the kernel are not the planted one.)
    compiled, grid, args, _result, _expected = softmax_case()
    source = compiled.asm["cl"]
    last_fold = re.search(r"\n( +barrier\(CLK_LOCAL_MEM_FENCE\);\n) +float \w+ = \w+;\n"
                          r" +for \(long \w+ = 0; \w+ < 16; \+\+\w+\) \{\n", source)
    assert last_fold, source
    planted = source[:last_fold.start(1)] + source[last_fold.end(1):]
    _results, messages = oclgrind_run(tmp_path, planted, compiled.metadata.name, grid,
                                      compiled.metadata.local_size, args)
    assert "data race" in messages.lower(), messages[-3000:]


# ---------------------------------------------------------------------------------------
# PoCL 3.1 and work-item 0's tile copies: tests/data/pocl_region_entry.cl

REGION_ENTRY = os.path.join(ROOT, "tests", "data", "pocl_region_entry.cl")
SHARED_COPY = "-DSHARED_COPY"


def region_entry_case():
    """The reproducer's arguments (numpy arrays, (kind, value) scalars) and expected out."""
    rows, cols, steps = 16, 29, 2
    a = (np.arange(rows * cols) % 1000).astype(np.float16)
    expected = np.zeros((steps, 16, 16), np.float32)
    for step in range(steps):
        n = min(max(cols - step * 16, 0), 16)
        expected[step, :, :n] = a.reshape(rows, cols)[:, step * 16:step * 16 + n]
    args = [a, np.full(steps * 256, -1, np.float32), ("int", rows), ("int", cols), ("int", steps)]
    return args, expected.ravel()


def run_region_entry(platform, options: str) -> np.ndarray:
    """The reproducer's one work-group on `platform`'s first device: -> out."""
    import pyopencl as cl
    args, _expected = region_entry_case()
    context = cl.Context(platform.get_devices()[:1])
    queue = cl.CommandQueue(context)
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    a, out = (arg.copy() for arg in args[:2])
    buffers = [cl.Buffer(context, flags, hostbuf=host) for host in (a, out)]
    scalars = [np.int32(value) for _kind, value in args[2:]]
    with open(REGION_ENTRY) as f:
        program = cl.Program(context, f.read()).build(options=options)
    program.region_entry(queue, (128,), (128,), *buffers, *scalars)
    cl.enqueue_copy(queue, out, buffers[1])
    queue.finish()
    return out


def opencl_platforms() -> list:
    import pyopencl as cl
    try:
        return cl.get_platforms()
    except cl.Error:
        return []


@pytest.mark.parametrize("platform", opencl_platforms(), ids=lambda p: p.name.strip())
def test_tile_copies_the_work_items_share_are_right_on_every_device(platform):
    # Shared copies are right everywhere; work-item 0's copy is dropped by PoCL 3.1 only
    # (not checked there).
    _args, expected = region_entry_case()
    np.testing.assert_array_equal(run_region_entry(platform, SHARED_COPY), expected)
    if "PoCL" not in platform.version:
        np.testing.assert_array_equal(run_region_entry(platform, ""), expected)


@needs_oclgrind
@pytest.mark.parametrize("shared", [False, True], ids=["work-item 0", "shared"])
def test_the_tile_copy_reproducer_is_race_free_under_oclgrind(tmp_path, shared):
    args, expected = region_entry_case()
    with open(REGION_ENTRY) as f:
        source = f.read()
    if shared:
        source = "#define SHARED_COPY\n" + source
    results, messages = oclgrind_run(tmp_path, source, "region_entry", (1, 1, 1), (128, 1, 1),
                                     args)
    assert "data race" not in messages.lower(), messages[-3000:]
    assert results, messages[-3000:]
    np.testing.assert_array_equal(results["arg1"], expected)


@pytest.mark.parametrize("m, n, k", [(64, 64, 64), (96, 80, 72)])
def test_tutorial_matmul_with_wrapped_offsets_matches_torch_on_gpu_shape(m, n, k):
    """Tutorial 03 wraps its offsets (`% M`), which versions the kernel on CPU shapes
    (ttir_to_linalg/versioning.py); GPU shapes keep the one gather path, since PoCL
    miscompiled the versioned GPU shape. Both must match torch."""
    from test_tutorials import load_tutorial
    kernel = load_tutorial("03-matrix-multiplication.py").matmul_kernel.fn
    torch.manual_seed(0)
    a = torch.rand((m, k), dtype=torch.float16) - 0.5
    b = torch.rand((k, n), dtype=torch.float16) - 0.5
    for target, versioned in (("gpu-64k", False), ("cpu", True)):
        c = torch.empty((m, n), dtype=torch.float16)
        compiled = kernel[(triton.cdiv(m, 32) * triton.cdiv(n, 32),)](
            a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
            c.stride(1), BLOCK_SIZE_M=32, BLOCK_SIZE_N=32, BLOCK_SIZE_K=32, GROUP_SIZE_M=8,
            ACTIVATION="", opencl_target=target)
        assert ("vload16(0, a_ptr" in compiled.asm["cl"] or
                "vload_half16(0, a_ptr" in compiled.asm["cl"]) == versioned, target
        torch.testing.assert_close(c.float(), a.float() @ b.float(), atol=1e-2, rtol=0)


def test_chunked_distribution_quirk_gives_work_items_consecutive_iterations():
    src = """
func.func @k(%out: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c1024) step (%c1) {
    memref.store %cst, %out[%i] : memref<?xf32>
    scf.reduce
  }
  return
}"""
    # the plain form: one iteration per round, lanes on consecutive elements
    plain = rewrite_module(src)
    assert re.search(r"scf.for %\w+ = %thread_id_x to %c1024 step %c128 \{", plain), plain
    # under the quirk (target.py): chunks of 4 consecutive iterations from lid * 4
    chunked = rewrite_module(src, quirks=("chunked_distribution",))
    assert re.search(r"%(\w+) = arith.muli %thread_id_x, %c4 : index\n\s*"
                     r"scf.for %\w+ = %\1 to %c1024 step %c512 \{", chunked), chunked
