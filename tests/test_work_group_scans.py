"""Scans on GPU-shaped kernels (triton_spirv/memref_stage/work_group_scans.py): chunk
totals, their Hillis-Steele scan in __local memory, then each chunk again from its
prefix. The rewrite's IR in / IR out, results against torch (and a Python loop for a
combine that does not commute), the CPU shape left alone, and Oclgrind's data race
detector on the generated kernels."""
import re

import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from test_work_group_sharing import assert_race_free, needs_oclgrind, oclgrind_run, rewrite
from triton_spirv.target import TARGET_ENV


@pytest.fixture(autouse=True)
def no_target_override(monkeypatch):
    monkeypatch.delenv(TARGET_ENV, raising=False)


# ---------------------------------------------------------------------------------------
# The rewrite, IR in / IR out: the loops as the Triton frontend writes a scan

# After test_work_group_sharing's HEADER: %t is filled by a distributed loop; here
# y = cumsum(t) is read by another.
CUMSUM_1D = """
  %y = memref.alloc() : memref<256xf32>
  %first = memref.load %t[%c0] : memref<256xf32>
  memref.store %first, %y[%c0] : memref<256xf32>
  %last = scf.for %k = %c1 to %c256 step %c1 iter_args(%acc = %first) -> (f32) {
    %e = memref.load %t[%k] : memref<256xf32>
    %s = arith.addf %acc, %e : f32
    memref.store %s, %y[%k] : memref<256xf32>
    scf.yield %s : f32
  }
  scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
    %v = memref.load %y[%i] : memref<256xf32>
    memref.store %v, %out[%i] : memref<?xf32>
    scf.reduce
  }"""


def test_a_1d_scan_runs_on_every_work_item():
    out = rewrite(CUMSUM_1D)
    # no work-item-0 section (lane 0 only starts from its own first element instead of
    # a prefix); each of the 128 work-items takes 2 elements
    assert out.count("arith.cmpi eq, %thread_id_x") == 1
    assert re.search(r"(%\d+) = arith.cmpi eq, %thread_id_x, %c0 : index\n"
                     r"\s+%\d+ = scf.if \1 -> \(f32\)", out), out
    assert "memref.alloc() : memref<2x128xf32>" in out        # the totals, double-buffered
    assert "arith.muli %thread_id_x, %c2" in out
    # the chunk total folded, 7 Hillis-Steele steps (1, 2, ..., 64 lanes back), the
    # prefix into the first element of the chunk, then the rest of the chunk
    assert out.count("arith.addf") == 1 + 7 + 1 + 1, out
    for distance in (1, 2, 4, 8, 16, 32, 64):
        assert f"arith.cmpi uge, %thread_id_x, %c{distance} " in out
        assert f"arith.subi %thread_id_x, %c{distance} " in out
    assert out.count("iter_args") == 2
    # barriers: the fill -> the scan's reads, the totals, each step, the scan -> its reader
    assert out.count("gpu.barrier") == 1 + 1 + 7 + 1, out
    # the result tile is written by the chunk scans only: the first element and the loop
    assert len(re.findall(r"memref.store %\S+, %alloc_0\[", out)) == 2, out


def test_the_scan_writes_its_results_before_the_barrier_its_readers_wait_on():
    out = rewrite(CUMSUM_1D)
    last_store = max(m.start() for m in re.finditer(r"memref.store %\S+, %alloc_0\[", out))
    reader = out.index("memref.load %alloc_0[")
    assert last_store < out.index("gpu.barrier", last_store) < reader


