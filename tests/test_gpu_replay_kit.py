"""The GPU replay kit (scripts/gpu_replay/): two families recorded at small sizes as
bundles, replayed on the device in use through the kit's own replay (inputs
regenerated from their descriptions, results against the numpy references and the
recording), and through run_on_gpu.sh, the one command of a GPU machine. A corrupted
byte of a carried output, a wrong reference and an input regenerated differently
are each reported."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KIT = os.path.join(ROOT, "scripts", "gpu_replay")
sys.path.insert(0, KIT)

import references  # noqa: E402
import replay_kit  # noqa: E402

FAMILIES = ("vector_add", "softmax")


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu_replay")
    proc = subprocess.run([sys.executable, os.path.join(KIT, "record.py"), "--size", "small",
                           "--families", ",".join(FAMILIES), "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


@pytest.fixture
def copy_of(bundles, tmp_path):
    """A bundle folder the test may damage."""
    def copy(family):
        return shutil.copytree(bundles / family, tmp_path / family)
    return copy


def replay(folder):
    import pyopencl as cl
    from launcher import get_device
    device = get_device()
    queue = cl.CommandQueue(device.context, device.device, properties=cl.command_queue_properties.PROFILING_ENABLE)
    return replay_kit.replay(str(folder), cl, device.context, queue, budget_s=0.05)


def test_bundles_are_small_and_regenerate_their_inputs(bundles):
    for family in FAMILIES:
        _meta, kit = replay_kit.load(str(bundles / family))
        inputs = [e for e in kit["buffers"].values() if e["check"] == "unchanged"]
        assert inputs and all(e["input"]["kind"] == "uniform" for e in inputs), kit
        assert not os.path.exists(bundles / family / "buf0.in")     # regenerated, not carried
        assert kit["target"] == "gpu-64k"
        meta, _kit = replay_kit.load(str(bundles / family))
        assert meta["local_size"][0] == 128                          # a program on 4 warps
        assert "work_group_reduce" not in meta["source"] and "sub_group" not in meta["source"]


@pytest.mark.parametrize("family", FAMILIES)
def test_replay_matches_reference_and_recording(bundles, family):
    result = replay(bundles / family)
    assert result["ok"], result["problems"]
    assert result["recording"] == "bitwise"          # the recording device itself
    assert result["max_error"] <= references.TOLERANCES[family][1] + 1e-3
    assert result["us"] > 0 and result["launches"] >= 3


@pytest.mark.parametrize("family", FAMILIES)
def test_a_corrupted_output_byte_fails(copy_of, family):
    folder = copy_of(family)
    _meta, kit = replay_kit.load(str(folder))
    number = next(n for n, e in kit["buffers"].items() if e["check"] == "reference")
    path = folder / f"buf{number}.out"
    data = bytearray(path.read_bytes())
    data[len(data) // 2 + 3] ^= 0x40          # an exponent bit of one float
    path.write_bytes(bytes(data))
    result = replay(folder)
    assert not result["ok"]
    assert result["recording"] == "differs"
    assert any(f"buffer {number} ('{kit['buffers'][number]['role']}') against the recording" in p
               for p in result["problems"]), result["problems"]


def test_a_wrong_reference_fails(bundles, monkeypatch):
    right = references.REFERENCES["softmax"]

    def off_by_one_element(arrays, shape):
        expected = right(arrays, shape)
        expected["out"] = expected["out"].copy()
        expected["out"][1, 2] += 1e-3
        return expected
    monkeypatch.setitem(references.REFERENCES, "softmax", off_by_one_element)
    result = replay(bundles / "softmax")
    assert not result["ok"]
    assert any("against the reference: 1 of" in p for p in result["problems"]), result["problems"]


def test_an_input_regenerated_differently_is_refused(copy_of):
    folder = copy_of("vector_add")
    kit = json.loads((folder / "kit.json").read_text())
    entry = next(e for e in kit["buffers"].values() if e["role"] == "x")
    entry["input"]["seed"] += 1
    (folder / "kit.json").write_text(json.dumps(kit))
    with pytest.raises(replay_kit.KitError, match="'x'.* other bytes than were recorded"):
        replay(folder)


def test_inputs_are_deterministic_and_shaped():
    from inputs import generate
    spec = {"kind": "uniform", "dtype": "float16", "shape": [3, 5], "seed": 4, "low": -2, "high": 2}
    a = generate(spec)
    assert a.shape == (3, 5) and a.dtype == np.float16 and (a == generate(spec)).all()
    assert -2 <= a.min() and a.max() < 2 and len(np.unique(a)) > 10
    ints = generate({"kind": "integers", "dtype": "int32", "shape": [1000], "seed": 1, "high": 7})
    assert set(np.unique(ints)) == set(range(7))


def test_run_on_gpu_sh_replays_without_a_gpu(bundles, tmp_path):
    """The GPU machine's one command on the device in use (no ICD step, no CUDA): every
    bundle replays correctly and the JSON report lands in $OUT."""
    from launcher import get_device
    platform = get_device().device.platform.name
    env = dict(os.environ, GPU_REPLAY_SKIP_ICD="1", GPU_REPLAY_DEVICE=platform, OUT=str(tmp_path),
               GPU_REPLAY_BUNDLES=str(bundles), GPU_REPLAY_SITE=str(tmp_path / "site"))
    proc = subprocess.run(["bash", os.path.join(KIT, "run_on_gpu.sh"), "--budget-s", "0.05"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((tmp_path / "gpu_replay.json").read_text())
    assert [r["family"] for r in report["kernels"]] == sorted(FAMILIES)
    assert all(r["ok"] for r in report["kernels"]), report
    assert report["device"]["platform"] == platform.strip()
    assert "vector_add" in proc.stdout and " yes " in proc.stdout
