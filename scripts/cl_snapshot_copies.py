"""Snapshot of the printed kernels: the OpenCL C and the SPIR-V assembly of a fixed set
of memref-stage modules, to compare a change of the stages after the memref stage
(how copies are lowered, printed) byte for byte.

    python3 scripts/cl_snapshot_copies.py OUT [--triton-cache DIR ...] [--hlo FILE ...]

Inputs: every `*.memref` file under each Triton cache directory (fill one by running
kernels with TRITON_CACHE_DIR set, in the CPU and the GPU shape), and the memref stage
of every kernel of each HLO module (compiled here, in the shape TRITON_SPIRV_TARGET
asks for). For each module OUT gets `<name>.memref`, `<name>.cl` (the emitter's
source) and `<name>.spvasm` (the SPIR-V stage's assembly, or the error that stopped
it). `diff -r BEFORE AFTER` then shows what changed.
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def triton_memref_texts(cache: str) -> dict[str, str]:
    """{name: text} for every memref stage in a Triton cache directory; the name is the
    kernel's file name and a digest of the text, so different specializations of one
    kernel stay apart and the same module under two caches is written once."""
    found = {}
    for path in sorted(glob.glob(os.path.join(cache, "**", "*.memref"), recursive=True)):
        with open(path) as f:
            text = f.read()
        name = os.path.splitext(os.path.basename(path))[0]
        found[f"{name}-{_digest(text)}"] = text
    return found


def hlo_memref_texts(path: str) -> dict[str, str]:
    """{name: text}: the memref stage of every kernel of the HLO module in `path`."""
    from triton_spirv.hlo.reader import read_hlo_file
    from triton_spirv.hlo.runtime import ModuleRunner
    found = {}
    runner = ModuleRunner(read_hlo_file(path), keep_stages=True, program="source")
    for fusion in runner.compile_all():
        for kernel in fusion.kernels:
            text = kernel.stages["memref"]
            found[f"hlo-{kernel.name}-{_digest(text)}"] = text
    return found


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:10]


def print_module(name: str, text: str, out: str) -> None:
    from triton_spirv.stages import memref_to_opencl, memref_to_spirv
    with open(os.path.join(out, f"{name}.memref"), "w") as f:
        f.write(text)
    try:
        cl = memref_to_opencl(text).source
    except Exception as err:      # the snapshot records the failure as the output
        cl = f"// error: {type(err).__name__}: {err}\n"
    with open(os.path.join(out, f"{name}.cl"), "w") as f:
        f.write(cl)
    try:
        spvasm = memref_to_spirv(text, groups="gpu.all_reduce" in text).assembly
    except Exception as err:
        spvasm = f"// error: {type(err).__name__}: {err}\n"
    with open(os.path.join(out, f"{name}.spvasm"), "w") as f:
        f.write(spvasm)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--triton-cache", action="append", default=[])
    parser.add_argument("--hlo", action="append", default=[])
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    modules: dict[str, str] = {}
    for cache in args.triton_cache:
        modules.update(triton_memref_texts(cache))
    for path in args.hlo:
        modules.update(hlo_memref_texts(path))
    for name, text in sorted(modules.items()):
        print_module(name, text, args.out)
    print(f"{len(modules)} modules written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
