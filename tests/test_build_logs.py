"""OpenCL build errors name the `.cl` lines and the Python lines they came from, whatever
the driver's build-log format."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from launcher.program import blamed_source_lines

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(HERE)

# OpenCL C as the emitter prints it, with a broken line 4 (from k.py:7) and line 6 (k.py:9).
BROKEN_SOURCE = """\
__kernel void k(__global float* x_ptr) {
  // y = tl.load(x_ptr)  (k.py:7)
  float y = x_ptr[0];
  x_ptr[0] = undefined_var + y;
  // z = ...  (k.py:9)
  int z = ;
}
"""

# What each driver's build log says about BROKEN_SOURCE (the Intel log as its OpenCL CPU
# runtime 2025 writes it; PoCL's as PoCL 3.1 does).
LOGS = {
    "intel": """Compilation started
1:4:10: error: use of undeclared identifier 'undefined_var'
    4 |   x_ptr[0] = undefined_var + y;
      |              ^~~~~~~~~~~~~
1:6:11: error: expected expression
    6 |   int z = ;
      |           ^
Compilation failed""",
    "pocl": """/tmp/pocl-build/program.cl:4:14: error: use of undeclared identifier 'undefined_var'
  x_ptr[0] = undefined_var + y;
             ^
/tmp/pocl-build/program.cl:6:11: error: expected expression
  int z = ;
          ^
2 errors generated.""",
    "opencl convention": "<source>:4:14: error: use of undeclared identifier\n<source>:6:11: error: expected expression",
}


@pytest.mark.parametrize("driver", sorted(LOGS))
def test_build_log_positions_of_every_driver(driver):
    lines = blamed_source_lines(LOGS[driver], BROKEN_SOURCE)
    assert list(lines) == [4, 6]
    assert lines[4].strip() == "x_ptr[0] = undefined_var + y;"


def test_snippet_lines_of_a_log_are_not_positions():
    """`    4 |   code` lines quote the source: the numbers in them are no positions."""
    log = "    12 | int a = 3:4:5;\n"
    assert blamed_source_lines(log, BROKEN_SOURCE) == {}


INTEL_BUILD = textwrap.dedent("""
    import json, sys
    from launcher import OpenCLBuildError, get_device
    from launcher.program import build_program
    device = get_device()
    assert "Intel" in device.platform.name, device.platform.name
    try:
        build_program(sys.argv[1], device, name="k")
    except OpenCLBuildError as err:
        print(json.dumps({"lines": sorted(err.source_lines), "message": str(err)}))
""")


def _intel_device_present():
    try:
        import pyopencl as cl
        return any("Intel" in p.name and p.get_devices() for p in cl.get_platforms())
    except Exception:
        return False


@pytest.mark.skipif(not _intel_device_present(),
                    reason="Intel's OpenCL CPU runtime is not installed (scripts/setup.sh: WITH_INTEL_OPENCL=1)")
def test_intel_build_failure_names_cl_and_python_lines():
    env = dict(os.environ, TRITON_OPENCL_DEVICE="intel", PYTHONPATH=REPO_ROOT)
    run = subprocess.run([sys.executable, "-c", INTEL_BUILD, BROKEN_SOURCE], env=env,
                         capture_output=True, text=True, timeout=120, check=True)
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["lines"] == [4, 6]
    assert "x_ptr[0] = undefined_var + y;    <- from k.py:7" in report["message"]
    assert "int z = ;    <- from k.py:9" in report["message"]
