"""Building OpenCL C in a child process, on devices whose compiler may abort.

PoCL 3.1 aborts the whole process on some kernels (an LLVM assertion in its work-group
compiler, SIGABRT): the user would see the driver's assertion text and a dead
interpreter. On such devices (`builds_in_child`) a program's build from source runs in
a build process (build_child.py, handed the OpenCL C and the options): it builds and
writes the binary, the parent loads the binary. The build process is started at the
first build and serves the process's later ones, so the driver's start (PoCL reads its
kernel library, about a second) is paid once per process, not per kernel; Triton's
cache then holds the binary in the kernel's `.clbin`, so later processes load it and
start none. A build process that dies becomes a KernelBuildCrash in the parent naming
the kernel, the device, the signal and the driver's last output lines, with the
OpenCL C saved beside Triton's cache; the next build starts another.

TRITON_SPIRV_ISOLATED_BUILD=1 builds in a child on every device, =0 on none (the
default: on the runtimes in BUILD_MAY_ABORT_RUNTIMES, the quirk `build_may_abort` of
triton_spirv/target.py's table).
"""
import atexit
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

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
    `dev` in the build process. Raises KernelBuildCrash when it dies."""
    with _server_lock:
        server = _build_server()
        request = {"loader": opencl_loader(), "identity": dev.identity, "source": source,
                   "options": " ".join(options), "binary": os.path.join(server.folder, "program.bin"),
                   "log": os.path.join(server.folder, "build.log")}
        status, output = server.build(request)
        if status == 0:
            with open(request["binary"], "rb") as f:
                return ChildBuild(binary=f.read())
        if status == REJECTED:
            with open(request["log"], encoding="utf-8", errors="replace") as f:
                return ChildBuild(log=f.read())
        _close_server()     # the next build starts another
    raise _crash(dev, source, options, name, status, output)


class _BuildServer:
    """The build process (build_child.py) and its folder: its working directory (a
    driver that dumps files where it runs, as PoCL writes the CFG of a kernel it aborts
    on, leaves the user's clean), its requests' files and its output."""

    def __init__(self):
        self.owner = os.getpid()
        self.folder = tempfile.mkdtemp(prefix="triton-spirv-build-")
        self.output_path = os.path.join(self.folder, "driver-output.txt")
        replies, reply_fd = os.pipe()
        try:
            with open(self.output_path, "wb") as output:
                self.process = subprocess.Popen(
                    [sys.executable, CHILD_SCRIPT, str(reply_fd)], stdin=subprocess.PIPE, stdout=output,
                    stderr=output, cwd=self.folder, env=_child_environment(), pass_fds=(reply_fd,))
        finally:
            os.close(reply_fd)
        self.replies = os.fdopen(replies, "r")

    def build(self, request):
        """(status, the driver's output during the request): build_child.py's status,
        or the process's return code (-N: killed by signal N) where it died."""
        start = os.path.getsize(self.output_path)
        try:
            self.process.stdin.write(json.dumps(request).encode("utf-8") + b"\n")
            self.process.stdin.flush()
            reply = self.replies.readline()
        except BrokenPipeError:
            reply = ""
        status = int(reply) if reply.strip() else self.process.wait()
        with open(self.output_path, "rb") as f:
            f.seek(start)
            return status, f.read().decode("utf-8", "replace")

    def close(self):
        try:
            self.process.stdin.close()
            self.process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        self.replies.close()
        shutil.rmtree(self.folder, ignore_errors=True)


_server_lock = threading.Lock()
_server = None


def _build_server():
    """The build process of this process, started at the first build (a forked process
    starts its own)."""
    global _server
    if _server is None or _server.owner != os.getpid():
        _server = _BuildServer()
    return _server


@atexit.register
def _close_server():
    global _server
    if _server is not None and _server.owner == os.getpid():
        _server.close()
    _server = None


def _child_environment():
    """This process's environment, with pyopencl's: the ICD loader pyopencl ships finds
    the vendors' libraries through PYOPENCL_HOME (set when pyopencl is imported), and
    crashes without it."""
    env = dict(os.environ)
    pyopencl = sys.modules.get("pyopencl")
    if pyopencl is not None and getattr(pyopencl, "__file__", None):
        env.setdefault("PYOPENCL_HOME", os.path.dirname(os.path.abspath(pyopencl.__file__)))
    return env


def opencl_loader():
    """The path of the OpenCL ICD loader pyopencl uses (it ships its own; the system's,
    which this process may have loaded too, can fail to load a vendor library that
    pyopencl's finds), else the first one this process loaded, else the system's name."""
    pyopencl = sys.modules.get("pyopencl")
    home = os.path.dirname(os.path.abspath(pyopencl.__file__)) if getattr(pyopencl, "__file__", None) else None
    loaded = []
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            for line in f:
                path = line.split(maxsplit=5)[-1].strip()
                if os.path.basename(path).startswith("libOpenCL") and path not in loaded:
                    loaded.append(path)
    except OSError:
        pass
    ours = [path for path in loaded if home and path.startswith(home + os.sep)]
    return (ours or loaded or ["libOpenCL.so.1"])[0]


def _crash(dev, source, options, name, status, output):
    last_lines = [line for line in output.splitlines() if line.strip()][-_QUOTED_OUTPUT_LINES:]
    saved = save_source(source, name, options)
    what = f"kernel '{name}'" if name else "an OpenCL program"
    if status < 0:
        how = f"was killed by {_signal_name(-status)}"
    elif status == NOT_FOUND:
        how = "did not find the device"
    else:
        how = f"failed (exit status {status})"
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
    return KernelBuildCrash(message, output, name=name, device=dev.name, returncode=status,
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
