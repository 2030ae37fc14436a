"""PyTorch's own Inductor tests for the CPU-Triton path, run through this backend.

`test/inductor/test_triton_cpu_backend.py` (a PyTorch checkout's, not ours) copies the
common tests of `test_torchinductor.py` (`CommonTemplate`) into `CpuTritonTests` with
`torch._inductor.config.cpu_backend = "triton"`, which reaches this backend through its
`cpu` entry point (triton_spirv/inductor/). The same tests under Inductor's C++ backend
are `test_torchinductor.py`'s `CpuTests`; running both tells our failures from the tests'
own (a test that fails on both is not ours).

PyTorch's test files are not shipped in its wheels and never enter this repository, so
this runner takes the path of a checkout's `test/` folder:

    PYTORCH_TEST_DIR=/path/to/pytorch/test python3 scripts/pytorch_inductor_tests.py
    python3 scripts/pytorch_inductor_tests.py --test-dir /path/to/pytorch/test --all

It runs the fixed sample (scripts/pytorch_inductor_sample.txt: names of `CommonTemplate`
tests, without the `_cpu` suffix) or everything, each backend in its own pytest process
(junit XML per backend), and prints the pass rate of each backend and a table of the
failures of the Triton path, classified by comparing with the C++ backend and by the
error text (`classify`). Without a test folder it says so and exits 0: CI runs it only
where PYTORCH_TEST_DIR is set. docs/pytorch-inductor-tests.md has the last full results.

Loaded as a pytest plugin (`-p pytorch_inductor_tests`, which this runner passes) it
fills in names the test files import that newer or older torch releases moved
(`pytest_configure`), so a checkout a little off the installed torch still imports.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import random
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SAMPLE_FILE = os.path.join(HERE, "pytorch_inductor_sample.txt")

# backend -> (test file under test/inductor, test classes whose tests are compared)
SUITES = {
    "triton": ("test_triton_cpu_backend.py", ("CpuTritonTests", "SweepInputsCpuTritonTest")),
    "cpp": ("test_torchinductor.py", ("CpuTests", "SweepInputsCpuTest")),
}
# The sweep classes' tests have the same names under both backends.
SWEEP_CLASSES = {"SweepInputsCpuTritonTest": "sweep", "SweepInputsCpuTest": "sweep"}


# ---------------------------------------------------------------- pytest plugin side
def pytest_configure(config):  # noqa: ARG001 - pytest's hook signature
    """Names `test_torchinductor.py` imports that torch 2.13 moved or removed."""
    import torch._inductor.compile_fx as compile_fx
    import torch.testing._internal.triton_utils as triton_utils

    if not hasattr(triton_utils, "requires_cuda"):
        triton_utils.requires_cuda = triton_utils.requires_cuda_and_triton
    if not hasattr(compile_fx, "complex_memory_overlap"):
        def complex_memory_overlap(_tensor):
            raise NotImplementedError("complex_memory_overlap is not in this torch")

        compile_fx.complex_memory_overlap = complex_memory_overlap


# ---------------------------------------------------------------- results
@dataclass
class Result:
    outcome: str  # passed, failed, error, skipped, xfailed, xpassed
    message: str = ""


def base_name(test_name: str) -> str:
    """`test_foo_cpu` -> `test_foo` (parametrized names keep their parameters)."""
    return test_name[:-4] if test_name.endswith("_cpu") else test_name


def read_junit(path: str) -> dict[str, Result]:
    """test key (`comparison_key`) -> Result."""
    results = {}
    if not os.path.exists(path):
        return results
    for case in ET.parse(path).getroot().iter("testcase"):
        cls = case.get("classname", "").rsplit(".", 1)[-1]
        kind = SWEEP_CLASSES.get(cls, "common")
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                message = (child.get("message") or "") + "\n" + (child.text or "")
                outcome = "xpassed" if "Unexpected success" in message else (
                    "failed" if child.tag == "failure" else "error")
            elif child.tag == "skipped":
                message = child.get("message") or ""
                outcome = "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
        name = base_name(case.get("name", ""))
        results[f"sweep:{name}" if kind == "sweep" else name] = Result(outcome, message.strip())
    return results


# The error texts that say which side a failure of the Triton path belongs to.
GPU_PATTERNS = re.compile(r"requires (cuda|gpu)|CUDA|Torch not compiled with CUDA|cudagraph", re.I)
OURS_PATTERNS = re.compile(
    r"triton_spirv|emitter_opencl|launcher/|ConversionError|TTIRReadError|EmitError|"
    r"clBuildProgram|BUILD_PROGRAM_FAILURE|pyopencl|OpenCL|OutOfResources|MLIR|mlir",
)
# Expectations about the code Inductor writes (kernel counts, C++ names, code text), not
# about results, and Triton code that Triton's own frontend refuses (Inductor's block
# pointers, gone from Triton 3.9): they fail the same way whichever backend compiles.
PLUMBING_PATTERNS = re.compile(
    r"cpp_fused|FileCheck|run_and_get_cpp_code|generated_kernel_count|"
    r"assertGeneratedKernelCountEqual|run_and_get_(triton_)?code|make_block_ptr|"
    r"Block pointers have been removed", re.I)


def classify(triton: Result, cpp: Result | None) -> str:
    """One of: ours, plumbing, needs GPU, fails on C++ too, passes (xpass)."""
    if triton.outcome == "xpassed":
        return "passes where upstream expects a failure"
    if cpp is not None and cpp.outcome in ("failed", "error"):
        return "fails on the C++ backend too"
    if GPU_PATTERNS.search(triton.message):
        return "needs CUDA/GPU"
    if OURS_PATTERNS.search(triton.message):
        return "ours"
    if PLUMBING_PATTERNS.search(triton.message):
        return "Inductor-on-CPU plumbing"
    return "ours (unclassified: read the message)"


def first_line(message: str) -> str:
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    for line in lines:
        if re.search(r"Error|error|assert|Mismatch|Exception", line):
            return line[:160]
    return (lines[0] if lines else "")[:160]


# ---------------------------------------------------------------- running
def collect(test_dir: str, backend: str, env: dict) -> list[str]:
    """The node ids of the backend's compared classes."""
    test_file, classes = SUITES[backend]
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider",
         "-p", "pytorch_inductor_tests", test_file],
        cwd=os.path.join(test_dir, "inductor"), env=env, capture_output=True, text=True,
    ).stdout
    ids = [line.strip() for line in out.splitlines() if "::" in line]
    return [i for i in ids if i.split("::")[1] in classes]


