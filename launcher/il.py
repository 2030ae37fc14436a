"""SPIR-V programs: which kernels a device gets as SPIR-V, and building them.

The program format is chosen per kernel by the compiler option `program` (a launch
option: `kernel[grid](..., program="spirv")`) or, when the option is not given, by
the environment variable TRITON_SPIRV_PROGRAM:

    auto    SPIR-V on devices that report an IL version with SPIR-V in it (OpenCL 2.1+,
            e.g. Intel's OpenCL runtime), OpenCL C elsewhere (the default CPU runtime) and for kernels the
            SPIR-V stage cannot convert (logged once per kernel)
    spirv   SPIR-V or an error: a device without SPIR-V, an unconvertible kernel or a
            driver that rejects the module raises, naming the kernel
    source  OpenCL C only (the SPIR-V stage does not run)

SPIR-V modules are created with clCreateProgramWithIL (pyopencl `Program(context,
il_bytes)`).
"""
from __future__ import annotations

import hashlib
import logging
import os

from .build import build_quietly
from .errors import OpenCLBuildError

PROGRAM_ENV = "TRITON_SPIRV_PROGRAM"
PROGRAM_MODES = ("auto", "spirv", "source")
DEFAULT_MODE = "auto"

log = logging.getLogger("triton_spirv")
_LOGGED: set = set()


def requested_mode(option: str | None = None) -> str:
    """The mode asked for: the launch option, else the environment, else `auto`."""
    mode = (option or os.environ.get(PROGRAM_ENV) or DEFAULT_MODE).strip().lower()
    if mode not in PROGRAM_MODES:
        origin = "program option" if option else PROGRAM_ENV
        raise ValueError(f"{origin} is {mode!r}; expected one of {', '.join(PROGRAM_MODES)}")
    return mode


def spirv_versions(dev) -> list[str]:
    """The SPIR-V versions the device takes (`SPIR-V_1.2` ...), empty when none."""
    cl = _cl()
    try:
        il = dev.device.get_info(cl.device_info.IL_VERSION)
    except (cl.Error, AttributeError):
        return []
    return [v for v in str(il or "").split() if v.upper().startswith("SPIR-V")]


def uses_spirv(mode: str, dev, kernel: str) -> bool:
    """Whether `kernel` goes to `dev` as SPIR-V under `mode`; `spirv` on a device
    without SPIR-V is an error."""
    if mode == "source":
        return False
    if spirv_versions(dev):
        return True
    if mode == "spirv":
        raise OpenCLBuildError(f"kernel '{kernel}': program='spirv' was asked for, but {dev.name} "
                               f"takes no SPIR-V (it reports no IL version); use 'auto' or 'source'")
    return False


def log_fallback_once(kernel: str, why: str, chosen: bool = False) -> None:
    """`auto` mode kept OpenCL C for a kernel: said once per kernel and reason; a
    warning where the SPIR-V path lacks something, INFO where OpenCL C is the form
    `chosen` for the kernel (a device quirk: the user has nothing to act on)."""
    key = (kernel, why)
    if key not in _LOGGED:
        _LOGGED.add(key)
        log.log(logging.INFO if chosen else logging.WARNING,
                "kernel '%s' runs from OpenCL C instead of SPIR-V: %s", kernel, why)


def il_hash(il: bytes) -> str:
    return hashlib.sha256(il).hexdigest()


def build_il(dev, il: bytes, name: str, options=()):
    """The program built from SPIR-V `il`; a driver that rejects it raises
    OpenCLBuildError with the kernel's name and the driver's log."""
    cl = _cl()
    program = cl.Program(dev.context, il)
    try:
        return build_quietly(program, options, devices=[dev.device])
    except cl.Error as exc:
        try:
            driver_log = program.get_build_info(dev.device, cl.program_build_info.LOG).strip()
        except Exception:
            driver_log = ""
        driver_log = driver_log or str(exc).strip()
        raise OpenCLBuildError(f"SPIR-V module of kernel '{name}' was rejected by {dev.name}:\n"
                               f"{driver_log}", driver_log) from None


def _cl():
    import pyopencl

    return pyopencl
