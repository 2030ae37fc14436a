"""The SPIR-V stage: memref stage -> SPIR-V module (flatten.py, index_width.py, lower.py)."""
from .flatten import SpirvStageError, flatten_buffers
from .lower import SpirvModule, lower_to_spirv

__all__ = ["SpirvModule", "SpirvStageError", "flatten_buffers", "lower_to_spirv"]
