"""What the SPIR-V stage covers of what the OpenCL C path runs, on a device that takes
SPIR-V (Intel's runtime: `TRITON_OPENCL_DEVICE=intel`; skipped elsewhere), every kernel
launched with `program="spirv"` (no fallback to OpenCL C), compared with torch, and its
module checked with spirv-val:

- masked loads with `other` of bf16 and fp16, scalar (an scf.if yields the element or
  `other`) and block, and a bf16 value carried by a loop;
- every libdevice function that is a math op or an OpenCL C builtin of the OpenCL C
  path (spirv/opencl_std.py makes those upstream's spirv dialect has no op for);
- the functions without a SPIR-V form: the error names the function and the user's line.
"""
import importlib.util
import math
import shutil
import subprocess

import pytest
import torch
import triton
import triton.language as tl

from launcher import unpack_clbin
from triton_spirv.spirv.flatten import SpirvStageError

SPIRV_VAL = shutil.which("spirv-val")


def _device_takes_spirv() -> bool:
    from launcher import get_device
    from launcher.il import spirv_versions
    return bool(spirv_versions(get_device()))


pytestmark = pytest.mark.skipif(not _device_takes_spirv(), reason="the OpenCL device takes no SPIR-V "
                                "(Intel's runtime does: TRITON_OPENCL_DEVICE=intel)")


def _validate(compiled, tmp_path):
    """spirv-val on the module the launch ran, for its OpenCL environment (a module in
    fp16 may fail only on the Float16 capability, which those environments lack)."""
    if SPIRV_VAL is None:
        pytest.skip("spirv-val is not installed (apt-get install spirv-tools)")
    from triton_spirv.spirv.lower import environment
    from triton_spirv.target import resolve_target
    path = tmp_path / "kernel.spv"
    path.write_bytes(unpack_clbin(compiled.asm["clbin"])["spirv"])
    env = environment(bool(resolve_target().work_group_collectives))
    result = subprocess.run([SPIRV_VAL, "--target-env", env, str(path)], capture_output=True, text=True)
    errors = [line for line in (result.stdout + result.stderr).splitlines() if line.startswith("error")]
    only_fp16 = len(errors) == 1 and "Capability Float16 is not allowed" in errors[0]
    assert result.returncode == 0 or only_fp16, result.stdout + result.stderr


# --- masked loads with `other` ---------------------------------------------------------

@triton.jit
def scalar_load_kernel(x_ptr, out_ptr, M, OTHER: tl.constexpr):
    pid = tl.program_id(0)
    v = tl.load(x_ptr + pid, mask=pid < M, other=OTHER)
    tl.store(out_ptr + pid, v.to(tl.float32))


@triton.jit
def block_load_kernel(x_ptr, out_ptr, M, BLOCK: tl.constexpr, OTHER: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < M, other=OTHER)
    tl.store(out_ptr + offs, v.to(tl.float32))


@triton.jit
def loop_carried_kernel(x_ptr, out_ptr, M, K):
    pid = tl.program_id(0)
    best = tl.load(x_ptr + pid * K, mask=pid < M, other=-1.5)
    for k in range(1, K):
        v = tl.load(x_ptr + pid * K + k, mask=pid < M, other=-1.5)
        best = tl.where(v > best, v, best)       # a bf16 (or fp16) value carried by the loop
    tl.store(out_ptr + pid, best)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_scalar_masked_load_with_other(dtype, tmp_path):
    x = torch.randn(8).to(dtype)
    out = torch.full((12,), 7.0)
    compiled = scalar_load_kernel[(12,)](x, out, 8, OTHER=2.5, program="spirv")
    torch.testing.assert_close(out, torch.cat([x.float(), torch.full((4,), 2.5)]), rtol=0, atol=0)
    _validate(compiled, tmp_path)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_block_masked_load_with_other(dtype, tmp_path):
    x = torch.randn(50).to(dtype)
    out = torch.full((64,), 7.0)
    compiled = block_load_kernel[(4,)](x, out, 50, BLOCK=16, OTHER=-3.0, program="spirv")
    torch.testing.assert_close(out, torch.cat([x.float(), torch.full((14,), -3.0)]), rtol=0, atol=0)
    _validate(compiled, tmp_path)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_loop_carried_half_value(dtype, tmp_path):
    x = torch.randn(6, 5).to(dtype)
    out = torch.zeros(8, dtype=dtype)
    compiled = loop_carried_kernel[(8,)](x, out, 6, 5, program="spirv")
    expected = torch.cat([x.max(dim=1).values, torch.full((2,), -1.5, dtype=dtype)])
    torch.testing.assert_close(out, expected, rtol=0, atol=0)
    _validate(compiled, tmp_path)


