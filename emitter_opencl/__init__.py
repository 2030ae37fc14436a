"""OpenCL C emitter for memref-stage MLIR modules (see docs/memref-stage.md).

    from emitter_opencl import emit_opencl
    kernel = emit_opencl(module)      # EmittedKernel(source, name, arg_types, ...)
"""

from .kernel import EmittedKernel, OpenCLEmitError, emit_opencl

__all__ = ["EmittedKernel", "OpenCLEmitError", "emit_opencl"]
