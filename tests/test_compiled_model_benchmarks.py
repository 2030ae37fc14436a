"""The compiled-model benchmarks (benchmarks/compiled_models.py) and the GEMM autotune's
compile-time case (benchmarks/autotune_gemm.py) in their quick form: every number they
report is finite, and what they time computes what eager torch computes. Nothing here
asserts a time."""
from __future__ import annotations

import math
import os
import sys

import pytest
import torch

BENCHMARKS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCHMARKS)

import autotune_gemm  # noqa: E402
import compiled_models  # noqa: E402

sys.path.remove(BENCHMARKS)

CASE_NAMES = [case.name for case in compiled_models.model_cases(quick=True)]
# Each case compiles a model twice (ours and Inductor's C++ backend), about a minute per
# case on two cores: the first runs by default, every one with -m slow or
# BENCHMARKS_SLOW=1 (test_torch_compile.py checks the models' results on each device).
CASES = [pytest.param(index, id=name, marks=() if index == 0 else pytest.mark.slow)
         for index, name in enumerate(CASE_NAMES)]


@pytest.fixture(autouse=True)
def skip_slow_unless_selected(request):
    if request.node.get_closest_marker("slow") is None:
        return
    expression = request.config.getoption("-m") or ""
    if os.environ.get("BENCHMARKS_SLOW") != "1" and ("slow" not in expression or "not slow" in expression):
        pytest.skip("slow benchmark case: select with -m slow or BENCHMARKS_SLOW=1")


@pytest.mark.parametrize("index", CASES)
def test_quick_case_matches_eager_and_reports_finite_times(index):
    # measure() compares each backend's first result with eager's (check_close) before
    # it times anything: a wrong result raises here.
    measured = compiled_models.run_case(index, quick=True)
    assert set(measured["step_ms"]) == {"triton", "cpp", "eager"}
    assert set(measured["compile_s"]) == {"triton", "cpp"}
    for value in [*measured["step_ms"].values(), *measured["compile_s"].values()]:
        assert math.isfinite(value) and value >= 0
    assert all(ms > 0 for ms in measured["step_ms"].values())
    row = compiled_models.as_row(measured)
    assert row["ours"]["ms"] == measured["step_ms"]["triton"]
    assert row["peers"]["inductor cpp"]["ms"] == measured["step_ms"]["cpp"]


def test_the_compiled_step_is_the_eager_one():
    """What each case compiles is what it runs eager (the comparison is meaningful)."""
    for case in compiled_models.model_cases(quick=True):
        compiled_models.check_close(case.compiled(lambda fn: fn)(), case.eager(), case.name,
                                    case.atol, case.rtol)


def test_a_result_unlike_eager_is_named():
    expected = [torch.ones(3), torch.zeros(2)]
    with pytest.raises(AssertionError, match=r"toy \(triton\): result 1 differs from eager"):
        compiled_models.check_close([torch.ones(3), torch.full((2,), 0.5)], expected,
                                    "toy (triton)", 1e-5, 1e-5)
    with pytest.raises(AssertionError, match="2 results, eager gives 1"):
        compiled_models.check_close([torch.ones(3), torch.ones(3)], torch.ones(3), "toy", 1e-5, 1e-5)


def test_gemm_autotune_compiles_every_config_and_computes_the_product(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    seconds, kernel = autotune_gemm.run(64, 2)  # checks the result against torch
    assert math.isfinite(seconds) and seconds > 0
    assert len(list(autotune_gemm.compiled_kernels(kernel))) == 2
    stages = autotune_gemm.stage_seconds(kernel)
    assert {"ttir", "linalg", "memref", "cl", "clbin"} <= set(stages)
    assert all(math.isfinite(s) and s >= 0 for s in stages.values())


def test_autotune_configs_span_the_tutorial_space():
    configs = autotune_gemm.autotune_configs(32)
    assert len(configs) == 32
    assert len({(tuple(sorted(c.kwargs.items())), c.num_warps, c.num_stages) for c in configs}) == 32
