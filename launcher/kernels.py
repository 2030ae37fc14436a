"""Launching a kernel from a plain description: how a frontend other than Triton's (the
HLO runtime) hands the launcher a kernel.

    kernel = LoadedKernel(KernelDescription(name, source, arg_types, params, local_size))
    kernel.launch((grid_x,), x_array, y_array, out_array, n)

The description holds what the compiler made (the OpenCL C or a SPIR-V module, the
parameter types, the work-group size, the hidden parameters' metadata: opencl_abi);
pointer arguments are numpy arrays, torch CPU tensors or anything else that
`buffers.host_memory_range` takes. The kernel is built and launched by the same code as
Triton's kernels (`launch.load_kernel`, `launch.OpenCLLauncher`): one path to set the
arguments, pass the hidden parameters, enqueue and report errors.
"""

from __future__ import annotations

from dataclasses import dataclass

from .clbin import clbin_fields
from .launch import OpenCLLauncher, load_kernel as load_handle


@dataclass(frozen=True)
class KernelDescription:
    """One compiled kernel, as plain data."""
    name: str                              # the OpenCL kernel function
    source: str                            # its OpenCL C (also the fallback of `spirv`)
    arg_types: tuple[str, ...]             # OpenCL C types of all parameters, hidden ones included
    params: tuple[tuple[str, str], ...]    # (name, type) of each own parameter: "*fp32", "i64", ...
    local_size: tuple[int, ...] = (1, 1, 1)
    local_mem_bytes: int = 0               # __local memory the kernel declares
    spirv: bytes | None = None             # a SPIR-V module to build instead of the source
    program: str = "auto"                  # program mode (il.py): auto, spirv or source
    bounds: dict | None = None             # bounds-checked mode's metadata (opencl_abi)
    asserts: tuple = ()                    # [path, line, message] per assert id (opencl_abi)


class LoadedKernel:
    """A described kernel built for the current device."""

    def __init__(self, description: KernelDescription):
        d = description
        self.handle = load_handle(clbin_fields(d.name, d.source, d.arg_types, d.local_size, d.local_mem_bytes,
                                               bounds=d.bounds, spirv=d.spirv, program=d.program))
        self.launcher = OpenCLLauncher.for_parameters(d.name, d.params, {"asserts": list(d.asserts)})

    def launch(self, grid, *args) -> None:
        """Runs the kernel over `grid` (1 to 3 program counts) and waits for it."""
        x, y, z = (*grid, 1, 1)[:3]
        self.launcher(x, y, z, None, self.handle, None, None, None, None, *args)
