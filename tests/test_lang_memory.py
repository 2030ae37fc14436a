"""Triton language, memory: loads/stores with masks, `other` and strides; atomics
(every rmw kind, int and float, masks, old values, contention from many programs,
the layer-norm spin lock); tensor descriptors; loops with pointer iter-args (the matmul
idiom), pointers chosen by `if`, wrap-around offsets; unsupported pointer casts."""

import pytest
import torch

import triton
import triton.language as tl


@triton.jit
def strided_copy_kernel(x_ptr, out_ptr, M, N, sxm, sxn, BM: tl.constexpr, BN: tl.constexpr,
                        OTHER: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * sxm + rn[None, :] * sxn, mask=mask, other=OTHER,
                cache_modifier=".cg", eviction_policy="evict_last")
    # every element of the tile is written: masked-off ones show `other`
    tl.store(out_ptr + rm[:, None] * (tl.num_programs(1) * BN) + rn[None, :], x,
             eviction_policy="evict_first")


@pytest.mark.parametrize("M,N,transposed,other", [(37, 53, False, -1.0), (64, 20, True, 7.0),
                                                  (5, 3, True, 0.0)])
def test_masked_strided_loads(M, N, transposed, other):
    base = torch.randn(N, M).t() if transposed else torch.randn(M, N)
    BM, BN = 16, 32
    grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
    out = torch.empty(grid[0] * BM, grid[1] * BN)
    strided_copy_kernel[grid](base, out, M, N, base.stride(0), base.stride(1), BM=BM, BN=BN,
                              OTHER=other)
    expected = torch.full_like(out, other)
    expected[:M, :N] = base
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


@triton.jit
def half_tile_kernel(x_ptr, out_ptr, M, N, sxm, som, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * sxm + rn[None, :], mask=mask, other=-3.0)
    tl.store(out_ptr + rm[:, None] * som + rn[None, :], x * 2, mask=mask)


# f16 rows move 16 elements per vload_half16 / vstore_half16_rte, the rest of each row
# (N not a multiple of 16, partial edge tiles) one element at a time. In the GPU shape the
# work-items share the loads element by element (memref_stage/shared_copies.py).
@pytest.mark.parametrize("M,N", [(37, 53), (64, 128), (5, 3), (20, 17)])
def test_f16_tiles_in_vectors_and_tails(M, N):
    x = torch.randn(M, N + 5).to(torch.float16)[:, :N]  # rows 5 elements apart
    out = torch.full((M, N + 3), 9.0, dtype=torch.float16)
    compiled = half_tile_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 64))](
        x, out, M, N, x.stride(0), out.stride(0), BM=16, BN=64)
    expected = torch.full_like(out, 9.0)
    expected[:, :N] = x * 2
    torch.testing.assert_close(out, expected, rtol=0, atol=0)
    source = compiled.asm["cl"]
    # The CPU shape moves the rows with vload_half16 / vstore_half16_rte; in the GPU
    # shape each work-item loads and stores the elements it owns (owner_copies.py).
    assert ("vload_half16" in source and "vstore_half16_rte" in source) or \
        compiled.metadata.local_size[0] > 1


@triton.jit
def atomic_kernel(ptr, val_ptr, old_ptr, n, N: tl.constexpr, OP: tl.constexpr):
    offs = tl.arange(0, N)
    mask = offs < n
    v = tl.load(val_ptr + offs, mask=mask)
    p = ptr + offs
    if OP == "add":
        old = tl.atomic_add(p, v, mask=mask, sem="relaxed")
    elif OP == "max":
        old = tl.atomic_max(p, v, mask=mask, sem="acq_rel", scope="gpu")
    elif OP == "min":
        old = tl.atomic_min(p, v, mask=mask)
    elif OP == "and":
        old = tl.atomic_and(p, v, mask=mask)
    elif OP == "or":
        old = tl.atomic_or(p, v, mask=mask)
    elif OP == "xor":
        old = tl.atomic_xor(p, v, mask=mask)
    else:
        old = tl.atomic_xchg(p, v, mask=mask)
    tl.store(old_ptr + offs, old, mask=mask)


ATOMIC_CASES = [("add", torch.int32), ("add", torch.float32), ("max", torch.int32),
                ("max", torch.float32), ("min", torch.float32), ("min", torch.int64),
                ("and", torch.int32), ("or", torch.int64), ("xor", torch.int32),
                ("xchg", torch.float32), ("max", torch.uint32), ("add", torch.float64)]


