"""Work-group collective functions (OpenCL C 2.0, optional in 3.0): `gpu.all_reduce`.

The memref stage makes them only for targets that have them
(triton_spirv/memref_stage/work_group_collectives.py), at points every work-item of the
group reaches; the kernel is then built with that OpenCL C version (`-cl-std`, from
the target; `EmittedKernel.work_group_collectives`). Float minimum and maximum arrive
as integer extremes (OpenCL leaves NaN in `work_group_reduce_max` to the device), so
only these kinds print.
"""

from __future__ import annotations

from . import ctypes_table as ct
from .errors import error_at

_BUILTINS = {"add": "work_group_reduce_add",
             "maxsi": "work_group_reduce_max", "minsi": "work_group_reduce_min",
             "maxui": "work_group_reduce_max", "minui": "work_group_reduce_min"}
# Where the builtin reads the operand as unsigned: min/max of unsigned integers, and
# integer sums, which wrap around there (signed overflow is undefined in OpenCL C).
_ON_UNSIGNED = ("maxui", "minui", "add")
_TYPES = ("i32", "i64", "f32", "f64")


def _all_reduce(emitter, op) -> None:
    kind = str(op.attributes["op"]).removeprefix("#gpu<all_reduce_op ").removesuffix(">")
    value = op.operands[0]
    value_kind, width = emitter.shape_of(op, value)
    if "uniform" not in op.attributes or list(op.regions[0].blocks):
        raise error_at(op, "only the uniform form with an operation attribute (no region) "
                           "is in the memref-stage contract")
    if kind not in _BUILTINS or value_kind not in _TYPES or width != 1:
        raise error_at(op, f"no work-group collective for '{kind}' of {value.type} (OpenCL C "
                           f"has sums, minima and maxima of int, long, float, double; float "
                           f"minima and maxima reach the memref stage as integer ones)")
    ctype = emitter.ctype_of(op, value)
    text = emitter.operand(value)
    if ct.is_int(value_kind) and kind in _ON_UNSIGNED:
        text = f"({ctype}){_BUILTINS[kind]}({emitter.unsigned(text, value_kind, 1)})"
    else:
        text = f"{_BUILTINS[kind]}({text})"
    emitter.define(op, op.results[0], text, ctype, role=f"group_{kind.rstrip('siuf')}")


HANDLERS = {"gpu.all_reduce": _all_reduce}
