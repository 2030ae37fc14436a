"""What the launcher does besides launching, for bounds-checked kernels and recordings.

Bounds-checked kernels (compiled with `bounds_check=True` or TRITON_SPIRV_BOUNDS_CHECK=1,
see emitter_opencl/bounds.py) take hidden parameters after their own: one element count
per global buffer, then the bounds record (their place and the record's layout:
opencl_abi). `LaunchChecks` passes them, and after the
launch raises `OutOfBoundsError` naming the kernel, the argument, the offending element
index, the buffer's size and the Python line of the access.

The extent of a tensor argument is the memory its shape and strides span, from
`data_ptr()` (not the rest of its storage): a kernel given a slice may not touch the
neighbours of the slice. Other pointer arguments extend to the end of the host memory
they reach (launcher.buffers.host_memory_range).

With TRITON_SPIRV_RECORD_DIR set (at start-up) or inside `launcher.replay.recording(dir)`,
`LaunchChecks` also records the launch for replay
(launcher/replay.py), hidden parameters included.
"""

import linecache
import os

import numpy as np

from opencl_abi import BOUNDS_COUNT, BOUNDS_RECORD_INTS, BOUNDS_SITE, BoundsSite, bounds_error_index

from . import replay
from .buffers import ArgumentProblem, host_memory_range
from .errors import OpenCLRuntimeError
from .types import OPENCL_SCALAR_BYTES, pointee_type


class OutOfBoundsError(OpenCLRuntimeError, IndexError):
    """A bounds-checked kernel accessed memory outside a buffer argument. The access
    was skipped: no memory outside the buffer was read or written."""

    def __init__(self, message, kernel, argument, index, size, access, path, line, count):
        super().__init__(message)
        self.kernel = kernel
        self.argument = argument
        self.index = index
        self.size = size
        self.access = access
        self.path = path
        self.line = line
        self.count = count


class BoundsPlan:
    """The bounds facts of one loaded kernel (from its clbin's `bounds` field)."""

    def __init__(self, bounds, handle):
        import pyopencl as cl

        self.params = list(bounds["params"])  # kernel parameter of each extent parameter
        self.sites = [BoundsSite.from_dict(site) for site in bounds["sites"]]
        self.n_hidden = len(self.params) + 1
        self.first_hidden = handle.num_args - self.n_hidden
        dev = handle.device
        self.zeros = np.zeros(BOUNDS_RECORD_INTS, np.int32)
        self.record = np.zeros(BOUNDS_RECORD_INTS, np.int32)
        self.err_buffer = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, size=self.zeros.nbytes)


def needs_checks(function):
    """Whether a launch of `function` needs LaunchChecks (the fast path says no)."""
    return function.bounds is not None or replay.record_dir is not None


def element_bytes(decl):
    """Bytes of the element type of a `__global T*` parameter declaration."""
    words = decl.replace("__global", " ").replace("const", " ").replace("*", " ").split()
    return OPENCL_SCALAR_BYTES.get(" ".join(words), 1)


def tensor_span_bytes(value, reachable):
    """Bytes from data_ptr() that a tensor's shape and strides cover (at most `reachable`)."""
    try:
        shape, strides, itemsize = tuple(value.shape), tuple(value.stride()), int(value.element_size())
    except (AttributeError, TypeError):
        return reachable
    if any(s == 0 for s in shape):
        return 0
    last = sum((size - 1) * stride for size, stride in zip(shape, strides) if stride > 0)
    return min(reachable, (last + 1) * itemsize)


class LaunchChecks:
    """Sets the hidden arguments and records a launch; `finish()` after the launch."""

    def __init__(self, launcher, function, queue, global_size, args):
        import pyopencl as cl

        self.cl = cl
        self.launcher = launcher
        self.function = function
        self.queue = queue
        plan = function.bounds
        directory = replay.record_dir
        self.recording = None
        if directory and global_size is not None:
            self.recording = replay.Recording(directory, function.name, function.source, function.build_options,
                                       global_size, function.local_size)
        self.extents = {}  # kernel parameter -> (argument name, element count, element type)
        position = None
        try:
            for index, position in launcher.pointer_slots:
                value = args[position]
                address, nbytes = host_memory_range(value)
                decl = function.arg_types[index] if index < len(function.arg_types) else "__global uchar*"
                size = element_bytes(decl)
                span = tensor_span_bytes(value, max(0, nbytes))
                element = pointee_type(launcher.param_type(index))
                self.extents[index] = (launcher.argument_name(position), span // size, element)
                if self.recording is not None:
                    self.recording.buffer(index, address, max(0, nbytes), element)
        except ArgumentProblem as problem:
            raise launcher.argument_error(position, problem) from None
        if self.recording is not None:
            for index, position, code, convert in launcher.scalar_slots:
                try:
                    self.recording.scalar(index, code, convert(args[position]))
                except ArgumentProblem as problem:
                    raise launcher.argument_error(position, problem) from None
        if plan is not None:
            self._set_hidden_args(plan)
        if self.recording is not None and not self.recording.before():
            self.recording = None

    def _set_hidden_args(self, plan):
        kernel = self.function.kernel
        for k, param in enumerate(plan.params):
            count = self.extents[param][1] if param in self.extents else 0
            kernel.set_arg(plan.first_hidden + k, np.int64(count))
            if self.recording is not None:
                self.recording.scalar(plan.first_hidden + k, "l", int(count))
        error_index = plan.first_hidden + len(plan.params)
        kernel.set_arg(error_index, plan.err_buffer)
        self.cl.enqueue_copy(self.queue, plan.err_buffer, plan.zeros, is_blocking=True)
        if self.recording is not None:
            self.recording.raw_buffer(error_index, plan.zeros.tobytes(), "int")

    def finish(self):
        """After the launch: save the recording, then raise if an access was out of bounds."""
        plan = self.function.bounds
        if plan is not None:
            self.cl.enqueue_copy(self.queue, plan.record, plan.err_buffer, is_blocking=True)
        if self.recording is not None:
            if plan is not None:
                self.recording.raw_output(plan.first_hidden + len(plan.params), plan.record.tobytes())
            self.recording.after()
        if plan is not None and plan.record[BOUNDS_COUNT] != 0:
            raise self._error(plan)

    def _error(self, plan):
        record = plan.record
        count, site_id = int(record[BOUNDS_COUNT]), int(record[BOUNDS_SITE])
        index = bounds_error_index(record)
        site = plan.sites[site_id] if 0 <= site_id < len(plan.sites) else BoundsSite.from_dict({})
        name, size, element = self.extents.get(site.param, (f"parameter {site.param}", "?", "?"))
        where = f"{os.path.basename(site.path)}:{site.line}" if site.path else "an unknown line"
        text = linecache.getline(site.path, site.line).strip() if site.path else ""
        message = (f"kernel '{self.function.name}': out-of-bounds {site.access} of argument '{name}' "
                   f"(kernel parameter {site.param}) at element index {index}, but the buffer holds {size} "
                   f"elements of {element}; at {where}" + (f": {text}" if text else "")
                   + f" ({site.op}). {count} access(es) were out of bounds; each was skipped, "
                   "so no memory outside the buffers was read or written.")
        return OutOfBoundsError(message, self.function.name, name, index, size, site.access, site.path,
                                site.line, count)


def begin_checks(launcher, function, queue, global_size, args):
    """LaunchChecks for a launch, or None when there is nothing to launch or check."""
    if global_size is None and function.bounds is None:
        return None
    return LaunchChecks(launcher, function, queue, global_size, args)
