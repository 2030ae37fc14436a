"""Triton language: pointers chosen between different buffers (`if pid == 0: p = a_ptr
elif ...`, `p = a_ptr if flag else b_ptr`, `tl.where(c, a_ptr + i, b_ptr + i)`), loaded
and stored through, as concatenate/stack kernels do. Compared with torch; what is not
supported fails naming the op and the Python line."""
import re

import pytest
import torch

import triton
import triton.language as tl


@triton.jit
def _segment(which, ptr0, ptr1, ptr2, n0, n1, n2):
    """The buffer of segment `which` of a concatenation, its length and its start."""
    if which == 0:
        ptr = ptr0
        n = n0
        start = 0
    elif which == 1:
        ptr = ptr1
        n = n1
        start = n0
    else:
        ptr = ptr2
        n = n2
        start = n0 + n1
    return ptr, n, start


@triton.jit
def cat3_kernel(a_ptr, b_ptr, c_ptr, out_ptr, n_a, n_b, n_c, BLOCK: tl.constexpr):
    """torch.cat of three 1-D tensors: program axis 1 picks the input."""
    src, n, start = _segment(tl.program_id(1), a_ptr, b_ptr, c_ptr, n_a, n_b, n_c)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + start + offs, tl.load(src + offs, mask=mask), mask=mask)


def test_concatenate_three_inputs():
    a, b, c = torch.randn(37), torch.randn(5), torch.randn(70)
    out = torch.empty(112)
    cat3_kernel[(triton.cdiv(70, 16), 3)](a, b, c, out, 37, 5, 70, BLOCK=16,
                                          bounds_check=True)
    torch.testing.assert_close(out, torch.cat([a, b, c]), rtol=0, atol=0)


@triton.jit
def split3_kernel(x_ptr, a_ptr, b_ptr, c_ptr, n_a, n_b, n_c, BLOCK: tl.constexpr):
    """torch.split into three outputs: program axis 1 picks the output written."""
    dst, n, start = _segment(tl.program_id(1), a_ptr, b_ptr, c_ptr, n_a, n_b, n_c)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(x_ptr + start + offs, mask=mask), mask=mask)


def test_split_into_three_outputs():
    x = torch.randn(60)
    a, b, c = torch.zeros(7), torch.zeros(33), torch.zeros(20)
    split3_kernel[(3, 3)](x, a, b, c, 7, 33, 20, BLOCK=16)
    for got, want in zip((a, b, c), torch.split(x, [7, 33, 20])):
        torch.testing.assert_close(got, want, rtol=0, atol=0)


