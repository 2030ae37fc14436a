"""PoCL 3.1, GPU shape: a store lost after an early return that follows a work-group
reduction (tests/fuzz/findings/pocl_gpu_early_return_after_max_store_lost.py, reduced).

The masked fp16 store is made by work-item 0 alone (`if (lid == 0)`), reading the
int64 offsets that all work-items wrote to a `__local long` tile just before a barrier;
the max over rows follows behind another. With those barriers inside the early
return's else branch (the plain form, doubled or not), PoCL's default work-group method
(`loopvec`) reads the tile as zeros and the store never lands; Intel's runtime and
Oclgrind (--data-races --uninitialized) compute the same OpenCL C right, and so does
PoCL with POCL_WORK_GROUP_METHOD=loops or cbs (a process-wide setting). The quirk
barrier_in_uniform_branch splits such a branch at its barriers
(memref_stage/branch_barrier_splitting.py): every barrier at the kernel's top level,
the stretches between them guarded by the branch's condition. Asserted on every
device: where the quirk applies, the form without barriers in branches; elsewhere the
plain form. Each case runs in a child process, as a miscompiled kernel once corrupted
PoCL's heap (pocl_gpu_early_return_heap_corruption.py): a crash fails the case, not
the whole run."""
import os
import subprocess
import sys

import pytest
import torch
import triton
import triton.language as tl

from triton_spirv.target import TARGET_ENV, resolve_target

QUIRK = "barrier_in_uniform_branch"


@triton.jit
def store_after_max_return(x, o, o2, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mm = rm < M
    mn = rn < N
    v1 = tl.load(x + rm[:, None] * N + rn[None, :], mask=mm[:, None] & mn[None, :], other=1)
    v2 = v1.to(tl.float16)
    if tl.max(tl.max(v1, axis=1)) > 1000:
        return
    tl.store(o + rm[:, None] * N + rn[None, :], v2, mask=mm[:, None] & mn[None, :] & (v1 > 0))
    tl.store(o2 + pid_m * N + rn, tl.max(v2, axis=0), mask=mn)


def _has_the_quirk():
    return resolve_target("gpu").has_quirk(QUIRK)


def _run_case(m, n):
    torch.manual_seed(0)
    x = torch.randint(-20, 20, (m, n), dtype=torch.int16)
    o = torch.full((m, n), 7, dtype=torch.float16)
    o2 = torch.full((triton.cdiv(m, 2), n), 7, dtype=torch.float16)
    store_after_max_return[(triton.cdiv(m, 2),)](x, o, o2, m, n, BM=2, BN=8, num_warps=1,
                                                 opencl_target="gpu")
    expected = torch.where(x > 0, x.half(), torch.full_like(o, 7))
    torch.testing.assert_close(o, expected)
    rows = torch.nn.functional.pad(x, (0, 0, 0, 2 * o2.shape[0] - m), value=1).half()
    torch.testing.assert_close(o2, rows.view(-1, 2, n).max(1).values)


def _run_case_in_a_child(m, n) -> subprocess.CompletedProcess:
    """The case in a child process, on the device in use, whose crash must not end the
    test run."""
    here = os.path.dirname(os.path.abspath(__file__))
    code = (f"import sys; sys.path.insert(0, {here!r}); "
            f"import test_pocl_early_return_store as t; t._run_case({m}, {n})")
    env = {k: v for k, v in os.environ.items() if k != TARGET_ENV}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.parametrize("m, n", [(5, 7), (5, 8), (4, 8), (3, 6)])
def test_store_after_max_return(m, n):
    child = _run_case_in_a_child(m, n)
    assert child.returncode == 0, child.stderr[-3000:]


@triton.jit
def flags_after_pid_return(x, o, o2, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """The fuzzer's seed 42611, reduced: work-item 0 alone stores a tile of flags after
    the barrier the split puts into the early return's branch; whether it is work-item
    0 (an i1) crosses that barrier as the split stretch's result."""
    pid_m = tl.program_id(0)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    v = tl.load(x + rm[:, None] * N + rn[None, :], mask=mask, other=0)
    w = v % ((v & 7) + 1)
    if pid_m == 2:
        return
    tl.store(o + rm[:, None] * N + rn[None, :], tl.full((BM, BN), 1, tl.int1).to(tl.int8),
             mask=mask & (w > 0))
    tl.store(o2 + rm[:, None] * N + rn[None, :], w, mask=mask)


@pytest.mark.parametrize("m, n", [(1, 12), (70, 20)])
def test_flags_after_pid_return(m, n, monkeypatch):
    """PoCL loses an i1 kept across a barrier in a variable both branches set: the split
    carries it as i8 (branch_barrier_splitting.py)."""
    monkeypatch.delenv(TARGET_ENV, raising=False)
    torch.manual_seed(0)
    x = torch.randint(-20, 20, (m, n), dtype=torch.int8)
    o = torch.full((m, n), 7, dtype=torch.int8)
    o2 = torch.full((m, n), 7, dtype=torch.int8)
    flags_after_pid_return[(triton.cdiv(m, 32),)](x, o, o2, m, n, BM=32, BN=32, num_warps=2,
                                                  opencl_target="gpu")
    w = torch.fmod(x.int(), (x.int() & 7) + 1)   # Triton's % truncates, as fmod does
    kept = (torch.arange(m) // 32 != 2)[:, None]
    expected = torch.where(kept & (w > 0), torch.ones_like(o), torch.full_like(o, 7))
    torch.testing.assert_close(o, expected)
    torch.testing.assert_close(o2, torch.where(kept, w.to(torch.int8), torch.full_like(o, 7)))


def test_the_quirk_form_keeps_barriers_out_of_branches(monkeypatch):
    monkeypatch.delenv(TARGET_ENV, raising=False)
    from tests.test_device_quirks import barriers_in_branches
    x = torch.zeros(4, 8, dtype=torch.int16)
    o = torch.zeros(4, 8, dtype=torch.float16)
    compiled = store_after_max_return[(2,)](x, o, o, 4, 8, BM=2, BN=8, num_warps=1,
                                            opencl_target="gpu")
    assert (barriers_in_branches(compiled.asm["cl"]) == 0) == _has_the_quirk()
