"""Differential testing, the seeded slice CI runs (tests/fuzz/, README "Differential
testing"): generated Triton programs run under Triton's interpreter and through us in
every configuration of the device the suite runs on (TRITON_OPENCL_DEVICE, PoCL by
default: CPU and GPU shapes, plus an Oclgrind replay; Intel: CPU and GPU shapes, OpenCL
C and SPIR-V), and must agree within the tolerances of tests/fuzz/run.py.

The slice's programs leave out what known open bugs break (KNOWN_BUGS); the long runs
(`python3 -m tests.fuzz`) use everything. Also here: the harness itself (a difference
is found, the reducer keeps a failure while it deletes statements, generated programs
are valid for the interpreter).
"""

import os
import shutil

import numpy as np
import pytest
import triton
import triton.language as tl

from tests.fuzz.generator import ALL_FEATURES, generate
from tests.fuzz.reduce import reduce_with
from tests.fuzz.run import Pool, compare, run_program

# Generator features that reach open bugs; the slice leaves them out. (Scalar masks, masked
# K, early returns and unit blocks were here until their bugs were fixed.)
KNOWN_BUGS = {}
SLICE_FEATURES = [f for f in ALL_FEATURES if f not in KNOWN_BUGS]
# 60073: an arg reduction written as Inductor writes it (tl.reduce of value, index pairs
# by its NaN-aware combine) over values with NaNs (generator.py, _pair_reduce); 60672: a
# uint8 xor_sum over columns, which Intel's backend dies on unless its bytes fold in i32
# (quirk byte_accumulators_in_loops).
SLICE_SEEDS = [int(s) for s in os.environ.get("TRITON_SPIRV_FUZZ_SLICE_SEEDS", "1,3,5,6,18,21,24,28,60073,60672").split(",")]
# (seed, configuration) -> reason, for slice programs that still meet an open bug.
XFAIL = {}


def _device():
    return "intel" if os.environ.get("TRITON_OPENCL_DEVICE", "").startswith("intel") else "pocl"


def _slice_configs():
    if _device() == "intel":
        return ["intel-cpu", "intel-gpu", "intel-cpu-spirv", "intel-gpu-spirv"]
    return ["pocl-cpu", "pocl-gpu"] + (["oclgrind-cpu", "oclgrind-gpu"] if shutil.which("oclgrind") else [])


@pytest.fixture(scope="module")
def pool():
    p = Pool(_slice_configs())
    yield p
    p.close()


@pytest.mark.parametrize("seed", SLICE_SEEDS)
def test_generated_program_agrees_with_interpreter(seed, pool, tmp_path):
    program = generate(seed, SLICE_FEATURES)
    result = run_program(program, str(tmp_path / f"seed{seed}.py"), pool, str(tmp_path))
    assert not result.reference_error, f"the generator made an invalid program: {result.reference_error}"
    failures = [o for o in result.outcomes if o.failed and (seed, o.config) not in XFAIL]
    known = [o for o in result.outcomes if o.failed and (seed, o.config) in XFAIL]
    assert not failures, "\n\n".join(f"{o.config}: {o.kind} {o.signature}\n{o.detail[:2000]}" for o in failures) + \
        f"\n\nprogram:\n{program.kernel_source()}"
    if known:
        pytest.xfail("; ".join(f"{o.config}: {XFAIL[(seed, o.config)]}" for o in known))


def test_compare_finds_differences():
    ref = {"a": np.array([1.0, np.nan, 3.0], np.float32), "b": np.array([1, 2], np.int32)}
    dtypes = {"a": "fp32", "b": "int32"}
    assert compare(ref, {k: v.copy() for k, v in ref.items()}, dtypes) == ""
    assert "a (fp32): 1 of 3" in compare(ref, dict(ref, a=np.array([1.0, np.nan, 3.1], np.float32)), dtypes)
    assert "1 of 3" in compare(ref, dict(ref, a=np.array([1.0, 2.0, 3.0], np.float32)), dtypes)  # NaN lost
    assert "b (int32)" in compare(ref, dict(ref, b=np.array([1, 3], np.int32)), dtypes)
    within = dict(ref, a=np.array([1.00001, np.nan, 3.0], np.float32))
    assert compare(ref, within, dtypes) == ""


def test_reducer_keeps_the_failure():
    """A 'failure' that is the presence of a cumsum: the reducer deletes everything else."""
    seed = next(s for s in range(200) if "tl.cumsum" in generate(s).kernel_source()
                and len(generate(s).stmts) > 6)
    program = generate(seed)

    def fails(candidate):
        return "tl.cumsum" in candidate.kernel_source()

    reduced = reduce_with(program, fails)
    assert fails(reduced)
    assert len(reduced.stmts) == 1 < len(program.stmts)


def test_generated_programs_are_valid(tmp_path):
    """Programs of every feature run under the interpreter (the reference)."""
    p = Pool([])
    try:
        for seed in range(40):
            path = str(tmp_path / f"p{seed}.py")
            with open(path, "w") as f:
                f.write(generate(seed).source())
            reply = p.reference.request(path, str(tmp_path / "out.npz"))
            assert reply["status"] == "ok", f"seed {seed}: {reply}"
    finally:
        p.close()


def test_reference_rounds_like_compiled_triton():
    """The interpreter's own fp8/bf16 downcasts lose the carry into the exponent
    (0.4924 -> 0.25 in fp8e4nv), truncate to bf16 and do not saturate; the reference
    patches them (tests/fuzz/reference.py)."""
    import torch
    import triton.language as tl
    from triton.runtime import interpreter

    from tests.fuzz.reference import patch_interpreter

    x = np.array([0.4924, 1000.0, -0.30078125, float("nan")], np.float32)
    patch_interpreter()
    fp8 = interpreter._convert_float(x, tl.float32, tl.float8e4nv, None)
    got = torch.from_numpy(np.ascontiguousarray(fp8).view(np.uint8)).view(torch.float8_e4m3fn).float()
    assert got[:3].tolist() == [0.5, 448.0, -0.3125] and got[3].isnan()
    bf16 = interpreter._convert_float(np.array([1.00390625 + 2**-9], np.float32), tl.float32, tl.bfloat16, None)
    assert torch.from_numpy(bf16.view(np.int16)).view(torch.bfloat16).item() == 1.0078125  # nearest, not truncated


@triton.jit
def _divided_program_ids(x_ptr, out_ptr, groups, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + (pid // groups) * 100 + pid % groups)


@pytest.mark.skipif(shutil.which("oclgrind") is None, reason="oclgrind is not installed")
def test_oclgrind_replay_of_a_runtime_division_and_remainder(tmp_path):
    """Oclgrind's uninitialized-value checker stops at the `freeze` its compiler makes of
    `pid // groups` and `pid % groups`: the replay runs again with the race checks alone
    instead of reporting the checker's limit as a finding."""
    import torch

    from launcher.replay import recording
    from tests.fuzz.run import oclgrind_check

    x = torch.arange(4 * 32, dtype=torch.float32)
    out = torch.zeros_like(x)
    with recording(str(tmp_path)):
        _divided_program_ids[(4,)](x, out, 3, BLOCK=32)
    pid = torch.arange(4).repeat_interleave(32)
    assert torch.equal(out, x + (pid // 3) * 100 + pid % 3)
    outcome = oclgrind_check("oclgrind-cpu", str(tmp_path), 600)
    assert outcome.kind == "ok", outcome
