"""The target description both frontends share (triton_spirv/target.py): read from the
OpenCL devices we have and checked against clinfo and pyopencl's own queries; named
descriptions and TRITON_SPIRV_TARGET change the compile keys; kernels whose tiles do not
fit a target's local memory fail at compile time, naming their tiles."""
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch
import triton
import triton.language as tl

import launcher
from triton_spirv.hlo import read_hlo
from triton_spirv.hlo.compile import compilations
from triton_spirv.hlo.runtime import ModuleRunner
from triton_spirv.hlo.target import emit_target
from triton_spirv.target import (NAMED_TARGETS, TARGET_ENV, describe_device, resolve_target,
                                 target_spec)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def no_target_override(monkeypatch):
    monkeypatch.delenv(TARGET_ENV, raising=False)


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(triton.knobs.cache, "dir", str(tmp_path / "cache"))
    return tmp_path / "cache"


def open_device(spec):
    """The launcher's device matching `spec`; skipped where that runtime is absent."""
    try:
        return launcher.select_device(spec)
    except launcher.NoOpenCLDeviceError:
        pytest.skip(f"no OpenCL device matches {spec!r} (Intel's runtime: setup with WITH_INTEL_OPENCL=1)")


# ---------------------------------------------------------------------------------------
# Reading devices


def clinfo_raw(platform_name):
    """{CL_DEVICE_* name: value text} of the first device of a platform, from `clinfo --raw`."""
    out = subprocess.run(["clinfo", "--raw"], capture_output=True, text=True, check=True).stdout
    tags = {}
    for line in out.splitlines():
        if line.startswith("[") and "CL_PLATFORM_NAME" in line:   # [POCL/*]  CL_PLATFORM_NAME  ...
            tag, _, value = line.split(None, 2)
            tags[value.strip()] = tag
    tag = tags[platform_name].replace("/*]", "/0]")
    fields = {}
    for line in out.splitlines():
        if line.startswith(tag):
            parts = line[len(tag):].strip().split(None, 1)
            fields[parts[0]] = parts[1].strip() if len(parts) > 1 else ""
    return fields


@pytest.mark.parametrize("spec", ["portable computing language", "intel"])
def test_description_matches_device_queries(spec):
    import pyopencl as cl
    device = open_device(spec)
    d = device.device
    described = describe_device(device)
    assert described.name == "device" and described.device_name == d.name.strip()
    assert described.device_type == cl.device_type.to_string(d.type).split()[-1].lower()
    assert described.local_mem_bytes == d.get_info(cl.device_info.LOCAL_MEM_SIZE)
    assert described.max_work_group_size == d.get_info(cl.device_info.MAX_WORK_GROUP_SIZE)
    assert described.compute_units == d.get_info(cl.device_info.MAX_COMPUTE_UNITS)
    assert described.preferred_work_group_multiple == \
        d.get_info(cl.device_info.PREFERRED_WORK_GROUP_SIZE_MULTIPLE)
    assert described.fp16 == ("cl_khr_fp16" in d.extensions.split())
    assert described.fp64 == ("cl_khr_fp64" in d.extensions.split())
    assert described.il_versions == tuple(d.get_info(cl.device_info.IL_VERSION).split())
    assert (described.vendor, described.driver_version) == (d.vendor.strip(), d.driver_version.strip())
    if shutil.which("clinfo"):
        raw = clinfo_raw(device.platform.name.strip())
        assert raw["CL_DEVICE_TYPE"] == f"CL_DEVICE_TYPE_{described.device_type.upper()}"
        assert int(raw["CL_DEVICE_LOCAL_MEM_SIZE"]) == described.local_mem_bytes
        assert int(raw["CL_DEVICE_MAX_WORK_GROUP_SIZE"]) == described.max_work_group_size
        assert int(raw["CL_DEVICE_MAX_COMPUTE_UNITS"]) == described.compute_units
        assert int(raw["CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE"]) == \
            described.preferred_work_group_multiple
        assert tuple(raw.get("CL_DEVICE_IL_VERSION", "").split()) == described.il_versions
        if "CL_DEVICE_SUB_GROUP_SIZES_INTEL" in raw:
            assert described.sub_group_sizes == tuple(int(s) for s in raw["CL_DEVICE_SUB_GROUP_SIZES_INTEL"].split())
        # work-group collective functions: a feature of OpenCL C 3.0, always there in 2.x
        features = raw.get("CL_DEVICE_OPENCL_C_FEATURES", "")
        versions = raw.get("CL_DEVICE_OPENCL_C_ALL_VERSIONS", "")
        if "__opencl_c_work_group_collective_functions:" in features:
            assert described.work_group_collectives == "CL3.0"
        elif re.search(r"OpenCL C:0x8[0-9a-f]{5}\b", versions):
            assert described.work_group_collectives == "CL2.0"
        else:
            assert described.work_group_collectives == ""
    if d.get_info(cl.device_info.MAX_NUM_SUB_GROUPS) == 0:
        assert described.sub_group_sizes == ()
    else:
        assert described.sub_group_sizes and all(s > 0 for s in described.sub_group_sizes)


