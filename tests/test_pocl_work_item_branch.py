"""Quirk uniform_branches_in_work_item_branch (triton_spirv/target.py): after a loop
whose trip count is the same for every work-item (PoCL gives such loops implicit
barriers), PoCL 3.1 runs the branches on uniform conditions inside a branch on the
work-item on every work-item. Found by the differential tester (seed 72002, GPU shape):
a row's maximum, then Triton's float `atomic_max` (two masked integer atomics, each a
compare-exchange loop under its mask in work-item 0's section) hung; with counting
atomics the same form counts once per work-item. -cl-opt-disable, Intel's runtime and
Oclgrind run the same OpenCL C right.

Workaround where the quirk applies: a single-work-item section's conditional writes are
sections of their own, guarded by `lid == 0 & condition`
(memref_stage/single_work_item.py)."""
import os
import re
import subprocess
import sys

import numpy as np
import pyopencl as cl
import pytest
import torch
import triton
import triton.language as tl

from launcher.device import device_runtime
from triton_spirv.stages import linalg_to_memref_text, memref_to_opencl, ttir_to_linalg_text
from triton_spirv.target import QUIRKS, TARGET_ENV, resolve_target

QUIRK = "uniform_branches_in_work_item_branch"
WORK_ITEMS = 64     # num_warps=2 on the GPU shape

# The reduced kernel: three groups of 64 work-items; each but the second sums its 8
# elements (a partial step through __local, then a loop every work-item runs alike) and
# work-item 0 counts the sum's sign. APART: the quirk's form.
REDUCED = """
__attribute__((reqd_work_group_size(64, 1, 1)))
__kernel void k(__global const float* x, __global int* counts) {
  __local float tile[8];
  __local float partial[7];
  long lid = get_local_id(0);
  event_t copied = async_work_group_copy(tile, x + 8 * get_group_id(0), 8, 0);
  wait_group_events(1, &copied);
  bool go_on = get_group_id(0) != 1;
  float first = 0.0f;
  if (go_on) {
    if (lid < 7) partial[lid] = tile[1 + lid];
    first = tile[0];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (go_on) {
    float total = first;
    for (long i = 0; i < 7; ++i) total += partial[i];
    bool positive = total > 0.0f;
    bool negative = total <= 0.0f;
#ifdef APART
    if (lid == 0 && positive) atomic_inc(counts);
    if (lid == 0 && negative) atomic_inc(counts + 1);
#else
    if (lid == 0) {
      if (positive) atomic_inc(counts);
      if (negative) atomic_inc(counts + 1);
    }
#endif
  }
}
"""


def _platforms():
    try:
        platforms = [p for p in cl.get_platforms() if p.get_devices()]
    except cl.Error:   # no OpenCL driver installed
        platforms = []
    return [pytest.param(p, id=device_runtime(p, p.get_devices()[0])[0]) for p in platforms]


def _reduced_counts(platform, options: str) -> list:
    context = cl.Context([platform.get_devices()[0]])
    queue = cl.CommandQueue(context)
    program = cl.Program(context, REDUCED).build(options=options)
    x = np.repeat(np.array([1.0, 5.0, -1.0], np.float32), 8)   # group 1 returns early
    counts = np.zeros(2, np.int32)
    flags = cl.mem_flags
    buffers = [cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=x),
               cl.Buffer(context, flags.READ_WRITE | flags.COPY_HOST_PTR, hostbuf=counts)]
    program.k(queue, (192,), (64,), *buffers)
    cl.enqueue_copy(queue, counts, buffers[1])
    return counts.tolist()


@pytest.mark.parametrize("platform", _platforms())
def test_the_quirk_form_is_right_everywhere(platform):
    assert _reduced_counts(platform, "-DAPART") == [1, 1]


@pytest.mark.parametrize("platform", _platforms())
def test_the_plain_form_is_wrong_only_where_the_quirk_applies(platform):
    """A release that computes it right gets `fixed_in` in the quirk's record."""
    counts = _reduced_counts(platform, "")
    if QUIRKS[QUIRK].applies(*device_runtime(platform, platform.get_devices()[0])):
        assert counts == [64, 64]
    else:
        assert counts == [1, 1]


