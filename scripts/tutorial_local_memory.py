"""Which tutorial kernels fit the local memory of GPU targets (triton_spirv/target.py).

Runs the correctness checks of tutorials 01-09 (at the sizes tests/test_tutorials.py
uses, with the tutorials' own block sizes and autotune configs) on the device in use,
records every kernel compiled (or found in the cache; a failing check is reported and
the others still run) and prints, per kernel and block sizes, its work-group size (wi),
the `__local` bytes it needs, whether it fits each named GPU description, and its biggest tiles:

    PYTHONPATH=. python3 scripts/tutorial_local_memory.py [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The tutorials load as the tests load them (tests/test_tutorials.py).
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, ROOT)
from test_tutorials import load_tutorial  # noqa: E402

# (file, the check to run on the loaded module): the sizes of tests/test_tutorials.py.
CHECKS = [
    ("01-vector-add.py", lambda t: t.main()),
    ("02-fused-softmax.py", lambda t: t.check(n_rows=257, n_cols=781)),
    ("03-matrix-multiplication.py", lambda t: t.check(M=96, N=80, K=72)),
    ("04-low-memory-dropout.py", lambda t: t.check(size=3001, p=0.3)),
    ("05-layer-norm.py", lambda t: t.test_layer_norm(151, 512, _torch().float16)),
    ("06-fused-attention.py", lambda t: t.test_op(1, 2, 128, 64, True, _torch().float16)),
    ("07-extern-functions.py", lambda t: t.check(size=5000)),
    ("08-grouped-gemm.py", lambda t: t.check(group_m=(128, 64), group_n=(64, 128), group_k=(64, 32))),
    ("09-persistent-matmul.py", lambda t: _each_variant(t, 96, 160, 64)),
]


def _each_variant(tutorial, m, n, k):
    """Tutorial 09's variants one at a time: a mismatch of one still compiles the rest."""
    for name in tutorial.variants():
        try:
            tutorial.validate(m, n, k, only=[name])
        except SystemExit as err:
            print(f"09-persistent-matmul.py: {err}")


def _torch():
    import torch
    return torch


def _block_sizes(src) -> str:
    """The constexpr arguments of a compiled kernel, e.g. BLOCK_SIZE_M=64 BLOCK_SIZE_N=64."""
    names = src.fn.arg_names
    constants = {names[path[0]]: value for path, value in src.constants.items()
                 if len(path) == 1 and isinstance(value, (int, bool))}
    return " ".join(f"{k}={v}" for k, v in sorted(constants.items()) if k.isupper())


def _tiles(metadata_group) -> list[str]:
    from launcher.resources import local_tiles
    source = next((open(path).read() for name, path in metadata_group.items() if name.endswith(".cl")), "")
    return [f"{name} {ctype}[{shape}] = {size}" for name, ctype, shape, size, _origin in local_tiles(source)[:3]]


def collect() -> list[dict]:
    import triton
    records, seen = [], set()
    current = {"tutorial": ""}

    def listener(src, metadata, metadata_group, times, cache_hit):
        key = (current["tutorial"], metadata["name"], _block_sizes(src))
        if key not in seen:
            seen.add(key)
            records.append({"tutorial": key[0], "kernel": key[1], "constexprs": key[2],
                            "local_bytes": int(metadata["local_mem_bytes"]),
                            "work_items": metadata["local_size"][0],
                            "tiles": _tiles(metadata_group)})

    triton.knobs.compilation.listener = listener
    for file_name, check in CHECKS:
        current["tutorial"] = file_name[:2]
        try:
            check(load_tutorial(file_name))
        except (Exception, SystemExit) as err:   # the kernels compiled so far still count
            print(f"{file_name}: check failed: {type(err).__name__}: {str(err)[:300]}")
    return records


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the records here")
    args = parser.parse_args(argv)
    from triton_spirv.target import NAMED_TARGETS
    records = collect()
    limits = {name: t.local_mem_bytes for name, t in NAMED_TARGETS.items()}
    print(f"{'tut':3} {'kernel':28} {'wi':>4} {'bytes':>7} " + " ".join(f"{n:>7}" for n in limits)
          + "  constexprs; biggest tiles")
    for r in records:
        fits = " ".join(f"{'fits' if r['local_bytes'] <= limit else 'NO':>7}" for limit in limits.values())
        print(f"{r['tutorial']:3} {r['kernel'][:28]:28} {r['work_items']:>4} {r['local_bytes']:>7} {fits}  "
              f"{r['constexprs']}; {', '.join(r['tiles'])}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
