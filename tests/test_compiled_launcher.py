"""The compiled launcher (launcher/compiled_launch.py): plain launches in one C call.

Each test checks that the compiled path really ran (`kind`, `compiled_launches`) and
that its results equal the reference, and, where it hands a launch back, that the
Python path's behaviour (errors, hooks) is unchanged. The device comes from
TRITON_OPENCL_DEVICE as everywhere else.
"""

import numpy as np
import pytest
import torch
import triton
import triton.language as tl

import launcher
from launcher import KernelArgumentError, compiled_launch
from tests.test_launcher import launch, load, make_launcher

SCALAR_KINDS = ["i1", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "fp16", "bf16", "fp32", "fp64"]
OPENCL_TYPES = {"i1": "uchar", "i8": "char", "i16": "short", "i32": "int", "i64": "long", "u8": "uchar",
                "u16": "ushort", "u32": "uint", "u64": "ulong", "fp16": "float", "bf16": "float",
                "fp32": "float", "fp64": "double"}
# Per kind: the extremes of its range, which the kernel writes back.
EXTREMES = {"i1": (0, 1), "i8": (-128, 127), "i16": (-2**15, 2**15 - 1), "i32": (-2**31, 2**31 - 1),
            "i64": (-2**63, 2**63 - 1), "u8": (0, 255), "u16": (0, 2**16 - 1), "u32": (0, 2**32 - 1),
            "u64": (0, 2**64 - 1), "fp16": (-0.5, 65504.0), "bf16": (1.5, -3.0e38), "fp32": (-0.0, 3.25e38),
            "fp64": (1 / 3, -1e300)}

# One scalar of every kind, written out as the bits of a long (integers, u64 as its
# two's complement) or as a double (floats), with a constexpr and a None between them.
SCALARS_SOURCE = ("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
                  "__kernel void every_scalar(__global long* ints, __global double* floats, "
                  + ", ".join(f"{OPENCL_TYPES[k]} v_{k}" for k in SCALAR_KINDS) + ") {\n"
                  + "".join(f"    ints[{i}] = (long)v_{k};\n" for i, k in enumerate(SCALAR_KINDS[:9]))
                  + "".join(f"    floats[{i}] = (double)v_{k};\n" for i, k in enumerate(SCALAR_KINDS[9:]))
                  + "}\n")
SCALARS_SIGNATURE = {"ints": "*i64", "floats": "*fp64", "BLOCK": "constexpr", "unused": "constexpr",
                     **{f"v_{k}": k for k in SCALAR_KINDS}}


@pytest.fixture(scope="module")
def dev():
    device = launcher.get_device()
    if not device.zero_copy:
        pytest.skip("the compiled launcher serves zero-copy devices; this one copies")
    if "cl_khr_fp64" not in device.device.extensions:
        pytest.skip("device has no fp64")
    return device


@pytest.fixture
def compiled(monkeypatch):
    monkeypatch.setenv(compiled_launch.ENV_VAR, "compiled")


def _scalars_launcher():
    types = ["__global long*", "__global double*"] + [OPENCL_TYPES[k] for k in SCALAR_KINDS]
    return load("every_scalar", SCALARS_SOURCE, types), make_launcher("every_scalar", SCALARS_SIGNATURE)


def _launch_scalars(run, function, values, ints=None, floats=None):
    ints = torch.zeros(9, dtype=torch.int64) if ints is None else ints
    floats = torch.zeros(4, dtype=torch.float64) if floats is None else floats
    launch(run, function, (1,), ints, floats, 64, None, *values)
    return ints, floats


def _expected(values):
    ints = [v - 2**64 if v >= 2**63 else int(v) for v in values[:9]]
    floats = [float(np.float32(v)) if kind != "fp64" else v for kind, v in zip(SCALAR_KINDS[9:], values[9:])]
    return ints, floats


@pytest.mark.parametrize("end", [0, 1])
def test_every_scalar_kind_through_the_compiled_launch(dev, compiled, end):
    function, run = _scalars_launcher()
    values = [EXTREMES[k][end] for k in SCALAR_KINDS]
    ints, floats = torch.zeros(9, dtype=torch.int64), torch.zeros(4, dtype=torch.float64)
    _launch_scalars(run, function, values, ints, floats)  # the first launch plans and makes the buffers
    assert run.kind == "compiled"
    before = run.compiled_launches
    ints.zero_(), floats.zero_()
    _launch_scalars(run, function, values, ints, floats)
    assert run.compiled_launches == before + 1
    expected_ints, expected_floats = _expected(values)
    assert ints.tolist() == expected_ints
    assert floats.tolist() == expected_floats


def test_bool_and_numpy_scalars_equal_the_python_path(dev, compiled):
    """True for an integer is taken as 1; numpy scalars go through the Python path."""
    function, run = _scalars_launcher()
    values = [True, np.int8(-3), 7, np.int32(9), 10, 11, 12, np.uint32(13), np.uint64(14),
              np.float32(0.25), 2, 1.5, np.float64(2.5)]
    ints, floats = _launch_scalars(run, function, values)
    ints, floats = _launch_scalars(run, function, values, ints, floats)
    assert ints.tolist() == [1, -3, 7, 9, 10, 11, 12, 13, 14]
    assert floats.tolist() == [0.25, 2.0, 1.5, 2.5]