@triton.jit
def stack_rows_kernel(a_ptr, b_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """torch.stack([a, b]) of 2-D tensors, one output tile per program; the source
    buffer is chosen by a scalar `if`, the tile stays a block copy."""
    which = tl.program_id(2)
    src = a_ptr if which == 0 else b_ptr
    rm = tl.program_id(0) * BM + tl.arange(0, BM)[:, None]
    rn = tl.program_id(1) * BN + tl.arange(0, BN)[None, :]
    mask = (rm < M) & (rn < N)
    tile = tl.load(src + rm * N + rn, mask=mask)
    tl.store(out_ptr + which * M * N + rm * N + rn, tile, mask=mask)


def test_stack_two_matrices():
    a, b = torch.randn(19, 23), torch.randn(19, 23)
    out = torch.empty(2, 19, 23)
    stack_rows_kernel[(2, 3, 2)](a, b, out, 19, 23, BM=16, BN=8)
    torch.testing.assert_close(out, torch.stack([a, b]), rtol=0, atol=0)


@triton.jit
def where_pointers_kernel(a_ptr, b_ptr, out_ptr, n_a, n, BLOCK: tl.constexpr):
    """Concatenation in one pass: lanes below n_a read `a`, the others `b`."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    src = tl.where(offs < n_a, a_ptr + offs, b_ptr + (offs - n_a))
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(src, mask=mask, other=-1.0), mask=mask)


def test_where_between_pointer_tensors():
    a, b = torch.randn(21), torch.randn(30)
    out = torch.full((51,), 99.0)
    # bounds-checked: lanes past `a` must not read it (nor lanes before 21 read `b`)
    where_pointers_kernel[(4,)](a, b, out, 21, 51, BLOCK=16, bounds_check=True)
    torch.testing.assert_close(out, torch.cat([a, b]), rtol=0, atol=0)


@triton.jit
def rows_from_two_matrices_kernel(a_ptr, b_ptr, out_ptr, split, M: tl.constexpr,
                                  N: tl.constexpr):
    """Row pointers chosen per row, then expanded, broadcast and transposed: the choice
    follows the shape ops."""
    i = tl.arange(0, M)
    j = tl.arange(0, N)
    rows = tl.where(i < split, a_ptr + i * N, b_ptr + (i - split) * N)
    p = rows[:, None] + j[None, :]
    tl.store(out_ptr + i[:, None] * N + j[None, :], tl.load(p))
    tl.store(out_ptr + M * N + j[:, None] * M + i[None, :], tl.load(tl.trans(p)) * 2)


def test_chosen_row_pointers_through_shape_ops():
    a, b = torch.randn(3, 4), torch.randn(5, 4)
    out = torch.zeros(2 * 8 * 4)
    rows_from_two_matrices_kernel[(1,)](a, b, out, 3, M=8, N=4, bounds_check=True)
    full = torch.cat([a, b])
    torch.testing.assert_close(out[:32].view(8, 4), full, rtol=0, atol=0)
    torch.testing.assert_close(out[32:].view(4, 8), full.t() * 2, rtol=0, atol=0)


@triton.jit
def reshape_choice_kernel(a_ptr, b_ptr, out_ptr, split):
    i = tl.arange(0, 8)
    p = tl.reshape(tl.where(i < split, a_ptr + i, b_ptr + i), (2, 4))
    tl.store(out_ptr + tl.reshape(i, (2, 4)), tl.load(p))


def test_reshape_of_chosen_pointers():
    a, b, out = torch.randn(8), torch.randn(8), torch.zeros(8)
    reshape_choice_kernel[(1,)](a, b, out, 3)
    torch.testing.assert_close(out, torch.where(torch.arange(8) < 3, a, b), rtol=0, atol=0)


@triton.jit
def split_store_kernel(x_ptr, even_ptr, odd_ptr, n, BLOCK: tl.constexpr):
    """Stores through chosen pointers: even elements to one buffer, odd to another."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    dst = tl.where(offs % 2 == 0, even_ptr + offs // 2, odd_ptr + offs // 2)
    tl.store(dst, x, mask=mask)


def test_store_through_where_pointers():
    x = torch.randn(45)
    even, odd = torch.zeros(23), torch.zeros(23)
    split_store_kernel[(3,)](x, even, odd, 45, BLOCK=16, bounds_check=True)
    torch.testing.assert_close(even, x[0::2], rtol=0, atol=0)
    torch.testing.assert_close(odd[:22], x[1::2], rtol=0, atol=0)
    assert odd[22] == 0  # nothing written past the odd elements


@triton.jit
def scalar_choice_kernel(a_ptr, b_ptr, c_ptr, out_ptr, flag, N: tl.constexpr):
    """Scalar pointers: `p = a if flag else b`, loads of one element and a block, a store
    through a chosen scalar pointer."""
    p = a_ptr if flag else b_ptr
    first = tl.load(p)
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.load(p + offs) + first)
    q = c_ptr if flag else out_ptr + N
    tl.store(q, first * 2)


@pytest.mark.parametrize("flag", [0, 5])  # Triton specializes 1 as a constant
def test_scalar_pointer_choice(flag):
    a, b = torch.randn(8), torch.randn(8)
    c, out = torch.zeros(1), torch.zeros(9)
    scalar_choice_kernel[(1,)](a, b, c, out, flag, N=8)
    src = a if flag else b
    torch.testing.assert_close(out[:8], src + src[0], rtol=0, atol=0)
    assert (c[0] if flag else out[8]) == src[0] * 2
    assert (out[8] if flag else c[0]) == 0


