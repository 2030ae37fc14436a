"""GPU-shaped kernels on a warp model, next to hand-written reference kernels.

    WARP_MODEL_DIR=<warp_model folder> python3 benchmarks/warp_model.py

The warp model is an Oclgrind plugin (its folder holds wmlib.py) that regroups the
work-items of a launch into warps of 32 and scores lane use, global coalescing (32-byte
sectors), local bank conflicts (32 banks), barriers and work balance. Each family is
compiled for the named target `gpu-64k` at a size Oclgrind runs in seconds, one launch
recorded (launcher/replay.py) and replayed under the plugin; the reference kernels run
under it alike: a padded-tile transpose (below) and the warp model's tiled SGEMM.
Nothing here is a test; tests/test_warp_model_transpose_matmul.py holds the bounds.
"""
from __future__ import annotations

import os
import json
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [HERE, ROOT]

TARGET = "gpu-64k"
# Oclgrind's default 32 KiB of local memory is less than the matmul's tiles.
LOCAL_MEM_BYTES = 262144
# Shown name -> family of scripts/gpu_replay/record.py (its "small" sizes: a 128 x 96
# transpose in 32x32 tiles; tutorial 03's matmul, 128x128x64 in 64x64x32 blocks).
FAMILIES = {"transpose 32x32": "transpose", "matmul 64x64x32": "matmul_fp32"}
# Families without a hand-written reference: ours alone (tutorial 06's attention, 128
# keys of 64 dims in blocks of 64 x 32; softmax and layer norm rows of 256; cumsum).
UNREFERENCED = {"attention 64x32": "attention", "softmax 64x256": "softmax",
                "layer norm 64x256": "layer_norm", "cumsum 64x256": "cumsum"}
TRANSPOSE = (128, 96)          # rows, columns of the reference transpose, as record.py's

REFERENCE_TRANSPOSE = """
__kernel __attribute__((reqd_work_group_size(32, 8, 1)))
void transpose_ref(__global const float* x, __global float* y, int rows, int cols) {
  __local float tile[32][33];                      /* one word of padding per row */
  int c = get_group_id(0) * 32 + get_local_id(0), r0 = get_group_id(1) * 32;
  for (int j = get_local_id(1); j < 32; j += 8)
    if (r0 + j < rows && c < cols) tile[j][get_local_id(0)] = x[(r0 + j) * cols + c];
  barrier(CLK_LOCAL_MEM_FENCE);
  int r = r0 + get_local_id(0), c0 = get_group_id(0) * 32;
  for (int j = get_local_id(1); j < 32; j += 8)
    if (c0 + j < cols && r < rows) y[(c0 + j) * rows + r] = tile[get_local_id(0)][j];
}
"""

# The numbers shown per kernel: (record field, heading, format).
COLUMNS = (("local_bank_ways_avg", "bank avg", "{:.2f}"), ("local_bank_ways_max", "bank max", "{:.0f}"),
           ("global_efficiency", "coalescing", "{:.2f}"), ("barriers_per_group", "barriers", "{:.1f}"),
           ("balance_max_over_mean", "balance", "{:.2f}"), ("lane_utilization", "lanes", "{:.2f}"))


# The warp model's folder: $WARP_MODEL_DIR, else shared/tools/warp_model beside the checkout.
WARP_MODEL_DIR = os.environ.get("WARP_MODEL_DIR") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "shared", "tools", "warp_model")


def warp_model_library():
    """wmlib of the warp model in WARP_MODEL_DIR, or None."""
    folder = WARP_MODEL_DIR
    if not folder or not os.path.exists(os.path.join(folder, "wmlib.py")):
        return None
    sys.path.insert(0, folder)
    import wmlib
    return wmlib


def record_families(directory: str, families: dict = FAMILIES) -> dict:
    """Runs each family of scripts/gpu_replay/record.py (its small size, its kernels:
    tutorial 03's matmul) once in the GPU shape, checked against the family's numpy
    reference, and records the launch under `directory`; -> name -> recording folder.
    The target variable is set for the recording only (a test process goes on)."""
    previous = os.environ.get("TRITON_SPIRV_TARGET")
    os.environ["TRITON_SPIRV_TARGET"] = TARGET
    try:
        return _record_families(directory, families)
    finally:
        if previous is None:
            os.environ.pop("TRITON_SPIRV_TARGET", None)
        else:
            os.environ["TRITON_SPIRV_TARGET"] = previous


