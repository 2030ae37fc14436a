"""Tests of the OpenCL runtime (launcher/ and triton_spirv/driver.py).

The kernels are hand-written OpenCL C packed with pack_clbin, loaded through
load_binary and launched through OpenCLLauncher exactly the way Triton's
CompiledKernel.runner calls a launcher, so these tests do not need the compiler.
"""

import functools
import os
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest
import torch

import launcher  # noqa: E402
from launcher import (GridError, KernelArgumentError, NoOpenCLDeviceError, OpenCLBuildError,  # noqa: E402
                      OpenCLLauncher, build_program, load_binary, pack_clbin, unpack_clbin)
from launcher import device as device_module  # noqa: E402

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ----------------------------------------------------------------------------
# Helpers: load a hand-written kernel, build a launcher, launch like Triton does
# ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def dev():
    return launcher.get_device()  # scripts/setup.sh installs a device (PoCL) where none is


def load(name, source, arg_types, local_size=(1, 1, 1)):
    """The KernelHandle that Triton would keep as `function`."""
    clbin = pack_clbin(name, source, arg_types, local_size=local_size)
    _module, function, n_regs, n_spills, n_max_threads = load_binary(name, clbin, 0, 0)
    assert n_regs >= 1 and n_spills == 0 and n_max_threads >= 1
    return function


def make_launcher(name, signature, constants=None):
    """OpenCLLauncher for a fake Triton source: signature maps argument names to types."""
    src = SimpleNamespace(signature=dict(signature), constants=constants or {},
                          fn=SimpleNamespace(arg_names=list(signature)))
    return OpenCLLauncher(src, SimpleNamespace(name=name))


def launch(run, function, grid, *args, stream=0, launch_metadata=None, enter_hook=None, exit_hook=None):
    """The call CompiledKernel.runner makes."""
    grid = tuple(grid) + (1,) * (3 - len(grid))
    run(grid[0], grid[1], grid[2], stream, function, (4, 1, 0), launch_metadata, enter_hook, exit_hook, *args)


ADD_SOURCE = """
__kernel void add_kernel(__global const float* x, __global const float* y,
                         __global float* out, int n) {
    // one work-group per Triton program, BLOCK = 4 elements each
    int pid = get_group_id(0);
    for (int j = 0; j < 4; ++j) {
        int i = pid * 4 + j;
        if (i < n) out[i] = x[i] + y[i];
    }
}
"""
ADD_ARG_TYPES = ["__global float*", "__global float*", "__global float*", "int"]
ADD_SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}


@functools.lru_cache(maxsize=None)
def add_kernel():
    return load("add_kernel", ADD_SOURCE, ADD_ARG_TYPES), make_launcher("add_kernel", ADD_SIGNATURE)


def run_add(x, y, out, grid=None, **kwargs):
    function, run = add_kernel()
    n = out.numel()
    launch(run, function, grid or ((n + 3) // 4,), x, y, out, n, 4, **kwargs)


# ----------------------------------------------------------------------------
# Results against torch
# ----------------------------------------------------------------------------

def test_vector_add(dev):
    x, y = torch.randn(1000), torch.randn(1000)
    out = torch.empty(1000)
    run_add(x, y, out)
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)


def test_vector_add_with_storage_offsets(dev):
    base = torch.randn(1003)
    x = base[3:]  # data_ptr() is 12 bytes into the storage
    y = torch.randn(1000)
    out_base = torch.zeros(1010)
    out = out_base[7:1007]
    run_add(x, y, out)
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)
    assert torch.all(out_base[:7] == 0)  # nothing before the view was touched


def test_repeated_launches_see_host_writes(dev):
    x, y, out = torch.zeros(64), torch.ones(64), torch.empty(64)
    for value in range(3):
        x.fill_(value)  # the cached buffer over x must show the new values
        run_add(x, y, out)
        assert torch.all(out == value + 1)


