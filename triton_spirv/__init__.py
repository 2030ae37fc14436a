"""triton-spirv: Triton kernels on OpenCL devices.

Python -> TTIR (Triton) -> Linalg on tensors (ttir_to_linalg) -> memref (pipeline)
-> OpenCL C (emitter_opencl) -> launch (launcher). The backend is registered with Triton
through the `triton.backends` entry point; `compiler.py` and `driver.py` are what Triton
imports. Importing the package does not import Triton (the HLO frontend does without it);
the backend's entry modules load it first (triton_first.py).
"""

from . import triton_first
from .shapes import ShapeCheckError, ShapeContractError, attach as with_shapes, shapes

__version__ = "0.1.0"

triton_first.install()

__all__ = ["ShapeCheckError", "ShapeContractError", "shapes", "with_shapes"]
