"""OpenCL runtime for Triton kernels compiled to OpenCL C.

Device choice and caching (device.py), program builds (program.py), the clbin
artefact (clbin.py), host-memory buffers (buffers.py), and loading and launching
kernels the way Triton's CompiledKernel expects (launch.py) or from a plain
description (kernels.py, the HLO runtime's way in). It imports no frontend and not
Triton.
"""

from .buffers import HostBufferCache, host_memory_range
from .clbin import CLBIN_FORMAT, pack_clbin, unpack_clbin
from .device import ENV_VAR, OpenCLDevice, device_arch, device_identity, get_device, reset_device_cache, select_device
from .errors import (ClbinFormatError, GridError, KernelArgumentError, KernelBuildCrash, NoOpenCLDeviceError,
                     OpenCLBuildError, OpenCLRuntimeError)
from .kernels import KernelDescription, LoadedKernel
from .launch import KernelHandle, OpenCLLauncher, load_binary, unload_module
from .program import blamed_source_lines, build_program, get_program, source_hash
from .types import SCALAR_KINDS, opencl_type_of

__all__ = [
    "CLBIN_FORMAT", "ENV_VAR", "ClbinFormatError", "GridError", "HostBufferCache", "KernelArgumentError",
    "KernelBuildCrash", "KernelDescription", "KernelHandle", "LoadedKernel", "NoOpenCLDeviceError", "OpenCLBuildError",
    "OpenCLDevice", "OpenCLLauncher",
    "OpenCLRuntimeError", "SCALAR_KINDS", "blamed_source_lines", "build_program", "device_arch",
    "device_identity", "get_device", "get_program", "host_memory_range", "load_binary", "opencl_type_of",
    "pack_clbin", "reset_device_cache", "select_device", "source_hash", "unload_module", "unpack_clbin",
]
