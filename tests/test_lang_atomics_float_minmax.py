"""Triton language, `tl.atomic_max` / `tl.atomic_min` on float32 and float64 buffers.

Triton lowers a float max (min) to integer atomics on the bit patterns: a value whose sign
bit is clear takes a signed max (min) on the int bits, one whose sign bit is set an
unsigned min (max); the old value is the one the chosen atomic returns. The result is
the maximum (minimum) in the order of the bit patterns: -NaN < -inf < ... < -0.0 < +0.0
< ... < +inf < +NaN, whatever the order of the updates, so contended results are exact.
`reference_extreme` models that order (Triton's interpreter gives the same results).

Forms covered: tensor (block) atomics with masks and their old values, scalar atomics
from many programs on a few addresses, a whole tile on one address, and a constant block
(`tl.full`), whose constant sign lets Triton fold one of the two atomics away and reach
the atomic through a pointer splat.
"""
import numpy as np
import pytest
import torch

import triton
import triton.language as tl

SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, float("inf"), -float("inf"), float("nan"),
           -float("nan"), 1e-40, -1e-40, 3.0e38, -3.0e38]
NAN_AT, NEGATIVE_NAN_AT = 8, 9  # their positions in SPECIAL
_BITS = {torch.float32: (torch.int32, np.uint32), torch.float64: (torch.int64, np.uint64)}


def bits(t: torch.Tensor) -> np.ndarray:
    """The unsigned bit patterns of a float tensor."""
    signed, unsigned = _BITS[t.dtype]
    return t.view(signed).numpy().view(unsigned)


def order_key(patterns: np.ndarray) -> np.ndarray:
    """Unsigned keys ordered as Triton's float atomics order the bit patterns."""
    width = patterns.dtype.itemsize * 8
    sign = patterns.dtype.type(1 << (width - 1))
    return np.where(patterns & sign, ~patterns, patterns | sign)


def reference_extreme(op: str, patterns: np.ndarray) -> np.ndarray:
    """The bit pattern a sequence of atomic `op`s leaves (the first is the initial value)."""
    keys = order_key(patterns)
    return patterns[np.argmax(keys) if op == "max" else np.argmin(keys)]


