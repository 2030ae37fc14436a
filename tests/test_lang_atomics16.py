"""Triton language, atomics on 16-bit elements: `tl.atomic_add` on f16/bf16 and
`tl.atomic_cas` on f16/bf16/int16 (OpenCL 1.2 has 32-bit atomics only: the emitter runs
a compare-exchange loop on the aligned word around the element), scalar and tensor
forms, with masks, many programs updating neighbouring elements of the same words; and
`tl.atomic_poll`.

Sums use integer-valued data, so the result is exact whatever the order of the updates;
the reference is torch's sum of the same values. Triton itself rejects atomic max, min
and xchg on f16/bf16 ("atomic_max does not support fp16"), so those have no lowering
here.
"""
import pytest
import torch

import triton
import triton.language as tl

FLOAT16 = [torch.float16, torch.bfloat16]


@triton.jit
def scatter_add_kernel(out_ptr, val_ptr, idx_ptr, old_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    val = tl.load(val_ptr + offs, mask=mask, other=0)
    old = tl.atomic_add(out_ptr + idx, val, mask=mask)
    tl.store(old_ptr + offs, old, mask=mask)


@pytest.mark.parametrize("dtype", FLOAT16)
@pytest.mark.parametrize("slots", [1, 2, 3, 7])
def test_contended_add_into_neighbouring_elements_is_exact(dtype, slots):
    """Every program adds into the same few adjacent elements (sharing 32-bit words)."""
    n, block = 600, 64
    gen = torch.Generator().manual_seed(slots)
    val = torch.randint(-3, 4, (n,), generator=gen).to(dtype)
    idx = torch.randint(0, slots, (n,), generator=gen).to(torch.int32)
    out = torch.zeros(8, dtype=dtype)
    out[slots:] = 5  # untouched neighbours in the same words must keep their value
    old = torch.empty(n, dtype=dtype)
    scatter_add_kernel[(triton.cdiv(n, block),)](out, val, idx, old, n, BLOCK=block)
    expected = torch.zeros(8, dtype=torch.float64).index_add_(0, idx.long(), val.double())
    expected[slots:] = 5
    torch.testing.assert_close(out.double(), expected, rtol=0, atol=0)
    # each old value is a partial sum: an integer within the range of the sums
    assert torch.equal(old.double(), old.double().round())
    assert old.double().abs().max() <= val.double().abs().sum()


@pytest.mark.parametrize("dtype", FLOAT16)
def test_add_returns_old_values_at_unique_addresses(dtype):
    n, block = 301, 128  # the masked tail must not touch the element after the last
    base = torch.arange(n + 1, dtype=torch.float32).remainder(50).to(dtype)
    out = base.clone()
    val = torch.full((n,), 2.0, dtype=dtype)
    idx = torch.arange(n, dtype=torch.int32).flip(0)
    old = torch.empty(n, dtype=dtype)
    scatter_add_kernel[(triton.cdiv(n, block),)](out, val, idx, old, n, BLOCK=block)
    assert torch.equal(old, base[idx.long()])
    expected = base.clone()
    expected[:n] += 2
    assert torch.equal(out, expected)


@pytest.mark.parametrize("dtype", FLOAT16)
def test_add_rounds_to_the_element_type(dtype):
    """Non-integer sums round to nearest even once per update, as on GPUs."""
    out = torch.tensor([1.0, 0.0], dtype=dtype)
    val = torch.tensor([1e-3, 2.0 ** -9], dtype=dtype)
    old = torch.empty(2, dtype=dtype)
    scatter_add_kernel[(1,)](out, val, torch.tensor([0, 1], dtype=torch.int32), old, 2, BLOCK=2)
    expected = torch.tensor([(1.0 + val[0].double()).item(), val[1].double().item()],
                            dtype=torch.float64).to(dtype)
    assert torch.equal(out, expected)


@triton.jit
def scalar_add_kernel(out_ptr, val_ptr, n_slots, LIMIT: tl.constexpr):
    pid = tl.program_id(0)
    val = tl.load(val_ptr + pid)
    tl.atomic_add(out_ptr + pid % n_slots, val, mask=pid < LIMIT)


@pytest.mark.parametrize("dtype", FLOAT16)
def test_scalar_add_with_mask(dtype):
    programs, slots, limit = 200, 3, 150
    val = (torch.arange(programs) % 5 - 2).to(dtype)
    out = torch.zeros(4, dtype=dtype)
    scalar_add_kernel[(programs,)](out, val, slots, LIMIT=limit)
    pid = torch.arange(limit)
    expected = torch.zeros(4, dtype=torch.float64).index_add_(0, pid % slots, val[:limit].double())
    assert torch.equal(out.double(), expected)


@triton.jit
def cas_kernel(ptr, cmp_ptr, val_ptr, old_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    # masked-off lanes point at their own element and compare with a value it never has
    cmp = tl.load(cmp_ptr + offs, mask=mask, other=-7)
    val = tl.load(val_ptr + offs, mask=mask, other=0)
    old = tl.atomic_cas(ptr + tl.where(mask, offs, 0), cmp, val)
    tl.store(old_ptr + offs, old, mask=mask)


@pytest.mark.parametrize("dtype", FLOAT16 + [torch.int16])
def test_cas_swaps_where_equal_and_returns_old_values(dtype):
    n, block = 257, 64
    gen = torch.Generator().manual_seed(3)
    current = torch.randint(-4, 4, (n,), generator=gen).to(dtype)
    cmp = torch.randint(-4, 4, (n,), generator=gen).to(dtype)
    val = torch.arange(n).remainder(100).to(dtype)
    ptr = current.clone()
    old = torch.empty(n, dtype=dtype)
    cas_kernel[(triton.cdiv(n, block),)](ptr, cmp, val, old, n, BLOCK=block)
    assert torch.equal(old, current)
    assert torch.equal(ptr, torch.where(current == cmp, val, current))
    assert (current == cmp).any() and (current != cmp).any()


@triton.jit
def scalar_cas_counter_kernel(counter_ptr, slot_ptr):
    """Each program claims a ticket by compare-and-swap on a 16-bit counter."""
    seen = tl.load(counter_ptr)
    while tl.atomic_cas(counter_ptr, seen, seen + 1) != seen:
        seen = tl.load(counter_ptr, volatile=True)
    tl.store(slot_ptr + seen.to(tl.int32), tl.program_id(0).to(tl.int16))


@pytest.mark.parametrize("dtype", [torch.int16, torch.float16])
def test_scalar_cas_loop_hands_out_unique_tickets(dtype):
    programs = 64
    counter = torch.zeros(2, dtype=dtype)  # the neighbour shares the counter's word
    counter[1] = 9
    slots = torch.full((programs,), -1, dtype=torch.int16)
    scalar_cas_counter_kernel[(programs,)](counter, slots)
    assert counter.tolist() == [programs, 9]
    assert sorted(slots.tolist()) == list(range(programs))


@triton.jit
def poll_kernel(flag_ptr, out_ptr, N: tl.constexpr):
    """Program 0 raises every flag; every program waits for all of them, then reads the
    data program 0 wrote before raising them."""
    offs = tl.arange(0, N)
    if tl.program_id(0) == 0:
        tl.store(out_ptr + offs, offs.to(tl.float32) * 2.0)
        tl.atomic_xchg(flag_ptr + offs, 1)
    seen = tl.atomic_poll(flag_ptr + offs, 1)
    data = tl.load(out_ptr + offs, volatile=True)
    tl.store(out_ptr + (tl.program_id(0) + 1) * N + offs, tl.where(seen, data, -1.0))


def test_atomic_poll_waits_for_the_expected_values():
    N, programs = 16, 3
    flags = torch.zeros(N, dtype=torch.int32)
    out = torch.full(((programs + 1) * N,), -5.0)
    poll_kernel[(programs,)](flags, out, N=N)
    expected = torch.arange(N, dtype=torch.float32) * 2.0
    assert torch.equal(out.view(programs + 1, N), expected.repeat(programs + 1, 1))


@triton.jit
def poll_scalar_kernel(flag_ptr, out_ptr, EXPECTED: tl.constexpr):
    seen = tl.atomic_poll(flag_ptr + 1, EXPECTED, sem="relaxed")
    tl.store(out_ptr, seen.to(tl.int32))


@pytest.mark.parametrize("dtype", [torch.int16, torch.int32, torch.int64])
def test_atomic_poll_scalar_on_every_width(dtype):
    flags = torch.tensor([3, -2, 3], dtype=dtype)  # the polled element shares its word
    out = torch.zeros(1, dtype=torch.int32)
    poll_scalar_kernel[(1,)](flags, out, EXPECTED=-2)
    assert out.item() == 1 and flags.tolist() == [3, -2, 3]


@triton.jit
def poll_timeout_kernel(flag_ptr, out_ptr):
    tl.store(out_ptr, tl.atomic_poll(flag_ptr, 1, timeout_ns=1000).to(tl.int32))


def test_atomic_poll_timeout_is_rejected_naming_the_line():
    with pytest.raises(Exception, match=r"(?s)timeout_ns.*no global timer.*test_lang_atomics16"):
        poll_timeout_kernel[(1,)](torch.zeros(1, dtype=torch.int32), torch.zeros(1, dtype=torch.int32))


@triton.jit
def word_sharing_kernel(sum_ptr, swap_ptr, val_ptr, n, SLOTS: tl.constexpr, BLOCK: tl.constexpr):
    """Adds into SLOTS adjacent f16 elements from every program and swaps elements of
    a 16-bit array at unique addresses: neighbours in one word, updated concurrently."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    val = tl.load(val_ptr + offs, mask=mask, other=0)
    tl.atomic_add(sum_ptr + offs % SLOTS, val, mask=mask)
    tl.atomic_cas(swap_ptr + tl.where(mask, offs, 0), tl.where(mask, 0, -1).to(tl.int16),
                  offs.to(tl.int16))


def run_word_sharing(n=96, block=16, slots=6):
    val = (torch.arange(n) % 3 - 1).to(torch.float16)
    sums = torch.zeros(slots, dtype=torch.float16)
    swapped = torch.zeros(n, dtype=torch.int16)
    word_sharing_kernel[(triton.cdiv(n, block),)](sums, swapped, val, n, SLOTS=slots, BLOCK=block)
    expected = torch.zeros(slots, dtype=torch.float64).index_add_(0, torch.arange(n) % slots,
                                                                  val.double())
    assert torch.equal(sums.double(), expected)
    assert torch.equal(swapped, torch.arange(n, dtype=torch.int16))


def test_16_bit_atomics_share_words_correctly():
    run_word_sharing()


def test_16_bit_atomics_are_clean_under_oclgrind(tmp_path):
    """No data race or invalid access: the neighbours' updates go through the same
    atomic word, the buffers' sizes are whole words."""
    import test_oclgrind
    from launcher.replay import list_recordings
    if test_oclgrind.OCLGRIND is None:
        pytest.skip("oclgrind is not installed (WITH_OCLGRIND=1 bash scripts/setup.sh)")
    test_oclgrind._record(str(tmp_path), run_word_sharing)
    paths = list_recordings(str(tmp_path))
    results, diagnostics, _ = test_oclgrind.run_under_oclgrind(paths)
    assert paths and len(results) == len(paths)
    problems = [p for r in results.values() for p in r["problems"]]
    problems += [m for ms in diagnostics.values() for m in ms]
    assert not problems, "\n\n".join(problems[:5])


MEMREF_ATOMICS16 = """
module {
  func.func @k(%h: memref<?xf16>, %s: memref<?xi16>, %v: memref<?xf16>, %old: memref<?xf16>,
               %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %seven = arith.constant 7 : i16
    scf.for %i = %c0 to %n step %c1 {
      %slot = arith.remui %i, %c3 : index
      %x = memref.load %v[%i] : memref<?xf16>
      %o = memref.atomic_rmw addf %x, %h[%slot] : (f16, memref<?xf16>) -> f16
      memref.store %o, %old[%i] : memref<?xf16>
      %r = memref.generic_atomic_rmw %s[%slot] : memref<?xi16> {
      ^bb0(%cur: i16):
        %next = arith.addi %cur, %seven : i16
        memref.atomic_yield %next : i16
      }
    }
    return
  }
}
"""


def test_emitter_16_bit_atomics_on_the_containing_word():
    """memref-stage IR in: 16-bit atomic_rmw / generic_atomic_rmw become compare-exchange
    loops on 32-bit words that keep the neighbours (element 3 shares a word)."""
    import numpy as np
    import pyopencl as cl
    from emitter_opencl import emit_opencl
    from mlir import ir
    kernel = emit_opencl(ir.Module.parse(MEMREF_ATOMICS16, ir.Context()))
    assert kernel.source.count("word_lane_shift(") == 3  # the helper and two atomics
    assert "volatile __global uint*" in kernel.source
    n = 10
    h = np.array([0.5, 0, 0, 9, 9, 9], np.float16)
    s = np.array([1, 2, 3, -4, 0, 0], np.int16)
    v = np.arange(1, n + 1).astype(np.float16)
    old = np.zeros(n, np.float16)
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    mf = cl.mem_flags
    bufs = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a) for a in (h, s, v, old)]
    program = cl.Program(ctx, kernel.source).build()
    getattr(program, kernel.name)(queue, (1,), (1,), *bufs, np.int64(n))
    for buf, host in zip(bufs, (h, s, v, old)):
        cl.enqueue_copy(queue, host, buf)
    slots = np.arange(n) % 3
    expected_h = np.array([0.5, 0, 0, 9, 9, 9])
    expected_old = np.zeros(n)
    for i in range(n):  # one work-item: the updates happen in order
        expected_old[i] = expected_h[slots[i]]
        expected_h[slots[i]] += i + 1
    assert np.array_equal(h.astype(np.float64), expected_h)
    assert np.array_equal(old.astype(np.float64), expected_old)
    assert s.tolist() == [1 + 7 * 4, 2 + 7 * 3, 3 + 7 * 3, -4, 0, 0]
