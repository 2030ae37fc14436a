"""Triton driver for OpenCL devices.

Triton finds it through the `triton.backends` entry point, which imports this
module and takes its one concrete DriverBase subclass; the runtime itself (device,
programs, buffers, launches) lives in the `launcher` package.
"""

import functools

from triton.backends.compiler import GPUTarget
from triton.backends.driver import DriverBase

# Submodules by name: this works even where `launcher` resolves as a namespace
# package (an editable install made before launcher/__init__.py existed).
from launcher import device_interface
from launcher.cache_repair import expect_load
from launcher.device import get_device
from launcher.launch import OpenCLLauncher, load_binary, unload_module
from launcher.types import opencl_type_of

# OpenCL has no portable SIMD width (CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE is
# per kernel, known only after a build), and the emitted code does not use
# sub-groups. With a warp of 1, num_warps is just a number of work-items, and
# Triton's check num_warps * warp_size <= n_max_threads holds for any sane config.
WARP_SIZE = 1


def target_arch(device_arch):
    """The GPUTarget arch: the device's, plus the target description it is made to
    pretend ($TRITON_SPIRV_TARGET), so that the override is in every cache key."""
    from .target import DEVICE, target_spec
    spec = target_spec()
    return device_arch if spec == DEVICE else f"{device_arch}+{spec}"


# Bytes overwritten between benchmark runs to evict the inputs from the CPU caches
# (at least the size of a large server's last-level cache).
BENCHMARK_CACHE_BYTES = 64 * 1024 * 1024


class OpenCLUtils:
    """`driver.utils`: what CompiledKernel and triton.testing call on the device."""

    def __init__(self):
        self.load_binary = load_binary
        self.unload_module = unload_module

    @staticmethod
    def get_device_properties(device=0):
        """CUDA-style names (multiprocessor_count, max_shared_mem, max_num_regs, warpSize,
        sm_clock_rate, mem_clock_rate, mem_bus_width) mapped from the OpenCL device; a
        copy, so that callers may change it. `device` may be an index or None (the
        `.index` of torch's CPU device)."""
        device_interface.set_device(device)  # rejects indices other than 0
        return dict(get_device().properties())

    @staticmethod
    def set_printf_fifo_size(size_bytes):
        """What tl.device_print's documentation tells CUDA users to call when prints
        get dropped. OpenCL has no call that sizes the printf buffer (the implementation
        fixes it), so only the argument is checked."""
        if not isinstance(size_bytes, int) or size_bytes <= 0:
            raise ValueError(f"printf buffer size must be a positive int, got {size_bytes!r}")


def announce_cache_entry(module, function, name, metadata_group, hash):
    """Triton's kernel_load_start_hook: tells the launcher which cache entry the kernel
    it loads next comes from (launcher/cache_repair.py)."""
    expect_load(name, metadata_group)


class OpenCLDriver(DriverBase):
    """Runs Triton kernels on the OpenCL device chosen by `get_device()`."""

    def __init__(self):
        super().__init__()
        self.utils = OpenCLUtils()
        self.launcher_cls = OpenCLLauncher
        _install_cudagraph_fallback()
        # A corrupted cached binary is rebuilt from the source in its cache entry.
        from triton import knobs  # loaded by now (Triton imports this module half way)
        knobs.runtime.kernel_load_start_hook.add(announce_cache_entry)

    @classmethod
    def is_active(cls):
        # Active whenever pyopencl imports: a missing or broken device then shows up
        # at first use as NoOpenCLDeviceError, which says what to install, rather
        # than as Triton's "0 active drivers".
        try:
            import pyopencl  # noqa: F401
        except Exception:
            return False
        return True

    def map_python_to_cpp_type(self, ty: str) -> str:
        return opencl_type_of(ty)

    def get_current_target(self):
        return GPUTarget("opencl", target_arch(get_device().arch), WARP_SIZE)

    def get_active_torch_device(self):
        import torch

        # Kernels read and write torch CPU tensors in place.
        return torch.device("cpu")

    def get_current_device(self):
        return 0

    def get_device_capability(self, device=None):
        return device_interface.get_device_capability(device)

    def set_current_device(self, device):
        device_interface.set_device(device)

    def get_current_stream(self, device=None):
        # 0 stands for the device's in-order queue; the launcher also takes a
        # pyopencl.CommandQueue here. Returning 0 keeps this call free of device setup.
        return 0

    def get_device_interface(self):
        return device_interface

    def get_benchmarker(self):
        from triton.testing import do_bench

        return do_bench

    def get_empty_cache_for_benchmark(self):
        import torch

        return torch.empty(BENCHMARK_CACHE_BYTES // 4, dtype=torch.int32, device="cpu")

    def clear_cache(self, cache):
        cache.zero_()

    def allocate_default_profile_scratch(self, size, alignment, stream):
        from launcher.scratch import zeroed_host_buffer

        return zeroed_host_buffer(size, alignment)


def _install_cudagraph_fallback():
    """Make `triton.testing.do_bench_cudagraph` work while this driver is active.

    The original needs torch.cuda streams and graphs. Launches here are synchronous
    host calls that a graph could not batch anyway, so do_bench measures the same
    thing. Other active drivers keep the original. Code that imported the name
    before the driver was first used keeps the original too.
    """
    import triton.testing as testing

    original = testing.do_bench_cudagraph
    if getattr(original, "_opencl_fallback", False):
        return

    @functools.wraps(original)
    def do_bench_cudagraph(fn, rep=20, grad_to_none=None, quantiles=None, return_mode="mean"):
        from triton.runtime import driver

        if not isinstance(driver.active, OpenCLDriver):
            return original(fn, rep=rep, grad_to_none=grad_to_none, quantiles=quantiles, return_mode=return_mode)
        return testing.do_bench(fn, rep=rep, grad_to_none=grad_to_none, quantiles=quantiles,
                                return_mode=return_mode)

    do_bench_cudagraph._opencl_fallback = True
    testing.do_bench_cudagraph = do_bench_cudagraph
