"""HLO that XLA:GPU printed (tests/hlo/xla_gpu/, made by generate_xla_gpu.py for an A100
without a GPU): multi-output fusions with nested tuple results and cuBLAS library calls
(`__cublas$lt$matmul`, `__cublas$gemm`) with their epilogues, run on the OpenCL device
against JAX's outputs; nested tuples at the ENTRY (results, parameters) and in fusion
parameters; the output guard; the errors of calls this frontend does not lower."""
import glob
import os
import re

import numpy as np
import pytest

from hlo_helpers import hlo_path, listing
from triton_spirv.hlo import HloOutputError, HloUnsupportedError, read_hlo, read_hlo_file
from triton_spirv.hlo.runtime import ModuleRunner

NAMES = sorted(os.path.basename(p)[:-4] for p in glob.glob(hlo_path("xla_gpu", "*.hlo")))
TOLERANCE = {"gemm_gelu_grad": 1e-4,    # relative to the largest |value|: sums of 700 terms
             "gemm_bf16_bias_relu": 1e-2}   # bf16 results: 8 bits of mantissa


def data(name):
    return np.load(hlo_path("xla_gpu", f"{name}.npz"))


def text(name):
    with open(hlo_path("xla_gpu", f"{name}.hlo")) as f:
        return f.read()


def inputs(arrays):
    return [arrays[f"arg{k}"] for k in range(sum(k.startswith("arg") for k in arrays))]


def assert_matches(outputs, expected, tol=1e-5):
    assert len(outputs) == len(expected)
    for out, want in zip(outputs, expected):
        assert out.shape == want.shape and out.dtype == want.dtype
        if np.issubdtype(want.dtype, np.floating):
            scale = max(1.0, float(np.abs(want).max()))
            np.testing.assert_allclose(out, want, rtol=tol, atol=tol * scale)
        else:
            np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("name", NAMES)
def test_xla_gpu_module(name):
    arrays = data(name)
    outputs = ModuleRunner(read_hlo_file(hlo_path("xla_gpu", f"{name}.hlo"))).run(inputs(arrays))
    n = sum(k.startswith("out") for k in arrays)
    assert_matches(outputs, [arrays[f"out{k}"] for k in range(n)], TOLERANCE.get(name, 1e-5))


def test_the_data_has_nested_tuples_and_every_epilogue():
    nested = re.compile(r"= \(\(f32\[\d+\]\{0\}, s32\[\d+\]\{0\}\), \(f32")
    assert nested.search(text("nested_arg_max_min_rows"))
    assert nested.search(text("nested_arg_max_min_sum"))
    epilogues = {m for n in NAMES for m in re.findall(r'"epilogue":"(\w+)"', text(n))}
    assert {"DEFAULT", "BIAS", "RELU", "BIAS_RELU", "GELU", "BIAS_GELU", "GELU_AUX",
            "BIAS_GELU_AUX"} <= epilogues
    targets = {m for n in NAMES for m in re.findall(r'custom_call_target="([^"]+)"', text(n))}
    assert targets == {"__cublas$lt$matmul", "__cublas$gemm"}


# -- nested tuples at the ENTRY and in fusion parameters ------------------------

def entry_returning_the_fusion():
    """The XLA:GPU module with the nested fusion result as the ENTRY's result."""
    source = text("nested_arg_max_min_rows")
    head, entry = source.split("ENTRY", 1)
    fusion = next(l for l in entry.splitlines() if "input_reduce_fusion = " in l)
    shape = fusion.split("=", 1)[1].split(" fusion(")[0].strip()
    return (head + f"ENTRY %main (x.1: f32[8,40]) -> {shape} {{\n"
            "  %x.1 = f32[8,40]{1,0} parameter(0)\n"
            "  ROOT" + fusion.replace("  %input_reduce_fusion", " %input_reduce_fusion", 1) +
            "\n}\n")


