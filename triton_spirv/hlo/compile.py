"""HLO module -> kernels: each fusion (and each unfused instruction, wrapped as a
one-instruction fusion) goes through hero analysis, its emitter, the pass pipeline
(passes.py), the OpenCL emitter and the OpenCL build.

Each compiled fusion also has its *host code*: Python source generated from its shapes
by the shape-contract generator (`triton_spirv/shapes.py`), run before every launch:

    dims = check(args)      # args: {parameter or output name: array}; raises
                            # ShapeCheckError before anything runs
    output_shapes(dims)     # the shape of each output
    launch(dims)            # the grid (work-groups) of each kernel

`triton-spirv hlo emit` writes it next to the .cl as `<fusion>.host_checks.py`.

Compiled fusions are cached in the process, keyed on the fusion's text with its
(resolved) shapes: one kernel compiled for `f32[?,512,D]` serves every size, and
`compilations()` counts the compilations actually done.
"""
from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field

from mlir import ir

from emitter_opencl.names import is_reserved

from .emitters import choose_emitter
from .emitters.base import FusionBuilder, FusionReport, KernelPlan
from .passes import run_passes
from ..target import check_kernel_fits
from .target import EmitTarget, emit_target


@dataclass
class CompiledKernel:
    name: str
    plan: KernelPlan
    source: str                       # OpenCL C
    arg_types: list[str]
    local_size: tuple[int, int, int]
    local_mem_bytes: int
    stages: dict[str, str] = field(default_factory=dict)
    stage_seconds: dict[str, float] = field(default_factory=dict)  # with keep_stages
    spirv: bytes | None = None        # the SPIR-V module (`spv`), when the device gets one
    spvasm: str = ""                  # the same as spirv-dialect MLIR
    program: str = "auto"             # the program mode it was compiled for (launcher/il.py)
    loaded: object = None             # the launcher's LoadedKernel, made on first launch (runtime.py)


@dataclass
class CompiledFusion:
    name: str
    computation: object
    kernels: list[CompiledKernel]
    report: FusionReport
    symbols: list[str] = field(default_factory=list)      # dynamic dimensions
    param_names: list[str] = field(default_factory=list)  # host-check argument names
    output_names: list[str] = field(default_factory=list)
    host_source: str = ""                                 # generated host code
    host: dict = field(default_factory=dict)              # check, output_shapes, launch

    @property
    def dynamic(self) -> bool:
        return bool(self.symbols)


_CACHE: dict = {}
_COUNT = [0]


def compilations() -> int:
    """How many fusions this process has compiled (cache hits do not count)."""
    return _COUNT[0]


def fusion_key(computation) -> str:
    """The text of a fused computation and the computations it calls, with resolved
    shapes, layouts, attributes and source lines: equal keys compile alike."""
    lines, seen = [], set()

    def add(comp):
        if comp.name in seen:
            return
        seen.add(comp.name)
        lines.append(f"{comp.name} {{")
        for i in comp.instructions:
            attrs = ",".join(f"{k}={v}" for k, v in sorted(i.attrs.items()) if k != "metadata")
            lines.append(f"{'ROOT ' if i.is_root else ''}{i.name}={i.shape!r} {i.opcode}("
                         f"{','.join(o.name for o in i.operands)}) {attrs} {i.literal} "
                         f"{i.parameter_number} @{i.line}:{i.column}")
            for c in i.called:
                add(c)
        lines.append("}")
    add(computation)
    return "\n".join(lines)


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


def build_fusion(name: str, computation, source_path: str | None,
                 target: EmitTarget | None = None) -> tuple[FusionBuilder, list[KernelPlan]]:
    """Runs hero analysis and the chosen emitter: kernel modules still on tensors."""
    choice = choose_emitter(computation)
    builder = FusionBuilder(name, computation, source_path, extra_roots=choice.forced_roots,
                            target=target or emit_target())
    builder.report.emitter = choice.kind
    builder.report.hero = ", ".join(f"%{h.name}" for h in choice.heroes) or "-"
    choice.emit(builder)
    return builder, builder.kernels


def compile_fusion(name: str, computation, source_path: str | None = None,
                   keep_stages: bool = False, build: bool = True,
                   program: str | None = None) -> CompiledFusion:
    from launcher.il import requested_mode
    target = emit_target()
    program = requested_mode(program)
    key = (name, source_path, keep_stages, target, program, fusion_key(computation))
    found = _CACHE.get(key)
    if found is None:
        found = _CACHE[key] = _compile_fusion(name, computation, source_path, keep_stages,
                                              target, program)
    return found


def _compile_fusion(name: str, computation, source_path: str | None,
                    keep_stages: bool, target: EmitTarget, program: str) -> CompiledFusion:
    from emitter_opencl import emit_opencl
    _COUNT[0] += 1

    with ir.Context(), ir.Location.unknown():
        start = time.perf_counter()
        builder, plans = build_fusion(name, computation, source_path, target)
        # The emitter builds every kernel of the fusion at once: each shows that time.
        emitter_seconds = time.perf_counter() - start
        kernels = []
        for plan in plans:
            stages = _StageRecorder(emitter_seconds) if keep_stages else None
            quirks = target.description.quirks
            run_passes(plan.module, stages, quirks)
            emitted = emit_opencl(plan.module)
            check_kernel_fits(emitted, target.description)
            spirv = _spirv_module(plan.module, emitted.name, program, quirks)
            kernels.append(CompiledKernel(
                emitted.name, plan, emitted.source, emitted.arg_types, emitted.local_size,
                emitted.local_mem_bytes, stages=stages.texts if stages else {},
                stage_seconds=stages.finish("cl") if stages else {},
                spirv=spirv and spirv.binary, spvasm=spirv.assembly if spirv else "",
                program=program))
            plan.module = None   # the MLIR objects die with this context
    fusion = CompiledFusion(name, computation, kernels, builder.report,
                            symbols=list(builder.symbols))
    from .host import attach_host_code
    attach_host_code(fusion, builder)
    return fusion


class _StageRecorder:
    """run_passes' dump callback: keeps each stage's text and the time since the one
    before; the first stage ("emitted", the emitter's output) takes the emitter's time."""

    def __init__(self, emitter_seconds: float):
        self.texts: dict[str, str] = {}
        self.seconds: dict[str, float] = {}
        self._first = emitter_seconds
        self._last = time.perf_counter()

    def __call__(self, stage: str, text: str) -> None:
        now = time.perf_counter()
        self.texts[stage] = text
        self.seconds[stage] = self._first if not self.seconds else now - self._last
        self._last = time.perf_counter()

    def finish(self, stage: str) -> dict[str, float]:
        """The times, with `stage` timed up to now."""
        self.seconds[stage] = time.perf_counter() - self._last
        return self.seconds


def _spirv_module(module, name: str, program: str, quirks: tuple[str, ...]):
    """The kernel's SPIR-V module when the device gets SPIR-V (launcher/il.py), else None;
    `quirks`: the device's, which the SPIR-V lowering works around."""
    from ..stages import print_module, spirv_for_kernel
    return spirv_for_kernel(print_module(module), name, program, quirks=tuple(quirks))


def kernel_name(instr) -> str:
    name = "".join(c if c.isalnum() else "_" for c in instr.name)
    # `%dot`, `%tanh`, `%half`: words that mean something to an OpenCL C compiler.
    return f"k_{name}" if is_reserved(name) else name
