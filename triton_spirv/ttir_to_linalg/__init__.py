"""TTIR -> Linalg on tensors (see converter.py; loads and stores in memory.py)."""
from .converter import ConversionError, convert_ttir

__all__ = ["ConversionError", "convert_ttir"]
