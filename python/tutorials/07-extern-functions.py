"""
Libdevice (`tl.extra.libdevice`) function
=========================================

Triton's extern-functions tutorial, run on an OpenCL device (PoCL on the CPU by
default). Kernels call math functions of `triton.language.extra.libdevice`; on CUDA
and HIP those come from vendor bitcode libraries (libdevice, ocml/ockl), whose path can
be given with `extern_libs`. The OpenCL backend maps them to the OpenCL C built-in math
functions instead, so it needs no library file: the second launch passes an empty
`extern_libs` where the GPU backends pass their bitcode paths.

Adapted for the OpenCL backend: the `x.is_cuda` assertion of the original is dropped,
and a benchmark (not in the original) compares the kernel with torch.asin on 2**16..2**22
elements. Set BENCHMARK=0 to skip it.
"""
import inspect
import os
from pathlib import Path

import torch

import triton
import triton.language as tl
from triton.language.extra import libdevice

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def asin_kernel(
    x_ptr,
    y_ptr,
    n_elements,
    BLOCK_SIZE: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    x = libdevice.asin(x)
    tl.store(y_ptr + offsets, x, mask=mask)


def is_cuda():
    return triton.runtime.driver.active.get_current_target().backend == "cuda"


def is_hip():
    return triton.runtime.driver.active.get_current_target().backend == "hip"


def is_opencl():
    return triton.runtime.driver.active.get_current_target().backend == "opencl"


def library_paths():
    """The `extern_libs` of each backend (the GPU ones point into a Triton source tree)."""
    current_file = inspect.getfile(inspect.currentframe())
    current_dir = Path(os.path.dirname(os.path.abspath(current_file)))
    if is_cuda():
        libdir = current_dir.parent.parent / 'third_party/nvidia/backend/lib'
        return {'libdevice': str(libdir / 'libdevice.10.bc')}
    if is_hip():
        libdir = current_dir.parent.parent / 'third_party/amd/backend/lib'
        return {lib: str(libdir / f'{lib}.bc') for lib in ["ocml", "ockl"]}
    if is_opencl():
        # OpenCL C has these functions built in: no library to link.
        return {}
    raise RuntimeError('unknown backend')


def report(output_torch, output_triton, what):
    print(output_torch)
    print(output_triton)
    max_diff = torch.max(torch.abs(output_torch - output_triton)).item()
    print(f'The maximum difference between torch and triton ({what}) is {max_diff}')
    if not torch.allclose(output_torch, output_triton, atol=1e-6, rtol=1e-6):
        raise SystemExit("asin does not match torch")
    return max_diff


def check(size=98432):
    torch.manual_seed(0)
    x = torch.rand(size, device=DEVICE)
    output_triton = torch.zeros(size, device=DEVICE)
    output_torch = torch.asin(x)
    n_elements = output_torch.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta['BLOCK_SIZE']), )
    asin_kernel[grid](x, output_triton, n_elements, BLOCK_SIZE=1024)
    first = report(output_torch, output_triton, "default libraries")

    # The same kernel with the library paths given explicitly.
    output_triton = torch.empty_like(x)
    asin_kernel[grid](x, output_triton, n_elements, BLOCK_SIZE=1024, extern_libs=library_paths())
    return max(first, report(output_torch, output_triton, "explicit extern_libs"))


def benchmark():
    quantiles = [0.5, 0.2, 0.8]
    print(f"{'size':>10} {'triton GB/s':>12} {'torch GB/s':>12}")
    for size in (2**16, 2**19, 2**22):
        x = torch.rand(size, device=DEVICE)
        y = torch.empty_like(x)
        grid = (triton.cdiv(size, 1024), )
        gbps = lambda ms: 2 * x.numel() * x.element_size() * 1e-9 / (ms * 1e-3)
        ms_triton, _, _ = triton.testing.do_bench(lambda: asin_kernel[grid](x, y, size, BLOCK_SIZE=1024),
                                                  quantiles=quantiles)
        ms_torch, _, _ = triton.testing.do_bench(lambda: torch.asin(x, out=y), quantiles=quantiles)
        print(f"{size:>10} {gbps(ms_triton):>12.1f} {gbps(ms_torch):>12.1f}")


def main():
    check()
    if os.environ.get("BENCHMARK", "1") != "0":
        benchmark()


if __name__ == "__main__":
    main()
