"""The spirv dialect's module for the bindings: empty (see __init__.py). Kernels with
atomics import `mlir.dialects.spirv` to build spirv ops (spirv/atomics.py)."""