# A two-operand scan (x -> a*x + b maps composed: not commutative) along the rows of an
# ROWSx32 tile, reversed; only the second result is stored, as the frontend leaves it,
# then copied out.
RECURRENCE_2D_REVERSE = """
  %rows = arith.constant ROWS : index
  %c31 = arith.constant 31 : index
  %c32 = arith.constant 32 : index
  %a = memref.alloc() : memref<ROWSx32xf32>
  %b = memref.alloc() : memref<ROWSx32xf32>
  %h = memref.alloc() : memref<ROWSx32xf32>
  scf.for %row = %c0 to %rows step %c1 {
    %a0 = memref.load %a[%row, %c31] : memref<ROWSx32xf32>
    %b0 = memref.load %b[%row, %c31] : memref<ROWSx32xf32>
    memref.store %b0, %h[%row, %c31] : memref<ROWSx32xf32>
    %r:2 = scf.for %k = %c1 to %c32 step %c1 iter_args(%x = %a0, %y = %b0) -> (f32, f32) {
      %j = arith.subi %c31, %k : index
      %ea = memref.load %a[%row, %j] : memref<ROWSx32xf32>
      %eb = memref.load %b[%row, %j] : memref<ROWSx32xf32>
      %na = arith.mulf %x, %ea : f32
      %p = arith.mulf %y, %ea : f32
      %nb = arith.addf %p, %eb : f32
      memref.store %nb, %h[%row, %j] : memref<ROWSx32xf32>
      scf.yield %na, %nb : f32, f32
    }
  }
  %view = memref.reinterpret_cast %out to offset: [0], sizes: [ROWS, 32], strides: [32, 1]
    : memref<?xf32> to memref<ROWSx32xf32, strided<[32, 1]>>
  memref.copy %h, %view : memref<ROWSx32xf32> to memref<ROWSx32xf32, strided<[32, 1]>>"""


def test_rows_share_the_work_group_and_keep_the_combine_order():
    out = rewrite(RECURRENCE_2D_REVERSE.replace("ROWS", "4"))
    # 32 lanes per row (4 rows), one element each; two operands, two total arrays
    assert "arith.remui %thread_id_x, %c32" in out and "arith.divui %thread_id_x, %c32" in out
    assert out.count("memref.alloc() : memref<2x128xf32>") == 2
    # the totals, 5 steps, and one before the copy out (the barrier analysis places it)
    assert out.count("gpu.barrier") == 1 + 5 + 1, out
    # the scan walks the row from its end: element 31 - k of row `slot`
    assert re.search(r"arith.subi %c31, %\w+ : index", out)
    # in every combine, the earlier tuple's `a` multiplies the later one's:
    # na = x * ea, with the earlier (x) first
    step = out[out.index("arith.cmpi uge"):]
    earlier = re.search(r"(%\d+) = memref.load %alloc(?:_\d+)?\[%c0, %(\d+)\]", step)
    assert earlier and re.search(rf"arith.mulf {earlier.group(1)}, %", step), step


def test_more_rows_than_work_items_scan_whole_rows_in_rounds():
    out = rewrite(RECURRENCE_2D_REVERSE.replace("ROWS", "256"))
    # no barrier of a scan: only the one before the copy out (the barrier analysis')
    assert out.count("gpu.barrier") == 1 and "memref<2x128xf32>" not in out
    assert out.index("gpu.barrier") > out.rindex("scf.for")
    # rows lid, lid + 128: two rounds of the serial loop
    assert re.search(r"scf.for %\w+ = %c0 to %c2 step %c1", out), out
    assert re.search(r"arith.muli %\w+, %c128", out)
    assert "arith.cmpi eq, %thread_id_x" not in out


def test_a_loop_whose_carried_value_is_used_after_it_stays_on_work_item_zero():
    out = rewrite(CUMSUM_1D.replace("  scf.parallel (%i) = (%c0) to (%c256) step (%c1) {\n"
                                    "    %v = memref.load %y[%i]",
                                    "  memref.store %last, %out[%c0] : memref<?xf32>\n"
                                    "  scf.parallel (%i) = (%c0) to (%c256) step (%c1) {\n"
                                    "    %v = memref.load %y[%i]"))
    assert "memref<2x128xf32>" not in out
    assert "arith.cmpi eq, %thread_id_x, %c0" in out
    assert re.search(r"scf.for %\w+ = %c1 to %c256 step %c1 iter_args", out), out


