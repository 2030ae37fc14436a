"""The differential tester's allowance for rounding sensitivity (tests/fuzz/run.py,
`rounding_spread`; tests/fuzz/reference.py, `perturb_rounding`): the two known classes of
differences that are no bug of ours compare equal, and a bug of the same shape is still
reported.

- fp16 accumulation then cancellation (tests/fuzz/findings/fp16_cumsum_cancellation_tolerance.py):
  the interpreter rounds every partial sum of an fp16 cumsum to fp16, our kernels compute
  in float; `v2 - cumsum(v2)` leaves differences of a few ulps of the partial sums.
- cos of huge arguments (generated seed 43122: a cumprod times exp2, up to ~1e9): an
  argument an ulp or two off (exp2 is not correctly rounded) gives any value in [-1, 1].

Runs on the device the suite runs on (TRITON_OPENCL_DEVICE, PoCL by default), in each of
its configurations.
"""

import os

import numpy as np
import pytest

from tests.fuzz.generator import generate
from tests.fuzz.run import Pool, Spread, compare, run_config

FINDING = os.path.join(os.path.dirname(__file__), "fuzz", "findings", "fp16_cumsum_cancellation_tolerance.py")
CUMSUM = "v3 = tl.cumsum(v2.to(tl.float16), axis=0)"
FINDING_DTYPES = {"o0": "fp16", "o1": "fp16", "o2": "fp32", "o3": "fp16"}
COS_SEED = 43122


def _configs():
    if os.environ.get("TRITON_OPENCL_DEVICE", "").startswith("intel"):
        return ["intel-cpu", "intel-gpu", "intel-cpu-spirv", "intel-gpu-spirv"]
    return ["pocl-cpu", "pocl-gpu"]


@pytest.fixture(scope="module")
def pool():
    p = Pool(_configs())
    yield p
    p.close()


def _outcomes(pool, tmp_path, reference_source, candidate_source, dtypes, loosest):
    """Each configuration's outcome for `candidate_source` (a program module), compared
    with the interpreter's outputs for `reference_source` and its rounding sensitivity."""
    reference, candidate = tmp_path / "reference.py", tmp_path / "candidate.py"
    reference.write_text(reference_source)
    candidate.write_text(candidate_source)
    out = str(tmp_path / "reference.npz")
    reply = pool.reference.request(str(reference), out)
    assert reply["status"] == "ok", reply
    with np.load(out) as data:
        expected = {k: data[k] for k in data.files}
    spread = Spread(pool, str(reference), str(tmp_path), expected)
    return [run_config(name, str(candidate), pool, str(tmp_path), expected, dtypes, loosest, spread=spread)
            for name in pool.configs]


def _finding_source():
    with open(FINDING) as f:
        source = f.read()
    assert CUMSUM in source
    return source


def _missed(outcomes):
    """The configurations that ran a wrong program and did not report it (a configuration
    may refuse a program for a quirk of its device, run.py, _refused_for_a_quirk)."""
    ran = [o for o in outcomes if not o.detail.startswith("refused")]
    assert ran, "every configuration refused the program"
    return [o.config for o in ran if o.kind != "mismatch"]


def _failures(outcomes):
    return [f"{o.config}: {o.kind} {o.detail[:500]}" for o in outcomes if o.failed]


def test_fp16_cumsum_cancellation_within_rounding_sensitivity(pool, tmp_path):
    source = _finding_source()
    outcomes = _outcomes(pool, tmp_path, source, source, FINDING_DTYPES, "fp16")
    assert not _failures(outcomes), _failures(outcomes)
    # and the fixed tolerances alone do report it: the allowance is what makes it pass
    got = tmp_path / f"{pool.configs[0]}.npz"
    with np.load(got) as g, np.load(tmp_path / "reference.npz") as r:
        assert "o2 (fp32)" in compare({k: r[k] for k in r.files}, {k: g[k] for k in g.files}, FINDING_DTYPES, "fp16")


@pytest.mark.parametrize("bug", [
    # the cumsum drops the term of each block's row 3
    "v3 = tl.cumsum(tl.where(rm[:, None] % BM == 3, 0.0, v2).to(tl.float16), axis=0)",
    # the cumsum adds that term with the wrong sign
    "v3 = tl.cumsum(tl.where(rm[:, None] % BM == 3, -v2, v2).to(tl.float16), axis=0)",
], ids=["dropped_term", "wrong_sign"])
def test_fp16_cumsum_bug_still_reported(pool, tmp_path, bug):
    source = _finding_source()
    outcomes = _outcomes(pool, tmp_path, source, source.replace(CUMSUM, bug), FINDING_DTYPES, "fp16")
    assert not _missed(outcomes), f"a wrong cumsum passed in {_missed(outcomes)}"


def _cos_program():
    program = generate(COS_SEED)
    dtypes = {o.name: o.dtype for o in program.outputs}
    source = program.source()
    assert "v10 = tl.cos(v9)" in source  # cos of fma(exp2(...), cumprod, ...): up to ~1e9
    return source, dtypes


def test_cos_of_huge_arguments_within_rounding_sensitivity(pool, tmp_path):
    source, dtypes = _cos_program()
    outcomes = _outcomes(pool, tmp_path, source, source, dtypes, "fp8e5")
    assert not _failures(outcomes), _failures(outcomes)


def test_cos_bug_still_reported(pool, tmp_path):
    """The same program with cos off by a quarter period: the elements whose arguments
    are small enough to have a meaningful cos tell."""
    source, dtypes = _cos_program()
    wrong = source.replace("v10 = tl.cos(v9)", "v10 = tl.sin(v9)")
    outcomes = _outcomes(pool, tmp_path, source, wrong, dtypes, "fp8e5")
    assert not _missed(outcomes), f"sin for cos passed in {_missed(outcomes)}"


def test_compare_allows_the_spread_only_where_given():
    ref = {"a": np.array([0.5, 0.5, 0.5], np.float32)}
    got = {"a": np.array([0.9, 0.5, 0.9], np.float32)}
    dtypes = {"a": "fp32"}
    assert "2 of 3" in compare(ref, got, dtypes)
    spread = {"a": np.array([0.25, 0.0, 0.1])}  # twice 0.25 covers 0.4, twice 0.1 does not
    assert "1 of 3 elements differ, first at (2,)" in compare(ref, got, dtypes, spread=spread)
    assert compare(ref, got, dtypes, spread={"a": np.array([np.inf, 0.0, 0.2])}) == ""
