"""Kernels, arguments and locals named with words that mean something to an OpenCL C
compiler (keywords, type names, qualifiers, macros, builtins the emitter calls) build,
run and compute what torch computes; the launcher finds the kernel by its printed name."""
import glob
import re

import pytest
import torch

import triton
import triton.language as tl

from emitter_opencl.names import NameTable, is_reserved

N = 64


@triton.jit
def kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0 + 1.0, mask=mask)


@triton.jit
def half(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 0.5, mask=mask)


@triton.jit
def float4(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) - 4.0, mask=mask)


@triton.jit
def image2d_t(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.abs(tl.load(x_ptr + offs, mask=mask)), mask=mask)


@pytest.mark.parametrize("fn, reference", [
    (kernel, lambda x: x * 2 + 1), (half, lambda x: x * 0.5),
    (float4, lambda x: x - 4), (image2d_t, torch.abs)])
def test_kernel_named_like_an_opencl_word(fn, reference):
    x = torch.randn(100)
    out = torch.empty_like(x)
    compiled = fn[(triton.cdiv(100, N),)](x, out, 100, BLOCK=N)
    torch.testing.assert_close(out, reference(x))
    printed = re.search(r"__kernel void (\w+)\(", compiled.asm["cl"]).group(1)
    assert printed != fn.__name__ and not is_reserved(printed)
    assert compiled.metadata.name == printed


@triton.jit
def opencl_words_kernel(global_, local, constant, private, read_only, int, float, sizeof,
                        max, exp, vload4, get_group_id, M_PI, size_t, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    half = tl.load(global_ + offs, mask=mask, other=0.0)
    float4 = tl.load(local + offs, mask=mask, other=0.0)
    select = tl.maximum(half, float4) + int * float + sizeof
    NAN = tl.exp(half * M_PI) + tl.abs(float4 - size_t)
    tl.store(constant + offs, select, mask=mask)
    tl.store(private + offs, NAN, mask=mask)
    tl.store(read_only + offs, tl.sqrt(tl.abs(select)) + max, mask=mask)
    tl.store(exp + offs, tl.minimum(NAN, select) * vload4, mask=mask)
    tl.store(get_group_id + offs, (offs + tl.program_id(0)).to(tl.float32), mask=mask)


def test_arguments_and_locals_named_like_opencl_words():
    n = 150
    a, b = torch.randn(n), torch.randn(n)
    outs = [torch.empty(n) for _ in range(5)]
    i, f, s, m, v, pi, sz = 3, 0.25, 2.0, 1.5, -2.0, 0.5, 0.75
    compiled = opencl_words_kernel[(triton.cdiv(n, N),)](
        a, b, outs[0], outs[1], outs[2], i, f, s, m, outs[3], v, outs[4], pi, sz, n, BLOCK=N)
    selected = torch.maximum(a, b) + i * f + s
    nan = torch.exp(a * pi) + torch.abs(b - sz)
    pid = torch.arange(n) // N
    expected = [selected, nan, torch.sqrt(torch.abs(selected)) + m,
                torch.minimum(nan, selected) * v, (torch.arange(n) + pid).float()]
    for got, want in zip(outs, expected):
        torch.testing.assert_close(got, want)
    signature = re.search(r"__kernel void \w+\(([^)]*)\)", compiled.asm["cl"]).group(1)
    params = [p.split()[-1].lstrip("*") for p in signature.split(",")]
    assert len(set(params)) == len(params)
    assert not any(is_reserved(p) for p in params), params


def _header_identifiers(path):
    """Functions, macros and typedefs declared by an OpenCL C header."""
    with open(path) as f:
        text = f.read()
    names = set(re.findall(r"__ovld[^;(]*?\b([A-Za-z_]\w*)\s*\(", text))
    names |= set(re.findall(r"#define\s+([A-Za-z_]\w*)", text))
    names |= set(re.findall(r"^typedef[^;{]*?\b([A-Za-z_]\w*)\s*;", text, re.M))
    names |= set(re.findall(r"^}\s*([A-Za-z_]\w*)\s*;", text, re.M))     # typedef struct {...} name;
    return names


_HEADERS = sorted(glob.glob("/usr/share/pocl/include/opencl-c*.h")
                  + glob.glob("/usr/lib/llvm-*/lib/clang/*/include/opencl-c*.h"))


@pytest.mark.skipif(not _HEADERS, reason="no OpenCL C header of PoCL or clang on this machine")
def test_no_identifier_of_the_opencl_headers_is_handed_out():
    names = set()
    for path in _HEADERS:
        names |= _header_identifiers(path)
    table = NameTable()
    handed_out = {name for name in sorted(names) if table.fresh(name) == name}
    assert not handed_out


@pytest.mark.parametrize("wanted, printed", [
    ("kernel", "kernel_1"), ("float4", "float4_1"), ("cl_mem", "v_cl_mem"),
    ("M_PI", "M_PI_1"), ("offs", "offs"), ("vstore_half8_rtz", "vstore_half8_rtz_1"),
    ("half_width", "half_width")])
def test_name_table_renames_only_what_it_must(wanted, printed):
    assert NameTable().fresh(wanted) == printed


def test_helper_names_are_not_handed_out():
    from emitter_opencl.helpers import HELPER_NAMES
    table = NameTable(reserved=set(HELPER_NAMES))
    for name in ("tanh_float4", "maximum_double8", "div_rz_float", "exact_for_float"):
        assert table.fresh(name) != name


def test_hlo_kernels_named_like_opencl_words_are_prefixed():
    from types import SimpleNamespace
    from triton_spirv.hlo.compile import kernel_name
    assert [kernel_name(SimpleNamespace(name=n)) for n in ("half", "dot", "fusion.1", "tanh")] \
        == ["k_half", "k_dot", "fusion_1", "k_tanh"]
