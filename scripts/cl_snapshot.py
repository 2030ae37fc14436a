"""Writes the OpenCL C of a fixed set of kernels into a folder, to compare two versions
of the compiler byte for byte (a refactoring that must not change what is emitted).

    python3 scripts/cl_snapshot.py OUT_DIR            # then, after the change:
    python3 scripts/cl_snapshot.py OUT_DIR2 && diff -r OUT_DIR OUT_DIR2

The kernels: the tutorials' checks at small sizes (python/tutorials/), a few kernels of
the test families (scans, column reductions, atomics, argmax), and XLA:CPU's modules of
the HLO frontend (tests/hlo/jax/). Each runs once per target shape (`device`: the CPU
shape; `gpu`: the GPU shape), each shape in a process of its own with an empty Triton
cache. Every Linalg module the Triton frontend hands to the memref stage is lowered
again under variants of the pipeline's parameters, so that paths the device does not
take are compared too: on the GPU shape without quirks, with every quirk and with the
work-group collectives switched; on the CPU shape with program loops and streaming
stores. Files: `<shape>/<nnn>-<kernel>-<variant>.cl`, numbered in compilation order; a
variant the compiler rejects writes its error instead."""
from __future__ import annotations

import dataclasses
import glob
import importlib.util
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHAPES = ("device", "gpu")


def _tutorial(file_name: str):
    os.environ["BENCHMARK"] = "0"
    name = "tutorial_" + file_name.split(".")[0].replace("-", "_")
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(ROOT, "python", "tutorials", file_name))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tutorial_kernels() -> None:
    import torch
    _tutorial("01-vector-add.py").main()
    _tutorial("02-fused-softmax.py").check(n_rows=3, n_cols=64)
    matmul = _tutorial("03-matrix-multiplication.py")
    matmul.check(M=96, N=80, K=72, dtype=torch.float16, activation="leaky_relu")
    matmul.check(M=96, N=80, K=72, dtype=torch.float32, activation="")
    _tutorial("04-low-memory-dropout.py").check(size=3001, p=0.3)
    _tutorial("05-layer-norm.py").test_layer_norm(151, 512, torch.float16)
    _tutorial("06-fused-attention.py").test_op(1, 2, 128, 64, True, torch.float16)
    _tutorial("07-extern-functions.py").check(size=5000)
    _tutorial("08-grouped-gemm.py").check(group_m=(128, 64), group_n=(64, 128),
                                          group_k=(64, 32))
    _tutorial("09-persistent-matmul.py").validate(96, 160, 64)


def _family_kernels() -> None:
    """Scans, column reductions, atomics and argmax: the paths of the GPU shape the
    tutorials miss."""
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def cumsum_rows(x_ptr, y_ptr, N: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, N)
        tl.store(y_ptr + row * N + offs, tl.cumsum(tl.load(x_ptr + row * N + offs), axis=0))

    @triton.jit
    def column_sums(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
        rows, cols = tl.arange(0, M), tl.arange(0, N)
        x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
        tl.store(y_ptr + cols, tl.sum(x, axis=0))

    @triton.jit
    def atomic_histogram(x_ptr, h_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.atomic_add(h_ptr + tl.load(x_ptr + offs, mask=mask, other=0), 1, mask=mask)

    @triton.jit
    def row_argmax(x_ptr, y_ptr, N: tl.constexpr):
        row = tl.program_id(0)
        x = tl.load(x_ptr + row * N + tl.arange(0, N))
        tl.store(y_ptr + row, tl.argmax(x, axis=0))

    @triton.jit
    def scalar_total(x_ptr, total_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n, BLOCK):
            acc += tl.load(x_ptr + start + offs, mask=start + offs < n, other=0.0)
        tl.store(total_ptr, tl.sum(acc, axis=0))

    x = torch.randn(4, 128)
    cumsum_rows[(4,)](x, torch.empty_like(x), N=128)
    column_sums[(1,)](torch.randn(64, 32), torch.empty(32), M=64, N=32)
    atomic_histogram[(4,)](torch.randint(0, 16, (1000,), dtype=torch.int32),
                           torch.zeros(16, dtype=torch.int32), 1000, BLOCK=256)
    row_argmax[(4,)](x, torch.empty(4, dtype=torch.int32), N=128)
    scalar_total[(1,)](torch.randn(1000), torch.empty(1), 1000, BLOCK=128)


def _hlo_kernels(write) -> None:
    from triton_spirv.hlo import read_hlo_file
    from triton_spirv.hlo.runtime import ModuleRunner
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "hlo", "jax", "*.hlo"))):
        for fusion in ModuleRunner(read_hlo_file(path)).compile_all():
            for kernel in fusion.kernels:
                write(f"hlo-{os.path.basename(path)[:-4]}-{kernel.name}", "as-target",
                      kernel.source)


