"""custom-call: a table of the library-call targets this frontend lowers, each to a
handler that turns the call into a fused computation of ordinary HLO (`LibraryCall`).
Adding a target is one entry here and one handler module."""
from __future__ import annotations

from .computation_builder import LibraryCall
from .cublas import lower_cublas_gemm
from .errors import HloUnsupportedError, where

HANDLERS = {
    "__cublas$gemm": lower_cublas_gemm,
    "__cublas$lt$matmul": lower_cublas_gemm,
}


def custom_call_target(instr) -> str:
    return instr.attrs.get("custom_call_target", "").strip().strip('"')


def lower_custom_call(instr) -> LibraryCall:
    target = custom_call_target(instr)
    handler = HANDLERS.get(target)
    if handler is None:
        raise HloUnsupportedError(
            f"{where(instr)}: custom-call target \"{target}\" is not supported by the HLO "
            f"frontend (supported targets: {', '.join(sorted(HANDLERS))})")
    return handler(instr)
