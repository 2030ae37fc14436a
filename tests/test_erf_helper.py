"""erf (libdevice.erf -> math.erf -> the emitter's float helper, emitter_opencl/helpers.py):
within 2 ulp of the correctly rounded value over the whole float range, exactly +-1 in
the tails, signed zeros and NaN kept, in vector loops (16 lanes, 4 per work-item on GPU
shapes) and in scalar code alike; the value fp64 gives is the reference. Programs built from SPIR-V (Intel's
runtime by default) compute the same formula (triton_spirv/spirv/erf.py), not the
driver's OpenCL.std erf."""
import re

import numpy as np
import torch

import triton
import triton.language as tl
from triton.language.extra import libdevice

BLOCK = 1024


@triton.jit
def erf_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, libdevice.erf(tl.load(x_ptr + offs, mask=mask)), mask=mask)


@triton.jit
def erf_scalar_kernel(x_ptr, out_ptr):
    i = tl.program_id(0)
    tl.store(out_ptr + i, libdevice.erf(tl.load(x_ptr + i)))


def _ordered(bits):
    """float32 bit patterns as integers whose difference counts ulps across zero."""
    bits = bits.astype(np.int64)
    return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)


def _inputs():
    # Every 61st float from 2^-30 to 6 (erf rounds to 1 from 3.92 on), both signs, the
    # specials and the switch between the two forms.
    start, stop = np.float32(2.0 ** -30).view(np.int32), np.float32(6.0).view(np.int32)
    x = np.arange(start, stop, 61, dtype=np.int32).view(np.float32)
    edge = np.float32(0.927734375)
    x = np.concatenate([x, -x, np.float32([0.0, -0.0, 1e-40, 1e-30, 3.9, 3.92, 10.0, 1e30,
                                           np.inf, -np.inf, edge, np.nextafter(edge, 1)])])
    pad = (-len(x)) % BLOCK    # whole blocks: the vector loop covers every input
    return np.concatenate([x, np.full(pad, 0.5, np.float32)])


def _check(x, got):
    want = torch.erf(torch.from_numpy(x).double()).float().numpy()   # correctly rounded
    ulps = np.abs(_ordered(got.view(np.int32)) - _ordered(want.view(np.int32)))
    assert ulps.max() <= 2, f"{ulps.max()} ulp at x = {x[int(ulps.argmax())]!r}"
    assert np.array_equal(got == 1.0, want == 1.0) and np.array_equal(got == -1.0, want == -1.0)
    zeros = x == 0
    assert np.signbit(got[zeros]).tolist() == np.signbit(x[zeros]).tolist()


def test_erf_within_two_ulp_in_vector_loops():
    x = _inputs()
    out = torch.empty(len(x))
    compiled = erf_kernel[(len(x) // BLOCK,)](torch.from_numpy(x), out, len(x), BLOCK=BLOCK)
    assert re.search(r"erf_float(4|16)\(", compiled.asm["cl"])   # GPU shapes: float4
    _check(x, out.numpy())
    nan = torch.tensor([float("nan")] * 4)
    erf_kernel[(1,)](nan, out, 4, BLOCK=BLOCK)
    assert torch.isnan(out[:4]).all()


def test_erf_within_two_ulp_in_scalar_code():
    x = _inputs()[::37].copy()
    out = torch.empty(len(x))
    compiled = erf_scalar_kernel[(len(x),)](torch.from_numpy(x), out)
    assert "erf_float(" in compiled.asm["cl"]
    _check(x, out.numpy())
