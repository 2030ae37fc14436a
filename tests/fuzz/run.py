"""Run one generated program every way and compare with Triton's interpreter.

Configurations (device, kernel shape, program form) are named `DEVICE-SHAPE[-spirv]`:
pocl-cpu, pocl-gpu, intel-cpu, intel-gpu, intel-cpu-spirv, intel-gpu-spirv;
`oclgrind-cpu` and `oclgrind-gpu` run the program on PoCL in that shape while recording its launches
(launcher/replay.py) and replays them under Oclgrind's data-race, memory and
uninitialized-value checks. Each configuration (and the reference, the interpreter)
runs in its own worker process (tests/fuzz/worker.py): the device is chosen per
process, a hang is a program over its time limit (the worker is killed and
restarted), a crash is a worker that dies.

Tolerances (outputs are compared element by element, after upcasting to float64):
- integer and boolean outputs, and float outputs of exact programs: exact, except as below;
- float outputs: |got - ref| <= atol * max(1, max|ref|) + rtol * |ref| with (rtol, atol)
  fp64 (1e-9, 1e-9), fp32 (1e-4, 1e-4), fp16 (1e-2, 1e-2), bf16 (6e-2, 6e-2),
  fp8e4nv (0.13, 0.02), fp8e5 (0.26, 0.04): a few ulps of the output type after chains
  of rounded operations, libdevice results, sums and dots accumulated in other orders
  (the atol term scales with the output's largest magnitude for cancellations). A
  program that computes in fp16 or rounds through fp8 or bf16 anywhere allows that
  type's tolerance on every float output (fp8e5's for either fp8).
- plus, for a float output that differs beyond these, each element's sensitivity to
  rounding: SPREAD_FACTOR times the largest change of that element over PERTURBED_RUNS
  runs of the reference with the rounding of every float operation perturbed by up to
  an ulp of its type (tests/fuzz/reference.py, perturb_rounding; `rounding_spread`).
  It covers what no fixed tolerance can without hiding bugs: a low-precision sum or
  scan followed by a cancellation (the error scales with the partial sums, not with the
  result), and sin/cos of huge or inexact arguments (an ulp of the argument spans many
  periods: anything in [-1, 1]); an element that does not move under perturbation keeps
  the tolerance above, so a dropped term or a wrong sign is still reported. The
  perturbed runs happen only for a program with a difference, once per program.
- NaN positions must match exactly, and infinities must match in sign and position.
The generator feeds only bit-exact values into discontinuous operations (its
docstring), so these tolerances never hide a flipped branch.
"""

import json
import os
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field

import numpy as np

from .worker import REPLY_MARK

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPLAY = os.path.join(REPO_ROOT, "launcher", "replay.py")

# name -> (environment, launch options)
CONFIGS = {
    "pocl-cpu": ({"TRITON_OPENCL_DEVICE": "pocl"}, {}),
    "pocl-gpu": ({"TRITON_OPENCL_DEVICE": "pocl"}, {"opencl_target": "gpu"}),
    "intel-cpu": ({"TRITON_OPENCL_DEVICE": "intel"}, {"program": "source"}),
    "intel-gpu": ({"TRITON_OPENCL_DEVICE": "intel"}, {"opencl_target": "gpu", "program": "source"}),
    "intel-cpu-spirv": ({"TRITON_OPENCL_DEVICE": "intel"}, {"program": "spirv"}),
    "intel-gpu-spirv": ({"TRITON_OPENCL_DEVICE": "intel"}, {"opencl_target": "gpu", "program": "spirv"}),
    "oclgrind-cpu": ({"TRITON_OPENCL_DEVICE": "pocl"}, {}),
    "oclgrind-gpu": ({"TRITON_OPENCL_DEVICE": "pocl"}, {"opencl_target": "gpu"}),
}
REFERENCE = ({"TRITON_INTERPRET": "1"}, {})

TOLERANCES = {"fp64": (1e-9, 1e-9), "fp32": (1e-4, 1e-4), "fp16": (1e-2, 1e-2), "bf16": (6e-2, 6e-2),
              "fp8e4nv": (0.13, 0.02), "fp8e5": (0.26, 0.04)}
# the rounding sensitivity: runs with perturbed rounding (reference.py, perturb_rounding:
# upward, downward, two random), and the factor on their largest change
PERTURBED_RUNS = ("up", "down", 1, 2)
SPREAD_FACTOR = 2.0
OCLGRIND_LOCAL_MEMORY = 4 << 20
PROGRAM_TIMEOUT = float(os.environ.get("TRITON_SPIRV_FUZZ_TIMEOUT", "120"))


