"""Loading compiled kernels and launching them the way Triton's CompiledKernel does.

`load_binary` turns a clbin artefact into a `KernelHandle` (Triton's `function`).
`OpenCLLauncher(src, metadata)` is Triton's `launcher_cls`; it is called as

    launcher(gridX, gridY, gridZ, stream, function, packed_metadata, launch_metadata,
             launch_enter_hook, launch_exit_hook, *args)

with all bound kernel arguments in signature order. Everything that depends only on
the signature (which arguments are pointers, how scalars are packed, argument names
for messages) is worked out once in __init__; a launch only converts the values.

Tuple arguments are flattened and host tensor descriptors decomposed into their
base, shape and strides (descriptors.py), as Triton's own launchers do. Scratch
memory that the metadata asks for (scratch.py) is allocated per launch and passed
after the signature's parameters.

Launches are synchronous: when the call returns the kernel has finished and its
results are in the tensors' memory, as CPU code that reads them next expects.

A plain launch (see `_bind`) is made by a compiled launcher where the machine can
build one (compiled_launch.py); it hands every launch it cannot make as it stands
back to the Python path below.
"""

import numbers
import operator
import sys

from opencl_abi import ASSERT_RECORD, FLAT_MEMORY, NUM_PROGRAMS, first_index, hidden_parameters

from . import compiled_launch as _compiled
from . import replay as _replay
from .asserts import assert_plan
from .flat_memory import flat_memory_plan
from .bounds import BoundsPlan, begin_checks, needs_checks
from .buffers import ArgumentProblem, check_no_overlap, host_memory_range
from .clbin import unpack_clbin
from .descriptors import descriptor_param_names, descriptor_param_types, descriptor_values, is_descriptor_type
from .device import get_device
from .cache_repair import rebuild_clbin, take_expected
from .errors import ClbinFormatError, GridError, KernelArgumentError, OpenCLBuildError, OpenCLRuntimeError
from .il import log_fallback_once
from .profile import profiled_launch_calls, profiling_enabled
from .program_loops import program_loop_plan
from .program import get_program
from .resources import out_of_resources
from .scratch import ScratchPlan
from .types import SCALAR_KINDS, is_opencl_pointer_decl, is_pointer_type, opencl_scalar_bytes

# Triton program ids are i32, so no grid dimension may exceed this.
MAX_GRID_DIM = 2**31 - 1

# Grids whose work sizes a launcher remembers (_plan_work_sizes); more are rare, as a
# grid usually follows the problem size, and start the table afresh.
MAX_REMEMBERED_GRIDS = 256

# Signature types that are not kernel arguments at all.
_CONSTEXPR = "constexpr"


# ----------------------------------------------------------------------------
# Loading
# ----------------------------------------------------------------------------

