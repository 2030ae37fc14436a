"""What the HLO emitters need to know about the OpenCL device they emit for.

The device itself is described by the target description both frontends share
(`triton_spirv/target.py`: device type, work-group and sub-group sizes, local memory,
...; `TRITON_SPIRV_TARGET` pretends another kind of device). This module adds the
choices the HLO emitters make from it.

Some kernel shapes are fast on one kind of device and slow on another. A row
reduction is the example: GPUs want many work-items per row that meet in a tree
through `__local` memory with barriers; CPU devices (the default CPU runtime) run a work-group's
work-items one after the other and split a kernel at every barrier, so there one
work-item per row that accumulates several lanes at a time (vectorized by the
OpenCL compiler) is several times faster. A transpose is the other: GPUs stage a
32x32 tile through `__local` memory so that reads and writes are both coalesced;
on CPU devices the barrier and the tile cost more than they save, and one work-item
per 16 consecutive output elements (gathered from one input column, written as one
vector; neighbouring work-items read neighbouring input elements) is 2-4x faster.

`emit_target()` describes the target in use; compiled fusions are cached per target.
`TRITON_SPIRV_HLO_ROW_REDUCTION=tree|per_work_item` and
`TRITON_SPIRV_HLO_TRANSPOSE=tiles|segments` override the choices (to run the other
kernel shape on any device, e.g. in tests).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from ..target import NO_DEVICE, TargetDescription, current_target
from ..memref_stage.work_group_sharing import WARP_LANES

LOOP_WARPS = 4

ROW_REDUCTION_ENV = "TRITON_SPIRV_HLO_ROW_REDUCTION"
ROW_REDUCTION_SHAPES = ("tree", "per_work_item")
TRANSPOSE_ENV = "TRITON_SPIRV_HLO_TRANSPOSE"
TRANSPOSE_SHAPES = ("tiles", "segments")


@dataclass(frozen=True)
class EmitTarget:
    """`row_reduction`: "tree" (work-group per row, barriers) or "per_work_item"
    (one work-item per row, lane accumulators, no barriers); `transpose`: "tiles"
    (work-group per 32x32 tile through __local memory) or "segments" (one work-item
    per 16 output elements, no __local memory); `threads`: work-items of
    the one-dimensional kernels (loops, concatenations, slices, scatters), also the
    Triton frontend's work-group on GPU targets (work_group_sizes); `description`: the
    target the kernels are made for (its limits are checked at compile time)."""
    row_reduction: str = "tree"
    transpose: str = "tiles"
    threads: int = 128
    description: TargetDescription = NO_DEVICE


def emit_target() -> EmitTarget:
    description = current_target()
    cpu = description.is_cpu
    return EmitTarget(
        row_reduction=_shape(ROW_REDUCTION_ENV, ROW_REDUCTION_SHAPES, "per_work_item" if cpu else "tree"),
        transpose=_shape(TRANSPOSE_ENV, TRANSPOSE_SHAPES, "segments" if cpu else "tiles"),
        threads=loop_threads(description), description=description)


def _shape(env: str, shapes: tuple[str, ...], default: str) -> str:
    """The kernel shape `env` forces (one of `shapes`), else the target's `default`."""
    override = os.environ.get(env, "").strip()
    if override and override not in shapes:
        raise ValueError(f"{env}={override!r}: expected one of {', '.join(shapes)}")
    return override or default


def loop_threads(description: TargetDescription) -> int:
    """128 work-items (Triton's default of 4 warps of 32) on every kind of device, within
    the target's work-group limit: on CPU devices too, where the default CPU runtime runs them as one
    vectorized loop."""
    return min(LOOP_WARPS * WARP_LANES, description.max_work_group_size)

