"""Flat memory parameters of kernels that make pointers from integers (tt.int_to_ptr;
metadata `flat_memory`, see triton_spirv/ttir_to_linalg/flat.py).

Such a kernel reaches any host address as an element offset from the base address of
a hidden buffer parameter (one per pointee type, after the kernel's own parameters and
before the assert record). On a zero-copy device a device address is the host address,
so any buffer aliasing host memory will do: the launcher passes one over a small host
array of its own. On a copying device host addresses mean nothing to the kernel, and
launching such a kernel raises KernelArgumentError.
"""

import numpy as np

from .errors import KernelArgumentError

# The host memory the flat memory buffers alias (its contents are never used).
_ANCHOR = np.zeros(16, np.int64)


class FlatMemoryPlan:
    def __init__(self, count, kernel_name):
        self.count = int(count)
        self.kernel_name = kernel_name
        self.buffer = None
        self.context = None
        self.first = None

    def bind(self, function, first):
        """Check the device once per loaded kernel; the buffers are parameters
        `first`, `first + 1`, ..."""
        if not function.device.zero_copy:
            raise KernelArgumentError(
                f"kernel '{self.kernel_name}' makes pointers from integers (tt.int_to_ptr, "
                "e.g. a table of data_ptr()s), which needs a device whose buffers are host "
                f"memory (zero-copy); {function.device.name} copies buffers")
        if self.context is not function.device.context:
            import pyopencl as cl
            mf = cl.mem_flags
            self.buffer = cl.Buffer(function.device.context, mf.READ_WRITE | mf.USE_HOST_PTR,
                                    hostbuf=_ANCHOR)
            self.context = function.device.context
        self.first = first

    def set_args(self, function):
        for k in range(self.count):
            function.kernel.set_arg(self.first + k, self.buffer)


def flat_memory_plan(metadata, kernel_name):
    """A FlatMemoryPlan for kernels with tt.int_to_ptr, else None."""
    count = getattr(metadata, "flat_memory", None)
    if count is None and isinstance(metadata, dict):
        count = metadata.get("flat_memory")
    return FlatMemoryPlan(count, kernel_name) if count else None
