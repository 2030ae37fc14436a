"""tanh (libdevice.tanh -> math.tanh -> the emitter's float helper): within 1 ulp of
the correctly rounded value, exactly +-1 in the tails, and gradients of tanh-based
activations (GEGLU as LLM-training kernels write it, GELU-tanh) right at large inputs,
compared with fp64."""
import numpy as np
import pytest
import torch

import triton
import triton.language as tl
from triton.language.extra import libdevice

BLOCK = 1024


@triton.jit
def tanh_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, libdevice.tanh(tl.load(x_ptr + offs, mask=mask)), mask=mask)


def _ordered(bits):
    """float32 bit patterns as integers whose difference counts ulps across zero."""
    bits = bits.astype(np.int64)
    return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)


def test_tanh_within_one_ulp_and_exact_in_the_tails():
    # Every 97th float from 2^-20 to 12, both signs, and the specials.
    start, stop = np.float32(2.0 ** -20).view(np.int32), np.float32(12.0).view(np.int32)
    x = np.arange(start, stop, 97, dtype=np.int32).view(np.float32)
    x = np.concatenate([x, -x, np.float32([0.0, -0.0, 1e-40, 9.0, 9.02, 20.0, 1e30, np.inf, -np.inf])])
    x = torch.from_numpy(x)
    out = torch.empty_like(x)
    tanh_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, out, x.numel(), BLOCK=BLOCK)
    want = np.tanh(x.numpy().astype(np.float64)).astype(np.float32)   # correctly rounded
    got = out.numpy()
    ulps = np.abs(_ordered(got.view(np.int32)) - _ordered(want.view(np.int32)))
    assert ulps.max() <= 1, f"{ulps.max()} ulp at x = {x[int(ulps.argmax())].item()!r}"
    assert np.array_equal(got == 1.0, want == 1.0) and np.array_equal(got == -1.0, want == -1.0)
    assert np.signbit(got[x.numpy() == 0]).tolist() == np.signbit(x.numpy()[x.numpy() == 0]).tolist()
    nan = torch.tensor([float("nan")] * 4)
    tanh_kernel[(1,)](nan, out, 4, BLOCK=BLOCK)
    assert torch.isnan(out[:4]).all()


@triton.jit
def geglu_backward_kernel(dc_ptr, a_ptr, b_ptr, da_ptr, db_ptr, n, BLOCK: tl.constexpr):
    """The tanh-approximated GEGLU backward as an LLM-training kernel library writes it."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    dc = tl.load(dc_ptr + offs, mask=mask)
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    sqrt_2_over_pi = 0.7978845608028654
    a_cubed = a * a * a
    tanh_result = libdevice.tanh(sqrt_2_over_pi * (a + 0.044715 * a_cubed))
    gelu_a = 0.5 * a * (1 + tanh_result)
    db = dc * gelu_a
    term1 = 0.5 * (1 + tanh_result)
    tanh_sq = tanh_result * tanh_result
    term2 = 0.5 * a * (1 - tanh_sq) * (sqrt_2_over_pi * (1 + 3 * 0.044715 * a * a))
    da = dc * b * (term1 + term2)
    tl.store(da_ptr + offs, da, mask=mask)
    tl.store(db_ptr + offs, db, mask=mask)


def _gelu_tanh_grads_fp64(dc, a, b):
    a64 = a.double().requires_grad_()
    b64 = b.double().requires_grad_()
    out = torch.nn.functional.gelu(a64, approximate="tanh") * b64
    out.backward(dc.double())
    return a64.grad, b64.grad


@pytest.mark.parametrize("scale", [3.0, 30.0, 300.0])
def test_geglu_backward_at_large_inputs_matches_fp64(scale):
    g = torch.Generator().manual_seed(1)
    n = 4096
    a = torch.randn(n, generator=g) * scale
    b = torch.randn(n, generator=g) * scale
    dc = torch.randn(n, generator=g)
    da, db = torch.empty(n), torch.empty(n)
    geglu_backward_kernel[(triton.cdiv(n, BLOCK),)](dc, a, b, da, db, n, BLOCK=BLOCK)
    da64, db64 = _gelu_tanh_grads_fp64(dc, a, b)
    # fp32 arithmetic on fp32 inputs: a few ulps of the largest terms, no more.
    for got, want in ((da, da64), (db, db64)):
        err = (got.double() - want).abs()
        bound = 1e-5 * (want.abs() + scale * dc.abs() * b.abs().max() * 1e-2) + 1e-6
        assert (err <= bound).all(), f"max error {err.max().item():.3g} at {int(err.argmax())}"
    # Where tanh has saturated, 1 - tanh^2 is exactly 0 and da is exactly dc * b (a > 0)
    # or 0 (a < 0), as in fp64.
    far = a.abs() > 10
    torch.testing.assert_close(da[far], (dc * b * (a > 0))[far], rtol=0, atol=0)


@triton.jit
def gelu_tanh_grad_kernel(x_ptr, dy_ptr, dx_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    dy = tl.load(dy_ptr + offs, mask=mask)
    k = 0.7978845608028654
    t = libdevice.tanh(k * (x + 0.044715 * x * x * x))
    dx = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)
    tl.store(dx_ptr + offs, dy * dx, mask=mask)


def test_gelu_tanh_gradient_matches_fp64_autograd():
    x = torch.cat([torch.linspace(-40, 40, 8001), torch.tensor([-1e4, -100.0, 100.0, 1e4])])
    dy = torch.ones_like(x)
    dx = torch.empty_like(x)
    gelu_tanh_grad_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, dy, dx, x.numel(), BLOCK=BLOCK)
    x64 = x.double().requires_grad_()
    torch.nn.functional.gelu(x64, approximate="tanh").backward(dy.double())
    torch.testing.assert_close(dx.double(), x64.grad, rtol=1e-5, atol=1e-6)
