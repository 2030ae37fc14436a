"""The driver Triton finds under the name `cpu` (see the package docstring)."""
from __future__ import annotations

from .. import driver as opencl_driver


class InductorCPUDriver(opencl_driver.OpenCLDriver):
    """The OpenCL driver, made active by Inductor rather than by Triton's discovery."""

    @classmethod
    def is_active(cls):
        # Triton's discovery must find exactly one active driver: the `opencl` one.
        # Inductor activates this one itself (triton_helpers.set_driver_to_cpu).
        return False
