"""scripts/pytorch_inductor_tests.py: the runner of PyTorch's own Inductor tests.

Its pure parts are checked here on made-up junit XML (PyTorch's test files are not in
this repository); the run of the fixed sample itself happens only where a PyTorch
checkout's `test/` folder is given by PYTORCH_TEST_DIR (docs/pytorch-inductor-tests.md).
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
import pytorch_inductor_tests as runner  # noqa: E402

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="test_triton_cpu_backend.CpuTritonTests" name="test_abs_cpu"/>
<testcase classname="test_triton_cpu_backend.CpuTritonTests" name="test_angle_cpu">
  <failure message="Unexpected success">Unexpected success</failure></testcase>
<testcase classname="test_triton_cpu_backend.CpuTritonTests" name="test_pow2_cpu">
  <skipped type="pytest.xfail" message="expected failure"/></testcase>
<testcase classname="test_triton_cpu_backend.CpuTritonTests" name="test_bernoulli2_cpu">
  <skipped type="pytest.skip" message="Triton CPU not supported"/></testcase>
<testcase classname="test_triton_cpu_backend.CpuTritonTests" name="test_scatter2_cpu">
  <failure message="ConversionError: tt.atomic_rmw">triton_spirv/ttir_to_linalg</failure></testcase>
<testcase classname="test_triton_cpu_backend.SweepInputsCpuTritonTest" name="test_cpu_dense_int"/>
</testsuite></testsuites>
"""


@pytest.fixture
def junit(tmp_path):
    path = tmp_path / "triton.xml"
    path.write_text(JUNIT)
    return str(path)


def test_outcomes_are_read_per_comparison_key(junit):
    results = runner.read_junit(junit)
    assert {k: r.outcome for k, r in results.items()} == {
        "test_abs": "passed", "test_angle": "xpassed", "test_pow2": "xfailed",
        "test_bernoulli2": "skipped", "test_scatter2": "failed",
        "sweep:test_cpu_dense_int": "passed",
    }


def test_the_same_test_has_the_same_key_under_both_backends():
    assert runner.comparison_key("test_triton_cpu_backend.py::CpuTritonTests::test_abs_cpu") == \
        runner.comparison_key("test_torchinductor.py::CpuTests::test_abs_cpu") == "test_abs"
    assert runner.comparison_key(
        "test_triton_cpu_backend.py::SweepInputsCpuTritonTest::test_cpu_dense_int") == \
        runner.comparison_key("test_torchinductor.py::SweepInputsCpuTest::test_cpu_dense_int")


@pytest.mark.parametrize("message, cpp, expected", [
    ("ConversionError: tt.atomic_rmw", "passed", "ours"),
    ("AssertionError: Tensor-likes are not close!", "failed", "fails on the C++ backend too"),
    ("RuntimeError: Torch not compiled with CUDA enabled", "passed", "needs CUDA/GPU"),
    ("AssertionError: FileCheck: could not find cpp_fused_add_0", "passed",
     "Inductor-on-CPU plumbing"),
])
def test_failures_are_classified_against_the_cpp_backend(message, cpp, expected):
    assert runner.classify(runner.Result("failed", message), runner.Result(cpp)) == expected


def test_summary_gives_rates_and_counts_only_our_failures(junit, capsys):
    ours = runner.summarize({"triton": runner.read_junit(junit)})
    out = capsys.readouterr().out
    # 5 ran (the skip does not count); the unexpected success passed its body.
    assert "triton: 3/5 pass (60.0%)" in out
    assert "| test_scatter2 | ours |" in out
    assert ours == 1


def test_without_a_pytorch_test_folder_nothing_runs(tmp_path, capsys):
    assert runner.main(["--test-dir", str(tmp_path), "--out", str(tmp_path / "out")]) == 0
    assert "nothing to run" in capsys.readouterr().out


def test_the_fixed_sample_names_common_tests():
    sample = runner.load_sample()
    assert len(sample) >= 20
    assert all(name.startswith(("test_", "sweep:test_")) for name in sample)


@pytest.mark.skipif(not os.environ.get("PYTORCH_TEST_DIR"),
                    reason="PYTORCH_TEST_DIR (a PyTorch checkout's test/ folder) is not set")
def test_fixed_sample_of_pytorch_inductor_tests(tmp_path):
    """The fixed sample through this backend and the C++ backend: no failure of ours."""
    assert runner.main(["--out", str(tmp_path)]) == 0
