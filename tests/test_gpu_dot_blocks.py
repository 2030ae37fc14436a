"""GPU-shaped tl.dot: the register blocks of the accumulator follow the work-group
(memref_stage/register_blocking.py, gpu_block): at least one block per work-item where
the tile allows it, consecutive work-items on consecutive column blocks. Tutorial 03's
matmul in the GPU shape against torch over a handful of block sizes, K steps, num_warps
and element types, as OpenCL C and as SPIR-V where the device takes it; the whole
sweep is scripts/gpu_dot_sweep.py. Sizes are no multiple of the blocks (masked edges)."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from launcher import get_device
from launcher.il import spirv_versions
from triton_spirv.target import TARGET_ENV

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
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


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "{}x{}x{}-nw{}-{}".format(*c))
def test_matmul_gpu_shape(config, monkeypatch):
    monkeypatch.delenv(TARGET_ENV, raising=False)   # the launch option picks the shape
    gpu_dot_sweep.check(*config)


# float32 only: GPU-shaped float16 matmuls keep a zero tile in a private array, which
# the SPIR-V stage refuses on Intel's runtime (quirk private_zero_tiles_in_gpu_spirv).
@pytest.mark.parametrize("config", [c for c in CONFIGS if c[4] == "float32"],
                         ids=lambda c: "{}x{}x{}-nw{}-{}".format(*c))
def test_matmul_gpu_shape_spirv(config, monkeypatch):
    monkeypatch.delenv(TARGET_ENV, raising=False)
    monkeypatch.delenv("TRITON_SPIRV_PROGRAM", raising=False)
    if not spirv_versions(get_device()):
        pytest.skip("the device takes no SPIR-V")
    gpu_dot_sweep.check(*config, program="spirv")


def test_every_work_item_owns_a_block(monkeypatch):
    """64x64 over 128 work-items: 128 blocks of 4 rows by float8, one per work-item,
    work-item lid on column block lid % 8 (consecutive work-items, consecutive columns),
    on every device."""
    monkeypatch.delenv(TARGET_ENV, raising=False)
    source = gpu_dot_sweep.check(64, 64, 32, 4, "float32").asm["cl"]
    blocks, per_row, width = 128, 8, 8
    loop = re.search(r"for \(long (\w+) = lid_x; \1 < (\d+); \1 \+= 128\) \{\n"
                     rf"\s*long (\w+) = .*\(ulong\)\1 / \(ulong\){per_row}\)\) \* 4;\n"
                     rf"\s*long (\w+) = .*\(ulong\)\1 % \(ulong\){per_row}\)\) \* {width};", source)
    assert loop is not None and loop.group(2) == str(blocks), source
    assert re.search(rf"float{width} \w+ = fma\(", source), source


# (BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, num_warps, element type, M, N, K): small
# launches for Oclgrind, masked edges in every dimension.
OCLGRIND_CONFIGS = [(64, 64, 32, 4, "float32", 80, 72, 40), (16, 16, 16, 4, "float16", 20, 24, 36)]
# Oclgrind's default 32 KiB of local memory is less than the 64x64 matmul's tiles.
LOCAL_MEM_BYTES = 262144


@pytest.mark.skipif(shutil.which("oclgrind") is None, reason="oclgrind is not installed")
def test_race_free_under_oclgrind(tmp_path, monkeypatch):
    """The blocks each work-item owns, between the barriers around the K step's tiles:
    the replayed launches (launcher/replay.py) under `oclgrind --data-races`
    (out-of-bounds accesses are always checked) give no message and the device's
    buffers. (Oclgrind 21.10's --uninitialized stops at the LLVM `freeze` that the
    OpenCL compiler makes of the tutorial's program-id divisions.)"""
    from launcher.replay import list_recordings, recording
    from test_oclgrind import REPLAY_ARGS
    monkeypatch.delenv(TARGET_ENV, raising=False)
    paths = []
    for bm, bn, bk, warps, dtype, *size in OCLGRIND_CONFIGS:
        folder = str(tmp_path / f"{bm}x{bn}x{bk}")
        with recording(folder):
            gpu_dot_sweep.check(bm, bn, bk, warps, dtype, size=tuple(size))
        paths += list_recordings(folder)
    assert len(paths) == len(OCLGRIND_CONFIGS)
    proc = subprocess.run(["oclgrind", "--data-races", "--local-mem-size", str(LOCAL_MEM_BYTES),
                           sys.executable, os.path.join(ROOT, "launcher", "replay.py"),
                           *REPLAY_ARGS, *paths],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith('{"name"')]
    assert len(results) == len(paths), proc.stdout[-2000:] + proc.stderr[-2000:]
    assert '"device": "Oclgrind Simulator"' in proc.stdout
    assert all(result["ok"] for result in results), results
    messages = [line for line in proc.stderr.splitlines()
                if line.strip() and not line.startswith("###")]
    assert not messages, "\n".join(messages[:40])
