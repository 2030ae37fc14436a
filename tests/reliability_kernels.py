"""Small Triton kernels, one or more per family the test suite covers, with a launch
that checks the result against torch. Shared by the Oclgrind, concurrency and
numerics tests; sizes are small enough to simulate under Oclgrind.

Each entry of CASES is (family, name, run); run() launches and asserts, and returns
the compiled kernel.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def add_2d_kernel(x_ptr, y_ptr, out_ptr, M, N, stride_xm, stride_om,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :], mask=mask, other=0.0)
    y = tl.load(y_ptr + cols[None, :], mask=cols[None, :] < N, other=0.0)
    tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :], x * 2.0 + y, mask=mask)


@triton.jit
def transpose_kernel(x_ptr, out_ptr, M, N, stride_xm, stride_om,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :], mask=mask, other=0.0)
    # out[c, r] = x[r, c]: a strided (column) access on the store side
    tl.store(out_ptr + cols[None, :] * stride_om + rows[:, None], x, mask=mask)


@triton.jit
def gather_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    src = (n - 1 - offs) % n
    x = tl.load(x_ptr + src, mask=mask, other=0.0)
    tl.store(out_ptr + (offs * 7) % n, x, mask=(offs % 3 != 1) & mask)


@triton.jit
def wrapped_clamped_kernel(x_ptr, out_ptr, n, m, BLOCK: tl.constexpr):
    # Blocks behind run-time guards (versioning.py): whole blocks where `offs` stays
    # below m, element loads for the blocks that wrap or clamp.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    wrapped = tl.load(x_ptr + offs % m)
    clamped = tl.load(x_ptr + tl.where(offs < m, offs, 0))
    tl.store(out_ptr + offs, wrapped + 2 * clamped, mask=offs < n)


@triton.jit
def row_sum_max_kernel(x_ptr, sum_ptr, max_ptr, argmax_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    tl.store(sum_ptr + row, tl.sum(x, axis=0))
    xm = tl.where(mask, x, -float("inf"))
    tl.store(max_ptr + row, tl.max(xm, axis=0))
    tl.store(argmax_ptr + row, tl.argmax(xm, axis=0))


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * stride + cols, num / tl.sum(num, axis=0), mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < K - k) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def scalar_ptr_kernel(x_ptr, out_ptr, n):
    pid = tl.program_id(0)
    v = tl.load(x_ptr + pid)
    if v > 0.5:
        r = v * 10.0
    else:
        r = -v
    tl.store(out_ptr + pid, r, mask=pid < n)


@triton.jit
def cast_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, (x.to(tl.float32) * 1.5).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def while_kernel(out_ptr, limit):
    i = 0
    total = 0
    while total < limit:
        i += 1
        total += i
    tl.store(out_ptr + tl.program_id(0), total + i * 1000)


@triton.jit
def grid_3d_kernel(out_ptr, X, Y):
    x = tl.program_id(0)
    y = tl.program_id(1)
    z = tl.program_id(2)
    tl.store(out_ptr + (z * Y + y) * X + x, x + 100 * y + 10000 * z)


# ---------------------------------------------------------------------------------------
# Launches with checks


def _seeded(seed):
    return torch.Generator().manual_seed(seed)


def run_add(n=1000, block=256, dtype=torch.float32, bounds_check=False, seed=0):
    g = _seeded(seed)
    x = torch.randn(n, generator=g).to(dtype)
    y = torch.randn(n, generator=g).to(dtype)
    out = torch.empty_like(x)
    kw = {"bounds_check": True} if bounds_check else {}
    k = add_kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block, **kw)
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)
    return k


def run_add_in_place(n=777, block=128):
    base = torch.rand(n + 9)
    x = base[9:]
    y = torch.rand(n)
    expected = x + y
    k = add_kernel[(triton.cdiv(n, block),)](x, y, x, n, BLOCK=block)
    torch.testing.assert_close(x, expected, rtol=0, atol=0)
    return k


def run_add_2d(M=37, N=53):
    g = _seeded(1)
    x = torch.rand(M, N + 3, generator=g)[:, :N]
    y = torch.rand(N, generator=g)
    out = torch.full((M, N), -1.0)
    k = add_2d_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 32))](x, y, out, M, N, x.stride(0), out.stride(0),
                                                               BLOCK_M=16, BLOCK_N=32)
    torch.testing.assert_close(out, x * 2.0 + y[None, :])
    return k


def run_transpose(M=21, N=34):
    x = torch.rand(M, N + 2, generator=_seeded(2))[:, :N]
    out = torch.full((N, M), -1.0)
    k = transpose_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 16))](x, out, M, N, x.stride(0), out.stride(0),
                                                                  BLOCK_M=16, BLOCK_N=16)
    torch.testing.assert_close(out, x.t(), rtol=0, atol=0)
    return k


def run_gather(n=999, block=128):
    x = torch.rand(n, generator=_seeded(3))
    out = torch.zeros(n)
    k = gather_kernel[(triton.cdiv(n, block),)](x, out, n, BLOCK=block)
    offs = torch.arange(n)
    expected = torch.zeros(n)
    keep = offs % 3 != 1
    expected[((offs * 7) % n)[keep]] = x[((n - 1 - offs) % n)[keep]]
    torch.testing.assert_close(out, expected, rtol=0, atol=0)
    return k


def run_wrapped_clamped(n=100, m=37, block=16):
    x = torch.rand(m, generator=_seeded(4))
    out = torch.zeros(n)
    k = wrapped_clamped_kernel[(triton.cdiv(n, block),)](x, out, n, m, BLOCK=block)
    offs = torch.arange(n)
    expected = x[offs % m] + 2 * x[torch.where(offs < m, offs, 0)]
    torch.testing.assert_close(out, expected, rtol=0, atol=0)
    return k


def run_reductions(rows=6, cols=100, block=128):
    x = torch.randn(rows, cols + 4, generator=_seeded(4))[:, :cols]
    s = torch.empty(rows)
    m = torch.empty(rows)
    am = torch.empty(rows, dtype=torch.int32)
    k = row_sum_max_kernel[(rows,)](x, s, m, am, cols, x.stride(0), BLOCK=block)
    torch.testing.assert_close(s, x.sum(1), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(m, x.max(1).values, rtol=0, atol=0)
    assert am.tolist() == x.argmax(1).to(torch.int32).tolist()
    return k


def run_softmax(rows=5, cols=70, block=128):
    x = torch.randn(rows, cols, generator=_seeded(5)) * 4
    out = torch.empty_like(x)
    k = softmax_kernel[(rows,)](x, out, cols, x.stride(0), BLOCK=block)
    torch.testing.assert_close(out, torch.softmax(x, 1), rtol=1e-5, atol=1e-6)
    return k


def run_matmul(M=40, N=36, K=48, bm=32, bn=32, bk=16, dtype=torch.float32):
    g = _seeded(6)
    a = torch.randn(M, K, generator=g).to(dtype)
    b = torch.randn(K, N, generator=g).to(dtype)
    c = torch.empty(M, N)
    k = matmul_kernel[(triton.cdiv(M, bm), triton.cdiv(N, bn))](a, b, c, M, N, K, a.stride(0), b.stride(0),
                                                               c.stride(0), BM=bm, BN=bn, BK=bk)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-4, atol=1e-4)
    return k


def run_scalar_ptr(n=40):
    x = torch.rand(n, generator=_seeded(7))
    out = torch.zeros_like(x)
    k = scalar_ptr_kernel[(n,)](x, out, n)
    torch.testing.assert_close(out, torch.where(x > 0.5, x * 10.0, -x))
    return k


def run_cast(src=torch.float16, dst=torch.bfloat16, n=300, block=128):
    x = (torch.randn(n, generator=_seeded(8)) * 3).to(src)
    out = torch.empty(n, dtype=dst)
    k = cast_kernel[(triton.cdiv(n, block),)](x, out, n, BLOCK=block)
    torch.testing.assert_close(out, (x.float() * 1.5).to(dst), rtol=0, atol=0)
    return k


def run_while(programs=3, limit=20):
    out = torch.zeros(programs, dtype=torch.int32)
    k = while_kernel[(programs,)](out, limit)
    i = total = 0
    while total < limit:
        i += 1
        total += i
    assert out.tolist() == [total + i * 1000] * programs
    return k


def run_grid_3d(X=3, Y=2, Z=2):
    out = torch.zeros(X * Y * Z, dtype=torch.int32)
    k = grid_3d_kernel[(X, Y, Z)](out, X, Y)
    z, y, x = torch.meshgrid(torch.arange(Z), torch.arange(Y), torch.arange(X), indexing="ij")
    assert out.tolist() == (x + 100 * y + 10000 * z).flatten().tolist()
    return k


def run_early_return(rows=4, cols=40):
    """Cross entropy whose ignored rows return early (kernel of test_lang_control_flow)."""
    from test_lang_control_flow import cross_entropy_fwd_kernel
    logits = torch.randn(rows, cols, generator=_seeded(0))
    labels = torch.tensor([3, -100, 0, 39])
    want = torch.nn.functional.cross_entropy(logits, labels, ignore_index=-100,
                                             reduction="none")
    loss = torch.empty(rows)
    k = cross_entropy_fwd_kernel[(rows,)](logits, cols, labels, loss, cols, -100, BLOCK=16)
    torch.testing.assert_close(loss, want, rtol=1e-5, atol=1e-5)
    return k


def run_merged_returns(n=16):
    """Returns on several paths that lift-cf-to-scf merges (tiles of ub.poison on the
    paths that return stay initialized); kernel of test_lang_control_flow."""
    from test_lang_control_flow import nested_return_kernel
    x = torch.randn(n, generator=_seeded(5))
    for a, b in [(2, 0), (2, 3), (0, 3), (0, 0)]:
        out = torch.full((n,), 42.0)
        k = nested_return_kernel[(1,)](x, out, a, b, N=n)
        want = (x + 1 if b > 0 else x * 3) if a > 0 else (torch.full((n,), 42.0) if b > 0 else x)
        assert torch.equal(out, want)
    return k


def run_pointer_choice(n_a=21, n=51):
    """Loads through pointers chosen per element (kernel of test_lang_pointer_choice)."""
    from test_lang_pointer_choice import where_pointers_kernel
    a, b = torch.randn(n_a, generator=_seeded(1)), torch.randn(n - n_a, generator=_seeded(2))
    out = torch.empty(n)
    k = where_pointers_kernel[(4,)](a, b, out, n_a, n, BLOCK=16)
    assert torch.equal(out, torch.cat([a, b]))
    return k


def run_nested_loops(OH=5, OW=6, K=2):
    """Max pooling: nested loops around one tile accumulator (test_lang_control_flow).
    (Not its convolution: `//` and `%` of the output index compile to an LLVM `freeze`
    that Oclgrind 21.10's uninitialized-value checker does not support.)"""
    from test_lang_control_flow import max_pool2d_kernel
    x = torch.randn(OH * K, OW * K, generator=_seeded(3))
    out = torch.empty(OH, OW)
    k = max_pool2d_kernel[(triton.cdiv(OH, 4), triton.cdiv(OW, 4))](x, out, OW * K, OH, OW,
                                                                    K=K, BH=4, BW=4)
    assert torch.equal(out, torch.nn.functional.max_pool2d(x[None, None], K)[0, 0])
    return k


CASES = [
    ("vector add", "add_masked_tail", lambda: run_add(1000, 256)),
    ("vector add", "add_exact_blocks", lambda: run_add(512, 128)),
    ("vector add", "add_in_place_offset", run_add_in_place),
    ("vector add", "add_int32", lambda: run_add(300, 64, torch.int32)),
    ("vector add", "add_bounds_checked", lambda: run_add(1000, 256, bounds_check=True)),
    ("2-D tiles", "add_2d_masks_strides", run_add_2d),
    ("2-D tiles", "transpose_strided_store", run_transpose),
    ("gather/scatter", "gather_scatter", run_gather),
    ("gather/scatter", "wrapped_clamped_blocks", run_wrapped_clamped),
    ("reductions", "sum_max_argmax", run_reductions),
    ("reductions", "softmax", run_softmax),
    ("dots", "matmul_f32_loop_pointers", run_matmul),
    ("dots", "matmul_f16_inputs", lambda: run_matmul(33, 32, 32, dtype=torch.float16)),
    ("scalar pointers", "scalar_ptr_if", run_scalar_ptr),
    ("f16/bf16", "cast_f16_to_bf16", run_cast),
    ("f16/bf16", "cast_bf16_to_f16", lambda: run_cast(torch.bfloat16, torch.float16)),
    ("control flow", "while_loop", run_while),
    ("control flow", "grid_3d", run_grid_3d),
    ("control flow", "early_return", run_early_return),
    ("control flow", "merged_returns", run_merged_returns),
    ("control flow", "nested_loops", run_nested_loops),
    ("pointer choice", "where_pointers", run_pointer_choice),
]