# ---------------------------------------------------------------------------------------
# Results on the GPU shape


@triton.jit
def _affine_combine(a1, b1, a2, b2):
    return a1 * a2, b1 * a2 + b2


@triton.jit
def cumsum_kernel(x_ptr, out_ptr, N: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.cumsum(tl.load(x_ptr + offs), 0, reverse=REVERSE))


@triton.jit
def recurrence_kernel(a_ptr, b_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr,
                      AXIS: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    _, h = tl.associative_scan((tl.load(a_ptr + offs), tl.load(b_ptr + offs)), AXIS,
                               _affine_combine, reverse=REVERSE)
    tl.store(out_ptr + offs, h)


@triton.jit
def running_cumsum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # a scan inside a loop: blocks of a long row, each from the total of those before
    carry = tl.sum(tl.zeros((BLOCK,), dtype=tl.float32), 0)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        y = tl.cumsum(x, 0) + carry
        tl.store(out_ptr + offs, y, mask=offs < n)
        carry += tl.sum(x, 0)


@pytest.mark.parametrize("n", [16, 1024, 4096])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_matches_torch(n, reverse):
    gen = torch.Generator().manual_seed(n)
    x = torch.rand(n, generator=gen)
    out = torch.empty_like(x)
    compiled = cumsum_kernel[(1,)](x, out, N=n, REVERSE=reverse, opencl_target="gpu")
    assert list(compiled.metadata.local_size) == [128, 1, 1]
    src = x.double().flip(0) if reverse else x.double()
    ref = src.cumsum(0)
    ref = (ref.flip(0) if reverse else ref).float()
    torch.testing.assert_close(out, ref, rtol=1e-6, atol=1e-6 * n ** 0.5)


@pytest.mark.parametrize("reverse", [False, True])
def test_integer_cumsum_is_exact(reverse):
    n = 2048
    x = torch.randint(-1000, 1000, (n,), dtype=torch.int32, generator=torch.Generator().manual_seed(3))
    out = torch.empty_like(x)
    cumsum_kernel[(1,)](x, out, N=n, REVERSE=reverse, opencl_target="gpu")
    ref = x.flip(0).cumsum(0).flip(0) if reverse else x.cumsum(0)
    assert torch.equal(out, ref.to(torch.int32))


def _recurrence(a, b, axis, reverse):
    """h[i] = h[i-1] * a[i] + b[i] along `axis`, in float64."""
    a, b = a.double(), b.double()
    if reverse:
        a, b = a.flip(axis), b.flip(axis)
    a, b = a.movedim(axis, 0), b.movedim(axis, 0)
    h = torch.empty_like(b)
    h[0] = b[0]
    for i in range(1, b.shape[0]):
        h[i] = h[i - 1] * a[i] + b[i]
    h = h.movedim(0, axis)
    return (h.flip(axis) if reverse else h).float()


@pytest.mark.parametrize("m, n, axis, reverse", [(1, 512, 1, False), (4, 64, 1, True),
                                                 (64, 8, 0, True), (256, 4, 1, False)])
def test_non_commutative_two_operand_scan_matches_a_python_loop(m, n, axis, reverse):
    gen = torch.Generator().manual_seed(m * n)
    a = torch.rand(m, n, generator=gen) * 0.5 + 0.5
    b = torch.randn(m, n, generator=gen)
    out = torch.empty(m, n)
    recurrence_kernel[(1,)](a, b, out, M=m, N=n, AXIS=axis, REVERSE=reverse,
                            opencl_target="gpu")
    torch.testing.assert_close(out, _recurrence(a, b, axis, reverse), rtol=1e-5, atol=1e-5)


def test_scan_inside_a_loop_matches_torch():
    n = 3000
    x = torch.rand(n, generator=torch.Generator().manual_seed(5))
    out = torch.empty_like(x)
    running_cumsum_kernel[(1,)](x, out, n, BLOCK=512, opencl_target="gpu")
    torch.testing.assert_close(out, x.double().cumsum(0).float(), rtol=1e-5, atol=1e-4)


def test_cpu_shape_keeps_one_serial_loop():
    n = 1024
    x = torch.randint(-9, 9, (n,), dtype=torch.int32, generator=torch.Generator().manual_seed(7))
    gpu_out, cpu_out = torch.empty_like(x), torch.empty_like(x)
    gpu = cumsum_kernel[(1,)](x, gpu_out, N=n, REVERSE=False, opencl_target="gpu")
    cpu = cumsum_kernel[(1,)](x, cpu_out, N=n, REVERSE=False, opencl_target="cpu")
    assert list(cpu.metadata.local_size) == [1, 1, 1]
    assert "get_local_id" not in cpu.asm["cl"] and "barrier(" not in cpu.asm["cl"]
    # the frontend's loop, element 1 to the end
    assert len(re.findall(r"for \(long \w+ = 1; \w+ < 1024; \+\+\w+\)", cpu.asm["cl"])) == 1, \
        cpu.asm["cl"]
    assert "barrier(" in gpu.asm["cl"]
    assert torch.equal(gpu_out, cpu_out) and torch.equal(cpu_out, x.cumsum(0).to(torch.int32))


# ---------------------------------------------------------------------------------------
# Oclgrind: no data races between the steps


@needs_oclgrind
@pytest.mark.parametrize("case", ["cumsum", "recurrence"])
def test_scans_are_race_free_under_oclgrind(tmp_path, case):
    rng = np.random.default_rng(0)
    if case == "cumsum":
        x = rng.random(1024, dtype=np.float32)
        compiled = cumsum_kernel.warmup(torch.empty(1024), torch.empty(1024), N=1024,
                                        REVERSE=True, grid=(1,), opencl_target="gpu")
        args, result = [x, np.zeros_like(x)], 1
        expected = np.cumsum(x[::-1].astype(np.float64))[::-1]
    else:
        a = (rng.random((4, 64)) * 0.5 + 0.5).astype(np.float32)
        b = rng.standard_normal((4, 64)).astype(np.float32)
        compiled = recurrence_kernel.warmup(torch.empty(4, 64), torch.empty(4, 64),
                                            torch.empty(4, 64), M=4, N=64, AXIS=1,
                                            REVERSE=True, grid=(1,), opencl_target="gpu")
        args, result = [a, b, np.zeros_like(a)], 2
        expected = _recurrence(torch.from_numpy(a), torch.from_numpy(b), 1, True).numpy()
    # before the scan, after the totals and after each step (5 for 32 lanes a row, 7 for 128)
    # (local-only fences where only __local memory is shared, else both)
    assert compiled.asm["cl"].count("barrier(CLK_LOCAL_MEM_FENCE") >= 7
    assert_race_free(tmp_path, compiled, (1, 1, 1), args, result, expected)


@needs_oclgrind
def test_oclgrind_catches_a_missing_barrier_between_the_steps(tmp_path):
    # Without the barrier after the chunk totals, the first step reads the total of the
    # lane before while that lane writes it.
    x = np.random.default_rng(1).random(1024, dtype=np.float32)
    compiled = cumsum_kernel.warmup(torch.empty(1024), torch.empty(1024), N=1024,
                                    REVERSE=False, grid=(1,), opencl_target="gpu")
    source = compiled.asm["cl"]
    barrier = "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    first_step = source.index(">= (ulong)1;")
    planted = source.rindex(barrier, 0, first_step)
    source = source[:planted] + source[planted + len(barrier):]
    _results, messages = oclgrind_run(tmp_path, source, compiled.metadata.name, (1, 1, 1),
                                      compiled.metadata.local_size, [x, np.zeros_like(x)])
    assert "data race" in messages.lower(), messages[-3000:]
