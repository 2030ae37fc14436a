"""The linalg dialect's module for the bindings: empty (see __init__.py). Its op classes
are those of `mlir.dialects._linalg_ops_gen`, which the converter imports to build them
(ttir_to_linalg/linalg_ops.py); the bindings hand them out from then on."""