def _record_families(directory: str, families: dict) -> dict:
    import torch
    import triton
    import triton.language as tl
    sys.path.insert(0, os.path.join(ROOT, "scripts", "gpu_replay"))
    import record
    from inputs import generate
    from launcher.replay import list_recordings, recording
    from references import REFERENCES, TOLERANCES, mismatch
    record.triton, record.tl, record.torch = triton, tl, torch
    record.define_kernels()
    found = {}
    for name, family in families.items():
        make, size_key = record.FAMILIES[family]
        specs, shape, launch = make(record.SIZES["small"][size_key])
        arrays = {role: generate(spec) for role, spec in specs.items()}
        inputs = {role: array.copy() for role, array in arrays.items()}
        tensors = {role: torch.from_numpy(array) for role, array in arrays.items()}
        folder = os.path.join(directory, family)
        with recording(folder):
            launch(tensors)
        for role, want in REFERENCES[family](inputs, shape).items():
            problem = mismatch(want, arrays[role], TOLERANCES[family])[1]
            if problem:
                raise RuntimeError(f"{name}: {role} is wrong: {problem}")
        found[name] = list_recordings(folder)[0]
    return found


def measure_recording(wmlib, path: str) -> dict:
    """The warp model's record of one recorded launch, replayed under Oclgrind."""
    env = {"PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    completed, records = wmlib.run_under_oclgrind(
        ["--local-mem-size", str(LOCAL_MEM_BYTES), sys.executable, os.path.join(ROOT, "launcher", "replay.py"),
         path], env_extra=env, timeout=600)
    if len(records) != 1 or '"ok": false' in completed.stdout:
        raise RuntimeError(f"replay of {path} under the warp model failed:\n{completed.stdout}{completed.stderr}")
    return records[0]


def measure_references(wmlib) -> dict:
    """The reference transpose (this file) and the warp model's tiled SGEMM."""
    completed, records = wmlib.run_under_oclgrind([sys.executable, os.path.abspath(__file__), "--reference-child"],
                                                  timeout=600)
    sgemm = subprocess.run([sys.executable, os.path.join(os.path.dirname(wmlib.__file__), "measure_reference.py")],
                           capture_output=True, text=True, timeout=600)
    by_kernel = {r["kernel"]: r for r in records}
    for line in sgemm.stdout.splitlines():
        if line.startswith('{"warp_model"'):
            record = json.loads(line)
            by_kernel.setdefault(record["kernel"], record)
    if "transpose_ref" not in by_kernel or "sgemm_tiled" not in by_kernel:
        raise RuntimeError(f"reference kernels failed:\n{completed.stderr}{sgemm.stdout}{sgemm.stderr}")
    return {"transpose 32x32": by_kernel["transpose_ref"], "matmul 64x64x32": by_kernel["sgemm_tiled"]}


def _reference_child() -> None:
    """Runs the reference transpose with pyopencl (under Oclgrind) and checks it."""
    import numpy as np
    import pyopencl as cl
    context = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(context)
    program = cl.Program(context, REFERENCE_TRANSPOSE).build()
    rows, cols = TRANSPOSE
    x = np.random.default_rng(0).random((rows, cols), dtype=np.float32)
    flags = cl.mem_flags
    x_buffer = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=x)
    y_buffer = cl.Buffer(context, flags.WRITE_ONLY, x.nbytes)
    program.transpose_ref(queue, (-(-cols // 32) * 32, -(-rows // 32) * 8), (32, 8), x_buffer, y_buffer,
                          np.int32(rows), np.int32(cols))
    y = np.empty((cols, rows), np.float32)
    cl.enqueue_copy(queue, y, y_buffer)
    queue.finish()
    assert np.array_equal(y, x.T), "reference transpose is wrong"


def measure_all(wmlib) -> list:
    """[(family, ours, reference)] of warp-model records."""
    with tempfile.TemporaryDirectory(prefix="warp-model-") as directory:
        ours = {name: measure_recording(wmlib, path) for name, path in record_families(directory).items()}
    references = measure_references(wmlib)
    return [(name, ours[name], references[name]) for name in ours]


def _cells(record: dict) -> str:
    return "".join(f"{('n/a' if record.get(key) is None else fmt.format(record[key])):>11}"
                   for key, _heading, fmt in COLUMNS)


def main() -> int:
    wmlib = warp_model_library()
    if wmlib is None:
        print("set WARP_MODEL_DIR to the warp model's folder (the one holding wmlib.py)")
        return 1
    print(f"warp model, {TARGET}, warps of 32 (record.py's small sizes)")
    print(f"{'':<28}" + "".join(f"{heading:>11}" for _key, heading, _fmt in COLUMNS))
    for name, ours, reference in measure_all(wmlib):
        print(f"{name + ' (ours)':<28}{_cells(ours)}")
        print(f"{name + ' (reference)':<28}{_cells(reference)}")
    with tempfile.TemporaryDirectory(prefix="warp-model-") as directory:
        for name, path in record_families(directory, UNREFERENCED).items():
            print(f"{name + ' (ours)':<28}{_cells(measure_recording(wmlib, path))}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--reference-child"]:
        _reference_child()
    else:
        sys.exit(main())
