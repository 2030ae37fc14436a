"""Record kernel launches, and replay them in another process (e.g. under Oclgrind).

Recording (in the process that runs Triton): when the environment variable
TRITON_SPIRV_RECORD_DIR names a directory, every launch writes one sub-directory
there holding

    launch.json     kernel name, OpenCL C source, build options, global and local
                    size, and per kernel parameter: a buffer (which snapshot, its
                    element type) or a scalar (pack code and value)
    bufN.in         the bytes of buffer N before the launch
    bufN.out        the bytes of buffer N after the launch on the recording device

Pointer arguments over the same host range share one snapshot (and one buffer at
replay), so in-place kernels replay as they ran. Launches whose buffers hold more
than TRITON_SPIRV_RECORD_MAX_BYTES bytes (default 16 MiB) are not recorded.

Replaying: `python3 launcher/replay.py RECORDING...` runs each recording on the
first OpenCL device it finds and compares every buffer with the recorded `.out`
bytes (exactly for integers, within a small tolerance for floats, whose math
builtins may round differently on another implementation). It prints one JSON line
per recording on stdout and a marker line `### replay NAME` on stderr before each
launch, so that diagnostics a tool such as Oclgrind prints can be attributed.

With `--expand-strided-copies`, `async_work_group_strided_copy` is replaced by an
element-wise loop with the same meaning before the build: Oclgrind 21.10's
uninitialized-value checker applies the builtin's stride to the wrong side and then
reports correct kernels (tests/test_oclgrind.py shows it on a small kernel); the loop
lets it check each element access of the copy instead.

With `--sync-async-copies`, kernels written for one work-item per group get a
`barrier(CLK_LOCAL_MEM_FENCE)` before each async copy. The emitter leaves it out there
(no other work-item can race, and the default CPU runtime compiles barriers in loops very slowly), but
Oclgrind counts the work-group's copy and the work-item's own accesses of the same
`__local` tile as a race without one.

With `--recheck-unoptimized`, a recording whose buffers differ is replayed once more
built with `-cl-opt-disable`; where that replay matches, the result is ok and carries
the first replay's problems as `optimized_only`. Oclgrind 21.10 evaluates a
zero-extension of an i1 vector, which LLVM makes of `-(a < b)` and `(a < b) & 1` on
vectors, as the i1's byte pattern (255, -1 as a char): a kernel that converts a vector
comparison to 0/1 compares wrong under it, right unoptimized and on every device
(tests/test_oclgrind.py shows it on a small kernel).

This file is standalone on purpose: run as a script it imports only the standard
library, numpy and pyopencl (a process under Oclgrind cannot load Triton's LLVM).
"""

import ctypes
import itertools
import json
import os
import sys
import threading

import numpy as np

RECORD_ENV_VAR = "TRITON_SPIRV_RECORD_DIR"  # read at import; see recording()
MAX_BYTES_ENV_VAR = "TRITON_SPIRV_RECORD_MAX_BYTES"
DEFAULT_MAX_BYTES = 16 * 1024 * 1024
FORMAT = "triton-spirv-launch-1"

# Pack codes (launcher/types.py) as numpy types.
_CODE_TYPES = {"b": np.int8, "B": np.uint8, "h": np.int16, "H": np.uint16, "i": np.int32, "I": np.uint32,
               "l": np.int64, "L": np.uint64, "f": np.float32, "d": np.float64}

# Element types of buffers for the comparison: Triton pointee types first, OpenCL C
# element types of hidden parameters second. bf16 is compared as float.
_ELEMENT_TYPES = {
    "i1": np.uint8, "u1": np.uint8, "i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16,
    "i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64, "fp16": np.float16,
    "bf16": "bf16", "fp32": np.float32, "f32": np.float32, "fp64": np.float64,
    "char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16, "int": np.int32,
    "uint": np.uint32, "long": np.int64, "ulong": np.uint64, "half": np.float16, "float": np.float32,
    "double": np.float64,
}
# (rtol, atol) per float type.
_TOLERANCES = {np.float16: (2e-3, 1e-3), "bf16": (1.6e-2, 1e-3), np.float32: (2e-5, 1e-6),
               np.float64: (1e-12, 1e-14)}