def test_nested_tuple_entry_result():
    arrays = data("nested_arg_max_min_rows")
    runner = ModuleRunner(read_hlo(entry_returning_the_fusion()))
    outputs = runner.run(inputs(arrays))
    # Leaves of ((max, argmax), (min, argmin)); JAX returned (argmax, argmin, max, min).
    assert_matches(outputs, [arrays["out2"], arrays["out0"], arrays["out3"], arrays["out1"]])


def test_nested_tuple_entry_result_into_given_arrays():
    arrays = data("nested_arg_max_min_rows")
    out = [np.empty(8, np.float32), np.empty(8, np.int32), np.empty(8, np.float32),
           np.empty(8, np.int32)]
    returned = ModuleRunner(read_hlo(entry_returning_the_fusion())).run(inputs(arrays), out=out)
    assert all(r is o for r, o in zip(returned, out))
    assert_matches(out, [arrays["out2"], arrays["out0"], arrays["out3"], arrays["out1"]])


RANGE = """HloModule ranges

%range (p: ((f32[8], s32[8]), (f32[8], s32[8]))) -> (f32[8], s32[8]) {
  %p = ((f32[8]{0}, s32[8]{0}), (f32[8]{0}, s32[8]{0})) parameter(0)
  %hi = (f32[8]{0}, s32[8]{0}) get-tuple-element(%p), index=0
  %lo = (f32[8]{0}, s32[8]{0}) get-tuple-element(%p), index=1
  %max = f32[8]{0} get-tuple-element(%hi), index=0
  %min = f32[8]{0} get-tuple-element(%lo), index=0
  %argmax = s32[8]{0} get-tuple-element(%hi), index=1
  %argmin = s32[8]{0} get-tuple-element(%lo), index=1
  %width = f32[8]{0} subtract(%max, %min)
  %span = s32[8]{0} subtract(%argmax, %argmin)
  ROOT %r = (f32[8]{0}, s32[8]{0}) tuple(%width, %span)
}

ENTRY %main (q: (f32[8], ((f32[8], s32[8]), (f32[8], s32[8])))) -> ((f32[8], s32[8]), s32[8]) {
  %q = (f32[8]{0}, ((f32[8]{0}, s32[8]{0}), (f32[8]{0}, s32[8]{0}))) parameter(0)
  %stats = ((f32[8]{0}, s32[8]{0}), (f32[8]{0}, s32[8]{0})) get-tuple-element(%q), index=1
  %fused = (f32[8]{0}, s32[8]{0}) fusion(%stats), kind=kLoop, calls=%range
  %lo = (f32[8]{0}, s32[8]{0}) get-tuple-element(%stats), index=1
  %argmin = s32[8]{0} get-tuple-element(%lo), index=1
  ROOT %out = ((f32[8]{0}, s32[8]{0}), s32[8]{0}) tuple(%fused, %argmin)
}
"""


def test_nested_tuple_parameters_of_entry_and_fusion():
    arrays = data("nested_arg_max_min_rows")     # JAX: argmax, argmin, max, min
    argmax, argmin, hi, lo = (arrays[f"out{k}"] for k in range(4))
    stats = ((hi, argmax), (lo, argmin))
    outputs = ModuleRunner(read_hlo(RANGE)).run([(np.zeros(8, np.float32), stats)])
    assert_matches(outputs, [hi - lo, argmax - argmin, argmin])


def test_nested_tuple_input_of_the_wrong_structure_is_named():
    with pytest.raises(HloUnsupportedError, match=r"input for %q\{1\} must be a tuple of 2"):
        ModuleRunner(read_hlo(RANGE)).run([(np.zeros(8, np.float32), np.zeros(8))])


# -- the output guard -----------------------------------------------------------

