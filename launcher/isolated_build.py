"""Building OpenCL C in a child process, on devices whose compiler may abort.

PoCL 3.1 aborts the whole process on some kernels (an LLVM assertion in its work-group
compiler, SIGABRT): the user would see the driver's assertion text and a dead
interpreter. On such devices (`builds_in_child`) a program's build from source runs in
a child process (build_child.py, started with the OpenCL C and the options): the child
builds and writes the binary, the parent loads the binary. The cost is one process per
build from source; Triton's cache then holds the binary in the kernel's `.clbin`, so
later processes load it and start no child. A child that dies becomes a
KernelBuildCrash in the parent naming the kernel, the device, the signal and the
driver's last output lines, with the OpenCL C saved beside Triton's cache.

TRITON_SPIRV_ISOLATED_BUILD=1 builds in a child on every device, =0 on none (the
default: on the runtimes in BUILD_MAY_ABORT_RUNTIMES, the quirk `build_may_abort` of
triton_spirv/target.py's table).
"""
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile

from .device import device_runtime
from .errors import KernelBuildCrash
from .file_memo import cache_file_path

ENV_VAR = "TRITON_SPIRV_ISOLATED_BUILD"
# The OpenCL implementations (launcher.device.device_runtime's names) whose compiler
# has been seen to abort the process.
BUILD_MAY_ABORT_RUNTIMES = ("pocl",)
CHILD_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "build_child.py")
# Exit statuses of build_child.py
REJECTED = 3
NOT_FOUND = 4
_QUOTED_OUTPUT_LINES = 8


class ChildBuild:
    """What a child build gave: the binary, or the build log of a rejected source."""

    def __init__(self, binary=None, log=""):
        self.binary = binary
        self.log = log


def builds_in_child(dev) -> bool:
    """Whether programs for `dev` (an OpenCLDevice) are built from source in a child."""
    chosen = os.environ.get(ENV_VAR, "").strip()
    if chosen in ("0", "1"):
        return chosen == "1"
    return device_runtime(dev.platform, dev.device)[0] in BUILD_MAY_ABORT_RUNTIMES


def build_in_child(dev, source, options, name=None) -> ChildBuild:
    """Builds `source` with `options` (a list of strings, as given to the driver) for
    `dev` in a child process. Raises KernelBuildCrash when the child dies."""
    with tempfile.TemporaryDirectory(prefix="triton-spirv-build-") as folder:
        request = {"loader": opencl_loader(), "identity": dev.identity, "source": source,
                   "options": " ".join(options),
                   "binary": os.path.join(folder, "program.bin"), "log": os.path.join(folder, "build.log")}
        # In its own folder: a driver that dumps files where it runs (PoCL writes the
        # CFG of a kernel it aborts on) leaves the user's working directory clean.
        child = subprocess.run([sys.executable, CHILD_SCRIPT], input=json.dumps(request).encode("utf-8"),
                               cwd=folder, capture_output=True)
        if child.returncode == 0:
            with open(request["binary"], "rb") as f:
                return ChildBuild(binary=f.read())
        if child.returncode == REJECTED:
            with open(request["log"], encoding="utf-8", errors="replace") as f:
                return ChildBuild(log=f.read())
    raise _crash(dev, source, options, name, child)


def opencl_loader():
    """The path of the OpenCL ICD loader this process uses (pyopencl ships its own; the
    system's may fail to load a vendor library that this one finds), else its name."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            for line in f:
                path = line.split(maxsplit=5)[-1].strip()
                if os.path.basename(path).startswith("libOpenCL"):
                    return path
    except OSError:
        pass
    return "libOpenCL.so.1"


def _crash(dev, source, options, name, child):
    output = (child.stdout + child.stderr).decode("utf-8", "replace")
    last_lines = [line for line in output.splitlines() if line.strip()][-_QUOTED_OUTPUT_LINES:]
    saved = save_source(source, name, options)
    what = f"kernel '{name}'" if name else "an OpenCL program"
    if child.returncode < 0:
        how = f"was killed by {_signal_name(-child.returncode)}"
    elif child.returncode == NOT_FOUND:
        how = "did not find the device"
    else:
        how = f"exited with status {child.returncode}"
    message = "\n".join([
        f"the OpenCL compiler of {dev.name} crashed building {what}: the build process {how}"
        + (f" (options: {' '.join(options)})" if options else "") + ".",
        "The driver's last output:" if last_lines else "The driver printed nothing.",
        *(f"  {line}" for line in last_lines),
        f"OpenCL C source: {saved}" if saved else "The OpenCL C source could not be saved.",
        "This is a bug of the device's OpenCL compiler. The kernel may build on another OpenCL device "
        "(TRITON_OPENCL_DEVICE, e.g. =intel) or in the other kernel shape (TRITON_SPIRV_TARGET=cpu or "
        "=gpu, or the launch option opencl_target).",
    ])
    return KernelBuildCrash(message, output, name=name, device=dev.name, returncode=child.returncode,
                            source_path=saved)


def _signal_name(number):
    try:
        return f"{signal.Signals(number).name} (signal {number})"
    except ValueError:
        return f"signal {number}"


def save_source(source, name, options):
    """Writes the OpenCL C of a build that crashed (its options in a first comment line)
    beside Triton's cache, else in the temporary directory: the path, or None."""
    text = (f"// build options: {' '.join(options)}\n" if options else "") + source
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    filename = f"{name or 'program'}-{digest}.cl"
    path = cache_file_path(os.path.join("crashed_builds", filename)) or \
        os.path.join(tempfile.gettempdir(), "triton-spirv-crashed-builds", filename)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError:
        return None
    return path
