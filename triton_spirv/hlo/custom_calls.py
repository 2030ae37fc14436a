"""custom-call: a table of the targets this frontend runs, each to a handler that turns
the call into one fused computation of ordinary HLO (a `LibraryCall`,
computation_builder.py). The runtime compiles that computation as the call's fusion and
fills the result leaves the handler maps to None (workspaces) with scratch that no
kernel writes. Adding a target is one entry here and one handler module.

Supported targets:
  __cublas$gemm, __cublas$lt$matmul    XLA:GPU's cuBLAS calls: a `dot` with the call's
                                       epilogue fused in (cublas.py)
  TopK                                 XLA:CPU's top-k (with its comparator): the call
                                       itself, as one kernel of the sort emitter
  __cudnn$convForward                  XLA:GPU's cuDNN convolutions: a `convolution`
  __cudnn$convBiasActivationForward    with the epilogue of `cudnn_conv_backend_config`
  __cudnn$convBackwardInput            fused in (cudnn.py)
  __cudnn$convBackwardFilter

A target not in the table fails with an error naming it, the line and every target
that is supported.
"""
from __future__ import annotations

from typing import Callable

from .computation_builder import LibraryCall, wrap_instruction
from .cublas import lower_cublas_gemm
from .cudnn import (lower_cudnn_backward_filter, lower_cudnn_backward_input,
                    lower_cudnn_forward)
from .errors import HloUnsupportedError, where
from .reader import HloInstruction, custom_call_target


def lower_custom_call(instr: HloInstruction) -> LibraryCall:
    """The fused computation that computes `instr`, and where each result leaf comes from."""
    target = custom_call_target(instr)
    handler = HANDLERS.get(target)
    if handler is None:
        raise HloUnsupportedError(
            f"{where(instr)}: custom-call target \"{target}\" is not supported by the HLO "
            f"frontend (supported targets: {', '.join(HANDLERS)})")
    return handler(instr)


def _top_k(instr: HloInstruction) -> LibraryCall:
    """The call is its own fused computation: the sort emitter reads `TopK` directly."""
    return LibraryCall(wrap_instruction(instr), list(range(len(instr.shape.leaves()))))


HANDLERS: dict[str, Callable[[HloInstruction], LibraryCall]] = {
    "__cublas$gemm": lower_cublas_gemm,
    "__cublas$lt$matmul": lower_cublas_gemm,
    "TopK": _top_k,
    "__cudnn$convForward": lower_cudnn_forward,
    "__cudnn$convBiasActivationForward": lower_cudnn_forward,
    "__cudnn$convBackwardInput": lower_cudnn_backward_input,
    "__cudnn$convBackwardFilter": lower_cudnn_backward_filter,
}
