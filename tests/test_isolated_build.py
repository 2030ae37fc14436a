"""Builds in a child process (launcher/isolated_build.py, the quirk build_may_abort of
triton_spirv/target.py) and checksummed binaries (launcher/clbin.py, the probe's in
launcher/file_memo.py): a compiler that aborts leaves the user's process alive with an
error naming the kernel, and a damaged cached binary is rebuilt, never loaded."""
import base64
import glob
import json
import os
import signal
import warnings

import numpy as np
import pytest
import torch
import triton
import triton.language as tl

import launcher
from launcher import (ClbinFormatError, KernelBuildCrash, OpenCLBuildError, build_program, pack_clbin,
                      unpack_clbin)
from launcher import isolated_build
from launcher.device import device_runtime
from launcher.file_memo import sealed, unsealed
from triton_spirv.target import QUIRKS, QUIRKS_OFF_ENV, TARGET_ENV

TWICE = ("__kernel void twice(__global const float* x, __global float* out) {\n"
         "  out[get_global_id(0)] = 2.0f * x[get_global_id(0)];\n}\n")


def _on_pocl():
    device = launcher.get_device()
    return device_runtime(device.platform, device.device)[0] == "pocl"


def _run_twice(program):
    import pyopencl as cl
    dev = launcher.get_device()
    x = np.arange(64, dtype=np.float32)
    out = np.zeros_like(x)
    flags = cl.mem_flags
    x_buf = cl.Buffer(dev.context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=x)
    out_buf = cl.Buffer(dev.context, flags.WRITE_ONLY, out.nbytes)
    kernel = cl.Kernel(program, "twice")
    kernel.set_args(x_buf, out_buf)
    cl.enqueue_nd_range_kernel(dev.queue, kernel, (64,), None)
    cl.enqueue_copy(dev.queue, out, out_buf)
    np.testing.assert_array_equal(out, 2 * x)


def _use_an_aborting_child(tmp_path, monkeypatch):
    """Builds go to a build process that prints a driver-like line and aborts, on any
    device (the process dies at the first build, which closes it)."""
    script = tmp_path / "aborting_child.py"
    script.write_text("import os, sys\nsys.stdin.readline()\n"
                      "print(\"compiler.cc:42: Assertion `edges' failed.\", file=sys.stderr, flush=True)\n"
                      "os.abort()\n")
    monkeypatch.setattr(isolated_build, "CHILD_SCRIPT", str(script))
    monkeypatch.setenv(isolated_build.ENV_VAR, "1")
    monkeypatch.setattr(triton.knobs.cache, "dir", str(tmp_path / "cache"))
    isolated_build._close_server()      # the next build starts the aborting one


# ---------------------------------------------------------------------------------------
# When builds go to a child


def test_the_launcher_and_the_quirk_table_agree_on_who_may_abort():
    assert isolated_build.BUILD_MAY_ABORT_RUNTIMES == (QUIRKS["build_may_abort"].runtime,)


def test_builds_go_to_a_child_on_pocl_unless_told(monkeypatch):
    dev = launcher.get_device()
    monkeypatch.delenv(isolated_build.ENV_VAR, raising=False)
    assert isolated_build.builds_in_child(dev) == _on_pocl()
    for value, expected in (("1", True), ("0", False)):
        monkeypatch.setenv(isolated_build.ENV_VAR, value)
        assert isolated_build.builds_in_child(dev) is expected


def test_a_child_build_runs_right_and_leaves_the_working_directory_clean(monkeypatch, tmp_path):
    monkeypatch.setenv(isolated_build.ENV_VAR, "1")
    monkeypatch.chdir(tmp_path)
    program, binary = build_program(TWICE, name="twice")
    assert binary
    _run_twice(program)
    assert os.listdir(tmp_path) == []


def test_the_build_process_takes_the_loader_pyopencl_uses():
    """Not the system's, which this process may have loaded too (target.py reads Intel's
    sub-group sizes through it) and which fails to load Intel's runtime on its own."""
    import ctypes

    import pyopencl
    try:
        ctypes.CDLL("libOpenCL.so.1")
    except OSError:
        pass
    home = os.path.dirname(os.path.abspath(pyopencl.__file__))
    if not glob.glob(os.path.join(home, ".libs", "libOpenCL*")):
        pytest.skip("this pyopencl uses the system's ICD loader")
    assert isolated_build.opencl_loader().startswith(home + os.sep)


def test_a_source_the_child_compiler_rejects_names_its_line(monkeypatch):
    monkeypatch.setenv(isolated_build.ENV_VAR, "1")
    bad = TWICE.replace("2.0f * x", "2.0f * undeclared_y")
    with pytest.raises(OpenCLBuildError, match="kernel 'twice' failed") as error:
        build_program(bad, name="twice")
    assert not isinstance(error.value, KernelBuildCrash)
    assert 2 in error.value.source_lines


# ---------------------------------------------------------------------------------------
# A child that dies


