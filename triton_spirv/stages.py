"""The text-to-text steps behind the compiler stages, shared by the Triton backend, the
command line and the HLO frontend. Each step parses its input in a fresh MLIR context,
so a stage can be re-run from its cached text."""
from __future__ import annotations

import os

from mlir import ir


def new_context() -> ir.Context:
    ctx = ir.Context()
    # TTIR ops (`tt.*`) are read as unregistered ops in generic form.
    ctx.allow_unregistered_dialects = True
    return ctx


def print_module(module: ir.Module) -> str:
    return module.operation.get_asm(enable_debug_info=True)


def ttir_to_linalg_text(ttir_text: str) -> str:
    from .ir_dump import dump_after
    from .ttir import read_ttir
    from .ttir_to_linalg import convert_ttir
    with new_context() as ctx:
        module = convert_ttir(read_ttir(ttir_text, ctx))
        dump_after("convert-ttir-to-linalg", module)
        return print_module(module)


def linalg_to_memref_text(linalg_text: str, work_items: int = 1) -> str:
    from .pipeline import lower_to_memref
    with new_context():
        module = ir.Module.parse(linalg_text)
        return print_module(lower_to_memref(module, work_items=work_items))


def memref_to_opencl(memref_text: str, bounds_check: bool = False):
    from emitter_opencl import emit_opencl
    with new_context():
        return emit_opencl(ir.Module.parse(memref_text), bounds_check=bounds_check)


def opencl_to_clbin(source: str, metadata: dict) -> bytes:
    """Builds the OpenCL C for the current device and packs it with its launch facts."""
    from launcher import build_program, get_device, pack_clbin
    device = get_device()
    from launcher.resources import check_local_memory
    check_local_memory(metadata["name"], source, metadata["shared"], device)
    _program, binary = build_program(source, device, name=metadata["name"])
    return pack_clbin(name=metadata["name"], source=source, binary=binary, device=device,
                      arg_types=metadata["arg_types"], local_size=metadata["local_size"],
                      local_mem_bytes=metadata["shared"], bounds=metadata.get("bounds"))


def dump_stage(directory: str, kernel: str, ext: str, content) -> str:
    """Writes one stage of one kernel to `directory/kernel/kernel.ext` and returns the path."""
    folder = os.path.join(directory, kernel)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{kernel}.{ext}")
    mode = "wb" if isinstance(content, bytes) else "w"
    with open(path, mode) as f:
        f.write(content)
    return path
