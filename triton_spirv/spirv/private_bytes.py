"""Quirk i8_private_arrays (Intel's CPU OpenCL runtime, programs built from SPIR-V):
private i8 tiles as i32.

Intel's runtime loses the stores of a kernel that reads its values from a
Function-storage array of i8 (`memref.alloca` of i8: a work-item's private tile of int8
or bool values, e.g. a constant int8 tile filled in a loop, then stored per round under
a mask): the masked stores never land. The same module with an i16 or i32 array is
right, and so is the OpenCL C of the same kernel (`char` arrays) on Intel's runtime;
spirv-val accepts the module. So on that runtime each such alloca holds i32: its stores
widen the value (extui), its loads narrow it (trunci); the values are the same.
Reproducer: tests/test_intel_quirks.py.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from ..ir_helpers import with_element_type
from .half_types import STORES, only_accesses


def i8_private_tiles_as_i32(func) -> None:
    """Rewrites `func` (flattened) in place: each i8 alloca only loaded and stored
    becomes i32."""
    allocas: list = []

    def collect(op):
        op = op.opview
        if op.name == "memref.alloca" and _is_i8(op.result.type.element_type):
            allocas.append(op)
        return ir.WalkResult.ADVANCE

    func.walk(collect)
    for alloca in allocas:
        users = [use.owner for use in alloca.result.uses]
        if all(only_accesses(user, alloca.result) for user in users):
            with alloca.location:
                _widen(alloca, users)


def _is_i8(t: ir.Type) -> bool:
    return isinstance(t, ir.IntegerType) and t.width == 8


def _with_i32(t: ir.Type) -> ir.Type:
    return with_element_type(t, ir.IntegerType.get_signless(32))


def _widen(alloca, users) -> None:
    alloca.result.set_type(_with_i32(alloca.result.type))
    for user in users:
        if user.name in STORES:
            _store_widened(user)
        else:
            _load_narrowed(user)


def _store_widened(store) -> None:
    value = store.operands[0]
    with ir.InsertionPoint(store), store.location:
        store.operands[0] = arith.extui(_with_i32(value.type), value)


def _load_narrowed(load) -> None:
    narrow = load.result.type
    load.result.set_type(_with_i32(narrow))
    with ir.InsertionPoint.after(load), load.location:
        value = arith.trunci(narrow, load.result)
    load.result.replace_all_uses_except(value, value.owner.operation)
