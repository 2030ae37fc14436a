"""Choosing the OpenCL device, with one context and one in-order queue per device.

`get_device()` picks the device once per process (lazily, at first use) and caches it:

* `TRITON_OPENCL_DEVICE=P:D` takes device D of platform P (indices as listed by
  `clinfo -l`); any other value is a case-insensitive substring of
  "platform name / device name" (e.g. `pocl`, `haswell`, `nvidia`).
* Without the variable, the first device that builds and runs a tiny probe kernel
  wins, PoCL's devices first (`_default_order`): the default device is PoCL wherever
  it is installed, whatever order the OpenCL loader lists the platforms in.

The probe also tells how host memory reaches the kernel: on devices where a
`CL_MEM_USE_HOST_PTR` buffer is the host memory itself (CPU devices, integrated
GPUs), launches are zero-copy; elsewhere (or with TRITON_OPENCL_FORCE_COPY=1)
arguments are copied in and out.
"""

import hashlib
import os
import re
import threading
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .build import build_quietly
from .errors import NoOpenCLDeviceError
from .profile import profiling_enabled

ENV_VAR = "TRITON_OPENCL_DEVICE"
# Set to 1 to copy arguments in and out even on zero-copy devices (to test that path).
FORCE_COPY_ENV_VAR = "TRITON_OPENCL_FORCE_COPY"

# The ICD loader's own variables that restrict which drivers it opens (ocl-icd, as
# pyopencl's wheels bundle it): a device missing from the listing may be left out by them.
ICD_LOADER_ENV_VARS = ("OCL_ICD_VENDORS", "OCL_ICD_FILENAMES")

INSTALL_HINT = (
    "To run Triton kernels on the CPU, install an OpenCL driver and loader, e.g. on Debian/Ubuntu: "
    "`apt-get install pocl-opencl-icd ocl-icd-libopencl1`, plus `pip install pyopencl`. "
    f"Set {ENV_VAR}=P:D (platform:device indices) or to part of 'platform name / device name' "
    "to choose a device."
)

# Copies each byte plus one. Run at an odd host address so that a device which
# only works on aligned host pointers is not mistaken for a zero-copy one. The devices
# report (devices_report.py) builds it too, to ask for the sub-group width.
PROBE_SOURCE = """
__kernel void triton_opencl_probe(__global const uchar* src, __global uchar* dst) {
    size_t i = get_global_id(0);
    dst[i] = (uchar)(src[i] + 1);
}
"""
_PROBE_BYTES = 64


@dataclass(eq=False, repr=False)
class OpenCLDevice:
    """A usable OpenCL device with its context, queue and per-device caches."""

    platform_index: int
    device_index: int
    platform: object  # pyopencl.Platform
    device: object  # pyopencl.Device
    context: object  # pyopencl.Context
    queue: object  # pyopencl.CommandQueue, in order
    zero_copy: bool  # USE_HOST_PTR buffers alias host memory (checked by the probe)
    programs: dict = field(default_factory=dict)  # (source sha256, options) -> pyopencl.Program
    # Held from setting a kernel's arguments to the end of its launch. Launches finish
    # before returning and the queue runs in order, so serialising them costs no
    # parallelism; it keeps kernel arguments and the buffer cache consistent
    # when several threads launch.
    launch_lock: object = field(default_factory=threading.Lock)
    _buffers: object = None
    _properties: dict = None

    @cached_property
    def name(self):
        return f"{self.platform.name.strip()} / {self.device.name.strip()}"

    @property
    def cl_device(self):
        return self.device

    @cached_property
    def identity(self):
        """Says which devices can share a program binary (same driver, same device)."""
        return device_identity(self.platform, self.device)

    @cached_property
    def arch(self):
        return device_arch(self.platform, self.device)

    @property
    def buffers(self):
        if self._buffers is None:
            from .buffers import HostBufferCache

            self._buffers = HostBufferCache(self)
        return self._buffers

    def __repr__(self):
        mode = "zero-copy" if self.zero_copy else "copying"
        return f"<OpenCLDevice {self.platform_index}:{self.device_index} {self.name} ({mode})>"

    def properties(self):
        if self._properties is None:
            self._properties = _device_properties(self)
        return self._properties

    def synchronize(self):
        self.queue.finish()


def device_identity(platform, device):
    return " | ".join(
        s.strip()
        for s in (platform.name, platform.version, device.name, device.version, device.driver_version)
    )


def _slug(text):
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-")


