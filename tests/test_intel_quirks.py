"""Quirks of Intel's CPU OpenCL runtime (triton_spirv/target.py, _INTEL_QUIRKS): each
one's reduced reproducer, in plain OpenCL C on every platform present (the plain form
wrong where the quirk applies, right elsewhere; the quirk's form right everywhere), and
the compiled kernel it was found in, against torch on the device in use."""
import os
import subprocess
import sys

import numpy as np
import pyopencl as cl
import pytest
import torch
import triton
import triton.language as tl

import launcher
from launcher.device import device_runtime
from triton_spirv.target import QUIRKS, TARGET_ENV, resolve_target

WORK_ITEMS = 64


def _platforms():
    """Every OpenCL platform present with a device, named by its runtime."""
    try:
        platforms = [p for p in cl.get_platforms() if p.get_devices()]
    except cl.Error:   # no OpenCL driver installed
        platforms = []
    return [pytest.param(p, id=device_runtime(p, p.get_devices()[0])[0]) for p in platforms]


def _has_quirk(platform, name: str) -> bool:
    return QUIRKS[name].applies(*device_runtime(platform, platform.get_devices()[0]))


def _skip_where_not_reproduced(platform, name: str, what: str = "reduced kernel") -> None:
    """Intel's CPU runtime compiles for the host's instruction set, and its optimizer's
    faults show on some hosts only: the same release computes these reduced kernels
    right on an AMD EPYC host without AVX-512 (it crashed on or miscompiled them on the
    hosts where they were found). Where a quirk's reduced form comes out right, the test
    cannot tell a fixed release from such a host: it says so instead of passing. The
    quirk stays on there (its workaround is correct on every host)."""
    device = platform.get_devices()[0]
    pytest.skip(f"quirk {name}: {platform.name} on {device.name.strip()} computes the "
                f"{what} right; its fault depends on the host CPU")


def _run_one_group(platform, source: str, values: np.ndarray) -> np.ndarray:
    """Runs kernel `k(values, out)` as one work-group of WORK_ITEMS; returns `out`."""
    device = platform.get_devices()[0]
    context = cl.Context([device])
    queue = cl.CommandQueue(context)
    program = cl.Program(context, source).build()
    flags = cl.mem_flags
    inputs = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=values)
    out = np.full(WORK_ITEMS, 7, values.dtype)
    outputs = cl.Buffer(context, flags.READ_WRITE | flags.COPY_HOST_PTR, hostbuf=out)
    program.k(queue, (WORK_ITEMS,), (WORK_ITEMS,), inputs, outputs)
    cl.enqueue_copy(queue, out, outputs)
    return out


# ---------------------------------------------------------------------------------------
# fneg_across_barrier: a negation a work-item keeps in private memory across a barrier
# (Intel 2026.22.10: after the barrier every work-item reads the value of one of the
# last 16; a bf16 load negated before a cumsum stored -0.0).

NEGATION_ACROSS_BARRIER = """
__attribute__((reqd_work_group_size(64, 1, 1)))
__kernel void k(__global const float* x, __global float* out) {
  float kept[1];
  long lid = get_local_id(0);
  if (lid < 16) {
    kept[0] = NEGATION;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid < 16) out[lid] = kept[0];
}
"""
PLAIN_NEGATION = "-x[lid]"
FMA_NEGATION = "fma(x[lid], -1.0f, -0.0f)"   # memref_stage/barrier_negations.py


def _negated_across_barrier(platform, negation: str):
    values = np.arange(1, WORK_ITEMS + 1, dtype=np.float32)
    values[:2] = (0.0, -0.0)
    got = _run_one_group(platform, NEGATION_ACROSS_BARRIER.replace("NEGATION", negation), values)
    return got[:16], -values[:16]


@pytest.mark.parametrize("platform", _platforms())
def test_negation_across_barrier(platform):
    """The quirk's form (fma) is right on every platform, the signs of zeros included."""
    got, expected = _negated_across_barrier(platform, FMA_NEGATION)
    np.testing.assert_array_equal(got, expected)
    assert list(np.signbit(got[:2])) == [True, False]


