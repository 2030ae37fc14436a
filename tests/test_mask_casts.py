"""Store masks whose offsets pass through a truncation, a zero extension or an unsigned
comparison (fuzzer seed 60808: `mask=mn & ((rn - 7 * pid_m - 1).to(tl.uint8) > 0)`).
The frontend reads masks on affine offsets as boxes (ttir_to_linalg/analysis.py); it
once looked through `.to(tl.uint8)` and read unsigned comparisons as signed, so the
negative offsets that wrap to large unsigned values fell outside the box and their
stores were lost. Checked in both shapes on the active device against torch, which
wraps the same way."""
import pytest
import torch
import triton
import triton.language as tl

SHAPES = ["cpu", "gpu"]


@triton.jit
def store_where_wrapped(out_ptr, shift, n, KIND: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = offs - shift
    if KIND == 0:
        keep = v.to(tl.uint8) > 0          # trunci, unsigned compare
    elif KIND == 1:
        keep = v.to(tl.int8) < 3           # trunci, signed compare
    elif KIND == 2:
        keep = v.to(tl.uint32) < 3         # unsigned compare of a negative offset
    else:
        keep = v.to(tl.uint8).to(tl.int32) > 250   # trunci then zero extension
    tl.store(out_ptr + offs, tl.full((BLOCK,), 1, tl.int32), mask=(offs < n) & keep)


def _expected(kind: int, shift: int, n: int, block: int) -> torch.Tensor:
    v = torch.arange(block, dtype=torch.int64) - shift
    if kind == 0:
        keep = (v & 0xFF) > 0
    elif kind == 1:
        keep = ((v + 128) % 256 - 128) < 3
    elif kind == 2:
        keep = (v % 2 ** 32) < 3
    else:
        keep = (v & 0xFF) > 250
    out = torch.zeros(block, dtype=torch.int32)
    out[(torch.arange(block) < n) & keep] = 1
    return out


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kind", [0, 1, 2, 3], ids=["uint8_gt", "int8_lt", "uint32_lt", "uint8_zext"])
@pytest.mark.parametrize("shift", [0, 1, 7, 300])
def test_masks_through_wrapping_casts(kind, shift, shape):
    block, n = 64, 50
    out = torch.zeros(block, dtype=torch.int32)
    store_where_wrapped[(1,)](out, shift, n, KIND=kind, BLOCK=block, opencl_target=shape)
    assert torch.equal(out, _expected(kind, shift, n, block)), (out, _expected(kind, shift, n, block))
