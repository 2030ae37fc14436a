"""Record one GPU-shaped kernel of every family, as a bundle that replays on a GPU
machine with numpy and pyopencl only (replay_kit.py).

    python3 scripts/gpu_replay/record.py                   # GPU sizes, into .gpu_replay/
    python3 scripts/gpu_replay/record.py --size small --families vector_add,softmax --out DIR

Kernels are compiled for the named description `gpu-64k` (triton_spirv/target.py:
work-groups of up to 256, sub-groups of 32, no work-group collective functions, so
reductions are `__local` trees that an OpenCL 3.0 driver without
`__opencl_c_work_group_collectives` builds) and emitted as OpenCL C. Each launch
runs on the OpenCL device in use with launcher/replay.py recording it; the recording
then becomes a bundle (one folder per family):

    launch.json   the recording's kernel, source, build options, sizes and parameters
    kit.json      per buffer: how to regenerate its input (inputs.py) and its SHA-256,
                  the SHA-256 of its output on the recording device, what checks it
                  (the family's numpy reference, or unchanged); the family's sizes
    bufN.in       only buffers that are neither generated nor larger than STORE_LIMIT
    bufN.out      results of at most STORE_LIMIT bytes, as the recording device computed them

so that a GPU-sized family costs kilobytes. Before a bundle is written, the recorded
outputs are checked against references.py with the family's tolerance: a kernel
that is wrong here does not travel.
"""
import argparse
import importlib.util
import json
import os
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [HERE, ROOT]
from inputs import digest, generate  # noqa: E402  (this folder, numpy only)
from references import REFERENCES, TOLERANCES, mismatch  # noqa: E402
TARGET = "gpu-64k"
KIT_FORMAT = "triton-spirv-gpu-replay-1"
STORE_LIMIT = 1 << 20          # bytes of one buffer carried as a file rather than regenerated

# Family sizes: "gpu" for a real GPU (each input and output of at most 64 MiB), "small"
# for tests and the warp model.
SIZES = {
    "gpu": {"vector_add": {"n": 1 << 24}, "softmax": {"rows": 4096, "cols": 1024},
            "layer_norm": {"rows": 4096, "cols": 1024}, "matmul": {"m": 1024, "n": 1024, "k": 1024},
            "attention": {"z": 1, "h": 8, "ctx": 1024, "dim": 64}, "cumsum": {"rows": 4096, "cols": 1024},
            "transpose": {"rows": 4096, "cols": 2048}, "histogram": {"n": 1 << 22, "bins": 1024},
            "hlo": {"rows": 4096, "cols": 1024}},
    "small": {"vector_add": {"n": 1 << 14}, "softmax": {"rows": 64, "cols": 256},
              "layer_norm": {"rows": 64, "cols": 256}, "matmul": {"m": 128, "n": 128, "k": 64},
              "attention": {"z": 1, "h": 2, "ctx": 128, "dim": 64}, "cumsum": {"rows": 64, "cols": 256},
              "transpose": {"rows": 128, "cols": 96}, "histogram": {"n": 1 << 14, "bins": 256},
              "hlo": {"rows": 64, "cols": 256}},
}


def uniform(shape, seed, dtype="float32", low=-1.0, high=1.0):
    return {"kind": "uniform", "dtype": dtype, "shape": list(shape), "seed": seed, "low": low, "high": high}


def poison(shape, dtype="float32"):
    """An output's initial contents: values the kernel must overwrite (and distinct
    from every input, so that buffers are told apart by their bytes)."""
    return uniform(shape, 1000 + len(shape) * 7 + shape[0] % 97, dtype, -1e3, -1e2)


# ---------------------------------------------------------------------------------
# The families: each returns (arrays: name -> spec, shape: sizes for the reference,
# launch: function of the arrays as torch tensors sharing the numpy memory)

def load_tutorial(file_name):
    os.environ["BENCHMARK"] = "0"
    name = "gpu_replay_" + file_name.split(".")[0].replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "python", "tutorials", file_name))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def vector_add(size):
    n = size["n"]

    def launch(t):
        add_kernel[(triton.cdiv(n, 1024),)](t["x"], t["y"], t["out"], n, BLOCK=1024, num_warps=4)
    return {"x": uniform([n], 1), "y": uniform([n], 2), "out": poison([n])}, {"n": n}, launch