def test_device_types_and_named_descriptions():
    device = launcher.get_device()
    as_gpu = resolve_target("gpu", device)
    assert as_gpu.device_type == "gpu" and as_gpu.local_mem_bytes == describe_device(device).local_mem_bytes
    gpu64, gpu32 = resolve_target("gpu-64k"), resolve_target("gpu-32k")
    assert (gpu64.device_type, gpu64.local_mem_bytes, gpu64.max_work_group_size, gpu64.sub_group_sizes) == \
        ("gpu", 65536, 256, (32,))
    assert gpu32.local_mem_bytes == 32768 and gpu32.key() != gpu64.key()


def test_unknown_target_names_the_value_and_the_choices(monkeypatch):
    with pytest.raises(ValueError, match=r"'gpu-99k'.*cpu, gpu, accelerator.*gpu-64k, gpu-32k"):
        target_spec("gpu-99k")
    monkeypatch.setenv(TARGET_ENV, "tpu")
    with pytest.raises(ValueError, match=rf"'tpu' \(option opencl_target or {TARGET_ENV}\)"):
        target_spec()


# ---------------------------------------------------------------------------------------
# Compile keys


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3.0, mask=mask)


def test_option_gives_a_different_compiled_kernel(fresh_cache):
    x = torch.rand(3000)
    outputs, kernels = [], []
    for target in ("", "gpu-64k", "gpu-32k", "gpu"):
        out = torch.empty_like(x)
        options = {"opencl_target": target} if target else {}
        kernels.append(scale_kernel[(3,)](x, out, 3000, BLOCK=1024, **options))
        outputs.append(out)
    assert len({k.hash for k in kernels}) == 4
    assert [k.metadata.opencl_target for k in kernels] == ["device", "gpu-64k", "gpu-32k", "gpu"]
    for out in outputs:
        torch.testing.assert_close(out, x * 3.0, rtol=0, atol=0)


CHILD = """
import json, torch, triton
from triton.runtime import driver
from tests.test_target import scale_kernel
x = torch.arange(100, dtype=torch.float32); out = torch.empty_like(x)
k = scale_kernel[(1,)](x, out, 100, BLOCK=128)
print(json.dumps({"arch": driver.active.get_current_target().arch, "hash": k.hash,
                  "ok": bool(torch.equal(out, x * 3.0))}))
"""


def compile_in_child(target, cache):
    env = dict(os.environ, TRITON_CACHE_DIR=str(cache), PYTHONPATH=ROOT)
    env.pop(TARGET_ENV, None)
    if target:
        env[TARGET_ENV] = target
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_environment_variable_changes_gpu_target_and_cache_key(tmp_path):
    plain, pretended = compile_in_child("", tmp_path), compile_in_child("gpu-32k", tmp_path)
    assert plain["ok"] and pretended["ok"]
    assert pretended["arch"] == plain["arch"] + "+gpu-32k"
    assert pretended["hash"] != plain["hash"]


def test_hlo_compile_key_follows_the_target(monkeypatch):
    text = ("HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
            "  ROOT s = f32[] add(a, b)\n}\n"
            "ENTRY main {\n  p = f32[24,300] parameter(0)\n  z = f32[] constant(0)\n"
            "  ROOT r = f32[24] reduce(p, z), dimensions={1}, to_apply=add\n}\n")
    x = np.random.default_rng(0).standard_normal((24, 300)).astype(np.float32)
    results, shapes = [], []
    for target in ("cpu", "gpu"):
        monkeypatch.setenv(TARGET_ENV, target)
        assert emit_target().description.device_type == target
        before = compilations()
        results.append(ModuleRunner(read_hlo(text)).run([x])[0])
        assert compilations() == before + 1        # a new key: compiled again
        shapes.append(emit_target().row_reduction)
    assert shapes == ["per_work_item", "tree"]
    for result in results:
        np.testing.assert_allclose(result, x.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-4)


# ---------------------------------------------------------------------------------------
# Local-memory budget


@triton.jit
def two_tile_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, tl.cumsum(x * y, 0))


@pytest.mark.parametrize("target", ["gpu-64k", "gpu-32k"])
def test_gpu_target_rejects_tiles_beyond_its_local_memory(target, fresh_cache):
    from triton.runtime.errors import OutOfResources
    limit = NAMED_TARGETS[target].local_mem_bytes
    block = limit // 4                         # one float tile alone fills the budget
    x, y = torch.rand(block), torch.rand(block)
    with pytest.raises(OutOfResources) as info:
        two_tile_kernel[(1,)](x, y, torch.empty(block), BLOCK=block, opencl_target=target)
    message = str(info.value)
    assert "kernel 'two_tile_kernel'" in message and f"target '{target}'" in message
    assert f"allows {limit} bytes" in message
    # x and y are read only by the work-items that load them (owner_copies.py: private
    # arrays); the scan exchanges elements between work-items through __local tiles.
    assert f"float[{block}] = {limit} bytes from test_target.py:" in message
    assert "tl.store(out_ptr + offs, tl.cumsum(x * y, 0))" in message
    assert "x_tile" not in message
    assert not any(p.endswith((".clbin", ".cl")) for _, _, files in os.walk(fresh_cache) for p in files)
    # Half the size fits both the target and the device, and runs right.
    half = block // 8
    out = torch.empty(half)
    two_tile_kernel[(1,)](x[:half], y[:half], out, BLOCK=half, opencl_target=target)
    torch.testing.assert_close(out, torch.cumsum(x[:half] * y[:half], 0), rtol=1e-5, atol=1e-4)


