"""Triton language, fp8 storage types: torch float8 tensors as kernel arguments, loads
and stores, casts to and from f16/bf16/f32/f64 (round to nearest even, or toward zero
with `fp_downcast_rounding="rtz"`; out-of-range values saturate to the largest finite
value, NaN stays NaN), bitcasts to and from uint8, `tl.dot` on fp8 inputs, and the
backend's `supported_fp8_dtypes`.

References: torch's conversions (every bit pattern upcast; f16 and bf16 downcast over
all 65536 patterns, f32 over a dense sweep with ties and their neighbours), Triton's
interpreter for fp8e4b15 (torch has no such type), and, for what torch does not define
the same way (saturation, round toward zero), the format's value table decoded by torch.
"""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import triton
import triton.language as tl

# Triton fp8 dtype -> (torch dtype or None, largest finite value conversions produce)
FORMATS = {
    "fp8e5": (torch.float8_e5m2, 57344.0),
    "fp8e4nv": (torch.float8_e4m3fn, 448.0),
    "fp8e4b8": (torch.float8_e4m3fnuz, 240.0),
    "fp8e5b16": (torch.float8_e5m2fnuz, 57344.0),
    "fp8e4b15": (None, 1.75),
}
TORCH_FORMATS = [name for name, (t, _) in FORMATS.items() if t is not None]
BLOCK = 1024


def tl_dtype(name):
    return getattr(tl, {"fp8e5": "float8e5", "fp8e4nv": "float8e4nv", "fp8e4b8": "float8e4b8",
                        "fp8e5b16": "float8e5b16", "fp8e4b15": "float8e4b15"}[name])