def softmax(size):
    rows, cols = size["rows"], size["cols"]
    tutorial = load_tutorial("02-fused-softmax.py")

    def launch(t):
        tutorial.softmax_kernel[(rows,)](t["out"], t["x"], cols, cols, rows, cols,
                                         BLOCK_SIZE=triton.next_power_of_2(cols), num_stages=1, num_warps=4)
    return {"x": uniform([rows, cols], 3, low=-4, high=4), "out": poison([rows, cols])}, {}, launch


def layer_norm(size):
    rows, cols = size["rows"], size["cols"]
    tutorial = load_tutorial("05-layer-norm.py")
    eps = 1e-5

    def launch(t):
        tutorial._layer_norm_fwd_fused[(rows,)](t["x"], t["y"], t["w"], t["b"], t["mean"], t["rstd"], cols,
                                                cols, eps, BLOCK_SIZE=min(1024, triton.next_power_of_2(cols)),
                                                num_warps=4)
    arrays = {"x": uniform([rows, cols], 4, "float16", -2, 2), "w": uniform([cols], 5, "float16", 0.5, 1.5),
              "b": uniform([cols], 6, "float16", -0.5, 0.5), "y": poison([rows, cols], "float16"),
              "mean": poison([rows]), "rstd": uniform([rows], 1999, "float32", -1e3, -1e2)}
    return arrays, {"eps": eps}, launch


def matmul(size, dtype):
    m, n, k = size["m"], size["n"], size["k"]
    tutorial = load_tutorial("03-matrix-multiplication.py")
    block_m, block_n, block_k = 64, 64, 32

    def launch(t):
        a, b, c = t["a"], t["b"], t["c"]
        tutorial.matmul_kernel.fn[(triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)](
            a, b, c, m, n, k, k, 1, n, 1, n, 1, BLOCK_SIZE_M=block_m, BLOCK_SIZE_N=block_n,
            BLOCK_SIZE_K=block_k, GROUP_SIZE_M=8, ACTIVATION="", num_warps=4)
    arrays = {"a": uniform([m, k], 7, dtype, -0.5, 0.5), "b": uniform([k, n], 8, dtype, -0.5, 0.5),
              "c": poison([m, n], dtype)}
    return arrays, {}, launch


def attention(size):
    z, h, ctx, dim = size["z"], size["h"], size["ctx"], size["dim"]
    tutorial = load_tutorial("06-fused-attention.py")
    sm_scale = 0.5
    block_m = 64

    def launch(t):
        triton.set_allocator(lambda nbytes, _align, _stream: torch.empty(nbytes, dtype=torch.int8))
        tutorial._attn_fwd.fn[(triton.cdiv(ctx, block_m), z * h, 1)](
            sm_scale, t["m"], z, h, t["q"], t["k"], t["v"], t["o"], N_CTX=ctx, HEAD_DIM=dim,
            BLOCK_M=block_m, BLOCK_N=32, FP8_OUTPUT=False, STAGE=3, warp_specialize=False,
            IS_HOPPER=False, num_warps=4, num_stages=2)
    qkv = [z, h, ctx, dim]
    arrays = {"q": uniform(qkv, 9, "float16"), "k": uniform(qkv, 10, "float16"),
              "v": uniform(qkv, 11, "float16"), "o": poison(qkv, "float16"), "m": poison([z, h, ctx])}
    return arrays, {"sm_scale": sm_scale, "causal": True}, launch


def cumsum(size):
    rows, cols = size["rows"], size["cols"]

    def launch(t):
        cumsum_kernel[(rows,)](t["x"], t["out"], cols, BLOCK=triton.next_power_of_2(cols), num_warps=4)
    return {"x": uniform([rows, cols], 12, low=-0.5, high=0.5), "out": poison([rows, cols])}, {}, launch


def transpose(size):
    rows, cols = size["rows"], size["cols"]

    def launch(t):
        transpose_kernel[(triton.cdiv(rows, 32), triton.cdiv(cols, 32))](t["x"], t["out"], rows, cols,
                                                                         BR=32, BC=32, num_warps=4)
    return {"x": uniform([rows, cols], 13), "out": poison([cols, rows])}, {}, launch


def histogram(size):
    n, bins = size["n"], size["bins"]
    arrays = {"x": {"kind": "integers", "dtype": "int32", "shape": [n], "seed": 14, "high": bins},
              "bins": {"kind": "zeros", "dtype": "int32", "shape": [bins]}}

    def launch(t):
        histogram_kernel[(triton.cdiv(n, 1024),)](t["x"], t["bins"], n, BLOCK=1024, num_warps=4)
    return arrays, {"bins": bins}, launch


