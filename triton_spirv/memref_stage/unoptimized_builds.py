"""Quirk not_then_integer_max (Intel's CPU OpenCL runtime): kernels that take an integer
max or min of a bitwise not are built unoptimized.

Intel's optimizer miscompiles kernels where `~x` (an xor with all ones) meets an integer
max or min (a `tl.max` or `tl.maximum` of `~x`, or of values computed from it): a
masked atomic after an early return is lost, stores get wrong values, or the compiler
crashes (tests/fuzz/findings/intel_cpu_*.py; a 30-line OpenCL C reduction beside
them). The same OpenCL C built with -cl-opt-disable computes right there, and PoCL and
Oclgrind compute it right optimized; SPIR-V programs of such kernels stay wrong with
that option. So on that runtime such a kernel function is marked
`opencl.unoptimized_build`: the compiler builds its OpenCL C with -cl-opt-disable
(triton_spirv/compiler.py) and the SPIR-V stage refuses it (auto mode then takes the
OpenCL C). Reproducer: tests/test_intel_quirks.py.
"""
from __future__ import annotations

from mlir import ir

from ..ir_helpers import constant_attr

UNOPTIMIZED_BUILD = "opencl.unoptimized_build"
_INTEGER_MAX_MIN = ("arith.maxsi", "arith.maxui", "arith.minsi", "arith.minui")


def mark_unoptimized_builds(module: ir.Module) -> int:
    """Marks each function holding both a bitwise not and an integer max or min of
    values (not of indices); returns how many."""
    marked = 0
    for func in module.body.operations:
        if func.operation.name != "func.func":
            continue
        names = _op_names_and_nots(func)
        if names["not"] and names["max_min"]:
            func.attributes[UNOPTIMIZED_BUILD] = ir.UnitAttr.get()
            marked += 1
    return marked


def _op_names_and_nots(func) -> dict:
    found = {"not": False, "max_min": False}

    def visit(op):
        if op.name in _INTEGER_MAX_MIN and not _on_indices(op):
            found["max_min"] = True
        elif op.name == "arith.xori" and any(_is_all_ones(v) for v in op.operands):
            found["not"] = True
        return ir.WalkResult.ADVANCE
    func.operation.walk(visit)
    return found


def _on_indices(op) -> bool:
    """A max or min of indices (a masked tile's extent): the kernel's own index
    arithmetic, not the values' max the quirk is about."""
    return isinstance(op.results[0].type, ir.IndexType)


def _is_all_ones(value: ir.Value) -> bool:
    attr = constant_attr(value)
    # i1 nots (a mask's negation) are not the bitwise not of an integer
    return isinstance(attr, ir.IntegerAttr) and ir.IntegerType(attr.type).width > 1 and \
        attr.value == -1