@dataclass
class Outcome:
    """What one configuration did with one program: kind is "ok", "mismatch", "error",
    "hang", "crash" or "oclgrind"; signature groups outcomes of the same cause."""
    config: str
    kind: str
    signature: str = ""
    detail: str = ""

    @property
    def failed(self):
        return self.kind != "ok"


@dataclass
class Result:
    reference_error: str = ""
    outcomes: list = field(default_factory=list)


# ---------------------------------------------------------------------- workers

class Worker:
    """A persistent worker process for one configuration."""

    def __init__(self, name, env, options):
        self.name, self.env, self.options = name, env, options
        self.proc = None
        self.replies = None

    def start(self):
        env = dict(os.environ)
        for key in ("TRITON_INTERPRET", "TRITON_OPENCL_DEVICE", "TRITON_SPIRV_TARGET", "TRITON_SPIRV_PROGRAM"):
            env.pop(key, None)
        env.update(self.env)
        env["PYTHONPATH"] = REPO_ROOT + os.pathsep + env.get("PYTHONPATH", "")
        env.setdefault("TRITON_CACHE_DIR", os.path.join(tempfile.gettempdir(), "tritoncache-fuzz"))
        # not in the checkout: a crashing PoCL leaves its .dot dumps in the working directory
        self.proc = subprocess.Popen([sys.executable, "-u", "-m", "tests.fuzz.worker"], cwd=tempfile.gettempdir(), env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, start_new_session=True)
        self.replies = queue.Queue()
        self.stderr_tail = []
        threading.Thread(target=self._read, args=(self.proc, self.replies), daemon=True).start()
        threading.Thread(target=self._drain, args=(self.proc,), daemon=True).start()

    def _read(self, proc, replies):
        for line in proc.stdout:
            if line.startswith(REPLY_MARK):
                replies.put(json.loads(line[len(REPLY_MARK):]))
        replies.put(None)  # the worker exited

    def _drain(self, proc):
        tail = self.stderr_tail
        for line in proc.stderr:
            tail.append(line)
            del tail[:-40]

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        self.proc = None

    def request(self, path, out, record=None, timeout=PROGRAM_TIMEOUT, options=None):
        """-> reply dict, or {"status": "hang"} / {"status": "crash", ...}; `options` are
        added to the worker's launch options."""
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        self.proc.stdin.write(json.dumps({"path": path, "out": out, "options": dict(self.options, **(options or {})),
                                          "record": record}) + "\n")
        self.proc.stdin.flush()
        try:
            reply = self.replies.get(timeout=timeout)
        except queue.Empty:
            self.stop()
            return {"status": "hang", "message": f"no result after {timeout:.0f} s"}
        if reply is None:
            code = self.proc.wait()
            tail = "".join(self.stderr_tail[-15:])
            self.proc = None
            return {"status": "crash", "message": f"worker exited with {code}\n{tail}"}
        return reply


class Pool:
    """One worker per configuration plus the reference, started lazily."""

    def __init__(self, configs):
        self.configs = list(configs)
        self.reference = Worker("reference", *REFERENCE)
        self.perturbed = Worker("reference-perturbed", *REFERENCE)  # rounding_spread's runs
        self.workers = {name: Worker(name, *CONFIGS[name]) for name in self.configs}

    def close(self):
        self.reference.stop()
        self.perturbed.stop()
        for w in self.workers.values():
            w.stop()


# ---------------------------------------------------------------------- comparing