def test_output_guard_fires_on_a_wrong_kernel_result(monkeypatch):
    """A kernel result of the wrong shape and dtype (as the nested-tuple bug produced:
    scalars of the wrong dtype) is caught before anything is returned."""
    arrays = data("nested_arg_max_min_rows")
    runner = ModuleRunner(read_hlo_file(hlo_path("xla_gpu", "nested_arg_max_min_rows.hlo")))
    real = ModuleRunner._run_kernels

    def flattened_wrongly(self, instr, operands, targets=None):
        results = real(self, instr, operands, targets)
        return [r[0] for r in results]          # every leaf a scalar
    monkeypatch.setattr(ModuleRunner, "_run_kernels", flattened_wrongly)
    with pytest.raises(HloOutputError, match=r"output \{1\} \(s32\[8\], from %reduce\.9\.0, "
                                             r"line \d+\) came out as int32\[\], expected "
                                             r"int32\[8\]"):
        runner.run(inputs(arrays))


def test_output_guard_fires_on_an_inconsistent_module():
    """A get-tuple-element that claims s32 for an f32 leaf: the host passes the f32 array
    through, the guard refuses it."""
    source = text("nested_arg_max_min_rows").replace(
        "%get-tuple-element.2 = f32[8]{0} get-tuple-element",
        "%get-tuple-element.2 = s32[8]{0} get-tuple-element")
    source = source.replace("-> (s32[8], s32[8], f32[8], f32[8])",
                            "-> (s32[8], s32[8], s32[8], f32[8])")
    source = re.sub(r"(ROOT %tuple\.5\.0 = \(s32\[8\]\{0\}, s32\[8\]\{0\}, )f32", r"\1s32",
                    source)
    runner = ModuleRunner(read_hlo(source))
    with pytest.raises(HloOutputError, match=r"output \{2\} \(s32\[8\], from "
                                             r"%get-tuple-element\.2, line \d+\) came out as "
                                             r"float32\[8\], expected int32\[8\]"):
        runner.run(inputs(data("nested_arg_max_min_rows")))


# -- cuBLAS calls ---------------------------------------------------------------

def with_epilogue(name, epilogue, result_shape=None):
    source = re.sub(r'"epilogue":"\w+"', f'"epilogue":"{epilogue}"', text(name))
    if result_shape:
        source = source.replace("(f32[16,24]{1,0}, s8[4194304]{0}) custom-call", result_shape)
    return source


def test_the_workspace_is_not_computed():
    runner = ModuleRunner(read_hlo_file(hlo_path("xla_gpu", "gemm_bias_relu.hlo")))
    (call,) = [i for i in runner.module.entry.instructions if i.opcode == "custom-call"]
    lowered = runner.library_call(call)
    assert lowered.outputs == [0, None]
    # One output (the GEMM's), no kernel writes the 4 MiB workspace.
    assert [str(s) for s in lowered.computation.root.shape.leaves()] == ["f32[16,24]"]


def test_unknown_custom_call_target_names_target_and_line():
    source = text("gemm_default").replace('"__cublas$lt$matmul"', '"__cublas$lt$matmul$f8"')
    line = next(k + 1 for k, l in enumerate(source.splitlines()) if "custom-call(" in l)
    with pytest.raises(HloUnsupportedError,
                       match=rf'custom-call\) in computation main\.1, line {line}: custom-call '
                             rf'target "__cublas\$lt\$matmul\$f8" is not supported .*'
                             rf'supported targets: __cublas\$gemm, __cublas\$lt\$matmul, '
                             rf'TopK, __cudnn\$convForward, __cudnn\$convBiasActivationForward, '
                             rf'__cudnn\$convBackwardInput, __cudnn\$convBackwardFilter\)'):
        ModuleRunner(read_hlo(source)).run(inputs(data("gemm_default")))


def test_unknown_epilogue_is_named():
    with pytest.raises(HloUnsupportedError, match=r"cuBLAS epilogue D_RELU is not supported"):
        ModuleRunner(read_hlo(with_epilogue("gemm_relu", "D_RELU"))).run(
            inputs(data("gemm_relu")))


def test_missing_bias_operand_is_named():
    source = with_epilogue("gemm_default", "BIAS")
    with pytest.raises(HloUnsupportedError, match=r"2 operands, expected 3 for beta=0 and "
                                                  r"epilogue BIAS \(A, B, bias\)"):
        ModuleRunner(read_hlo(source)).run(inputs(data("gemm_default")))