# --- libdevice functions ---------------------------------------------------------------

def _uniform(low, high):
    return lambda n, g: low + (high - low) * torch.rand(n, generator=g, dtype=torch.float64)


def _integers(n, g):
    return torch.randint(-2**31, 2**31, (n,), generator=g, dtype=torch.int64)


def _hi(a, b):
    return (a * b) >> 32      # exact in int64 for int32 operands


def _tiny(n, g):
    """Where exp(x) - 1 and log(1 + x) lose most digits: expm1 and log1p must not."""
    return _uniform(-1e-4, 1e-4)(n, g)


# name -> (inputs for each operand, torch reference on float64 (int64) operands).
UNARY = {
    "acos": (_uniform(-0.95, 0.95), torch.acos), "acosh": (_uniform(1.1, 5), torch.acosh),
    "asin": (_uniform(-0.95, 0.95), torch.asin), "asinh": (_uniform(-3, 3), torch.asinh),
    "atan": (_uniform(-3, 3), torch.atan), "atanh": (_uniform(-0.9, 0.9), torch.atanh),
    "cbrt": (_uniform(-8, 8), lambda x: torch.sign(x) * x.abs() ** (1 / 3)),
    "ceil": (_uniform(-5, 5), torch.ceil), "cos": (_uniform(-3, 3), torch.cos),
    "cosh": (_uniform(-3, 3), torch.cosh), "erf": (_uniform(-2, 2), torch.erf),
    "erfc": (_uniform(-2, 4), torch.erfc), "exp": (_uniform(-3, 3), torch.exp),
    "exp2": (_uniform(-3, 3), torch.exp2), "exp10": (_uniform(-2, 2), lambda x: 10 ** x),
    "expm1": (_tiny, torch.expm1), "floor": (_uniform(-5, 5), torch.floor),
    "log": (_uniform(0.1, 5), torch.log), "log10": (_uniform(0.1, 5), torch.log10),
    "log1p": (_tiny, torch.log1p), "log2": (_uniform(0.1, 5), torch.log2),
    "rint": (_uniform(-5, 5), torch.round), "nearbyint": (_uniform(-5, 5), torch.round),
    "round": (_uniform(-5, 5), lambda x: torch.sign(x) * torch.floor(x.abs() + 0.5)),
    "rsqrt": (_uniform(0.1, 5), torch.rsqrt), "sin": (_uniform(-3, 3), torch.sin),
    "sinh": (_uniform(-3, 3), torch.sinh), "sqrt": (_uniform(0, 5), torch.sqrt),
    "tan": (_uniform(-1, 1), torch.tan), "tanh": (_uniform(-3, 3), torch.tanh),
    "trunc": (_uniform(-5, 5), torch.trunc),
    "cospi": (_uniform(-2, 2), lambda x: torch.cos(math.pi * x)),
    "sinpi": (_uniform(-2, 2), lambda x: torch.sin(math.pi * x)),
    "logb": (_uniform(-40, 40), lambda x: torch.floor(torch.log2(x.abs()))),
    "lgamma": (_uniform(0.1, 6), torch.lgamma),
    "tgamma": (_uniform(0.1, 6), lambda x: torch.exp(torch.lgamma(x))),
}
BINARY = {
    "atan2": (_uniform(-3, 3), _uniform(-3, 3), torch.atan2),
    "copysign": (_uniform(-3, 3), _uniform(-3, 3), torch.copysign),
    "pow": (_uniform(0.1, 3), _uniform(-2, 2), torch.pow),
    "fmod": (_uniform(-9, 9), _uniform(0.5, 2), torch.fmod),
    "hypot": (_uniform(-3, 3), _uniform(-3, 3), torch.hypot),
    "remainder": (_uniform(-9, 9), _uniform(0.5, 2),
                  lambda x, y: torch.tensor([math.remainder(a, b) for a, b in zip(x.tolist(), y.tolist())],
                                            dtype=torch.float64)),
    "fdim": (_uniform(-3, 3), _uniform(-3, 3), lambda x, y: torch.clamp(x - y, min=0)),
    "nextafter": (_uniform(-3, 3), _uniform(-3, 3), torch.nextafter),
}
IN_THE_TYPE = {"nextafter"}      # whose reference is computed in the kernel's type
INTEGER_BINARY = {
    "hadd": lambda a, b: (a + b) >> 1, "rhadd": lambda a, b: (a + b + 1) >> 1, "mulhi": _hi,
}
SOURCE = """
import triton
import triton.language as tl
from triton.language.extra import libdevice
"""
UNARY_TEMPLATE = """
@triton.jit
def {name}_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, libdevice.{name}(tl.load(x_ptr + offs)))
"""
BINARY_TEMPLATE = """
@triton.jit
def {name}_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, libdevice.{name}(tl.load(x_ptr + offs), tl.load(y_ptr + offs)))
"""
UNSUPPORTED = """
@triton.jit
def ldexp_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, libdevice.ldexp(x, 3))


@triton.jit
def add_rz_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, libdevice.add_rz(x, x))
"""


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    """A module of one kernel per function (Triton reads a kernel's source from its file)."""
    path = tmp_path_factory.mktemp("kernels") / "libdevice_kernels.py"
    path.write_text(SOURCE + "".join(UNARY_TEMPLATE.format(name=n) for n in UNARY)
                    + "".join(BINARY_TEMPLATE.format(name=n) for n in list(BINARY) + list(INTEGER_BINARY))
                    + UNSUPPORTED)
    spec = importlib.util.spec_from_file_location("libdevice_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


N = 64
TOLERANCE = {torch.float32: dict(rtol=4e-6, atol=1e-6), torch.float64: dict(rtol=1e-13, atol=1e-13)}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", list(UNARY) + list(BINARY))
def test_libdevice_function(kernels, name, dtype, tmp_path):
    g = torch.Generator().manual_seed(sum(map(ord, name)))
    *inputs, reference = UNARY[name] if name in UNARY else BINARY[name]
    args = [make(N, g).to(dtype) for make in inputs]
    out = torch.empty(N, dtype=dtype)
    compiled = getattr(kernels, f"{name}_kernel")[(1,)](*args, out, N=N, program="spirv")
    expected = reference(*(a if name in IN_THE_TYPE else a.double() for a in args)).to(dtype)
    torch.testing.assert_close(out, expected, **TOLERANCE[dtype])
    _validate(compiled, tmp_path)


@pytest.mark.parametrize("name", list(INTEGER_BINARY))
def test_libdevice_integer_function(kernels, name, tmp_path):
    g = torch.Generator().manual_seed(sum(map(ord, name)))
    a, b = _integers(N, g), _integers(N, g)
    out = torch.empty(N, dtype=torch.int32)
    compiled = getattr(kernels, f"{name}_kernel")[(1,)](a.int(), b.int(), out, N=N, program="spirv")
    torch.testing.assert_close(out, INTEGER_BINARY[name](a, b).int(), rtol=0, atol=0)
    _validate(compiled, tmp_path)


def test_placeholders_are_patched_in_the_module(kernels):
    """The module has the real instruction (OpenCL.std cbrt is 11), no placeholder
    decoration left."""
    import struct
    x = torch.rand(N)
    compiled = kernels.cbrt_kernel[(1,)](x, torch.empty(N), N=N, program="spirv")
    binary = unpack_clbin(compiled.asm["clbin"])["spirv"]
    words = struct.unpack(f"<{len(binary) // 4}I", binary)
    extended, decorated, i = [], [], 5
    while i < len(words):
        count, opcode = words[i] >> 16, words[i] & 0xFFFF
        if opcode == 12:
            extended.append(words[i + 4])
        if opcode == 71 and words[i + 2] == 30:
            decorated.append(words[i + 1])
        i += count
    assert 11 in extended and not decorated


@pytest.mark.parametrize("name, function", [("ldexp", "ldexp"), ("add_rz", "add_rz")])
def test_function_without_spirv_form_names_function_and_line(kernels, name, function):
    x = torch.rand(N)
    with pytest.raises(SpirvStageError, match=rf"kernel '{name}_kernel': func.call at "
                                              rf".*libdevice_kernels.py:\d+: calls the OpenCL C function "
                                              rf"'{function}'"):
        getattr(kernels, f"{name}_kernel")[(1,)](x, torch.empty(N), N=N, program="spirv")
    line = int(_error_line(kernels, name, x))
    source = open(kernels.__file__).read().splitlines()[line - 1]
    assert f"libdevice.{name}" in source


def _error_line(kernels, name, x):
    try:
        getattr(kernels, f"{name}_kernel")[(1,)](x, torch.empty(N), N=N, program="spirv")
    except SpirvStageError as err:
        return str(err).split("libdevice_kernels.py:")[1].split(":")[0]
    raise AssertionError("no error")


def test_unconvertible_op_error_names_the_line():
    """A diagnostic of the conversion names the user's `file:line`, not an MLIR location."""
    from mlir import ir
    from triton_spirv.spirv.lower import _where
    from triton_spirv.stages import new_context
    with new_context():
        loc = ir.Location.name("v5", ir.Location.file("/k/kernel.py", 30, 10))
        assert _where(loc) == "/k/kernel.py:30"
