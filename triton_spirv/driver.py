"""Triton driver for OpenCL devices.

Triton finds it through the `triton.backends` entry point, which imports this
module and takes its one concrete DriverBase subclass; the runtime itself (device,
programs, buffers, launches) lives in the `launcher` package.
"""

from triton.backends.compiler import GPUTarget
from triton.backends.driver import DriverBase

# Submodules by name: this works even where `launcher` resolves as a namespace
# package (an editable install made before launcher/__init__.py existed).
from launcher import device_interface
from launcher.device import get_device
from launcher.launch import OpenCLLauncher, load_binary, unload_module
from launcher.types import opencl_type_of

# OpenCL has no portable SIMD width (CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE is
# per kernel, known only after a build), and the emitted code does not use
# sub-groups. With a warp of 1, num_warps is just a number of work-items, and
# Triton's check num_warps * warp_size <= n_max_threads holds for any sane config.
WARP_SIZE = 1

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
        return get_device().properties()


class OpenCLDriver(DriverBase):
    """Runs Triton kernels on the OpenCL device chosen by `get_device()`."""

    def __init__(self):
        super().__init__()
        self.utils = OpenCLUtils()
        self.launcher_cls = OpenCLLauncher

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
        return GPUTarget("opencl", get_device().arch, WARP_SIZE)

    def get_active_torch_device(self):
        import torch

        # Kernels read and write torch CPU tensors in place.
        return torch.device("cpu")

    def get_current_device(self):
        return 0

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
