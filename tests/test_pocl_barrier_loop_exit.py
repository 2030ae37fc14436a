"""Quirk branch_after_barrier_loop (triton_spirv/target.py): PoCL 3.1's work-group
compiler aborts the process (ParallelRegion.cc:399, "Incoming edges to non-entry
block!") on a GPU-shaped loop holding barriers followed by a branch on the work-item
before the next barrier; under the quirk such a loop gets a barrier after it.

The reduced reproducer of tests/fuzz/findings/pocl_gpu_loop_then_cumsum_parallel_region_assert.py:
fp16 rows read through a carried pointer into a running maximum (the loop holds
barriers), then a cumsum of its negation (a distributed loop, then the scan's
barriers)."""
import pytest
import torch
import triton
import triton.language as tl

import launcher
from launcher.device import device_runtime
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


def _on_pocl():
    device = launcher.get_device()
    return device_runtime(device.platform, device.device)[0] == "pocl"


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
