"""Errors of the HLO frontend. Each names what is wrong and where: the HLO line and
column for text that does not read, the instruction and computation otherwise."""
from __future__ import annotations


class HloError(Exception):
    """Base class of the HLO frontend's errors."""


class HloParseError(HloError):
    """HLO text that does not read; the message starts with `line:column`."""

    def __init__(self, message: str, line: int, column: int, source_line: str = ""):
        self.line, self.column = line, column
        text = f"{line}:{column}: {message}"
        if source_line:
            text += f"\n  {source_line}\n  {' ' * max(column - 1, 0)}^"
        super().__init__(text)


class HloUnsupportedError(HloError):
    """A well-formed module that uses something this frontend does not lower."""


class HloShapeError(HloError):
    """Shapes that cannot agree (rank mismatch, two different names or sizes for one
    dimension, a dynamic size no ENTRY parameter gives), found at compile time."""


class HloOutputError(HloError):
    """An output that does not have the shape or dtype the ENTRY computation's result
    shape says; raised before anything is returned."""


def where(instr) -> str:
    """`%name (opcode) in computation C, line N` for messages."""
    comp = instr.computation.name if instr.computation is not None else "?"
    return f"%{instr.name} ({instr.opcode}) in computation {comp}, line {instr.line}"
