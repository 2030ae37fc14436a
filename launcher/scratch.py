"""Global scratch memory that a compiled kernel may ask the launcher for.

Triton's compilers record `global_scratch_size` / `global_scratch_align` (and the
same for `profile_scratch_*`) in the kernel metadata: bytes per program that the
launcher must allocate for each launch and pass as extra trailing pointer
parameters. Triton's CUDA and HIP launchers always append both pointers; kernels
made by this backend take one only when its size is non-zero, so that kernels
without scratch (all of them today) keep exactly their signature's parameters.

Global scratch comes from the allocator set with `triton.set_allocator` (the call
fails with Triton's own message when none is set); profile scratch from the one set
with `triton.runtime._allocation.set_profile_allocator`, else from zeroed host memory.
"""

import ctypes

GLOBAL = "global_scratch"
PROFILE = "profile_scratch"


class ScratchBuffer:
    """Host memory of a known size, passed like a tensor (data_ptr(), nbytes)."""

    def __init__(self, address, nbytes, owner):
        self._address = int(address)
        self.nbytes = int(nbytes)
        self.owner = owner  # keeps the memory alive for the launch

    def data_ptr(self):
        return self._address


class ScratchPlan:
    """Which scratch parameters a kernel takes (in order) and how big they are per program."""

    def __init__(self, metadata):
        num_ctas = int(getattr(metadata, "num_ctas", 1) or 1)
        self.kinds = []  # (name, bytes per program, alignment)
        for name in (GLOBAL, PROFILE):
            size = int(getattr(metadata, f"{name}_size", 0) or 0)
            if size > 0:
                align = int(getattr(metadata, f"{name}_align", 1) or 1)
                self.kinds.append((name, size * num_ctas, align))

    @property
    def names(self):
        return [name for name, _, _ in self.kinds]

    def __bool__(self):
        return bool(self.kinds)

    def allocate(self, grid_size, stream):
        """One buffer per scratch parameter for a launch of grid_size programs."""
        return [_allocate(name, max(1, grid_size) * size, align, stream) for name, size, align in self.kinds]


def _allocate(name, nbytes, align, stream):
    from triton.runtime import _allocation

    if name == GLOBAL:
        return _wrap(_allocation._allocator.get()(nbytes, align, stream), nbytes)
    if _allocation.has_profile_allocator():
        return _wrap(_allocation._profile_allocator(nbytes, align, stream), nbytes)
    return zeroed_host_buffer(nbytes, align)


def _wrap(buffer, nbytes):
    """An allocator's result as a pointer argument (allocators need only give data_ptr())."""
    return ScratchBuffer(buffer.data_ptr(), nbytes, buffer)


def zeroed_host_buffer(nbytes, align=1):
    align = max(1, int(align))
    raw = (ctypes.c_char * (nbytes + align))()
    address = ctypes.addressof(raw)
    return ScratchBuffer(address + (-address % align), nbytes, raw)
