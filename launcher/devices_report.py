"""`triton-spirv devices`: every OpenCL platform and device, what matters to this backend,
and which device kernels run on and why.

Each device is opened and probed as device choice does (device.py), so a device that
cannot build or run the probe kernel shows the reason; the chosen one is the first that
passes among those TRITON_OPENCL_DEVICE selects (all devices when it is unset).
"""

import os
import warnings
from dataclasses import dataclass, field

from . import device as _device
from .build import build_quietly

_SUBGROUP_EXTENSIONS = ("cl_khr_subgroups", "cl_intel_subgroups", "cl_intel_required_subgroup_size")


@dataclass
class DeviceEntry:
    platform_index: int
    device_index: int
    platform_name: str
    name: str
    facts: list = field(default_factory=list)   # (label, value)
    probe: str = ""                             # "ok (zero-copy)" or the failure
    usable: bool = False
    selected_by_env: bool = True                # matches TRITON_OPENCL_DEVICE (or it is unset)


def _info(device, attribute, default=None):
    try:
        return getattr(device, attribute)
    except Exception:  # an attribute the driver or its OpenCL version lacks
        return default


def _kib(nbytes) -> str:
    return f"{int(nbytes) // 1024} KiB" if nbytes is not None else "?"


def device_type(cl, device) -> str:
    kinds = [name for name in ("GPU", "CPU", "ACCELERATOR", "CUSTOM")
             if device.type & getattr(cl.device_type, name)]
    return " | ".join(kinds) or str(device.type)


def device_facts(cl, device) -> list:
    extensions = (_info(device, "extensions", "") or "").split()
    il_version = (_info(device, "il_version", "") or "").strip()
    subgroups = [e for e in extensions if e in _SUBGROUP_EXTENSIONS]
    max_subgroups = _info(device, "max_num_sub_groups", 0) or 0
    return [
        ("type", device_type(cl, device)),
        ("version", device.version.strip()),
        ("OpenCL C", device.opencl_c_version.strip()),
        ("IL", il_version or "none"),
        ("compute units", str(device.max_compute_units)),
        ("local memory", _kib(device.local_mem_size)),
        ("max work-group size", str(device.max_work_group_size)),
        ("fp16", "yes" if "cl_khr_fp16" in extensions else "no"),
        ("fp64", "yes" if "cl_khr_fp64" in extensions or _info(device, "double_fp_config", 0) else "no"),
        ("sub-groups", (f"up to {max_subgroups} per work-group" if max_subgroups else "none")
         + (f" ({', '.join(subgroups)})" if subgroups else "")),
    ]


def _sub_group_width(cl, opened):
    """The sub-group size the driver chooses for a 256-work-item group of the probe
    kernel (clGetKernelSubGroupInfo, OpenCL 2.1+); None where it does not say."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = build_quietly(cl.Program(opened.context, _device.PROBE_SOURCE))
        kernel = cl.Kernel(program, "triton_opencl_probe")
        return int(kernel.get_sub_group_info(
            opened.device, cl.kernel_sub_group_info.MAX_SUB_GROUP_SIZE_FOR_NDRANGE, (256,)))
    except Exception:  # OpenCL 1.2 devices, or drivers without sub-groups (the default CPU runtime's CPU device)
        return None


def probe_devices(spec=None) -> list:
    """A DeviceEntry per device of every platform, each opened and probed."""
    cl = _device.import_pyopencl()
    _platforms, found, _errors = _device.list_devices(cl)
    entries = []
    for candidate in found:
        p_index, d_index, platform, device = candidate
        entry = DeviceEntry(p_index, d_index, platform.name.strip(), device.name.strip(),
                            device_facts(cl, device))
        entry.selected_by_env = _device.matches(spec, candidate) if spec else True
        try:
            with warnings.catch_warnings():  # pyopencl's notes about compiler output
                warnings.simplefilter("ignore")
                opened = _device.open_device(cl, p_index, d_index, platform, device)
            entry.usable = True
            entry.probe = "ok (zero-copy)" if opened.zero_copy else "ok (arguments copied in and out)"
            width = _sub_group_width(cl, opened)
            if width:
                entry.facts.append(("sub-group width", f"{width} (for a work-group of 256)"))
        except Exception as exc:  # the reason device choice would skip it
            entry.probe = f"failed: {type(exc).__name__}: {exc}"
        entries.append(entry)
    return entries


def chosen_entry(entries):
    return next((e for e in entries if e.selected_by_env and e.usable), None)


def _why(spec) -> str:
    if spec:
        return f"the first device matching {_device.ENV_VAR}={spec!r} that passes the probe"
    return f"the first device that passes the probe ({_device.ENV_VAR} is not set)"


def devices_report(spec=None) -> str:
    spec = os.environ.get(_device.ENV_VAR) if spec is None else spec
    entries = probe_devices(spec)
    if not entries:
        return "No OpenCL device found (no platform, or no platform lists a device).\n" + _device.INSTALL_HINT
    chosen = chosen_entry(entries)
    lines, platform = [], None
    for entry in entries:
        if entry.platform_index != platform:
            platform = entry.platform_index
            lines.append(f"platform {platform}: {entry.platform_name}")
        mark = "  <- chosen" if entry is chosen else ""
        lines.append(f"  device {entry.platform_index}:{entry.device_index}: {entry.name}{mark}")
        lines.extend(f"    {label:20s} {value}" for label, value in entry.facts)
        lines.append(f"    {'probe':20s} {entry.probe}")
    if chosen is None:
        lines.append(f"No device is usable: {_why(spec)} finds none.")
    else:
        lines.append(f"Kernels run on {chosen.platform_index}:{chosen.device_index} "
                     f"({chosen.platform_name} / {chosen.name}): {_why(spec)}.")
    return "\n".join(lines)
