"""The tutorials' correctness checks at small sizes (their benchmarks are not run).

Each tutorial in python/tutorials/ is imported as a module (importing runs no kernel;
`main()` does) and its own check function is called: they compare with torch and raise
SystemExit on a mismatch. Tests marked `slow` run only when selected with `-m slow`
(or with TUTORIALS_SLOW=1).
"""
import importlib.util
import os

import pytest
import torch

TUTORIALS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python", "tutorials")

slow = pytest.mark.slow


@pytest.fixture(autouse=True)
def skip_slow_unless_selected(request):
    if request.node.get_closest_marker("slow") is None:
        return
    expression = request.config.getoption("-m") or ""
    if os.environ.get("TUTORIALS_SLOW") != "1" and ("slow" not in expression or "not slow" in expression):
        pytest.skip("slow tutorial: select with -m slow or TUTORIALS_SLOW=1")


def load_tutorial(file_name):
    """The tutorial as a module, with its benchmark switched off."""
    os.environ["BENCHMARK"] = "0"
    name = "tutorial_" + file_name.split(".")[0].replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, os.path.join(TUTORIALS, file_name))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_01_vector_add(capsys):
    load_tutorial("01-vector-add.py").main()
    assert "maximum difference between torch and triton is 0.0" in capsys.readouterr().out


def test_02_fused_softmax():
    tutorial = load_tutorial("02-fused-softmax.py")
    assert tutorial.check(n_rows=257, n_cols=781) < 1e-5
    assert tutorial.check(n_rows=3, n_cols=64) < 1e-5


@pytest.mark.parametrize("dtype, activation", [(torch.float16, ""), (torch.float32, ""),
                                               (torch.float16, "leaky_relu")])
def test_03_matrix_multiplication(dtype, activation):
    tutorial = load_tutorial("03-matrix-multiplication.py")
    assert tutorial.check(M=96, N=80, K=72, dtype=dtype, activation=activation) < 1e-2


def test_04_low_memory_dropout():
    tutorial = load_tutorial("04-low-memory-dropout.py")
    assert tutorial.check(size=10) == 0
    assert tutorial.check(size=3001, p=0.3) == 0


def test_05_layer_norm():
    tutorial = load_tutorial("05-layer-norm.py")
    assert tutorial.test_layer_norm(151, 512, torch.float16) < 1e-2


def test_06_fused_attention_causal_fp16():
    tutorial = load_tutorial("06-fused-attention.py")
    assert tutorial.test_op(1, 2, 128, 64, True, torch.float16) < 1e-2


def test_06_fused_attention_fp8_mode():
    tutorial = load_tutorial("06-fused-attention.py")
    assert tutorial.test_op(1, 2, 128, 64, True, torch.float8_e5m2) <= 0.25


@slow
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("causal", [False, True])
def test_06_fused_attention(causal, dtype):
    tutorial = load_tutorial("06-fused-attention.py")
    assert tutorial.test_op(1, 2, 128, 64, causal, dtype) < 1e-2


def test_07_extern_functions():
    tutorial = load_tutorial("07-extern-functions.py")
    assert tutorial.check(size=5000) < 1e-6


def test_08_grouped_gemm():
    tutorial = load_tutorial("08-grouped-gemm.py")
    assert tutorial.check(group_m=(128, 64), group_n=(64, 128), group_k=(64, 32)) < 1e-1


def test_09_persistent_matmul():
    tutorial = load_tutorial("09-persistent-matmul.py")
    assert tutorial.validate(32, 32, 32) < 1e-2
    assert tutorial.validate(96, 160, 64) < 1e-1
