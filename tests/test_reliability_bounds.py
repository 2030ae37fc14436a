"""Bounds-checked mode: `kernel[grid](..., bounds_check=True)` or TRITON_SPIRV_BOUNDS_CHECK=1.

Every global memory access is checked against its buffer; an out-of-bounds one is
skipped and the launch raises OutOfBoundsError naming the kernel, the argument, the
element index, the buffer size and the Python line.
"""

import os
import subprocess
import sys
import textwrap

import pytest
import torch

import triton
import triton.language as tl

from launcher.bounds import OutOfBoundsError
from reliability_kernels import CASES, add_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(HERE)


@triton.jit
def wrong_mask_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x + 1.0, mask=offs < n + 3)  # the mask is wrong: 3 too many


@triton.jit
def wrong_load_mask_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs <= n, other=0.0)  # reads one past the end
    tl.store(out_ptr + offs, x, mask=offs < n)


@triton.jit
def scatter_kernel(x_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + idx, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def scalar_store_kernel(out_ptr, where):
    tl.store(out_ptr + where, 7.0)


def test_wrong_store_mask_raises_and_leaves_neighbours_untouched():
    base = torch.full((200,), -5.0)
    out = base[50:150]  # the kernel's buffer is this slice; its neighbours are base[:50], base[150:]
    x = torch.rand(100)
    with pytest.raises(OutOfBoundsError) as info:
        wrong_mask_kernel[(4,)](x, out, 100, BLOCK=32, bounds_check=True)
    err = info.value
    message = str(err)
    assert err.kernel == "wrong_mask_kernel" and err.argument == "out_ptr"
    assert err.size == 100 and err.access == "store"
    assert 100 <= err.index < 103, err.index
    assert os.path.basename(err.path) == "test_reliability_bounds.py" and err.line > 0
    for part in ("wrong_mask_kernel", "'out_ptr'", f"index {err.index}", "holds 100 elements",
                 f"test_reliability_bounds.py:{err.line}", "mask=offs < n + 3"):
        assert part in message, (part, message)
    # Nothing outside the slice was written; the last block's store was skipped entirely
    # (an access that would leave the buffer does nothing), the others happened.
    assert torch.equal(base[:50], torch.full((50,), -5.0))
    assert torch.equal(base[150:], torch.full((50,), -5.0))
    torch.testing.assert_close(out[:96], x[:96] + 1.0)


def test_wrong_load_mask_raises():
    x = torch.rand(63)
    out = torch.zeros(63)
    with pytest.raises(OutOfBoundsError, match=r"load of argument 'x_ptr'.*index 63.*holds 63 elements"):
        wrong_load_mask_kernel[(2,)](x, out, 63, BLOCK=32, bounds_check=True)


def test_scatter_index_out_of_range_raises_and_skips_only_that_element():
    base = torch.zeros(40)
    out = base[10:30]
    x = torch.arange(1.0, 17.0)
    idx = torch.arange(16, dtype=torch.int32)
    idx[5] = 20  # one past the end of out
    idx[9] = -1  # just before the start
    with pytest.raises(OutOfBoundsError) as info:
        scatter_kernel[(1,)](x, idx, out, 16, BLOCK=16, bounds_check=True)
    assert info.value.argument == "out_ptr" and info.value.index in (20, -1) and info.value.count == 2
    assert torch.equal(base[:10], torch.zeros(10)) and torch.equal(base[30:], torch.zeros(10))
    keep = torch.ones(16, dtype=torch.bool)
    keep[5] = keep[9] = False
    assert torch.equal(out[idx[keep].long()], x[keep])


def test_scalar_pointer_store_out_of_range():
    out = torch.zeros(8)
    scalar_store_kernel[(1,)](out, 7, bounds_check=True)
    assert out[7] == 7.0
    with pytest.raises(OutOfBoundsError, match=r"index 8, but the buffer holds 8 elements"):
        scalar_store_kernel[(1,)](out, 8, bounds_check=True)


@triton.jit
def zeros_past_the_end_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs + n, tl.zeros((BLOCK,), tl.float32))  # the user's line


def _line_of(marker: str) -> int:
    with open(__file__) as f:
        return next(number for number, line in enumerate(f, 1) if marker in line)


