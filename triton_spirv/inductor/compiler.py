"""The compiler Triton finds under the name `cpu` (see the package docstring)."""
from __future__ import annotations

from triton.backends.compiler import GPUTarget

from .. import compiler as opencl_compiler

# The backend name Inductor's CPU-Triton path compiles for.
INDUCTOR_CPU_BACKEND = "cpu"


def device_target() -> GPUTarget:
    """The `cpu` target of the active OpenCL device: its arch (with the target
    description, driver.target_arch) and the backend's warp size."""
    from launcher.device import get_device

    from ..driver import WARP_SIZE, target_arch
    return GPUTarget(INDUCTOR_CPU_BACKEND, target_arch(get_device().arch), WARP_SIZE)


class InductorCPUBackend(opencl_compiler.OpenCLBackend):
    """Compiles what Inductor writes for CPU tensors exactly as the OpenCL backend does."""

    @staticmethod
    def supports_target(target: GPUTarget):
        return target.backend == INDUCTOR_CPU_BACKEND

    def __init__(self, target: GPUTarget) -> None:
        # Inductor's arch ("") and warp size (32) describe no device: the options
        # (arch, warp_size) and the cache key (hash) take the OpenCL device's.
        super().__init__(device_target())
