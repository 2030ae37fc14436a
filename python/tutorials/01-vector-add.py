"""
Vector addition
===============

Triton's first tutorial, run on an OpenCL device (PoCL on the CPU by default).

The kernel below is ordinary Triton: nothing in it knows about OpenCL. The triton-spirv
backend compiles it through TTIR -> Linalg -> memref -> OpenCL C and launches it with
pyopencl; the tensors live in host memory (`torch.device("cpu")`), which the OpenCL device
reads and writes directly.
"""
import os

import torch

import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def add_kernel(x_ptr,  # *Pointer* to first input vector.
               y_ptr,  # *Pointer* to second input vector.
               output_ptr,  # *Pointer* to output vector.
               n_elements,  # Size of the vector.
               BLOCK_SIZE: tl.constexpr,  # Number of elements each program should process.
               ):
    # There are multiple 'programs' processing different data. Each is one OpenCL
    # work-group here.
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    # Guard the last block against reading or writing past the end.
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor):
    output = torch.empty_like(x)
    n_elements = output.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta['BLOCK_SIZE']), )
    compiled = add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=1024)
    return output, compiled


def main():
    torch.manual_seed(0)
    size = 98432
    x = torch.rand(size, device=DEVICE)
    y = torch.rand(size, device=DEVICE)
    output_torch = x + y
    output_triton, compiled = add(x, y)
    print(output_torch)
    print(output_triton)
    max_diff = torch.max(torch.abs(output_torch - output_triton)).item()
    print(f"The maximum difference between torch and triton is {max_diff}")

    # Every stage of the compiled kernel is in Triton's cache; the OpenCL C is `asm['cl']`.
    cl_path = compiled.metadata_group.get(f"{compiled.name}.cl")
    print(f"Generated OpenCL C: {cl_path}")
    if os.environ.get("SHOW_CL"):
        print(compiled.asm["cl"])
    if max_diff != 0.0:
        raise SystemExit("vector add does not match torch")

    if os.environ.get("BENCHMARK", "1") != "0":
        benchmark()


def benchmark():
    """Bandwidth of the Triton kernel next to torch.add on the same tensors."""
    quantiles = [0.5, 0.2, 0.8]
    print(f"{'size':>10} {'triton GB/s':>12} {'torch GB/s':>12}")
    for size in (2**16, 2**20, 2**25):
        x = torch.rand(size, device=DEVICE, dtype=torch.float32)
        y = torch.rand(size, device=DEVICE, dtype=torch.float32)
        gbps = lambda ms: 3 * x.numel() * x.element_size() * 1e-9 / (ms * 1e-3)
        ms_triton, _, _ = triton.testing.do_bench(lambda: add(x, y), quantiles=quantiles)
        ms_torch, _, _ = triton.testing.do_bench(lambda: x + y, quantiles=quantiles)
        print(f"{size:>10} {gbps(ms_triton):>12.1f} {gbps(ms_torch):>12.1f}")


if __name__ == "__main__":
    main()