def _variants(kwargs: dict) -> dict:
    """The pipeline's parameters as the target gives them, and the variants compared."""
    from triton_spirv.target import QUIRKS
    variants = {"as-target": kwargs}
    if kwargs.get("work_items", 1) > 1:
        variants["no-quirks"] = {**kwargs, "quirks": ()}
        variants["all-quirks"] = {**kwargs, "quirks": tuple(QUIRKS)}
        variants["collectives-switched"] = {**kwargs, "collectives": not kwargs.get("collectives")}
    else:
        variants["loops-streams"] = {**kwargs, "program_loops": True, "streaming_stores": True}
    return variants


def _one_shape(out: str) -> None:
    """Runs the kernels in this process (its target shape from TRITON_SPIRV_TARGET)."""
    import triton_spirv.stages as stages
    lower = stages.linalg_to_memref_text
    counter = [0]

    def write(kernel: str, variant: str, text: str) -> None:
        name = f"{counter[0]:03d}-{kernel}-{variant}.cl"
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.write(text)

    def recording(linalg_text: str, config=None, **kwargs) -> str:
        if config is not None:      # a PipelineConfig (memref_stage/passes.py)
            kwargs = dataclasses.asdict(config)
        counter[0] += 1
        kernel = _kernel_name(linalg_text)
        for variant, params in _variants(kwargs).items():
            try:
                text = stages.memref_to_opencl(lower(linalg_text, **params)).source
            except Exception as err:   # a variant the compiler rejects: its error
                text = f"error: {type(err).__name__}: {err}\n"
            write(kernel, variant, text)
        return lower(linalg_text, **kwargs)

    stages.linalg_to_memref_text = recording
    _tutorial_kernels()
    _family_kernels()

    def write_hlo(kernel: str, variant: str, text: str) -> None:
        counter[0] += 1
        write(kernel, variant, text)
    _hlo_kernels(write_hlo)


def _kernel_name(linalg_text: str) -> str:
    marker = "func.func @"
    start = linalg_text.find(marker)
    if start < 0:
        return "module"
    start += len(marker)
    end = start
    while end < len(linalg_text) and (linalg_text[end].isalnum() or linalg_text[end] == "_"):
        end += 1
    return linalg_text[start:end]


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[1] == "--one":
        os.makedirs(argv[2], exist_ok=True)
        _one_shape(argv[2])
        return 0
    if len(argv) != 2:
        print(__doc__)
        return 2
    for shape in SHAPES:
        with tempfile.TemporaryDirectory() as cache:
            env = {**os.environ, "TRITON_SPIRV_TARGET": shape, "TRITON_CACHE_DIR": cache,
                   "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
            subprocess.run([sys.executable, os.path.abspath(__file__), "--one",
                            os.path.join(argv[1], shape)], env=env, check=True)
    count = sum(len(files) for _root, _dirs, files in os.walk(argv[1]))
    print(f"{count} .cl files written to {argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
