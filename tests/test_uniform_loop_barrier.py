"""Quirk uniform_loop_after_branch (PoCL): a loop without barriers whose bounds are the
same for every work-item, entered after a branch on the work-item with no barrier
between, gets a barrier before it (memref_stage/work_group_barriers.py,
`barrier_before_uniform_loops`). The driver's bug itself: tests/test_pocl_f32_attention_reduced.py;
end to end: tests/test_tutorials.py (attention float32, TRITON_SPIRV_TARGET=gpu, PoCL).
"""
import pytest
from mlir import ir

from triton_spirv.memref_stage.work_group_barriers import barrier_before_uniform_loops
from triton_spirv.stages import new_context

pytestmark = pytest.mark.device_free

KERNEL = """
func.func @k(%out: memref<?xf32>, %flag: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %lid = gpu.thread_id x
  gpu.barrier
  scf.for %j = %lid to %c16 step %c128 {
    memref.store %one, %out[%j] : memref<?xf32>
    scf.for %k = %c0 to %c8 step %c1 {
      memref.store %one, %out[%k] : memref<?xf32>
    }
  }
  scf.for %j = %c0 to %c8 step %c1 {
    memref.store %two, %out[%j] : memref<?xf32>
  }
  gpu.barrier
  scf.if %flag {
    memref.store %one, %out[%c0] : memref<?xf32>
  }
  scf.for %j = %c0 to %c16 step %c1 {
    memref.store %two, %out[%j] : memref<?xf32>
  }
  %first = arith.cmpi ult, %lid, %c8 : index
  scf.if %first {
    memref.store %one, %out[%lid] : memref<?xf32>
  }
  scf.for %j = %c0 to %c128 step %c1 {
    memref.store %two, %out[%j] : memref<?xf32>
  }
  return
}"""


def _rewritten(kernel: str = KERNEL) -> str:
    with new_context():
        module = ir.Module.parse(kernel)
        barrier_before_uniform_loops(module, None, {})
        module.operation.verify()
        return str(module)


def _line_before(out: str, loop: str) -> str:
    """The line right before the first line holding `loop`."""
    lines = [line.strip() for line in out.splitlines()]
    return lines[next(i for i, line in enumerate(lines) if line.startswith(loop)) - 1]


def test_a_uniform_loop_after_a_distributed_loop_gets_a_barrier():
    out = _rewritten()
    assert _line_before(out, "scf.for %arg2 = %c0 to %c8 ") == "gpu.barrier {opencl.local_fence}", out


def test_a_uniform_loop_after_a_guard_on_the_work_item_gets_a_barrier():
    out = _rewritten()
    assert _line_before(out, "scf.for %arg2 = %c0 to %c128 ") == "gpu.barrier {opencl.local_fence}", out


def test_only_those_loops_get_one():
    # not after a uniform branch (%flag), not inside the distributed loop (not every
    # work-item reaches it): 2 barriers of the kernel + 2 new ones
    out = _rewritten()
    assert out.count("gpu.barrier") == 4, out
    assert _line_before(out, "scf.for %arg2 = %c0 to %c16 ") == "}", out


def test_kernels_without_barriers_get_none():
    # PoCL adds implicit loop barriers only to kernels holding barriers
    out = _rewritten(KERNEL.replace("  gpu.barrier\n", ""))
    assert "gpu.barrier" not in out, out
