"""Linalg on tensors -> memref stage: the one pass pipeline both frontends share.

The memref stage is documented in docs/memref-stage.md. The pipeline is the registry's
ordered list of passes (passes.py: `PASSES`, upstream MLIR passes and our rewrites,
each with the config under which it runs); `lower_to_memref` walks it for one
`PipelineConfig`, verifying the IR after each of our rewrites and printing it after
each pass where `MLIR_ENABLE_DUMP` asks (ir_dump.py). docs/architecture.md says what
each pass does.
"""
from __future__ import annotations

from mlir import ir

from ..ir_dump import dump_after, dump_requested
from .passes import (CPU_SHAPE, PASSES, WORK_GROUP_SHARING, Pass, PipelineConfig,
                     PipelineError, run_upstream, verify)

__all__ = ["PipelineConfig", "PipelineError", "lower_to_memref", "run_passes",
           "share_work_group", "upstream_names"]


def lower_to_memref(module: ir.Module, config: PipelineConfig = CPU_SHAPE) -> ir.Module:
    """Lowers `module` in place from Linalg on tensors to the memref stage, running the
    passes that apply to `config` (passes.py)."""
    return run_passes(module, [p for p in PASSES if p.applies(config)], config)


def run_passes(module: ir.Module, passes: list[Pass], config: PipelineConfig,
               analyses: dict | None = None) -> ir.Module:
    """Runs `passes` in order on `module`, sharing one dict of analyses among them:
    consecutive upstream passes as one pass manager run (one at a time when the IR is
    dumped after each), each of ours followed by a verification."""
    analyses = {} if analyses is None else analyses
    dumping = dump_requested(module)
    with module.context:
        pending: list[Pass] = []
        for one in passes:
            if one.upstream is not None and not dumping:
                pending.append(one)
                continue
            _flush(module, pending)
            pending = []
            one.run(module, config, analyses)
            if one.upstream is None:
                verify(module, one.name)
            dump_after(one.name, module)
        _flush(module, pending)
    return module


def _flush(module: ir.Module, upstream_passes: list[Pass]) -> None:
    if upstream_passes:
        run_upstream(module, tuple(p.upstream for p in upstream_passes))


def upstream_names(config: PipelineConfig = CPU_SHAPE) -> list[str]:
    """The upstream passes the pipeline runs for `config`, in order."""
    return [p.name for p in PASSES if p.upstream is not None and p.applies(config)]


def share_work_group(module: ir.Module, work_items: int, collectives: bool = False,
                     quirks: tuple[str, ...] = ()) -> ir.Module:
    """The work-group sharing passes alone (WORK_GROUP_SHARING, those that apply), for
    `work_items` on a target with work-group collectives or not and with `quirks`: what
    the pipeline runs on the GPU shape between owner copies and lower-affine."""
    config = PipelineConfig(work_items=work_items, collectives=collectives,
                            quirks=tuple(quirks))
    return run_passes(module, [p for p in WORK_GROUP_SHARING if p.applies(config)], config)
