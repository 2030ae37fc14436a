"""TRITON_SPIRV_PROFILE=1: OpenCL event times per launch, a table at exit and JSON; with it
unset, no profiling queue and no extra work per launch."""
import json
import os
import subprocess
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(HERE)

SCRIPT = textwrap.dedent("""
    import json, sys, time
    import pyopencl as cl
    import torch, triton, triton.language as tl
    import launcher

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

    n = 300_000
    x, y = torch.rand(n), torch.rand(n)
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)   # compiles
    start = time.perf_counter()
    for _ in range(5):
        compiled = add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    wall = time.perf_counter() - start
    assert torch.equal(out, x + y)
    queue = launcher.get_device().queue
    launcher_obj = compiled.run
    print(json.dumps({
        "wall_s": wall,
        "queue_profiling": bool(queue.properties & cl.command_queue_properties.PROFILING_ENABLE),
        "plain_enqueue": launcher_obj._enqueue is cl.enqueue_nd_range_kernel,
    }))
""")


def _run(tmp_path, **env):
    script = tmp_path / "profiled.py"
    script.write_text(SCRIPT)
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_SPIRV_PROFILE")}
    environment.update(PYTHONPATH=REPO_ROOT, TRITON_CACHE_DIR=str(tmp_path / "cache"), **env)
    run = subprocess.run([sys.executable, str(script)], env=environment, capture_output=True,
                         text=True, timeout=240)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1]), run.stderr


def test_profile_records_every_launch(tmp_path):
    report_path = tmp_path / "profile.json"
    facts, stderr = _run(tmp_path, TRITON_SPIRV_PROFILE="1", TRITON_SPIRV_PROFILE_JSON=str(report_path))
    assert facts["queue_profiling"] and not facts["plain_enqueue"]
    rows = {row["kernel"]: row for row in json.loads(report_path.read_text())["kernels"]}
    row = rows["add_kernel"]
    assert row["calls"] == 6
    # Each launch passes three float32 tensors of 300000 elements.
    assert row["bytes"] == 6 * 3 * 300_000 * 4
    # Event times are device times: positive, and the five timed launches took no longer
    # than the wall-clock time around them.
    assert 0 < row["median_us"] * 5 / 1e6 <= facts["wall_s"]
    assert abs(row["gbps"] - row["bytes"] / (row["total_ms"] * 1e6)) < 1e-6 * row["gbps"]
    assert "triton-spirv kernel profile" in stderr and "add_kernel" in stderr


def test_profile_off_changes_nothing(tmp_path):
    facts, stderr = _run(tmp_path)
    assert not facts["queue_profiling"]
    assert facts["plain_enqueue"]
    assert "kernel profile" not in stderr
