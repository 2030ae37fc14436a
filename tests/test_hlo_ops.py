"""sort, convolution (plain and XLA:GPU's cuDNN custom-calls) and gather with batching
dimensions, run from HLO that XLA printed (tests/hlo/jax_ops/, made by
generate_jax_ops.py) and checked against JAX's outputs."""
import glob
import os

import numpy as np
import pytest

from hlo_helpers import hlo_path, run_file

CASES = sorted(os.path.basename(p)[:-len(".hlo")]
               for p in glob.glob(hlo_path("jax_ops", "*.hlo")))


def reference(case: str):
    name = case.split(".")[0]
    data = np.load(hlo_path("jax_ops", f"{name}.npz"))
    inputs = [data[f"arg{k}"] for k in range(sum(k.startswith("arg") for k in data.files))]
    outputs = [data[f"out{k}"] for k in range(sum(k.startswith("out") for k in data.files))]
    return inputs, outputs


def test_every_kind_of_text_is_there():
    kinds = {c.split(".")[1] for c in CASES}
    assert kinds == {"cpu", "lowered", "gpu"}, kinds
    assert sum(c.startswith(("sort", "argsort", "top_k", "sample")) for c in CASES) >= 18


@pytest.mark.parametrize("case", CASES)
def test_matches_jax(case):
    inputs, expected = reference(case)
    _, outputs = run_file(hlo_path("jax_ops", f"{case}.hlo"), inputs)
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected):
        assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape)
        if want.dtype.kind == "f" and case.startswith("conv"):
            np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5 * np.abs(want).max())
        else:
            # sorts, top-k and gathers move elements: bit-exact, NaN and -0.0 included
            assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), (got, want)
