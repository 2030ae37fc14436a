"""Our own passes and rewrites, IR in and IR out, checked by FileCheck.

One test per file under tests/filecheck/ (see filecheck_helper.py for the format). The
memref stage's passes come from its registry (triton_spirv/memref_stage/passes.py) by
name, the SPIR-V stage's steps from its list (triton_spirv/spirv/lower.py, `STEPS`);
the frontends' steps and the printers (OpenCL C, SPIR-V assembly) are named here.
"""
import glob
import os

import pytest

from filecheck_helper import check_file, module_pass, pass_names
from triton_spirv.hlo import passes as hlo_passes
from triton_spirv.memref_stage.passes import PASS_GROUPS, PASSES
from triton_spirv.spirv.lower import STEPS as SPIRV_STEPS
from triton_spirv.stages import (linalg_to_memref_text, memref_to_opencl, memref_to_spirv,
                                 ttir_to_linalg_text)

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "filecheck")

# The frontends' steps and the SPIR-V stage's (not passes of the memref pipeline).
FRONTEND_STEPS = {
    "hlo-flatten-tensors": module_pass(hlo_passes.flatten_tensors),
    "hlo-unroll-vector-loops": module_pass(hlo_passes.unroll_vector_loops),
    "hlo-vectorize-loads-stores": module_pass(hlo_passes.vectorize_loads_stores),
    # lanes.py's pack_lane_accumulators, then canonicalize (as the pipeline runs it)
    "hlo-pack-lane-accumulators": module_pass(hlo_passes.pack_lanes),
    # The TTIR analyses (ttir_to_linalg/analysis.py) show in the Linalg they choose.
    "ttir-to-linalg": ttir_to_linalg_text,
    "ttir-to-memref": lambda text: linalg_to_memref_text(ttir_to_linalg_text(text)),   # CPU shape
    # The printers of a memref-stage module: its OpenCL C (emitter_opencl/), and its
    # spirv.module after the conversion and the SPIR-V stage's steps that follow it
    # (the `spvasm` stage: non-temporal stores, compare-exchange helpers, OpenCL.std
    # placeholders).
    "emit-opencl": lambda text: memref_to_opencl(text).source,
    "spirv-assembly": lambda text: memref_to_spirv(text).assembly,
}
# The SPIR-V stage's steps, whatever the target's quirks: a file names the one it tests.
FRONTEND_STEPS.update({step.name: module_pass(step.run) for step in SPIRV_STEPS})
# Its checks only refuse modules (tests/test_spirv*.py); its rewrites need a file.
SPIRV_REWRITES = {step.name for step in SPIRV_STEPS if not step.checks}

FILES = sorted(glob.glob(os.path.join(HERE, "*.mlir")))


def _named(path: str) -> list[str]:
    with open(path) as f:
        return pass_names(f.read())


def test_every_pass_has_a_filecheck_file():
    """Each of our passes (not upstream's) is named by a file, alone or first of its
    list; a group's passes are covered by a file that names the group."""
    covered = set()
    for path in FILES:
        names = _named(path)
        covered.add(names[0])
        covered.update(PASS_GROUPS.get(names[0], ()))
    ours = {p.name for p in PASSES if p.upstream is None}
    frontends = set(FRONTEND_STEPS) - {step.name for step in SPIRV_STEPS}
    required = ours | frontends | SPIRV_REWRITES
    assert required <= covered, sorted(required - covered)


def test_every_named_pass_is_registered():
    known = {p.name for p in PASSES} | set(PASS_GROUPS) | set(FRONTEND_STEPS)
    for path in FILES:
        assert set(_named(path)) <= known, path


@pytest.mark.parametrize("path", FILES, ids=[os.path.basename(p) for p in FILES])
def test_filecheck(path):
    check_file(path, FRONTEND_STEPS)
