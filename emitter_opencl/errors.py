"""The emitter's one error type."""

from __future__ import annotations

from mlir import ir

from .locations import source_line


class OpenCLEmitError(Exception):
    """The module holds something the OpenCL emitter does not accept. The message
    starts with the op name and its source location (`file:line`)."""


def error_at(op: ir.OpView | ir.Operation, why: str) -> OpenCLEmitError:
    """An error naming `op` and the file:line its location leads to."""
    where = source_line(op.location)
    return OpenCLEmitError(f"{op.operation.name} at {where or 'unknown location'}: {why}")