def test_the_device_target_keeps_big_tiles(fresh_cache):
    """CPU devices have big local memories: what fails a GPU target runs there."""
    if describe_device(launcher.get_device()).local_mem_bytes < 4 * 65536:
        pytest.skip("the device's local memory is GPU-sized")
    block = 65536 // 4
    x, y, out = torch.rand(block), torch.rand(block), torch.empty(block)
    two_tile_kernel[(1,)](x, y, out, BLOCK=block)
    torch.testing.assert_close(out, torch.cumsum(x * y, 0), rtol=1e-4, atol=1e-2)


def test_hlo_fusion_beyond_the_target_names_its_tiles(monkeypatch):
    """A target smaller than the transpose emitter's shared tile: the HLO kernel fails at
    compile time, naming the tile and the HLO line of the instruction that made it."""
    from dataclasses import replace
    from triton.runtime.errors import OutOfResources
    from hlo_helpers import hlo_path
    tiny = replace(NAMED_TARGETS["gpu-32k"], name="gpu-1k", local_mem_bytes=1024)
    monkeypatch.setitem(NAMED_TARGETS, "gpu-1k", tiny)
    monkeypatch.setenv(TARGET_ENV, "gpu-1k")
    runner = ModuleRunner(read_hlo(open(hlo_path("seed_transpose.hlo")).read()))
    x = np.random.default_rng(1).standard_normal((20, 160, 170)).astype(np.float32)
    with pytest.raises(OutOfResources) as info:
        runner.run([x])
    message = str(info.value)
    assert "target 'gpu-1k'" in message and "allows 1024 bytes" in message
    assert "float[" in message and " bytes from " in message and ".hlo:" in message
    monkeypatch.setenv(TARGET_ENV, "gpu-32k")            # fits: runs, right
    out = ModuleRunner(read_hlo(open(hlo_path("seed_transpose.hlo")).read())).run([x])[0]
    np.testing.assert_allclose(out, np.abs(np.exp(x).transpose(2, 1, 0)), rtol=1e-6)


# ---------------------------------------------------------------------------------------
# Tutorial kernels against GPU targets, compile only


def compile_matmul_tutorial(target, block_m, block_n, block_k):
    from triton.compiler import ASTSource
    from test_tutorials import load_tutorial
    fn = load_tutorial("03-matrix-multiplication.py").matmul_kernel.fn
    signature = {name: "*fp16" for name in ("a_ptr", "b_ptr", "c_ptr")}
    signature.update({name: "i32" for name in fn.arg_names[3:12]})
    constexprs = {"BLOCK_SIZE_M": block_m, "BLOCK_SIZE_N": block_n, "BLOCK_SIZE_K": block_k,
                  "GROUP_SIZE_M": 8, "ACTIVATION": ""}
    signature.update({name: "constexpr" for name in constexprs})
    return triton.compile(ASTSource(fn, signature, constexprs), options={"opencl_target": target})


@pytest.mark.parametrize("target, blocks, fits", [
    ("gpu-64k", (32, 32, 32), True), ("gpu-32k", (32, 32, 32), True),
    ("gpu-64k", (64, 64, 32), True), ("gpu-32k", (64, 64, 32), False),
    ("gpu-64k", (128, 64, 64), True), ("gpu-32k", (128, 64, 64), False),
    ("device", (64, 64, 32), True)])
def test_matmul_tutorial_config_fits_or_names_its_tiles(target, blocks, fits, fresh_cache):
    """GPU-shaped, the long pointer tiles and the accumulator's register blocks are
    private to their work-items (work_group_sharing.py, block_ownership.py): __local
    memory holds the operand tiles and the fp16 result, 8320 bytes for 32x32x32, 33152
    for 64x64x32, 49408 for 128x64x64."""
    from triton.runtime.errors import OutOfResources
    if fits:
        assert compile_matmul_tutorial(target, *blocks).metadata.shared <= resolve_target(target).local_mem_bytes
        return
    with pytest.raises(OutOfResources) as info:
        compile_matmul_tutorial(target, *blocks)
    message = str(info.value)
    assert "kernel 'matmul_kernel'" in message and f"target '{target}'" in message
    m, n, k = blocks
    # The tile is named by the source line that fills it; its rows may be padded
    # against bank conflicts (local_padding.py), so they hold k or a few more elements.
    tile = re.search(rf"\w+ float\[{m}x(\d+)\] = (\d+) bytes from "
                     r"03-matrix-multiplication.py:\d+: a = tl.load\(a_ptrs", message)
    assert tile and k <= int(tile[1]) <= k + 4 and int(tile[2]) == m * int(tile[1]) * 4, message
    assert "a_ptrs_tile" not in message
