"""The SPIR-V stage: memref stage -> SPIR-V module (flatten.py, index_width.py, lower.py)."""
from .flatten import OpenCLCChosen, SpirvStageError, flatten_buffers
from .lower import SpirvModule, lower_to_spirv

__all__ = ["OpenCLCChosen", "SpirvModule", "SpirvStageError", "flatten_buffers", "lower_to_spirv"]