def device_arch(platform, device):
    """Short stable name of a device, e.g. `pocl-3.1:pthread-haswell-amd-epyc`.

    It goes into Triton's GPUTarget and so into its compile-cache keys: it names the
    OpenCL implementation and version (which decide the OpenCL C compiler) and the
    device, and nothing that changes between runs.
    """
    name, version = device_runtime(platform, device)
    return f"{name}-{version}:{_slug(device.name)}"[:96]


def device_runtime(platform, device):
    """The OpenCL implementation and its version, e.g. ("pocl", "3.1") or ("intel",
    "2023.16.7.0.21_160000"): what device quirks are known by (triton_spirv/target.py).
    PoCL names itself in the platform version only (its CPU device's vendor is the
    CPU's); other implementations by the platform name's first word and the driver."""
    pocl = re.search(r"PoCL\s+([0-9]+(?:\.[0-9]+)*)", platform.version)
    if pocl:
        return "pocl", pocl.group(1)
    vendor = (platform.name.split() or ["opencl"])[0]
    return _slug(vendor), _slug(device.driver_version)


# ----------------------------------------------------------------------------
# Selection
# ----------------------------------------------------------------------------

_lock = threading.Lock()
_selected = None


def get_device():
    """The device Triton kernels run on, chosen at first call and then cached."""
    global _selected
    if _selected is None:
        with _lock:
            if _selected is None:
                _selected = select_device(os.environ.get(ENV_VAR))
    return _selected


# The name the compiler stages use.
current_device = get_device


def reset_device_cache():
    """Forget the chosen device so that the next `get_device()` chooses again."""
    global _selected
    with _lock:
        _selected = None


def select_device(spec=None):
    """Choose a device without caching: `spec` as in TRITON_OPENCL_DEVICE, or None."""
    cl = import_pyopencl()
    platforms, found, errors = list_devices(cl)
    candidates = _best_matches_first(spec, found) if spec else _default_order(found)
    for platform_index, device_index, platform, device in candidates:
        try:
            return open_device(cl, platform_index, device_index, platform, device)
        except Exception as exc:  # any failure means: try the next device
            errors.append(f"{platform_index}:{device_index} {platform.name.strip()} / "
                          f"{device.name.strip()}: {type(exc).__name__}: {exc}")
    raise NoOpenCLDeviceError(_no_device_message(spec, platforms, found, candidates, errors))


def import_pyopencl():
    """The pyopencl module; NoOpenCLDeviceError with install hints when it cannot load."""
    try:
        import pyopencl
    except Exception as exc:  # ImportError, or a broken native library
        raise NoOpenCLDeviceError(f"pyopencl cannot be imported ({exc}). {INSTALL_HINT}") from exc
    return pyopencl


def list_devices(cl):
    """All (platform index, device index, platform, device), plus what went wrong."""
    errors = []
    try:
        platforms = cl.get_platforms()
    except cl.Error as exc:  # e.g. PLATFORM_NOT_FOUND_KHR: no ICD installed
        return [], [], [f"clGetPlatformIDs: {exc}"]
    found = []
    for p_index, platform in enumerate(platforms):
        try:
            devices = platform.get_devices()
        except cl.Error as exc:
            errors.append(f"platform {p_index} {platform.name.strip()}: clGetDeviceIDs: {exc}")
            continue
        found.extend((p_index, d_index, platform, device) for d_index, device in enumerate(devices))
    return platforms, found, errors


def _default_order(found):
    """The devices in listing order, PoCL's first: the documented default device
    (README), which the test suite's first CI leg runs on."""
    return sorted(found, key=lambda c: device_runtime(c[2], c[3])[0] != "pocl")


def _best_matches_first(spec, found):
    """The devices `spec` matches, closest first: an exact name, then a name that starts
    with it, then one that contains it; in listing order within each. So `AMD EPYC`
    picks the device of that name, not a device of another driver that mentions it
    inside its name (PoCL's "pthread-...-AMD EPYC")."""
    ranked = [(_match_rank(spec, c), i, c) for i, c in enumerate(found)]
    return [c for rank, _, c in sorted((r for r in ranked if r[0] is not None), key=lambda r: r[:2])]


def matches(spec, candidate) -> bool:
    """Whether `spec` (as in TRITON_OPENCL_DEVICE) names `candidate`, a
    (platform index, device index, platform, device) of the listing."""
    return _match_rank(spec, candidate) is not None


