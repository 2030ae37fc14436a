"""The text-to-text steps behind the compiler stages, shared by the Triton backend, the
command line and the HLO frontend. Each step parses its input in a fresh MLIR context,
so a stage can be re-run from its cached text."""
from __future__ import annotations

import os

from mlir import ir

from .dialect_modules import use_light_dialect_modules


def new_context() -> ir.Context:
    # Before any op reaches Python: empty modules for linalg and tt (dialect_modules).
    use_light_dialect_modules()
    ctx = ir.Context()
    # TTIR ops (`tt.*`) are read as unregistered ops in generic form.
    ctx.allow_unregistered_dialects = True
    return ctx


def print_module(module: ir.Module) -> str:
    return module.operation.get_asm(enable_debug_info=True)


def ttir_to_linalg_text(ttir_text: str, versioning_allowed: bool = True,
                        lane_reductions: bool = True) -> str:
    from .ir_dump import dump_after
    from .ttir import read_ttir
    from .ttir_to_linalg import convert_ttir
    with new_context() as ctx:
        module = convert_ttir(read_ttir(ttir_text, ctx), versioning_allowed,
                              lane_reductions)
        dump_after("convert-ttir-to-linalg", module)
        return print_module(module)


def linalg_to_memref_text(linalg_text: str, config=None, **params) -> str:
    """The memref stage of a Linalg module for a `PipelineConfig` (memref_stage/passes.py),
    or for the config of `params` (its fields by name; the CPU shape by default)."""
    from .memref_stage.pipeline import PipelineConfig, lower_to_memref
    with new_context():
        module = ir.Module.parse(linalg_text)
        return print_module(lower_to_memref(module, config or PipelineConfig(**params)))


def memref_to_opencl(memref_text: str, bounds_check: bool = False):
    from emitter_opencl import emit_opencl
    with new_context():
        return emit_opencl(ir.Module.parse(memref_text), bounds_check=bounds_check)


def memref_to_spirv(memref_text: str, entry_name: str | None = None, groups: bool = False,
                    quirks: tuple[str, ...] = ()):
    """The memref stage as a SPIR-V module (triton_spirv/spirv): binary and assembly;
    `groups`: for a target with work-group collectives (an OpenCL 2.0 module); `quirks`:
    the target's device quirks the lowering works around."""
    from .spirv import lower_to_spirv
    with new_context():
        return lower_to_spirv(ir.Module.parse(memref_text), entry_name, groups, quirks)


def spirv_for_kernel(memref_text: str, name: str, mode: str, bounds_check: bool = False,
                     groups: bool = False, quirks: tuple[str, ...] = ()):
    """The kernel's SPIR-V module under program mode `mode` (launcher/il.py), or None
    when it keeps OpenCL C. Only `auto` falls back (logged once); `spirv` raises.
    `groups`: the target has work-group collective functions, `quirks`: its device
    quirks (memref_to_spirv)."""
    from launcher import get_device
    from launcher.il import log_fallback_once, uses_spirv
    from .spirv import OpenCLCChosen, SpirvStageError
    if not uses_spirv(mode, get_device(), name):
        return None
    try:
        if bounds_check:
            raise OpenCLCChosen("bounds-checked kernels are built from OpenCL C only")
        return memref_to_spirv(memref_text, name, groups, quirks)
    except SpirvStageError as err:
        if mode == "spirv":
            raise type(err)(f"kernel '{name}': {err}") from None
        log_fallback_once(name, str(err), chosen=isinstance(err, OpenCLCChosen))
        return None


def kernel_clbin(source: str, metadata: dict, spirv: bytes | None, mode: str) -> bytes:
    """opencl_to_clbin; in `auto` mode a device that rejects the SPIR-V module gets
    the OpenCL C instead (logged once)."""
    from launcher.errors import OpenCLBuildError
    from launcher.il import log_fallback_once
    try:
        return opencl_to_clbin(source, metadata, spirv=spirv, program=mode)
    except OpenCLBuildError as err:
        if not spirv or mode == "spirv":
            raise
        log_fallback_once(metadata["name"], f"the device rejected its SPIR-V module: {err.log}")
        return opencl_to_clbin(source, metadata, program=mode)


def opencl_to_clbin(source: str, metadata: dict, spirv: bytes | None = None,
                    program: str = "auto") -> bytes:
    """Builds the kernel for the current device (from its SPIR-V module when given,
    else from the OpenCL C) and packs it with its launch facts."""
    from launcher import build_program, get_device, pack_clbin
    from launcher.il import build_il
    from launcher.program import program_binary
    device = get_device()
    from launcher.resources import check_local_memory
    check_local_memory(metadata["name"], source, metadata["shared"], device)
    # OpenCL C 2.0+ for kernels that call work-group collective functions
    options = tuple(metadata.get("build_options") or ())
    if spirv:
        binary = program_binary(build_il(device, spirv, metadata["name"]))
    else:
        _program, binary = build_program(source, device, options, name=metadata["name"])
    return pack_clbin(name=metadata["name"], source=source, binary=binary, device=device,
                      arg_types=metadata["arg_types"], local_size=metadata["local_size"],
                      local_mem_bytes=metadata["shared"], build_options=options,
                      bounds=metadata.get("bounds"), spirv=spirv, program=program)


def dump_stage(directory: str, kernel: str, ext: str, content) -> str:
    """Writes one stage of one kernel to `directory/kernel/kernel.ext` and returns the path."""
    folder = os.path.join(directory, kernel)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{kernel}.{ext}")
    mode = "wb" if isinstance(content, bytes) else "w"
    with open(path, mode) as f:
        f.write(content)
    return path