@pytest.mark.parametrize("platform", _platforms())
def test_plain_negation_across_barrier(platform):
    """The plain form: wrong where the quirk applies (a release that computes it right
    gets `fixed_in`), right elsewhere."""
    got, expected = _negated_across_barrier(platform, PLAIN_NEGATION)
    if _has_quirk(platform, "fneg_across_barrier"):
        assert not np.array_equal(got, expected)
    else:
        np.testing.assert_array_equal(got, expected)


@triton.jit
def negated_bf16_beside_a_cumsum(x_ptr, neg_ptr, sum_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    offsets = rm[:, None] * N + rn[None, :]
    y = tl.exp(tl.load(x_ptr + offsets, mask=mask, other=1.0).to(tl.float32))
    negated = -y
    tl.store(sum_ptr + offsets, tl.cumsum(y, axis=0), mask=mask)
    tl.store(neg_ptr + offsets, negated, mask=mask)


@pytest.mark.parametrize("M, N, BM, BN, num_warps", [(1, 1, 8, 2, 8), (5, 3, 8, 4, 2), (20, 7, 16, 8, 4)])
def test_negated_bf16_beside_a_cumsum(M, N, BM, BN, num_warps, monkeypatch):
    """The finding (tests/fuzz/findings/gpu_bf16_load_with_scan_reads_zero.py), GPU shape."""
    monkeypatch.delenv(TARGET_ENV, raising=False)
    torch.manual_seed(0)
    x = torch.randn(M, N).to(torch.bfloat16)
    neg, sums = torch.full((M, N), 7.0), torch.full((M, N), 7.0)
    compiled = negated_bf16_beside_a_cumsum[(triton.cdiv(M, BM),)](
        x, neg, sums, M, N, BM=BM, BN=BN, num_warps=num_warps, opencl_target="gpu")
    y = x.float().exp()
    torch.testing.assert_close(neg, -y)
    blocks = y.split(BM)
    torch.testing.assert_close(sums, torch.cat([b.cumsum(0) for b in blocks]))
    quirky = resolve_target("gpu").has_quirk("fneg_across_barrier")
    assert ("fma(" in compiled.asm["cl"]) == quirky


def test_negations_become_fma_only_in_kernels_with_barriers():
    """The memref stage with the quirk: the GPU shape's negation (a kernel with barriers)
    becomes fma, the CPU shape's (one work-item, no barrier) stays."""
    from triton_spirv.stages import linalg_to_memref_text, memref_to_opencl, ttir_to_linalg_text
    x = torch.zeros(4, 4, dtype=torch.bfloat16)
    out = torch.zeros(4, 4)
    ttir = negated_bf16_beside_a_cumsum[(1,)](x, out, out, 4, 4, BM=8, BN=4, num_warps=2).asm["ttir"]
    linalg = ttir_to_linalg_text(ttir, versioning_allowed=False, lane_reductions=False)
    quirks = ("fneg_across_barrier",)
    gpu = _code(memref_to_opencl(linalg_to_memref_text(linalg, work_items=64, quirks=quirks)).source)
    gpu_plain = _code(memref_to_opencl(linalg_to_memref_text(linalg, work_items=64)).source)
    cpu = _code(memref_to_opencl(linalg_to_memref_text(linalg, quirks=quirks)).source)
    assert "barrier(" in gpu and "fma(" in gpu and "= -" not in gpu
    assert "fma(" not in gpu_plain and "= -" in gpu_plain
    assert "barrier(" not in cpu and "fma(" not in cpu


def _code(source: str) -> str:
    """OpenCL C without its comments (which quote the Python source)."""
    return "\n".join(line.split("//")[0] for line in source.splitlines())


# ---------------------------------------------------------------------------------------
# i8_private_arrays: programs built from SPIR-V that store values read from a private
# (Function-storage) i8 array (Intel 2026.22.10: the stores never land).


@triton.jit
def constant_int8_tile(o_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], tl.full((BM, BN), 1, tl.int1).to(tl.int8), mask=mask)


