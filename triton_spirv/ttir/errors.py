"""Errors of the TTIR reader."""
from __future__ import annotations

from typing import Optional


class LineError(Exception):
    """A problem within one line; the reader adds the line, its text and the op."""

    def __init__(self, message: str, column: Optional[int] = None):
        super().__init__(message)
        self.message = message
        self.column = column


class TTIRReadError(Exception):
    """TTIR text the reader cannot read.

    `line` and `column` are 1-based positions in the TTIR text (`column` may be None),
    `op` the op name on that line (e.g. `tt.load`, None when the line holds no op) and
    `source` the text of that line. The message names all of them.
    """

    def __init__(self, message: str, line: int, source: str, op: Optional[str] = None,
                 column: Optional[int] = None):
        self.reason = message
        self.line = line
        self.column = column
        self.op = op
        self.source = source
        where = f"TTIR line {line}" + (f", column {column}" if column else "")
        what = f" ({op})" if op else ""
        super().__init__(f"{where}{what}: {message}\n    {line} | {source.strip()}")
