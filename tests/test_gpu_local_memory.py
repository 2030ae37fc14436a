"""Tutorial kernel families shaped for a GPU with 64 KB of local memory
(TRITON_SPIRV_TARGET=gpu-64k, triton_spirv/target.py) on the device in use: each
kernel's `__local` bytes, from the compiled kernel's metadata, are within 64 KB and the
tutorial's own check against torch passes. Accumulators, pointer tiles and loaded
tiles that only their owners touch are private (block_ownership.py,
work_group_sharing.py, owner_copies.py); fills replace copies of zero tiles
(fill_forwarding.py); loop-carried sums are updated in place (in_place_updates.py); the
stages of attention share their tiles (sequential_tiles.py).

The target variable is read once per process, so every family runs in a child process.
"""
import json
import os
import shutil
import subprocess
import sys

import pytest
import torch
import triton

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMIT = 64 * 1024

def matmul_128x64x64(tutorial):
    """Tutorial 03's largest autotune config (BLOCK 128x64x64), against torch."""
    torch.manual_seed(0)
    m, n, k = 160, 96, 136
    a = torch.rand((m, k), dtype=torch.float16) - 0.5
    b = torch.rand((k, n), dtype=torch.float16) - 0.5
    c = torch.empty((m, n), dtype=torch.float16)
    tutorial.matmul_kernel.fn[(triton.cdiv(m, 128) * triton.cdiv(n, 64),)](
        a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
        c.stride(1), BLOCK_SIZE_M=128, BLOCK_SIZE_N=64, BLOCK_SIZE_K=64, GROUP_SIZE_M=8,
        ACTIVATION="")
    torch.testing.assert_close(c.float(), a.float() @ b.float(), atol=1e-2, rtol=0)


def layer_norm_dwdb(tutorial, block_m=32, block_n=128):
    """The backward's dw/db kernel on its own against torch, at sizes that leave partial
    row and column blocks (the tutorial's check sums whole blocks only) and a row
    length that is no multiple of 16 (elements copied one by one at the block's end)."""
    torch.manual_seed(0)
    m, n = 45, 300
    dw, db = torch.randn((m, n)), torch.randn((m, n))
    final_dw, final_db = (torch.empty((n,), dtype=torch.float16) for _ in range(2))
    tutorial._layer_norm_bwd_dwdb[(triton.cdiv(n, block_n),)](
        dw, db, final_dw, final_db, m, n, BLOCK_SIZE_M=block_m, BLOCK_SIZE_N=block_n)
    torch.testing.assert_close(final_dw.float(), dw.sum(0), atol=1e-2, rtol=1e-3)
    torch.testing.assert_close(final_db.float(), db.sum(0), atol=1e-2, rtol=1e-3)


# family -> (tutorial file, the check to run on the loaded module)
FAMILIES = {
    "matmul": ("03-matrix-multiplication.py", matmul_128x64x64),
    "attention": ("06-fused-attention.py",
                  lambda t: t.test_op(1, 2, 128, 64, True, torch.float16)),
    "persistent-matmul": ("09-persistent-matmul.py", lambda t: t.validate(96, 160, 64)),
    # forward, dx and dw/db against torch (the tutorial's own check)
    "layer-norm": ("05-layer-norm.py", lambda t: t.test_layer_norm(151, 512, torch.float16)),
    "layer-norm-dwdb": ("05-layer-norm.py", layer_norm_dwdb),
}


def child(family: str) -> None:
    """Runs one family's check and prints its compiled kernels as JSON."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from test_tutorials import load_tutorial
    records = []

    def listener(metadata, **_rest):
        records.append({"kernel": metadata["name"], "local_bytes": int(metadata["local_mem_bytes"]),
                        "local_size": list(metadata["local_size"])})

    triton.knobs.compilation.listener = listener
    file_name, check = FAMILIES[family]
    check(load_tutorial(file_name))
    print("RECORDS " + json.dumps(records))


def run_family(family: str, tmp_path, extra_env=None) -> tuple[int, list, str]:
    env = dict(os.environ, TRITON_SPIRV_TARGET="gpu-64k",
               TRITON_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=ROOT)
    env.update(extra_env or {})
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), family], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=1200)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RECORDS ")]
    records = json.loads(lines[-1][len("RECORDS "):]) if lines else []
    return proc.returncode, records, proc.stdout[-3000:] + proc.stderr[-3000:]


@pytest.mark.parametrize("family", FAMILIES)
def test_tutorial_family_fits_64k_and_matches_torch(family, tmp_path):
    code, records, output = run_family(family, tmp_path)
    assert code == 0, output
    assert records, output
    for record in records:
        assert record["local_size"][0] > 1, record     # GPU-shaped: a work-group per program
        assert record["local_bytes"] <= LIMIT, record


def test_layer_norm_dwdb_fits_32k(tmp_path):
    """The dw/db kernel keeps only its two 32x128 fp32 sums in __local memory (every
    work-item reads them across rows for the column sums): 32 KB, within gpu-32k."""
    code, records, output = run_family("layer-norm-dwdb", tmp_path, {"TRITON_SPIRV_TARGET": "gpu-32k"})
    assert code == 0, output
    assert records and all(r["local_bytes"] <= 32 * 1024 for r in records), records


def test_wide_layer_norm_dwdb_names_its_tiles(tmp_path):
    """The dw/db kernel at 128x128 blocks keeps two 128x128 fp32 sums that every
    work-item reads across rows for the final column sums: 64 KB each, beyond the
    target's local memory; it fails at compile time naming the kernel, the target and
    its tiles."""
    code, _records, output = run_family("layer-norm-dwdb-wide", tmp_path)
    assert code != 0
    assert "kernel 'layer_norm_bwd_dwdb' needs" in output, output
    assert "target 'gpu-64k'" in output and "float[128x128] = 65536 bytes from 05-layer-norm.py:" in output


@pytest.mark.skipif(shutil.which("oclgrind") is None, reason="oclgrind is not installed")
@pytest.mark.parametrize("family", ["matmul", "attention", "persistent-matmul", "layer-norm",
                                    "layer-norm-dwdb"])
def test_tutorial_family_is_race_free_under_oclgrind_at_64k(family, tmp_path):
    """The family's launches, recorded on the device in use (launcher/replay.py), replay
    under `oclgrind --data-races` with the target's 64 KB of local memory: no race, and
    every buffer as the device computed it."""
    from launcher.replay import list_recordings
    from test_oclgrind import REPLAY, _diagnostics
    code, _records, output = run_family(family, tmp_path,
                                        {"TRITON_SPIRV_RECORD_DIR": str(tmp_path / "rec")})
    assert code == 0, output
    paths = list_recordings(str(tmp_path / "rec"))
    assert paths, output
    proc = subprocess.run([shutil.which("oclgrind"), "--data-races", "--local-mem-size", str(LIMIT),
                           sys.executable, REPLAY, "--expand-strided-copies", *paths],
                          capture_output=True, text=True, timeout=1200, cwd=ROOT)
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith('{"name"')]
    assert len(results) == len(paths), proc.stdout[-3000:] + proc.stderr[-3000:]
    assert all(r["ok"] for r in results), results
    messages = _diagnostics(proc.stderr)
    assert not any(messages.values()), messages


FAMILIES_ONLY_IN_CHILD = {
    "layer-norm-dwdb-wide": ("05-layer-norm.py", lambda t: layer_norm_dwdb(t, 128, 128)),
}

if __name__ == "__main__":
    FAMILIES.update(FAMILIES_ONLY_IN_CHILD)
    child(sys.argv[1])