def special_values(n: int, dtype, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    pool = torch.tensor(SPECIAL, dtype=torch.float64)
    pool = torch.cat([pool, torch.randn(32, generator=gen, dtype=torch.float64) * 4])
    choice = torch.randint(0, len(pool), (n,), generator=gen)
    values = pool[choice].to(dtype)
    return _with_negative_nans(values, choice)


def _with_negative_nans(values: torch.Tensor, choice: torch.Tensor) -> torch.Tensor:
    """`-float("nan")` is not reliably a NaN with the sign bit set: set it on the bits."""
    signed, _ = _BITS[values.dtype]
    ints = values.view(signed).clone()
    width = values.dtype.itemsize * 8
    negative_nan = choice == NEGATIVE_NAN_AT
    ints[negative_nan] = ints[negative_nan] | (-(1 << (width - 1)))
    positive_nan = choice == NAN_AT
    ints[positive_nan] = ints[positive_nan] & ((1 << (width - 1)) - 1)
    return ints.view(values.dtype)


@triton.jit
def block_kernel(out_ptr, val_ptr, idx_ptr, old_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    val = tl.load(val_ptr + offs, mask=mask, other=0)
    if OP == "max":
        old = tl.atomic_max(out_ptr + idx, val, mask=mask)
    else:
        old = tl.atomic_min(out_ptr + idx, val, mask=mask)
    tl.store(old_ptr + offs, old, mask=mask)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("n", [1, 37, 256])
def test_block_atomics_at_unique_addresses_return_old_values(dtype, op, n):
    """Each element meets one initial value: special values on both sides, all pairs."""
    block = 64
    out = special_values(n + 1, dtype, seed=n)
    initial = out.clone()
    val = special_values(n, dtype, seed=n + 1000)
    idx = torch.arange(n, dtype=torch.int32).flip(0)
    old = torch.zeros(n, dtype=dtype)
    block_kernel[(triton.cdiv(n, block),)](out, val, idx, old, n, OP=op, BLOCK=block)
    at = idx.long()
    expected = bits(initial).copy()
    for i in range(n):
        expected[at[i]] = reference_extreme(op, np.array([bits(initial)[at[i]], bits(val)[i]]))
    np.testing.assert_array_equal(bits(out), expected)  # the element past the last kept
    np.testing.assert_array_equal(bits(old), bits(initial)[at.numpy()])


@triton.jit
def scalar_kernel(out_ptr, val_ptr, old_ptr, slots, OP: tl.constexpr):
    pid = tl.program_id(0)
    val = tl.load(val_ptr + pid)
    if OP == "max":
        old = tl.atomic_max(out_ptr + pid % slots, val)
    else:
        old = tl.atomic_min(out_ptr + pid % slots, val)
    tl.store(old_ptr + pid, old)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("slots", [1, 3])
def test_scalar_atomics_from_many_programs(dtype, op, slots):
    """Hundreds of programs on one or three addresses: the result is exact, and each old
    value is one of the values the address held (never past the final one)."""
    n = 500
    val = special_values(n, dtype, seed=slots)
    out = torch.full((slots + 1,), 0.5, dtype=dtype)
    old = torch.zeros(n, dtype=dtype)
    scalar_kernel[(n,)](out, val, old, slots, OP=op)
    for slot in range(slots):
        seen = np.concatenate([bits(out.new_full((1,), 0.5)), bits(val)[slot::slots]])
        np.testing.assert_array_equal(bits(out)[slot], reference_extreme(op, seen))
        olds = bits(old)[slot::slots]
        assert set(olds.tolist()) <= set(seen.tolist())
        final_key = order_key(bits(out)[slot:slot + 1])[0]
        old_keys = order_key(olds)
        assert (old_keys <= final_key).all() if op == "max" else (old_keys >= final_key).all()
    assert out[slots].item() == 0.5


@triton.jit
def tile_kernel(out_ptr, x_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    if OP == "max":
        tl.atomic_max(out_ptr + tl.zeros((BLOCK,), tl.int32), x, mask=offs < n)
    else:
        tl.atomic_min(out_ptr + tl.zeros((BLOCK,), tl.int32), x, mask=offs < n)


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("n", [1, 100, 1000])
def test_whole_tiles_on_one_address(op, n):
    gen = torch.Generator().manual_seed(n)
    x = torch.randn(n, generator=gen) * 100
    out = torch.zeros(1)
    tile_kernel[(triton.cdiv(n, 128),)](out, x, n, OP=op, BLOCK=128)
    reduce = "amax" if op == "max" else "amin"
    expected = torch.zeros(1).scatter_reduce(0, torch.zeros(n, dtype=torch.long), x, reduce)
    np.testing.assert_array_equal(bits(out), bits(expected))


@triton.jit
def constant_kernel(out_ptr, old_ptr, n, C: tl.constexpr, OP: tl.constexpr,
                    BLOCK: tl.constexpr):
    rn = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if OP == "max":
        old = tl.atomic_max(out_ptr + rn, tl.full((BLOCK,), C, tl.float32), mask=rn < n)
    else:
        old = tl.atomic_min(out_ptr + rn, tl.full((BLOCK,), C, tl.float32), mask=rn < n)
    tl.store(old_ptr + rn, old, mask=rn < n)


# No -0.0: it equals 0.0, so Triton's kernel cache hands it the kernel compiled for 0.0
# (the constexpr is part of the key by value). The data of the other tests has -0.0.
@pytest.mark.parametrize("constant", [1.0, -1.0, 0.0, -2.5])
@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("block", [1, 4, 32])
def test_constant_blocks(constant, op, block):
    """A constant block (a single-element block makes the pointer a splat)."""
    n = 2 * block - 1 if block > 1 else 1
    out = special_values(n + 1, torch.float32, seed=block)
    initial = out.clone()
    old = torch.zeros(n)
    constant_kernel[(triton.cdiv(n, block),)](out, old, n, C=constant, OP=op, BLOCK=block)
    value = bits(torch.tensor([constant]))[0]
    expected = bits(initial).copy()
    for i in range(n):
        expected[i] = reference_extreme(op, np.array([expected[i], value]))
    np.testing.assert_array_equal(bits(out), expected)
    np.testing.assert_array_equal(bits(old), bits(initial)[:n])


def test_float64_atomics_need_the_int64_atomics_extensions():
    """64-bit atomics on a device without cl_khr_int64_*_atomics: a clear compile error
    naming the kernel and the line, not an OpenCL build log."""
    from dataclasses import replace

    from triton_spirv.stages import memref_to_opencl
    from triton_spirv.target import NO_DEVICE, MissingDeviceFeature, check_kernel_fits

    def emitted(dtype):
        out, val = torch.zeros(4, dtype=dtype), torch.ones(4, dtype=dtype)
        idx, old = torch.arange(4, dtype=torch.int32), torch.zeros(4, dtype=dtype)
        compiled = block_kernel[(1,)](out, val, idx, old, 4, OP="max", BLOCK=4)
        return memref_to_opencl(compiled.asm["memref"])

    without = replace(NO_DEVICE, int64_atomics=False)
    check_kernel_fits(emitted(torch.float32), without)
    with pytest.raises(MissingDeviceFeature,
                       match=r"kernel 'block_kernel' has 64-bit atomics "
                             r"\(test_lang_atomics_float_minmax.py:\d+.*cl_khr_int64_base_atomics"):
        check_kernel_fits(emitted(torch.float64), without)
    check_kernel_fits(emitted(torch.float64), NO_DEVICE)
