"""Atomics as compare-exchange loops, for the SPIR-V stage.

Upstream's memref-to-spirv converts a few integer `memref.atomic_rmw` kinds and no
`memref.generic_atomic_rmw` (Triton's atomic_cas, float max/min, device asserts). Like
the OpenCL C emitter (emitter_opencl/atomics.py), every atomic becomes a loop around a
compare-exchange on the element's bits:

    cur = buf[i]
    while True:
        new = f(cur)                              # the atomic's kind, or its region
        old = __atomic_cas_N(buf, i, cur, new)    # OpAtomicCompareExchange
        if bits(old) == bits(cur): break          # the result is `old`
        cur = old

`memref` has no compare-exchange op, so before conversion the loop calls a private
helper function per buffer type whose body is a placeholder; after conversion
`build_compare_exchange` gives each helper its real body with the spirv dialect's
builders (pointer to the element, bitcasts to an integer, AtomicCompareExchange).
"""
from __future__ import annotations

import re

from mlir import ir
from mlir.dialects import arith, func, memref, scf

from .flatten import WORKGROUP, error_at

HELPER_PREFIX = "__atomic_cas_"
ATOMIC_OPS = ("memref.atomic_rmw", "memref.generic_atomic_rmw")
# memref.atomic_rmw kind -> the arith op that makes the new value from (current, operand).
KIND_OPS = {
    "addf": arith.addf, "addi": arith.addi, "mulf": arith.mulf, "muli": arith.muli,
    "maximumf": arith.maximumf, "minimumf": arith.minimumf, "maxnumf": arith.maxnumf,
    "minnumf": arith.minnumf, "maxs": arith.maxsi, "mins": arith.minsi, "maxu": arith.maxui,
    "minu": arith.minui, "ori": arith.ori, "andi": arith.andi, "xori": arith.xori,
    "assign": lambda current, operand: operand,
}


def atomics_as_compare_exchange_loops(module: ir.Module) -> None:
    """Rewrites the atomics of every kernel of `module` (flattened, index widened)."""
    helpers: dict = {}
    for op in list(module.body.operations):
        if op.operation.name != "func.func":
            continue
        atomics: list = []

        def collect(inner):
            if inner.name in ATOMIC_OPS:
                atomics.append(inner.opview)
            return ir.WalkResult.ADVANCE

        op.operation.walk(collect)
        for atomic in atomics:
            _as_loop(atomic, module, helpers)


def _as_loop(op, module, helpers) -> None:
    generic = op.name == "memref.generic_atomic_rmw"
    buf, index = (op.operands[0], op.operands[1]) if generic else (op.operands[1], op.operands[2])
    element = ir.MemRefType(buf.type).element_type
    width = getattr(element, "width", 0)
    if width not in (32, 64):
        raise error_at(op, f"atomics on {element} elements are not supported (32 or 64 bits)")
    kind = None if generic else _kind(op)
    memory_space = ir.MemRefType(buf.type).memory_space
    workgroup = memory_space is not None and str(memory_space).startswith(str(WORKGROUP))
    helper = _helper(module, helpers, element, workgroup)
    with ir.InsertionPoint(op), op.location:
        i64 = ir.IntegerType.get_signless(64)
        wide_index = arith.index_cast(i64, index)
        # The buffer goes to the helper as its address: a memref operand would need a
        # conversion cast between the passes that convert the call and the kernel.
        address = arith.index_cast(i64, memref.extract_aligned_pointer_as_index(buf))
        loop = scf.WhileOp([element], [memref.load(buf, [index])])
        before = loop.before.blocks.append(element)
        with ir.InsertionPoint(before):
            current = before.arguments[0]
            new = KIND_OPS[kind](current, op.operands[0]) if kind else _region_value(op, current, before)
            old = func.call([element], ir.FlatSymbolRefAttr.get(helper), [address, wide_index, current, new])
            again = arith.cmpi(arith.CmpIPredicate.ne, _bits(old), _bits(current))
            scf.condition(again, [old])
        after = loop.after.blocks.append(element)
        with ir.InsertionPoint(after):
            scf.yield_([after.arguments[0]])
    op.result.replace_all_uses_with(loop.results[0])
    op.erase()


