"""
Fused Softmax
=============

Triton's fused-softmax tutorial, run on an OpenCL device (PoCL on the CPU by default).

A row-wise softmax reads each row once, keeps it in the program's tile, and writes the
result once, where the naive torch version below makes several passes over memory.
The kernel is persistent: a fixed number of programs loops over the rows, and that
number comes from the same occupancy estimate the GPU tutorial uses (registers and
shared memory of the compiled kernel against the device's), read through
`kernel.warmup(...)` and `driver.active.utils.get_device_properties(...)`.

On the OpenCL backend `max_num_regs`/`n_regs` are nominal (OpenCL hides registers) and
`max_shared_mem` is the device's local memory, so the estimate gives a few dozen
programs per compute unit.

Sizes: the check uses 1823 x 781 like the original; the benchmark sweeps N over
256..4096 columns for M = 1024 rows (the GPU original uses M = 4096 and N up to 12800).
Set BENCHMARK=0 to skip the benchmark.
"""
import os

import torch

import triton
import triton.language as tl
from triton.runtime import driver

DEVICE = triton.runtime.driver.active.get_active_torch_device()


def is_hip():
    return triton.runtime.driver.active.get_current_target().backend == "hip"


def is_cdna():
    return is_hip() and triton.runtime.driver.active.get_current_target().arch in ('gfx940', 'gfx941', 'gfx942',
                                                                                   'gfx90a', 'gfx908')


def naive_softmax(x):
    """Row-wise softmax in torch, subtracting the row maximum to avoid overflow.

    It reads 5MN + 2M elements and writes 3MN + 2M: the kernel below reads MN and
    writes MN.
    """
    x_max = x.max(dim=1)[0]
    z = x - x_max[:, None]
    numerator = torch.exp(z)
    denominator = numerator.sum(dim=1)
    ret = numerator / denominator[:, None]
    return ret


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols, BLOCK_SIZE: tl.constexpr,
                   num_stages: tl.constexpr):
    # Each program starts at its own row and steps over the rows by the grid size.
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        # BLOCK_SIZE is the next power of two >= n_cols, so one block holds the row.
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        # Padding reads -inf so that it changes neither the max nor the sum of exps.
        row = tl.load(input_ptrs, mask=mask, other=-float('inf'))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        output_ptrs = output_row_start_ptr + col_offsets
        tl.store(output_ptrs, softmax_output, mask=mask)


# Device facts the occupancy estimate needs.
properties = driver.active.utils.get_device_properties(DEVICE.index)
NUM_SM = properties["multiprocessor_count"]
NUM_REGS = properties["max_num_regs"]
SIZE_SMEM = properties["max_shared_mem"]
WARP_SIZE = properties["warpSize"]
target = triton.runtime.driver.active.get_current_target()
kernels = {}


def softmax(x):
    n_rows, n_cols = x.shape

    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    num_warps = 8
    # Software pipelining stages; deeper only where shared memory is plentiful.
    num_stages = 4 if SIZE_SMEM > 200000 else 2

    y = torch.empty_like(x)

    # Compile once without launching, to read the kernel's register and shared-memory use.
    kernel = softmax_kernel.warmup(y, x, x.stride(0), y.stride(0), n_rows, n_cols, BLOCK_SIZE=BLOCK_SIZE,
                                   num_stages=num_stages, num_warps=num_warps, grid=(1, ))
    kernel._init_handles()
    n_regs = kernel.n_regs
    size_smem = kernel.metadata.shared
    if is_hip():
        # AMD's register file and wave sizes, as in the original tutorial.
        NUM_GPRS = NUM_REGS
        if is_cdna():
            NUM_GPRS = NUM_REGS * 2
        MAX_NUM_THREADS = properties["max_threads_per_sm"]
        max_num_waves = MAX_NUM_THREADS // WARP_SIZE
        occupancy = min(NUM_GPRS // WARP_SIZE // n_regs, max_num_waves) // num_warps
    else:
        occupancy = NUM_REGS // (n_regs * WARP_SIZE * num_warps)
    occupancy = min(occupancy, SIZE_SMEM // size_smem)
    num_programs = NUM_SM * occupancy

    num_programs = min(num_programs, n_rows)

    # A persistent grid: num_programs programs loop over all rows.
    kernel[(num_programs, 1, 1)](y, x, x.stride(0), y.stride(0), n_rows, n_cols, BLOCK_SIZE, num_stages)
    return y


def check(n_rows=1823, n_cols=781):
    """Compare with torch.softmax; raise SystemExit on a mismatch."""
    torch.manual_seed(0)
    x = torch.randn(n_rows, n_cols, device=DEVICE)
    y_triton = softmax(x)
    y_torch = torch.softmax(x, axis=1)
    max_diff = (y_triton - y_torch).abs().max().item()
    print(f"softmax {n_rows}x{n_cols}: max difference from torch {max_diff:.3g}")
    if not torch.allclose(y_triton, y_torch, atol=1e-6, rtol=1e-5):
        raise SystemExit("fused softmax does not match torch")
    return max_diff


@triton.testing.perf_report(
    triton.testing.Benchmark(
        x_names=['N'],  # argument names to use as an x-axis for the plot
        x_vals=[256, 512, 1024, 2048, 4096],  # different possible values for `x_name`
        line_arg='provider',  # argument name whose value corresponds to a different line in the plot
        line_vals=['triton', 'torch', 'naive_softmax'],  # possible values for `line_arg``
        line_names=["Triton", "Torch", "Naive Softmax"],  # label name for the lines
        styles=[('blue', '-'), ('green', '-'), ('red', '-')],  # line styles
        ylabel="GB/s",  # label name for the y-axis
        plot_name="softmax-performance",  # name for the plot. Used also as a file name for saving the plot.
        args={'M': 1024},  # values for function arguments not in `x_names` and `y_name`
    ))
def benchmark(M, N, provider):
    x = torch.randn(M, N, device=DEVICE, dtype=torch.float32)
    if provider == 'torch':
        ms = triton.testing.do_bench(lambda: torch.softmax(x, axis=-1))
    if provider == 'triton':
        ms = triton.testing.do_bench(lambda: softmax(x))
    if provider == 'naive_softmax':
        ms = triton.testing.do_bench(lambda: naive_softmax(x))
    gbps = lambda ms: 2 * x.numel() * x.element_size() * 1e-9 / (ms * 1e-3)
    return gbps(ms)


def main():
    check()
    if os.environ.get("BENCHMARK", "1") != "0":
        benchmark.run(show_plots=False, print_data=True)


if __name__ == "__main__":
    main()