def _match_rank(spec, candidate):
    """0 (exact) to 2 (inside a name), 3 (inside a vendor or version string), or None
    where `spec` does not match."""
    platform_index, device_index, platform, device = candidate
    spec = spec.strip()
    indices = re.fullmatch(r"(\d+):(\d+)", spec)
    if indices:
        return 0 if (platform_index, device_index) == (int(indices.group(1)), int(indices.group(2))) else None
    wanted = spec.lower()
    names = [name.strip().lower() for name in (device.name, platform.name)]
    if wanted in names:
        return 0
    if any(name.startswith(wanted) for name in names):
        return 1
    if wanted in f"{names[1]} / {names[0]}":
        return 2
    # Vendor and version strings name the implementation ("The pocl project",
    # "OpenCL 3.0 PoCL ..."), which the platform and device names may not.
    described = " / ".join(str(getattr(obj, attr, "")).strip().lower()
                           for obj in (platform, device) for attr in ("vendor", "version"))
    return 3 if wanted in described else None


def _no_device_message(spec, platforms, found, candidates, errors):
    lines = ["No usable OpenCL device."]
    if spec and not candidates:
        lines.append(f"{ENV_VAR}={spec!r} matches none of the devices found.")
    elif spec:
        lines.append(f"{ENV_VAR}={spec!r} matches devices, but none of them works.")
    if platforms:
        lines.append("Found:")
        for p_index, platform in enumerate(platforms):
            lines.append(f"  platform {p_index}: {platform.name.strip()} ({platform.version.strip()})")
            for _, d_index, _, device in (c for c in found if c[0] == p_index):
                lines.append(f"    device {p_index}:{d_index}: {device.name.strip()}")
    else:
        lines.append("Found: no OpenCL platform (no ICD installed or none loads).")
    if errors:
        lines.append("Errors:")
        lines.extend(f"  {e}" for e in errors)
    for variable in ICD_LOADER_ENV_VARS:
        if os.environ.get(variable):
            lines.append(f"{variable}={os.environ[variable]!r} limits the drivers the OpenCL loader opens "
                         "(docs/startup.md).")
    lines.append(INSTALL_HINT)
    return "\n".join(lines)


# ----------------------------------------------------------------------------
# Opening a device: context, queue and the probe
# ----------------------------------------------------------------------------

def open_device(cl, platform_index, device_index, platform, device):
    """An OpenCLDevice for `device`: its context and queue, probed for zero-copy; raises
    whatever the driver raises when the device does not work."""
    context = cl.Context([device])
    if profiling_enabled():  # TRITON_SPIRV_PROFILE=1 (profile.py); otherwise no property
        queue = cl.CommandQueue(context, device, properties=cl.command_queue_properties.PROFILING_ENABLE)
    else:
        queue = cl.CommandQueue(context, device)  # in order: launches run in program order
    zero_copy = _probe(cl, context, queue, device_identity(platform, device))
    return OpenCLDevice(platform_index, device_index, platform, device, context, queue, zero_copy)


def _probe(cl, context, queue, identity):
    """Build and run the probe kernel; True when host-pointer buffers are zero-copy.

    Raises if the device cannot build or run the probe at all. The program comes from
    a binary kept from an earlier process where there is one: building the source
    costs a start ~50 ms on PoCL, loading the binary ~2 ms. The probe still runs
    either way; only a binary that cannot be loaded or fails its run falls back to
    the source, so a bad binary cannot change what the probe decides.
    """
    binary = _stored_probe_binary(identity)
    if binary is not None:
        try:
            return _run_probe(cl, context, queue, build_quietly(cl.Program(context, context.devices, [binary])))
        except Exception:
            pass  # decided by the source below
    program = build_quietly(cl.Program(context, PROBE_SOURCE))
    zero_copy = _run_probe(cl, context, queue, program)
    _store_probe_binary(cl, identity, program)
    return zero_copy


def _run_probe(cl, context, queue, program):
    kernel = cl.Kernel(program, "triton_opencl_probe")
    if _probe_zero_copy(cl, context, queue, kernel) and os.environ.get(FORCE_COPY_ENV_VAR) != "1":
        return True
    _probe_copy(cl, context, queue, kernel)
    return False


