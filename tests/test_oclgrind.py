"""Kernels of every test family, run under Oclgrind's data-race and memory checks.

A process under Oclgrind cannot import Triton (its bundled LLVM crashes there), so the
kernels run here on the normal device with TRITON_SPIRV_RECORD_DIR set, which records
each launch (launcher/replay.py), and a subprocess
`oclgrind --data-races --uninitialized python3 launcher/replay.py ...` replays the
recordings (importing only numpy and pyopencl) and compares every buffer with what the
normal device produced. Any race, invalid access or uninitialized value that Oclgrind
reports fails the kernel's test.

Oclgrind 21.10's uninitialized-value checker applies the stride of
`async_work_group_strided_copy` to the wrong side (test_oclgrind_strided_copy_quirk
shows it on a small kernel), so the replay runs with --expand-strided-copies: that
builtin becomes an element-wise loop with the same meaning, whose every access
Oclgrind checks. The emitter puts no barrier before async copies in kernels of one
work-item per group (nothing else can race there, and PoCL compiles barriers in loops
very slowly); Oclgrind would count the group's copy and the work-item's own accesses
to the tile as races, so the replay adds those barriers (--sync-async-copies);
test_single_work_item_async_copy_needs_the_barrier shows what Oclgrind says without.
Oclgrind 21.10 computes the zero-extension of an i1 vector (LLVM's form of
`-(a < b)` on vectors) as 255, so a recording whose buffers differ is replayed again
unoptimized (--recheck-unoptimized; test_oclgrind_i1_vector_quirk).
"""

import json
import os
import shutil
import subprocess
import sys
from collections import defaultdict

import pytest
import torch
import torch.nn.functional as F

from reliability_kernels import CASES

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPLAY = os.path.join(REPO_ROOT, "launcher", "replay.py")
OCLGRIND = shutil.which("oclgrind")
OCLGRIND_ARGS = ["--data-races", "--uninitialized"]

pytestmark = pytest.mark.skipif(
    OCLGRIND is None,
    reason="oclgrind is not installed (`WITH_OCLGRIND=1 bash scripts/setup.sh` or `apt-get install oclgrind`)")



def _record(case_dir, run):
    from launcher.replay import recording
    with recording(case_dir):
        run()


def _diagnostics(stderr):
    """Oclgrind's messages per recording name (text between the replay markers)."""
    found = defaultdict(list)
    current, block = None, []

    def flush():
        if current is not None and "".join(block).strip():
            found[current].extend(_split_messages("".join(block)))

    for line in stderr.splitlines(keepends=True):
        if line.startswith("### replay "):
            flush()
            current, block = line[len("### replay "):].strip(), []
        elif line.startswith("### done "):
            continue
        else:
            block.append(line)
    flush()
    return found


def _split_messages(text):
    """Oclgrind separates its messages with blank lines."""
    return [m.strip() for m in text.split("\n\n") if m.strip()]


REPLAY_ARGS = ("--expand-strided-copies", "--sync-async-copies", "--recheck-unoptimized")


