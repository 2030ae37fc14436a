"""Memref stage -> SPIR-V (the `spv` stage) with upstream MLIR's SPIR-V dialect.

The steps down to the clean-up are `STEPS`, named as the FileCheck tests
(tests/filecheck/spirv_*.mlir) name them, with the checks that refuse what the stage
cannot convert among them:

    calls_to_stand_ins (opencl_std.py)  math ops and libdevice builtins that are one OpenCL.std
                                        instruction without a dialect op: calls of stand-ins
    lower_copies (memref_stage/         the copies the memref stage left as work-group async
      copy_lowering.py)                 copies -> loops shared by the group between barriers
    flatten_buffers (flatten.py)        views -> flat buffers, index arithmetic
    fp8_values_as_f32 (fp8.py)          fp8 buffers as i8, values as f32, conversions as bit
                                        arithmetic (the OpenCL C emitter's helpers)
    half_types.py                       bf16 buffers as i16, f16/bf16 scalar arguments as f32,
                                        f16 work-group tiles as f32
    widen_index (index_width.py)        `index` -> i64, so all conversions agree on it
    casts.py                            saturating fptosi/fptoui, math.trunc
    tanh.py                             f32 math.tanh as the OpenCL C emitter's exact helper
    atomics.py                          atomics -> compare-exchange loops around a helper
    math-expand-ops, arith-expand,      ops without an OpenCL SPIR-V pattern; fold and
    canonicalize, cse, licm             hoist the index arithmetic
    kernels_in_gpu_module               func.func -> gpu.func in a gpu.module whose target
                                        is an OpenCL SPIR-V environment (Kernel, Physical64)
    TO_SPIRV                            upstream conversions (memref storage classes, math,
                                        scf -> cf -> spirv, func, gpu/arith/memref/vector)
    mark_nontemporal (nontemporal.py)   streaming stores' Nontemporal memory operand, which
                                        upstream's vector.store conversion drops
    build_compare_exchange              the atomics helpers' bodies, spirv dialect builders
    spirv-lower-abi-attrs, -update-vce  entry point, local size, minimal capabilities
    stand_ins_as_placeholders           the stand-ins' calls as decorated OpenCL.std ops
    gpu-module-to-binary                serializes the spirv.module (the SPIR-V words)
    patch_placeholders                  ... which then get their instruction numbers

`memref.prefetch` (a hint, next_block_prefetch.py) is dropped first: upstream has no
SPIR-V pattern for it, and OpenCL.std's prefetch made Intel's runtime no faster.

Kernels that call a function without a body (calls.py: libdevice functions the
OpenCL C emitter prints as builtins or helpers, other than those opencl_std.py takes)
are an error before the flattening.

Everything runs through the MLIR Python bindings in one context. Upstream's spirv
dialect has no OpGroupAsyncCopy/OpGroupWaitEvents, so the copies the memref stage
leaves as marked async copies (memref_stage/copy_lowering.py; it lowers every other
copy itself) become loops, shared by the work-items of a group.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from mlir import ir, passmanager
from mlir.dialects import gpu

from .calls import check_no_external_calls
from ..memref_stage.copy_lowering import lower_copies
from emitter_opencl.locations import source_line

from ..ir_helpers import constant_attr, holds, root_buffer
from .flatten import OpenCLCChosen, SpirvStageError, flatten_buffers, local_size
from .fp8 import check_no_fp8, fp8_values_as_f32
from .atomics import atomics_as_compare_exchange_loops, build_compare_exchange
from .casts import expand_signed_remainders, expand_trunc, saturate_float_to_int
from .half_types import BF16_PASSES, bf16_buffers_as_i16, check_no_bf16, f16_tiles_as_f32
from .index_width import widen_index
from .private_bytes import i8_private_tiles_as_i32
from .nontemporal import mark_nontemporal, store_flags
from .opencl_std import calls_to_stand_ins, patch_placeholders, stand_ins_as_placeholders
from .erf import expand_f32_erf
from .selects import splat_select_conditions
from .tanh import expand_f32_tanh

# What the module may use; spirv-update-vce then declares only what it does use.
# SPIR-V 1.0 with the OpenCL memory model: every OpenCL 2.1+/3.0 driver that reports
# an IL version takes it. Groups (gpu.all_reduce -> OpGroup* of work-group scope, made
# for targets with work-group collective functions, memref_stage/
# work_group_collectives.py) is an OpenCL 2.0 capability: only modules for such
# targets may use it (`groups`), and they are OpenCL 2.0 modules (`environment`).
CAPABILITIES = ("Kernel, Addresses, Int8, Int16, Int64, Float16, Float64, Float16Buffer, "
                "Int64Atomics, Vector16, GenericPointer")


def target_env(groups: bool = False) -> str:
    capabilities = CAPABILITIES + (", Groups" if groups else "")
    return (f"#spirv.target_env<#spirv.vce<v1.0, [{capabilities}], []>, "
            "api=OpenCL, #spirv.resource_limits<>>")


def environment(groups: bool) -> str:
    """The OpenCL environment a module is for, as spirv-val's --target-env names it."""
    return "opencl2.0" if groups else "opencl1.2"