def test_reports_and_comments_name_the_users_line_not_triton_language():
    """The stored value comes from `tl.zeros` (a call into triton/language/standard.py);
    the error and the `.cl` comment still name the kernel's own line."""
    user_line = "test_reliability_bounds.py:%d" % _line_of("# the user's line")
    x = torch.ones(16)
    with pytest.raises(OutOfBoundsError) as info:
        zeros_past_the_end_kernel[(1,)](x, 8, BLOCK=16, bounds_check=True)
    message = str(info.value)
    assert f"at {user_line}: tl.store(x_ptr + offs + n, tl.zeros((BLOCK,), tl.float32))" in message
    assert "standard.py" not in message
    assert torch.equal(x, torch.cat([torch.ones(8), torch.zeros(8)]))  # in-bounds half stored

    kernel = zeros_past_the_end_kernel[(1,)](x, 0, BLOCK=16)
    comments = [line.strip() for line in kernel.asm["cl"].splitlines() if line.strip().startswith("//")]
    assert any(user_line in c for c in comments), "\n".join(comments)
    assert not any("standard.py" in c or "core.py" in c for c in comments), "\n".join(comments)


@triton.jit
def shifted_exp_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs + n).to(tl.float32)
    tl.store(y_ptr + offs + n, tl.exp(x) + 1.0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("shift", [-24, 8, 40])
def test_vectorized_elementwise_accesses_keep_their_in_bounds_lanes(dtype, shift):
    """Elementwise loops over f32 tiles load and store whole vectors (vload16/vstore16);
    a checked vector access that straddles the buffer's end (or start) still reads and
    writes its in-bounds lanes, as the scalar accesses it replaced did."""
    x = torch.rand(64, dtype=dtype)
    y = torch.full((64,), -1.0, dtype=dtype)
    with pytest.raises(OutOfBoundsError):
        shifted_exp_kernel[(1,)](x, y, shift, BLOCK=64, bounds_check=True)
    inside = slice(max(shift, 0), min(64 + shift, 64))
    expected = torch.full((64,), -1.0, dtype=dtype)
    expected[inside] = (torch.exp(x[inside].float()) + 1.0).to(dtype)
    torch.testing.assert_close(y, expected)


@pytest.mark.parametrize("name", ["add_2d_masks_strides", "transpose_strided_store", "gather_scatter",
                                  "sum_max_argmax", "matmul_f32_loop_pointers", "cast_f16_to_bf16",
                                  "early_return", "nested_loops", "where_pointers"])
def test_correct_kernels_pass_bounds_checks(name, monkeypatch):
    """No false alarms: the kernels of every family run checked, with correct results."""
    run = {case: run for _family, case, run in CASES}[name]
    monkeypatch.setattr(triton.JITFunction, "run", _with_bounds_check(triton.JITFunction.run))
    kernel = run()
    assert "bounds_err" in kernel.asm["cl"]


def _with_bounds_check(run):
    def checked(self, *args, **kwargs):
        kwargs["bounds_check"] = True
        return run(self, *args, **kwargs)

    return checked


def test_default_code_is_unchanged_and_cached_separately():
    x, y = torch.rand(100), torch.rand(100)
    out = torch.empty_like(x)
    plain = add_kernel[(1,)](x, y, out, 100, BLOCK=128)
    checked = add_kernel[(1,)](x, y, out, 100, BLOCK=128, bounds_check=True)
    assert plain.hash != checked.hash
    assert "bounds" not in plain.asm["cl"] and "bounds_err" in checked.asm["cl"]
    assert "bounds" not in plain.metadata._asdict() or plain.metadata.bounds is None
    # The emitter with the option off prints exactly what the compiler stored.
    from triton_spirv.stages import memref_to_opencl
    assert memref_to_opencl(plain.asm["memref"]).source == plain.asm["cl"]
    # A checked kernel's memref stage moves no tile in vector rows (its async copy clamps
    # the count it moves, memref_stage/copy_lowering.py), the plain one does.
    assert "opencl.async_work_group_copy" not in plain.asm["memref"]
    assert "opencl.async_work_group_copy" in checked.asm["memref"]
    assert memref_to_opencl(checked.asm["memref"], bounds_check=True).source == checked.asm["cl"]


def test_environment_variable_turns_it_on(tmp_path):
    script = textwrap.dedent(f"""
        import sys, torch, triton
        sys.path.insert(0, {HERE!r})
        from test_reliability_bounds import wrong_mask_kernel
        from launcher.bounds import OutOfBoundsError
        out = torch.zeros(10)
        try:
            wrong_mask_kernel[(1,)](torch.rand(10), out, 10, BLOCK=16)
        except OutOfBoundsError as exc:
            print("RAISED", exc.argument, exc.index, exc.size)
    """)
    env = dict(os.environ, TRITON_SPIRV_BOUNDS_CHECK="1", TRITON_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=REPO_ROOT,
                          timeout=300)
    assert "RAISED out_ptr" in proc.stdout and "10" in proc.stdout, proc.stdout + proc.stderr