@pytest.mark.parametrize("M, N, num_warps", [(2, 3, 1), (40, 20, 1), (5, 7, 4)])
@pytest.mark.parametrize("program", ["spirv", "source"])
def test_constant_int8_tile(M, N, num_warps, program, monkeypatch):
    """The finding (tests/fuzz/findings/intel_gpu_spirv_int8_constant_store_lost.py), GPU
    shape, as SPIR-V where the device takes it and as OpenCL C."""
    monkeypatch.delenv(TARGET_ENV, raising=False)
    monkeypatch.delenv("TRITON_SPIRV_PROGRAM", raising=False)
    if program == "spirv" and not _il_version(launcher.get_device().device):
        pytest.skip("the device takes no SPIR-V")
    out = torch.full((M, N), 7, dtype=torch.int8)
    constant_int8_tile[(triton.cdiv(M, 32),)](out, M, N, BM=32, BN=32, num_warps=num_warps,
                                               opencl_target="gpu", program=program)
    torch.testing.assert_close(out, torch.ones(M, N, dtype=torch.int8))


# ---------------------------------------------------------------------------------------
# private_zero_tiles_in_gpu_spirv: a zero tile kept in a private array, stored under a
# mask, GPU shape (Intel 2026.22.10, programs built from SPIR-V: the stores never land
# for int8/16/32 and float32 tiles of 32x32 to 64x64 with num_warps 1-4; found by the
# fuzzer's slice, seed 21, once its dot programs got matmul-sized blocks).


@triton.jit
def constant_tile(o_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, VALUE: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], tl.full((BM, BN), VALUE, o_ptr.dtype.element_ty),
             mask=mask)


