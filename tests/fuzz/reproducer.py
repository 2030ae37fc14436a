"""What a reduced reproducer (tests/fuzz/findings/*.py, written by reduce.py) does when it
runs: the kernel under Triton's interpreter (the reference) and in the configuration the
failure was found in, each in its own process, then prints what differs. In an Oclgrind
configuration the device's launches are recorded and replayed under Oclgrind, as the
fuzzer does (run.py, oclgrind_check), and what Oclgrind says is printed too."""

import os
import subprocess
import sys
import tempfile

import numpy as np

CONFIG_VARIABLES = ("TRITON_INTERPRET", "TRITON_OPENCL_DEVICE", "TRITON_SPIRV_TARGET", "TRITON_SPIRV_PROGRAM")


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
