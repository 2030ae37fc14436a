"""What a generated program (generator.py) and a reduced reproducer
(tests/fuzz/findings/*.py, written by reduce.py) share: the launch of its kernel on
arguments made from its description (`launch`: SEED, SIZES, SCALARS, INPUTS, OUTPUTS),
and what a reproducer does when it runs (`main`): the kernel under Triton's interpreter
(the reference) and in the configuration the failure was found in, each in its own
process, then prints what differs. In an Oclgrind configuration the device's launches
are recorded and replayed under Oclgrind, as the fuzzer does (run.py, oclgrind_check),
and what Oclgrind says is printed too."""

import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import triton

CONFIG_VARIABLES = ("TRITON_INTERPRET", "TRITON_OPENCL_DEVICE", "TRITON_SPIRV_TARGET", "TRITON_SPIRV_PROGRAM")


def _input(gen, dtype, rows, cols, layout):
    """An input tensor of `rows` x `cols` in `layout` (contiguous, transposed: a
    transposed view, strided: every second column of a wider tensor)."""
    shape = (cols, rows) if layout == "transposed" else (rows, 2 * cols if layout == "strided" else cols)
    if dtype.is_floating_point:
        base = (torch.randn(shape, generator=gen) * 2).to(dtype)
    elif dtype == torch.uint8:
        base = torch.randint(0, 40, shape, generator=gen).to(dtype)
    else:
        base = torch.randint(-20, 21, shape, generator=gen).to(dtype)
    if layout == "transposed":
        return base.t()
    if layout == "strided":
        return base[:, ::2]
    return base


def make_args(seed, sizes, inputs, outputs):
    """(inputs, outputs, the inputs' strides) of a program: `inputs` as (name, dtype,
    role, layout), `outputs` as (name, dtype, kind, atomic) (generator.py); outputs of
    atomics start at 0, others at 7."""
    gen = torch.Generator().manual_seed(seed)
    M, N, K = sizes["M"], sizes["N"], sizes["K"]
    gm, gn = triton.cdiv(M, sizes["BM"]), triton.cdiv(N, sizes["BN"])
    dims = {"mn": (M, N), "mk": (M, K), "kn": (K, N), "tn": (sizes["T"], N)}
    ins = [_input(gen, dtype, *dims[role], layout) for _, dtype, role, layout in inputs]
    out_dims = {"2d": (M, N), "m": (M, gn), "n": (gm, N), "s": (gm, gn)}
    outs = [torch.zeros(out_dims[kind], dtype=dtype) if atomic else torch.full(out_dims[kind], 7, dtype=dtype)
            for _, dtype, kind, atomic in outputs]
    strides = [s for t in ins for s in t.stride()]
    return ins, outs, strides


def launch(kernel, seed, sizes, scalars, inputs, outputs, perturb=None, **options):
    """Launches `kernel` on the arguments of `make_args` (a program per block of M x N)
    -> its outputs by name as numpy arrays (bf16 as float64, 1-byte floats as float32).
    `perturb`: under the interpreter, a seed for perturbing the rounding of its float
    operations (reference.py, perturb_rounding)."""
    ins, outs, strides = make_args(seed, sizes, inputs, outputs)
    grid = (triton.cdiv(sizes["M"], sizes["BM"]), triton.cdiv(sizes["N"], sizes["BN"]))
    if perturb is not None:
        if os.environ.get("TRITON_INTERPRET") != "1":
            raise ValueError("launch: perturb= perturbs the interpreter's rounding; set TRITON_INTERPRET=1")
        from .reference import perturb_rounding
        perturb_rounding(perturb)
    try:
        kernel[grid](*ins, *outs, *strides, sizes["M"], sizes["N"], sizes["K"], *scalars.values(),
                     BM=sizes["BM"], BN=sizes["BN"], BK=sizes["BK"], T=sizes["T"],
                     num_warps=sizes.get("num_warps", 4), **options)
    finally:
        if perturb is not None:
            perturb_rounding(None)
    return {name: t.float().numpy() if t.dtype.itemsize == 1 and t.dtype.is_floating_point
            else t.to(torch.float64).numpy() if t.dtype == torch.bfloat16 else t.numpy()
            for (name, *_), t in zip(outputs, outs)}


def main(path, run, config, environment, options):
    """`path`: the reproducer's file; `run(**options)`: its kernel's outputs by name."""
    if len(sys.argv) == 2:  # a child: run and save the outputs
        np.savez(sys.argv[1], **run(**({} if os.environ.get("TRITON_INTERPRET") == "1" else options)))
        sys.exit(0)
    base = dict(os.environ, PYTHONPATH=checkout(path) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for key in CONFIG_VARIABLES:
        base.pop(key, None)
    with tempfile.TemporaryDirectory() as tmp:
        ref, got = os.path.join(tmp, "ref.npz"), os.path.join(tmp, "got.npz")
        subprocess.run([sys.executable, path, ref], env=dict(base, TRITON_INTERPRET="1"), check=True)
        recording = os.path.join(tmp, "recording") if config.startswith("oclgrind") else None
        device_env = dict(base, **environment, **({"TRITON_SPIRV_RECORD_DIR": recording} if recording else {}))
        try:
            proc = subprocess.run([sys.executable, path, got], env=device_env, timeout=300,
                                  capture_output=True, text=True)
        except subprocess.TimeoutExpired:
            print(f"{config}: HANG (no result after 300 s)")
            sys.exit(1)
        if proc.returncode != 0:
            print(f"{config}: FAILED\n{proc.stderr[-3000:]}")
            sys.exit(1)
        bad = _report(np.load(ref), np.load(got), config)
        print(f"{config}: " + ("MISMATCH" if bad else "outputs match the interpreter"))
        if recording and not bad:
            bad = _replay_under_oclgrind(config, recording)
        sys.exit(1 if bad else 0)


def _replay_under_oclgrind(config, recording) -> bool:
    """Replays the recorded launches under Oclgrind; prints its verdict; True if bad."""
    from .run import oclgrind_check
    outcome = oclgrind_check(config, recording, 600)
    print(f"{config}: Oclgrind replay: {outcome.kind}" + (f"\n{outcome.detail}" if outcome.detail else ""))
    return outcome.kind != "ok"


def checkout(path) -> str:
    """The checkout `path` lies in (the folder holding triton_spirv), else the current folder."""
    root = os.path.dirname(os.path.abspath(path))
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    return root if root != "/" else os.getcwd()


def _report(expected, actual, config) -> bool:
    """Prints each output that differs (integers exactly, floats within 1e-2); True if any."""
    bad = False
    for name in expected.files:
        e, a = expected[name], actual[name]
        diff = e != a if e.dtype.kind in "iub" else ~np.isclose(a, e, rtol=1e-2, atol=1e-2, equal_nan=True)
        if diff.any():
            bad = True
            idx = tuple(int(i) for i in np.argwhere(diff)[0])
            print(f"{config}: {name}: {int(diff.sum())} of {diff.size} differ; first at {idx}: "
                  f"got {a[idx]!r}, expected {e[idx]!r}")
    return bad
