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
def cat3_kernel(a_ptr, b_ptr, c_ptr, out_ptr, n_a, n_b, n_c, BLOCK: tl.constexpr):
    """torch.cat of three 1-D tensors: program axis 1 picks the input."""
    which = tl.program_id(1)
    if which == 0:
        src = a_ptr
        n = n_a
        start = 0
    elif which == 1:
        src = b_ptr
        n = n_b
        start = n_a
    else:
        src = c_ptr
        n = n_c
        start = n_a + n_b
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + start + offs, tl.load(src + offs, mask=mask), mask=mask)


def test_concatenate_three_inputs():
    a, b, c = torch.randn(37), torch.randn(5), torch.randn(70)
    out = torch.empty(112)
    cat3_kernel[(triton.cdiv(70, 16), 3)](a, b, c, out, 37, 5, 70, BLOCK=16)
    torch.testing.assert_close(out, torch.cat([a, b, c]), rtol=0, atol=0)


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
    where_pointers_kernel[(4,)](a, b, out, 21, 51, BLOCK=16)
    torch.testing.assert_close(out, torch.cat([a, b]), rtol=0, atol=0)


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
    split_store_kernel[(3,)](x, even, odd, 45, BLOCK=16)
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
def atomic_on_choice_kernel(a_ptr, b_ptr, flag):
    p = a_ptr if flag else b_ptr
    tl.atomic_add(p, 1.0)


def test_atomic_through_chosen_pointer_names_op_and_line():
    a, b = torch.zeros(1), torch.zeros(1)
    with pytest.raises(Exception) as info:
        atomic_on_choice_kernel[(1,)](a, b, 2)
    message = str(info.value)
    assert "tt.atomic_rmw" in message and "different buffers" in message
    line = atomic_on_choice_kernel.fn.__code__.co_firstlineno + 3  # the atomic_add
    assert re.search(rf"test_lang_pointer_choice\.py:{line}\b", message), message


@triton.jit
def loop_carried_choice_kernel(a_ptr, b_ptr, out_ptr, flag, n):
    p = a_ptr if flag else b_ptr
    for i in range(n):
        tl.store(out_ptr + i, tl.load(p))
        p += 1


def test_loop_carried_chosen_pointer_names_loop_and_line():
    a, b, out = torch.zeros(4), torch.zeros(4), torch.zeros(4)
    with pytest.raises(Exception) as info:
        loop_carried_choice_kernel[(1,)](a, b, out, 2, 4)
    message = str(info.value)
    assert "scf.for" in message and "different buffers" in message
    line = loop_carried_choice_kernel.fn.__code__.co_firstlineno + 3  # the `for`
    assert re.search(rf"test_lang_pointer_choice\.py:{line}\b", message), message