GPU_MODULE = "kernels"

# Math ops without an OpenCL SPIR-V pattern, in terms of ones with (exp2 -> exp, ...;
# opencl_std.py has taken f16/f32/f64 exp2 before);
# arith-expand does the same for floordivsi/ceildivsi/ceildivui.
MATH_EXPANSIONS = "math-expand-ops{ops=exp2,ctlz,fpowi}"
CLEANUP = BF16_PASSES + (MATH_EXPANSIONS, "arith-expand", "canonicalize", "cse", "loop-invariant-code-motion",
           "canonicalize")
TO_SPIRV = (
    "map-memref-spirv-storage-class{client-api=opencl}",
    "convert-math-to-spirv",
    # Loops as branches (Kernel modules may branch freely): convert-scf-to-spirv's
    # structured loops leave a loop's results unset when it runs zero times.
    "convert-scf-to-cf",
    "convert-cf-to-spirv",
    "convert-func-to-spirv",   # atomics.py: its helper functions and the calls to them
    "convert-gpu-to-spirv{use-64bit-index=true}",
)
AFTER_SPIRV = ("gpu.module(spirv.module(spirv-lower-abi-attrs,spirv-update-vce,canonicalize))",)


@dataclass
class SpirvModule:
    name: str             # the kernel's entry point
    binary: bytes         # SPIR-V words, little-endian
    assembly: str         # the spirv.module as MLIR text (the `spvasm` stage)
    environment: str = "opencl1.2"   # its OpenCL environment (spirv-val --target-env)


def _run(module: ir.Module, passes, what: str) -> None:
    pm = passmanager.PassManager.parse("builtin.module(" + ",".join(passes) + ")")
    try:
        pm.run(module.operation)
    except ir.MLIRError as err:
        raise SpirvStageError(f"{what} failed: {_first_errors(err)}") from None


def _first_errors(err: ir.MLIRError) -> str:
    """The diagnostics' own lines (op, location, why), without the module dumps that
    follow them."""
    lines = [d.message for d in err.error_diagnostics] if getattr(err, "error_diagnostics", None) else []
    located = [f"{_where(d.location)}: {d.message}" for d in err.error_diagnostics] if lines else []
    return "; ".join(located) if located else str(err).split("\n note:")[0]


def _where(location: ir.Location) -> str:
    """The user's line of a diagnostic's location (`file:line`), else the location."""
    return str(source_line(location) or location)


def kernels_in_gpu_module(module: ir.Module, entry_name: str | None = None,
                          groups: bool = False) -> None:
    """Moves each func.func of `module` into a gpu.func kernel of one gpu.module,
    named `entry_name` when given (the OpenCL C kernel's name, which the launcher asks
    the program for), for an environment with the Groups capability where `groups`."""
    funcs = _funcs(module)
    module.operation.attributes["gpu.container_module"] = ir.UnitAttr.get()
    # Passes that run on the whole module (convert-scf-to-spirv) read the target here.
    env = ir.Attribute.parse(target_env(groups))
    module.operation.attributes["spirv.target_env"] = env
    with ir.InsertionPoint(module.body), module.operation.location:
        gmod = gpu.GPUModuleOp(GPU_MODULE, targets=ir.ArrayAttr.get([env]))
        gmod.bodyRegion.blocks.append()
    for func in funcs:
        if _is_private(func):
            # Helpers the kernels call (atomics.py): plain functions of the gpu.module.
            func.detach_from_parent()
            gmod.bodyRegion.blocks[0].append(func)
        else:
            _as_gpu_kernel(func, gmod, entry_name)


def _is_private(func) -> bool:
    return "sym_visibility" in func.attributes and \
        ir.StringAttr(func.attributes["sym_visibility"]).value == "private"