def normalize(message):
    """A signature from an error message: its first meaningful line, numbers and
    names of temporaries removed, so one cause gives one signature."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    diagnostics = [line[line.rindex("error:"):] for line in lines if "error:" in line]
    interesting = [line for line in lines if re.search(r"error|Error|failed|ambiguous", line)]
    line = (diagnostics or interesting or lines or [""])[0]
    line = re.sub(r"^error: \S+ <Spelling=\S+>: ", "error: ", line)  # PoCL's locations
    line = re.sub(r"\b_cl_(\w+)", r"\1", line)  # PoCL's builtin renames
    line = re.sub(r"0x[0-9a-f]+", "N", line)
    line = re.sub(r"\d+", "N", line)
    line = re.sub(r"/[\w/.\-]+", "PATH", line)
    line = re.sub(r"%[\w.#]+", "%v", line)
    return line[:160]


def tolerance(dtype_name, loosest=None):
    rtol, atol = TOLERANCES.get(dtype_name, (0.0, 0.0))
    if loosest:
        rtol, atol = max(rtol, TOLERANCES[loosest][0]), max(atol, TOLERANCES[loosest][1])
    return rtol, atol


def loosest_type(program):
    """The least precise float type `program` computes in: every float output may carry
    its rounding (an fp16 cumsum stored as fp32 rounds like fp16)."""
    features = program.features()
    if "fp8" in features:
        return "fp8e5"
    if "bf16" in features:
        return "bf16"
    if "tl.float16" in program.kernel_source() or any(i.dtype == "fp16" for i in program.inputs):
        return "fp16"
    return None


def compare(expected, got, output_dtypes, loosest=None, spread=None):
    """-> "" when equal within the tolerances, else a description of the first difference.
    `spread`: output name -> each element's sensitivity to rounding (`rounding_spread`),
    allowed SPREAD_FACTOR times on top of the type's tolerance."""
    problems = []
    for name, ref in expected.items():
        if name not in got:
            problems.append(f"{name}: missing")
            continue
        val = got[name]
        if ref.shape != val.shape:
            problems.append(f"{name}: shape {val.shape} != {ref.shape}")
            continue
        dtype = output_dtypes.get(name, "")
        if ref.dtype.kind in "iub":
            bad = ref != val
        else:
            r, v = ref.astype(np.float64), val.astype(np.float64)
            rtol, atol = tolerance(dtype, loosest)
            finite = np.isfinite(r)
            scale = max(1.0, float(np.abs(r[finite]).max())) if finite.any() else 1.0
            allowed = atol * scale + rtol * np.abs(r)
            if spread is not None and name in spread:
                allowed = allowed + SPREAD_FACTOR * spread[name]
            with np.errstate(invalid="ignore"):
                close = np.abs(v - r) <= allowed
            same_special = (np.isnan(r) & np.isnan(v)) | (np.isinf(r) & (r == v))
            bad = ~np.where(finite, close & np.isfinite(v), same_special)
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            problems.append(f"{name} ({dtype}): {int(bad.sum())} of {bad.size} elements differ, first at {idx}: "
                            f"got {val[idx]!r}, expected {ref[idx]!r}")
    return "; ".join(problems)


def rounding_spread(pool, path, workdir, expected):
    """-> output name -> how far each float element of the reference moves over
    PERTURBED_RUNS runs with perturbed rounding (inf where a run leaves the finite
    numbers), or None when a perturbed run fails (then no allowance is made)."""
    spread = {name: np.zeros(ref.shape) for name, ref in expected.items() if ref.dtype.kind == "f"}
    out = os.path.join(workdir, "reference-perturbed.npz")
    for how in PERTURBED_RUNS:
        reply = pool.perturbed.request(path, out, options={"perturb": how})
        if reply["status"] != "ok":
            return None
        moved = _load_npz(out)
        for name, change in spread.items():
            r, p = expected[name].astype(np.float64), moved[name].astype(np.float64)
            with np.errstate(invalid="ignore"):
                delta = np.where(np.isfinite(r) & ~np.isfinite(p), np.inf, np.abs(p - r))
            np.fmax(change, np.where(np.isfinite(r), delta, 0.0), out=change)
    return spread


def _load_npz(path):
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


# ---------------------------------------------------------------------- one program

def run_program(program, path, pool, workdir, configs=None, oclgrind_timeout=300):
    """Write `program` to `path`, run it in the reference and every configuration."""
    with open(path, "w") as f:
        f.write(program.source())
    result = Result()
    ref_out = os.path.join(workdir, "reference.npz")
    reply = pool.reference.request(path, ref_out)
    if reply["status"] != "ok":
        result.reference_error = f"{reply.get('type', reply['status'])}: {reply.get('message', '')}"
        return result
    expected = _load_npz(ref_out)
    dtypes = {o.name: o.dtype for o in program.outputs}
    loosest = loosest_type(program)
    spread = Spread(pool, path, workdir, expected)
    for name in configs or pool.configs:
        result.outcomes.append(run_config(name, path, pool, workdir, expected, dtypes, loosest, oclgrind_timeout,
                                          spread))
    return result


class Spread:
    """A program's `rounding_spread`, computed at the first call (the first difference)."""

    def __init__(self, pool, path, workdir, expected):
        self.args = (pool, path, workdir, expected)
        self.value, self.done = None, False

    def __call__(self):
        if not self.done:
            self.value, self.done = rounding_spread(*self.args), True
        return self.value