def test_work_group_size_multiplies_grid(dev):
    source = """
    __kernel void scale(__global const float* x, __global float* out, float a) {
        size_t i = get_global_id(0);
        out[i] = x[i] * a + (float)get_local_size(0);
    }
    """
    function = load("scale", source, ["__global float*", "__global float*", "float"], local_size=(16, 1, 1))
    run = make_launcher("scale", {"x": "*fp32", "out": "*fp32", "a": "fp32"})
    x, out = torch.randn(64), torch.zeros(64)
    launch(run, function, (4,), x, out, 2.5)
    torch.testing.assert_close(out, x * 2.5 + 16)


SCALARS_SOURCE = """
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void scalars(__global long* ints, __global double* floats,
                      uchar b, char i8, short i16, int i32, long i64,
                      uchar u8, uint u32, ulong u64, float h, float f, double d) {
    ints[0] = b; ints[1] = i8; ints[2] = i16; ints[3] = i32; ints[4] = i64;
    ints[5] = u8; ints[6] = u32; ints[7] = (long)u64;
    floats[0] = h; floats[1] = f; floats[2] = d;
}
"""
SCALARS_ARG_TYPES = ["__global long*", "__global double*", "uchar", "char", "short", "int", "long",
                     "uchar", "uint", "ulong", "float", "float", "double"]
SCALARS_SIGNATURE = {"ints": "*i64", "floats": "*fp64", "b": "i1", "i8": "i8", "i16": "i16",
                     "BLOCK": "constexpr", "i32": "i32", "i64": "i64", "u8": "u8", "u32": "u32",
                     "u64": "u64", "h": "fp16", "f": "fp32", "d": "fp64"}


@functools.lru_cache(maxsize=None)
def scalars_kernel():
    return (load("scalars", SCALARS_SOURCE, SCALARS_ARG_TYPES),
            make_launcher("scalars", SCALARS_SIGNATURE, constants={(5,): 128}))


def run_scalars(**overrides):
    values = dict(b=True, i8=-128, i16=32767, BLOCK=128, i32=-2**31, i64=2**63 - 1, u8=255,
                  u32=2**32 - 1, u64=2**64 - 1, h=0.5, f=1.25, d=1 / 3)
    values.update(overrides)
    function, run = scalars_kernel()
    ints, floats = torch.zeros(8, dtype=torch.int64), torch.zeros(3, dtype=torch.float64)
    launch(run, function, (1,), ints, floats, *values.values())
    return ints, floats


def test_every_scalar_type_and_constexpr_dropped(dev):
    if "cl_khr_fp64" not in dev.device.extensions:
        pytest.skip("device has no fp64")
    ints, floats = run_scalars()
    assert ints.tolist() == [1, -128, 32767, -2**31, 2**63 - 1, 255, 2**32 - 1, -1]  # u64 max as long is -1
    assert floats.tolist() == [0.5, 1.25, 1 / 3]


def test_numpy_and_bool_scalars(dev):
    if "cl_khr_fp64" not in dev.device.extensions:
        pytest.skip("device has no fp64")
    ints, floats = run_scalars(b=np.bool_(False), i32=np.int32(7), u64=np.uint64(5), f=np.float32(2.0), d=3)
    assert ints[0] == 0 and ints[3] == 7 and ints[7] == 5
    assert floats.tolist() == [0.5, 2.0, 3.0]


def test_fp16_tensors_through_vload_half(dev):
    source = """
    __kernel void half_scale(__global const half* x, __global half* out, float a, int n) {
        size_t i = get_global_id(0);
        if (i < n) vstore_half(vload_half(i, x) * a, i, out);
    }
    """
    function = load("half_scale", source, ["__global half*", "__global half*", "float", "int"], (8, 1, 1))
    run = make_launcher("half_scale", {"x": "*fp16", "out": "*fp16", "a": "fp16", "n": "i32"})
    x = torch.randn(37).half()
    out = torch.zeros(37, dtype=torch.float16)
    launch(run, function, (5,), x, out, 0.5, 37)
    torch.testing.assert_close(out, (x.float() * 0.5).half(), rtol=0, atol=0)