def _funcs(module: ir.Module) -> list:
    return [op.operation for op in module.body.operations if op.operation.name == "func.func"]


def _as_gpu_kernel(func, gmod, entry_name: str | None) -> None:
    fn_type = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    size = local_size(func)
    with ir.InsertionPoint(gmod.bodyRegion.blocks[0]), func.location:
        kernel = gpu.GPUFuncOp(fn_type, sym_name=entry_name or ir.StringAttr(func.attributes["sym_name"]).value,
                               kernel=True)
    kernel.attributes["spirv.entry_point_abi"] = ir.Attribute.parse(
        f"#spirv.entry_point_abi<workgroup_size = [{size[0]}, {size[1]}, {size[2]}]>")
    body = func.regions[0].blocks[0]
    body.append_to(kernel.body)
    terminator = body.operations[len(body.operations) - 1]
    with ir.InsertionPoint(terminator), terminator.location:
        gpu.ReturnOp([])
    terminator.erase()
    func.erase()


def check_private_arrays(module: ir.Module) -> None:
    """Quirk private_zero_tiles_in_gpu_spirv (Intel's runtime): a GPU-shaped kernel (a
    work-group of several work-items) that stores zeros into a private array
    (`memref.alloca`) is refused with SpirvStageError, so that auto mode builds its
    OpenCL C. Tiles of other constants compute right there."""
    for func in _funcs(module):
        work_items = 1
        for extent in local_size(func):
            work_items *= extent
        if work_items > 1 and _stores_zeros_to_a_private_array(func):
            raise OpenCLCChosen(
                "a GPU-shaped kernel with a zero tile in a private array: this device's "
                "SPIR-V consumer loses its stores (quirk private_zero_tiles_in_gpu_spirv); "
                "its OpenCL C computes it right")


def check_optimized_build(module: ir.Module) -> None:
    """A kernel marked `opencl.unoptimized_build` (quirk not_then_integer_max,
    memref_stage/unoptimized_builds.py) is refused with SpirvStageError: its SPIR-V
    stays miscompiled unoptimized too; auto mode builds its OpenCL C."""
    for func in _funcs(module):
        if "opencl.unoptimized_build" in func.attributes:
            raise OpenCLCChosen(
                "an integer max or min of a bitwise not: this device's optimizer miscompiles "
                "it (quirk not_then_integer_max); its OpenCL C, built unoptimized, computes "
                "it right")


def _stores_zeros_to_a_private_array(func) -> bool:
    return holds(func, lambda op: op.name in ("memref.store", "vector.store") and
                 _is_zero(op.operands[0]) and _root_op_name(op.operands[1]) == "memref.alloca")


def _is_zero(value: ir.Value) -> bool:
    attr = constant_attr(value)
    if isinstance(attr, ir.IntegerAttr):
        return attr.value == 0
    if isinstance(attr, ir.FloatAttr):
        return attr.value == 0.0
    return False


def _root_op_name(memref: ir.Value) -> str:
    root = root_buffer(memref)
    owner = root.owner
    return owner.name if isinstance(owner, (ir.OpView, ir.Operation)) else ""


def lower_to_spirv(module: ir.Module, entry_name: str | None = None,
                   groups: bool = False, quirks: tuple[str, ...] = ()) -> SpirvModule:
    """Lowers a memref-stage module in place and serializes its one kernel (named
    `entry_name` when given); `groups`: the target takes the Groups capability (OpenCL
    2.0 and later: work-group collectives), else the module may not use it; `quirks`:
    the target's device quirks (triton_spirv/target.py) this lowering works around."""
    with module.context:
        for step in STEPS:
            if step.applies(quirks):
                step.run(module)
        kernels_in_gpu_module(module, entry_name, groups)
        flags = store_flags(module)
        _run(module, TO_SPIRV, "conversion to the SPIR-V dialect")
        mark_nontemporal(_spirv_module(module), flags)
        build_compare_exchange(_spirv_module(module))
        _run(module, AFTER_SPIRV, "SPIR-V ABI lowering")
        stand_ins_as_placeholders(_spirv_module(module))
        assembly = str(_spirv_module(module))
        name = _entry_point(module)
        _run(module, ("gpu-module-to-binary{format=bin}",), "SPIR-V serialization")
        binary = patch_placeholders(_binary(module))
    return SpirvModule(name, binary, assembly, environment(groups))


def drop_prefetches(module: ir.Module) -> None:
    """Erases every `memref.prefetch`; the views only they used go in the clean-up."""
    prefetches = []

    def collect(op):
        if op.name == "memref.prefetch":
            prefetches.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(collect)
    for op in prefetches:
        op.erase()


