"""The test tiers of tests/conftest.py: the device-free guard works, and the lists name
tests that exist (a renamed test would otherwise drop out of its tier unnoticed)."""

import json
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


# Names of the test functions of each file given ('Class.test_x' for methods), printed
# as JSON. It runs in a child process: in a long test run, CPython 3.11's ast.parse can
# fail with "AST constructor recursion depth mismatch" (its recursion counter left off
# by earlier work in the process), which a fresh interpreter does not inherit.
_LIST_TESTS = """
import ast, json, sys
found = {}
for path in sys.argv[1:]:
    with open(path) as handle:
        tree = ast.parse(handle.read())
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            names.append(node.name)
        elif isinstance(node, ast.ClassDef):
            names += [f"{node.name}.{f.name}" for f in node.body
                      if isinstance(f, ast.FunctionDef) and f.name.startswith("test")]
    found[path] = names
print(json.dumps(found))
"""


def _test_functions(files) -> dict:
    """file -> the names of its test functions, for tests/`file` of each of `files`."""
    paths = [os.path.join(TESTS, file) for file in files]
    result = subprocess.run([sys.executable, "-c", _LIST_TESTS, *paths], capture_output=True,
                            text=True, timeout=120, check=True)
    found = json.loads(result.stdout)
    return {file: set(found[path]) for file, path in zip(files, paths)}


@pytest.mark.parametrize("listing", ["DEVICE_FREE_TESTS", "NOT_FAST_TESTS"])
def test_the_lists_name_existing_tests(listing):
    listed = getattr(tiers, listing)
    existing = _test_functions(sorted(listed))
    missing = [f"{file}::{name}" for file, names in listed.items()
               for name in sorted(names - existing[file])]
    assert not missing, f"tests/conftest.py {listing} names tests that do not exist: {missing}"


def test_the_device_free_files_exist():
    missing = [file for file in sorted(tiers.DEVICE_FREE_FILES) if not os.path.exists(os.path.join(TESTS, file))]
    assert not missing, f"tests/conftest.py DEVICE_FREE_FILES names missing files: {missing}"
