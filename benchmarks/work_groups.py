"""What a work-group costs on the OpenCL device, and what program loops win back.

    python3 benchmarks/work_groups.py               # the default device (PoCL)
    TRITON_OPENCL_DEVICE=intel python3 benchmarks/work_groups.py

First an almost empty kernel (each program stores one float) over 2^15 programs, with
pyopencl: one work-group of one work-item per program, then groups that loop over k
consecutive programs. The difference per program is the device's cost of a work-group.
Then tutorial 01's vector add (BLOCK=1024, 2^25 elements, 2^15 programs) through the
backend with program loops off and on (memref_stage/program_loops.py), next to torch's
copy (the memory-bandwidth reference) and torch.add, measured in alternation so that
the other load of the machine falls on all of them alike. Median and best of the runs.
"""
from __future__ import annotations

import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]

import numpy as np  # noqa: E402
import torch  # noqa: E402

import kernels  # noqa: E402

PROGRAMS = 2**15
EMPTY_PROGRAMS = """
__attribute__((reqd_work_group_size(1, 1, 1)))
__kernel void one_program(__global float* out) {
  out[get_group_id(0)] = 1.0f;
}

__attribute__((reqd_work_group_size(1, 1, 1)))
__kernel void program_loop(__global float* out, int per_group, int programs) {
  int first = (int)get_group_id(0) * per_group;
  int last = min(first + per_group, programs);
  for (int program = first; program < last; ++program) {
    out[program] = 1.0f;
  }
}
"""


def alternating(runs: dict, rounds: int) -> dict:
    """name -> seconds of each call, the runs taking turns (three calls a turn)."""
    for run in runs.values():
        run()
        run()
    times = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            for _ in range(3):
                start = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - start)
    return times


def empty_programs(rounds: int) -> None:
    import pyopencl as cl

    from launcher import get_device
    dev = get_device()
    program = cl.Program(dev.context, EMPTY_PROGRAMS).build()
    out = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, PROGRAMS * 4)
    one = program.one_program
    one.set_args(out)
    loops = {}
    for k in (1, 4, 16, 64, 1024):
        kernel = cl.Kernel(program, "program_loop")
        kernel.set_args(out, np.int32(k), np.int32(PROGRAMS))
        loops[k] = kernel

    def launch(kernel, groups):
        return lambda: cl.enqueue_nd_range_kernel(dev.queue, kernel, (groups,), (1,)).wait()

    runs = {"one program per group": launch(one, PROGRAMS)}
    runs.update({f"{k} programs per group": launch(kernel, -(-PROGRAMS // k)) for k, kernel in loops.items()})
    times = alternating(runs, rounds)
    print(f"{dev.name}, {dev.device.max_compute_units} compute units; {PROGRAMS} programs storing one float")
    for name, seconds in times.items():
        median = statistics.median(seconds)
        print(f"  {name:<26} median {median * 1e3:7.3f} ms ({median / PROGRAMS * 1e9:5.1f} ns a program)"
              f"  best {min(seconds) * 1e3:7.3f} ms")


def vector_add(rounds: int) -> None:
    n = PROGRAMS * 1024
    x, y = torch.rand(n), torch.rand(n)
    out, dst = torch.empty_like(x), torch.empty_like(x)
    grid = (PROGRAMS,)

    def add(**options):
        return lambda: kernels.add_kernel[grid](x, y, out, n, BLOCK=1024, **options)

    runs = {"copy_ (reference)": lambda: dst.copy_(x), "torch.add": lambda: torch.add(x, y, out=dst),
            "one program per group": add(program_loops=False), "program loops": add()}
    moved = {"copy_ (reference)": 2 * n * 4}
    times = alternating(runs, rounds)
    assert torch.equal(out, x + y)
    copy = statistics.median(times["copy_ (reference)"])
    print(f"vector add of 2^{n.bit_length() - 1} floats, BLOCK=1024; torch on {torch.get_num_threads()} threads")
    for name, seconds in times.items():
        median = statistics.median(seconds)
        gbps = moved.get(name, 3 * n * 4) / median / 1e9
        print(f"  {name:<26} median {median * 1e3:7.2f} ms {gbps:6.1f} GB/s ({gbps / (2 * n * 4 / copy / 1e9):.2f} of copy)"
              f"  best {min(seconds) * 1e3:7.2f} ms")


if __name__ == "__main__":
    rounds = int(os.environ.get("ROUNDS", "10"))
    empty_programs(rounds)
    vector_add(rounds)