@triton.jit
def signs_of_row_maxima(x_ptr, counts_ptr, maxima_ptr, n, BLOCK: tl.constexpr,
                        FLOAT_MAX: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=float("-inf"))
    if row % 3 == 1:
        return
    largest = tl.max(x)
    positive = largest > 0
    negative = largest <= 0
    tl.atomic_add(counts_ptr, 1, mask=positive)
    tl.atomic_add(counts_ptr + 1, 1, mask=negative)
    if FLOAT_MAX:   # Triton's float max: a masked integer max and a masked integer umin
        tl.atomic_max(maxima_ptr, largest)


def _launch(x, float_max, num_warps):
    counts = torch.zeros(2, dtype=torch.int32)
    maxima = torch.full((1,), float("-inf"))
    compiled = signs_of_row_maxima[(x.shape[0],)](
        x, counts, maxima, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]),
        FLOAT_MAX=float_max, num_warps=num_warps, opencl_target="gpu")
    return counts, maxima, compiled


def _expected(x):
    kept = x[[row for row in range(x.shape[0]) if row % 3 != 1]].max(1).values
    return [int((kept > 0).sum()), int((kept <= 0).sum())], kept.max()


@pytest.mark.parametrize("rows, n, num_warps", [(6, 8, 2), (7, 13, 4), (5, 100, 8)])
def test_counts_of_row_signs(rows, n, num_warps, monkeypatch):
    monkeypatch.delenv(TARGET_ENV, raising=False)
    torch.manual_seed(rows)
    x = torch.randn(rows, n) - 0.5
    counts, _, _ = _launch(x, False, num_warps)
    assert counts.tolist() == _expected(x)[0]


REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_CHILD = """
import torch
from test_pocl_work_item_branch import _expected, _launch
torch.manual_seed(3)
x = torch.randn(5, 16)
counts, maxima, _ = _launch(x, True, 8)
expected_counts, expected_max = _expected(x)
assert counts.tolist() == expected_counts, (counts, expected_counts)
assert maxima.item() == expected_max.item(), (maxima, expected_max)
print("OK")
"""


def test_float_atomic_max_after_a_reduction(tmp_path):
    """The seed's form: float atomic_max's two compare-exchange loops after a row's
    maximum. In a process of its own: without the quirk PoCL spins in them forever."""
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([os.path.join(REPO_ROOT, "tests"), REPO_ROOT]))
    env.pop(TARGET_ENV, None)
    try:
        child = subprocess.run([sys.executable, "-c", _CHILD], env=env, cwd=str(tmp_path),
                               capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        pytest.fail("the kernel did not finish in 300 s")
    assert child.returncode == 0 and "OK" in child.stdout, (child.returncode, child.stderr[-2000:])


def _nested_sections(source: str) -> int:
    """Branches on `lid_x == 0` whose first statement is another branch."""
    names = re.findall(r"bool (\w+) = lid_x == 0;", source)
    return sum(len(re.findall(rf"if \({name}\) {{\s*(?://[^\n]*\s*)*if \(", source))
               for name in names)


def test_the_quirk_takes_the_branches_apart(monkeypatch):
    monkeypatch.delenv(TARGET_ENV, raising=False)
    x = torch.randn(4, 8)
    _, _, compiled = _launch(x, True, WORK_ITEMS // 32)
    linalg = ttir_to_linalg_text(compiled.asm["ttir"])
    plain, quirky = (memref_to_opencl(linalg_to_memref_text(linalg, work_items=WORK_ITEMS,
                                                            quirks=quirks)).source
                     for quirks in ((), (QUIRK,)))
    assert _nested_sections(plain) >= 1, plain
    assert _nested_sections(quirky) == 0, quirky
    assert _nested_sections(compiled.asm["cl"]) == (
        0 if resolve_target("gpu").has_quirk(QUIRK) else _nested_sections(plain))
