"""Integers to fp8 through f16 or f32 (`x.to(tl.float16).to(tl.float8e5)`): Triton has no
direct int -> fp8 cast, and the two steps round twice (an int16 rounds to f16, then to
fp8), as torch's `x.to(torch.float16).to(torch.float8_e5m2)` does. Canonicalization
must not merge the steps into one int -> fp8 conversion (which rounds once and which
neither the OpenCL C emitter nor the SPIR-V stage has). Both ways of giving the kernel
to the device run where it takes SPIR-V.
"""
import pytest
import torch

import triton
import triton.language as tl

FP8 = {"float8e5": torch.float8_e5m2, "float8e4nv": torch.float8_e4m3fn}
LARGEST = {"float8e5": 57344, "float8e4nv": 448}
INTS = [torch.int8, torch.int16, torch.int32, torch.uint8]
MIDDLE = {"float16": torch.float16, "float32": torch.float32}


def _device_takes_spirv() -> bool:
    from launcher import get_device
    from launcher.il import spirv_versions
    return bool(spirv_versions(get_device()))


PROGRAMS = ["source"] + (["spirv"] if _device_takes_spirv() else [])


def _launch(kernel, grid, *args, program, **constants):
    """The launch; the SPIR-V form refused for a device quirk (a GPU-shaped kernel on
    Intel's runtime: private_zero_tiles_in_gpu_spirv) skips, its OpenCL C being the
    `source` case."""
    from triton_spirv.spirv import SpirvStageError
    try:
        kernel[grid](*args, program=program, **constants)
    except SpirvStageError as err:
        if program == "spirv" and "(quirk " in str(err):
            pytest.skip(f"the SPIR-V form is refused here: {err}")
        raise


@triton.jit
def int_to_fp8_kernel(x_ptr, y_ptr, n, MID: tl.constexpr, FP8: tl.constexpr,
                      BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x.to(MID).to(FP8), mask=mask)


@triton.jit
def fp8_to_int_kernel(x_ptr, y_ptr, n, MID: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x.to(MID).to(y_ptr.dtype.element_ty), mask=mask)


def integers(dtype, fp8, n):
    """n integers of `dtype` within the format's range: the range's ends, ties and the
    values where rounding to f16 first changes the fp8 result (4609 rounds to 4608 in
    f16, a tie that goes to 4096 in e5m2; rounded once, it is 5120), then random ones."""
    info = torch.iinfo(dtype)
    low, high = max(info.min, -LARGEST[fp8]), min(info.max, LARGEST[fp8])
    gen = torch.Generator().manual_seed(n)
    values = torch.randint(low, high + 1, (n,), generator=gen, dtype=torch.int64)
    edges = torch.tensor([low, high, 0, 1, -1, 255, 272, 4609, -4609, 4607, 6657, 2049, 32767,
                          -32768], dtype=torch.int64)
    edges = edges[(edges >= low) & (edges <= high)]
    values[:min(n, edges.numel())] = edges[:n]
    return values.to(dtype)


@pytest.mark.parametrize("program", PROGRAMS)
@pytest.mark.parametrize("fp8", sorted(FP8))
@pytest.mark.parametrize("mid", sorted(MIDDLE))
@pytest.mark.parametrize("dtype", INTS, ids=str)
@pytest.mark.parametrize("n", [1, 31, 1000])
def test_integer_to_fp8_rounds_like_torch(n, dtype, mid, fp8, program):
    x = integers(dtype, fp8, n)
    y = torch.full((n,), 7.0).to(FP8[fp8])
    _launch(int_to_fp8_kernel, (triton.cdiv(n, 256),), x, y, n, MID=getattr(tl, mid),
            FP8=getattr(tl, fp8), BLOCK=256, program=program)
    expected = x.to(MIDDLE[mid]).to(FP8[fp8])
    assert torch.equal(y.view(torch.uint8), expected.view(torch.uint8)), \
        (x[y.view(torch.uint8) != expected.view(torch.uint8)][:8],
         y.float()[y.view(torch.uint8) != expected.view(torch.uint8)][:8])


@pytest.mark.parametrize("program", PROGRAMS)
@pytest.mark.parametrize("fp8", sorted(FP8))
@pytest.mark.parametrize("mid", sorted(MIDDLE))
@pytest.mark.parametrize("dtype", [torch.int16, torch.int32], ids=str)
def test_fp8_to_integer_truncates_like_torch(dtype, mid, fp8, program):
    """Every finite fp8 value within the integer type's range, through f16 or f32."""
    x = torch.arange(256, dtype=torch.int32).to(torch.uint8).view(FP8[fp8])
    x = x[torch.isfinite(x.float()) & (x.float().abs() < torch.iinfo(dtype).max)]
    y = torch.full((x.numel(),), 7, dtype=dtype)
    _launch(fp8_to_int_kernel, (1,), x, y, x.numel(), MID=getattr(tl, mid), BLOCK=256,
            program=program)
    assert torch.equal(y, x.to(MIDDLE[mid]).to(dtype))
