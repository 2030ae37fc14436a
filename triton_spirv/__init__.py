"""triton-spirv: Triton kernels on OpenCL devices.

Python -> TTIR (Triton) -> Linalg on tensors (ttir_to_linalg) -> memref (pipeline)
-> OpenCL C (emitter_opencl) -> launch (launcher). The backend is registered with Triton
through the `triton.backends` entry point; `compiler.py` and `driver.py` are what Triton
imports.
"""

# Triton's backend discovery imports `triton_spirv.compiler`/`.driver` while triton itself
# is loading; importing triton first keeps that from re-entering a half-loaded module.
import triton  # noqa: F401,E402

__version__ = "0.1.0"

from .shapes import ShapeCheckError, ShapeContractError, attach as with_shapes, shapes  # noqa: E402

__all__ = ["ShapeCheckError", "ShapeContractError", "shapes", "with_shapes"]
