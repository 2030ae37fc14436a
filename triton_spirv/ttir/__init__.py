"""Reading Triton's TTIR text into upstream MLIR (see `reader`)."""
from .errors import TTIRReadError
from .reader import read_ttir, source_line, to_generic_text

__all__ = ["TTIRReadError", "read_ttir", "source_line", "to_generic_text"]
