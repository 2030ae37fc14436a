"""Every stage can be inspected: the triton-spirv command and the dump directory."""
import os
import subprocess
import sys

import torch

import triton
import triton.language as tl

from spirv_expectations import spirv_stages
from triton_spirv import cli

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(HERE, "data", "kernels_for_cli.py")
SIGNATURE = "x_ptr=*fp32,out_ptr=*fp32,n=i32,factor=fp32"


def test_cli_prints_opencl(capsys):
    assert cli.main(["compile", KERNELS, "scale_kernel", "--signature", SIGNATURE,
                     "--constexpr", "BLOCK=256"]) == 0
    out = capsys.readouterr().out
    assert "__kernel void scale_kernel" in out
    assert "vload16(0, x_ptr" in out


def test_cli_writes_every_stage(tmp_path):
    assert cli.main(["compile", KERNELS, "scale_kernel", "--signature", SIGNATURE,
                     "--constexpr", "BLOCK=128", "--stage", "all", "-o", str(tmp_path)]) == 0
    written = sorted(os.listdir(tmp_path))
    stages = {"cl", "linalg", "memref", "ttir"} | spirv_stages("spvasm", "spv")
    assert written == [f"scale_kernel.{ext}" for ext in sorted(stages)]
    assert "linalg.generic" in (tmp_path / "scale_kernel.linalg").read_text()
    assert "memref.reinterpret_cast" in (tmp_path / "scale_kernel.memref").read_text()
    assert "tt.load" in (tmp_path / "scale_kernel.ttir").read_text()


def test_cli_reports_bad_arguments(capsys):
    assert cli.main(["compile", KERNELS, "scale_kernel", "--signature", "x_ptr=*fp32",
                     "--constexpr", "BLOCK=128"]) == 2
    err = capsys.readouterr().err
    assert "argument 'out_ptr'" in err
    assert cli.main(["compile", KERNELS, "no_such_kernel"]) == 2
    assert "no @triton.jit function named 'no_such_kernel'" in capsys.readouterr().err


DUMP_SCRIPT = """
import torch, triton, triton.language as tl

@triton.jit
def negate_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, -tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

x = torch.arange(100, dtype=torch.float32)
negate_kernel[(1,)](x, 100, BLOCK=128)
assert torch.equal(x, -torch.arange(100, dtype=torch.float32))
"""


def test_dump_directory_gets_every_stage(tmp_path):
    env = dict(os.environ, TRITON_SPIRV_DUMP_DIR=str(tmp_path / "dump"),
               TRITON_CACHE_DIR=str(tmp_path / "cache"))
    script = tmp_path / "negate.py"  # @triton.jit needs a real source file
    script.write_text(DUMP_SCRIPT)
    subprocess.run([sys.executable, str(script)], env=env, check=True)
    folder = tmp_path / "dump" / "negate_kernel"
    for ext in ("ttir", "linalg", "memref", "cl", "clbin"):
        assert (folder / f"negate_kernel.{ext}").exists(), ext
    assert "__kernel void negate_kernel" in (folder / "negate_kernel.cl").read_text()


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def test_compiled_kernel_keeps_all_stages():
    x = torch.rand(300)
    y = torch.empty_like(x)
    compiled = copy_kernel[(3,)](x, y, 300, BLOCK=128)
    assert torch.equal(x, y)
    assert set(("ttir", "linalg", "memref", "cl", "clbin")) <= set(compiled.asm)
    assert compiled.asm["cl"].lstrip().startswith("//")
    assert compiled.metadata.name == "copy_kernel"
    assert compiled.metadata.shared > 0  # the __local tiles