HLO_REDUCE = """HloModule {name}
add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}
fused {{
  p = f32[{rows},{cols}] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[{out}] reduce(p, z), dimensions={{{dim}}}, to_apply=add
}}
ENTRY main {{
  p = f32[{rows},{cols}] parameter(0)
  ROOT f = f32[{out}] fusion(p), kind=kInput, calls=fused
}}
"""


def hlo_sum(size, dim):
    """A row (dim 1) or column (dim 0) sum of an f32 matrix, through the HLO frontend."""
    rows, cols = size["rows"], size["cols"]
    from triton_spirv.hlo import read_hlo
    from triton_spirv.hlo.runtime import ModuleRunner
    text = HLO_REDUCE.format(name=f"sum_{dim}", rows=rows, cols=cols, out=cols if dim == 0 else rows, dim=dim)
    runner = ModuleRunner(read_hlo(text))

    def launch(t):
        launch.result = runner.run([t["x"].numpy()])[0]
    return {"x": uniform([rows, cols], 15 + dim)}, {}, launch


FAMILIES = {
    "vector_add": (vector_add, "vector_add"),
    "softmax": (softmax, "softmax"),
    "layer_norm": (layer_norm, "layer_norm"),
    "matmul_fp32": (lambda s: matmul(s, "float32"), "matmul"),
    "matmul_fp16": (lambda s: matmul(s, "float16"), "matmul"),
    "attention": (attention, "attention"),
    "cumsum": (cumsum, "cumsum"),
    "transpose": (transpose, "transpose"),
    "histogram": (histogram, "histogram"),
    "hlo_row_sum": (lambda s: hlo_sum(s, 1), "hlo"),
    "hlo_column_sum": (lambda s: hlo_sum(s, 0), "hlo"),
}


def define_kernels():
    """The families' own Triton kernels (the others come from the tutorials)."""
    global add_kernel, cumsum_kernel, transpose_kernel, histogram_kernel

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

    @triton.jit
    def cumsum_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        offs = tl.arange(0, BLOCK)
        mask = offs < n_cols
        x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=0.0)
        tl.store(out_ptr + row * n_cols + offs, tl.cumsum(x, axis=0), mask=mask)

    @triton.jit
    def transpose_kernel(x_ptr, out_ptr, rows, cols, BR: tl.constexpr, BC: tl.constexpr):
        r = tl.program_id(0) * BR + tl.arange(0, BR)
        c = tl.program_id(1) * BC + tl.arange(0, BC)
        tile = tl.load(x_ptr + r[:, None] * cols + c[None, :], mask=(r[:, None] < rows) & (c[None, :] < cols))
        tl.store(out_ptr + c[:, None] * rows + r[None, :], tl.trans(tile),
                 mask=(c[:, None] < cols) & (r[None, :] < rows))

    @triton.jit
    def histogram_kernel(x_ptr, bins_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0)
        tl.atomic_add(bins_ptr + x, 1, mask=mask)


# ---------------------------------------------------------------------------------
# Recording and bundling

class BundleError(Exception):
    """A family whose recording cannot travel (or is wrong on the recording device)."""


def record_family(name, size_name, out_dir):
    from launcher.replay import list_recordings, recording

    make, size_key = FAMILIES[name]
    specs, shape, launch = make(SIZES[size_name][size_key])
    arrays = {role: generate(spec) for role, spec in specs.items()}
    tensors = {role: torch.from_numpy(array) for role, array in arrays.items()}
    inputs = {role: array.copy() for role, array in arrays.items()}
    launch(tensors)      # compiles, and shows the family runs, before anything is recorded
    for role in arrays:
        arrays[role][...] = inputs[role]
    raw = tempfile.mkdtemp(prefix=f"gpu-replay-{name}-")
    try:
        with recording(raw):
            launch(tensors)
        paths = list_recordings(raw)
        if len(paths) != 1:
            raise BundleError(f"{name}: {len(paths)} launches recorded, expected one")
        expected = REFERENCES[name](inputs, shape)
        if name.startswith("hlo_"):
            produced = {"out": launch.result}
        else:
            produced = {role: arrays[role] for role in expected}
        for role, want in expected.items():
            _error, problem = mismatch(want, produced[role], TOLERANCES[name])
            if problem:
                raise BundleError(f"{name}: output '{role}' is wrong on the recording device: {problem}")
        return bundle(name, paths[0], os.path.join(out_dir, name), specs, inputs, shape, expected)
    finally:
        shutil.rmtree(raw, ignore_errors=True)


