"""OpenCL buffers over the host memory of pointer arguments (torch CPU tensors).

A pointer argument becomes a `cl.Buffer` that starts at `tensor.data_ptr()` (which
already includes the storage offset) and runs to the end of the tensor's storage, so
that a kernel indexing with the tensor's strides stays inside the buffer.

Zero-copy devices (see device.py) get `CL_MEM_USE_HOST_PTR` buffers that alias the
tensor's memory. Such a buffer stays valid for as long as the host range is mapped,
whoever owns it later, so buffers are cached by (address, size) in a small LRU:
creating one costs more than the rest of a launch's argument handling.

Other devices get device buffers (cached the same way) that the launcher fills
before the kernel and reads back after it.
"""

import ctypes
import sys
from collections import OrderedDict

from .errors import KernelArgumentError

DEFAULT_CAPACITY = 64


class ArgumentProblem(Exception):
    """Internal: what is wrong with one argument; the launcher adds which one."""


# torch.Tensor, once torch has been imported: plain CPU tensors take a fast path.
_Tensor = None


def host_memory_range(value):
    """(address, byte count) of the host memory a pointer argument may reach.

    Accepts what Triton's own launchers accept as a pointer: torch CPU tensors, any
    object with `data_ptr()` (sized by its torch storage, `nbytes`, `numel()` and
    `element_size()`, or the tensor it wraps as `base`, like Triton's TensorWrapper
    from `triton.reinterpret`), a raw address (int), and None or a `data_ptr()` of 0
    as a null pointer (an empty range: the kernel gets a placeholder buffer). Also
    C-contiguous numpy arrays (what the HLO runtime passes).
    """
    if type(value) is _Tensor and value.is_cpu:
        storage = value.untyped_storage()
        address = value.data_ptr()
        return address, storage.data_ptr() + storage.nbytes() - address
    return _checked_host_memory_range(value)


def _checked_host_memory_range(value):
    global _Tensor
    if _Tensor is None and "torch" in sys.modules:
        _Tensor = sys.modules["torch"].Tensor
    if value is None:
        return 0, 0
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, numpy.ndarray):
        return _array_memory_range(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value, _bytes_mapped_from(value)
    device = getattr(value, "device", None)
    if device is not None and getattr(device, "type", "cpu") != "cpu":
        raise ArgumentProblem(f"is on device {device}; OpenCL kernels take CPU tensors")
    try:
        address = value.data_ptr()
    except AttributeError:
        raise ArgumentProblem(f"must be a tensor (an object with data_ptr()), got {type(value).__name__}") from None
    if not isinstance(address, int):
        raise ArgumentProblem(f"data_ptr() of {type(value).__name__} must return an int, "
                              f"got {type(address).__name__}")
    if address == 0:
        return 0, 0
    return address, _bytes_reachable_from(value, address)


def _array_memory_range(array):
    """A numpy array's memory, which must be one block in element order."""
    if not array.flags.c_contiguous:
        raise ArgumentProblem(f"is a numpy array of shape {array.shape} that is not C-contiguous; "
                              "pass numpy.ascontiguousarray(...) of it")
    return (array.ctypes.data, array.nbytes) if array.nbytes else (0, 0)


def _bytes_reachable_from(value, address):
    storage = getattr(value, "untyped_storage", None)
    if storage is not None:
        storage = storage()
        return storage.data_ptr() + storage.nbytes() - address
    if hasattr(value, "nbytes"):
        return int(value.nbytes)
    if hasattr(value, "numel") and hasattr(value, "element_size"):
        return int(value.numel()) * int(value.element_size())
    base = getattr(value, "base", None)
    if base is not None and base is not value and hasattr(base, "data_ptr"):
        return _bytes_reachable_from(base, address)
    # Triton's launchers need nothing but the address; the memory mapping that holds
    # it is the most the kernel can reach.
    return _bytes_mapped_from(address)


def _bytes_mapped_from(address):
    """Bytes from `address` to the end of the process memory mapping that holds it."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                start, end = (int(a, 16) for a in line.split(None, 1)[0].split("-"))
                if start <= address < end:
                    return end - address
    except OSError:
        raise ArgumentProblem(f"is a bare address ({address:#x}) with no size, and this system "
                              "cannot tell how much memory follows it; pass a tensor") from None
    raise ArgumentProblem(f"address {address:#x} is not in this process's memory")


def _host_view(address, nbytes):
    """A writable buffer-protocol object over raw host memory (no copy)."""
    return (ctypes.c_char * nbytes).from_address(address)


class HostBufferCache:
    """Per-device LRU of cl.Buffers keyed by host (address, size)."""

    def __init__(self, device, capacity=DEFAULT_CAPACITY):
        import pyopencl as cl

        self._cl = cl
        self._device = device
        self._capacity = capacity
        # (address, nbytes) -> cl.Buffer (zero-copy) or (cl.Buffer, host view) (copying).
        # Public so that the launcher can inline its cache hits.
        self.by_range = self._entries = OrderedDict()
        self._empty = None

    def __len__(self):
        return len(self._entries)

    def clear(self):
        self._entries.clear()

    def aliasing_buffer(self, address, nbytes):
        """A USE_HOST_PTR buffer over [address, address + nbytes) (zero-copy devices)."""
        if nbytes <= 0:
            return self.empty_buffer()
        key = (address, nbytes)
        entries = self._entries
        buf = entries.get(key)
        if buf is None:
            mf = self._cl.mem_flags
            buf = self._cl.Buffer(self._device.context, mf.READ_WRITE | mf.USE_HOST_PTR,
                                  hostbuf=_host_view(address, nbytes))
            self._remember(key, buf)
        else:
            entries.move_to_end(key)
        return buf

    def staging_buffer(self, address, nbytes):
        """(device buffer, host view) for a range that is copied in and out."""
        key = (address, nbytes)
        entry = self._entries.get(key)
        if entry is None:
            buf = self._cl.Buffer(self._device.context, self._cl.mem_flags.READ_WRITE, size=nbytes)
            entry = (buf, _host_view(address, nbytes))
            self._remember(key, entry)
        else:
            self._entries.move_to_end(key)
        return entry

    def empty_buffer(self):
        """Stands in for empty tensors: OpenCL has no zero-sized buffers."""
        if self._empty is None:
            self._empty = self._cl.Buffer(self._device.context, self._cl.mem_flags.READ_WRITE, size=16)
        return self._empty

    def _remember(self, key, entry):
        self._entries[key] = entry
        if len(self._entries) > self._capacity:
            # Launches finish before returning, so no queued kernel still uses it.
            self._entries.popitem(last=False)


def check_no_overlap(ranges, kernel_name, names):
    """Copy mode cannot keep two buffers over overlapping host memory coherent.

    The same range twice is fine: it maps to one cached buffer.
    """
    for i, (start_a, size_a) in enumerate(ranges):
        for j in range(i + 1, len(ranges)):
            start_b, size_b = ranges[j]
            same = (start_a, size_a) == (start_b, size_b)
            if not same and size_a > 0 and size_b > 0 and start_a < start_b + size_b and start_b < start_a + size_a:
                raise KernelArgumentError(
                    f"arguments '{names[i]}' and '{names[j]}' of kernel '{kernel_name}' overlap in memory; "
                    "this device copies arguments in and out, which cannot keep overlapping views coherent "
                    "(pass separate tensors)")