def run_under_oclgrind(paths, timeout=600, replay_args=REPLAY_ARGS):
    """Replay recordings under Oclgrind: -> (results by name, diagnostics by name, environment)."""
    if not paths:
        return {}, {}, {}
    proc = subprocess.run([OCLGRIND, *OCLGRIND_ARGS, sys.executable, REPLAY, *replay_args, *paths], capture_output=True,
                          text=True, timeout=timeout, cwd=REPO_ROOT)
    results, environment = {}, {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            entry = json.loads(line)
            if "name" in entry:
                results[entry["name"]] = entry
            else:
                environment = entry
    if not environment:
        raise AssertionError(f"the replay under Oclgrind did not finish (exit {proc.returncode}):\n"
                             f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return results, _diagnostics(proc.stderr), environment


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    """Run every case on the normal device while recording, then replay all under Oclgrind."""
    from launcher.replay import list_recordings

    root = tmp_path_factory.mktemp("recordings")
    by_case, errors = {}, {}
    for _family, name, run in CASES:
        case_dir = os.path.join(root, name)
        try:
            _record(case_dir, run)
        except Exception as exc:  # reported by the case's own test
            errors[name] = exc
        by_case[name] = list_recordings(case_dir)
    paths = [p for ps in by_case.values() for p in ps]
    # Two Oclgrind processes (CI machines have two cores or more).
    half = len(paths) // 2
    results, diagnostics, environment = {}, {}, {}
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        for r, d, e in pool.map(run_under_oclgrind, [paths[:half], paths[half:]]):
            results.update(r)
            diagnostics.update(d)
            environment = environment or e
    return {"by_case": by_case, "errors": errors, "results": results, "diagnostics": diagnostics,
            "environment": environment, "clean": set()}


@pytest.mark.parametrize("family, name", [(family, name) for family, name, _ in CASES])
def test_kernel_is_clean_under_oclgrind(replayed, family, name):
    if name in replayed["errors"]:
        raise replayed["errors"][name]
    recordings = replayed["by_case"][name]
    assert recordings, f"{name}: no launch was recorded"
    problems = []
    for path in recordings:
        key = os.path.basename(path)
        result = replayed["results"].get(key)
        if result is None:
            problems.append(f"{key}: no replay result")
            continue
        problems += [f"{key}: {p}" for p in result["problems"]]
        problems += [f"{key}: Oclgrind: {m}" for m in replayed["diagnostics"].get(key, [])]
    assert not problems, "\n\n".join(problems[:10])
    replayed["clean"].update(os.path.basename(p) for p in recordings)


def test_replay_imports_no_heavy_modules(replayed):
    environment = replayed["environment"]
    assert environment["device"].startswith("Oclgrind")
    assert environment["heavy_modules"] == []


def test_oclgrind_summary(replayed, capsys):
    """Every recorded launch was replayed; prints how many ran clean (after the
    per-kernel tests)."""
    recorded = {os.path.basename(p) for paths in replayed["by_case"].values() for p in paths}
    assert recorded and recorded <= set(replayed["results"]), \
        f"launches recorded but not replayed: {sorted(recorded - set(replayed['results']))[:10]}"
    clean = replayed["clean"]
    kernels = {replayed["results"][name]["kernel"] for name in clean if name in replayed["results"]}
    with capsys.disabled():
        print(f"\nOclgrind: {len(clean)} kernel launches ({len(kernels)} distinct kernels, "
              f"{len(CASES)} cases) ran clean under oclgrind {' '.join(OCLGRIND_ARGS)}")


# ---------------------------------------------------------------------------------------
# The checks themselves: Oclgrind must see what it is there to see.


def _hand_recording(directory, name, source, global_size, buffers, scalars=()):
    """A recording written by hand: buffers are (parameter index, bytes, element)."""
    os.makedirs(directory, exist_ok=True)
    params = {}
    for number, (index, data, element) in enumerate(buffers):
        for suffix in ("in", "out"):
            with open(os.path.join(directory, f"buf{number}.{suffix}"), "wb") as f:
                f.write(data)
        params[str(index)] = {"kind": "buffer", "snapshot": number, "element": element}
    for index, code, value in scalars:
        params[str(index)] = {"kind": "scalar", "code": code, "value": value}
    with open(os.path.join(directory, "launch.json"), "w") as f:
        json.dump({"format": "triton-spirv-launch-1", "name": name, "source": source, "build_options": [],
                   "global_size": list(global_size), "local_size": [1] * len(global_size), "params": params}, f)
    return directory


def test_oclgrind_reports_out_of_bounds_race_and_uninitialized(tmp_path):
    import numpy as np

    zeros = np.zeros(8, np.float32).tobytes()
    oob = _hand_recording(str(tmp_path / "oob"), "oob", """
        __kernel void oob(__global float* x) { x[get_global_id(0) + 1] = 1.0f; }""",
        (8,), [(0, zeros, "fp32")])
    race = _hand_recording(str(tmp_path / "race"), "race", """
        __kernel void race(__global float* x) { x[0] = (float)get_global_id(0); }""",
        (4,), [(0, zeros, "fp32")])
    uninit = _hand_recording(str(tmp_path / "uninit"), "uninit", """
        __kernel void uninit(__global float* x) {
          __local float t[4];
          t[0] = 1.0f;
          barrier(CLK_LOCAL_MEM_FENCE);
          x[0] = t[get_global_id(0) + 1];
        }""",
        (1,), [(0, zeros, "fp32")])
    _results, diagnostics, _env = run_under_oclgrind([oob, race, uninit])
    assert any("Invalid write" in m for m in diagnostics["oob"]), diagnostics["oob"]
    assert any("data race" in m for m in diagnostics["race"]), diagnostics["race"]
    assert any("Uninitialized" in m for m in diagnostics["uninit"]), diagnostics["uninit"]


def test_oclgrind_strided_copy_quirk(tmp_path):
    """A correct kernel that Oclgrind 21.10 flags unless strided copies are expanded:
    the reason for --expand-strided-copies. If the first assertion fails, Oclgrind has
    been fixed and the option can go."""
    import numpy as np

    path = _hand_recording(str(tmp_path / "quirk"), "quirk", """
        __kernel void quirk(__global float* x, __global float* out) {
          __local float t[8];
          event_t ev = async_work_group_strided_copy(t, x, 8, 2, 0);
          wait_group_events(1, &ev);
          barrier(CLK_LOCAL_MEM_FENCE);
          ev = async_work_group_copy(out, t, 8, 0);
          wait_group_events(1, &ev);
        }""", (1,), [(0, np.arange(16, dtype=np.float32).tobytes(), "fp32"),
                     (1, np.arange(16, dtype=np.float32)[::2].tobytes(), "fp32")])
    results, diagnostics, _env = run_under_oclgrind([path], replay_args=())
    assert results["quirk"]["ok"], results["quirk"]
    assert any(m.startswith("Uninitialized value written") for m in diagnostics["quirk"]), diagnostics
    results, diagnostics, _env = run_under_oclgrind([path])
    assert results["quirk"]["ok"] and not diagnostics["quirk"], (results, diagnostics)


def test_oclgrind_i1_vector_quirk(tmp_path):
    """A correct kernel that Oclgrind 21.10 computes wrong when it is optimized: a
    vector comparison made 0/1 (as the emitter converts an i1 vector to integers) is
    255 there, 1 on every device and under Oclgrind unoptimized: the reason for
    --recheck-unoptimized. If the first assertion fails, Oclgrind has been fixed and the
    option can go."""
    import numpy as np

    values = np.linspace(-4, 4, 16).astype(np.float32)
    ones = (values < 0.5).astype(np.int32)
    path = _hand_recording(str(tmp_path / "flags"), "flags", """
        __kernel void flags(__global float* x, __global int* out) {
          int16 below = vload16(0, x) < (float16)(0.5f);
          vstore16(-below, 0, out);
        }""", (1,), [(0, values.tobytes(), "fp32"), (1, ones.tobytes(), "i32")])
    results, _diagnostics, _env = run_under_oclgrind([path], replay_args=())
    assert not results["flags"]["ok"], results["flags"]
    results, diagnostics, _env = run_under_oclgrind([path])
    assert results["flags"]["ok"] and not diagnostics["flags"], (results, diagnostics)
    assert results["flags"]["optimized_only"], results["flags"]


def test_single_work_item_async_copy_needs_the_barrier(tmp_path):
    """Without the barrier the replay adds, Oclgrind reports the group's async copy and the
    work-item's earlier store to the tile as a race, even with one work-item."""
    import numpy as np

    path = _hand_recording(str(tmp_path / "nosync"), "nosync", """
        __kernel void nosync(__global float* out) {
          __local float t[8];
          for (int i = 0; i < 8; ++i) t[i] = (float)i;
          event_t ev = async_work_group_copy(out, t, 8, 0);
          wait_group_events(1, &ev);
        }""", (1,), [(0, np.arange(8, dtype=np.float32).tobytes(), "fp32")])
    _results, diagnostics, _env = run_under_oclgrind([path], replay_args=())
    assert any("data race" in m for m in diagnostics["nosync"]), diagnostics
    results, diagnostics, _env = run_under_oclgrind([path])
    assert results["nosync"]["ok"] and not diagnostics["nosync"], (results, diagnostics)


# ---------------------------------------------------------------------------------------
# Kernels Inductor writes (torch.compile with cpu_backend="triton"), small enough to
# simulate: a persistent softmax (torch's safe softmax: scale, any-nonfinite, two maxima,
# exp, sum), layer norm then gelu, argmax (Inductor's NaN-aware pair combine), a cumsum,
# and a sum over rows too long for one block (a looped reduction, `r0_offset`).


def _inductor_models():
    x = torch.randn(8, 96, generator=torch.Generator().manual_seed(7))
    long_rows = torch.randn(4, 3000, generator=torch.Generator().manual_seed(8))
    weight, bias = torch.rand(96) + 0.5, torch.randn(96)
    return [
        ("softmax", lambda t: torch.softmax(t * 0.5, -1), (x,)),
        ("layer_norm_gelu", lambda t, w, b: F.gelu(F.layer_norm(t, (96,), w, b)) * 2, (x, weight, bias)),
        ("argmax", lambda t: t.argmax(-1), (x,)),
        ("cumsum", lambda t: torch.cumsum(t, -1), (x,)),
        ("long_row_sum", lambda t: (t * t).sum(-1), (long_rows,)),
    ]


def test_inductor_kernels_are_clean_under_oclgrind(tmp_path):
    """Each model compiled by Inductor runs on the device against eager while its
    launches are recorded; every recording then replays under Oclgrind: no race, no
    invalid access, no uninitialized read, buffers as the device computed them."""
    from launcher.replay import list_recordings
    from test_torch_compile import triton_on_cpu

    paths = []
    for name, model, inputs in _inductor_models():
        case_dir = os.path.join(tmp_path, name)
        with triton_on_cpu():
            _record(case_dir, lambda: torch.testing.assert_close(
                torch.compile(model)(*inputs), model(*inputs), atol=1e-5, rtol=1e-4))
        recorded = list_recordings(case_dir)
        assert recorded, f"{name}: no launch was recorded"
        paths += recorded
    results, diagnostics, _environment = run_under_oclgrind(paths)
    problems = []
    for path in paths:
        key = os.path.basename(path)
        result = results.get(key)
        if result is None:
            problems.append(f"{key}: no replay result")
            continue
        problems += [f"{key}: {p}" for p in result["problems"]]
        problems += [f"{key}: Oclgrind: {m}" for m in diagnostics.get(key, [])]
    assert not problems, "\n\n".join(problems[:10])
