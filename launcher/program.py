"""Building OpenCL programs, with an in-memory cache per device.

`build_program` is what the compiler calls to turn OpenCL C into a device binary;
`get_program` is what `load_binary` calls at first launch: it reuses a binary made
for this very device and driver when the artefact carries one (a warm start costs a
millisecond instead of a full OpenCL C compile) and otherwise builds the source. On
devices whose compiler may abort the process, builds from source run in a child
process and the program is loaded from the binary it made (isolated_build.py).
"""

import hashlib
import re

from .build import build_quietly, with_default_options
from .device import OpenCLDevice, get_device
from .errors import OpenCLBuildError
from .il import build_il, il_hash
from .isolated_build import build_in_child, builds_in_child

# How compilers cite source positions in build logs: `<source>:3:10:` (the OpenCL
# convention), `<kernel>:3:10:` (NVIDIA), `/path/tempfile.cl:3:10:` (the default CPU runtime, AMD), and
# `1:3:10: error:` (Intel's OpenCL CPU runtime: the number of the program's source
# string, then line and column, at the start of a log line).
_LOG_POSITION = re.compile(r"(?:<source>|<kernel>|<stdin>|<input>|[\w./\\~-]*\.cl):(\d+)(?::\d+)?:"
                           r"|^\d+:(\d+):\d+: (?:fatal error|error|warning|note):", re.MULTILINE)
_MAX_QUOTED_LINES = 10


def source_hash(source):
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def resolve_device(device):
    """An OpenCLDevice from an OpenCLDevice, a pyopencl.Device of the chosen one, or None."""
    if device is None:
        return get_device()
    if isinstance(device, OpenCLDevice):
        return device
    current = get_device()
    if device == current.device:
        return current
    raise ValueError(f"{device!r} is not the OpenCL device in use ({current.name}); "
                     "select it with TRITON_OPENCL_DEVICE")


def build_program(source, device=None, options=(), name=None):
    """Build OpenCL C for a device: (pyopencl.Program, device binary bytes).

    Raises OpenCLBuildError with the build log and the source lines it blames.
    """
    dev = resolve_device(device)
    program = _build_from_source(dev, source, tuple(options), name)
    return program, program_binary(program)


def program_binary(program):
    binaries = program.get_info(_cl().program_info.BINARIES)
    return bytes(binaries[0]) if binaries and binaries[0] else b""


def get_program(dev, source, options=(), binary=None, binary_identity=None, name=None, il=None):
    """The built program for `source` (or SPIR-V `il` when given) on `dev`, from the
    cache, the binary or the source."""
    key = (il_hash(il) if il else source_hash(source), tuple(options))
    program = dev.programs.get(key)
    if program is None:
        if binary and binary_identity == dev.identity:
            program = _try_build_from_binary(dev, binary, key[1])
        if program is None:
            program = build_il(dev, il, name, key[1]) if il else _build_from_source(dev, source, key[1], name)
        dev.programs[key] = program
    return program


def _cl():
    import pyopencl

    return pyopencl


def _try_build_from_binary(dev, binary, options):
    """None when the driver refuses the binary (it may have changed under the same name)."""
    cl = _cl()
    try:
        return _build(cl.Program(dev.context, [dev.device], [binary]), dev, options)
    except cl.Error:
        return None


def _build_from_source(dev, source, options, name):
    if builds_in_child(dev):
        return _build_from_source_in_child(dev, source, options, name)
    cl = _cl()
    program = cl.Program(dev.context, source)
    try:
        return _build(program, dev, options)
    except cl.Error as exc:
        log = _build_log(program, dev, exc)
        lines = blamed_source_lines(log, source)
        raise OpenCLBuildError(_build_error_message(dev, name, options, log, lines, source), log, lines) from None


def _build_from_source_in_child(dev, source, options, name):
    """The program loaded from the binary a child process built (KernelBuildCrash where
    the child died)."""
    built = build_in_child(dev, source, with_default_options(options), name)
    if built.binary is None:
        lines = blamed_source_lines(built.log, source)
        raise OpenCLBuildError(_build_error_message(dev, name, options, built.log, lines, source),
                               built.log, lines)
    program = _try_build_from_binary(dev, built.binary, options)
    if program is None:
        what = f"kernel '{name}'" if name else "an OpenCL program"
        raise OpenCLBuildError(f"{dev.name} refused the binary its own compiler made for {what} "
                               "(built in a child process); set TRITON_SPIRV_ISOLATED_BUILD=0 to build "
                               "in this process")
    return program


def _build(program, dev, options):
    return build_quietly(program, options, devices=[dev.device])


def _build_log(program, dev, exc):
    # pyopencl keeps the failed program only on its uncached path; else the log is in
    # the exception's message.
    try:
        log = program.get_build_info(dev.device, _cl().program_build_info.LOG)
    except Exception:
        log = None
    return log.strip() if log and log.strip() else str(exc).strip()


def blamed_source_lines(log, source):
    """{line number: line text} for the source positions a build log cites, in order."""
    source_lines = source.splitlines()
    blamed = {}
    for match in _LOG_POSITION.finditer(log):
        number = int(match.group(1) or match.group(2))
        if 1 <= number <= len(source_lines) and number not in blamed:
            blamed[number] = source_lines[number - 1]
            if len(blamed) == _MAX_QUOTED_LINES:
                break
    return blamed


def _build_error_message(dev, name, options, log, lines, source=""):
    what = f"kernel '{name}'" if name else "OpenCL program"
    parts = [f"OpenCL C build of {what} failed on {dev.name}"
             + (f" (options: {' '.join(options)})" if options else "") + ":", log]
    if lines:
        parts.append("Offending source lines:")
        for number, text in lines.items():
            origin = python_origin(source, number)
            parts.append(f"  {number:5d} | {text}" + (f"    <- from {origin}" if origin else ""))
    return "\n".join(parts)


# The emitter's comment before each group of lines: `// x = tl.load(...)  (kernel.py:12)`
# (HLO kernels name their `.hlo` file).
_ORIGIN_COMMENT = re.compile(r"^\s*//.*\(([^()\s]+\.\w+):(\d+)\)\s*$")


def origin_comment(line):
    """(file, line number) that an emitter origin comment names, else None."""
    match = _ORIGIN_COMMENT.match(line)
    return (match.group(1), int(match.group(2))) if match else None


def python_origin(source, number):
    """`file.py:LINE` of the Python code that OpenCL C line `number` was printed from (the
    nearest origin comment above it), or None."""
    lines = source.splitlines()
    for text in reversed(lines[:max(0, min(number, len(lines)))]):
        origin = origin_comment(text)
        if origin:
            return f"{origin[0]}:{origin[1]}"
        if text.startswith("__kernel") or text.startswith("static inline"):
            return None
    return None