@triton.jit
def upcast_kernel(bits_ptr, out_ptr, n, FP8: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(bits_ptr + offs, mask=mask).to(FP8, bitcast=True)
    tl.store(out_ptr + offs, x.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def downcast_kernel(x_ptr, bits_ptr, n, FP8: tl.constexpr, ROUNDING: tl.constexpr,
                    BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(x_ptr + offs, mask=mask).to(FP8, fp_downcast_rounding=ROUNDING)
    tl.store(bits_ptr + offs, y.to(tl.uint8, bitcast=True), mask=mask)


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """fp8 in, fp8 out: load, widen, compute in f32, round on the way back."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    tl.store(y_ptr + offs, (x * 3.0 + 0.5).to(y_ptr.dtype.element_ty), mask=mask)


def grid(n):
    return (triton.cdiv(n, BLOCK),)


def all_bytes():
    return torch.arange(256, dtype=torch.int32).to(torch.uint8)


def upcast(name, dst_dtype):
    bits = all_bytes()
    out = torch.empty(256, dtype=dst_dtype)
    upcast_kernel[grid(256)](bits, out, 256, FP8=tl_dtype(name), BLOCK=BLOCK)
    return out


def downcast(name, x, rounding=None):
    bits = torch.empty(x.numel(), dtype=torch.uint8)
    downcast_kernel[grid(x.numel())](x, bits, x.numel(), FP8=tl_dtype(name), ROUNDING=rounding,
                                     BLOCK=BLOCK)
    return bits


def assert_same_floats(actual, expected):
    """Equal values, the same signs of zeros, NaN where expected has NaN."""
    a, e = actual.double(), expected.double()
    assert torch.equal(torch.isnan(a), torch.isnan(e)), "NaN positions differ"
    keep = ~torch.isnan(e)
    torch.testing.assert_close(a[keep], e[keep], rtol=0, atol=0)
    assert torch.equal(torch.signbit(a[keep]), torch.signbit(e[keep])), "signs of zeros differ"


# ------------------------------------------------------------------ upcasts, every byte


@pytest.mark.parametrize("name", TORCH_FORMATS)
@pytest.mark.parametrize("dst", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_upcast_every_bit_pattern_matches_torch(name, dst):
    expected = all_bytes().view(FORMATS[name][0]).to(dst)
    assert_same_floats(upcast(name, dst), expected)


def _interpret(script: str) -> str:
    env = dict(os.environ, TRITON_INTERPRET="1")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    return done.stdout


_E4B15_INTERPRETED = """
import torch, triton, triton.language as tl
@triton.jit
def k(bits_ptr, out_ptr):
    offs = tl.arange(0, 256)
    x = tl.load(bits_ptr + offs).to(tl.float8e4b15, bitcast=True)
    tl.store(out_ptr + offs, x.to(tl.float32))
out = torch.empty(256)
k[(1,)](torch.arange(256, dtype=torch.int32).to(torch.uint8), out)
print(" ".join(float.hex(v) for v in out.tolist()))
"""


def e4b15_values_from_interpreter():
    return torch.tensor([float.fromhex(v) for v in _interpret(_E4B15_INTERPRETED).split()],
                        dtype=torch.float64)


def test_fp8e4b15_upcast_every_bit_pattern_matches_interpreter():
    expected = e4b15_values_from_interpreter()
    assert_same_floats(upcast("fp8e4b15", torch.float32), expected)
    assert_same_floats(upcast("fp8e4b15", torch.float16), expected)


# ---------------------------------------------------------------- downcasts, dense sweeps


def f32_sweep():
    """Every sign, exponent from 2^-30 to 2^20 and top 9 mantissa bits, with low bits
    0 (exact ties of every fp8 format), 1 (just above) and all ones (just below); plus
    zeros, f32 subnormals, infinities, NaN and the largest floats."""
    sign = torch.tensor([0, 1], dtype=torch.int64).view(-1, 1, 1, 1) << 31
    exponent = torch.arange(127 - 30, 127 + 21, dtype=torch.int64).view(1, -1, 1, 1) << 23
    top = torch.arange(512, dtype=torch.int64).view(1, 1, -1, 1) << 14
    low = torch.tensor([0, 1, (1 << 14) - 1], dtype=torch.int64).view(1, 1, 1, -1)
    bits = (sign | exponent | top | low).flatten()
    specials = torch.tensor([0.0, -0.0, 1e-45, -1e-45, 1e-40, float("inf"), float("-inf"),
                             float("nan"), 3.4e38, -3.4e38])
    return torch.cat([bits.to(torch.int32).view(torch.float32), specials])


def every_16_bit(dtype):
    return torch.arange(1 << 16, dtype=torch.int32).to(torch.int16).view(dtype)


def torch_downcast_saturated(name, x):
    """torch's round-to-nearest-even conversion, with what overflows (to inf or NaN)
    saturated to the largest finite value as Triton's conversions do."""
    fmt, largest = FORMATS[name]
    y = x.to(fmt).float()
    overflow = ~torch.isfinite(y) & ~torch.isnan(x)
    return torch.where(overflow, torch.copysign(torch.full_like(y, largest), x.float()), y)


def decode(name, bits):
    return bits.view(FORMATS[name][0]).float()


@pytest.mark.parametrize("name", TORCH_FORMATS)
@pytest.mark.parametrize("src", ["f32", "f16", "bf16"])
def test_downcast_sweep_matches_torch(name, src):
    x = {"f32": f32_sweep, "f16": lambda: every_16_bit(torch.float16),
         "bf16": lambda: every_16_bit(torch.bfloat16)}[src]()
    bits = downcast(name, x)
    assert_same_floats(decode(name, bits), torch_downcast_saturated(name, x))


def test_downcast_from_f64_rounds_once():
    # halfway between two fp8e4nv values plus a little less than f32 can hold: rounding
    # to f32 first would make it an exact tie (and round it down to even)
    x = torch.tensor([1.0625 + 2.0 ** -40, -(1.0625 + 2.0 ** -40), 1.0625, 300.0],
                     dtype=torch.float64)
    expected = torch.tensor([1.125, -1.125, 1.0, 288.0])
    assert_same_floats(decode("fp8e4nv", downcast("fp8e4nv", x)), expected)


def value_table(name):
    """Every finite non-negative value of the format, ascending, with its byte; from
    torch's decoding (fp8e4b15 is fp8e4nv's layout with exponent bias 15, 0x7f = 1.875)."""
    if name == "fp8e4b15":
        values = decode("fp8e4nv", all_bytes()).double() * 2.0 ** -8
        values[0x7f], values[0xff] = 1.875, -1.875
    else:
        values = decode(name, all_bytes()).double()
    byte = torch.arange(256)
    keep = torch.isfinite(values) & (values >= 0) & ~((values == 0) & (byte >= 128))
    order = torch.argsort(values[keep])
    return values[keep][order], byte[keep][order]


def reference_round(name, x, toward_zero):
    """x rounded to the format by its value table: nearest (ties to the even byte) or
    toward zero; out of range saturates to the largest value conversions produce."""
    values, byte = value_table(name)
    largest = FORMATS[name][1]
    a = x.double().abs().clamp(max=largest)
    hi = torch.searchsorted(values, a).clamp(max=len(values) - 1)
    lo = torch.where(values[hi] == a, hi, (hi - 1).clamp(min=0))
    if toward_zero:
        pick = lo
    else:
        d_lo, d_hi = a - values[lo], values[hi] - a
        pick = torch.where(d_lo < d_hi, lo, hi)
        tie = d_lo == d_hi
        pick = torch.where(tie & (byte[lo] % 2 == 0), lo, pick)
    result = torch.copysign(values[pick], x.double())
    if name in ("fp8e4b8", "fp8e5b16"):  # one zero: +0
        result = torch.where(result == 0, torch.zeros_like(result), result)
    nan = torch.isnan(x)
    if name == "fp8e4b15":
        return torch.where(nan, torch.copysign(torch.full_like(result, largest),
                                               x.double()), result)
    return torch.where(nan, torch.full_like(result, float("nan")), result)


def decode_any(name, bits):
    if name != "fp8e4b15":
        return decode(name, bits).double()
    values = decode("fp8e4nv", all_bytes()).double() * 2.0 ** -8
    values[0x7f], values[0xff] = 1.875, -1.875
    return values[bits.long()]


@pytest.mark.parametrize("name", list(FORMATS))
@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
def test_downcast_sweep_matches_value_table(name, rounding):
    x = torch.cat([f32_sweep(), every_16_bit(torch.float16).float()])
    bits = downcast(name, x, rounding)
    assert_same_floats(decode_any(name, bits), reference_round(name, x, rounding == "rtz"))


def test_fp8e4b15_downcast_matches_ml_dtypes():
    """fp8e4b15 is ml_dtypes' float8_e4m3b11fnuz with the exponent bias 4 larger: the
    same bytes for x / 16 as that type's round-to-nearest-even bytes for x (in range;
    that type has no -0)."""
    import ml_dtypes
    x = torch.cat([f32_sweep(), every_16_bit(torch.float16).float()])
    x = x[(x.abs() <= 1.75) & (x != 0)]
    bits = downcast("fp8e4b15", x)
    scaled = (x.numpy() * np.float32(16)).astype(ml_dtypes.float8_e4m3b11fnuz)
    expected = torch.from_numpy(scaled.view(np.uint8).copy())
    negative_zero = (expected == 0) & (x < 0)  # -0 in fp8e4b15
    expected[negative_zero] = 0x80
    assert torch.equal(bits, expected)


def test_value_table_reference_agrees_with_torch():
    """The table reference (used for rtz and fp8e4b15) rounds like torch."""
    x = f32_sweep()
    for name in TORCH_FORMATS:
        assert_same_floats(reference_round(name, x, False), torch_downcast_saturated(name, x))


@triton.jit
def convert_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask).to(y_ptr.dtype.element_ty), mask=mask)


@pytest.mark.parametrize("src,dst", [("fp8e5", "fp8e4nv"), ("fp8e4nv", "fp8e5"),
                                     ("fp8e5b16", "fp8e4b8"), ("fp8e4b8", "fp8e5")])
def test_fp8_to_fp8_every_bit_pattern_matches_torch(src, dst):
    x = all_bytes().view(FORMATS[src][0])
    y = torch.empty(256, dtype=FORMATS[dst][0])
    convert_kernel[grid(256)](x, y, 256, BLOCK=BLOCK)
    assert_same_floats(y.float(), torch_downcast_saturated(dst, x.float()))


# -------------------------------------------------------------- loads, stores, arithmetic


@pytest.mark.parametrize("name", TORCH_FORMATS)
def test_fp8_tensors_load_and_store_unchanged(name):
    n = 1000  # masked tail
    x = torch.arange(n, dtype=torch.int32).remainder(256).to(torch.uint8).view(FORMATS[name][0])
    y = torch.zeros(n, dtype=FORMATS[name][0])
    copy_kernel[grid(n)](x, y, n, BLOCK=BLOCK)
    assert_same_floats(y.float(), x.float())


@triton.jit
def bits_roundtrip_kernel(bits_ptr, out_ptr, FP8: tl.constexpr):
    offs = tl.arange(0, 256)
    x = tl.load(bits_ptr + offs).to(FP8, bitcast=True)
    tl.store(out_ptr + offs, x.to(tl.uint8, bitcast=True))


@pytest.mark.parametrize("name", list(FORMATS))
def test_every_fp8_byte_survives_bitcasts(name):
    out = torch.empty(256, dtype=torch.uint8)
    bits_roundtrip_kernel[(1,)](all_bytes(), out, FP8=tl_dtype(name))
    if name in ("fp8e5", "fp8e4nv"):  # NaNs may come back with another payload
        nan = torch.isnan(decode(name, all_bytes()))
        assert torch.isnan(decode(name, out[nan])).all()
        assert torch.equal(out[~nan], all_bytes()[~nan])
    else:
        assert torch.equal(out, all_bytes())


@pytest.mark.parametrize("name", TORCH_FORMATS)
def test_fp8_compute_in_f32_and_round_on_store(name):
    fmt, _ = FORMATS[name]
    n = 300
    x = (torch.randn(n, generator=torch.Generator().manual_seed(1)) * 4).to(fmt)
    y = torch.empty(n, dtype=fmt)
    scale_kernel[grid(n)](x, y, n, BLOCK=BLOCK)
    expected = torch_downcast_saturated(name, x.float() * 3.0 + 0.5)
    assert_same_floats(y.float(), expected)


@triton.jit
def fp8_dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


@triton.jit
def fp8e4b15_dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :]).to(tl.float8e4b15, bitcast=True)
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :]).to(tl.float8e4b15, bitcast=True)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