def run_config(name, path, pool, workdir, expected, dtypes, loosest, oclgrind_timeout=300, spread=None):
    """`spread`: the program's Spread (None: the tolerances without the rounding sensitivity)."""
    out = os.path.join(workdir, f"{name}.npz")
    record = os.path.join(workdir, "recording") if is_oclgrind(name) else None
    if record:
        subprocess.run(["rm", "-rf", record])
    reply = pool.workers[name].request(path, out, record=record)
    status = reply["status"]
    if status == "crash":  # the runtime's last words tell one crash from another
        message = reply.get("message", "")
        last = [line for line in message.splitlines()[1:] if re.search(r"Assert|assert|failed|error|symbol", line)]
        return Outcome(name, status, f"crash: {normalize(last[-1]) if last else ''}", message)
    if status == "hang":
        return Outcome(name, status, status, reply.get("message", ""))
    if status == "error" and _refused_for_a_quirk(reply):
        return Outcome(name, "ok", detail=f"refused: {reply.get('message', '')[:200]}")
    if status == "error":
        message = reply.get("message", "")
        return Outcome(name, "error", f"{reply['type']}: {normalize(message)}",
                       f"{reply['type']}: {message}\n{reply.get('traceback', '')}")
    got = _load_npz(out)
    diff = compare(expected, got, dtypes, loosest)
    if diff and spread is not None and spread() is not None:
        diff = compare(expected, got, dtypes, loosest, spread())
    if diff:
        return Outcome(name, "mismatch", "mismatch", diff)
    if record:
        return oclgrind_check(name, record, oclgrind_timeout)
    return Outcome(name, "ok")


def _refused_for_a_quirk(reply) -> bool:
    """A form the device computes wrong, refused with a clear error naming its quirk
    (triton_spirv/target.py): the answer the compiler owes there, not a failure (e.g.
    intel-gpu-spirv: GPU-shaped kernels with private arrays go as OpenCL C unless
    SPIR-V is forced)."""
    return reply.get("type") in ("OpenCLCChosen", "SpirvStageError") and \
        "(quirk " in reply.get("message", "")


def is_oclgrind(config):
    return config.startswith("oclgrind")


# Oclgrind 21.10's uninitialized-value checker stops at LLVM's `freeze`, which its
# compiler makes of a division and a remainder by one runtime divisor (tutorial 03's
# grouped program order): such replays run again with the race checks alone.
_UNSUPPORTED_FREEZE = "Unsupported instruction: freeze"


def _oclgrind_replay(oclgrind: str, checks: list, paths: list, timeout) -> subprocess.CompletedProcess:
    # the kernels were compiled for PoCL's local memory (MiBs on a CPU); Oclgrind has 32 KiB
    cmd = [oclgrind, "--local-mem-size", str(OCLGRIND_LOCAL_MEMORY), *checks,
           sys.executable, REPLAY, "--expand-strided-copies",
           "--sync-async-copies", "--recheck-unoptimized", *paths]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT)


def oclgrind_check(name, record_dir, timeout):
    """Replay the recorded launches under Oclgrind; its diagnostics are findings."""
    import shutil
    oclgrind = shutil.which("oclgrind")
    if oclgrind is None:
        return Outcome(name, "ok", detail="oclgrind not installed")
    paths = sorted(os.path.join(record_dir, d) for d in os.listdir(record_dir)) if os.path.isdir(record_dir) else []
    if not paths:
        return Outcome(name, "ok", detail="nothing recorded")
    checks = ["--data-races", "--uninitialized"]
    try:
        proc = _oclgrind_replay(oclgrind, checks, paths, timeout)
        if _UNSUPPORTED_FREEZE in proc.stderr:
            checks.remove("--uninitialized")
            proc = _oclgrind_replay(oclgrind, checks, paths, timeout)
    except subprocess.TimeoutExpired:
        return Outcome(name, "hang", "hang", f"oclgrind replay over {timeout} s")
    diagnostics = [line for line in proc.stderr.splitlines()
                   if line.strip() and not line.startswith("###")]
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    bad = [r for r in results if r.get("ok") is False or r.get("mismatches")]
    if diagnostics:
        first = next((d for d in diagnostics if re.search(r"Invalid|race|Uninitiali|error", d)), diagnostics[0])
        return Outcome(name, "oclgrind", f"oclgrind: {normalize(first)}", "\n".join(diagnostics[:40]))
    if bad:
        return Outcome(name, "mismatch", "replay mismatch", json.dumps(bad)[:3000])
    if proc.returncode != 0 and not results:
        return Outcome(name, "crash", "crash", proc.stdout[-2000:] + proc.stderr[-2000:])
    return Outcome(name, "ok")
