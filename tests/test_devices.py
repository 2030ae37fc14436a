"""`triton-spirv devices` lists every OpenCL device as pyopencl sees it, marks the one
kernels run on, and says why a device fails the probe."""
import os
import re
import subprocess
import sys

import pyopencl as cl

import launcher
from launcher import device as device_module
from launcher.devices_report import devices_report

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(HERE)


def _device_block(report, p_index, d_index):
    found = re.search(rf"^  device {p_index}:{d_index}: .*?(?=^  device |^platform |^Kernels run|^No device|\Z)",
                      report, re.M | re.S)
    assert found, report
    return found.group(0)


def test_devices_lists_every_device_with_its_facts():
    run = subprocess.run([sys.executable, "-m", "triton_spirv.cli", "devices"], cwd=REPO_ROOT,
                         env=dict(os.environ, PYTHONPATH=REPO_ROOT), capture_output=True, text=True,
                         timeout=120, check=True)
    report = run.stdout
    for p_index, platform in enumerate(cl.get_platforms()):
        assert f"platform {p_index}: {platform.name.strip()}" in report
        for d_index, dev in enumerate(platform.get_devices()):
            block = _device_block(report, p_index, d_index)
            assert dev.name.strip() in block.splitlines()[0]
            assert re.search(rf"compute units\s+{dev.max_compute_units}\n", block)
            assert re.search(rf"local memory\s+{dev.local_mem_size // 1024} KiB", block)
            assert re.search(rf"OpenCL C\s+{re.escape(dev.opencl_c_version.strip())}", block)
            fp16 = "yes" if "cl_khr_fp16" in dev.extensions else "no"
            assert re.search(rf"fp16\s+{fp16}", block)
            subgroups = dev.max_num_sub_groups if dev.version.split()[1] >= "2.1" else 0
            if subgroups:
                assert re.search(rf"sub-groups\s+up to {subgroups} per work-group", block)
            assert "probe                ok" in block


def test_the_chosen_device_is_the_one_kernels_run_on():
    report = devices_report()
    chosen = launcher.get_device()
    marked = re.findall(r"^  device (\d+):(\d+): .*<- chosen$", report, re.M)
    assert marked == [(str(chosen.platform_index), str(chosen.device_index))]
    assert "Kernels run on" in report


def test_a_device_failing_the_probe_shows_why(monkeypatch):
    real_probe = device_module._probe
    first = cl.get_platforms()[0].get_devices()[0]

    def probe(cl_module, context, queue, identity):
        if context.devices[0] == first:
            raise RuntimeError("probe kernel wrote the wrong bytes")
        return real_probe(cl_module, context, queue, identity)

    monkeypatch.setattr(device_module, "_probe", probe)
    report = devices_report(spec="")
    assert "probe                failed: RuntimeError: probe kernel wrote the wrong bytes" in \
        _device_block(report, 0, 0)
    assert not re.search(r"^  device 0:0: .*<- chosen$", report, re.M)