class KernelHandle:
    """A loaded kernel and what launching it needs; Triton keeps it as `function`."""

    __slots__ = ("name", "kernel", "program", "device", "queue", "local_size", "arg_types",
                 "local_mem_bytes", "work_group_size", "private_mem_bytes", "max_grid", "lock",
                 "source", "build_options", "bounds", "args_set", "programs_set")

    def __init__(self, name, kernel, program, device, local_size, arg_types, local_mem_bytes):
        import pyopencl as cl

        info = cl.kernel_work_group_info
        self.name = name
        self.kernel = kernel
        self.program = program
        self.device = device
        self.queue = device.queue
        self.local_size = local_size
        self.arg_types = arg_types
        self.local_mem_bytes = local_mem_bytes
        self.work_group_size = int(kernel.get_work_group_info(info.WORK_GROUP_SIZE, device.device))
        self.private_mem_bytes = int(kernel.get_work_group_info(info.PRIVATE_MEM_SIZE, device.device))
        # The global size (grid * local size) must fit the device's size_t.
        size_t_max = 2 ** int(device.device.address_bits) - 1
        self.max_grid = tuple(min(MAX_GRID_DIM, size_t_max // n) for n in local_size)
        # A cl.Kernel holds its arguments between clSetKernelArg and the enqueue.
        self.lock = device.launch_lock
        # Set by load_binary: for recordings and bounds-checked kernels (bounds.py).
        self.source, self.build_options, self.bounds = "", (), None
        # The (buffer args, scalar args) a zero-copy launch last set on `kernel`, so that
        # an unchanged launch skips clSetKernelArg; None while other arguments may be
        # set (a copying launch clears it). Hidden parameters are not part of it.
        self.args_set = None
        # The value of a program loop's hidden parameter (program_loops.py), once set.
        self.programs_set = None

    @property
    def num_args(self):
        return int(self.kernel.num_args)

    def __repr__(self):
        return f"<KernelHandle {self.name} local_size={self.local_size} on {self.device.name}>"


def load_binary(name, kernel_bytes, shared=0, device=0):
    """Triton's `utils.load_binary`: -> (module, function, n_regs, n_spills, n_max_threads).

    module is the pyopencl.Program, function a KernelHandle. OpenCL reports no
    register count; n_regs is the kernel's private memory in 4-byte words, which is
    what spills to on most devices and so the closest analogue, kept within
    [1, MAX_REPORTED_REGS]. n_max_threads is the kernel's maximum work-group size.
    """
    if device not in (0, None):
        raise ValueError(f"OpenCL device index {device} does not exist: the backend runs on one device, index 0")
    cache_entry = take_expected(name)  # the files of the cache entry it comes from, if known
    try:
        clbin = unpack_clbin(kernel_bytes)
    except ClbinFormatError as exc:  # a corrupted cache entry: rebuilt from its source
        clbin = rebuild_clbin(name, exc, cache_entry)
    handle = load_kernel(clbin, name, shared)
    return handle.program, handle, reported_regs(handle.private_mem_bytes), 0, handle.work_group_size


def load_kernel(clbin, name=None, shared=0):
    """The KernelHandle of an unpacked clbin (clbin.clbin_fields) on the current device,
    checked against the device's limits (`shared`: local memory Triton asks for)."""
    dev = get_device()
    kernel_name = clbin["name"] or name
    program = _program_of(dev, clbin, kernel_name)
    handle = KernelHandle(kernel_name, _create_kernel(program, kernel_name), program, dev,
                          clbin["local_size"], clbin["arg_types"], clbin["local_mem_bytes"])
    handle.source, handle.build_options = clbin["source"], clbin["build_options"]
    _check_resources(handle, max(int(shared or 0), handle.local_mem_bytes))
    if clbin["bounds"] is not None:
        handle.bounds = BoundsPlan(clbin["bounds"], handle)
    return handle


def _program_of(dev, clbin, kernel_name):
    """The kernel's program: from its SPIR-V module when it has one (in `auto` mode a
    device that rejects it gets the OpenCL C source instead, logged once), else from
    its OpenCL C source."""
    args = (dev, clbin["source"], clbin["build_options"], clbin["binary"], clbin["device"], kernel_name)
    if clbin["spirv"]:
        try:
            return get_program(*args, il=clbin["spirv"])
        except OpenCLBuildError as exc:
            if clbin["program"] != "auto":
                raise
            log_fallback_once(kernel_name, f"the device rejected its SPIR-V module: {exc.log}")
    return get_program(*args)


# Occupancy formulas written for GPUs (e.g. the fused-softmax tutorial's
# `max_num_regs // (n_regs * warp_size * num_warps)`) divide by n_regs and must not
# reach 0. 255 is the per-thread limit of those GPUs: with the 65536 registers that
# device.py reports and a warp of 1, every num_warps up to 256 leaves at least one
# program per compute unit.
MAX_REPORTED_REGS = 255


def reported_regs(private_mem_bytes):
    return min(MAX_REPORTED_REGS, max(1, int(private_mem_bytes) // 4))


def unload_module(module):
    """Forget a program, so that its memory goes once the last kernel of it does."""
    dev = get_device()
    for key in [k for k, program in dev.programs.items() if program is module]:
        del dev.programs[key]


def _create_kernel(program, name):
    import pyopencl as cl

    try:
        return cl.Kernel(program, name)
    except cl.Error as exc:
        names = program.get_info(cl.program_info.KERNEL_NAMES)
        raise KernelArgumentError(f"the OpenCL program has no kernel '{name}' (it has: {names}): {exc}") from None


def _check_resources(handle, local_mem_bytes):
    """Raise Triton's OutOfResources, which the autotuner treats as 'skip this config'."""
    local_threads = handle.local_size[0] * handle.local_size[1] * handle.local_size[2]
    max_item_sizes = handle.device.device.max_work_item_sizes
    if local_threads > handle.work_group_size or any(n > m for n, m in zip(handle.local_size, max_item_sizes)):
        limit = f"{handle.work_group_size} (per dimension {list(max_item_sizes)})"
        _raise_out_of_resources(local_threads, limit, "threads", handle)
    max_local_mem = int(handle.device.device.local_mem_size)
    if local_mem_bytes > max_local_mem:
        _raise_out_of_resources(local_mem_bytes, max_local_mem, "shared memory", handle)


def _raise_out_of_resources(required, limit, what, handle):
    # Triton's OutOfResources (GridError without Triton), naming the kernel, its tiles
    # or work-group size, the device and the limit (resources.py).
    raise out_of_resources(required, limit, what, handle) from None


# ----------------------------------------------------------------------------
# Argument conversion (see types.py for the table)
# ----------------------------------------------------------------------------

def _describe(value):
    if hasattr(value, "data_ptr"):
        dtype = getattr(value, "dtype", None)
        return f"a {type(value).__name__}" + (f" of {dtype}" if dtype is not None else "")
    return f"{type(value).__name__} {value!r}"


def _int_converter(kind):
    low, high = kind.min_value, kind.max_value

    def convert(value):
        if type(value) is not int:
            value = _python_int(value)
        if low <= value <= high:
            return value
        raise ArgumentProblem(f"value {value} is out of range for {kind.triton} [{low}, {high}]")

    return convert


def _python_int(value):
    """bool, numpy integers and numpy bools as int; not tensors, even one-element ones."""
    if not hasattr(value, "data_ptr"):
        if isinstance(value, numbers.Integral):
            return operator.index(value)
        if getattr(getattr(value, "dtype", None), "kind", None) == "b":  # numpy.bool_
            return int(value)
    raise ArgumentProblem(f"must be an integer, got {_describe(value)}")


def _float_converter(kind):
    def convert(value):
        if type(value) is float:
            return value
        if not isinstance(value, numbers.Real) or hasattr(value, "data_ptr"):
            raise ArgumentProblem(f"must be a number, got {_describe(value)}")
        return float(value)

    return convert


def _scalar_converter(kind):
    return _float_converter(kind) if kind.is_float else _int_converter(kind)


def _flatten(args, types):
    """Tuple arguments become their elements, depth first (as Triton flattens them), and
    host tensor descriptors their base, shape and strides."""
    flat = []
    for value, ty in zip(args, types):
        if is_descriptor_type(ty):
            try:
                flat.extend(descriptor_values(value))
            except TypeError as exc:
                raise ArgumentProblem(str(exc)) from None
        elif isinstance(ty, tuple):
            if not isinstance(value, (tuple, list)) or len(value) != len(ty):
                raise ArgumentProblem(f"must be a tuple of {len(ty)}, got {_describe(value)}")
            flat.extend(_flatten(value, ty))
        else:
            flat.append(value)
    return flat


def _leaves(types, names):
    """(type, name) of each flattened signature entry."""
    for ty, name in zip(types, names):
        if is_descriptor_type(ty):
            yield from zip(descriptor_param_types(ty), descriptor_param_names(name, ty))
        elif isinstance(ty, tuple):
            yield from _leaves(ty, [f"{name}[{i}]" for i in range(len(ty))])
        else:
            yield ty, name


# clSetKernelArg takes the scalars' bytes; pyopencl's packed path wants the code as bytes.
_PACK_CODES = {kind.pack_char: kind.pack_char.encode("ascii") for kind in SCALAR_KINDS.values()}


def _set_args_packed(kernel, buffer_args, scalar_args):
    # pyopencl's own generated invokers use these two calls: one native call each for
    # all buffers and all scalars instead of one set_arg per argument.
    if buffer_args:
        kernel._set_arg_multi(buffer_args)
    if scalar_args:
        kernel._set_arg_buf_pack_multi(scalar_args)


def _set_args_portable(kernel, buffer_args, scalar_args):
    import numpy as np

    numpy_types = {b"b": np.int8, b"B": np.uint8, b"h": np.int16, b"H": np.uint16, b"i": np.int32,
                   b"I": np.uint32, b"l": np.int64, b"L": np.uint64, b"f": np.float32, b"d": np.float64}
    for i in range(0, len(buffer_args), 2):
        kernel.set_arg(buffer_args[i], buffer_args[i + 1])
    for i in range(0, len(scalar_args), 3):
        kernel.set_arg(scalar_args[i], numpy_types[scalar_args[i + 1]](scalar_args[i + 2]))


def _choose_arg_setter():
    import pyopencl as cl

    packed = hasattr(cl.Kernel, "_set_arg_multi") and hasattr(cl.Kernel, "_set_arg_buf_pack_multi")
    return _set_args_packed if packed else _set_args_portable


# ----------------------------------------------------------------------------
# The launcher
# ----------------------------------------------------------------------------

class OpenCLLauncher:
    """Triton's `launcher_cls` for OpenCL: `launcher(src, metadata)(grid..., *args)`.
    Other frontends make one with `for_parameters` (kernels.py)."""

    def __init__(self, src, metadata):
        name = getattr(metadata, "name", None) or getattr(src, "name", None) or "<kernel>"
        self._setup(name, list(src.signature.values()), _argument_names(src), metadata)

    @classmethod
    def for_parameters(cls, name, params, metadata):
        """A launcher for kernel `name` whose own parameters are `params`, (name, type)
        pairs with Triton's type names ("*fp32", "i64", ...); `metadata` (a dict) as the
        compiled kernel's, e.g. its `asserts`."""
        launcher = cls.__new__(cls)
        launcher._setup(name, [ty for _, ty in params], [n for n, _ in params], metadata)
        return launcher

    def _setup(self, kernel_name, types, names, metadata):
        import pyopencl as cl

        self.kernel_name = kernel_name
        self._types = types
        self._n_args = len(types)
        # Tuples and descriptors stand for several kernel parameters each.
        self._has_tuples = any(isinstance(ty, tuple) or is_descriptor_type(ty) for ty in types)
        self._scratch = ScratchPlan(metadata)
        # tl.device_assert: a hidden record parameter after the kernel's own (asserts.py).
        self._asserts = assert_plan(metadata, self.kernel_name)
        self._assert_index = None  # its kernel parameter index, set by _bind
        # tt.int_to_ptr: hidden host-memory buffers before the assert record (flat_memory.py).
        self._flat = flat_memory_plan(metadata, self.kernel_name)
        # Work-groups that run consecutive programs: a hidden parameter, fewer groups
        # (program_loops.py).
        self._program_loop = program_loop_plan(metadata)
        self._plan_arguments(types, names)
        self._set_args = _choose_arg_setter()
        self._enqueue = cl.enqueue_nd_range_kernel
        if profiling_enabled():  # TRITON_SPIRV_PROFILE=1: record every launch's event
            self._enqueue, self._set_args = profiled_launch_calls(self.kernel_name, self._enqueue,
                                                                  self._set_args)
        self._enqueue_copy = cl.enqueue_copy
        self._command_queue_type = cl.CommandQueue
        self._bound = None  # the KernelHandle whose parameters were checked against the plan
        self._plain = False  # set by _bind: launches of it need nothing but their arguments
        self._buffers = None  # the bound kernel's device's HostBufferCache
        self._work_sizes = {}
        self._tensor_type = _torch_tensor_type()  # for the fast path of pointer arguments
        # The compiled launcher of a plain launch (compiled_launch.py): its `launch` and
        # its state for the bound kernel, set by _bind where the machine can build one.
        self._compiled_launch = None
        self._compiled_state = None

    def _plan_arguments(self, types, names):
        """Per kernel parameter: where its value sits in the flattened args and how to pass it."""
        self._names = []  # name of each flattened argument, for messages
        self._pointer_slots = []  # (kernel parameter index, flattened position)
        self._scalar_slots = []  # (kernel parameter index, flattened position, pack code, converter)
        self._param_types = []  # Triton type of each kernel parameter
        leaves = list(_leaves(types, names))
        self._n_flat = len(leaves)
        # Scratch buffers are appended to the flattened arguments at launch.
        leaves += [("*i8", name) for name in self._scratch.names]
        for position, (ty, name) in enumerate(leaves):
            self._names.append(name)
            if ty == _CONSTEXPR:
                continue  # baked into the kernel; not a parameter
            index = len(self._param_types)
            if is_pointer_type(ty):
                self._pointer_slots.append((index, position))
            elif ty in SCALAR_KINDS:
                kind = SCALAR_KINDS[ty]
                self._scalar_slots.append((index, position, _PACK_CODES[kind.pack_char], _scalar_converter(kind)))
            else:
                raise KernelArgumentError(
                    f"argument '{name}' of kernel '{self.kernel_name}' has type {ty!r}, which the OpenCL "
                    "backend cannot pass")
            self._param_types.append(ty)
        self._positions = {position: index for index, position, *_ in self._pointer_slots + self._scalar_slots}
        self._has_float_scalars = any(SCALAR_KINDS[ty].is_float for ty in self._param_types if ty in SCALAR_KINDS)

    # -- the argument plan as bounds checks and recordings read it (bounds.py) --

    @property
    def pointer_slots(self):
        """(kernel parameter index, flattened position) of each pointer argument."""
        return self._pointer_slots

    @property
    def scalar_slots(self):
        """(kernel parameter index, flattened position, pack code, converter) of each scalar."""
        return self._scalar_slots

    def argument_name(self, position):
        """The name of the flattened argument at `position`, for messages."""
        return self._names[position]

    def param_type(self, index):
        """The Triton type of kernel parameter `index` ("*fp32", "i32", ...)."""
        return self._param_types[index]

    # -- the call ------------------------------------------------------------

    def __call__(self, gridX, gridY, gridZ, stream, function, packed_metadata, launch_metadata,
                 launch_enter_hook, launch_exit_hook, *args):
        if function is not self._bound:
            self._bind(function)
        if self._compiled_state is not None and _replay.record_dir is None:
            # The common launch in one C call; anything else it leaves to the code below.
            with function.lock:
                status = self._compiled_launch(self._compiled_state, gridX, gridY, gridZ, stream,
                                               launch_enter_hook, launch_exit_hook, args)
            if status == _compiled.LAUNCHED:
                return
            if status != _compiled.FALLBACK:
                raise OpenCLRuntimeError(f"kernel '{self.kernel_name}' failed on {function.device.name}: "
                                         f"waiting for it returned OpenCL error {status}")
        queue = stream if type(stream) is self._command_queue_type else function.queue
        if not (self._plain and type(gridX) is int and type(gridY) is int and type(gridZ) is int
                and len(args) == self._n_args and _replay.record_dir is None):
            global_size = self._global_size(function, gridX, gridY, gridZ)
            self._launch_with_extras(function, queue, global_size, args, launch_metadata,
                                     launch_enter_hook, launch_exit_hook, (gridX, gridY, gridZ), stream)
            return
        # A launch that needs nothing but its arguments (see _bind): the common case,
        # kept to what may change from one launch to the next. The work sizes of a grid
        # come from a table filled on the grid's first launch.
        sizes = self._work_sizes.get((gridX, gridY, gridZ))
        if sizes is None:
            sizes = self._plan_work_sizes(function, (gridX, gridY, gridZ))
        with function.lock:  # the kernel's arguments, and the buffer cache
            if sizes and self._program_loop is not None and function.programs_set != gridX:
                self._program_loop.set_programs(function, gridX)
            self._launch_zero_copy(function, queue, sizes, args, launch_metadata,
                                   launch_enter_hook, launch_exit_hook)

    def _plan_work_sizes(self, function, grid):
        """(global size, local size) to enqueue `grid` (int dimensions) with, as few
        dimensions as the grid and work-group need, remembered in `_work_sizes`; ()
        for an empty grid. Raises GridError for grids the kernel cannot run."""
        global_size = self._global_size(function, *grid)
        if global_size is None:
            sizes = ()
        else:
            if self._program_loop is not None:
                global_size = self._program_loop.global_size(function, grid[0], global_size)
            sizes = _fewest_dimensions(global_size, function.local_size)
        if len(self._work_sizes) >= MAX_REMEMBERED_GRIDS:
            self._work_sizes.clear()
        self._work_sizes[grid] = sizes
        return sizes

    def _launch_with_extras(self, function, queue, global_size, args, launch_metadata,
                            launch_enter_hook, launch_exit_hook, grid, stream):
        """Tuples, scratch memory, hidden parameters, bounds checks, recordings, copying."""
        if self._has_tuples or len(args) != self._n_args:
            args = self._flattened(args)
        if self._scratch:
            args = (*args[:self._n_flat], *self._scratch.allocate(grid[0] * grid[1] * grid[2], stream))
        with function.lock:
            # Copying launches set staging buffers as the arguments.
            function.args_set = None
            if self._program_loop is not None and global_size is not None:
                self._program_loop.set_programs(function, grid[0])
                global_size = self._program_loop.global_size(function, grid[0], global_size)
            # Bounds-checked kernels and recorded launches only (bounds.py).
            checks = begin_checks(self, function, queue, global_size, args) if needs_checks(function) else None
            if checks is not None and checks.recording is not None and self._program_loop is not None:
                self._program_loop.record(checks.recording, grid[0])
            if self._flat is not None:
                self._flat.set_args(function)
            if self._asserts is not None:
                self._asserts.begin(function, queue, self._assert_index, checks)
            if function.device.zero_copy:
                sizes = () if global_size is None else (global_size, function.local_size)
                self._launch_zero_copy(function, queue, sizes, args, launch_metadata,
                                       launch_enter_hook, launch_exit_hook)
            else:
                self._launch_copying(function, queue, global_size, args, launch_metadata,
                                     launch_enter_hook, launch_exit_hook)
            failed = self._asserts.collect(queue, checks) \
                if self._asserts is not None and global_size is not None else None
            if checks is not None:
                checks.finish()
            if failed is not None:
                raise failed

    def _launch_zero_copy(self, function, queue, sizes, args, launch_metadata, enter_hook, exit_hook):
        """Sets the arguments, runs the kernel on the host memory itself and waits;
        `sizes` is (global size, local size) to enqueue, () for an empty grid. The
        caller holds the lock.

        Arguments equal to those last set on the kernel are not set again: a kernel
        keeps its arguments, and the same tensors map to the same cached buffers (the
        lock also guards that cache). Kernels with float scalars always set them, as
        -0.0 == 0.0 in Python.
        """
        kernel = function.kernel
        buffer_args = self._aliasing_buffer_args(self._buffers, args)
        scalar_args = self._scalar_args(args) if self._scalar_slots else ()
        settled = (buffer_args, scalar_args)
        if settled != function.args_set or self._has_float_scalars:
            self._set_args(kernel, buffer_args, scalar_args)
            function.args_set = settled
        if _has_hooks(enter_hook):
            enter_hook(launch_metadata)
        if sizes:
            # Waiting for the kernel's event rather than the whole queue (clFinish) is
            # quicker on Intel's runtime. The kernel wrote straight into host memory
            # (the device probe checked that it does), so its results are complete
            # once it has finished.
            self._enqueue(queue, kernel, *sizes).wait()
        if _has_hooks(exit_hook):
            exit_hook(launch_metadata)

    def _aliasing_buffer_args(self, buffers, args):
        """(index, cl.Buffer, ...) for the pointer parameters, on a zero-copy device.

        The common case (a CPU tensor whose buffer is cached) is inlined: this loop
        is most of the launcher's own cost.
        """
        tensor_type = self._tensor_type
        cached = buffers.by_range
        buffer_args = []
        position = None
        try:
            for index, position in self._pointer_slots:
                value = args[position]
                if type(value) is tensor_type and value.is_cpu:
                    storage = value.untyped_storage()
                    address = value.data_ptr()
                    key = (address, storage.data_ptr() + storage.nbytes() - address)
                    buffer = cached.get(key)
                    if buffer is None:
                        buffer = buffers.aliasing_buffer(*key)
                    else:
                        cached.move_to_end(key)  # keep the LRU order
                else:
                    buffer = buffers.aliasing_buffer(*host_memory_range(value))
                    self._tensor_type = _torch_tensor_type()
                buffer_args += (index, buffer)
        except ArgumentProblem as problem:
            raise self.argument_error(position, problem) from None
        return tuple(buffer_args)

    def _launch_copying(self, function, queue, global_size, args, launch_metadata, enter_hook, exit_hook):
        buffers = function.device.buffers
        ranges, position = [], None
        try:
            for index, position in self._pointer_slots:
                ranges.append(host_memory_range(args[position]))
        except ArgumentProblem as problem:
            raise self.argument_error(position, problem) from None
        scalar_args = self._scalar_args(args)
        check_no_overlap(ranges, self.kernel_name, [self._names[p] for _, p in self._pointer_slots])
        staged, buffer_args = {}, []
        for (index, _), (address, nbytes) in zip(self._pointer_slots, ranges):
            if nbytes <= 0:
                buffer_args += (index, buffers.empty_buffer())
                continue
            if (address, nbytes) not in staged:
                staged[(address, nbytes)] = buffers.staging_buffer(address, nbytes)
            buffer_args += (index, staged[(address, nbytes)][0])
        self._set_args(function.kernel, tuple(buffer_args), scalar_args)
        if _has_hooks(enter_hook):
            enter_hook(launch_metadata)
        if global_size is not None:
            for device_buffer, host_view in staged.values():
                self._enqueue_copy(queue, device_buffer, host_view, is_blocking=False)
            self._enqueue(queue, function.kernel, global_size, function.local_size)
            # The kernel may have written any pointer argument: copy all of them back.
            for device_buffer, host_view in staged.values():
                self._enqueue_copy(queue, host_view, device_buffer, is_blocking=False)
            queue.finish()
        if _has_hooks(exit_hook):
            exit_hook(launch_metadata)

    def _scalar_args(self, args):
        """(index, pack code, value, ...) for pyopencl."""
        packed = []
        position = None
        try:
            for index, position, code, convert in self._scalar_slots:
                packed += (index, code, convert(args[position]))
        except ArgumentProblem as problem:
            raise self.argument_error(position, problem) from None
        return tuple(packed)

    def _flattened(self, args):
        if len(args) != self._n_args:
            raise KernelArgumentError(
                f"kernel '{self.kernel_name}' takes {self._n_args} arguments (constexprs included), "
                f"got {len(args)}")
        try:
            return _flatten(args, self._types)
        except ArgumentProblem as problem:
            raise KernelArgumentError(
                f"a tuple or descriptor argument of kernel '{self.kernel_name}' {problem}") from None

    def argument_error(self, position, problem):
        """The KernelArgumentError for the flattened argument at `position`."""
        name = self._names[position] if position is not None else "?"
        ty = self._param_types[self._positions[position]] if position in self._positions else "?"
        return KernelArgumentError(
            f"argument '{name}' (position {position}, {ty}) of kernel '{self.kernel_name}' {problem}")

    # -- grid ----------------------------------------------------------------

    def _global_size(self, function, gridX, gridY, gridZ):
        """grid * local size; None for an empty grid (nothing to run)."""
        max_x, max_y, max_z = function.max_grid
        if (type(gridX) is int and type(gridY) is int and type(gridZ) is int
                and 0 < gridX <= max_x and 0 < gridY <= max_y and 0 < gridZ <= max_z):
            local_x, local_y, local_z = function.local_size
            return (gridX * local_x, gridY * local_y, gridZ * local_z)
        return self._checked_global_size(function, (gridX, gridY, gridZ))

    def _checked_global_size(self, function, grid):
        """The slow path: explain what is wrong, or accept numpy integers and empty grids."""
        dims = []
        for axis, (size, limit) in enumerate(zip(grid, function.max_grid)):
            if isinstance(size, bool) or not isinstance(size, numbers.Integral):
                raise GridError(f"grid of kernel '{self.kernel_name}' must be integers, "
                                f"got {type(size).__name__} {size!r} in dimension {axis} (grid {grid})")
            size = operator.index(size)
            if size < 0:
                raise GridError(f"grid of kernel '{self.kernel_name}' has a negative dimension {axis}: {grid}")
            if size > limit:
                raise GridError(f"grid dimension {axis} of kernel '{self.kernel_name}' is {size}, beyond the "
                                f"limit {limit} (program ids are i32; grid * local size must fit the device)")
            dims.append(size)
        if 0 in dims:
            # Like Triton's CUDA and HIP launchers: an empty grid launches nothing.
            return None
        return tuple(n * local for n, local in zip(dims, function.local_size))

    # -- checking a kernel against the signature, once per loaded kernel -------

    def _bind(self, function):
        n_params = len(self._param_types)
        hidden = hidden_parameters(
            n_params, program_loop=self._program_loop is not None,
            flat_memory=self._flat.count if self._flat is not None else 0,
            asserts=self._asserts is not None,
            bounds_buffers=function.bounds.params if function.bounds is not None else None)
        if function.num_args - len(hidden) != n_params:
            raise KernelArgumentError(
                f"kernel '{self.kernel_name}' has {function.num_args} OpenCL parameters but its Triton "
                f"signature has {n_params} non-constexpr arguments ({self._param_types})")
        for index, (ty, decl) in enumerate(zip(self._param_types, function.arg_types)):
            problem = _parameter_mismatch(ty, decl)
            if problem:
                raise KernelArgumentError(
                    f"parameter {index} of kernel '{self.kernel_name}' is declared '{decl}' in the OpenCL "
                    f"source but the Triton signature says {ty!r}: {problem}")
        # Hidden parameters where opencl_abi puts them (bounds-checked mode's: bounds.py).
        if self._flat is not None:
            self._flat.bind(function, first_index(hidden, FLAT_MEMORY))
        if self._asserts is not None:
            self._assert_index = first_index(hidden, ASSERT_RECORD)
        if self._program_loop is not None:
            self._program_loop.bind(function, first_index(hidden, NUM_PROGRAMS))
        self._buffers = function.device.buffers
        self._work_sizes = {}  # grid -> sizes to enqueue, for this kernel (_plan_work_sizes)
        self._plain = (function.device.zero_copy and function.bounds is None and not self._has_tuples
                       and not self._scratch and self._flat is None and self._asserts is None)
        self._bind_compiled(function)
        self._bound = function

    def _bind_compiled(self, function):
        """The compiled launcher's state for `function`, for plain launches of CPU
        tensors, unless profiling wraps the enqueue or the machine cannot build one."""
        self._compiled_launch = self._compiled_state = None
        tensor_type = _torch_tensor_type()
        if not self._plain or tensor_type is None or profiling_enabled() or not _compiled.enabled():
            return
        import pyopencl as cl

        scalars = [(index, position, self._param_types[index]) for index, position, *_ in self._scalar_slots]
        module = _compiled.compiled_module(_compiled.c_source(self._n_args, self._pointer_slots, scalars))
        if module is None:
            return
        program_loop = self._program_loop.index if self._program_loop is not None else -1
        self._compiled_state = module.bind(
            function, function.kernel.int_ptr, function.queue.int_ptr, function.queue, cl.CommandQueue,
            tensor_type, self._buffers.by_range, self._work_sizes, program_loop, *_compiled.opencl_entry_points())
        self._compiled_launch = module.launch
        self._tensor_type = tensor_type

    @property
    def kind(self):
        """'compiled' when plain launches of the bound kernel take the compiled
        launcher, else 'python'."""
        return "compiled" if self._compiled_state is not None else "python"

    @property
    def compiled_launches(self):
        """How many launches of the bound kernel the compiled launcher made."""
        if self._compiled_state is None:
            return 0
        return self._compiled_launch.__self__.launches(self._compiled_state)  # __self__: the module


def _fewest_dimensions(global_size, local_size):
    """(global size, local size) without the trailing dimensions of size 1, which
    OpenCL assumes for dimensions beyond the work dimension: enqueueing fewer
    dimensions is quicker (~0.2 us per launch on Intel's runtime)."""
    dims = len(global_size)
    while dims > 1 and global_size[dims - 1] == 1 and local_size[dims - 1] == 1:
        dims -= 1
    return tuple(global_size[:dims]), tuple(local_size[:dims])


def _has_hooks(hook):
    """Whether a launch hook has anything to call. Triton passes its hook chains
    (`knobs.runtime.launch_enter_hook`, `launch_exit_hook`) to every launch, empty unless
    something registered a hook; calling the two empty chains costs a launch ~1-2 us,
    a fifth of this launcher's own cost on Intel's runtime. A chain is read at each
    launch, so hooks added later are called."""
    return hook is not None and getattr(hook, "calls", True)


def _parameter_mismatch(triton_type, decl):
    """Why a declared OpenCL parameter cannot take a Triton argument, or None if it can."""
    if is_pointer_type(triton_type):
        return None if is_opencl_pointer_decl(decl) else "a pointer needs a __global pointer parameter"
    if is_opencl_pointer_decl(decl):
        return "a scalar cannot be passed to a pointer parameter"
    declared = opencl_scalar_bytes(decl)
    expected = SCALAR_KINDS[triton_type].nbytes
    if declared is not None and declared != expected:
        return f"{declared}-byte parameter, {expected}-byte value"
    return None


def _torch_tensor_type():
    """torch.Tensor if torch is loaded (the launcher itself does not need torch)."""
    torch = sys.modules.get("torch")
    return torch.Tensor if torch is not None else None


def _argument_names(src):
    """Names of the signature entries: the source names where Triton knows them."""
    keys = list(src.signature.keys())
    fn_names = list(getattr(getattr(src, "fn", None), "arg_names", None) or [])
    names = []
    for i, key in enumerate(keys):
        if isinstance(key, str):
            names.append(key)
        elif i < len(fn_names):
            names.append(fn_names[i])
        else:
            names.append(f"arg{i}")
    return names