_counter = itertools.count()
_counter_lock = threading.Lock()


# ----------------------------------------------------------------------------
# Recording (called by the launcher)
# ----------------------------------------------------------------------------

# The directory launches are recorded into, or None (the common case). Read once (a
# launch must not pay for an environment lookup); `set_record_directory` changes it. A
# plain module attribute, because every launch reads it (launch.py, bounds.py).
record_dir = os.environ.get(RECORD_ENV_VAR) or None


def set_record_directory(directory):
    """Record launches into `directory` from now on (None: stop); also for child processes."""
    global record_dir
    record_dir = str(directory) if directory else None
    if record_dir:
        os.environ[RECORD_ENV_VAR] = record_dir
    else:
        os.environ.pop(RECORD_ENV_VAR, None)


class recording:
    """`with recording(directory): ...` records the launches made inside the block."""

    def __init__(self, directory):
        self.directory = directory

    def __enter__(self):
        self.previous = record_dir
        set_record_directory(self.directory)
        return self.directory

    def __exit__(self, *exc):
        set_record_directory(self.previous)
        return False


class Recording:
    """One launch being recorded: `before()` snapshots inputs, `after()` outputs."""

    def __init__(self, directory, name, source, build_options, global_size, local_size):
        with _counter_lock:
            number = next(_counter)
        self.path = os.path.join(directory, f"{name}-{os.getpid()}-{number:05d}")
        self.meta = {"format": FORMAT, "name": name, "source": source, "build_options": list(build_options),
                     "global_size": [int(n) for n in global_size], "local_size": [int(n) for n in local_size],
                     "params": {}}
        self._ranges = {}  # (address, nbytes) -> snapshot number
        self._raw = {}  # snapshot number -> [bytes before, bytes after] (buffers not in host memory)
        self._inputs_written = False

    def buffer(self, index, address, nbytes, element_type):
        key = (int(address), int(nbytes))
        number = self._ranges.setdefault(key, len(self._ranges))
        self.meta["params"][str(index)] = {"kind": "buffer", "snapshot": number, "element": element_type}

    def raw_buffer(self, index, data, element_type):
        """A buffer that is not host memory (e.g. the bounds error record), by its bytes."""
        number = len(self._ranges) + len(self._raw)
        self._raw[number] = [bytes(data), bytes(data)]
        self.meta["params"][str(index)] = {"kind": "buffer", "snapshot": number, "element": element_type}
        if self._inputs_written:  # added after before() (the assert record): write its input now
            with open(os.path.join(self.path, f"buf{number}.in"), "wb") as f:
                f.write(bytes(data))

    def raw_output(self, index, data):
        number = self.meta["params"][str(index)]["snapshot"]
        self._raw[number][1] = bytes(data)

    def scalar(self, index, code, value):
        code = code.decode("ascii") if isinstance(code, bytes) else code
        self.meta["params"][str(index)] = {"kind": "scalar", "code": code, "value": value}

    def total_bytes(self):
        return sum(nbytes for _address, nbytes in self._ranges)

    def before(self):
        """False (and nothing written) when the launch is too large to record."""
        limit = int(os.environ.get(MAX_BYTES_ENV_VAR) or DEFAULT_MAX_BYTES)
        if self.total_bytes() > limit:
            return False
        os.makedirs(self.path, exist_ok=True)
        self._write("in")
        self._inputs_written = True
        return True

    def after(self):
        self._write("out")
        with open(os.path.join(self.path, "launch.json.tmp"), "w") as f:
            json.dump(self.meta, f, indent=1)
        # launch.json appears last: a recording with one is complete.
        os.replace(os.path.join(self.path, "launch.json.tmp"), os.path.join(self.path, "launch.json"))

    def _write(self, suffix):
        for (address, nbytes), number in self._ranges.items():
            data = ctypes.string_at(address, nbytes) if nbytes > 0 else b""
            with open(os.path.join(self.path, f"buf{number}.{suffix}"), "wb") as f:
                f.write(data)
        for number, (before, after) in self._raw.items():
            with open(os.path.join(self.path, f"buf{number}.{suffix}"), "wb") as f:
                f.write(before if suffix == "in" else after)