@pytest.mark.parametrize("printed", ["unoptimized", "xla_cpu"])
def test_variadic_reductions_as_jax_prints_them_live(printed):
    """The same arg-max/min function as HLO before XLA's passes (an unfused variadic
    `reduce` and get-tuple-elements in the ENTRY) and as XLA:CPU compiles it."""
    import jax
    import jax.numpy as jnp

    def f(x):
        return (jnp.argmax(x, 1), jnp.argmin(x, 0), jnp.max(x, 1), jnp.min(x, 0))
    x = np.random.default_rng(8).standard_normal((9, 31)).astype(np.float32)
    lowered = jax.jit(f).lower(x)
    hlo = lowered.as_text(dialect="hlo") if printed == "unoptimized" else \
        lowered.compile().as_text()
    assert re.search(r"\(f32\[\d+\]\{0\}, s32\[\d+\]\{0\}\) reduce\(", hlo)
    outputs = ModuleRunner(read_hlo(hlo)).run([x])
    assert_matches(outputs, [np.asarray(o) for o in jax.jit(f)(x)])


GEMM = """HloModule m
ENTRY %main (a: f32[8,4], b: f32[6,4], c: f32[8,6], bias: f32[6]) -> f32[8,6] {
  %a = f32[8,4]{1,0} parameter(0)
  %b = f32[6,4]{1,0} parameter(1)
  %c = f32[8,6]{1,0} parameter(2)
  %bias = f32[6]{0} parameter(3)
  %gemm = (f32[8,6]{1,0}, s8[1024]{0}) custom-call(%a, %b, %c, %bias), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_real":2,"beta":0.5,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["1"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]},"alpha_imag":0,"epilogue":"BIAS_RELU"}}
  ROOT %out = f32[8,6]{1,0} get-tuple-element(%gemm), index=0
}
"""


def test_cublas_call_lowered_in_and_out():
    """relu(alpha * dot(A, B^T) + beta * C + bias) as HLO, the workspace left out."""
    from triton_spirv.hlo.custom_calls import lower_custom_call
    call = lower_custom_call(read_hlo(GEMM).entry.by_name("gemm"))
    assert listing(call.computation) == [
        "a = f32[8,4] parameter()",
        "b = f32[6,4] parameter()",
        "c = f32[8,6] parameter()",
        "bias = f32[6] parameter()",
        "dot.1 = f32[8,6] dot(a, b) lhs_batch_dims={} rhs_batch_dims={} "
        "lhs_contracting_dims={1} rhs_contracting_dims={1}",
        "constant.2 = f32[] constant() 2",
        "broadcast.3 = f32[8,6] broadcast(constant.2) dimensions={}",
        "multiply.4 = f32[8,6] multiply(dot.1, broadcast.3)",
        "constant.5 = f32[] constant() 0.5",
        "broadcast.6 = f32[8,6] broadcast(constant.5) dimensions={}",
        "multiply.7 = f32[8,6] multiply(c, broadcast.6)",
        "add.8 = f32[8,6] add(multiply.4, multiply.7)",
        "broadcast.9 = f32[8,6] broadcast(bias) dimensions={1}",
        "add.10 = f32[8,6] add(add.8, broadcast.9)",
        "constant.11 = f32[] constant() 0.0",
        "broadcast.12 = f32[8,6] broadcast(constant.11) dimensions={}",
        "ROOT maximum.13 = f32[8,6] maximum(add.10, broadcast.12)",
    ]
    assert call.outputs == [0, None]


def test_cublas_call_with_alpha_and_a_fractional_beta_against_numpy():
    rng = np.random.default_rng(11)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in [(8, 4), (6, 4), (8, 6)])
    bias = rng.standard_normal(6).astype(np.float32)
    out = ModuleRunner(read_hlo(GEMM)).run([a, b, c, bias])[0]
    want = np.maximum(2 * (a.astype(np.float64) @ b.T) + 0.5 * c + bias, 0)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