def test_an_aborting_build_raises_in_the_parent(tmp_path, monkeypatch):
    _use_an_aborting_child(tmp_path, monkeypatch)
    dev = launcher.get_device()
    with pytest.raises(KernelBuildCrash) as error:
        build_program(TWICE, name="twice")
    crash = error.value
    message = str(crash)
    assert crash.returncode == -signal.SIGABRT and crash.name == "twice" and crash.device == dev.name
    for part in ("kernel 'twice'", dev.name, "SIGABRT", "Assertion `edges' failed", "TRITON_OPENCL_DEVICE",
                 crash.source_path):
        assert part in message
    with open(crash.source_path) as f:
        assert f.read().endswith(TWICE)
    # the process goes on: the same source builds once the child is a real one
    monkeypatch.setenv(isolated_build.ENV_VAR, "0")
    _run_twice(build_program(TWICE, name="twice")[0])


def test_a_triton_kernel_whose_build_aborts_raises_from_its_launch(tmp_path, monkeypatch):
    _use_an_aborting_child(tmp_path, monkeypatch)

    @triton.jit
    def plus_one(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

    x = torch.zeros(8)
    with pytest.raises(KernelBuildCrash, match="kernel 'plus_one'.*SIGABRT"):
        plus_one[(1,)](x, 8, BLOCK=8, program="source")   # Intel's default is SPIR-V


@pytest.mark.skipif("not _on_pocl()")
def test_pocls_parallel_region_abort_becomes_an_error(monkeypatch):
    """The finding's reduced kernel with its quirk turned off: PoCL aborts the child
    (ParallelRegion.cc), the launch raises, the process lives on and the quirk's form
    runs right."""
    from test_pocl_barrier_loop_exit import QUIRK, _expected, max_rows_then_cumsum
    monkeypatch.delenv(TARGET_ENV, raising=False)
    monkeypatch.delenv(isolated_build.ENV_VAR, raising=False)
    x = torch.randn(2, 16).half()
    y = torch.zeros(16)
    monkeypatch.setenv(QUIRKS_OFF_ENV, QUIRK)
    # The variable is read when a kernel compiles; Triton keeps the kernels a JIT
    # function compiled (e.g. by test_pocl_barrier_loop_exit.py) in memory, per device.
    max_rows_then_cumsum.device_caches.clear()
    with pytest.raises(KernelBuildCrash, match="(?s)max_rows_then_cumsum.*SIGABRT.*Incoming edges"):
        max_rows_then_cumsum[(1,)](x, y, 16, 16, T=2, BLOCK=16, num_warps=1, opencl_target="gpu")
    monkeypatch.delenv(QUIRKS_OFF_ENV)
    max_rows_then_cumsum.device_caches.clear()
    max_rows_then_cumsum[(1,)](x, y, 16, 16, T=2, BLOCK=16, num_warps=1, opencl_target="gpu")
    torch.testing.assert_close(y, _expected(x, 16))


def test_unknown_quirks_to_turn_off_fail(monkeypatch):
    from triton_spirv.target import resolve_target
    monkeypatch.setenv(QUIRKS_OFF_ENV, "no_such_quirk")
    with pytest.raises(ValueError, match="no_such_quirk"):
        resolve_target()


# ---------------------------------------------------------------------------------------
# Checksummed binaries


def test_a_clbin_binary_that_does_not_match_its_checksum_does_not_unpack():
    good = pack_clbin("twice", TWICE, ["__global float*"] * 2, binary=b"0123456789")
    assert unpack_clbin(good)["binary"] == b"0123456789"
    document = json.loads(good)
    document["binary"] = base64.b64encode(b"01234").decode()
    with pytest.raises(ClbinFormatError, match="checksum"):
        unpack_clbin(json.dumps(document))
    del document["binary_sha256"]
    with pytest.raises(ClbinFormatError, match="checksum"):
        unpack_clbin(json.dumps(document))


def test_sealed_bytes_cut_short_or_changed_are_refused():
    data = sealed(b"program binary" * 10)
    assert unsealed(data) == b"program binary" * 10
    assert unsealed(data[:-1]) is None and unsealed(data[:10]) is None and unsealed(b"") is None
    assert unsealed(data[:-1] + b"X") is None


@triton.jit
def _cached_scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3.0 - 1.0, mask=mask)


def _run_cached_scale():
    """A new JITFunction each time: no in-memory cache, so the kernel comes from disk."""
    kernel = triton.JITFunction(_cached_scale.fn)
    x = torch.rand(300)
    out = torch.empty_like(x)
    kernel[(3,)](x, out, 300, BLOCK=128)
    torch.testing.assert_close(out, x * 3.0 - 1.0)


def test_a_truncated_binary_in_the_cache_is_rebuilt_not_loaded(tmp_path, monkeypatch):
    monkeypatch.setattr(triton.knobs.cache, "dir", str(tmp_path / "cache"))
    _run_cached_scale()
    (path,) = glob.glob(str(tmp_path / "cache" / "*" / "_cached_scale.clbin"))
    with open(path, "rb") as f:
        document = json.loads(f.read())
    binary = base64.b64decode(document["binary"])
    document["binary"] = base64.b64encode(binary[:len(binary) // 2]).decode()   # checksum kept
    with open(path, "w") as f:
        json.dump(document, f)
    launcher.get_device().programs.clear()      # so that the cache entry is loaded again
    with pytest.warns(RuntimeWarning, match="(?s)cached_scale.*checksum.*rebuilt it"):
        _run_cached_scale()
    with open(path, "rb") as f:
        healed = unpack_clbin(f.read())          # the entry holds a whole binary again
    assert healed["binary"] and healed["device"] == launcher.get_device().identity
    launcher.get_device().programs.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _run_cached_scale()
