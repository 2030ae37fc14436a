"""End to end: @triton.jit kernels launched with kernel[grid](...) on the OpenCL device,
checked against torch."""
import pytest
import torch

import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def run_add(x, y, block):
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block)
    return out


@pytest.mark.parametrize("size", [1, 127, 98432, 2**24 + 3])
def test_vector_add_sizes(size):
    x = torch.rand(size, device=DEVICE)
    y = torch.rand(size, device=DEVICE)
    torch.testing.assert_close(run_add(x, y, 1024), x + y, rtol=0, atol=0)


@pytest.mark.parametrize("block", [64, 128, 256, 512, 1024, 2048, 4096])
def test_vector_add_blocks(block):
    size = 10007
    x = torch.rand(size, device=DEVICE)
    y = torch.rand(size, device=DEVICE)
    torch.testing.assert_close(run_add(x, y, block), x + y, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.int32, torch.float32, torch.float16])
def test_vector_add_dtypes(dtype):
    size = 3001
    if dtype.is_floating_point:
        x = torch.randn(size, device=DEVICE).to(dtype)
        y = torch.randn(size, device=DEVICE).to(dtype)
    else:
        x = torch.randint(-2**30, 2**30, (size,), dtype=dtype)
        y = torch.randint(-2**30, 2**30, (size,), dtype=dtype)
    torch.testing.assert_close(run_add(x, y, 256), x + y, rtol=0, atol=0)


def test_vector_add_in_place_and_storage_offset():
    base = torch.rand(5000, device=DEVICE)
    x = base[7:]  # non-zero storage offset
    y = torch.rand(x.numel(), device=DEVICE)
    expected = x + y
    n = x.numel()
    add_kernel[(triton.cdiv(n, 512),)](x, y, x, n, BLOCK=512)  # in place: out aliases x
    torch.testing.assert_close(x, expected, rtol=0, atol=0)
    assert torch.equal(base[:7], base[:7])


@triton.jit
def scalar_loop_kernel(x_ptr, out_ptr, n, reps, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    acc = tl.zeros((BLOCK,), tl.float32)
    scale = 1.0
    for i in range(reps):
        acc += x * scale
        scale = scale * 0.5
    tl.store(out_ptr + offs, acc, mask=mask)


def test_scalar_loop():
    x = torch.rand(1000, device=DEVICE)
    out = torch.empty_like(x)
    reps = 5
    scalar_loop_kernel[(triton.cdiv(1000, 128),)](x, out, 1000, reps, BLOCK=128)
    expected = x * sum(0.5 ** i for i in range(reps))
    torch.testing.assert_close(out, expected)


@triton.jit
def add_2d_kernel(x_ptr, y_ptr, out_ptr, M, N, stride_xm, stride_ym, stride_om,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :], mask=mask, other=0.0)
    y = tl.load(y_ptr + rows[:, None] * stride_ym + cols[None, :], mask=cols[None, :] < N, other=0.0)
    out = x * 2.0 + y
    tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :], out, mask=mask)


@pytest.mark.parametrize("shape", [(1, 1), (37, 53), (64, 64), (130, 7)])
def test_2d_tiles_with_masks_and_broadcast(shape):
    M, N = shape
    x = torch.rand(M, N + 3, device=DEVICE)[:, :N]  # row stride N + 3
    y = torch.rand(N, device=DEVICE)
    out = torch.full((M, N), -1.0, device=DEVICE)
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 32))
    add_2d_kernel[grid](x, y, out, M, N, x.stride(0), 0, out.stride(0), BLOCK_M=16, BLOCK_N=32)
    torch.testing.assert_close(out, x * 2.0 + y[None, :])


@triton.jit
def gather_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    # reversed and wrapped-around offsets: no block structure, the gather path
    src = (n - 1 - offs) % n
    x = tl.load(x_ptr + src, mask=mask, other=0.0)
    tl.store(out_ptr + (offs * 7) % n, x, mask=(offs % 3 != 1) & mask)


def test_gather_scatter_paths():
    n = 999  # 999 and 7 are coprime: (offs * 7) % n is a permutation
    x = torch.rand(n, device=DEVICE)
    out = torch.zeros(n, device=DEVICE)
    gather_kernel[(triton.cdiv(n, 128),)](x, out, n, BLOCK=128)
    offs = torch.arange(n)
    expected = torch.zeros(n)
    keep = offs % 3 != 1
    expected[((offs * 7) % n)[keep]] = x[((n - 1 - offs) % n)[keep]]
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