def test_multi_dimensional_grid(dev):
    source = """
    __kernel void grid_ids(__global int* out, int nx, int ny) {
        int x = get_group_id(0), y = get_group_id(1), z = get_group_id(2);
        out[(z * ny + y) * nx + x] = x + 100 * y + 10000 * z + 1000000 * (int)get_num_groups(1);
    }
    """
    function = load("grid_ids", source, ["__global int*", "int", "int"])
    run = make_launcher("grid_ids", {"out": "*i32", "nx": "i32", "ny": "i32"})
    out = torch.zeros(2, 3, 5, dtype=torch.int32)
    launch(run, function, (5, 3, 2), out, 5, 3)
    z, y, x = torch.meshgrid(torch.arange(2), torch.arange(3), torch.arange(5), indexing="ij")
    assert torch.equal(out, (x + 100 * y + 10000 * z + 3000000).int())


def test_tuple_arguments_are_flattened(dev):
    function, _ = add_kernel()
    run = make_launcher("add_kernel", {"ptrs": ("*fp32", "*fp32", "constexpr", "*fp32"), "n": "i32",
                                       "BLOCK": "constexpr"})
    x, y, out = torch.randn(10), torch.randn(10), torch.zeros(10)
    launch(run, function, (3,), (x, y, None, out), 10, 4)
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)


def test_empty_grid_launches_nothing(dev):
    # Triton's CUDA and HIP launchers skip a grid with a zero dimension (n == 0 inputs).
    x, y, out = torch.ones(8), torch.ones(8), torch.full((8,), 7.0)
    run_add(x, y, out, grid=(0,))
    function, run = add_kernel()
    launch(run, function, (4, 0, 1), x, y, out, 8, 4)
    assert torch.all(out == 7)


def test_empty_tensors(dev):
    empty = torch.empty(0)
    run_add(empty, empty, empty, grid=(1,))  # n == 0: the kernel touches nothing


def test_launch_hooks_and_explicit_queue(dev):
    calls = []
    x, y, out = torch.randn(8), torch.randn(8), torch.zeros(8)
    metadata = {"name": "add_kernel"}
    run_add(x, y, out, stream=dev.queue, launch_metadata=metadata,
            enter_hook=lambda m: calls.append(("enter", m)), exit_hook=lambda m: calls.append(("exit", m)))
    assert calls == [("enter", metadata), ("exit", metadata)]
    torch.testing.assert_close(out, x + y)


def test_triton_hook_chains_are_called_when_they_hold_hooks(dev):
    """Triton passes its hook chains (knobs.runtime.launch_enter_hook / exit) to every
    launch; an empty one is not called, and one that gains a hook later is."""
    from triton.knobs import HookChain

    calls = []

    class RecordingChain(HookChain):
        def __call__(self, *args):
            calls.append(("chain", self.reversed))
            super().__call__(*args)

    enter, exit_ = RecordingChain(), RecordingChain(reversed=True)
    x, y, out = torch.randn(8), torch.randn(8), torch.zeros(8)
    metadata = {"name": "add_kernel"}
    run_add(x, y, out, launch_metadata=metadata, enter_hook=enter, exit_hook=exit_)
    assert calls == []
    torch.testing.assert_close(out, x + y)
    enter.add(lambda m: calls.append(("enter", m)))
    exit_.add(lambda m: calls.append(("exit", m)))
    out.zero_()
    run_add(x, y, out, launch_metadata=metadata, enter_hook=enter, exit_hook=exit_)
    assert calls == [("chain", False), ("enter", metadata), ("chain", True), ("exit", metadata)]
    torch.testing.assert_close(out, x + y)


def test_copy_mode(dev, monkeypatch):
    """Devices without zero-copy host buffers copy arguments in and out."""
    monkeypatch.setenv(device_module.FORCE_COPY_ENV_VAR, "1")
    copying = launcher.select_device(os.environ.get(launcher.ENV_VAR))
    assert not copying.zero_copy
    monkeypatch.setattr(device_module, "_selected", copying)
    function = load("add_kernel", ADD_SOURCE, ADD_ARG_TYPES)
    run = make_launcher("add_kernel", ADD_SIGNATURE)
    x, y, out = torch.randn(103)[3:], torch.randn(100), torch.zeros(100)
    launch(run, function, (25,), x, y, out, 100, 4)
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)
    with pytest.raises(KernelArgumentError, match="overlap"):
        launch(run, function, (25,), x, x, x[1:], 99, 4)


