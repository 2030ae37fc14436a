"""sort, convolution (plain and XLA:GPU's cuDNN custom-calls) and gather with batching
dimensions, run from HLO that XLA printed (tests/hlo/jax_ops/, made by
generate_jax_ops.py) and checked against JAX's outputs."""
import glob
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from hlo_helpers import hlo_path, listing, run_file

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
            # bf16 results: one rounding step (2^-8) apart where the f32 sums differ
            tolerance = 2 ** -7 if "bf16" in case else 2e-5
            np.testing.assert_allclose(got, want, rtol=tolerance,
                                       atol=tolerance * np.abs(want).max())
        else:
            # sorts, top-k and gathers move elements: bit-exact (-0.0 included), NaN
            # where JAX has NaN (16-bit floats are computed in f32: the payload may differ)
            nan = np.isnan(want) if want.dtype.kind == "f" else np.zeros(want.shape, bool)
            assert np.array_equal(np.isnan(got) if want.dtype.kind == "f" else nan, nan)
            assert np.array_equal(got[~nan].view(np.uint8), want[~nan].view(np.uint8)), (got, want)


# -- the custom-call lowering (custom_calls.py): plain HLO in place of cuDNN calls ----

def _custom_call(text: str):
    from triton_spirv.hlo.reader import read_hlo
    module = read_hlo(text)
    return next(i for c in module.computations.values() for i in c.instructions
                if i.opcode == "custom-call" and "Backward" in i.attrs["custom_call_target"])


def _gpu_text(name: str) -> str:
    with open(hlo_path("jax_ops", f"{name}.gpu.hlo")) as f:
        return f.read()


def _lowered_convolution(name: str):
    from triton_spirv.hlo.custom_calls import lower_custom_call
    call = _custom_call(_gpu_text(name))
    lowering = lower_custom_call(call)
    assert lowering.outputs == [0, None]                        # (result, u8[0] workspace)
    conv = lowering.computation.root
    assert str(conv.shape) == str(call.shape.tuple_shapes[0])
    assert conv.opcode == "convolution" and \
        all(i.line == call.line for i in lowering.computation.instructions)
    return conv


def test_backward_input_becomes_a_convolution_with_the_reversed_kernel():
    # forward: 9x9 input, 3x3 kernel, stride 2, pad 1_1 -> 5x5. The input gradient
    # reads the 5x5 gradient dilated by the stride, with pads (3-1)-1 = 1 low and
    # 9-1+3-(4*2+1)-1 = 1 high, and the kernel reversed with i and o swapped.
    conv = _lowered_convolution("conv_strided_grad_input")
    assert conv.attrs["window"] == "{size=3x3 stride=1x1 pad=1_1x1_1 lhs_dilate=2x2 rhs_reversal=1x1}"
    assert conv.attrs["dim_labels"] == "bf01_io01->bf01"


def test_backward_filter_becomes_a_convolution_over_the_batch():
    # The kernel gradient: input with batch and features swapped, the 5x5 gradient
    # as the window (dilated by the forward stride), pads 1 low and
    # (3-1)+(5-1)*2+1-9-1 = 1 high, one output per kernel tap.
    conv = _lowered_convolution("conv_strided_grad_filter")
    assert conv.attrs["window"] == "{size=5x5 stride=1x1 pad=1_1x1_1 rhs_dilate=2x2}"
    assert conv.attrs["dim_labels"] == "fb01_io01->fb01"


def test_bias_activation_epilogue_lowered_in_and_out():
    """relu(conv_result_scale * conv + side_input_scale * side + bias per feature), one
    fused computation at the call's line, the u8 workspace left out."""
    from triton_spirv.hlo.custom_calls import lower_custom_call
    from triton_spirv.hlo.reader import read_hlo
    call = read_hlo(_gpu_text("conv_bias_side_input")).entry.by_name(
        "cudnn-conv-bias-activation.4")
    lowered = lower_custom_call(call)
    assert listing(lowered.computation) == [
        "x.1 = f32[2,3,8,8] parameter()",
        "w.1 = f32[4,3,3,3] parameter()",
        "b.1 = f32[4] parameter()",
        "s.1 = f32[2,4,8,8] parameter()",
        "convolution.1 = f32[2,4,8,8] convolution(x.1, w.1) window={size=3x3 pad=1_1x1_1} "
        "dim_labels=bf01_oi01->bf01",
        "constant.2 = f32[] constant() 0.5",
        "broadcast.3 = f32[2,4,8,8] broadcast(constant.2) dimensions={}",
        "multiply.4 = f32[2,4,8,8] multiply(convolution.1, broadcast.3)",
        "constant.5 = f32[] constant() 2.0",
        "broadcast.6 = f32[2,4,8,8] broadcast(constant.5) dimensions={}",
        "multiply.7 = f32[2,4,8,8] multiply(s.1, broadcast.6)",
        "add.8 = f32[2,4,8,8] add(multiply.4, multiply.7)",
        "broadcast.9 = f32[2,4,8,8] broadcast(b.1) dimensions={1}",
        "add.10 = f32[2,4,8,8] add(add.8, broadcast.9)",
        "constant.11 = f32[] constant() 0",
        "broadcast.12 = f32[2,4,8,8] broadcast(constant.11) dimensions={}",
        "ROOT maximum.13 = f32[2,4,8,8] maximum(add.10, broadcast.12)",
    ]
    assert lowered.outputs == [0, None]
    assert all(i.line == call.line for i in lowered.computation.instructions)