@pytest.mark.parametrize("op,dtype", ATOMIC_CASES)
def test_atomic_rmw_returns_old_values(op, dtype):
    n, N = 27, 32
    gen = torch.Generator().manual_seed(0)
    if dtype.is_floating_point:
        start = torch.randn(N, generator=gen).to(dtype)
        val = torch.randn(N, generator=gen).to(dtype)
    elif dtype == torch.uint32:
        start = torch.randint(0, 2**31, (N,), generator=gen).to(torch.int64)
        start[::2] += 2**31
        val = torch.randint(0, 2**31, (N,), generator=gen).to(torch.int64)
        val[::3] += 2**31
        start, val = start.to(torch.uint32), val.to(torch.uint32)
    else:
        start = torch.randint(-1000, 1000, (N,), generator=gen).to(dtype)
        val = torch.randint(-1000, 1000, (N,), generator=gen).to(dtype)
    mem = start.clone()
    old = torch.zeros(N, dtype=dtype)
    atomic_kernel[(1,)](mem, val, old, n, N=N, OP=op)
    s, v = start[:n], val[:n]
    if dtype == torch.uint32:
        s, v = s.to(torch.int64), val[:n].to(torch.int64)
    expected = {"add": lambda: s + v, "max": lambda: torch.maximum(s, v),
                "min": lambda: torch.minimum(s, v), "and": lambda: s & v,
                "or": lambda: s | v, "xor": lambda: s ^ v, "xchg": lambda: v}[op]()
    assert torch.equal(mem[:n].to(expected.dtype), expected)
    assert torch.equal(mem[n:], start[n:])  # masked off
    assert torch.equal(old[:n], start[:n])


@triton.jit
def contention_kernel(counter_ptr, fsum_ptr, max_ptr, x_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.atomic_add(counter_ptr, 1)                               # scalar, one per program
    tl.atomic_add(fsum_ptr + tl.zeros((BLOCK,), tl.int32), x)   # a whole tile on one address
    tl.atomic_max(max_ptr, tl.max(x, 0))


def test_atomics_contention_many_programs():
    programs, BLOCK = 200, 16
    x = torch.randint(-50, 50, (programs * BLOCK,)).float()
    counter = torch.zeros(1, dtype=torch.int32)
    fsum = torch.zeros(1)
    mx = torch.full((1,), -1e9)
    contention_kernel[(programs,)](counter, fsum, mx, x, BLOCK=BLOCK)
    assert counter.item() == programs
    assert fsum.item() == x.sum().item()  # integers in float: exact in any order
    assert mx.item() == x.max().item()


@triton.jit
def cas_kernel(ptr, cmp_ptr, val_ptr, old_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    old = tl.atomic_cas(ptr + offs, tl.load(cmp_ptr + offs), tl.load(val_ptr + offs))
    tl.store(old_ptr + offs, old)


@pytest.mark.parametrize("dtype", [torch.int32, torch.float32, torch.int64])
def test_atomic_cas_tensor(dtype):
    mem = torch.arange(8).to(dtype)
    cmp = torch.tensor([0, 9, 2, 9, 4, 9, 6, 9]).to(dtype)
    val = torch.full((8,), 100).to(dtype)
    old = torch.empty(8, dtype=dtype)
    cas_kernel[(1,)](mem, cmp, val, old, N=8)
    assert torch.equal(old, torch.arange(8).to(dtype))
    assert mem.tolist() == [100, 1, 100, 3, 100, 5, 100, 7]


@triton.jit
def spin_lock_kernel(lock_ptr, count_ptr, acc_ptr, x_ptr, BLOCK: tl.constexpr):
    # the layer-norm backward idiom: serialize read-modify-write of a shared tile
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + pid * BLOCK + offs)
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    count = tl.load(count_ptr)
    if count == 0:
        tl.atomic_xchg(count_ptr, 1)
    else:
        x += tl.load(acc_ptr + offs)
    tl.store(acc_ptr + offs, x)
    tl.debug_barrier()
    tl.atomic_xchg(lock_ptr, 0)


def test_spin_lock():
    programs, BLOCK = 64, 32
    x = torch.randint(-8, 8, (programs, BLOCK)).float()
    lock = torch.zeros(1, dtype=torch.int32)
    count = torch.zeros(1, dtype=torch.int32)
    acc = torch.full((BLOCK,), 12345.0)
    spin_lock_kernel[(programs,)](lock, count, acc, x, BLOCK=BLOCK)
    assert torch.equal(acc, x.sum(0))
    assert lock.item() == 0


@triton.jit
def descriptor_kernel(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    o_desc = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1],
                                       block_shape=[BM, BN])
    pm = tl.program_id(0) * BM
    pn = tl.program_id(1) * BN
    tile = x_desc.load([pm, pn])   # out-of-bounds elements read as zero
    o_desc.store([pm, pn], tile * 2 + 1)


def test_tensor_descriptors():
    triton.set_allocator(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8))
    M, N = 40, 24
    x = torch.randn(M, N)
    out = torch.full((M, N), -7.0)
    descriptor_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 16))](x, out, M, N, BM=16, BN=16)
    torch.testing.assert_close(out, x * 2 + 1)


