"""`memref.prefetch` (triton_spirv/memref_stage/next_block_prefetch.py): a hint that
asks the cache for the line of an element ahead of its use, with no effect on results.

It prints as a call of the `prefetch_line` helper (helpers.py): clang's
`__builtin_prefetch` where the OpenCL C compiler targets the CPU itself (the default CPU runtime), nothing
where it compiles to SPIR first. OpenCL's own `prefetch()` does nothing on the default CPU runtime and made
Intel's runtime no faster; the builtin made Intel's OpenCL C ~6% faster on the matmul
benchmark, but Oclgrind's interpreter rejects its intrinsic and no documented macro
tells the two SPIR compilers apart. A prefetch instruction never faults, so lines past the end of
a buffer (rows of a partial next block at a matrix's edge) cost only the request.
"""

from __future__ import annotations

from .errors import error_at
from .memory import pointer


def _prefetch(emitter, op) -> None:
    if op.attributes["isWrite"].value or not op.attributes["isDataCache"].value:
        raise error_at(op, "only read prefetches of data are printed")
    view = emitter.view(op, op.operands[0])
    if not view.buffer.is_global:
        return  # a work-group or private array is in the cache already
    index = view.element([emitter.index_expr(v) for v in list(op.operands)[1:]])
    emitter.stmt(op, f"{emitter.helpers.need('prefetch_line')}({pointer(view, index)});")


HANDLERS = {
    "memref.prefetch": _prefetch,
}
