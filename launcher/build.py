"""Every `program.build` of the launcher goes through `build_quietly`."""
from __future__ import annotations

import warnings

# Warnings about generated code are nothing a user can act on, and the OpenCL compiler
# prints them on stderr at every build (the default CPU runtime notes the ABI of float16 values on CPUs
# without AVX-512). Errors are still reported in full.
ALWAYS_OPTIONS = ("-w",)


def build_quietly(program, options=(), devices=None):
    """Builds without pyopencl's own disk cache (Triton's cache keeps our binaries; with
    both, a driver that refuses a cached binary reaches a pyopencl error path that
    fails on its own) and without its warning about compiler output: a failed build
    raises with the log, and a successful one's notes (Intel prints some) are noise."""
    import pyopencl as cl

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cl.CompilerWarning)
        return program.build(options=with_default_options(options), devices=devices, cache_dir=False)


def with_default_options(options):
    return list(options) + [o for o in ALWAYS_OPTIONS if o not in options]