def _clean_up(module: ir.Module) -> None:
    """Upstream passes (CLEANUP): bf16 arithmetic in f32, the math ops without an
    OpenCL SPIR-V pattern expanded, the index arithmetic folded and hoisted."""
    _run(module, CLEANUP, "clean-up after flattening")


@dataclass(frozen=True)
class Step:
    """One step of the SPIR-V stage before the conversion, on the memref-stage module:
    its `name` (as the FileCheck tests' `// PASS:` lines name it), `run(module)`, the
    device `quirk` it works around (it runs only for targets with that quirk), and
    whether it only `checks` (raises SpirvStageError at what the stage cannot convert,
    changes nothing)."""
    name: str
    run: Callable[[ir.Module], None]
    quirk: str | None = None
    checks: bool = False

    def applies(self, quirks: tuple[str, ...]) -> bool:
        return self.quirk is None or self.quirk in quirks


def per_function(rewrite: Callable) -> Callable[[ir.Module], None]:
    """A rewrite of one func.func as a rewrite of every function of a module."""
    def run(module: ir.Module) -> None:
        for func in _funcs(module):
            rewrite(func)
    run.__doc__ = rewrite.__doc__
    return run


# The steps lower_to_spirv runs, in order, before it moves the kernels into a
# gpu.module and converts them (the module docstring says what each is for): the
# stand-ins before the call check (it would refuse the calls they take), the copies as
# loops before the flattening (which rewrites the views they read), the rewrites of
# types and ops on flat buffers, the atomics after the index widening (their helpers
# take i64 indices), the clean-up last (it folds what the others built).
STEPS = (
    Step("spirv-check-private-zero-tiles", check_private_arrays,
         quirk="private_zero_tiles_in_gpu_spirv", checks=True),
    Step("spirv-check-optimized-build", check_optimized_build, checks=True),
    Step("spirv-calls-to-stand-ins", calls_to_stand_ins),
    Step("spirv-check-external-calls", check_no_external_calls, checks=True),
    Step("spirv-drop-prefetches", drop_prefetches),
    Step("spirv-copy-lowering", lower_copies),
    Step("spirv-flatten", flatten_buffers),
    Step("spirv-fp8-as-f32", per_function(fp8_values_as_f32)),
    Step("spirv-bf16-as-i16", per_function(bf16_buffers_as_i16)),
    Step("spirv-f16-tiles-as-f32", per_function(f16_tiles_as_f32)),
    Step("spirv-i8-private-tiles-as-i32", per_function(i8_private_tiles_as_i32),
         quirk="i8_private_arrays"),
    Step("spirv-widen-index", per_function(widen_index)),
    Step("spirv-saturate-float-to-int", per_function(saturate_float_to_int)),
    Step("spirv-expand-trunc", per_function(expand_trunc)),
    Step("spirv-expand-signed-remainders", per_function(expand_signed_remainders)),
    Step("spirv-expand-tanh", per_function(expand_f32_tanh)),
    Step("spirv-expand-erf", per_function(expand_f32_erf)),
    Step("spirv-splat-select-conditions", per_function(splat_select_conditions)),
    Step("spirv-atomics-as-compare-exchange", atomics_as_compare_exchange_loops),
    Step("spirv-check-fp8", check_no_fp8, checks=True),
    Step("spirv-clean-up", _clean_up),
    Step("spirv-check-bf16", check_no_bf16, checks=True),
)


def _spirv_module(module: ir.Module):
    for op in module.body.operations:
        if op.operation.name == "gpu.module":
            for inner in op.regions[0].blocks[0].operations:
                if inner.operation.name == "spirv.module":
                    return inner
    raise SpirvStageError("conversion produced no spirv.module")


def _entry_point(module: ir.Module) -> str:
    for op in _spirv_module(module).regions[0].blocks[0].operations:
        if op.operation.name == "spirv.EntryPoint":
            return ir.FlatSymbolRefAttr(op.attributes["fn"]).value
    raise SpirvStageError("the spirv.module has no entry point")


def _binary(module: ir.Module) -> bytes:
    for op in module.body.operations:
        if op.operation.name == "gpu.binary":
            objects = ir.ArrayAttr(op.attributes["objects"])
            return bytes(gpu.ObjectAttr(objects[0]).object)
    raise SpirvStageError("gpu-module-to-binary produced no gpu.binary")
