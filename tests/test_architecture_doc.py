"""docs/architecture.md against the code: every path it cites in backticks exists, every
Python name it cites is defined in our code (or is one of the outside names listed
below), and its stage lists are the stages `compiler.py`'s `add_stages` builds."""
from __future__ import annotations

import ast
import fnmatch
import os
import re
from types import SimpleNamespace

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "architecture.md")
SOURCE_DIRS = ("triton_spirv", "emitter_opencl", "launcher", "opencl_abi", "scripts")

# Cited names that are not ours: Triton's, PyTorch's, OpenCL's, MLIR's, tools' and
# environment variables.
OUTSIDE_NAMES = {
    "BaseBackend", "DriverBase", "kernel_load_start_hook", "make_backend", "get_backend_options",
    "CpuInterface", "benchmarker.benchmark_cpu", "triton_helpers.set_driver_to_cpu",
    "get_interface_for_device", "tl.arange", "triton/language", "OutOfResources", "ast",
    "CL_MEM_USE_HOST_PTR", "cl_mem", "clCreateProgramWithIL", "__local", "async_work_group_copy",
    "async_work_group_strided_copy", "vload16", "vload_half16", "vstore16", "vstore_half16_rte",
    "Groups", "scf", "tensor", "if", "while", "index_switch", "scf.for", "gpu.all_reduce",
    "FileCheck", "PYTHONPATH", "TRITON_OPENCL_DEVICE", "OCL_ICD_VENDORS", "BaseException",
    "pyopencl.Context", "CommandQueue", "Program", "Kernel", "enqueue_nd_range_kernel", "slow",
}
STAGE_LIST = re.compile(r"ttir( -> \w+)+")
NAME = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def _cited() -> set[str]:
    with open(DOC) as f:
        return set(re.findall(r"`([^`\n]+)`", f.read()))


def _repository_paths() -> list[str]:
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
        rel = os.path.relpath(folder, ROOT)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        found += [prefix + d for d in dirs] + [prefix + f for f in files]
    return found


def _source_files() -> list[str]:
    """Our packages' and scripts' Python files, and the test tiers' declarations."""
    paths = [os.path.join(ROOT, "tests", "conftest.py")]
    for folder in SOURCE_DIRS:
        for directory, _, files in os.walk(os.path.join(ROOT, folder)):
            paths += [os.path.join(directory, file) for file in files if file.endswith(".py")]
    return paths


def _defined_names() -> set[str]:
    names = set(SOURCE_DIRS)
    for path in _source_files():
        with open(path) as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
    return names


def _is_path(token: str) -> bool:
    return "/" in token or re.search(r"\.(py|md|toml|mlir)$", token) is not None


def _exists(token: str, paths: list[str]) -> bool:
    """A path exists when it names a repository path, whole or as its tail (the doc
    writes `hlo/compile.py` inside the HLO row), globs included."""
    pattern = token.rstrip("/")
    return any(fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(path, "*/" + pattern)
               for path in paths)


def test_the_doc_cites_enough_to_check():
    cited = _cited()
    assert sum(map(_is_path, cited)) > 50
    assert sum(1 for c in cited if not _is_path(c) and NAME.fullmatch(c)) > 30


def test_cited_paths_exist():
    paths = _repository_paths()
    missing = sorted(c for c in _cited() if _is_path(c) and c not in OUTSIDE_NAMES
                     and not STAGE_LIST.fullmatch(c) and not _exists(c, paths))
    assert not missing, f"docs/architecture.md cites paths that do not exist: {missing}"


def test_cited_names_are_defined():
    defined = _defined_names()
    missing = sorted(c for c in _cited() if not _is_path(c) and NAME.fullmatch(c)
                     and c not in OUTSIDE_NAMES and c.split(".")[-1] not in defined
                     and not c.startswith(("tt.", "memref.", "linalg.", "opencl.", "gpu.")))
    assert not missing, f"docs/architecture.md cites names defined nowhere: {missing}"


def test_a_missing_path_or_name_is_noticed():
    # The checks above would pass vacuously on a broken reader.
    paths = _repository_paths()
    assert _exists("hlo/compile.py", paths) and _exists("triton_spirv/memref_stage/", paths)
    assert not _exists("hlo/no_such_module.py", paths)
    assert "hidden_parameters" in _defined_names()
    assert "no_such_function_anywhere" not in _defined_names()


@pytest.mark.parametrize("program", ["source", "spirv"])
def test_stage_lists_are_the_backends(program):
    from triton.backends.compiler import Language

    from triton_spirv.compiler import OpenCLBackend
    stages: dict = {}
    OpenCLBackend.add_stages(None, stages, SimpleNamespace(program=program), Language.TRITON)
    built = " -> ".join(stages)
    documented = {c for c in _cited() if STAGE_LIST.fullmatch(c)}
    assert built in documented, f"the doc's stage lists {sorted(documented)} lack {built}"
    assert len(documented) == 2
