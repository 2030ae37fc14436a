"""GPU-shaped kernels on a warp model, next to hand-written reference kernels.

    WARP_MODEL_DIR=<warp_model folder> python3 benchmarks/warp_model.py

The warp model is an Oclgrind plugin (its folder holds wmlib.py) that regroups the
work-items of a launch into warps of 32 and scores lane use, global coalescing (32-byte
sectors), local bank conflicts (32 banks), barriers and work balance. Each family is
compiled for the named target `gpu-64k` at a size Oclgrind runs in seconds, one launch
recorded (launcher/replay.py) and replayed under the plugin; the hand-written reference
kernels (REFERENCES) run under it alike, each checked against numpy. Nothing here is a
test; tests/test_warp_model_transpose_matmul.py holds the bounds.
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
# Shown name -> family of scripts/gpu_replay/record.py, at its "small" sizes (a 128 x 96
# transpose in 32x32 tiles; tutorial 03's matmul, 128x128x64 in 64x64x32 blocks;
# tutorial 06's attention, 128 keys of 64 dims in blocks of 64 x 32; rows of 256 for the
# row families). Tensor atomics and column sums: benchmarks/warp_atomics_columns.py.
FAMILIES = {"vector add 16384": "vector_add", "softmax 64x256": "softmax",
            "layer norm 64x256": "layer_norm", "matmul 64x64x32": "matmul_fp32",
            "matmul fp16 64x64x32": "matmul_fp16", "attention 64x32": "attention",
            "cumsum 64x256": "cumsum", "transpose 32x32": "transpose",
            "HLO row sum 64x256": "hlo_row_sum"}
# Shown name -> the hand-written kernel it is compared with: the warp model's tiled SGEMM
# (measure_reference.py; fp32, also beside the fp16 matmul), the others in
# reference_kernels/families.cl. Attention has none.
REFERENCES = {"vector add 16384": "vector_add_ref", "softmax 64x256": "softmax_ref",
              "layer norm 64x256": "layer_norm_ref", "matmul 64x64x32": "sgemm_tiled",
              "matmul fp16 64x64x32": "sgemm_tiled", "cumsum 64x256": "cumsum_ref",
              "transpose 32x32": "transpose_ref", "HLO row sum 64x256": "row_sum_ref"}
FAMILY_KERNELS = os.path.join(HERE, "reference_kernels", "families.cl")
TRANSPOSE = (128, 96)          # rows, columns of the reference transpose, as record.py's
ROWS = (64, 256)               # rows, columns of the row families' references
VECTOR = 1 << 14


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
        hlo = family.startswith("hlo_")
        if hlo:             # the module compiles at its first run: record the second
            launch(tensors)
        with recording(folder):
            launch(tensors)
        produced = {"out": launch.result} if hlo else arrays
        for role, want in REFERENCES[family](inputs, shape).items():
            problem = mismatch(want, produced[role], TOLERANCES[family])[1]
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
    """Kernel name -> warp-model record of every reference kernel: those of
    reference_kernels/families.cl run here, the warp model's tiled SGEMM by its
    measure_reference.py."""
    completed, records = wmlib.run_under_oclgrind([sys.executable, os.path.abspath(__file__), "--reference-child"],
                                                  timeout=600)
    sgemm = subprocess.run([sys.executable, os.path.join(os.path.dirname(wmlib.__file__), "measure_reference.py")],
                           capture_output=True, text=True, timeout=600)
    by_kernel = {r["kernel"]: r for r in records}
    for line in sgemm.stdout.splitlines():
        if line.startswith('{"warp_model"'):
            record = json.loads(line)
            by_kernel.setdefault(record["kernel"], record)
    missing = set(REFERENCES.values()) - set(by_kernel)
    if completed.returncode != 0 or missing:
        raise RuntimeError(f"reference kernels {sorted(missing)} failed:\n{completed.stderr}{sgemm.stdout}"
                           f"{sgemm.stderr}")
    return by_kernel


def _reference_child() -> None:
    """Runs the reference kernels with pyopencl (under Oclgrind), each checked against
    numpy."""
    import numpy as np
    import pyopencl as cl
    context = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(context)
    with open(FAMILY_KERNELS) as f:
        program = cl.Program(context, f.read()).build()
    rng = np.random.default_rng(0)

    def run(kernel, global_size, local_size, inputs, outputs, *scalars):
        """Launches `kernel` on device copies of `inputs` and `outputs` (numpy arrays);
        -> the outputs read back."""
        flags = cl.mem_flags
        buffers = [cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=a) for a in inputs]
        buffers += [cl.Buffer(context, flags.READ_WRITE | flags.COPY_HOST_PTR, hostbuf=a) for a in outputs]
        getattr(program, kernel)(queue, global_size, local_size, *buffers, *scalars)
        results = [np.empty_like(a) for a in outputs]
        for result, buffer in zip(results, buffers[len(inputs):]):
            cl.enqueue_copy(queue, result, buffer)
        queue.finish()
        return results

    rows, cols = TRANSPOSE
    x = rng.random((rows, cols), dtype=np.float32)
    (y,) = run("transpose_ref", (-(-cols // 32) * 32, -(-rows // 32) * 8), (32, 8), [x],
               [np.empty((cols, rows), np.float32)], np.int32(rows), np.int32(cols))
    assert np.array_equal(y, x.T), "reference transpose is wrong"
    a, b = rng.random(VECTOR, dtype=np.float32), rng.random(VECTOR, dtype=np.float32)
    (out,) = run("vector_add_ref", (VECTOR // 1024 * 128,), (128,), [a, b], [np.empty_like(a)], np.int32(VECTOR))
    assert np.array_equal(out, a + b), "reference vector add is wrong"
    rows, cols = ROWS
    one_per_row = ((rows * 128,), (128,))
    x = rng.uniform(-4, 4, (rows, cols)).astype(np.float32)
    (out,) = run("softmax_ref", *one_per_row, [x], [np.empty_like(x)], np.int32(cols))
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)
    (out,) = run("cumsum_ref", *one_per_row, [x], [np.empty_like(x)], np.int32(cols))
    np.testing.assert_allclose(out, np.cumsum(x, 1), rtol=1e-4, atol=1e-4)
    (out,) = run("row_sum_ref", *one_per_row, [x], [np.empty(rows, np.float32)], np.int32(cols))
    np.testing.assert_allclose(out, x.sum(1), rtol=1e-4, atol=1e-4)
    h = x.astype(np.float16) / 2
    w, bias = rng.uniform(0.5, 1.5, cols).astype(np.float16), rng.uniform(-0.5, 0.5, cols).astype(np.float16)
    y, mean, rstd = run("layer_norm_ref", *one_per_row, [h, w, bias],
                        [np.empty_like(h), np.empty(rows, np.float32), np.empty(rows, np.float32)],
                        np.int32(cols), np.float32(1e-5))
    f = h.astype(np.float32)
    want = (f - f.mean(1, keepdims=True)) / np.sqrt(f.var(1, keepdims=True) + 1e-5) * w + bias
    np.testing.assert_allclose(y.astype(np.float32), want, rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(mean, f.mean(1), rtol=1e-4, atol=1e-4)


def measure_all(wmlib, families: dict = FAMILIES) -> list:
    """[(shown name, ours, reference or None)] of warp-model records."""
    with tempfile.TemporaryDirectory(prefix="warp-model-") as directory:
        ours = {name: measure_recording(wmlib, path) for name, path in record_families(directory, families).items()}
    references = measure_references(wmlib)
    return [(name, ours[name], references.get(REFERENCES.get(name))) for name in ours]


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
        if reference is not None:
            print(f"{'  ' + REFERENCES[name]:<28}{_cells(reference)}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--reference-child"]:
        _reference_child()
    else:
        sys.exit(main())