def bundle(name, recorded, target, specs, inputs, shape, expected):
    """Writes the bundle of one recording (see the module docstring); -> its kit.json."""
    with open(os.path.join(recorded, "launch.json")) as f:
        meta = json.load(f)
    by_digest = {digest(array): role for role, array in inputs.items()}
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(target)
    buffers = {}
    for number in sorted({p["snapshot"] for p in meta["params"].values() if p["kind"] == "buffer"}):
        with open(os.path.join(recorded, f"buf{number}.in"), "rb") as f:
            before = f.read()
        with open(os.path.join(recorded, f"buf{number}.out"), "rb") as f:
            after = f.read()
        entry = {"bytes": len(before), "in_sha256": digest(before), "out_sha256": digest(after)}
        role = by_digest.get(digest(before))
        if role is not None:
            entry.update(role=role, dtype=specs[role]["dtype"], input=specs[role])
        else:
            role = _frontend_output(name, after, expected)
            # Whatever the frontend's allocation held: the kernel writes all of it.
            entry.update(role=role, dtype=FRONTEND_OUTPUT_DTYPE, in_sha256=None,
                         input={"kind": "zeros", "dtype": "uint8", "shape": [len(before)]})
        if role is None:         # scratch memory: carried as recorded, compared with the recording
            if len(before) > STORE_LIMIT:
                raise BundleError(f"{name}: buffer {number} ({len(before)} bytes) is neither an input "
                                  "nor an output of the family")
            entry.update(dtype="uint8", in_sha256=digest(before), input={"kind": "stored"})
            _write(target, f"buf{number}.in", before)
        entry["check"] = "reference" if role in expected else ("unchanged" if role else "recording")
        if entry["check"] == "unchanged" and after != before:
            raise BundleError(f"{name}: input '{role}' changed during the launch")
        if entry["check"] != "unchanged" and len(after) <= STORE_LIMIT:
            _write(target, f"buf{number}.out", after)
            entry["out_stored"] = True
        buffers[str(number)] = entry
    kit = {"format": KIT_FORMAT, "family": name, "target": TARGET, "shape": shape,
           "tolerance": list(TOLERANCES[name]), "buffers": buffers}
    _write(target, "launch.json", json.dumps(meta, indent=1).encode())
    _write(target, "kit.json", json.dumps(kit, indent=1).encode())
    return kit


# Results that a frontend allocates itself (the HLO runtime's) are the ENTRY's f32.
FRONTEND_OUTPUT_DTYPE = "float32"


def _frontend_output(name, data, expected):
    """The reference output whose values `data` holds, or None."""
    itemsize = np.dtype(FRONTEND_OUTPUT_DTYPE).itemsize
    for role, want in expected.items():
        if want.size * itemsize == len(data) and \
                mismatch(want, np.frombuffer(data, FRONTEND_OUTPUT_DTYPE), TOLERANCES[name])[1] is None:
            return role
    return None


def _write(folder, file_name, data):
    with open(os.path.join(folder, file_name), "wb") as f:
        f.write(data)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="gpu")
    parser.add_argument("--families", default=",".join(FAMILIES), help="comma-separated, of: " + ", ".join(FAMILIES))
    parser.add_argument("--out", default=os.path.join(ROOT, ".gpu_replay"))
    args = parser.parse_args(argv)
    names = [n for n in args.families.split(",") if n]
    unknown = [n for n in names if n not in FAMILIES]
    if unknown:
        parser.error(f"unknown families {unknown}; known: {', '.join(FAMILIES)}")

    os.environ["TRITON_SPIRV_TARGET"] = TARGET
    os.environ["TRITON_SPIRV_RECORD_MAX_BYTES"] = str(1 << 31)
    global triton, tl, torch
    import torch
    import triton
    import triton.language as tl
    define_kernels()

    os.makedirs(args.out, exist_ok=True)
    failed = 0
    for name in names:
        try:
            kit = record_family(name, args.size, args.out)
        except BundleError as exc:
            print(f"FAILED {exc}", flush=True)
            failed += 1
            continue
        folder = os.path.join(args.out, name)
        carried = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
        print(f"recorded {name}: {len(kit['buffers'])} buffers, {carried} bytes to carry", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
