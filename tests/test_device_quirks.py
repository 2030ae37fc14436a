"""Device quirks (triton_spirv/target.py, QUIRKS): the reduced reproducer of each quirk
this file owns, run on the device in use (the quirk's form where the device has the
quirk, the plain form elsewhere) against torch, and the table itself: which devices
have which quirks, and that a description without them compiles the plain forms."""
import re

import pytest
import torch
import triton
import triton.language as tl

import launcher
from triton_spirv.target import (NAMED_TARGETS, QUIRKS, TARGET_ENV, describe_device,
                                 device_quirks, resolve_target, without_quirks)

BARRIER = r"barrier\(CLK_LOCAL_MEM_FENCE \| CLK_GLOBAL_MEM_FENCE\);"


def barriers_in_branches(source: str) -> int:
    """How many barriers of generated OpenCL C stand inside an `if` or `else` block
    (the generator opens one block per line: `if (c) {`, `} else {`, `for (...) {`)."""
    blocks, found = [], 0
    for line in source.splitlines():
        code = line.split("//")[0].strip()
        if code.startswith("barrier("):
            found += any(kind == "branch" for kind in blocks)
        if code.startswith("}"):
            blocks.pop()
        if code.endswith("{"):
            branch = code.startswith(("if ", "if(", "} else"))
            blocks.append("branch" if branch else "other")
    return found


# ---------------------------------------------------------------------------------------
# barrier_in_uniform_branch: programs that return early, then store an elementwise
# result and a tl.sum (PoCL 3.1, GPU shape: the elementwise stores never landed).


@triton.jit
def early_return_rows(x_ptr, y_ptr, s_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    if row % 3 == 1:
        return
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n_cols + cols, x * 2.0 + 1.0, mask=mask)
    tl.store(s_ptr + row, tl.sum(x, axis=0))


@pytest.mark.parametrize("num_warps, target", [(4, "gpu"), (8, "gpu"), (4, "gpu-32k")])
def test_early_return_rows(num_warps, target, monkeypatch):
    monkeypatch.delenv(TARGET_ENV, raising=False)
    torch.manual_seed(0)
    rows, cols = 7, 100
    x = torch.randn(rows, cols)
    y = torch.zeros(rows, cols)
    s = torch.zeros(rows)
    compiled = early_return_rows[(rows,)](x, y, s, cols, BLOCK=128, num_warps=num_warps,
                                          opencl_target=target)
    kept = torch.tensor([row % 3 != 1 for row in range(rows)])
    torch.testing.assert_close(y, torch.where(kept[:, None], x * 2 + 1, torch.zeros(())))
    torch.testing.assert_close(s, torch.where(kept, x.sum(1), torch.zeros(())))
    quirky = resolve_target(target).has_quirk("barrier_in_uniform_branch")
    assert (barriers_in_branches(compiled.asm["cl"]) == 0) == quirky


# ---------------------------------------------------------------------------------------
# The table


def test_every_quirk_names_its_reason_workaround_and_reproducer():
    for name, quirk in QUIRKS.items():
        assert quirk.name == name
        assert quirk.reason and quirk.workaround and quirk.reproducer.startswith("tests/")


def test_pocl_has_its_quirks_and_other_runtimes_none():
    pocl = {name for name, quirk in QUIRKS.items() if quirk.runtime == "pocl"}
    assert set(device_quirks("pocl", "3.1")) == pocl
    assert device_quirks("intel-r", "2026.22.10.0.01-160000") == (
        "fneg_across_barrier", "i8_private_arrays", "private_zero_tiles_in_gpu_spirv",
        "not_then_integer_max", "byte_accumulators_in_loops", "barrier_in_fill_branch")
    assert device_quirks("nvidia", "550.54") == ()


def test_a_version_at_or_after_the_fix_has_no_quirk(monkeypatch):
    from dataclasses import replace
    fixed = replace(QUIRKS["barrier_in_uniform_branch"], fixed_in="5.0")
    monkeypatch.setitem(QUIRKS, fixed.name, fixed)
    assert fixed.name in device_quirks("pocl", "3.1+debian")
    assert fixed.name not in device_quirks("pocl", "5.0")
    assert fixed.name not in device_quirks("pocl", "6.1-pre")


