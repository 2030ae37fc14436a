"""The test tiers of tests/conftest.py: the device-free guard works, and the lists name
tests that exist (a renamed test would otherwise drop out of its tier unnoticed)."""

import ast
import os
import subprocess
import sys

import pytest

import conftest as tiers

TESTS = os.path.dirname(os.path.abspath(__file__))


def test_opening_a_context_fails_a_device_free_test():
    import pyopencl
    with pytest.raises(pytest.fail.Exception, match="declared device-free"):
        pyopencl.Context()


def test_the_launchers_device_is_out_of_reach():
    from launcher.device import get_device
    with pytest.raises(pytest.fail.Exception, match="declared device-free"):
        get_device()


def test_a_subprocess_finds_no_opencl_driver():
    probe = ("import pyopencl\n"
             "try:\n    print(sum(len(p.get_devices()) for p in pyopencl.get_platforms()))\n"
             "except pyopencl.Error:\n    print(0)\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "0", result.stdout + result.stderr


def _test_functions(file):
    """Names of the test functions of tests/`file` ('Class.test_x' for methods)."""
    with open(os.path.join(TESTS, file)) as handle:
        tree = ast.parse(handle.read())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.update(f"{node.name}.{f.name}" for f in node.body
                         if isinstance(f, ast.FunctionDef) and f.name.startswith("test"))
    return names


@pytest.mark.parametrize("listing", ["DEVICE_FREE_TESTS", "NOT_FAST_TESTS"])
def test_the_lists_name_existing_tests(listing):
    missing = [f"{file}::{name}" for file, names in getattr(tiers, listing).items()
               for name in sorted(names - _test_functions(file))]
    assert not missing, f"tests/conftest.py {listing} names tests that do not exist: {missing}"


def test_the_device_free_files_exist():
    missing = [file for file in sorted(tiers.DEVICE_FREE_FILES) if not os.path.exists(os.path.join(TESTS, file))]
    assert not missing, f"tests/conftest.py DEVICE_FREE_FILES names missing files: {missing}"