# ----------------------------------------------------------------------------
# Errors
# ----------------------------------------------------------------------------

def test_meta_tensor_is_refused(dev):
    with pytest.raises(KernelArgumentError, match=r"'x_ptr'.*'add_kernel' is on device meta"):
        run_add(torch.empty(4, device="meta"), torch.ones(4), torch.ones(4))


def test_cuda_tensor_is_refused(dev):
    fake_cuda = SimpleNamespace(device=torch.device("cuda", 0), data_ptr=lambda: 4096, dtype=torch.float32)
    message = r"argument 'y_ptr' \(position 1, \*fp32\) of kernel 'add_kernel' is on device cuda:0; " \
              r"OpenCL kernels take CPU tensors"
    with pytest.raises(KernelArgumentError, match=message):
        run_add(torch.ones(4), fake_cuda, torch.ones(4))


@pytest.mark.parametrize("args, match", [
    ((1.0, torch.ones(4), torch.ones(4), 4, 4), r"'x_ptr'.*must be a tensor.*float"),
    ((torch.ones(4), torch.ones(4), torch.ones(4), torch.tensor(4), 4), r"'n'.*must be an integer.*Tensor"),
    ((torch.ones(4), torch.ones(4), torch.ones(4), 4.0, 4), r"'n'.*must be an integer.*float"),
    ((torch.ones(4), torch.ones(4), torch.ones(4), 2**31, 4), r"'n'.*out of range for i32"),
    ((torch.ones(4), torch.ones(4), torch.ones(4)), r"takes 5 arguments.*got 3"),
])
def test_wrong_arguments(dev, args, match):
    function, run = add_kernel()
    with pytest.raises(KernelArgumentError, match=match):
        launch(run, function, (1,), *args)


@pytest.mark.parametrize("override, match", [
    (dict(u8=-1), r"'u8'.*out of range for u8 \[0, 255\]"),
    (dict(i8=128), r"'i8'.*out of range for i8"),
    (dict(u64=2**64), r"'u64'.*out of range"),
    (dict(f="1.0"), r"'f'.*must be a number"),
])
def test_out_of_range_and_wrong_scalars(dev, override, match):
    with pytest.raises(KernelArgumentError, match=match):
        run_scalars(**override)


@pytest.mark.parametrize("grid, match", [
    ((-1, 1, 1), "negative"),
    ((2.0, 1, 1), "must be integers"),
    ((None, 1, 1), "must be integers"),
    ((1, 2**31, 1), "beyond the limit"),
])
def test_bad_grids(dev, grid, match):
    with pytest.raises(GridError, match=match):
        run_add(torch.ones(4), torch.ones(4), torch.ones(4), grid=grid)


def test_numpy_grid_is_accepted(dev):
    x, y, out = torch.randn(8), torch.randn(8), torch.zeros(8)
    run_add(x, y, out, grid=(np.int64(2), 1, 1))
    torch.testing.assert_close(out, x + y)