def list_recordings(directory):
    """Complete recordings under `directory`, sorted."""
    if not os.path.isdir(directory):
        return []
    return sorted(os.path.join(directory, d) for d in os.listdir(directory)
                  if os.path.exists(os.path.join(directory, d, "launch.json")))


# ----------------------------------------------------------------------------
# Replaying (standalone)
# ----------------------------------------------------------------------------

def _element_type(name):
    if name is None:
        return np.uint8
    name = name.replace("__global", "").replace("const", "").replace("*", "").strip()
    if name.startswith("k") and name[1:] in _ELEMENT_TYPES:  # Triton's const pointer spelling
        name = name[1:]
    return _ELEMENT_TYPES.get(name, np.uint8)


def _bf16_to_float(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def compare(expected, actual, element):
    """None when equal (within tolerance), else a short description of the first difference."""
    if len(expected) != len(actual):
        return f"size {len(actual)} bytes, expected {len(expected)}"
    if expected == actual:
        return None
    kind = _element_type(element)
    itemsize = 2 if kind == "bf16" else np.dtype(kind).itemsize
    if len(expected) % itemsize:
        kind, itemsize = np.uint8, 1
    raw_type = np.uint16 if kind == "bf16" else kind
    want = np.frombuffer(expected, dtype=raw_type)
    got = np.frombuffer(actual, dtype=raw_type)
    if kind in _TOLERANCES:
        rtol, atol = _TOLERANCES[kind]
        if kind == "bf16":
            want, got = _bf16_to_float(want), _bf16_to_float(got)
        want64, got64 = want.astype(np.float64), got.astype(np.float64)
        close = np.isclose(got64, want64, rtol=rtol, atol=atol, equal_nan=True)
    else:
        close = want == got
    if close.all():
        return None
    bad = np.flatnonzero(~close)
    first = int(bad[0])
    return (f"{len(bad)} of {len(want)} elements differ ({element}); first at element {first}: "
            f"got {got[first]!r}, expected {want[first]!r}")


_STRIDED_TYPES = ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double")
_STRIDED_COPY = """\
__attribute__((overloadable)) event_t replay_strided_copy(__local {T}* dst, const __global {T}* src,
                                                          size_t n, size_t stride, event_t ev) {{
  for (size_t i = 0; i < n; ++i) dst[i] = src[i * stride];
  return async_work_group_copy(dst, src, 0, ev);
}}
__attribute__((overloadable)) event_t replay_strided_copy(__global {T}* dst, const __local {T}* src,
                                                          size_t n, size_t stride, event_t ev) {{
  for (size_t i = 0; i < n; ++i) dst[i * stride] = src[i];
  return async_work_group_copy(dst, src, 0, ev);
}}
"""


def expand_strided_copies(source):
    """`source` with async_work_group_strided_copy as an element-wise loop (same meaning)."""
    if "async_work_group_strided_copy" not in source:
        return source
    prelude = ["#pragma OPENCL EXTENSION cl_khr_fp64 : enable"]
    prelude += [_STRIDED_COPY.format(T=t) for t in _STRIDED_TYPES]
    prelude.append("#define async_work_group_strided_copy replay_strided_copy")
    return "\n".join(prelude) + "\n" + source


_SYNC_COPY = ("#define async_work_group_copy(d, s, n, e) "
              "(barrier(CLK_LOCAL_MEM_FENCE), async_work_group_copy(d, s, n, e))\n")
_SYNC_STRIDED_COPY = ("#define async_work_group_strided_copy(d, s, n, k, e) "
                      "(barrier(CLK_LOCAL_MEM_FENCE), async_work_group_strided_copy(d, s, n, k, e))\n")


def sync_async_copies(source, local_size):
    """`source` with a barrier before every async copy, for one-work-item kernels only."""
    if any(int(n) != 1 for n in local_size) or "async_work_group" not in source:
        return source
    if "replay_strided_copy" in source:  # expanded: a loop of the work-item's own, then a plain copy
        return _SYNC_COPY + source
    return _SYNC_COPY + _SYNC_STRIDED_COPY + source


def replay(path, cl=None, context=None, queue=None, expand_strided=False, sync_copies=False,
           extra_options=()):
    """Run one recording; -> {"name", "ok", "problems": [...]}. `extra_options`: build
    options after the recorded ones."""
    if cl is None:
        import pyopencl as cl
    with open(os.path.join(path, "launch.json")) as f:
        meta = json.load(f)
    if meta.get("format") != FORMAT:
        raise ValueError(f"{path}: not a launch recording ({meta.get('format')!r})")
    if context is None:
        device = cl.get_platforms()[0].get_devices()[0]
        context = cl.Context([device])
        queue = cl.CommandQueue(context, device)
    source = meta["source"]
    if expand_strided:
        source = expand_strided_copies(source)
    if sync_copies:
        source = sync_async_copies(source, meta["local_size"])
    program = cl.Program(context, source).build(options=meta["build_options"] + list(extra_options))
    kernel = cl.Kernel(program, meta["name"])
    mf = cl.mem_flags
    snapshots, elements = {}, {}
    for index, param in meta["params"].items():
        if param["kind"] == "buffer":
            number = param["snapshot"]
            elements.setdefault(number, param["element"])
            if number not in snapshots:
                with open(os.path.join(path, f"buf{number}.in"), "rb") as f:
                    data = bytearray(f.read())
                host = np.frombuffer(data, dtype=np.uint8) if data else np.zeros(16, np.uint8)
                buf = cl.Buffer(context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=host)
                snapshots[number] = (buf, len(data))
            kernel.set_arg(int(index), snapshots[number][0])
        else:
            kernel.set_arg(int(index), _CODE_TYPES[param["code"]](param["value"]))
    sys.stderr.write(f"### replay {os.path.basename(path)}\n")
    sys.stderr.flush()
    cl.enqueue_nd_range_kernel(queue, kernel, tuple(meta["global_size"]), tuple(meta["local_size"]))
    queue.finish()
    problems = []
    for number, (buf, nbytes) in sorted(snapshots.items()):
        with open(os.path.join(path, f"buf{number}.out"), "rb") as f:
            expected = f.read()
        actual = np.zeros(max(nbytes, 1), np.uint8)
        cl.enqueue_copy(queue, actual, buf)
        queue.finish()
        problem = compare(expected, actual[:nbytes].tobytes(), elements[number])
        if problem:
            params = [i for i, p in meta["params"].items() if p.get("snapshot") == number]
            problems.append(f"buffer of parameter(s) {', '.join(params)}: {problem}")
    sys.stderr.write(f"### done {os.path.basename(path)}\n")
    sys.stderr.flush()
    return {"name": os.path.basename(path), "kernel": meta["name"], "ok": not problems, "problems": problems}


def _recheck_unoptimized(result, path, cl, context, queue, expand, sync):
    """`result` again from a build with -cl-opt-disable (--recheck-unoptimized): ok,
    with the first problems as `optimized_only`, where that build matches."""
    unoptimized = replay(path, cl, context, queue, expand, sync, extra_options=("-cl-opt-disable",))
    if not unoptimized["ok"]:
        return result
    return dict(unoptimized, optimized_only=result["problems"])


def main(argv):
    import pyopencl as cl

    device = cl.get_platforms()[0].get_devices()[0]
    context = cl.Context([device])
    queue = cl.CommandQueue(context, device)
    expand = "--expand-strided-copies" in argv
    sync = "--sync-async-copies" in argv
    recheck = "--recheck-unoptimized" in argv
    status = 0
    for path in [a for a in argv if not a.startswith("--")]:
        try:
            result = replay(path, cl, context, queue, expand, sync)
            if recheck and not result["ok"]:
                result = _recheck_unoptimized(result, path, cl, context, queue, expand, sync)
        except Exception as exc:  # report and go on with the next recording
            result = {"name": os.path.basename(path), "ok": False, "problems": [f"{type(exc).__name__}: {exc}"]}
        status |= not result["ok"]
        print(json.dumps(result), flush=True)
    heavy = sorted(m for m in ("triton", "torch", "mlir") if m in sys.modules)
    print(json.dumps({"device": device.name.strip(), "heavy_modules": heavy}), flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