@pytest.mark.parametrize("dtype", [torch.int8, torch.int32, torch.float32])
@pytest.mark.parametrize("block, num_warps", [(64, 1), (64, 4), (32, 1)])
def test_zero_tile_gpu_shape(dtype, block, num_warps, monkeypatch):
    """Auto mode, GPU shape, on the device in use: right everywhere (where the quirk
    applies, the kernel is built from its OpenCL C)."""
    monkeypatch.delenv(TARGET_ENV, raising=False)
    monkeypatch.delenv("TRITON_SPIRV_PROGRAM", raising=False)
    for m, n in ((1, 1), (40, block // 2 + 3)):
        out = torch.full((m, n), 7, dtype=dtype)
        constant_tile[(triton.cdiv(m, block),)](out, m, n, BM=block, BN=block, VALUE=0,
                                                num_warps=num_warps, opencl_target="gpu")
        torch.testing.assert_close(out, torch.zeros(m, n, dtype=dtype))


def test_zero_tile_forced_spirv_is_refused_where_the_quirk_applies(monkeypatch):
    monkeypatch.delenv(TARGET_ENV, raising=False)
    if not _il_version(launcher.get_device().device):
        pytest.skip("the device takes no SPIR-V")
    out = torch.full((40, 20), 7, dtype=torch.int32)

    def launch():
        constant_tile[(1,)](out, 40, 20, BM=64, BN=64, VALUE=0, num_warps=1, opencl_target="gpu",
                            program="spirv")
    if resolve_target("gpu").has_quirk("private_zero_tiles_in_gpu_spirv"):
        with pytest.raises(Exception, match="zero tile in a private array.*quirk private_zero_tiles_in_gpu_spirv"):
            launch()
    else:
        launch()
        torch.testing.assert_close(out, torch.zeros(40, 20, dtype=torch.int32))


def test_zero_tile_auto_mode_says_so_without_a_warning(monkeypatch, caplog):
    """Auto mode takes the OpenCL C where the quirk applies and says so at INFO level:
    the user has nothing to act on (a missing SPIR-V lowering is a warning,
    tests/test_spirv.py)."""
    import logging
    monkeypatch.delenv(TARGET_ENV, raising=False)
    monkeypatch.delenv("TRITON_SPIRV_PROGRAM", raising=False)
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")      # the choice is logged when compiling
    from launcher import il
    monkeypatch.setattr(il, "_LOGGED", set())             # said once per process otherwise
    if not resolve_target("gpu").has_quirk("private_zero_tiles_in_gpu_spirv"):
        pytest.skip("the device's SPIR-V serves this kernel")
    out = torch.full((40, 20), 7, dtype=torch.int32)
    with caplog.at_level(logging.INFO, logger="triton_spirv"):
        constant_tile[(1,)](out, 40, 20, BM=64, BN=64, VALUE=0, num_warps=2, opencl_target="gpu")
    torch.testing.assert_close(out, torch.zeros(40, 20, dtype=torch.int32))
    said = [r for r in caplog.records if "runs from OpenCL C instead of SPIR-V" in r.getMessage()]
    assert said and all(r.levelno == logging.INFO for r in said), [(r.levelname, r.getMessage()) for r in said]


def _il_platforms():
    """The platforms whose device builds programs from SPIR-V."""
    return [p for p in _platforms() if _il_version(p.values[0].get_devices()[0])]


def _il_version(device) -> str:
    try:
        return device.get_info(cl.device_info.IL_VERSION).strip()
    except cl.Error:
        return ""


@pytest.mark.parametrize("platform", _il_platforms())
def test_i8_private_array_in_spirv(platform):
    """The finding's memref stage as SPIR-V, built on each platform that takes SPIR-V:
    with the quirk's i32 array right everywhere, with the plain i8 array wrong where the
    quirk applies."""
    from triton_spirv.stages import linalg_to_memref_text, memref_to_spirv, ttir_to_linalg_text
    M, N = 2, 3
    out = torch.zeros(M, N, dtype=torch.int8)
    ttir = constant_int8_tile[(1,)](out, M, N, BM=32, BN=32, num_warps=1).asm["ttir"]
    linalg = ttir_to_linalg_text(ttir, versioning_allowed=False, lane_reductions=False)
    memref = linalg_to_memref_text(linalg, work_items=32)
    # The quirk's form is right everywhere. The plain form is run too but not judged:
    # whether Intel's consumer loses its stores depends on how the memref stage lays
    # out the tile's copies (since copies are lowered in the memref stage this kernel's
    # plain form computes right); the finding's script shows the fault.
    got = _run_spirv(platform, memref_to_spirv(memref, quirks=("i8_private_arrays",)), M, N)
    np.testing.assert_array_equal(got, np.ones(M * N, np.int8))
    got = _run_spirv(platform, memref_to_spirv(memref, quirks=()), M, N)
    if not _has_quirk(platform, "i8_private_arrays"):
        np.testing.assert_array_equal(got, np.ones(M * N, np.int8))


def _run_spirv(platform, module, M: int, N: int) -> np.ndarray:
    context = cl.Context([platform.get_devices()[0]])
    queue = cl.CommandQueue(context)
    program = cl.Program(context, module.binary).build()
    out = np.full(M * N, 7, np.int8)
    buffer = cl.Buffer(context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=out)
    kernel = program.all_kernels()[0]
    kernel(queue, (32,), (32,), buffer, np.int32(M), np.int32(N))
    cl.enqueue_copy(queue, out, buffer)
    return out


# ---------------------------------------------------------------------------------------
# not_then_integer_max: an integer max or min of a bitwise not (Intel 2026.22.10: its
# optimizer loses a masked atomic after an early return, computes wrong values or
# crashes; found by the fuzzer, seeds 42425 and 42663).

NOT_THEN_MAX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz", "findings",
                            "intel_cpu_not_max_branch_crash.cl")
_RUN_REDUCED = """
import sys, numpy as np, pyopencl as cl
platform = [p for p in cl.get_platforms() if p.name == sys.argv[1]][0]
context = cl.Context(platform.get_devices()); queue = cl.CommandQueue(context)
program = cl.Program(context, open(sys.argv[2]).read()).build(options=sys.argv[3:])
out = np.zeros(8, np.int32)
buffer = cl.Buffer(context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=out)
program.kernel_1(queue, (1, 1), (1, 1), buffer); queue.finish()
cl.enqueue_copy(queue, out, buffer); queue.finish()
print("OUT", out[:2].tolist())
"""


def _reduced_not_then_max(platform, *options) -> subprocess.CompletedProcess:
    """The reduced OpenCL C in a child process (Intel's compiler dies on it)."""
    return subprocess.run([sys.executable, "-c", _RUN_REDUCED, platform.name, NOT_THEN_MAX, *options],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("platform", _platforms())
def test_not_then_max_reduced(platform):
    """Unoptimized, right everywhere; optimized, broken where the quirk applies (a
    release that computes it right gets `fixed_in`)."""
    unoptimized = _reduced_not_then_max(platform, "-cl-opt-disable")
    assert "OUT [-1, 0]" in unoptimized.stdout, unoptimized.stdout + unoptimized.stderr[-2000:]
    optimized = _reduced_not_then_max(platform)
    if _has_quirk(platform, "not_then_integer_max"):
        if "OUT [-1, 0]" in optimized.stdout:
            _skip_where_not_reproduced(platform, "not_then_integer_max")
        assert "OUT [-1, 0]" not in optimized.stdout, optimized.stdout
    else:
        assert "OUT [-1, 0]" in optimized.stdout, optimized.stdout + optimized.stderr[-2000:]


@triton.jit
def atomic_after_not_max(x_ptr, o_ptr, N, T: tl.constexpr, BN: tl.constexpr):
    rn = tl.arange(0, BN)
    mn = rn < N
    v = tl.zeros((BN,), tl.int32)
    p = x_ptr + rn
    for _ in range(0, T):
        v = v + tl.load(p, mask=mn, other=0).to(tl.int32)
        p += N
    w = ~v
    if tl.max(w) > 2:
        return
    tl.atomic_add(o_ptr + rn, w, mask=mn)


_RUN_KERNEL = """
import sys, torch
sys.path.insert(0, sys.argv[1])
import test_intel_quirks as t
x = torch.tensor([[0, 3, -2, 5, 1], [1, -4, 0, 2, 2]], dtype=torch.int8)
out = torch.zeros(5, dtype=torch.int32)
compiled = t.atomic_after_not_max[(1,)](x, out, 5, T=2, BN=8)
print("OUT", out.tolist(), "-cl-opt-disable" in (getattr(compiled.metadata, "build_options", None) or ()))
"""


def test_not_then_max(monkeypatch):
    """The fuzzer's finding as a Triton kernel, on the device in use, in a child process
    (a miscompile may crash it): against torch; built unoptimized where the quirk
    applies."""
    monkeypatch.delenv(TARGET_ENV, raising=False)
    here = os.path.dirname(os.path.abspath(__file__))
    child = subprocess.run([sys.executable, "-c", _RUN_KERNEL, here], capture_output=True,
                           text=True, timeout=300)
    x = torch.tensor([[0, 3, -2, 5, 1], [1, -4, 0, 2, 2]], dtype=torch.int32)
    w = ~x.sum(0)
    expected = w.tolist() if int(w.max()) <= 2 else [0] * 5
    quirky = resolve_target().has_quirk("not_then_integer_max")
    assert f"OUT {expected} {quirky}" in child.stdout, child.stdout + child.stderr[-3000:]


# ---------------------------------------------------------------------------------------
# barrier_in_fill_branch: a value a work-item keeps across barriers at the end of
# partial tiles' fill branches, each followed by a loop of async work-group copies
# (Intel 2026.22.10: its compiler dies with SIGSEGV in its pass
# sycl-kernel-reduce-cross-barrier-values; found by the fuzzer, seed 42650).

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILL_BRANCH_BARRIER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz", "findings",
                                   "intel_gpu_fill_branch_barrier_crash.cl")
_RUN_FILL_BRANCH = """
import sys, numpy as np, pyopencl as cl
platform = [p for p in cl.get_platforms() if p.name == sys.argv[1]][0]
context = cl.Context(platform.get_devices()); queue = cl.CommandQueue(context)
program = cl.Program(context, open(sys.argv[2]).read()).build(options=sys.argv[3:])
flags = cl.mem_flags
def buffer(a): return cl.Buffer(context, flags.READ_WRITE | flags.COPY_HOST_PTR, hostbuf=a)
y = np.full(64, -3, np.int32); y[0] = 5
out = np.full(128, 7, np.int32); out_buffer = buffer(out)
program.k(queue, (128,), (128,), buffer(np.arange(64, dtype=np.float32)), buffer(y),
          buffer(np.arange(64, dtype=np.int32)), np.int32(1), np.int32(0), out_buffer)
cl.enqueue_copy(queue, out, out_buffer); queue.finish()
print("OUT", out[:32].tolist())
"""
FILL_BRANCH_EXPECTED = "OUT " + str([1] + [0] * 31)


def _reduced_fill_branch(platform, *options) -> subprocess.CompletedProcess:
    """The reduced OpenCL C in a child process (Intel's compiler dies on it)."""
    return subprocess.run([sys.executable, "-c", _RUN_FILL_BRANCH, platform.name,
                           FILL_BRANCH_BARRIER, *options], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("platform", _platforms())
def test_barrier_in_fill_branch_reduced(platform):
    """Each barrier after its branch (the quirk's form), and unoptimized: right
    everywhere. The barriers inside the branches, optimized: the build dies where the
    quirk applies (a release that builds it gets `fixed_in`), right elsewhere."""
    for options in (("-D", "BARRIER_AFTER_FILL"), ("-cl-opt-disable",)):
        child = _reduced_fill_branch(platform, *options)
        assert FILL_BRANCH_EXPECTED in child.stdout, child.stdout + child.stderr[-2000:]
    plain = _reduced_fill_branch(platform)
    if _has_quirk(platform, "barrier_in_fill_branch"):
        assert plain.returncode != 0 and FILL_BRANCH_EXPECTED not in plain.stdout, plain.stdout
    else:
        assert FILL_BRANCH_EXPECTED in plain.stdout, plain.stdout + plain.stderr[-2000:]


_RUN_FINDING = """
import sys, torch
sys.path[:0] = [sys.argv[1], sys.argv[3]]
import intel_gpu_cumsum_cross_barrier_crash as f
outs = f.run(opencl_target="gpu", program=sys.argv[2])
print("OUT", [float(v) for name in ("o0", "o1") for v in outs[name].ravel()])
"""


def _finding_expected() -> list:
    """The finding's outputs by torch (M = N = 1: one element; the row-wise cumsum of
    one row is its value): o0 = 0 where x1 > 0, else untouched (7); o1 = min(x0,
    x4 where x2 > 0 else -1)."""
    sys.path.insert(0, os.path.dirname(FILL_BRANCH_BARRIER))
    import intel_gpu_cumsum_cross_barrier_crash as finding

    from tests.fuzz.reproducer import make_args
    (x0, x1, x2, _x3, x4, *_rest), _outs, _strides = make_args(
        finding.SEED, finding.SIZES, finding.INPUTS, finding.OUTPUTS)
    loaded = torch.where(x2[0, 0] > 0, x4[0, 0].float(), torch.tensor(-1.0))
    return [0.0 if x1[0, 0] > 0 else 7.0, float(torch.minimum(x0[0, 0], loaded))]


@pytest.mark.parametrize("program", ["source", "spirv"])
@pytest.mark.parametrize("quirk_off", [False, True], ids=["quirk", "quirk_off"])
def test_barrier_in_fill_branch(program, quirk_off, monkeypatch):
    """The fuzzer's finding, GPU shape, on the device in use, in a child process (the
    compiler may kill it), against torch. With the quirk's form right everywhere; with
    the quirk turned off the OpenCL C build dies where the quirk applies."""
    monkeypatch.delenv(TARGET_ENV, raising=False)
    monkeypatch.delenv("TRITON_SPIRV_PROGRAM", raising=False)
    if program == "spirv" and not _il_version(launcher.get_device().device):
        pytest.skip("the device takes no SPIR-V")
    env = dict(os.environ)
    if quirk_off:
        env["TRITON_SPIRV_QUIRKS_OFF"] = "barrier_in_fill_branch"
    child = subprocess.run([sys.executable, "-c", _RUN_FINDING, os.path.dirname(FILL_BRANCH_BARRIER),
                            program, REPO_ROOT], capture_output=True, text=True, timeout=300, env=env)
    expected = f"OUT {_finding_expected()}"
    if quirk_off and program == "source" and resolve_target("gpu").has_quirk("barrier_in_fill_branch"):
        assert child.returncode != 0 and expected not in child.stdout, child.stdout
    else:
        assert expected in child.stdout, child.stdout + child.stderr[-3000:]


# ---------------------------------------------------------------------------------------
# byte_accumulators_in_loops: a loop folding rows of an i8 tile into an i8 accumulator 8
# columns wide (Intel 2026.22.10: its backend dies, "Cannot emit physreg copy
# instruction"; found by the fuzzer, seed 60672: tl.xor_sum(x, axis=0) of a uint8 tile).

BYTE_ACCUMULATOR = """
__kernel void k(__global const uchar* x, __global int* o) {
  __local uchar t[16 * 8];
  __local ACCUMULATOR acc[8];
  for (long i = 0; i < 128; ++i) t[i] = x[i];
  for (long j = 0; j < 8; ++j) acc[j] = t[j];
  for (long i = 0; i < 15; ++i)
    for (long j = 0; j < 8; ++j)
      acc[j] = acc[j] ^ (ACCUMULATOR)t[8 + i * 8 + j];
  for (long j = 0; j < 8; ++j) o[j] = (int)(uchar)acc[j];
}
"""
_RUN_BYTE_ACCUMULATOR = """
import sys, numpy as np, pyopencl as cl
platform = [p for p in cl.get_platforms() if p.name == sys.argv[1]][0]
context = cl.Context(platform.get_devices()); queue = cl.CommandQueue(context)
program = cl.Program(context, sys.argv[2]).build(options=sys.argv[3:])
flags = cl.mem_flags
x = (np.arange(128) * 37 % 251).astype(np.uint8)
out = np.zeros(8, np.int32)
out_buffer = cl.Buffer(context, flags.READ_WRITE | flags.COPY_HOST_PTR, hostbuf=out)
program.k(queue, (1,), (1,), cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=x),
          out_buffer)
cl.enqueue_copy(queue, out, out_buffer); queue.finish()
print("OUT", out.tolist())
"""


def _byte_accumulator_expected() -> str:
    x = (np.arange(128) * 37 % 251).astype(np.uint8).reshape(16, 8)
    return "OUT " + str(np.bitwise_xor.reduce(x, axis=0).astype(np.int32).tolist())


def _reduced_byte_accumulator(platform, accumulator: str, *options) -> subprocess.CompletedProcess:
    """The reduced OpenCL C in a child process (Intel's backend dies on it)."""
    source = BYTE_ACCUMULATOR.replace("ACCUMULATOR", accumulator)
    return subprocess.run([sys.executable, "-c", _RUN_BYTE_ACCUMULATOR, platform.name, source,
                           *options], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("platform", _platforms())
def test_byte_accumulators_reduced(platform):
    """An int accumulator (the quirk's form), and a byte one unoptimized: right
    everywhere. A byte accumulator, optimized: the build dies where the quirk applies (a
    release that builds it gets `fixed_in`), right elsewhere."""
    expected = _byte_accumulator_expected()
    for accumulator, options in (("uint", ()), ("uchar", ("-cl-opt-disable",))):
        child = _reduced_byte_accumulator(platform, accumulator, *options)
        assert expected in child.stdout, child.stdout + child.stderr[-2000:]
    plain = _reduced_byte_accumulator(platform, "uchar")
    if _has_quirk(platform, "byte_accumulators_in_loops"):
        if plain.returncode == 0 and expected in plain.stdout:
            _skip_where_not_reproduced(platform, "byte_accumulators_in_loops")
        assert plain.returncode != 0 and expected not in plain.stdout, plain.stdout
    else:
        assert expected in plain.stdout, plain.stdout + plain.stderr[-2000:]


@triton.jit
def _xor_combine(a, b):
    return a ^ b


@triton.jit
def _or_combine(a, b):
    return a | b


@triton.jit
def _add_combine(a, b):
    return a + b


@triton.jit
def column_fold(x_ptr, o_ptr, R: tl.constexpr, C: tl.constexpr, COMBINE: tl.constexpr):
    rows = tl.arange(0, R)
    columns = tl.arange(0, C)
    x = tl.load(x_ptr + rows[:, None] * C + columns[None, :])
    if COMBINE == "xor":
        folded = tl.reduce(x, 0, _xor_combine)
    elif COMBINE == "or":
        folded = tl.reduce(x, 0, _or_combine)
    else:
        folded = tl.reduce(x, 0, _add_combine)
    tl.store(o_ptr + columns, folded)


def _column_fold_expected(x: torch.Tensor, combine: str) -> torch.Tensor:
    folded = x[0].clone()
    for row in x[1:]:
        folded = folded ^ row if combine == "xor" else folded | row if combine == "or" else folded + row
    return folded


@pytest.mark.parametrize("combine", ["xor", "or", "add"])
@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8])
@pytest.mark.parametrize("rows, columns", [(16, 8), (32, 8), (16, 16), (4, 8)])
def test_byte_column_folds(combine, dtype, rows, columns):
    """Byte column reductions (the fuzzer's seed 60672 among them) on the device in use,
    against torch, wrapping sums included."""
    generator = torch.Generator().manual_seed(rows * columns)
    x = torch.randint(-128 if dtype == torch.int8 else 0, 128 if dtype == torch.int8 else 256,
                      (rows, columns), generator=generator, dtype=torch.int32).to(dtype)
    out = torch.zeros(columns, dtype=dtype)
    column_fold[(1,)](x, out, rows, columns, combine)
    assert torch.equal(out, _column_fold_expected(x, combine)), (out, _column_fold_expected(x, combine))


_RUN_COLUMN_FOLD = """
import sys, torch
sys.path[:0] = [sys.argv[1]]
from tests.test_intel_quirks import column_fold, _column_fold_expected
x = (torch.arange(128) * 37 % 251).to(torch.uint8).reshape(16, 8)
out = torch.zeros(8, dtype=torch.uint8)
column_fold[(1,)](x, out, 16, 8, "xor")
print("RIGHT" if torch.equal(out, _column_fold_expected(x, "xor")) else f"WRONG {out}")
"""


def test_byte_column_fold_without_the_quirk(monkeypatch):
    """With the quirk turned off the fuzzer's kernel (CPU shape, where it was found)
    kills the process where the quirk applies (the build dies), and computes right
    elsewhere: the workaround is what keeps it alive."""
    monkeypatch.delenv(TARGET_ENV, raising=False)
    monkeypatch.delenv("TRITON_SPIRV_PROGRAM", raising=False)
    env = dict(os.environ, TRITON_SPIRV_QUIRKS_OFF="byte_accumulators_in_loops")
    child = subprocess.run([sys.executable, "-c", _RUN_COLUMN_FOLD, REPO_ROOT], capture_output=True,
                           text=True, timeout=300, env=env)
    if resolve_target().has_quirk("byte_accumulators_in_loops"):
        if child.returncode == 0 and "RIGHT" in child.stdout:
            platform = next(p for p in cl.get_platforms()
                            if _has_quirk(p, "byte_accumulators_in_loops"))
            _skip_where_not_reproduced(platform, "byte_accumulators_in_loops",
                                       "fuzzer's kernel without the quirk")
        assert child.returncode != 0 and "RIGHT" not in child.stdout, child.stdout
    else:
        assert "RIGHT" in child.stdout, child.stdout + child.stderr[-3000:]