@triton.jit
def scalar_ptr_kernel(x_ptr, out_ptr, n):
    pid = tl.program_id(0)
    v = tl.load(x_ptr + pid)
    if v > 0.5:
        r = v * 10.0
    else:
        r = -v
    tl.store(out_ptr + pid, r, mask=pid < n)


def test_scalar_pointers_and_if():
    x = torch.rand(300, device=DEVICE)
    out = torch.zeros_like(x)
    scalar_ptr_kernel[(300,)](x, out, 300)
    torch.testing.assert_close(out, torch.where(x > 0.5, x * 10.0, -x))


@triton.jit
def grid_3d_kernel(out_ptr, X, Y):
    x = tl.program_id(0)
    y = tl.program_id(1)
    z = tl.program_id(2)
    idx = (z * Y + y) * X + x
    val = x + 100 * y + 10000 * z + 1000000 * tl.num_programs(0) + 0 * tl.num_programs(2)
    tl.store(out_ptr + idx, val)


def test_program_ids_and_num_programs_3d():
    X, Y, Z = 5, 3, 2
    out = torch.zeros(X * Y * Z, dtype=torch.int32)
    grid_3d_kernel[(X, Y, Z)](out, X, Y)
    z, y, x = torch.meshgrid(torch.arange(Z), torch.arange(Y), torch.arange(X), indexing="ij")
    expected = (x + 100 * y + 10000 * z + 1000000 * X).flatten().to(torch.int32)
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


@triton.jit
def while_kernel(out_ptr, limit):
    i = 0
    total = 0
    while total < limit:
        i += 1
        total += i
    tl.store(out_ptr + tl.program_id(0), total + i * 1000)


def test_while_loop():
    out = torch.zeros(4, dtype=torch.int32)
    while_kernel[(4,)](out, 20)
    i, total = 0, 0
    while total < 20:
        i += 1
        total += i
    assert out.tolist() == [total + i * 1000] * 4


def test_generated_cl_copies_tiles_with_vectors():
    x = torch.rand(5000)
    y = torch.rand(5000)
    out = torch.empty_like(x)
    # The CPU shape (one work-item per program) copies rows with vectors; the GPU shape
    # keeps the work-group's async copies.
    compiled = add_kernel[(triton.cdiv(5000, 1024),)](x, y, out, 5000, BLOCK=1024, opencl_target="cpu")
    assert torch.equal(out, x + y)
    source = compiled.asm["cl"]
    assert "vload16(0, x_ptr" in source and "async_work_group_copy" not in source
    assert "__local float" in source
    assert "__kernel void add_kernel" in source
    for stage in ("ttir", "linalg", "memref", "cl"):
        assert compiled.asm[stage], stage


def test_generated_cl_names_values_by_role():
    """A C variable carries a Python name only when it is that Python value: the mask's
    bound, the loads' extent, the slices of the loops and the addresses that the
    direct path compares are named by their role."""
    x, y = torch.rand(5000), torch.rand(5000)
    out = torch.empty_like(x)
    compiled = add_kernel[(triton.cdiv(5000, 1024),)](x, y, out, 5000, BLOCK=1024, opencl_target="cpu")
    assert torch.equal(out, x + y)
    lines = [line.strip() for line in compiled.asm["cl"].splitlines()]
    # On CPU targets the program is the variable of the work-group's program loop.
    assert "int pid = (int)program;" in lines
    assert "long mask_bound = (long)n - offs;" in lines
    assert "long extent = min(max(mask_bound, 0L), 1024L);" in lines
    assert "bool is_partial = extent != 1024;" in lines
    assert "float16 x_vec = vload16(0, x_ptr + (offs + i));" in lines
    assert "float16 y_vec = vload16(0, y_ptr + (offs + i));" in lines
    assert "long x_ptr_start = x_ptr_addr + start_bytes;" in lines
    assert "long out_ptr_end = out_ptr_addr + end_bytes;" in lines
    # Before: `long mask = (long)n;`, `long x = max(mask_1, 0L);`, `float16 x = vload16(...)`.
    assert not any(line.startswith(("long mask ", "long x ", "bool x ", "float16 x "))
                   for line in lines)
    assert not any("_ptr_block" in line for line in lines)
    torch.testing.assert_close(out, x + y)