@triton.jit
def histogram_two_buffers_kernel(x_ptr, lo_ptr, hi_ptr, n, flag, BINS: tl.constexpr,
                                 BLOCK: tl.constexpr):
    """Atomics through chosen pointers: per element (`tl.where`) and per program (a scalar
    choice), with the old values returned."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    bins = tl.where(x < BINS, lo_ptr + x, hi_ptr + (x - BINS))
    tl.atomic_add(bins, 1, mask=mask)
    total = lo_ptr + BINS if flag else hi_ptr + BINS
    tl.atomic_add(total, tl.sum(mask.to(tl.int32), 0))
    tl.atomic_cas(total + 1, 0, 7)


@pytest.mark.parametrize("flag", [0, 5])
def test_atomics_through_chosen_pointers(flag):
    x = torch.randint(0, 8, (100,), dtype=torch.int32)
    lo, hi = torch.zeros(6, dtype=torch.int32), torch.zeros(6, dtype=torch.int32)
    histogram_two_buffers_kernel[(4,)](x, lo, hi, 100, flag, BINS=4, BLOCK=32)
    counts = torch.bincount(x, minlength=8).to(torch.int32)
    torch.testing.assert_close(lo[:4], counts[:4], rtol=0, atol=0)
    torch.testing.assert_close(hi[:4], counts[4:], rtol=0, atol=0)
    used, unused = (lo, hi) if flag else (hi, lo)
    assert used[4:].tolist() == [100, 7] and unused[4:].tolist() == [0, 0]


@triton.jit
def loop_carried_choice_kernel(a_ptr, b_ptr, out_ptr, flag, n, BLOCK: tl.constexpr):
    """A chosen pointer carried and advanced by a loop; a tile of chosen pointers too."""
    p = a_ptr if flag else b_ptr
    offs = tl.arange(0, BLOCK)
    q = tl.where(offs % 2 == 0, a_ptr + offs, b_ptr + offs)
    for i in range(n):
        tl.store(out_ptr + i, tl.load(p))
        tl.store(out_ptr + n + i * BLOCK + offs, tl.load(q))
        p += 1
        q += BLOCK


@pytest.mark.parametrize("flag", [0, 5])
def test_loop_carried_chosen_pointers(flag):
    n, block = 3, 4
    a, b = torch.randn(n * block), torch.randn(n * block)
    out = torch.zeros(n + n * block)
    loop_carried_choice_kernel[(1,)](a, b, out, flag, n, BLOCK=block)
    torch.testing.assert_close(out[:n], (a if flag else b)[:n], rtol=0, atol=0)
    even = (torch.arange(n * block) % block) % 2 == 0
    torch.testing.assert_close(out[n:], torch.where(even, a, b), rtol=0, atol=0)


@triton.jit
def switching_loop_kernel(a_ptr, b_ptr, out_ptr, n):
    p = a_ptr
    for i in range(n):
        tl.store(out_ptr + i, tl.load(p))
        p = b_ptr + i


def test_loop_switching_buffers_names_loop_and_line():
    a, b, out = torch.zeros(4), torch.zeros(4), torch.zeros(4)
    with pytest.raises(Exception) as info:
        switching_loop_kernel[(1,)](a, b, out, 4)
    message = str(info.value)
    assert "scf.for" in message and "different buffer" in message
    line = switching_loop_kernel.fn.__code__.co_firstlineno + 3  # the `for`
    assert re.search(rf"test_lang_pointer_choice\.py:{line}\b", message), message


@triton.jit
def while_carried_choice_kernel(a_ptr, b_ptr, out_ptr, flag, n):
    p = a_ptr if flag else b_ptr
    i = 0
    while i < n:
        tl.store(out_ptr + i, tl.load(p))
        p += 1
        i += 1


@pytest.mark.parametrize("flag", [0, 5])
def test_while_loop_carrying_chosen_pointer(flag):
    a, b, out = torch.randn(6), torch.randn(6), torch.zeros(6)
    while_carried_choice_kernel[(1,)](a, b, out, flag, 4)
    want = torch.cat([(a if flag else b)[:4], torch.zeros(2)])
    torch.testing.assert_close(out, want, rtol=0, atol=0)


def test_scalar_choice_becomes_one_branch_per_buffer_ir():
    """IR in, IR out: a tile loaded through `select(flag, a, b)` is one scf.if whose
    branches each copy the block of their own buffer; no select between tiles."""
    from triton_spirv.stages import ttir_to_linalg_text
    linalg = ttir_to_linalg_text("""
module {
  tt.func public @k(%a: !tt.ptr<f32>, %b: !tt.ptr<f32>, %out: !tt.ptr<f32>, %flag: i1) attributes {noinline = false} {
    %p = arith.select %flag, %a, %b : !tt.ptr<f32>
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %s = tt.splat %p : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %q = tt.addptr %s, %r : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    %v = tt.load %q : tensor<8x!tt.ptr<f32>>
    %so = tt.splat %out : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %qo = tt.addptr %so, %r : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    tt.store %qo, %v : tensor<8x!tt.ptr<f32>>
    tt.return
  }
}
""")
    assert linalg.count("scf.if") == 1
    then, rest = linalg.split("scf.if", 1)[1].split("} else {", 1)
    assert "memref.reinterpret_cast %arg0" in then and "%arg1" not in then
    assert "memref.reinterpret_cast %arg1" in rest.split("\n    }\n")[0]
    assert "arith.select" not in linalg.split("scf.if", 1)[1]


@triton.jit(noinline=True)
def _pick(a_ptr, b_ptr, flag):
    if flag > 0:
        return a_ptr
    return b_ptr


@triton.jit
def noinline_pick_kernel(a_ptr, b_ptr, out_ptr, flag, N: tl.constexpr):
    """A pointer chosen by an early return in a function Triton keeps as a call."""
    p = _pick(a_ptr, b_ptr, flag)
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.load(p + offs))


@pytest.mark.parametrize("flag", [0, 5])
def test_pointer_returned_early_from_noinline_function(flag):
    a, b, out = torch.randn(8), torch.randn(8), torch.empty(8)
    noinline_pick_kernel[(1,)](a, b, out, flag, N=8)
    torch.testing.assert_close(out, a if flag else b, rtol=0, atol=0)
