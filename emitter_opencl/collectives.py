"""Work-group collective functions (OpenCL C 2.0, optional in 3.0): `gpu.all_reduce`;
sub-group functions (OpenCL C 3.0's `__opencl_c_subgroups`, cl_khr_subgroups):
`gpu.subgroup_reduce`, `gpu.subgroup_id`, `gpu.lane_id`, `gpu.num_subgroups`
(triton_spirv/memref_stage/work_group_sub_groups.py).

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

_BUILTINS = {"add": "reduce_add", "maxsi": "reduce_max", "minsi": "reduce_min",
             "maxui": "reduce_max", "minui": "reduce_min"}
# op -> (the builtins' prefix, the scope in messages, the result variable's prefix)
_SCOPES = {"gpu.all_reduce": ("work_group_", "work-group", "group"),
           "gpu.subgroup_reduce": ("sub_group_", "sub-group", "sub_group")}
# Sub-group ids (uint in OpenCL C) -> (builtin, variable name)
_SUB_GROUP_IDS = {"gpu.subgroup_id": ("get_sub_group_id", "sub_group"),
                  "gpu.lane_id": ("get_sub_group_local_id", "lane"),
                  "gpu.num_subgroups": ("get_num_sub_groups", "sub_groups")}
# Where the builtin reads the operand as unsigned: min/max of unsigned integers, and
# integer sums, which wrap around there (signed overflow is undefined in OpenCL C).
_ON_UNSIGNED = ("maxui", "minui", "add")
_TYPES = ("i32", "i64", "f32", "f64")


def _reduce(emitter, op) -> None:
    kind = str(op.attributes["op"]).removeprefix("#gpu<all_reduce_op ").removesuffix(">")
    prefix, scope, role = _SCOPES[op.operation.name]
    value = op.operands[0]
    value_kind, width = emitter.shape_of(op, value)
    regions = list(op.regions[0].blocks) if op.regions else []
    if "uniform" not in op.attributes or regions or "cluster_size" in op.attributes:
        raise error_at(op, "only the uniform form with an operation attribute (no region, "
                           "no cluster) is in the memref-stage contract")
    if kind not in _BUILTINS or value_kind not in _TYPES or width != 1:
        raise error_at(op, f"no {scope} collective for '{kind}' of {value.type} (OpenCL C "
                           f"has sums, minima and maxima of int, long, float, double; float "
                           f"minima and maxima reach the memref stage as integer ones)")
    ctype = emitter.ctype_of(op, value)
    text = emitter.operand(value)
    if ct.is_int(value_kind) and kind in _ON_UNSIGNED:
        text = f"({ctype}){prefix}{_BUILTINS[kind]}({emitter.unsigned(text, value_kind, 1)})"
    else:
        text = f"{prefix}{_BUILTINS[kind]}({text})"
    emitter.define(op, op.results[0], text, ctype, role=f"{role}_{kind.rstrip('siuf')}")


def _sub_group_id(emitter, op) -> None:
    builtin, role = _SUB_GROUP_IDS[op.operation.name]
    emitter.define(op, op.results[0], f"(long){builtin}()", "long", role=role)


HANDLERS = {"gpu.all_reduce": _reduce, "gpu.subgroup_reduce": _reduce,
            **{name: _sub_group_id for name in _SUB_GROUP_IDS}}
# The ops that need the target's sub-group functions.
SUB_GROUP_OPS = ("gpu.subgroup_reduce", *_SUB_GROUP_IDS)
