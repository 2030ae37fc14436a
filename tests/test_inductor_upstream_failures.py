"""Reduced cases from PyTorch's own Inductor tests for the CPU-Triton path.

docs/pytorch-inductor-tests.md has the run these come from (test_triton_cpu_backend.py
against test_torchinductor.py's C++-backend `CpuTests`, through
scripts/pytorch_inductor_tests.py). Each case is written here from scratch, small, and
compares torch.compile on this backend with eager.

- Upstream expects these to fail on triton-cpu (`xfail_if_triton_cpu`) or skips them
  there (`skip_if_triton_cpu`); they pass here, so they guard what this backend does
  that triton-cpu did not (libdevice calls, pow with huge results, angle of special
  values, Inductor's random numbers, log2 of a dynamic size).
- Failures of this backend found by the run go below as `xfail(strict=True)` with their
  cause, so they flip when fixed. The sampled run found none (the failures it had were
  the tests' own, shared with the C++ backend, or Inductor and Triton 3.9 disagreeing
  about block pointers: the document's table).
"""
from __future__ import annotations

import math

import torch

from test_torch_compile import triton_on_cpu

aten = torch.ops.aten


def _compiled_and_eager(fn, *args):
    expected = fn(*args)
    with triton_on_cpu():
        got = torch.compile(fn, fullgraph=True)(*args)
    return got, expected


# ---------------------------------------------------------------------------------------
# Upstream triton-cpu failures that pass here


def test_angle_of_real_and_integer_tensors_with_nan():
    """torch.angle: pi for negatives, 0 otherwise, NaN stays NaN (upstream test_angle)."""
    real = torch.tensor([-1.0, 0.0, 1.0, float("nan"), -0.0, -7.5])
    integer = torch.tensor([-1, 0, 1, -3], dtype=torch.int64)
    got, expected = _compiled_and_eager(lambda a, b: (torch.angle(a) + 1, torch.angle(b) * 2),
                                        real, integer)
    torch.testing.assert_close(got, expected, equal_nan=True)


def test_pow_with_results_beyond_float_range():
    """pow(1000, x) and pow(x, 1000) on randn: infinities and huge finite values where
    eager has them (upstream test_pow2, tolerances as there)."""
    x = torch.randn(16, 16, generator=torch.Generator().manual_seed(0))
    got, expected = _compiled_and_eager(lambda t: (aten.pow(1000, t), aten.pow(t, 1000)), x)
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=3e-5, equal_nan=True)


def test_softmax_backward_data_uses_fma():
    """_softmax_backward_data: Inductor writes libdevice.fma (upstream
    test_softmax_backward_data)."""
    g = torch.Generator().manual_seed(1)
    grad, out = torch.randn(10, 10, generator=g), torch.randn(10, 10, generator=g).softmax(1)
    got, expected = _compiled_and_eager(
        lambda a, b: aten._softmax_backward_data(a, b, dim=1, input_dtype=torch.float32),
        grad, out)
    torch.testing.assert_close(got, expected)


def test_bernoulli_mean_is_p():
    """aten.bernoulli with Inductor's own random numbers (upstream test_bernoulli2, skipped
    on triton-cpu): the mean of 40,000 draws is p within 6% (about 8 standard deviations)."""
    p = 0.3
    torch.manual_seed(0)
    with triton_on_cpu():
        mean = torch.compile(lambda a: torch.ops.aten.bernoulli(a).mean())(torch.full((200, 200), p))
    assert abs(float(mean) - p) < p * 0.06


def test_power_of_two_above_log2_of_a_dynamic_size():
    """2 ** (floor(log2(n)) + 1) of a dynamic size n (upstream
    test_pow_by_natural_log2_dynamic_shapes, skipped on triton-cpu)."""
    with triton_on_cpu():
        fn = torch.compile(lambda x: x + 2 ** (math.floor(math.log2(x.shape[0]) + 1)), dynamic=True)
        for n in (5, 9, 17):
            x = torch.randn(n)
            torch.testing.assert_close(fn(x), x + 2 ** (math.floor(math.log2(n)) + 1))
