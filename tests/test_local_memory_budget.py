"""The local-memory budget error (Triton's OutOfResources) names every tile with the
source line that made it: operand tiles by their loads, the accumulator that `tl.zeros`
starts (whose constant Triton hoists without a location) by the line that computes it,
and all tiles however many. Checked at compile time against a named target
(`opencl_target="gpu-32k"`) and from a kernel's OpenCL C, as the launcher reads it."""

import inspect

import pytest
import torch

import triton
import triton.language as tl
from triton.runtime.errors import OutOfResources

from launcher.resources import describe, local_tiles


@triton.jit
def accumulate_kernel(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr,
                      BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


def _line_of(fn, text: str) -> str:
    """`file.py:N` of the line of `fn`'s source that contains `text`."""
    lines, first = inspect.getsourcelines(fn.fn)
    found = [first + i for i, line in enumerate(lines) if text in line]
    assert len(found) == 1, text
    return f"test_local_memory_budget.py:{found[0]}"


def test_budget_error_names_the_accumulator_and_operand_lines():
    K = 128
    a, b, c = torch.randn(256, K), torch.randn(K, 256), torch.empty(256, 256)
    with pytest.raises(OutOfResources) as error:
        accumulate_kernel[(1,)](a, b, c, K, BM=256, BN=256, BK=64, opencl_target="gpu-32k")
    message = str(error.value)
    tiles = message[message.index("(") + 1:message.index(", but")]
    for statement in ("acc += tl.dot(a, b)", "a = tl.load(", "b = tl.load("):
        assert f"from {_line_of(accumulate_kernel, statement)}: {statement}" in tiles, message
    # every tile listed carries its line, the largest (the accumulator) first
    described = tiles.split(" bytes from ")
    assert len(described) == 4 and described[0].startswith("acc_tile float[256x256] = 262144")


def test_launch_time_error_names_every_tile_line():
    # The launcher has the OpenCL C only: each __local declaration carries its line.
    K = 32
    a, b, c = torch.randn(16, K), torch.randn(K, 16), torch.empty(16, 16)
    compiled = accumulate_kernel[(1,)](a, b, c, K, BM=16, BN=16, BK=16)
    source = compiled.asm["cl"]
    tiles = local_tiles(source)
    assert tiles and all(origin.startswith("test_local_memory_budget.py:")
                         for *_, origin in tiles), tiles
    message = describe(10**9, 1024, "shared memory", "accumulate_kernel", source, (1, 1, 1),
                       "a small device")
    for name, ctype, shape, size, origin in tiles:
        assert f"{name} {ctype}[{shape}] = {size} bytes from {origin}" in message, message


def test_every_tile_is_listed():
    source = "\n".join(f"  __local float t{i}[{64 * (i + 1)}];  // k.py:{i + 3}: t{i} = tl.load(p)"
                       for i in range(9))
    message = describe(10**9, 1024, "shared memory", "k", source, (1, 1, 1), "a small device")
    for i in range(9):
        assert f"t{i} float[{64 * (i + 1)}] = {256 * (i + 1)} bytes from k.py:{i + 3}: " in message
    assert message.index("t8 float") < message.index("t0 float")   # largest first
    assert " more" not in message