COPY_SOURCE = "__kernel void copy_{name}(__global {ctype}* p) {{ p[1] = p[0]; }}"
POINTER_DTYPES = {"i1": (torch.bool, "uchar"), "i8": (torch.int8, "char"), "i16": (torch.int16, "short"),
                  "i32": (torch.int32, "int"), "i64": (torch.int64, "long"), "u8": (torch.uint8, "uchar"),
                  "fp16": (torch.float16, "ushort"), "bf16": (torch.bfloat16, "ushort"),
                  "fp32": (torch.float32, "float"), "fp64": (torch.float64, "double")}


@pytest.mark.parametrize("triton_type", list(POINTER_DTYPES))
def test_pointers_of_each_dtype(dev, compiled, triton_type):
    """A view that starts inside its storage: the buffer starts at its data_ptr."""
    dtype, ctype = POINTER_DTYPES[triton_type]
    function = load(f"copy_{ctype}", COPY_SOURCE.format(name=ctype, ctype=ctype), [f"__global {ctype}*"])
    run = make_launcher(f"copy_{ctype}", {"p": f"*{triton_type}"})
    storage = torch.zeros(8, dtype=dtype)
    view = storage[3:]
    for value in (1, 0, 1):
        storage.zero_()
        view[0] = value
        launch(run, function, (1,), view)
        assert storage.tolist() == [0] * 3 + [value, value] + [0] * 3
    assert run.kind == "compiled" and run.compiled_launches == 2


@pytest.mark.parametrize("position, value, match", [
    (4, "1", r"'v_i1'.*must be an integer.*str"),
    (4, 2, r"'v_i1'.*out of range for i1"),
    (7, 2**31, r"'v_i32'.*out of range for i32"),
    (10, -1, r"'v_u16'.*out of range for u16"),
    (11, 2**32, r"'v_u32'.*out of range for u32"),
    (12, 2**64, r"'v_u64'.*out of range for u64"),
    (12, -1, r"'v_u64'.*out of range for u64"),
    (15, "1.0", r"'v_fp32'.*must be a number.*str"),
    (16, torch.ones(1), r"'v_fp64'.*must be a number.*Tensor"),
    (0, 3.0, r"'ints'.*must be a tensor.*float"),
])
def test_wrong_arguments_give_the_python_paths_error(dev, monkeypatch, position, value, match):
    messages = {}
    for kind in ("compiled", "python"):
        monkeypatch.setenv(compiled_launch.ENV_VAR, kind)
        function, run = _scalars_launcher()
        good = [EXTREMES[k][1] for k in SCALAR_KINDS]
        _launch_scalars(run, function, good)
        _launch_scalars(run, function, good)
        assert run.kind == kind
        args = [torch.zeros(9, dtype=torch.int64), torch.zeros(4, dtype=torch.float64), 64, None, *good]
        args[position] = value
        with pytest.raises(KernelArgumentError, match=match) as raised:
            launch(run, function, (1,), *args)
        messages[kind] = str(raised.value)
    assert messages["compiled"] == messages["python"]


def test_forced_python_path(dev, monkeypatch):
    monkeypatch.setenv(compiled_launch.ENV_VAR, "python")
    function, run = _scalars_launcher()
    values = [EXTREMES[k][1] for k in SCALAR_KINDS]
    for _ in range(2):
        ints, floats = _launch_scalars(run, function, values)
    assert run.kind == "python" and run.compiled_launches == 0
    assert (ints.tolist(), floats.tolist()) == _expected(values)


def test_no_compiler_falls_back_to_python(dev, compiled, monkeypatch, tmp_path):
    monkeypatch.setenv("CC", str(tmp_path / "no-such-compiler"))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compiled_launch, "_modules", {})
    function, run = _scalars_launcher()
    values = [EXTREMES[k][0] for k in SCALAR_KINDS]
    for _ in range(2):
        ints, floats = _launch_scalars(run, function, values)
    assert run.kind == "python"
    assert (ints.tolist(), floats.tolist()) == _expected(values)


def test_a_bad_launcher_setting_is_named(monkeypatch):
    monkeypatch.setenv(compiled_launch.ENV_VAR, "fast")
    with pytest.raises(ValueError, match=r"TRITON_SPIRV_LAUNCHER='fast'"):
        compiled_launch.enabled()


def test_hooks_are_called_through_the_python_path(dev, compiled):
    class Chain:
        def __init__(self):
            self.calls = [self]
            self.seen = []

        def __call__(self, metadata):
            self.seen.append(metadata)

    function, run = _scalars_launcher()
    values = [EXTREMES[k][1] for k in SCALAR_KINDS]
    ints, floats = _launch_scalars(run, function, values)
    enter, leave = Chain(), Chain()
    launch(run, function, (1,), ints, floats, 64, None, *values, launch_metadata="meta",
           enter_hook=enter, exit_hook=leave)
    assert enter.seen == ["meta"] and leave.seen == ["meta"]


@triton.jit
def _scaled_add(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * alpha + y, mask=mask)


@pytest.mark.parametrize("n", [1000, 70000])
def test_triton_kernel_with_many_programs(dev, compiled, n):
    """Through Triton's dispatch; on CPU targets many programs run in program loops
    (a hidden parameter the compiled launch sets)."""
    x, y, out = torch.randn(n), torch.randn(n), torch.empty(n)
    grid = (triton.cdiv(n, 16),)
    compiled_kernel = _scaled_add[grid](x, y, out, n, 2.5, BLOCK=16)
    assert compiled_kernel.run.kind == "compiled"
    before = compiled_kernel.run.compiled_launches
    for alpha in (0.5, -1.0):
        out.fill_(float("nan"))
        _scaled_add[grid](x, y, out, n, alpha, BLOCK=16)
        torch.testing.assert_close(out, x * alpha + y)
    assert compiled_kernel.run.compiled_launches == before + 2