def _kind(op) -> str:
    """The atomic_rmw kind's name (the attribute is an integer enum; the assembly says it)."""
    kind = re.match(r"\s*(?:%\S+ = )?memref\.atomic_rmw\s+(\w+)", op.operation.get_asm()).group(1)
    if kind not in KIND_OPS:
        raise error_at(op, f"atomic kind '{kind}' is not supported")
    return kind


def _region_value(op, current, block):
    # The region computes the new value from its block argument: moved into the loop.
    body = op.regions[0].blocks[0]
    body.arguments[0].replace_all_uses_with(current)
    for inner in list(body.operations):
        if inner.name == "memref.atomic_yield":
            return inner.operands[0]
        block.append(inner)
    raise error_at(op, "has no memref.atomic_yield")


def _bits(value):
    t = value.type
    if isinstance(t, ir.IntegerType):
        return value
    return arith.bitcast(ir.IntegerType.get_signless(t.width), value)


def _helper(module, helpers, element, workgroup: bool) -> str:
    """The helper for `element` buffers in work-group or global memory:
    (address: i64, index: i64, compare: T, new: T) -> T."""
    key = (str(element), workgroup)
    if key not in helpers:
        name = f"{HELPER_PREFIX}{'local' if workgroup else 'global'}_{element}"
        i64 = ir.IntegerType.get_signless(64)
        fn_type = ir.FunctionType.get([i64, i64, element, element], [element])
        with ir.InsertionPoint.at_block_begin(module.body), ir.Location.unknown():
            helper = func.FuncOp(name, fn_type, visibility="private")
            entry = helper.add_entry_block()
            with ir.InsertionPoint(entry):
                func.ReturnOp([entry.arguments[2]])     # placeholder, see the docstring
        helpers[key] = name
    return helpers[key]


def build_compare_exchange(spirv_module) -> None:
    """Gives every converted helper its body: AtomicCompareExchange on the element."""
    for op in spirv_module.regions[0].blocks[0].operations:
        if op.name == "spirv.func" and ir.StringAttr(op.attributes["sym_name"]).value.startswith(HELPER_PREFIX):
            _compare_exchange_body(op)


def _compare_exchange_body(fn) -> None:
    # Here, not at the top: the dialect's classes cost a start-up 0.07-0.15 s, and only
    # kernels with such atomics build spirv ops in Python (dialect_modules).
    from mlir.dialects import spirv

    block = fn.regions[0].blocks[0]
    for inner in reversed(list(block.operations)):
        inner.erase()
    address, index, compare, new = block.arguments
    workgroup = ir.StringAttr(fn.attributes["sym_name"]).value.startswith(HELPER_PREFIX + "local")
    element = compare.type
    with ir.InsertionPoint(block), fn.location:
        storage = "Workgroup" if workgroup else "CrossWorkgroup"
        element_ptr = ir.Type.parse(f"!spirv.ptr<{element}, {storage}>")
        base = spirv.ConvertUToPtrOp(element_ptr, address).result
        pointer = spirv.PtrAccessChainOp(element_ptr, base, index, []).result
        bits_type = element if isinstance(element, ir.IntegerType) else \
            ir.IntegerType.get_signless(element.width)
        if bits_type != element:
            pointer = spirv.BitcastOp(ir.Type.parse(f"!spirv.ptr<{bits_type}, {storage}>"), pointer).result
            compare = spirv.BitcastOp(bits_type, compare).result
            new = spirv.BitcastOp(bits_type, new).result
        relaxed = ir.Attribute.parse("#spirv.memory_semantics<None>")
        scope = ir.Attribute.parse(f"#spirv.scope<{'Workgroup' if workgroup else 'Device'}>")
        old = spirv.AtomicCompareExchangeOp(pointer, scope, relaxed, relaxed, new, compare).result
        if bits_type != element:
            old = spirv.BitcastOp(element, old).result
        spirv.ReturnValueOp(old)
