"""Signed integer `%` and `//` (C semantics: the remainder takes the dividend's sign,
the quotient truncates) at the edges of each width: the most negative value, -1, and
divisors of both signs, against torch, in every program form the device takes.

The SPIR-V form once gave INT_MIN % 3 == 2: upstream's OpenCL pattern for
`arith.remsi` tests the dividend's sign as `a == s_abs(a)`, which the most negative
integer passes (spirv/casts.py, expand_signed_remainders; found by the differential
tester, seed 44471: a cumprod that wrapped to INT_MIN, then `%`)."""
import pytest
import torch
import triton
import triton.language as tl

from launcher import get_device
from launcher.il import spirv_versions
from triton_spirv.spirv import OpenCLCChosen


@triton.jit
def remainder_and_quotient(x, d, rem, quo, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m)
    b = tl.load(d + offs, mask=m, other=1)
    tl.store(rem + offs, a % b, mask=m)
    tl.store(quo + offs, a // b, mask=m)


def _operands(dtype):
    info = torch.iinfo(dtype)
    dividends = [info.min, info.min + 1, -7, -1, 0, 1, 7, info.max]
    divisors = [1, 2, 3, 5, 7, 8, -3, -8, info.max, info.min]
    x = torch.tensor([a for a in dividends for _ in divisors], dtype=dtype)
    d = torch.tensor([b for _ in dividends for b in divisors], dtype=dtype)
    return x, d


def _programs():
    return ["source", "spirv"] if spirv_versions(get_device()) else ["source"]


@pytest.mark.parametrize("dtype", [torch.int8, torch.int16, torch.int32, torch.int64])
def test_signed_remainders_and_quotients_at_the_edges(dtype):
    x, d = _operands(dtype)
    n = x.numel()
    expected_rem = torch.fmod(x, d)
    expected_quo = torch.div(x, d, rounding_mode="trunc")
    for program in _programs():
        rem, quo = torch.zeros_like(x), torch.zeros_like(x)
        try:
            remainder_and_quotient[(1,)](x, d, rem, quo, n, BLOCK=128, program=program)
        except OpenCLCChosen:      # the device's SPIR-V does not serve this shape (a quirk)
            continue
        torch.testing.assert_close(rem, expected_rem, msg=lambda m: f"{program} %: {m}")
        torch.testing.assert_close(quo, expected_quo, msg=lambda m: f"{program} //: {m}")
