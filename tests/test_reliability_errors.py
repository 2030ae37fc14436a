"""Bad input gives a clear error that says what and where, and leaves nothing half-written.

Each parametrized case is one bad input; BAD_INPUTS counts them (printed at the end).
"""

import os
import subprocess
import sys
import textwrap

import pytest
import torch

import triton
import triton.language as tl
from triton.runtime.errors import OutOfResources

from launcher import GridError, KernelArgumentError, OpenCLBuildError
from launcher.program import python_origin

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(HERE)
THIS_FILE = os.path.basename(__file__)
BAD_INPUTS = []


def bad(name):
    BAD_INPUTS.append(name)


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """A private Triton cache, so that the test compiles (and can fail) for real."""
    monkeypatch.setattr(triton.knobs.cache, "dir", str(tmp_path / "cache"))
    return tmp_path / "cache"


# ---------------------------------------------------------------------------------------
# Malformed TTIR and HLO text

GOOD_TTIR = """\
module {
  tt.func public @k(%arg0: !tt.ptr<f32>) {
    %cst = arith.constant 1.000000e+00 : f32
    tt.store %arg0, %cst : !tt.ptr<f32>
    tt.return
  }
}
"""

BAD_TTIR = {
    "unknown op": GOOD_TTIR.replace("tt.store", "tt.stroe"),
    "missing operand": GOOD_TTIR.replace("tt.store %arg0, %cst", "tt.store %arg0,"),
    "undefined value": GOOD_TTIR.replace("%cst : !tt", "%nope : !tt"),
    "wrong type": GOOD_TTIR.replace("arith.constant 1.000000e+00 : f32", "arith.constant 1.000000e+00 : i32"),
    "unclosed region": GOOD_TTIR.rsplit("}", 1)[0],
    "garbage": "\x00\x01 not mlir at all {{{",
    "bad pointer type": GOOD_TTIR.replace("!tt.ptr<f32>", "!tt.ptr<f32", 1),
}


def test_good_ttir_reads():
    from triton_spirv.stages import new_context
    from triton_spirv.ttir import read_ttir
    with new_context() as ctx:
        module = read_ttir(GOOD_TTIR, ctx)
        (kernel,) = module.body.operations
        assert kernel.operation.name == "tt.func"
        assert [op.operation.name for op in kernel.regions[0].blocks[0].operations] == [
            "arith.constant", "tt.store", "tt.return"]


@pytest.mark.parametrize("case", sorted(BAD_TTIR))
def test_malformed_ttir_is_a_read_error_with_its_line(case):
    from triton_spirv.stages import new_context
    from triton_spirv.ttir import read_ttir
    from triton_spirv.ttir.errors import TTIRReadError
    bad(f"TTIR: {case}")
    with pytest.raises(TTIRReadError) as info, new_context() as ctx:
        read_ttir(BAD_TTIR[case], ctx)
    assert "TTIR line" in str(info.value) and info.value.line >= 1


BAD_HLO = {
    "no module": "ENTRY e {\n ROOT p = f32[2] parameter(0)\n}\n",
    "unknown shape": "HloModule m\nENTRY e {\n ROOT p = f33[2] parameter(0)\n}\n",
    "unclosed computation": "HloModule m\nENTRY e {\n ROOT p = f32[2] parameter(0)\n",
    "undefined operand": "HloModule m\nENTRY e {\n p = f32[2] parameter(0)\n ROOT a = f32[2] add(p, q)\n}\n",
    "stray bracket": "HloModule m\nENTRY e ] {\n ROOT p = f32[2] parameter(0)\n}\n",
    "garbage": "\x00\x01\x02",
}


@pytest.mark.parametrize("case", sorted(BAD_HLO))
def test_malformed_hlo_is_an_hlo_error(case):
    from triton_spirv.hlo.errors import HloError
    from triton_spirv.hlo.reader import read_hlo
    bad(f"HLO: {case}")
    with pytest.raises(HloError) as info:
        read_hlo(BAD_HLO[case])
    assert str(info.value)


# ---------------------------------------------------------------------------------------
# Unsupported ops and types


@triton.jit
def inline_asm_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(x_ptr + offs, y)


