"""Kernels as Inductor writes them for CPU tensors (tests/data/inductor/kernels.py), run
as plain Triton kernels on the active device and shape, against torch; on CPU shapes,
the forms their OpenCL C must take: 16-lane vectors along the contiguous axis of the 2-D
`[XBLOCK, R0_BLOCK]` tiles, rows' statistics (`[:, None]`) broadcast into those vectors,
reductions in vector lanes (`max2` too), libdevice math on vectors."""
import importlib.util
import os
import re

import pytest
import torch
import torch.nn.functional as F

import triton
import triton.language as tl
from torch._inductor.runtime import triton_helpers

from triton_spirv.target import current_target

HERE = os.path.dirname(os.path.abspath(__file__))
CPU_SHAPE = current_target().is_cpu


def _kernels():
    spec = importlib.util.spec_from_file_location(
        "inductor_kernels", os.path.join(HERE, "data", "inductor", "kernels.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


K = _kernels()


def _scalar_loops_over(cl: str, name: str) -> list:
    """The statements that apply `name` to one float (`float v = name(...)`)."""
    return re.findall(rf"\bfloat \w+ = {name}(?:_float)?\(", cl)


def _serial_row_loops(cl: str) -> list:
    """Loops over 64 or more elements that one work-item runs from 0 (`for (long i = 0;
    i < 1023; ++i)`): on GPU shapes a row's reduction is shared by the work-group, each
    work-item's loop starts at its own id."""
    counts = re.findall(r"for \(long \w+ = 0; \w+ < (\d+); \+\+\w+\)", cl)
    return [int(n) for n in counts if int(n) >= 64]


# XBLOCK=1: one row per program, as Inductor picks for few rows (its row total a
# [1, 1] tile); 8: eight rows per program.
@pytest.mark.parametrize("xblock, rows", [(1, 512), (8, 4096)])
def test_layer_norm_gelu_persistent_reduction(xblock, rows):
    torch.manual_seed(0)
    x, w, b = torch.randn(rows, 1024), torch.randn(1024), torch.randn(1024)
    out = torch.full_like(x, float("nan"))
    compiled = K.triton_per_fused_gelu_mul_native_layer_norm_0[(rows // xblock,)](
        out, x, w, b, rows, 1024, XBLOCK=xblock)
    expected = F.gelu(F.layer_norm(x, (1024,), w, b)) * 2
    torch.testing.assert_close(out, expected, atol=1e-4, rtol=1e-4)
    if not CPU_SHAPE:
        assert not _serial_row_loops(compiled.asm["cl"])
    elif xblock == 8:
        cl = compiled.asm["cl"]
        # the tail after the row statistics: one vector loop, erf on 16 lanes, the
        # row's rsqrt once per vector
        assert re.search(r"float16 \w+ = erf_float16\(", cl)
        assert not _scalar_loops_over(cl, "erf")
        assert re.search(r"float16 \w+ = \(float16\)\(\w+\);", cl)   # a row's value, splat


@pytest.mark.parametrize("xblock, rows", [(1, 512), (8, 4096)])
def test_softmax_persistent_reduction(xblock, rows):
    torch.manual_seed(0)
    x = torch.randn(rows, 1024) * 3
    x[5, 7] = float("inf")    # the row Inductor's `any` check sends down the other branch
    out = torch.full_like(x, float("nan"))
    compiled = K.triton_per_fused__softmax_abs_all_amax_eq_mul_ne_sub_0[(rows // xblock,)](
        out, x, rows, 1024, XBLOCK=xblock)
    expected = torch.softmax(x * 0.5, -1)
    torch.testing.assert_close(out, expected, atol=1e-6, rtol=1e-5, equal_nan=True)
    if not CPU_SHAPE:
        assert not _serial_row_loops(compiled.asm["cl"])
    elif xblock == 8:
        cl = compiled.asm["cl"]
        assert "= maximum_float16(" in cl             # max2 reduces in 16 lanes
        assert re.search(r"float16 \w+ = exp\(", cl)  # exp of the whole row on vectors
        assert re.search(r"float16 \w+ = \w+ \? \w+ : \w+;", cl)   # tl.where on the row's flag


@pytest.mark.parametrize("numel", [1_000_000])
def test_pointwise_with_xmask(numel):
    torch.manual_seed(0)
    x = torch.randn(numel) * 4
    out = torch.full_like(x, float("nan"))
    compiled = K.triton_poi_fused_add_gelu_mul_tanh_0[(triton.cdiv(numel, 512),)](
        x, out, numel, XBLOCK=512)
    expected = F.gelu(x) * 2 + torch.tanh(x)
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
    if CPU_SHAPE:
        assert not _scalar_loops_over(compiled.asm["cl"], "erf")


def test_looped_reduction():
    torch.manual_seed(0)
    x = torch.randn(64, 20000)
    out = torch.full((64, 1), float("nan"))
    compiled = K.triton_red_fused_mul_sum_0[(64,)](x, out, 64, 20000, XBLOCK=1, R0_BLOCK=2048)
    torch.testing.assert_close(out[:, 0], (x * x).sum(-1), atol=1e-2, rtol=1e-5)
    cl = compiled.asm["cl"]
    if not CPU_SHAPE:
        assert not _serial_row_loops(cl)
    else:
        # the where-accumulator's block in 16 lanes, its mask from the lanes' indices
        assert not re.search(r"for \(long \w+ = 0; \w+ < 2048; \+\+\w+\)", cl)
        assert re.search(r"float16 \w+ = select\(", cl)


# ---------------------------------------------------------------------------------------
# triton_helpers' where-form max2/min2 reduce in lanes as arith.maximumf/minimumf
# (ttir_to_linalg/reductions.py, _where_extreme): NaNs propagate as torch's amax/amin.


@triton.jit
def _row_extremes(x_ptr, max_ptr, min_ptr, imax_ptr, R: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, R)[None, :]
    x = tl.load(x_ptr + row * R + cols)
    xi = x.to(tl.int32)
    tl.store(max_ptr + row + tl.arange(0, 1)[:, None], triton_helpers.max2(x, 1)[:, None])
    tl.store(min_ptr + row + tl.arange(0, 1)[:, None], triton_helpers.min2(x, 1)[:, None])
    tl.store(imax_ptr + row + tl.arange(0, 1)[:, None], triton_helpers.max2(xi, 1)[:, None])


def test_where_form_max_and_min_propagate_nan():
    torch.manual_seed(0)
    x = torch.randn(6, 256) * 100
    x[1, 3] = float("nan")       # early in a row
    x[2, 255] = float("nan")     # the last element
    x[3, :] = float("-inf")
    x[4, 17] = float("inf")
    mx, mn, imx = torch.empty(6), torch.empty(6), torch.empty(6, dtype=torch.int32)
    compiled = _row_extremes[(6,)](x, mx, mn, imx, R=256)
    torch.testing.assert_close(mx, x.amax(1), equal_nan=True)
    torch.testing.assert_close(mn, x.amin(1), equal_nan=True)
    finite = torch.nan_to_num(x, nan=0.0, posinf=0.0, neginf=0.0)
    torch.testing.assert_close(imx[[0, 5]], finite.to(torch.int32).amax(1)[[0, 5]])
    if CPU_SHAPE:
        cl = compiled.asm["cl"]
        assert "= maximum_float16(" in cl and "= minimum_float16(" in cl


def test_softmax_selects_whole_vectors_in_spirv():
    """The tail's select on a row's flag (a scalar i1 picking vectors) converts to
    SPIR-V (spirv/selects.py splats the flag) instead of sending the kernel back to
    OpenCL C."""
    from triton_spirv.stages import memref_to_spirv
    x = torch.randn(4096, 1024)
    compiled = K.triton_per_fused__softmax_abs_all_amax_eq_mul_ne_sub_0[(4096 // 8,)](
        torch.empty_like(x), x, 4096, 1024, XBLOCK=8)
    assembly = memref_to_spirv(compiled.asm["memref"]).assembly
    if CPU_SHAPE:
        assert re.search(r"spirv.Select %\w+, %\w+, %\w+ : vector<16xi1>, vector<16xf32>",
                         assembly)
