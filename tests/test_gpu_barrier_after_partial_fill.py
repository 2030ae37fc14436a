"""GPU shape: a barrier that a partial tile's fill needs goes to the end of the fill's
branch (`if (is_partial) { fill; barrier }`), so full tiles skip it. The accesses made
before that branch (here the row and column index tiles `rm`, `rn`, written by the
first 32 work-items) are not synchronized by it and need a barrier of their own before
other work-items read them. The barrier analysis once counted them as synchronized:
full tiles read the index tiles racing with their writes (fuzzer seed 44069: a masked
fp16 store, `mask=mm[:, None] & mn[None, :] & (flags > 0)`, wrong on Intel's runtime in
OpenCL C and SPIR-V; PoCL, running work-items in order, hid it). Checked on the active
device against torch, also with the barrier in the branch where a device quirk keeps
it out (Intel's barrier_in_fill_branch, whose fault is a compiler crash, not this
kernel's), and under Oclgrind's race detector, which reports the race whatever the
device's order."""
import os
import shutil
import subprocess
import sys

import pytest
import torch
import triton
import triton.language as tl

from triton_spirv.target import QUIRKS_OFF_ENV, resolve_target

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OCLGRIND = shutil.which("oclgrind")


def store_where_flagged(x, flags, out, M, N, sx0, sx1, sf0, sf1, BM: tl.constexpr,
                        BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mm = rm < M
    mn = rn < N
    f = tl.load(flags + rm[:, None] * sf0 + rn[None, :] * sf1, mask=mm[:, None] & mn[None, :],
                other=1)
    v = tl.load(x + rm[:, None] * sx0 + rn[None, :] * sx1, mask=mm[:, None] & mn[None, :],
                other=-1.0)
    tl.store(out + rm[:, None] * N + rn[None, :], v, mask=mm[:, None] & mn[None, :] & (f > 0))


# One JIT function per form: Triton's in-process kernel cache keys a kernel by its
# specialization and options, not by the target description the form comes from.
FORMS = {False: triton.jit(store_where_flagged), True: triton.jit(store_where_flagged)}


def _barrier_in_branch(monkeypatch) -> None:
    """Compile with the fill's barrier inside its branch, the form of devices without
    the quirk barrier_in_fill_branch (skips where the device form has it already, or
    where a PoCL quirk forbids it because that driver miscompiles it)."""
    if not resolve_target("gpu").has_quirk("barrier_in_fill_branch"):
        pytest.skip("the device's own form is the one to check")
    monkeypatch.setenv(QUIRKS_OFF_ENV, "barrier_in_fill_branch")


def _launch(M=46, N=43, block=32, num_warps=8, seed=0, barrier_in_branch=False):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(M, 2 * N, generator=gen).half()[:, ::2]
    flags = torch.randint(-20, 21, (M, 2 * N), generator=gen, dtype=torch.int64)[:, ::2]
    out = torch.full((M, N), 7.0, dtype=torch.float16)
    grid = (triton.cdiv(M, block), triton.cdiv(N, block))
    FORMS[barrier_in_branch][grid](x, flags, out, M, N, *x.stride(), *flags.stride(), BM=block,
                                   BN=block, num_warps=num_warps, opencl_target="gpu")
    expected = torch.where(flags > 0, x, torch.full_like(out, 7.0))
    return out, expected


@pytest.mark.parametrize("barrier_in_branch", [False, True], ids=["device_form", "barrier_in_branch"])
@pytest.mark.parametrize("size", [(46, 43), (64, 64), (33, 95)])
def test_full_tiles_wait_for_the_index_tiles(size, barrier_in_branch, monkeypatch):
    if barrier_in_branch:
        _barrier_in_branch(monkeypatch)
    for seed in range(3):   # a race shows up in some launches only
        out, expected = _launch(*size, seed=seed, barrier_in_branch=barrier_in_branch)
        torch.testing.assert_close(out, expected, rtol=0, atol=0)


@pytest.mark.skipif(OCLGRIND is None, reason="oclgrind is not installed")
@pytest.mark.parametrize("barrier_in_branch", [False, True], ids=["device_form", "barrier_in_branch"])
def test_no_race_under_oclgrind(tmp_path, barrier_in_branch, monkeypatch):
    from launcher.replay import list_recordings, recording

    if barrier_in_branch:
        _barrier_in_branch(monkeypatch)
    with recording(str(tmp_path)):
        _launch(barrier_in_branch=barrier_in_branch)
    paths = list_recordings(str(tmp_path))
    assert paths, "the launch was not recorded"
    proc = subprocess.run([OCLGRIND, "--data-races", sys.executable,
                           os.path.join(REPO_ROOT, "launcher", "replay.py"), *paths],
                          capture_output=True, text=True, timeout=600, cwd=REPO_ROOT)
    assert "data race" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
