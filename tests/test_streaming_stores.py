"""Streaming stores (triton_spirv/memref_stage/streaming_stores.py, the emitter's
`store_nontemporal_*` helpers, the SPIR-V stage's triton_spirv/spirv/nontemporal.py):
results against torch on both sides of the size threshold, on outputs aligned to the
vector and not, the kernels that keep ordinary stores, and the SPIR-V memory operand.
The IR rewrite itself: tests/filecheck/streaming_stores.mlir."""
import shutil
import subprocess

import pytest
import torch

import triton
import triton.language as tl
from triton_spirv.memref_stage.streaming_stores import STREAMING_BYTES
from triton_spirv.stages import memref_to_spirv
from triton_spirv.target import current_target

DEVICE = triton.runtime.driver.active.get_active_torch_device()
CPU_TARGET = current_target().is_cpu
BLOCK = 1024
# Enough elements that the launch stores more than the threshold, the last block partial.
LARGE = STREAMING_BYTES // 4 + 7


@triton.jit
def axpy_kernel(a, x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = a * x + y: a loop-invariant scalar broadcast in the streamed loop (a = 2:
    exact, fused into an fma or not)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    in_bounds = offs < n
    tl.store(out_ptr + offs, a * tl.load(x_ptr + offs, mask=in_bounds) + tl.load(y_ptr + offs, mask=in_bounds),
             mask=in_bounds)


@triton.jit
def add_rows_kernel(x_ptr, y_ptr, out_ptr, row_length, BLOCK: tl.constexpr):
    """A 2-D grid: program (i, j) adds block i of row j."""
    offs = tl.program_id(1) * row_length + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2.0 + tl.load(y_ptr + offs))


@triton.jit
def add_in_place_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, x + tl.load(y_ptr + offs, mask=offs < n), mask=offs < n)


def streams(compiled) -> bool:
    return "store_nontemporal_float16(" in compiled.asm["cl"]


def output(n: int, misaligned: bool) -> torch.Tensor:
    """An output of n floats; misaligned: one float past a 64-byte boundary, so that no
    16-float vector of it is aligned and every store takes the helper's plain path."""
    storage = torch.empty(n + 16, device=DEVICE)
    start = (-storage.data_ptr() // 4) % 16 + (1 if misaligned else 0)
    return storage[start:start + n]


@pytest.mark.parametrize("misaligned", [False, True], ids=["aligned", "misaligned"])
@pytest.mark.parametrize("n", [LARGE, 70000], ids=["above_threshold", "below_threshold"])
def test_add(n, misaligned):
    x, y = torch.rand(n, device=DEVICE), torch.rand(n, device=DEVICE)
    out = output(n, misaligned)
    compiled = axpy_kernel[(triton.cdiv(n, BLOCK),)](2.0, x, y, out, n, BLOCK=BLOCK)
    assert torch.equal(out, 2.0 * x + y)
    assert streams(compiled) == CPU_TARGET


def test_two_dimensional_grid():
    """The stored bytes count every dimension of the grid: 2 rows of 2049 blocks stream."""
    blocks, rows = STREAMING_BYTES // (4 * BLOCK * 2) + 1, 2
    x, y = torch.rand(rows, blocks * BLOCK, device=DEVICE), torch.rand(rows, blocks * BLOCK, device=DEVICE)
    out = torch.empty_like(x)
    compiled = add_rows_kernel[(blocks, rows)](x, y, out, blocks * BLOCK, BLOCK=BLOCK)
    assert torch.equal(out, x * 2.0 + y)
    assert streams(compiled) == CPU_TARGET


def test_in_place_update_keeps_ordinary_stores():
    """x is read by the kernel it is written by: its lines are in cache anyway."""
    x, y = torch.rand(LARGE, device=DEVICE), torch.rand(LARGE, device=DEVICE)
    expected = x + y
    compiled = add_in_place_kernel[(triton.cdiv(LARGE, BLOCK),)](x, y, LARGE, BLOCK=BLOCK)
    assert torch.equal(x, expected)
    assert not streams(compiled)


@pytest.mark.parametrize("options", [{"streaming_stores": False}, {"opencl_target": "gpu"},
                                     {"bounds_check": True, "program": "source"}],
                         ids=["option_off", "gpu_shape", "bounds_checked"])
def test_kept_ordinary(options):
    n = 70000
    x, y = torch.rand(n, device=DEVICE), torch.rand(n, device=DEVICE)
    out = torch.empty_like(x)
    compiled = axpy_kernel[(triton.cdiv(n, BLOCK),)](2.0, x, y, out, n, BLOCK=BLOCK, **options)
    assert torch.equal(out, 2.0 * x + y)
    assert not streams(compiled)


@pytest.mark.skipif(not CPU_TARGET, reason="streaming stores are made for CPU targets")
def test_spirv_marks_the_streaming_store(tmp_path):
    """Of vector add's vector stores (the direct path's two versions, the tiles' fills
    and copies), only the streaming version's store to out is Nontemporal; the module
    passes spirv-val."""
    n = 70000
    x, y = torch.rand(n, device=DEVICE), torch.rand(n, device=DEVICE)
    compiled = axpy_kernel[(triton.cdiv(n, BLOCK),)](2.0, x, y, torch.empty_like(x), n, BLOCK=BLOCK)
    spirv = memref_to_spirv(compiled.asm["memref"])
    stores = [line for line in spirv.assembly.splitlines() if "spirv.Store" in line and "vector<16xf32>" in line]
    marked = [line for line in stores if "Nontemporal" in line]
    assert len(stores) > 2 and len(marked) == 1 and '"CrossWorkgroup"' in marked[0]
    if shutil.which("spirv-val") is None:
        pytest.skip("spirv-val is not installed")
    path = tmp_path / "axpy.spv"
    path.write_bytes(spirv.binary)
    result = subprocess.run(["spirv-val", "--target-env", "opencl1.2", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
