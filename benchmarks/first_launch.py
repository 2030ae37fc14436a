"""Times compile + load + first launch of the matmul kernel in this (new) process and
prints {"s": seconds, "cpu_s": CPU seconds, "stages": {stage: seconds}}: with an empty
TRITON_CACHE_DIR that is a cold compile (the stages are this compile's), with a filled
one a warm start (the stages are those recorded when the cached kernel was compiled).
`cpu_s` is the process's CPU time over the same span (all its threads): on a machine
shared with other work it varies less than the wall time.

With --phases, the work a first launch does outside the compiler runs first, each part
timed on its own, and "phases" lists the seconds of each (the launch is then the rest):

    import pyopencl     the OpenCL binding (Triton's driver discovery imports it)
    icd_loader          the first clGetPlatformIDs: the ICD loader opens every
                        installed driver (/etc/OpenCL/vendors, or $OCL_ICD_VENDORS)
    device              our device choice: context, queue, the probe kernel
    gluon_import        what Triton's first argument specialization imports, for every
                        backend (triton.experimental.gluon, from libtriton's specialize)
    launch              specialization, cache lookup or compile, load, first launch
"""
import json
import resource
import sys
import time

import torch

import cases


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class Clock:
    """Wall and CPU seconds of consecutive spans."""

    def __init__(self):
        self.wall, self.cpu = time.perf_counter(), cpu_seconds()

    def lap(self):
        wall, cpu = time.perf_counter(), cpu_seconds()
        spent = (wall - self.wall, cpu - self.cpu)
        self.wall, self.cpu = wall, cpu
        return spent


def outside_phases(clock):
    """Seconds of each part of a first launch that is not compiling (see the docstring)."""
    phases = {}
    import pyopencl as cl
    phases["import pyopencl"] = clock.lap()[0]
    cl.get_platforms()
    phases["icd_loader"] = clock.lap()[0]
    from launcher import get_device
    get_device()
    phases["device"] = clock.lap()[0]
    import triton.experimental.gluon.nvidia.hopper  # noqa: F401
    phases["gluon_import"] = clock.lap()[0]
    return phases


def main():
    a, b, c = (torch.randn(64, 64), torch.randn(64, 64), torch.empty(64, 64))
    clock = Clock()
    start_cpu = clock.cpu
    phases = outside_phases(clock) if "--phases" in sys.argv[1:] else {}
    compiled = cases.launch_matmul(a, b, c)
    launch_wall = clock.lap()[0]
    first_cpu = clock.cpu - start_cpu
    cases.launch_matmul(a, b, c)
    steady_wall, steady_cpu = clock.lap()
    stages = compiled.metadata._asdict().get("stage_seconds", {}) if compiled is not None else {}
    result = {"s": sum(phases.values()) + launch_wall - steady_wall, "cpu_s": first_cpu - steady_cpu,
              "stages": stages}
    if phases:
        result["phases"] = dict(phases, launch=launch_wall - steady_wall)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
