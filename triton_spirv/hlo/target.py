"""What the HLO emitters need to know about the OpenCL device they emit for.

Some kernel shapes are fast on one kind of device and slow on another. A row
reduction is the example: GPUs want many work-items per row that meet in a tree
through `__local` memory with barriers; CPU devices (PoCL) run a work-group's
work-items one after the other and split a kernel at every barrier, so there one
work-item per row that accumulates several lanes at a time (vectorized by the
OpenCL compiler) is several times faster.

`emit_target()` describes the device in use; compiled fusions are cached per target.
`TRITON_SPIRV_HLO_ROW_REDUCTION=tree|per_work_item` overrides the choice (to run the
other kernel shape on any device, e.g. in tests).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

ROW_REDUCTION_ENV = "TRITON_SPIRV_HLO_ROW_REDUCTION"
ROW_REDUCTION_SHAPES = ("tree", "per_work_item")


@dataclass(frozen=True)
class EmitTarget:
    """`row_reduction`: "tree" (work-group per row, barriers) or "per_work_item"
    (one work-item per row, lane accumulators, no barriers)."""
    row_reduction: str = "tree"


def emit_target() -> EmitTarget:
    override = os.environ.get(ROW_REDUCTION_ENV, "").strip()
    if override and override not in ROW_REDUCTION_SHAPES:
        raise ValueError(f"{ROW_REDUCTION_ENV}={override!r}: expected one of "
                         f"{', '.join(ROW_REDUCTION_SHAPES)}")
    return EmitTarget(row_reduction=override or
                      ("per_work_item" if device_is_cpu() else "tree"))


def device_is_cpu() -> bool:
    """Whether the OpenCL device in use is a CPU. Without a usable device (emitting
    only), kernels are made for the default device, PoCL on the CPU."""
    try:
        import pyopencl as cl
        from launcher import get_device
        from launcher.errors import NoOpenCLDeviceError
    except ImportError:
        return True
    try:
        device = get_device().device
    except NoOpenCLDeviceError:
        return True
    return bool(device.type & cl.device_type.CPU)
