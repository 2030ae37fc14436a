"""The HLO frontend: HLO modules lowered by XLA-style emitters onto the memref stage
shared with the Triton frontend, then the same OpenCL emitter and launcher.

    from triton_spirv.hlo import read_hlo, ModuleRunner
    module = read_hlo(text)
    outputs = ModuleRunner(module).run([x])      # numpy arrays in, numpy arrays out

Data flows one way: HLO text (reader.py) -> HLO objects -> partitioned subgraph
functions (partitioner.py) -> MLIR on tensors built by the emitter chosen by hero
analysis (emitters/, elemental.py, elementwise.py, indexing.py) -> the seed's passes
and the shared Linalg -> memref pipeline (passes.py) -> emitter_opencl -> launcher
(runtime.py).

Shapes may use `?` and named dimensions (`f32[M,K]`, dynamic.py): one compiled kernel
serves every size; shapes are checked at compile time (dynamic.py) and, before each
launch, by generated host code (host.py; `triton_spirv.ShapeCheckError`).
"""
from .errors import HloError, HloOutputError, HloParseError, HloShapeError, HloUnsupportedError
from .reader import HloComputation, HloInstruction, HloModule, read_hlo, read_hlo_file

__all__ = ["HloComputation", "HloError", "HloInstruction", "HloModule", "HloOutputError",
           "HloParseError",
           "HloShapeError",
           "HloUnsupportedError", "ModuleRunner", "compile_fusion", "read_hlo",
           "read_hlo_file", "run_hlo", "run_hlo_file"]


def __getattr__(name):
    # The compiler and runtime pull in MLIR and OpenCL; load them on first use.
    if name in ("ModuleRunner", "run_hlo", "run_hlo_file"):
        from . import runtime
        return getattr(runtime, name)
    if name == "compile_fusion":
        from .compile import compile_fusion
        return compile_fusion
    raise AttributeError(name)