def _probe_binary_path(identity):
    """Where the probe's binary for this device and driver is kept (None: nowhere)."""
    from .file_memo import cache_file_path

    key = hashlib.sha256(f"{identity}\0{PROBE_SOURCE}".encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return cache_file_path(f"probe-{key}.bin")


def _stored_probe_binary(identity):
    from .file_memo import unsealed

    path = _probe_binary_path(identity)
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            return unsealed(f.read())   # None where cut short or damaged: never loaded
    except OSError:
        return None


def _store_probe_binary(cl, identity, program):
    from .file_memo import sealed, write_atomically

    path = _probe_binary_path(identity)
    binaries = program.get_info(cl.program_info.BINARIES)
    if path and binaries and binaries[0]:
        write_atomically(path, sealed(bytes(binaries[0])))


def _run_probe_kernel(cl, queue, kernel, src_buf, dst_buf):
    # set_arg + enqueue rather than kernel(queue, ...): calling a cl.Kernel makes
    # pyopencl generate an argument invoker, which costs a start ~10 ms.
    kernel.set_arg(0, src_buf)
    kernel.set_arg(1, dst_buf)
    cl.enqueue_nd_range_kernel(queue, kernel, (_PROBE_BYTES,), None)
    queue.finish()


def _odd_views(n):
    """Two host arrays of n bytes, each starting at an odd address."""
    base = np.zeros(2 * n + 4, dtype=np.uint8)
    first = 1 if base.ctypes.data % 2 == 0 else 0
    second = first + n + (2 if n % 2 == 0 else 1)
    return base[first:first + n], base[second:second + n]


def _probe_zero_copy(cl, context, queue, kernel):
    """Run twice over USE_HOST_PTR buffers; both the host's and the kernel's writes must show."""
    mf = cl.mem_flags
    src, dst = _odd_views(_PROBE_BYTES)
    try:
        src_buf = cl.Buffer(context, mf.READ_WRITE | mf.USE_HOST_PTR, hostbuf=src)
        dst_buf = cl.Buffer(context, mf.READ_WRITE | mf.USE_HOST_PTR, hostbuf=dst)
    except cl.Error:  # host pointers not supported at all: copy instead
        return False
    try:
        for round_ in range(2):
            src[:] = np.arange(_PROBE_BYTES, dtype=np.uint8) + 7 * round_  # written by the host only
            _run_probe_kernel(cl, queue, kernel, src_buf, dst_buf)
            if not np.array_equal(dst, (src + 1).astype(np.uint8)):
                return False
        return True
    finally:
        src_buf.release()
        dst_buf.release()


def _probe_copy(cl, context, queue, kernel):
    mf = cl.mem_flags
    src = np.arange(_PROBE_BYTES, dtype=np.uint8)
    dst = np.zeros_like(src)
    src_buf = cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=src)
    dst_buf = cl.Buffer(context, mf.READ_WRITE, size=dst.nbytes)
    _run_probe_kernel(cl, queue, kernel, src_buf, dst_buf)
    cl.enqueue_copy(queue, dst, dst_buf)
    queue.finish()
    if not np.array_equal(dst, src + 1):
        raise RuntimeError("the probe kernel ran but produced wrong results")


# ----------------------------------------------------------------------------
# Properties in the shape Triton's utilities expect (names from the CUDA driver)
# ----------------------------------------------------------------------------

# OpenCL does not report the memory clock or bus width. These nominal values (a
# dual-channel DDR4-3200 host, ~51 GB/s) only feed rough bandwidth estimates such
# as triton.testing.get_dram_gbps.
_NOMINAL_MEM_CLOCK_KHZ = 1_600_000
_NOMINAL_MEM_BUS_WIDTH_BITS = 128
# Devices may report a clock of 0 (unknown: Intel's CPU runtime does); callers such as
# triton.testing's peak-FLOPS estimates multiply by it, so a nominal 2 GHz stands in.
_NOMINAL_CLOCK_KHZ = 2_000_000


def clock_khz(max_clock_frequency_mhz):
    """CL_DEVICE_MAX_CLOCK_FREQUENCY (MHz) in kHz, like CUDA; nominal where unknown."""
    return int(max_clock_frequency_mhz) * 1000 or _NOMINAL_CLOCK_KHZ


def _device_properties(dev):
    d = dev.device
    return {
        "name": dev.name,
        "arch": dev.arch,
        "identity": dev.identity,
        "max_shared_mem": int(d.local_mem_size),
        "multiprocessor_count": int(d.max_compute_units),
        # OpenCL hides the register file; Triton only compares n_regs against it.
        "max_num_regs": 65536,
        "warpSize": 1,
        "sm_clock_rate": clock_khz(d.max_clock_frequency),
        "mem_clock_rate": _NOMINAL_MEM_CLOCK_KHZ,
        "mem_bus_width": _NOMINAL_MEM_BUS_WIDTH_BITS,
        "max_work_group_size": int(d.max_work_group_size),
        "max_work_item_sizes": [int(s) for s in d.max_work_item_sizes],
        "global_mem_size": int(d.global_mem_size),
        "max_mem_alloc_size": int(d.max_mem_alloc_size),
        "address_bits": int(d.address_bits),
        "opencl_c_version": d.opencl_c_version.strip(),
        "zero_copy": dev.zero_copy,
    }