def test_unsupported_op_names_op_kernel_and_line():
    bad("unsupported op: inline asm")
    with pytest.raises(Exception) as info:
        inline_asm_kernel[(1,)](torch.zeros(16), BLOCK=16)
    message = str(info.value)
    assert "tt.elementwise_inline_asm" in message and "inline_asm_kernel" in message
    assert f"{THIS_FILE}:" in message


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def test_unsupported_tensor_dtype_is_refused():
    bad("complex64 tensor")
    with pytest.raises((KeyError, TypeError, ValueError), match="complex"):
        copy_kernel[(1,)](torch.zeros(4, dtype=torch.complex64), torch.zeros(4), 4, BLOCK=4)


# ---------------------------------------------------------------------------------------
# Arguments


@pytest.mark.parametrize("case, call, error, match", [
    ("too few arguments", lambda x, o: copy_kernel[(1,)](x, o, BLOCK=16), TypeError, "missing .*'n'"),
    ("too many arguments", lambda x, o: copy_kernel[(1,)](x, o, 4, 5, BLOCK=16), TypeError, "BLOCK"),
    ("string for an int", lambda x, o: copy_kernel[(1,)](x, o, "4", BLOCK=16), TypeError, "str"),
    ("list for a pointer", lambda x, o: copy_kernel[(1,)]([1.0] * 4, o, 4, BLOCK=16), TypeError, "list"),
    ("unknown keyword", lambda x, o: copy_kernel[(1,)](x, o, 4, BLOCK=16, blokc=3), KeyError, "blokc"),
    ("meta tensor", lambda x, o: copy_kernel[(1,)](torch.empty(4, device="meta"), o, 4, BLOCK=16),
     KernelArgumentError, "'x_ptr'.*on device meta"),
    ("int beyond 64 bits", lambda x, o: copy_kernel[(1,)](x, o, 2**64, BLOCK=16), Exception, None),
])
def test_wrong_arguments(case, call, error, match):
    bad(f"argument: {case}")
    x = torch.rand(4)
    out = torch.full((4,), -1.0)
    with pytest.raises(error, match=match):
        call(x, out)
    assert torch.equal(out, torch.full((4,), -1.0))  # nothing written


class FakeCudaTensor:
    """What the launcher sees of a CUDA tensor (a CPU-only torch cannot make one)."""
    device = torch.device("cuda", 0)
    dtype = torch.float32

    def data_ptr(self):
        return 0x7f0000000000


def test_cuda_tensor_is_refused_by_name():
    bad("argument: CUDA tensor")
    x, out = torch.rand(4), torch.full((4,), -1.0)
    compiled = copy_kernel[(1,)](x, out, 4, BLOCK=16)
    with pytest.raises(KernelArgumentError, match=r"'x_ptr'.*device cuda.*CPU tensors"):
        compiled[(1, 1, 1)](FakeCudaTensor(), out, 4, 16)


def test_zero_size_tensors_and_empty_grid_do_nothing():
    bad("zero-size tensors"), bad("grid of zero")
    empty = torch.empty(0)
    copy_kernel[(1,)](empty, torch.empty(0), 0, BLOCK=16)
    copy_kernel[(1,)](empty, torch.empty(0), 0, BLOCK=16, bounds_check=True)
    out = torch.full((4,), -1.0)
    copy_kernel[(0,)](torch.rand(4), out, 4, BLOCK=16)
    assert torch.equal(out, torch.full((4,), -1.0))


def test_non_contiguous_views_are_read_through_their_strides():
    """Kernels take strides, so views need not be contiguous; the buffer a view gets
    starts at its first element (storage offset included)."""
    bad("non-contiguous view")
    from reliability_kernels import run_transpose
    run_transpose(19, 23)


@pytest.mark.parametrize("case, grid, match", [
    ("negative", (-1,), "negative"),
    ("beyond i32 program ids", (2**31,), "beyond the limit"),
    ("float", (2.5,), "integers"),
    ("beyond in y", (1, 2**31), "dimension 1"),
])
def test_bad_grids(case, grid, match):
    bad(f"grid: {case}")
    out = torch.full((4,), -1.0)
    with pytest.raises(GridError, match=match):
        copy_kernel[grid](torch.rand(4), out, 4, BLOCK=16)
    assert torch.equal(out, torch.full((4,), -1.0))


# ---------------------------------------------------------------------------------------
# Device limits and build failures


@triton.jit
def huge_tile_kernel(out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.cumsum(tl.load(out_ptr + offs), 0))