@triton.jit
def pointer_loop_kernel(x_ptr, out_ptr, n_rows, N: tl.constexpr, FLIP: tl.constexpr):
    offs = tl.arange(0, N)
    ptrs = x_ptr + offs
    acc = tl.zeros((N,), tl.float32)
    for r in tl.range(0, n_rows):
        mask = offs < N - r                    # loop-index-dependent mask
        acc += tl.load(ptrs, mask=mask, other=0.0)
        ptrs += N                              # pointer tensor carried by the loop
    if FLIP:
        dst = out_ptr + (N - 1 - offs)
    else:
        dst = out_ptr + offs
    tl.store(dst, acc)
    # wrap-around offsets (the matmul tutorial's `% M`)
    wrapped = tl.load(x_ptr + (offs + 5) % N)
    tl.store(out_ptr + N + offs, wrapped)
    # offsets through extsi / divsi
    half = tl.load(x_ptr + (offs.to(tl.int64) // 2))
    tl.store(out_ptr + 2 * N + offs, half)
    # nested static loop and a scalar pointer chosen by if
    total = 0.0
    for i in tl.static_range(3):
        p = x_ptr + i if i % 2 == 0 else x_ptr + N + i
        total += tl.load(p)
    tl.store(out_ptr + 3 * N, total)


@pytest.mark.parametrize("flip", [False, True])
def test_loops_with_pointer_iter_args(flip):
    N, rows = 16, 6
    x = torch.randn(rows, N)
    out = torch.zeros(3 * N + 1)
    pointer_loop_kernel[(1,)](x, out, rows, N=N, FLIP=flip)
    masks = torch.arange(N)[None, :] < (N - torch.arange(rows))[:, None]
    acc = (x * masks).sum(0)
    torch.testing.assert_close(out[:N], acc.flip(0) if flip else acc, rtol=1e-6, atol=1e-6)
    flat = x.reshape(-1)
    torch.testing.assert_close(out[N:2 * N], flat[(torch.arange(N) + 5) % N])
    torch.testing.assert_close(out[2 * N:3 * N], flat[torch.arange(N) // 2])
    torch.testing.assert_close(out[3 * N], flat[0] + flat[N + 1] + flat[2], rtol=1e-6, atol=1e-6)


@triton.jit
def while_pointer_kernel(x_ptr, out_ptr, n, N: tl.constexpr):
    offs = tl.arange(0, N)
    ptrs = x_ptr + offs
    acc = tl.zeros((N,), tl.float32)
    i = 0
    while i < n:
        acc += tl.load(ptrs)
        ptrs += N
        i += 1
    tl.store(out_ptr + offs, acc)


def test_while_loop_pointer_tensor():
    x = torch.randn(5, 8)
    out = torch.empty(8)
    while_pointer_kernel[(1,)](x, out, 5, N=8)
    torch.testing.assert_close(out, x.sum(0), rtol=1e-6, atol=1e-6)


@triton.jit
def pointer_table_kernel(ptrs_ptr, out_ptr, N: tl.constexpr):
    # Pointers loaded from memory (tt.int_to_ptr): zero-copy devices only.
    p = tl.load(ptrs_ptr + tl.program_id(0)).to(tl.pointer_type(tl.float32))
    tl.store(out_ptr + tl.program_id(0) * N + tl.arange(0, N), tl.load(p + tl.arange(0, N)))


@triton.jit
def pointer_tile_kernel(ptrs_ptr, out_ptr, N: tl.constexpr):
    # A tensor of pointers made from integers, written through and read back as integers.
    offs = tl.arange(0, N)
    p = tl.load(ptrs_ptr + offs).to(tl.pointer_type(tl.int32))
    tl.store(p, offs)
    tl.store(out_ptr + offs, p.to(tl.int64, bitcast=True))


def _zero_copy():
    from launcher import get_device
    return get_device().zero_copy


def test_pointer_table():
    if not _zero_copy():
        pytest.skip("pointers from integers need a zero-copy device")
    xs = [torch.randn(8) for _ in range(3)]
    table = torch.tensor([x.data_ptr() for x in xs], dtype=torch.int64)
    out = torch.empty(24)
    pointer_table_kernel[(3,)](table, out, N=8)
    torch.testing.assert_close(out, torch.cat(xs))


def test_pointer_tile_and_pointer_to_int():
    if not _zero_copy():
        pytest.skip("pointers from integers need a zero-copy device")
    target = torch.zeros(16, dtype=torch.int32)
    order = torch.randperm(16)
    table = torch.tensor([target.data_ptr() + 4 * int(i) for i in order], dtype=torch.int64)
    out = torch.zeros(16, dtype=torch.int64)
    pointer_tile_kernel[(1,)](table, out, N=16)
    assert torch.equal(out, table)
    expected = torch.zeros(16, dtype=torch.int32)
    expected[order] = torch.arange(16, dtype=torch.int32)
    assert torch.equal(target, expected)
