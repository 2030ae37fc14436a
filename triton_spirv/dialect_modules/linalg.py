"""The linalg dialect's generated op classes and enums: `mlir.dialects.linalg` without
its OpDSL (see __init__.py). Importing them registers them with the bindings."""
from mlir.dialects import _linalg_enum_gen, _linalg_ops_gen  # noqa: F401