def test_signature_must_match_kernel_parameters(dev):
    function, _ = add_kernel()
    too_few = make_launcher("add_kernel", {"x_ptr": "*fp32", "n": "i32"})
    with pytest.raises(KernelArgumentError, match="4 OpenCL parameters but its Triton signature has 2"):
        launch(too_few, function, (1,), torch.ones(4), 4)
    wrong_kind = make_launcher("add_kernel", {"x": "*fp32", "y": "*fp32", "out": "i32", "n": "i32"})
    with pytest.raises(KernelArgumentError, match="parameter 2 .* pointer parameter"):
        launch(wrong_kind, function, (1,), torch.ones(4), torch.ones(4), 1, 4)
    wrong_size = make_launcher("add_kernel", {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i64"})
    with pytest.raises(KernelArgumentError, match="4-byte parameter, 8-byte value"):
        launch(wrong_size, function, (1,), torch.ones(4), torch.ones(4), torch.ones(4), 4)


def test_unsupported_signature_type():
    # Host tensor descriptors are decomposed (tests/test_runtime.py); TMA descriptors are not.
    with pytest.raises(KernelArgumentError, match="nvTmaDesc"):
        make_launcher("k", {"desc": "nvTmaDesc"})


def test_work_group_too_large_is_out_of_resources(dev):
    from triton.runtime.errors import OutOfResources

    too_many = int(dev.device.max_work_group_size) * 2
    with pytest.raises(OutOfResources):
        load("add_kernel", ADD_SOURCE, ADD_ARG_TYPES, local_size=(too_many, 1, 1))


BROKEN_SOURCE = """__kernel void broken(__global float* x) {
    int i = get_global_id(0);
    x[i] = undefined_thing + 1.0f;
}
"""


def test_build_failure_shows_log_and_line(dev):
    with pytest.raises(OpenCLBuildError) as info:
        build_program(BROKEN_SOURCE, dev, name="broken")
    message = str(info.value)
    assert "undefined_thing" in message and "kernel 'broken'" in message
    assert info.value.source_lines == {3: "    x[i] = undefined_thing + 1.0f;"}
    assert "    3 |     x[i] = undefined_thing + 1.0f;" in message
    assert info.value.log


def test_build_failure_at_load(dev):
    with pytest.raises(OpenCLBuildError, match="undefined_thing"):
        load("broken", BROKEN_SOURCE, ["__global float*"])


def test_blamed_lines_in_other_log_formats():
    source = "line one\nline two\nline three\n"
    log = "<source>:2:5: error: nope\n<kernel>:3:1: warning: meh\n/tmp/x.cl:2:1: error: again\n"
    assert launcher.blamed_source_lines(log, source) == {2: "line two", 3: "line three"}


def test_no_device_for_a_bad_selection(dev, monkeypatch):
    monkeypatch.setattr(device_module, "_selected", None)  # restored after the test
    monkeypatch.setenv(launcher.ENV_VAR, "no-such-opencl-device")
    with pytest.raises(NoOpenCLDeviceError) as info:
        launcher.get_device()
    message = str(info.value)
    assert "'no-such-opencl-device' matches none" in message
    assert "apt-get install pocl-opencl-icd ocl-icd-libopencl1" in message
    assert dev.device.name.strip() in message  # lists what was found
    # A loader restricted to some drivers is named (it may hide the device asked for).
    monkeypatch.setenv("OCL_ICD_VENDORS", "/etc/OpenCL/vendors/some-driver.icd")
    with pytest.raises(NoOpenCLDeviceError, match="OCL_ICD_VENDORS='/etc/OpenCL/vendors/some-driver.icd' limits"):
        launcher.get_device()
    monkeypatch.setenv(launcher.ENV_VAR, "7:7")
    with pytest.raises(NoOpenCLDeviceError, match="'7:7' matches none"):
        launcher.get_device()


def test_selection_by_index_and_name(dev):
    by_index = launcher.select_device(f"{dev.platform_index}:{dev.device_index}")
    assert by_index.device == dev.device
    by_name = launcher.select_device(dev.device.name.strip()[:6].upper())
    assert by_name.name == dev.name


def test_clock_rate_in_khz_and_nominal_where_the_device_reports_none():
    from launcher.device import clock_khz
    assert clock_khz(2450) == 2_450_000
    assert clock_khz(0) == 2_000_000          # Intel's CPU runtime reports 0 MHz


def test_name_selection_prefers_exact_and_leading_matches():
    """With PoCL and Intel's runtime on one CPU, "AMD EPYC" names Intel's device exactly and
    sits inside PoCL's device name: the exact name wins whatever the listing order."""
    from types import SimpleNamespace as NS
    from launcher.device import _best_matches_first
    pocl = (0, 0, NS(name="Portable Computing Language", vendor="The pocl project"),
            NS(name="pthread-skylake-avx512-AMD EPYC", version="OpenCL 3.0 PoCL HSTR: pthread"))
    intel = (1, 0, NS(name="Intel(R) OpenCL", vendor="Intel(R) Corporation"), NS(name="AMD EPYC"))
    assert _best_matches_first("AMD EPYC", [pocl, intel]) == [intel, pocl]
    assert _best_matches_first("amd ep", [pocl, intel]) == [intel, pocl]
    assert _best_matches_first("pthread", [pocl, intel]) == [pocl]
    assert _best_matches_first("epyc", [pocl, intel]) == [pocl, intel]     # listing order
    assert _best_matches_first("1:0", [pocl, intel]) == [intel]
    assert _best_matches_first("nvidia", [pocl, intel]) == []
    # Implementation names live in vendor and version strings, after every name match.
    assert _best_matches_first("pocl", [pocl, intel]) == [pocl]
    assert _best_matches_first("intel", [pocl, intel]) == [intel]


def test_no_device_in_a_fresh_process(dev):
    code = ("import launcher\n"
            "try:\n    launcher.get_device()\n"
            "except launcher.NoOpenCLDeviceError as e:\n    print('NoOpenCLDeviceError', e)\n")
    env = dict(os.environ, TRITON_OPENCL_DEVICE="9:9", PYTHONPATH=REPO_ROOT)
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert "NoOpenCLDeviceError" in result.stdout and "pocl-opencl-icd" in result.stdout, result.stderr


# ----------------------------------------------------------------------------
# The artefact and program cache
# ----------------------------------------------------------------------------

def test_clbin_round_trip(dev):
    packed = pack_clbin("k", "src", ["int"], local_size=[4, 2], local_mem_bytes=64, binary=b"\x00\x01",
                        device=dev, build_options=["-cl-fast-relaxed-math"])
    doc = unpack_clbin(packed)
    assert doc["name"] == "k" and doc["binary"] == b"\x00\x01" and doc["local_size"] == (4, 2, 1)
    assert doc["device"] == dev.identity and doc["local_mem_bytes"] == 64
    assert doc["build_options"] == ("-cl-fast-relaxed-math",)
    with pytest.raises(launcher.ClbinFormatError):
        unpack_clbin(b'{"format": "something-else"}')


def test_binary_is_used_for_the_same_device(dev):
    """With a binary for this device, the source is not compiled (a warm start)."""
    _program, binary = build_program(ADD_SOURCE, dev)
    assert binary
    never_compiled = ADD_SOURCE + "\n#error the binary should have been used\n"
    clbin = pack_clbin("add_kernel", never_compiled, ADD_ARG_TYPES, binary=binary, device=dev)
    function = load_binary("add_kernel", clbin, 0, 0)[1]
    x, y, out = torch.randn(8), torch.randn(8), torch.zeros(8)
    launch(make_launcher("add_kernel", ADD_SIGNATURE), function, (2,), x, y, out, 8, 4)
    torch.testing.assert_close(out, x + y)
    # A binary for another device, or a corrupt one, falls back to the source.
    for other_binary, identity in ((binary, "another device"), (b"garbage", dev.identity)):
        clbin = pack_clbin("add_kernel", ADD_SOURCE + f"// {identity}\n", ADD_ARG_TYPES, binary=other_binary,
                           device=identity)
        assert load_binary("add_kernel", clbin, 0, 0)[1].kernel is not None


def test_programs_are_cached(dev):
    first = load("add_kernel", ADD_SOURCE, ADD_ARG_TYPES)
    second = load("add_kernel", ADD_SOURCE, ADD_ARG_TYPES)
    assert first.program is second.program and first.kernel is not second.kernel


def test_buffer_cache_is_a_small_lru(dev):
    cache = launcher.HostBufferCache(dev, capacity=2)
    data = [torch.zeros(16) for _ in range(3)]
    first = cache.aliasing_buffer(data[0].data_ptr(), 64)
    cache.aliasing_buffer(data[1].data_ptr(), 64)
    assert cache.aliasing_buffer(data[0].data_ptr(), 64) is first  # a hit, now most recent
    cache.aliasing_buffer(data[2].data_ptr(), 64)  # evicts data[1]
    assert len(cache) == 2 and (data[1].data_ptr(), 64) not in cache.by_range


def spy_on_buffers(run):
    """The cl.Buffers each launch of `run` passes, in parameter order."""
    passed = []
    set_args = run._set_args

    def recording_set_args(kernel, buffer_args, scalar_args):
        passed.append(buffer_args[1::2])
        set_args(kernel, buffer_args, scalar_args)

    run._set_args = recording_set_args
    return passed


class HostArray:
    """A pointer argument that is not a torch tensor: data_ptr() and nbytes only."""

    def __init__(self, array):
        self.array = array
        self.nbytes = array.nbytes

    def data_ptr(self):
        return self.array.ctypes.data


@pytest.mark.parametrize("first,second", [(256, 16), (16, 256)])
@pytest.mark.parametrize("kind", ["tensor", "other"])
def test_a_new_argument_at_a_freed_address_gets_a_buffer_of_its_size(dev, first, second, kind):
    """A tensor freed and another of a different size at the same address: the cached
    buffer over the old one must not be passed for the new one."""
    if not dev.zero_copy:
        pytest.skip("buffers alias host memory on zero-copy devices only")
    memory = np.zeros(max(first, second), dtype=np.float32)
    wrap = torch.from_numpy if kind == "tensor" else HostArray
    # A kernel of its own: the shared one may hold the arguments of an earlier test
    # over this very memory, and an unchanged launch sets no arguments to spy on.
    function = load("add_kernel", ADD_SOURCE, ADD_ARG_TYPES)
    run = make_launcher("add_kernel", ADD_SIGNATURE)
    passed = spy_on_buffers(run)
    old = wrap(memory[:first])
    launch(run, function, ((first + 3) // 4,), old, old, old, first, 4)
    address = old.data_ptr()
    del old
    memory[:] = 1.0
    new = wrap(memory[:second])
    assert new.data_ptr() == address
    launch(run, function, ((second + 3) // 4,), new, new, new, second, 4)
    old_buffers, new_buffers = passed
    assert [b.size for b in old_buffers] == [first * 4] * 3
    assert [b.size for b in new_buffers] == [second * 4] * 3
    assert new_buffers[0] is not old_buffers[0]
    assert np.all(memory[:second] == 2.0) and np.all(memory[second:] == 1.0)


def test_unchanged_arguments_are_not_set_again(dev, monkeypatch):
    """A launch with the arguments of the kernel's last launch skips clSetKernelArg; any
    change sets them all, and every launch computes with its own arguments. (The Python
    path's memo: the compiled launcher sets every argument, at a few ns each.)"""
    monkeypatch.setenv("TRITON_SPIRV_LAUNCHER", "python")
    function = load("add_kernel", ADD_SOURCE, ADD_ARG_TYPES)  # a kernel of its own
    run = make_launcher("add_kernel", ADD_SIGNATURE)
    passed = spy_on_buffers(run)
    a = (torch.randn(40), torch.randn(40), torch.zeros(40))
    b = (torch.randn(40), torch.randn(40), torch.zeros(40))
    cases = [(*a, 40, 1), (*a, 40, 1), (*b, 40, 2), (*a, 40, 3), (*a, 20, 4)]
    for launches, (x, y, out, n, expected_sets) in enumerate(cases, 1):
        out.zero_()
        launch(run, function, (10,), x, y, out, n, 4)
        torch.testing.assert_close(out[:n], x[:n] + y[:n], rtol=0, atol=0)
        assert torch.all(out[n:] == 0)
        # Copying launches pass staging buffers, set every time.
        assert len(passed) == (expected_sets if dev.zero_copy else launches)


RECIPROCAL_SOURCE = "__kernel void reciprocal(__global float* out, float x) { out[0] = 1.0f / x; }"


def test_float_scalars_are_set_even_when_equal(dev):
    """-0.0 == 0.0 in Python, but 1 / x tells them apart."""
    function = load("reciprocal", RECIPROCAL_SOURCE, ["__global float*", "float"])
    run = make_launcher("reciprocal", {"out_ptr": "*fp32", "x": "fp32"})
    out = torch.zeros(1)
    for x in (0.0, -0.0, 0.0):
        launch(run, function, (1,), out, x)
        assert out.item() == (1 / torch.tensor(x)).item()


def test_buffers_evicted_during_a_launch_stay_valid(dev, monkeypatch):
    """More pointer arguments than the cache holds: each launch still gets its own buffers."""
    monkeypatch.setattr(dev.buffers, "_capacity", 1)
    tensors = [(torch.randn(37), torch.randn(37), torch.zeros(37)) for _ in range(3)]
    for _ in range(2):
        for x, y, out in tensors:
            out.zero_()
            run_add(x, y, out)
            torch.testing.assert_close(out, x + y, rtol=0, atol=0)


def test_plain_launches_take_the_short_path_but_still_record(dev, tmp_path):
    from launcher.replay import list_recordings, recording

    function = add_kernel()[0]
    run = make_launcher("add_kernel", ADD_SIGNATURE)
    x, y, out = torch.randn(8), torch.randn(8), torch.zeros(8)
    launch(run, function, (2,), x, y, out, 8, 4)
    assert run._plain == dev.zero_copy
    with recording(str(tmp_path)):  # switched on after the launcher chose its path
        launch(run, function, (2,), x, y, out, 8, 4)
    assert len(list_recordings(str(tmp_path))) == 1
    tuples = make_launcher("add_kernel", {"ptrs": ("*fp32", "*fp32", "*fp32"), "n": "i32", "BLOCK": "constexpr"})
    launch(tuples, function, (2,), (x, y, out), 8, 4)
    assert not tuples._plain
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)


# ----------------------------------------------------------------------------
# The Triton driver
# ----------------------------------------------------------------------------

def test_driver_module_has_one_concrete_driver():
    from triton.backends import _find_concrete_subclasses
    from triton.backends.driver import DriverBase

    import triton_spirv.driver as driver_module

    assert _find_concrete_subclasses(driver_module, DriverBase) is driver_module.OpenCLDriver


def test_driver_basics(dev):
    from triton_spirv.driver import OpenCLDriver

    driver = OpenCLDriver()
    assert OpenCLDriver.is_active()
    target = driver.get_current_target()
    # the device's arch, suffixed by the target it pretends ($TRITON_SPIRV_TARGET)
    pretended = os.environ.get("TRITON_SPIRV_TARGET", "").strip() or "device"
    assert target.arch == (dev.arch if pretended == "device" else f"{dev.arch}+{pretended}")
    assert target.backend == "opencl" and target.warp_size == 1
    assert driver.get_active_torch_device() == torch.device("cpu")
    assert driver.get_current_device() == 0 and driver.get_current_stream(0) == 0
    assert driver.map_python_to_cpp_type("*fp32") == "__global float*"
    assert driver.map_python_to_cpp_type("*fp16") == "__global half*"
    assert driver.map_python_to_cpp_type("i64") == "long" and driver.map_python_to_cpp_type("fp16") == "float"
    props = driver.utils.get_device_properties(0)
    for key in ("max_shared_mem", "multiprocessor_count", "max_num_regs", "warpSize", "sm_clock_rate",
                "mem_clock_rate", "mem_bus_width", "max_work_group_size", "name"):
        assert key in props
    assert props["max_shared_mem"] == dev.device.local_mem_size
    assert driver.launcher_cls is OpenCLLauncher and driver.utils.load_binary is load_binary


def test_do_bench_with_the_driver_active(dev):
    import triton
    import triton.testing
    from triton.runtime import driver as triton_driver

    from triton_spirv.driver import OpenCLDriver

    previous = triton_driver._active
    triton_driver.set_active(OpenCLDriver())
    try:
        x, y, out = torch.randn(256), torch.randn(256), torch.zeros(256)
        ms = triton.testing.do_bench(lambda: run_add(x, y, out), warmup=2, rep=10)
        assert isinstance(ms, float) and ms > 0
        assert triton_driver.active.get_benchmarker() is triton.testing.do_bench
    finally:
        triton_driver.set_active(previous)
    torch.testing.assert_close(out, x + y)


def test_device_interface_events(dev):
    from triton_spirv.driver import OpenCLDriver

    di = OpenCLDriver().get_device_interface()
    start, end = di.Event(enable_timing=True), di.Event(enable_timing=True)
    start.record()
    run_add(torch.ones(4), torch.ones(4), torch.zeros(4))
    end.record()
    di.synchronize()
    assert start.elapsed_time(end) > 0
    with di.stream(di.Stream()):
        assert di.current_device() == 0 and di.device_count() == 1
    assert di.get_device_properties(0).multi_processor_count >= 1
