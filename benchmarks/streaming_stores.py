"""Streaming (non-temporal) stores against ordinary ones, measured in alternation.

    python3 benchmarks/streaming_stores.py               # the default device (PoCL)
    TRITON_OPENCL_DEVICE=intel python3 benchmarks/streaming_stores.py
    SIZES=16,20,22,25 ROUNDS=10 python3 benchmarks/streaming_stores.py

Tutorial 01's vector add (BLOCK=1024) at several sizes, compiled with
`streaming_stores=False` (ordinary stores) and with the default (non-temporal stores
where the launch writes at least memref_stage/streaming_stores.py's STREAMING_BYTES;
FORCE=1 lowers that threshold to 0, in a fresh Triton cache, so that small sizes stream
too), next to torch's copy
(the memory-bandwidth reference) and torch.add, the runs taking turns. A second
row per variant times two dependent adds (`out = x + y; out2 = out + y`): the cost
of evicting a result the next kernel reads. Bandwidth counts 12 bytes per element of
one add (24 for two), as benchmarks/run.py does.
"""
from __future__ import annotations

import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]
if os.environ.get("FORCE"):  # kernels compiled with the usual threshold must not be reused
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="streaming-stores-")

import torch  # noqa: E402
import triton  # noqa: E402

import kernels  # noqa: E402
from triton_spirv.memref_stage import streaming_stores  # noqa: E402
from work_groups import alternating  # noqa: E402


def _add(x, y, out, **options):
    n = x.numel()
    return lambda: kernels.add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024, **options)


def _variants(x, y, out, out2) -> dict:
    """name -> (one add, two dependent adds) for each way of storing."""
    plain, streaming = {"streaming_stores": False}, {}
    variants = {}
    for name, options in (("ordinary stores", plain), ("streaming stores", streaming)):
        one, first, second = _add(x, y, out, **options), _add(x, y, out, **options), _add(out, y, out2, **options)
        variants[name] = (one, lambda first=first, second=second: (first(), second()))
    return variants


def measure(log2_n: int, rounds: int) -> None:
    n = 2**log2_n
    x, y = torch.rand(n), torch.rand(n)
    out, out2, dst = (torch.empty_like(x) for _ in range(3))
    runs = {"copy_ (reference)": lambda: dst.copy_(x), "torch.add": lambda: torch.add(x, y, out=dst)}
    for name, (one, two) in _variants(x, y, out, out2).items():
        runs[name] = one
        runs[name + ", two adds"] = two
    times = alternating(runs, rounds)
    assert torch.equal(out, x + y) and torch.equal(out2, out + y)
    copy_gbps = 2 * n * 4 / statistics.median(times["copy_ (reference)"]) / 1e9
    print(f"vector add of 2^{log2_n} floats ({n * 4 >> 10} KiB a buffer)")
    for name, seconds in times.items():
        median = statistics.median(seconds)
        moved = 2 * n * 4 if name.startswith("copy_") else (24 if "two adds" in name else 12) * n
        gbps = moved / median / 1e9
        print(f"  {name:<30} median {median * 1e3:8.3f} ms {gbps:6.1f} GB/s ({gbps / copy_gbps:.2f} of copy)"
              f"  best {moved / min(seconds) / 1e9:6.1f} GB/s")


if __name__ == "__main__":
    if os.environ.get("FORCE"):
        streaming_stores.STREAMING_BYTES = 0
    rounds = int(os.environ.get("ROUNDS", "10"))
    for log2_n in (int(s) for s in os.environ.get("SIZES", "16,20,22,25").split(",")):
        measure(log2_n, rounds)
