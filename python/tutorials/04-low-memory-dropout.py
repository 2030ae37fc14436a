"""
Low-Memory Dropout
==================

Triton's low-memory-dropout tutorial, run on an OpenCL device (PoCL on the CPU by
default).

The baseline kernel applies a dropout mask that torch made and stored in memory. The
seeded kernel instead draws its random numbers inside the kernel with `tl.rand(seed,
offsets)` (Philox 4x32-10), so the mask never exists in memory and only the seed has to
be kept to replay it (e.g. for the backward pass).

Checks: the baseline against the same computation in torch; the seeded kernel against
a numpy implementation of Triton's `tl.rand` (the same Philox rounds and float
conversion), so the kept elements must match exactly. The original prints its tables
with `tabulate`; a small printer stands in for it here (one dependency fewer).

Sizes: the tables use 10 elements like the original; the benchmark (not part of the
original) compares the seeded kernel with torch's dropout on 2**16..2**22 elements.
Set BENCHMARK=0 to skip it.
"""
import os

import numpy as np
import torch

import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def _dropout(
    x_ptr,  # pointer to the input
    x_keep_ptr,  # pointer to a mask of 0s and 1s
    output_ptr,  # pointer to the output
    n_elements,  # number of elements in the `x` tensor
    p,  # probability that an element of `x` is changed to zero
    BLOCK_SIZE: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    # Load data
    x = tl.load(x_ptr + offsets, mask=mask)
    x_keep = tl.load(x_keep_ptr + offsets, mask=mask)
    # Kept elements are rescaled by 1 / (1 - p) so that the expected sum is unchanged.
    output = tl.where(x_keep, x / (1 - p), 0.0)
    # Write-back output
    tl.store(output_ptr + offsets, output, mask=mask)


def dropout(x, x_keep, p):
    output = torch.empty_like(x)
    assert x.is_contiguous()
    n_elements = x.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta['BLOCK_SIZE']), )
    _dropout[grid](x, x_keep, output, n_elements, p, BLOCK_SIZE=1024)
    return output


@triton.jit
def _seeded_dropout(
    x_ptr,
    output_ptr,
    n_elements,
    p,
    seed,
    BLOCK_SIZE: tl.constexpr,
):
    # compute memory offsets of elements handled by this instance
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    # load data from x
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    # The element's offset is the Philox counter: the same seed gives the same mask.
    random = tl.rand(seed, offsets)
    x_keep = random > p
    # write-back
    output = tl.where(x_keep, x / (1 - p), 0.0)
    tl.store(output_ptr + offsets, output, mask=mask)


def seeded_dropout(x, p, seed):
    output = torch.empty_like(x)
    assert x.is_contiguous()
    n_elements = x.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta['BLOCK_SIZE']), )
    _seeded_dropout[grid](x, output, n_elements, p, seed, BLOCK_SIZE=1024)
    return output


# ---------------------------------------------------------------------------------------
# References


def philox_uniform_reference(seed, offsets):
    """Triton's `tl.rand(seed, offsets)` in numpy: Philox 4x32 with 10 rounds, counter
    (offset, 0, 0, 0), key (low, high 32 bits of seed), first word to [0, 1)."""
    mask32 = np.uint64(0xFFFFFFFF)
    c0 = offsets.astype(np.uint64) & mask32
    c1 = np.zeros_like(c0)
    c2 = np.zeros_like(c0)
    c3 = np.zeros_like(c0)
    k0 = np.uint64(seed) & mask32
    k1 = (np.uint64(seed) >> np.uint64(32)) & mask32
    round_a, round_b = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
    key_a, key_b = np.uint64(0x9E3779B9), np.uint64(0xBB67AE85)
    for _ in range(10):
        product_a, product_b = round_a * c0, round_b * c2  # < 2**64: exact in uint64
        c0, c1, c2, c3 = ((product_b >> np.uint64(32)) ^ c1 ^ k0, product_b & mask32,
                          (product_a >> np.uint64(32)) ^ c3 ^ k1, product_a & mask32)
        k0, k1 = (k0 + key_a) & mask32, (k1 + key_b) & mask32
    as_int = c0.astype(np.uint32).view(np.int32)
    as_int = np.where(as_int < 0, ~as_int, as_int)
    return as_int.astype(np.float32) * np.float32(4.6566127342e-10)


def seeded_dropout_reference(x, p, seed):
    keep = torch.from_numpy(philox_uniform_reference(seed, np.arange(x.numel())) > np.float32(p))
    return torch.where(keep.reshape(x.shape), x / (1 - p), 0.0)


def print_table(rows):
    """What the original prints with tabulate: one labelled row per line."""
    width = max(len(str(r[0])) for r in rows)
    for label, *values in rows:
        print(f"{label:<{width}} " + " ".join(f"{v:>8.4f}" for v in values))


def check(size=10, p=0.5):
    """Print the tutorial's tables and compare both kernels with their references."""
    torch.manual_seed(0)
    x = torch.randn(size=(size, ), device=DEVICE)
    # Dropout mask
    x_keep = (torch.rand(size=(size, ), device=DEVICE) > p).to(torch.int32)
    output = dropout(x, x_keep=x_keep, p=p)
    print_table([["input"] + x.tolist()[:10], ["keep mask"] + x_keep.tolist()[:10], ["output"] + output.tolist()[:10]])
    baseline_diff = (output - torch.where(x_keep.bool(), x / (1 - p), 0.0)).abs().max().item()

    output = seeded_dropout(x, p=p, seed=123)
    output2 = seeded_dropout(x, p=p, seed=123)
    output3 = seeded_dropout(x, p=p, seed=512)
    print_table([["input"] + x.tolist()[:10], ["output (seed = 123)"] + output.tolist()[:10],
                 ["output (seed = 123)"] + output2.tolist()[:10], ["output (seed = 512)"] + output3.tolist()[:10]])
    seeded_diff = max((output - seeded_dropout_reference(x, p, 123)).abs().max().item(),
                      (output3 - seeded_dropout_reference(x, p, 512)).abs().max().item())
    print(f"dropout of {size} elements: max difference from torch {baseline_diff:.3g} (stored mask), "
          f"{seeded_diff:.3g} (seeded, against the Philox reference)")
    if baseline_diff > 1e-6 or seeded_diff > 1e-6 or not torch.equal(output, output2):
        raise SystemExit("dropout does not match torch")
    return max(baseline_diff, seeded_diff)


def benchmark():
    """The seeded kernel next to torch's dropout (which also draws its mask on the fly)."""
    quantiles = [0.5, 0.2, 0.8]
    print(f"{'size':>10} {'triton GB/s':>12} {'torch GB/s':>12}")
    for size in (2**16, 2**19, 2**22):
        x = torch.randn(size, device=DEVICE)
        gbps = lambda ms: 2 * x.numel() * x.element_size() * 1e-9 / (ms * 1e-3)
        ms_triton, _, _ = triton.testing.do_bench(lambda: seeded_dropout(x, p=0.5, seed=123), quantiles=quantiles)
        ms_torch, _, _ = triton.testing.do_bench(lambda: torch.nn.functional.dropout(x, p=0.5, training=True),
                                                 quantiles=quantiles)
        print(f"{size:>10} {gbps(ms_triton):>12.1f} {gbps(ms_torch):>12.1f}")


def main():
    check()
    check(size=100003)
    if os.environ.get("BENCHMARK", "1") != "0":
        benchmark()


if __name__ == "__main__":
    main()
