"""tl.device_assert: a failing assert makes the launch raise AssertionError naming the
kernel, the Python line and the message (the kernel reports into a hidden record
parameter that the launcher passes and reads back; launcher/asserts.py)."""
import inspect

import pytest
import torch

import triton
import triton.language as tl


@triton.jit
def nonneg_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.device_assert(x >= 0, "x must be non-negative")
    tl.store(out_ptr + offs, x * 2)


def _assert_line():
    lines, first = inspect.getsourcelines(nonneg_kernel.fn)
    return first + next(i for i, text in enumerate(lines) if "device_assert" in text)


def test_failing_assert_raises_naming_kernel_and_line():
    x = torch.tensor([1.0, -2.0, 3.0, 4.0])
    out = torch.zeros(4)
    with pytest.raises(AssertionError) as info:
        nonneg_kernel[(1,)](x, out, BLOCK=4, debug=True)
    text = str(info.value)
    assert "nonneg_kernel" in text
    assert f"test_device_assert.py:{_assert_line()}" in text
    assert "x must be non-negative" in text
    assert "program id (0, 0, 0)" in text


def test_valid_input_runs():
    x = torch.arange(8, dtype=torch.float32)
    out = torch.zeros(8)
    nonneg_kernel[(2,)](x, out, BLOCK=4, debug=True)
    torch.testing.assert_close(out, x * 2)
    # The record is zeroed per launch: a failure does not leak into the next launch.
    with pytest.raises(AssertionError):
        nonneg_kernel[(2,)](-x - 1, out, BLOCK=4, debug=True)
    nonneg_kernel[(2,)](x, out, BLOCK=4, debug=True)


def test_several_failing_programs_raise_once():
    x = -torch.ones(64)
    out = torch.zeros(64)
    with pytest.raises(AssertionError) as info:
        nonneg_kernel[(16,)](x, out, BLOCK=4, debug=True)
    assert str(info.value).count("x must be non-negative") == 1
    # The kernel kept running: every program stored its result.
    torch.testing.assert_close(out, x * 2)


def test_assert_with_bounds_check():
    x = torch.tensor([1.0, -2.0, 3.0, 4.0])
    out = torch.zeros(4)
    with pytest.raises(AssertionError, match="x must be non-negative"):
        nonneg_kernel[(1,)](x, out, BLOCK=4, debug=True, bounds_check=True)
    nonneg_kernel[(1,)](x.abs(), out, BLOCK=4, debug=True, bounds_check=True)
    torch.testing.assert_close(out, x.abs() * 2)


@triton.jit
def assert_and_overflow_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.device_assert(x >= 0, "x must be non-negative")
    tl.store(out_ptr + offs, x, mask=offs < n + 2)  # two past the end


def test_bounds_error_still_reported_with_asserts():
    from launcher.bounds import OutOfBoundsError
    x = torch.ones(4)
    out = torch.zeros(4)
    with pytest.raises(OutOfBoundsError, match="out_ptr"):
        assert_and_overflow_kernel[(1,)](x, out, 4, BLOCK=8, debug=True, bounds_check=True)


def test_recorded_launch_replays(tmp_path):
    from launcher.replay import list_recordings, recording, replay
    x = torch.tensor([1.0, -2.0, 3.0, 4.0])
    out = torch.zeros(4)
    with recording(str(tmp_path)):
        with pytest.raises(AssertionError):
            nonneg_kernel[(1,)](x, out, BLOCK=4, debug=True)
    [path] = list_recordings(str(tmp_path))
    result = replay(path)
    assert result["ok"], result["problems"]


@triton.jit
def table_assert_kernel(ptrs_ptr, out_ptr, N: tl.constexpr):
    # Hidden parameters of all kinds: flat memory (tt.int_to_ptr), the assert record and,
    # with bounds_check, extents and the bounds record.
    p = tl.load(ptrs_ptr).to(tl.pointer_type(tl.float32))
    x = tl.load(p + tl.arange(0, N))
    tl.device_assert(x >= 0, "table entries must be non-negative")
    tl.store(out_ptr + tl.arange(0, N), x)


@pytest.mark.parametrize("bounds_check", [False, True])
def test_assert_with_pointer_table(bounds_check):
    from launcher import get_device
    if not get_device().zero_copy:
        pytest.skip("pointers from integers need a zero-copy device")
    x = torch.rand(8)
    out = torch.zeros(8)
    table = torch.tensor([x.data_ptr()], dtype=torch.int64)
    table_assert_kernel[(1,)](table, out, N=8, debug=True, bounds_check=bounds_check)
    torch.testing.assert_close(out, x)
    x[3] = -1.0
    with pytest.raises(AssertionError, match="table_assert_kernel: .*table entries must be non-negative"):
        table_assert_kernel[(1,)](table, out, N=8, debug=True, bounds_check=bounds_check)