def test_too_much_local_memory_names_kernel_tiles_and_limit(fresh_cache):
    bad("local memory beyond the device")
    import launcher
    limit = int(launcher.get_device().device.local_mem_size)
    block = 1 << max(10, (limit // 4).bit_length())  # one float tile alone is over the limit
    if block > 2**20:
        pytest.skip(f"the device has {limit} bytes of local memory, more than Triton's largest tile")
    with pytest.raises(OutOfResources) as info:
        huge_tile_kernel[(1,)](torch.zeros(block), BLOCK=block)
    message = str(info.value)
    assert "huge_tile_kernel" in message and f"float[{block}]" in message and f"allows {limit} bytes" in message
    assert not any(p.endswith(".clbin") for _, _, files in os.walk(fresh_cache) for p in files)


def test_too_many_work_items_names_kernel_and_limit():
    bad("work-group beyond the device")
    import launcher
    from launcher import load_binary, pack_clbin
    limit = int(launcher.get_device().device.max_work_group_size)
    source = "__kernel void wide(__global float* x) { x[get_global_id(0)] = 1.0f; }"
    clbin = pack_clbin("wide", source, ["__global float*"], local_size=(limit * 2, 1, 1))
    with pytest.raises(OutOfResources, match=rf"kernel 'wide'.*{limit * 2}.*allows {limit}"):
        load_binary("wide", clbin, 0, 0)


@triton.jit
def build_failure_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 3.0)


def test_opencl_build_failure_shows_log_cl_line_and_python_line(fresh_cache, monkeypatch):
    bad("OpenCL build failure")
    from triton_spirv import stages
    original = stages.memref_to_opencl

    def broken(text, **kwargs):
        emitted = original(text, **kwargs)
        lines = emitted.source.splitlines()
        # Break the line after the first store's origin comment.
        at = next(i for i, line in enumerate(lines) if "tl.store" in line and line.strip().startswith("//"))
        lines.insert(at + 1, "  this is not C;")
        emitted.source = "\n".join(lines) + "\n"
        return emitted

    monkeypatch.setattr(stages, "memref_to_opencl", broken)
    x = torch.ones(16)
    for _ in range(2):  # nothing half-written: a second try fails the same way
        with pytest.raises(OpenCLBuildError) as info:
            # OpenCL C even where the device takes SPIR-V: the build log is the C compiler's.
            build_failure_kernel[(1,)](x, BLOCK=16, program="source")
        message = str(info.value)
        assert "build_failure_kernel" in message and info.value.log
        assert "this is not C" in message
        assert f"<- from {THIS_FILE}:" in message, message
    assert torch.equal(x, torch.ones(16))
    assert not any(p.endswith(".clbin") for _, _, files in os.walk(fresh_cache) for p in files)


def test_python_origin_of_cl_lines():
    source = "__kernel void k() {\n  // x = 1  (k.py:3)\n  int x = 1;\n  int y = x;\n  // z  (k.py:9)\n  z;\n}\n"
    assert python_origin(source, 3) == "k.py:3"
    assert python_origin(source, 4) == "k.py:3"
    assert python_origin(source, 6) == "k.py:9"
    assert python_origin(source, 1) is None


def test_no_opencl_device_at_all(tmp_path):
    bad("no OpenCL device")
    script = textwrap.dedent(f"""
        import sys, torch
        sys.path.insert(0, {HERE!r})
        from reliability_kernels import add_kernel
        from launcher import NoOpenCLDeviceError
        try:
            x = torch.rand(8)
            add_kernel[(1,)](x, x, x, 8, BLOCK=8)
        except NoOpenCLDeviceError as exc:
            print("RAISED", str(exc).replace(chr(10), " "))
    """)
    env = dict(os.environ, OCL_ICD_VENDORS=str(tmp_path), OCL_ICD_FILENAMES="",
               TRITON_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("TRITON_OPENCL_DEVICE", None)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=REPO_ROOT,
                          timeout=300)
    assert "RAISED No usable OpenCL device" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert "pocl-opencl-icd" in proc.stdout


def test_bad_input_count(capsys, request):
    if request.config.getoption("markexpr"):
        pytest.skip("counts the bad inputs of the whole file; a marker selection (-m) runs part of it")
    with capsys.disabled():
        print(f"\nbad inputs tried in {THIS_FILE}: {len(BAD_INPUTS)}")
    assert len(BAD_INPUTS) >= 30
