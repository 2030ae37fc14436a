"""Warp-model numbers of the GPU shape of tensor atomics and column sums, next to
hand-written kernels (reference_kernels/atomics_columns.cl).

    python3 benchmarks/warp_atomics_columns.py        # needs oclgrind and liboclgrind-dev

Records one GPU-shaped launch (`gpu-64k`) per case at a size Oclgrind runs in seconds,
replays the recordings under Oclgrind with the warp-model plugin
(shared/tools/warp_model beside the checkout, or $WARP_MODEL_DIR), runs the reference kernels the
same way, and prints one line per kernel: lanes, coalescing, bank conflicts, barriers
per group and work balance. Nothing here is a test (tests/test_warp_atomics_columns.py
checks the thresholds).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [HERE, ROOT]
# $WARP_MODEL_DIR, else shared/tools/warp_model beside the checkout.
WARP_MODEL_DIR = os.environ.get("WARP_MODEL_DIR") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "shared", "tools", "warp_model")
REFERENCE = os.path.join(HERE, "reference_kernels", "atomics_columns.cl")
HISTOGRAM = {"n": 1 << 14, "bins": 256, "block": 1024, "work_items": 128}
# (rows, columns of a group's slab, matrix columns)
COLUMN_SUMS = [(128, 16, 64), (64, 32, 128)]
HLO_COLUMN_SUM = (64, 256)


def record(directory: str) -> list:
    """Launches every case once in the GPU shape, recording into `directory`; the
    names of the cases in launch order."""
    os.environ["TRITON_SPIRV_TARGET"] = "gpu-64k"
    import numpy as np
    import torch
    import triton
    import triton.language as tl
    from launcher.replay import recording

    @triton.jit
    def histogram_kernel(x_ptr, bins_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0)
        tl.atomic_add(bins_ptr + x, 1, mask=mask)

    @triton.jit
    def column_sum_kernel(x_ptr, out_ptr, rows, cols, ROWS: tl.constexpr, COLS: tl.constexpr):
        c = tl.program_id(0) * COLS + tl.arange(0, COLS)
        r = tl.arange(0, ROWS)
        x = tl.load(x_ptr + r[:, None] * cols + c[None, :],
                    mask=(r[:, None] < rows) & (c[None, :] < cols), other=0.0)
        tl.store(out_ptr + c, tl.sum(x, axis=0), mask=c < cols)

    names = []

    def case(name):       # one sub-directory per case: the recordings in launch order
        names.append(name)
        return recording(os.path.join(directory, f"{len(names):02d}"))
    h = HISTOGRAM
    x = torch.randint(0, h["bins"], (h["n"],), dtype=torch.int32)
    bins = torch.zeros(h["bins"], dtype=torch.int32)
    with case("histogram"):
        histogram_kernel[(triton.cdiv(h["n"], h["block"]),)](x, bins, h["n"], BLOCK=h["block"], num_warps=4)
    assert torch.equal(bins, torch.bincount(x, minlength=h["bins"]).int()), "histogram is wrong"
    for rows, slab, cols in COLUMN_SUMS:
        x = torch.randn(rows, cols)
        out = torch.empty(cols)
        with case(f"column sum {rows}x{slab} (of {cols} columns)"):
            column_sum_kernel[(cols // slab,)](x, out, rows, cols, ROWS=rows, COLS=slab, num_warps=4)
        torch.testing.assert_close(out, x.sum(0), rtol=1e-4, atol=1e-4)
    from scripts.gpu_replay.record import HLO_REDUCE
    from triton_spirv.hlo import read_hlo
    from triton_spirv.hlo.runtime import ModuleRunner
    rows, cols = HLO_COLUMN_SUM
    text = HLO_REDUCE.format(name="column_sum", rows=rows, cols=cols, out=cols, dim=0)
    data = np.random.default_rng(1).standard_normal((rows, cols)).astype(np.float32)
    runner = ModuleRunner(read_hlo(text))
    runner.run([data])     # compiled before the recorded launch
    with case(f"HLO column sum {rows}x{cols}"):
        result = runner.run([data])[0]
    np.testing.assert_allclose(result, data.sum(0), rtol=1e-4, atol=1e-4)
    return names


def references_child() -> None:
    """Runs the reference kernels (under Oclgrind, in a process without Triton)."""
    import numpy as np
    import pyopencl as cl
    context = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(context)
    with open(REFERENCE) as f:
        program = cl.Program(context, f.read()).build()
    flags = cl.mem_flags
    rng = np.random.default_rng(2)
    h = HISTOGRAM
    x = rng.integers(0, h["bins"], h["n"]).astype(np.int32)
    bins = np.zeros(h["bins"], np.int32)
    d_x = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=x)
    d_bins = cl.Buffer(context, flags.READ_WRITE | flags.COPY_HOST_PTR, hostbuf=bins)
    groups = -(-h["n"] // h["block"])
    program.histogram_atomics(queue, (groups * h["work_items"],), (h["work_items"],), d_x, d_bins,
                              np.int32(h["n"]), np.int32(h["block"]))
    cl.enqueue_copy(queue, bins, d_bins)
    assert (bins == np.bincount(x, minlength=h["bins"])).all(), "reference histogram is wrong"
    sums = COLUMN_SUMS + [(HLO_COLUMN_SUM[0], 32, HLO_COLUMN_SUM[1])]
    for rows, slab, cols in sums:
        data = rng.standard_normal((rows, cols)).astype(np.float32)
        out = np.empty(cols, np.float32)
        d_data = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=data)
        d_out = cl.Buffer(context, flags.WRITE_ONLY, out.nbytes)
        program.column_sum_strips(queue, (cols // slab * 128,), (128,), d_data, d_out, np.int32(rows),
                                  np.int32(cols), np.int32(slab), cl.LocalMemory(128 * 4))
        cl.enqueue_copy(queue, out, d_out)
        np.testing.assert_allclose(out, data.sum(0), rtol=1e-4, atol=1e-4)
    queue.finish()


def reference_names() -> list:
    sums = COLUMN_SUMS + [(HLO_COLUMN_SUM[0], 32, HLO_COLUMN_SUM[1])]
    return ["reference histogram"] + [f"reference column sum {r}x{s} (of {c} columns)" for r, s, c in sums]


def _wmlib():
    sys.path.insert(0, WARP_MODEL_DIR)
    import wmlib
    return wmlib


def measure() -> dict:
    """{case name: warp-model record} of our kernels and the references."""
    wmlib = _wmlib()
    with tempfile.TemporaryDirectory(prefix="warp-atomics-") as directory:
        names = subprocess.run([sys.executable, __file__, "--record", directory], check=True,
                               capture_output=True, text=True).stdout.strip().splitlines()[-1]
        names = json.loads(names)
        from launcher.replay import list_recordings
        paths = []
        for number, name in enumerate(names, 1):
            found = list_recordings(os.path.join(directory, f"{number:02d}"))
            if len(found) != 1:
                raise RuntimeError(f"{name}: {len(found)} launches recorded, expected one")
            paths += found
        ours = _run(wmlib, [sys.executable, os.path.join(ROOT, "launcher", "replay.py"), *paths])
    theirs = _run(wmlib, [sys.executable, __file__, "--references"])
    return dict(zip(names + reference_names(), ours + theirs))


def _run(wmlib, argv) -> list:
    completed, records = wmlib.run_under_oclgrind(argv, timeout=600)
    if completed.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:2])} failed under oclgrind:\n{completed.stderr[-3000:]}")
    return records


def row(name: str, rec: dict) -> str:
    def f(value, fmt="{:.2f}"):
        return "n/a" if value is None else fmt.format(value)
    return (f"{name:<46} lanes {f(rec['lane_utilization'])}  coalescing {f(rec['global_efficiency'])}  "
            f"banks avg {f(rec['local_bank_ways_avg'])} max {f(rec['local_bank_ways_max'], '{:.0f}')}  "
            f"barriers/group {f(rec['barriers_per_group'], '{:.1f}')}  balance {f(rec['balance_max_over_mean'])}  "
            f"atomics {rec['atomics']}")


def main() -> int:
    for name, rec in measure().items():
        print(row(name, rec))
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--record"]:
        print(json.dumps(record(sys.argv[2])))
    elif sys.argv[1:2] == ["--references"]:
        references_child()
    else:
        sys.exit(main())
