"""triton-spirv: Triton kernels on OpenCL devices.

Python -> TTIR (Triton) -> Linalg on tensors (ttir_to_linalg) -> memref (pipeline)
-> OpenCL C (emitter_opencl) -> launch (launcher). The backend is registered with Triton
through the `triton.backends` entry point; `compiler.py` and `driver.py` are what Triton
imports.
"""

__version__ = "0.1.0"