def test_named_descriptions_carry_the_quirks_of_the_device_that_runs_them(monkeypatch):
    monkeypatch.delenv(TARGET_ENV, raising=False)
    device = describe_device(launcher.get_device())
    named = resolve_target("gpu-32k")
    assert named.quirks == device.quirks
    assert NAMED_TARGETS["gpu-32k"].quirks == ()          # the shape alone: no quirks
    if device.quirks:
        assert without_quirks(named).key() != named.key()  # separate compile caches


def test_unknown_quirk_names_fail():
    with pytest.raises(KeyError, match="no_such_quirk"):
        NAMED_TARGETS["gpu-64k"].has_quirk("no_such_quirk")


def test_the_quirk_form_has_no_barrier_in_a_branch():
    """The same kernel's TTIR through the stages, GPU-shaped, without and with the quirk:
    barriers in the early return's branch in the plain form, none in the quirk's."""
    from triton_spirv.stages import linalg_to_memref_text, memref_to_opencl, ttir_to_linalg_text
    x = torch.zeros(3, 8)
    ttir = early_return_rows[(3,)](x, x, x[0], 8, BLOCK=128, num_warps=4).asm["ttir"]
    linalg = ttir_to_linalg_text(ttir, versioning_allowed=False, lane_reductions=False)
    plain = memref_to_opencl(linalg_to_memref_text(linalg, work_items=128)).source
    quirky = memref_to_opencl(linalg_to_memref_text(
        linalg, work_items=128, quirks=("barrier_in_uniform_branch",))).source
    assert barriers_in_branches(plain) > 0
    assert barriers_in_branches(quirky) == 0 and re.search(BARRIER, quirky)


# ---------------------------------------------------------------------------------------
# The default device: PoCL's first, whatever order the loader lists platforms in


def test_default_order_puts_pocl_first():
    from types import SimpleNamespace

    from launcher.device import _default_order
    intel = SimpleNamespace(name="Intel(R) OpenCL", version="OpenCL 3.0 LINUX")
    pocl = SimpleNamespace(name="Portable Computing Language", version="OpenCL 3.0 PoCL 3.1+debian")
    cpu = SimpleNamespace(name="cpu", driver_version="1.0")
    found = [(0, 0, intel, cpu), (1, 0, pocl, cpu), (1, 1, pocl, cpu), (2, 0, intel, cpu)]
    assert [c[:2] for c in _default_order(found)] == [(1, 0), (1, 1), (0, 0), (2, 0)]


# ---------------------------------------------------------------------------------------
# The HLO frontend's kernels get the device's quirks too


def test_hlo_kernels_are_lowered_with_the_device_quirks(monkeypatch):
    import numpy as np

    from triton_spirv.hlo import passes, read_hlo
    from triton_spirv.hlo.runtime import ModuleRunner
    from triton_spirv.hlo.target import emit_target
    seen = []
    real = dict(passes.PASSES)["memref"]

    def recording(module, config):
        seen.append(config)
        return real(module, config)
    monkeypatch.setattr(passes, "PASSES", [(name, recording if name == "memref" else step)
                                           for name, step in passes.PASSES])
    text = """HloModule negate_rows, entry_computation_layout={(f32[3,5]{1,0})->f32[3,5]{1,0}}

ENTRY %main (x: f32[3,5]) -> f32[3,5] {
  %x = f32[3,5]{1,0} parameter(0)
  ROOT %n = f32[3,5]{1,0} negate(%x)
}
"""
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    (out,) = ModuleRunner(read_hlo(text)).run([x])
    np.testing.assert_array_equal(np.asarray(out), -x)
    assert seen and all(c.quirks == emit_target().description.quirks for c in seen)
    assert not any(c.shares_work_group for c in seen)
