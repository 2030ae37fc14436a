"""GPU-shaped tl.dot: the register blocks of the accumulator follow the work-group
(memref_stage/register_blocking.py, gpu_block): at least one block per work-item where
the tile allows it, consecutive work-items on consecutive column blocks. Tutorial 03's
matmul in the GPU shape against torch over a handful of block sizes, K steps, num_warps
and element types, as OpenCL C and as SPIR-V where the device takes it; the whole
sweep is scripts/gpu_dot_sweep.py. Sizes are no multiple of the blocks (masked edges)."""
import os
import re
import sys

import pytest

from launcher import get_device
from launcher.il import spirv_versions
from triton_spirv.target import TARGET_ENV

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "scripts"))
import gpu_dot_sweep  # noqa: E402

# (BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, num_warps, element type)
CONFIGS = [
    (64, 64, 32, 4, "float32"),     # 4 rows of float8 per work-item, one block each
    (64, 64, 64, 4, "float16"),
    (16, 16, 16, 4, "float32"),     # 256 elements over 128 work-items: rows of float2
    (32, 64, 16, 2, "float16"),
    (128, 64, 32, 8, "float32"),
    (64, 32, 32, 1, "float32"),     # 32 work-items: blocks of 64 elements
]


@pytest.fixture(autouse=True)
def _launch_option_picks_the_shape(monkeypatch):
    monkeypatch.delenv(TARGET_ENV, raising=False)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "{}x{}x{}-nw{}-{}".format(*c))
def test_matmul_gpu_shape(config):
    gpu_dot_sweep.check(*config)


# float32 only: GPU-shaped float16 matmuls keep a zero tile in a private array, which
# the SPIR-V stage refuses on Intel's runtime (quirk private_zero_tiles_in_gpu_spirv).
@pytest.mark.parametrize("config", [c for c in CONFIGS if c[4] == "float32"],
                         ids=lambda c: "{}x{}x{}-nw{}-{}".format(*c))
def test_matmul_gpu_shape_spirv(config, monkeypatch):
    monkeypatch.delenv("TRITON_SPIRV_PROGRAM", raising=False)
    if not spirv_versions(get_device()):
        pytest.skip("the device takes no SPIR-V")
    gpu_dot_sweep.check(*config, program="spirv")


def test_every_work_item_owns_a_block():
    """64x64 over 128 work-items: 128 blocks of 4 rows by float8, one per work-item,
    work-item lid on column block lid % 8 (consecutive work-items, consecutive columns)."""
    source = gpu_dot_sweep.check(64, 64, 32, 4, "float32").asm["cl"]
    loop = re.search(r"for \(long (\w+) = lid_x; \1 < (\d+); \1 \+= 128\) \{\n"
                     r"\s*long (\w+) = .*\(ulong\)\1 / \(ulong\)8\)\) \* 4;\n"
                     r"\s*long (\w+) = .*\(ulong\)\1 % \(ulong\)8\)\) \* 8;", source)
    assert loop is not None and loop.group(2) == "128", source
    assert re.search(r"float8 \w+ = fma\(", source) and "float16" not in source, source
