"""HLO module -> kernels: each fusion (and each unfused instruction, wrapped as a
one-instruction fusion) goes through hero analysis, its emitter, the pass pipeline
(passes.py), the OpenCL emitter and the OpenCL build.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field

from mlir import ir

from .emitters import choose_emitter
from .emitters.base import FusionBuilder, FusionReport, KernelPlan
from .passes import run_passes


@dataclass
class CompiledKernel:
    name: str
    plan: KernelPlan
    source: str                       # OpenCL C
    arg_types: list[str]
    local_size: tuple[int, int, int]
    local_mem_bytes: int
    stages: dict[str, str] = field(default_factory=dict)
    _handle: object = None
    _launcher: object = None


@dataclass
class CompiledFusion:
    name: str
    computation: object
    kernels: list[CompiledKernel]
    report: FusionReport


def source_file_for(module) -> str:
    """A file holding the module's text, so that locations (and the comments of the
    generated OpenCL C) can quote HLO lines even when the text came from a string."""
    if module.path and os.path.exists(module.path):
        return os.path.abspath(module.path)
    digest = hashlib.sha256(module.text.encode()).hexdigest()[:16]
    folder = os.path.join(os.path.expanduser(os.environ.get(
        "TRITON_SPIRV_HLO_CACHE", "~/.cache/triton-spirv/hlo")))
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{module.name}-{digest}.hlo")
    if not os.path.exists(path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(module.text)
    return path


def build_fusion(name: str, computation, source_path: str | None) -> tuple[FusionBuilder, list[KernelPlan]]:
    """Runs hero analysis and the chosen emitter: kernel modules still on tensors."""
    choice = choose_emitter(computation)
    builder = FusionBuilder(name, computation, source_path, extra_roots=choice.forced_roots)
    builder.report.emitter = choice.kind
    builder.report.hero = ", ".join(f"%{h.name}" for h in choice.heroes) or "-"
    choice.emit(builder)
    return builder, builder.kernels


def compile_fusion(name: str, computation, source_path: str | None = None,
                   keep_stages: bool = False, build: bool = True) -> CompiledFusion:
    from emitter_opencl import emit_opencl

    with ir.Context(), ir.Location.unknown():
        builder, plans = build_fusion(name, computation, source_path)
        kernels = []
        for plan in plans:
            stages: dict[str, str] = {}
            dump = (lambda stage, text: stages.__setitem__(stage, text)) if keep_stages else None
            run_passes(plan.module, dump)
            emitted = emit_opencl(plan.module)
            kernels.append(CompiledKernel(plan.name, plan, emitted.source, emitted.arg_types,
                                          emitted.local_size, emitted.local_mem_bytes, stages))
            plan.module = None   # the MLIR objects die with this context
    return CompiledFusion(name, computation, kernels, builder.report)


def kernel_name(instr) -> str:
    return "".join(c if c.isalnum() else "_" for c in instr.name)