def test_top_k_call_is_its_own_fused_computation():
    """XLA:CPU's TopK: the sort emitter reads the call itself; both leaves are outputs."""
    from triton_spirv.hlo.custom_calls import lower_custom_call
    from triton_spirv.hlo.reader import read_hlo_file
    call = read_hlo_file(hlo_path("jax_ops", "top_k.cpu.hlo")).entry.root
    lowered = lower_custom_call(call)
    assert [line.split(" metadata=")[0] for line in listing(lowered.computation)] == [
        "x.1 = f32[6,50] parameter()",
        'ROOT custom-call = (f32[6,5], s32[6,5]) custom-call(x.1) custom_call_target="TopK" '
        "called_computations={%compare-greater-than.1.clone}",
    ]
    assert lowered.outputs == [0, 1]


def _run_text(text: str):
    from triton_spirv.hlo.reader import read_hlo
    from triton_spirv.hlo.runtime import ModuleRunner
    inputs, _ = reference("conv_cnn_nhwc")
    return ModuleRunner(read_hlo(text)).run(inputs)


def _line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize("edit, message", [
    (('"__cudnn$convBiasActivationForward"', '"__cudnn$convFancyForward"'),
     'custom-call target "__cudnn$convFancyForward" is not supported'),
    (('"activation_mode":"kRelu"', '"activation_mode":"kBandPass"'),
     "cuDNN activation_mode kBandPass is not supported"),
    (("dim_labels=bf01_oi01->bf01,", "dim_labels=bf01_oi01->bf01, feature_group_count=2,"),
     "convolution shapes do not agree: input features 3 != kernel input features 3 x "
     "feature_group_count 2"),
])
def test_bad_custom_calls_name_what_and_where(edit, message):
    from triton_spirv.hlo.errors import HloUnsupportedError
    text = _gpu_text("conv_cnn_nhwc").replace(*edit)
    assert text != _gpu_text("conv_cnn_nhwc")
    with pytest.raises(HloUnsupportedError) as info:
        _run_text(text)
    assert message in str(info.value)
    assert f"line {_line_of(text, 'custom_call_target=')}" in str(info.value)


def test_grouped_backward_input_is_refused_by_name():
    from triton_spirv.hlo.errors import HloUnsupportedError
    from triton_spirv.hlo.custom_calls import lower_custom_call
    text = _gpu_text("conv_strided_grad_input").replace(
        'custom_call_target="__cudnn$convBackwardInput"',
        'feature_group_count=2, custom_call_target="__cudnn$convBackwardInput"')
    with pytest.raises(HloUnsupportedError, match=r"convBackwardInput with "
                       r"feature_group_count > 1 is not supported"):
        lower_custom_call(_custom_call(text))


# -- sorts of long rows: a chain of passes (emitters/sort.py) --------------------------

def test_long_rows_sort_in_passes_that_double_the_runs():
    from triton_spirv.hlo.emitters.sort import PASS_ATTR, RUN, lower_sort_to_passes
    from triton_spirv.hlo.reader import read_hlo_file
    module = read_hlo_file(hlo_path("jax_ops", "sort_key_value_long_axis0.cpu.hlo"))
    sort = next(i for i in module.entry.instructions if i.opcode == "sort")
    passes = [i for i in lower_sort_to_passes(sort).instructions if i.opcode == "fusion"]
    # 257 elements per row: runs of 64 sorted, then merged into 128, 256 and 512
    assert [p.called_computation().root.attrs[PASS_ATTR] for p in passes] == [
        f"runs_of={RUN}", "merge_runs_of=64", "merge_runs_of=128", "merge_runs_of=256"]
    assert passes[-1].is_root and str(passes[-1].shape) == str(sort.shape)
    for earlier, later in zip(passes, passes[1:]):      # each reads the one before
        assert all(o.operands == [earlier] for o in later.operands)


# -- memory safety: the new kernels under Oclgrind --------------------------------------

OCLGRIND_CASES = ["sort_key_value_long_axis0.cpu", "argsort_long_ties.lowered", "top_k.cpu",
                  "conv_strided_grad_input.gpu", "conv_strided_grad_filter.gpu",
                  "conv_nchw_dilated.cpu", "gather_vmap.lowered"]


@pytest.mark.skipif(shutil.which("oclgrind") is None, reason="oclgrind is not installed "
                    "(`WITH_OCLGRIND=1 bash scripts/setup.sh` or `apt-get install oclgrind`)")
def test_sort_convolution_and_gather_kernels_are_clean_under_oclgrind(tmp_path):
    """Every launch of these modules replayed under `oclgrind --data-races` (out-of-
    bounds accesses are always checked): no message, same buffers as the device.
    (Oclgrind 21.10's --uninitialized stops at LLVM's `freeze`, which the OpenCL
    compiler makes of these kernels' index divisions.)"""
    from launcher.replay import list_recordings, recording
    for case in OCLGRIND_CASES:
        inputs, _ = reference(case)
        with recording(str(tmp_path / case)):
            run_file(hlo_path("jax_ops", f"{case}.hlo"), inputs)
    paths = [p for case in OCLGRIND_CASES for p in list_recordings(str(tmp_path / case))]
    assert len(paths) >= 2 * len(OCLGRIND_CASES)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run(["oclgrind", "--data-races", sys.executable,
                           os.path.join(root, "launcher", "replay.py"), *paths],
                          capture_output=True, text=True, timeout=600, cwd=root)
    results = [json.loads(line) for line in proc.stdout.splitlines()
               if line.startswith('{"name"')]
    assert len(results) == len(paths), proc.stdout[-2000:] + proc.stderr[-2000:]
    assert '"device": "Oclgrind Simulator"' in proc.stdout
    assert all(r["ok"] for r in results), [r for r in results if not r["ok"]]
    messages = [line for line in proc.stderr.splitlines()
                if line.strip() and not line.startswith("###")]
    assert not messages, "\n".join(messages[:40])