def test_dot_with_fp8e4b15_inputs():
    M, N, K = 16, 16, 32
    gen = torch.Generator().manual_seed(4)
    a_bits = torch.randint(0, 256, (M, K), generator=gen).to(torch.uint8)
    b_bits = torch.randint(0, 256, (K, N), generator=gen).to(torch.uint8)
    c = torch.empty(M, N)
    fp8e4b15_dot_kernel[(1,)](a_bits, b_bits, c, M=M, N=N, K=K)
    expected = decode_any("fp8e4b15", a_bits) @ decode_any("fp8e4b15", b_bits)
    torch.testing.assert_close(c.double(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("a_name,b_name", [("fp8e5", "fp8e5"), ("fp8e4nv", "fp8e4nv"),
                                           ("fp8e4nv", "fp8e5"), ("fp8e4b8", "fp8e5b16")])
def test_dot_with_fp8_inputs_accumulates_in_f32(a_name, b_name):
    M, N, K = 16, 32, 64
    gen = torch.Generator().manual_seed(2)
    a = torch.randn(M, K, generator=gen).to(FORMATS[a_name][0])
    b = torch.randn(K, N, generator=gen).to(FORMATS[b_name][0])
    c = torch.empty(M, N)
    fp8_dot_kernel[(1,)](a, b, c, M=M, N=N, K=K)
    expected = a.double() @ b.double()
    torch.testing.assert_close(c.double(), expected, rtol=1e-5, atol=1e-5)


@triton.jit
def fp8_constant_kernel(out_ptr, FP8: tl.constexpr, VALUE: tl.constexpr):
    offs = tl.arange(0, 4)
    tl.store(out_ptr + offs, tl.full([4], VALUE, FP8).to(tl.float32) + offs.to(tl.float32))


@pytest.mark.parametrize("name", list(FORMATS))
@pytest.mark.parametrize("value", [1000.0, 5.0, 0.3])
def test_fp8_constants_round_and_saturate(name, value):
    out = torch.empty(4)
    fp8_constant_kernel[(1,)](out, FP8=tl_dtype(name), VALUE=value)
    expected = reference_round(name, torch.tensor([value]), False).float() + torch.arange(4.0)
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


@triton.jit
def fp8e4b15_bits_kernel(x_ptr, out_ptr, VALUE: tl.constexpr):
    """The bits of a constant (folded at compile time) and of the same value converted
    at run time."""
    offs = tl.arange(0, 2)
    constant = tl.full([2], VALUE, tl.float8e4b15).to(tl.uint8, bitcast=True)
    converted = tl.load(x_ptr + offs).to(tl.float8e4b15).to(tl.uint8, bitcast=True)
    tl.store(out_ptr + offs, tl.where(offs == 0, constant, converted))


@pytest.mark.parametrize("value", [1.0, -0.0, 0.3, -1e-9, 5.0, 2.0 ** -17, -1.875])
def test_fp8e4b15_constants_fold_to_the_same_bits(value):
    out = torch.empty(2, dtype=torch.uint8)
    fp8e4b15_bits_kernel[(1,)](torch.full((2,), value), out, VALUE=value)
    expected = reference_round("fp8e4b15", torch.tensor([value]), False)
    assert out[0] == out[1]
    assert_same_floats(decode_any("fp8e4b15", out[:1]), expected)


def test_backend_supports_every_fp8_dtype():
    from triton.backends.compiler import GPUTarget
    from triton_spirv.compiler import OpenCLBackend
    options = OpenCLBackend(GPUTarget("opencl", "pocl", 1)).parse_options({})
    assert set(options.supported_fp8_dtypes) == set(FORMATS)
    assert triton.runtime.driver.active.get_current_target().backend == "opencl"


# ------------------------------------------------------------- IR in, IR / OpenCL C out

FP_TO_FP_TTIR = """
module {
  tt.func public @k(%x: f32, %p: !tt.ptr<f8E5M2>, %q: !tt.ptr<f8E4M3FN>) {
    %a = tt.fp_to_fp %x, rounding = rtne : f32 -> f8E5M2
    %b = tt.fp_to_fp %x, rounding = rtz : f32 -> f8E4M3FN
    tt.store %p, %a : !tt.ptr<f8E5M2>
    tt.store %q, %b : !tt.ptr<f8E4M3FN>
    tt.return
  }
}
"""


def test_frontend_lowers_fp_to_fp_to_truncf_with_its_rounding_mode():
    from triton_spirv.stages import ttir_to_linalg_text
    linalg = ttir_to_linalg_text(FP_TO_FP_TTIR)
    assert "arith.truncf %arg0 to_nearest_even : f32 to f8E5M2" in linalg
    assert "arith.truncf %arg0 toward_zero : f32 to f8E4M3FN" in linalg
    assert "memref<?xf8E5M2>" in linalg and "memref<?xf8E4M3FN>" in linalg


MEMREF_FP8 = """
module {
  func.func @k(%x: memref<?xf32>, %o: memref<?xf8E4M3FN>, %r: memref<?xf8E4M3FN>,
               %w: memref<?xf32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %x[%i] : memref<?xf32>
      %e = arith.truncf %v : f32 to f8E4M3FN
      %z = arith.truncf %v toward_zero : f32 to f8E4M3FN
      memref.store %e, %o[%i] : memref<?xf8E4M3FN>
      memref.store %z, %r[%i] : memref<?xf8E4M3FN>
      %back = memref.load %o[%i] : memref<?xf8E4M3FN>
      %f = arith.extf %back : f8E4M3FN to f32
      memref.store %f, %w[%i] : memref<?xf32>
    }
    return
  }
}
"""


def test_emitter_rounds_stores_and_loads_fp8_buffers():
    import pyopencl as cl
    from emitter_opencl import emit_opencl
    from mlir import ir
    kernel = emit_opencl(ir.Module.parse(MEMREF_FP8, ir.Context()))
    assert kernel.arg_types[1:3] == ["__global uchar*"] * 2
    assert "round_to_fp8e4m3fn_rtz_float(" in kernel.source
    x = torch.cat([f32_sweep(), every_16_bit(torch.float16).float()]).numpy()
    n = x.size
    nearest, toward_zero = np.zeros(n, np.uint8), np.zeros(n, np.uint8)
    widened = np.zeros(n, np.float32)
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    mf = cl.mem_flags
    bufs = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a)
            for a in (x, nearest, toward_zero, widened)]
    program = cl.Program(ctx, kernel.source).build()
    getattr(program, kernel.name)(queue, (1,), (1,), *bufs, np.int64(n))
    for buf, host in zip(bufs[1:], (nearest, toward_zero, widened)):
        cl.enqueue_copy(queue, host, buf)
    xt = torch.from_numpy(x)
    expected = reference_round("fp8e4nv", xt, False)
    assert_same_floats(decode("fp8e4nv", torch.from_numpy(nearest)), expected)
    assert_same_floats(torch.from_numpy(widened), expected)
    assert_same_floats(decode("fp8e4nv", torch.from_numpy(toward_zero)),
                       reference_round("fp8e4nv", xt, True))


def test_unsupported_fp8_rounding_mode_is_rejected():
    from emitter_opencl import OpenCLEmitError, emit_opencl
    from mlir import ir
    text = MEMREF_FP8.replace("%z = arith.truncf %v toward_zero : f32 to f8E4M3FN",
                              '%z = arith.truncf %v to_nearest_away : f32 to f8E4M3FN '
                              'loc("/src/kernel.py":7:1)')
    with pytest.raises(OpenCLEmitError, match=r"kernel\.py:7.*to nearest even and toward zero"):
        emit_opencl(ir.Module.parse(text, ir.Context()))
