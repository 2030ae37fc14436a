"""Our own passes and rewrites, IR in and IR out, checked by FileCheck.

One test per file under tests/filecheck/ (see filecheck_helper.py for the format).
"""
import glob
import os

import pytest
from mlir import ir, passmanager

from filecheck_helper import check_file, module_pass
from triton_spirv.hlo import passes as hlo_passes
from triton_spirv.memref_stage.in_place_updates import update_in_place
from triton_spirv.memref_stage.local_padding import pad_local_tiles
from triton_spirv.memref_stage.owner_copies import copy_by_owners
from triton_spirv.memref_stage.program_loops import loop_programs
from triton_spirv.memref_stage.register_blocking import block_contractions
from triton_spirv.memref_stage.shared_copies import converting_copy_loops
from triton_spirv.memref_stage.work_group_sharing import share_work_group
from triton_spirv.stages import linalg_to_memref_text, ttir_to_linalg_text
from triton_spirv.memref_stage.stream_forwarding import forward_streams
from triton_spirv.memref_stage.streaming_stores import stream_stores


def _converting_copies(module: ir.Module) -> None:
    for func in module.body.operations:
        converting_copy_loops(func.regions[0].blocks[0])


def _share_work_group(collectives: bool):
    """share_work_group for 128 work-items (on a target with work-group collective
    functions or not), simplified as the pipeline then simplifies it."""
    def run(module: ir.Module) -> None:
        share_work_group(module, 128, collectives=collectives)
        module.operation.verify()
        passmanager.PassManager.parse("builtin.module(canonicalize,cse)").run(module.operation)
    return run


HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "filecheck")

PASSES = {
    "hlo-flatten-tensors": module_pass(hlo_passes.flatten_tensors),
    "hlo-unroll-vector-loops": module_pass(hlo_passes.unroll_vector_loops),
    "hlo-vectorize-loads-stores": module_pass(hlo_passes.vectorize_loads_stores),
    # lanes.py's pack_lane_accumulators, then canonicalize (as the pipeline runs it)
    "hlo-pack-lane-accumulators": module_pass(hlo_passes.pack_lanes),
    "local-padding": module_pass(pad_local_tiles),
    "program-loops": module_pass(loop_programs),
    "register-blocking": module_pass(block_contractions),
    "stream-forwarding": module_pass(forward_streams),
    "streaming-stores": module_pass(stream_stores),
    "in-place-updates": module_pass(update_in_place),
    "owner-copies": module_pass(copy_by_owners),
    "converting-copies": module_pass(_converting_copies),
    "work-group-sharing": module_pass(_share_work_group(collectives=False)),
    "work-group-collectives": module_pass(_share_work_group(collectives=True)),
    # The TTIR analyses (ttir_to_linalg/analysis.py) show in the Linalg they choose.
    "ttir-to-linalg": ttir_to_linalg_text,
    "ttir-to-memref": lambda text: linalg_to_memref_text(ttir_to_linalg_text(text)),   # CPU shape
}

FILES = sorted(glob.glob(os.path.join(HERE, "*.mlir")))


def test_every_pass_has_a_filecheck_file():
    from filecheck_helper import pass_name
    covered = set()
    for path in FILES:
        with open(path) as f:
            covered.add(pass_name(f.read()))
    assert covered == set(PASSES)


@pytest.mark.parametrize("path", FILES, ids=[os.path.basename(p) for p in FILES])
def test_filecheck(path):
    check_file(path, PASSES)