def comparison_key(node_id: str) -> str:
    """The name a test has under both backends: `test_foo` (common) or `sweep:test_cpu_a_b`."""
    _, cls, name = node_id.split("::")
    return f"sweep:{name}" if cls in SWEEP_CLASSES else base_name(name)


def run_backend(test_dir, backend, node_ids, junit, timeout, env):
    test_file, _ = SUITES[backend]
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as ids_file:
        ids_file.write("\n".join(node_ids))
    cmd = [sys.executable, "-m", "pytest", "-q", "--tb=short", "-p", "no:cacheprovider",
           "-p", "pytorch_inductor_tests", f"--junitxml={junit}", "-W", "ignore",
           f"@{ids_file.name}"]
    if timeout and importlib.util.find_spec("pytest_timeout"):
        cmd.insert(4, f"--timeout={timeout}")
    print(f"[{backend}] {len(node_ids)} tests of {test_file} -> {junit}", flush=True)
    subprocess.run(cmd, cwd=os.path.join(test_dir, "inductor"), env=env)
    os.unlink(ids_file.name)


def load_sample(path: str = SAMPLE_FILE) -> set[str]:
    """A sample's test keys (`comparison_key`), one a line, `#` starts a comment."""
    with open(path) as f:
        return {line.split("#")[0].strip() for line in f if line.split("#")[0].strip()}


def summarize(results: dict[str, dict], out=None) -> int:
    """Pass rates per backend and the classified failures of the Triton path; returns
    the number of failures classified as ours."""
    out = out or sys.stdout
    triton, cpp = results.get("triton", {}), results.get("cpp", {})
    for backend, res in (("triton", triton), ("cpp", cpp)):
        if not res:
            continue
        counts = {}
        for r in res.values():
            counts[r.outcome] = counts.get(r.outcome, 0) + 1
        ran = sum(v for k, v in counts.items() if k != "skipped")
        # A test upstream marks as expected to fail counts as passed only if its body passed.
        passed = counts.get("passed", 0) + counts.get("xpassed", 0)
        rate = 100.0 * passed / ran if ran else 0.0
        detail = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        print(f"{backend}: {passed}/{ran} pass ({rate:.1f}%) [{detail}]", file=out)
    failures = [(key, r) for key, r in sorted(triton.items())
                if r.outcome in ("failed", "error", "xpassed")]
    if failures:
        print("\n| test | class | first error line |\n|---|---|---|", file=out)
    for key, r in failures:
        label = classify(r, cpp.get(key))
        print(f"| {key} | {label} | {first_line(r.message).replace('|', '/')} |", file=out)
    return sum(1 for (key, r) in failures
               if classify(r, cpp.get(key)).startswith("ours"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--test-dir", default=os.environ.get("PYTORCH_TEST_DIR"),
                        help="a PyTorch checkout's test/ folder (default: $PYTORCH_TEST_DIR)")
    parser.add_argument("--all", action="store_true", help="every test, not the fixed sample")
    parser.add_argument("--random", type=int, metavar="N",
                        help="N tests drawn from everything with --seed, not the fixed sample")
    parser.add_argument("--seed", type=int, default=2130)
    parser.add_argument("--sample-file", default=SAMPLE_FILE,
                        help="the list of test keys to run (default: the fixed sample)")
    parser.add_argument("--backend", choices=("triton", "cpp", "both"), default="both")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per test (pytest-timeout)")
    parser.add_argument("--out", default="pytorch-inductor-results",
                        help="folder for the junit XML files")
    parser.add_argument("--summarize-only", action="store_true",
                        help="read the junit XML files in --out, run nothing")
    args = parser.parse_args(argv)

    backends = ("triton", "cpp") if args.backend == "both" else (args.backend,)
    os.makedirs(args.out, exist_ok=True)
    junits = {b: os.path.abspath(os.path.join(args.out, f"{b}.xml")) for b in backends}
    if not args.summarize_only:
        if not args.test_dir or not os.path.isdir(os.path.join(args.test_dir, "inductor")):
            print("no PyTorch test folder (--test-dir or PYTORCH_TEST_DIR): nothing to run")
            return 0
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (HERE, ROOT, env.get("PYTHONPATH", "")) if p)
        collected = {b: {comparison_key(n): n for n in collect(args.test_dir, b, env)} for b in backends}
        keys = set.intersection(*(set(c) for c in collected.values()))
        if args.random:  # the same names under every backend
            keys = set(random.Random(args.seed).sample(sorted(keys), min(args.random, len(keys))))
        elif not args.all:
            keys &= load_sample(args.sample_file)
        for backend in backends:
            node_ids = [collected[backend][k] for k in sorted(keys)]
            run_backend(args.test_dir, backend, node_ids, junits[backend], args.timeout, env)
    ours = summarize({b: read_junit(junits[b]) for b in backends})
    return 1 if ours else 0


if __name__ == "__main__":
    sys.exit(main())
