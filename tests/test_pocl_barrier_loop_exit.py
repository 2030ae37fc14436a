"""Quirk branch_after_barrier_loop (triton_spirv/target.py): PoCL 3.1's work-group
compiler aborts the process (ParallelRegion.cc:399, "Incoming edges to non-entry
block!") on a GPU-shaped loop holding barriers followed by a branch on the work-item
before the next barrier; under the quirk such a loop gets a barrier after it.

The reduced reproducer of tests/fuzz/findings/pocl_gpu_loop_then_cumsum_parallel_region_assert.py:
fp16 rows read through a carried pointer into a running maximum (the loop holds
barriers), then a cumsum of its negation (a distributed loop, then the scan's
barriers)."""
import os
import subprocess
import sys

import pytest
import torch
import triton
import triton.language as tl

from triton_spirv.stages import linalg_to_memref_text, memref_to_opencl, ttir_to_linalg_text
from triton_spirv.target import TARGET_ENV, resolve_target

QUIRK = "branch_after_barrier_loop"
WORK_ITEMS = 32     # num_warps=1 on the GPU shape


@triton.jit
def max_rows_then_cumsum(x_ptr, y_ptr, n, stride, T: tl.constexpr, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    acc = tl.zeros((BLOCK,), tl.float32)
    p = x_ptr + cols
    for _ in range(T):
        acc = tl.maximum(acc, tl.load(p, mask=mask, other=0.0).to(tl.float32))
        p += stride
    tl.store(y_ptr + cols, tl.cumsum(-acc, axis=0), mask=mask)


def _expected(x, n):
    return (-(x[:, :n].float().max(0).values.clamp(min=0))).cumsum(0)


def _launch(x, n, num_warps=1):
    y = torch.full((x.shape[1],), 7.0)
    compiled = max_rows_then_cumsum[(1,)](x, y, n, x.stride(0), T=x.shape[0], BLOCK=16,
                                          num_warps=num_warps, opencl_target="gpu")
    return y, compiled


def _forms(ttir):
    """The kernel's OpenCL C on the GPU shape without and with the quirk."""
    linalg = ttir_to_linalg_text(ttir)
    plain, quirky = (memref_to_opencl(linalg_to_memref_text(linalg, work_items=WORK_ITEMS, quirks=quirks))
                     for quirks in ((), (QUIRK,)))
    return plain, quirky


REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_CHILD = """
import torch
from test_pocl_barrier_loop_exit import _expected, _launch
torch.manual_seed(1)
x = torch.randn(2, 16).half()
y, _ = _launch(x, 16)
torch.testing.assert_close(y, _expected(x, 16))
print("OK")
"""


@pytest.mark.parametrize("n, rows, num_warps", [(16, 2, 1), (11, 3, 1), (16, 2, 4)])
def test_max_rows_then_cumsum(n, rows, num_warps, monkeypatch):
    monkeypatch.delenv(TARGET_ENV, raising=False)
    torch.manual_seed(0)
    x = torch.randn(rows, 16).half()
    y, _ = _launch(x, n, num_warps)
    torch.testing.assert_close(y[:n], _expected(x, n))
    assert (y[n:] == 7.0).all()


def test_the_quirk_adds_one_barrier_after_the_loop(monkeypatch):
    monkeypatch.delenv(TARGET_ENV, raising=False)
    x = torch.randn(2, 16).half()
    _, compiled = _launch(x, 16)
    plain, quirky = _forms(compiled.asm["ttir"])
    assert quirky.source.count("barrier(") == plain.source.count("barrier(") + 1
    added = compiled.asm["cl"].count("barrier(") - plain.source.count("barrier(")
    assert added == (1 if resolve_target("gpu").has_quirk(QUIRK) else 0)


def test_the_kernel_builds_in_this_process(tmp_path):
    """Built in the process that launches it (no child build,
    TRITON_SPIRV_ISOLATED_BUILD=0), in a process of its own: without the quirk PoCL
    aborts it (SIGABRT), which fails this test instead of the test run."""
    env = dict(os.environ, TRITON_SPIRV_ISOLATED_BUILD="0", TRITON_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([os.path.join(REPO_ROOT, "tests"), REPO_ROOT]))
    env.pop(TARGET_ENV, None)
    child = subprocess.run([sys.executable, "-c", _CHILD], env=env, cwd=str(tmp_path), capture_output=True,
                           text=True, timeout=300)
    assert child.returncode == 0 and "OK" in child.stdout, (child.returncode, child.stderr[-2000:])
