"""Dynamic shapes: the kernel compiled once for `?`/named dimensions next to the kernel
compiled for the static shape, measured in the same run.

    python3 benchmarks/dynamic.py                 # GELU f32[6,512,4096], dot 512x512x512
    python3 benchmarks/dynamic.py --json out.json --repeats 15

Cases (HLO modules run by `triton_spirv.hlo.ModuleRunner` on the OpenCL device):
  gelu    the seed's GELU fusion, f32[6,512,4096] vs f32[?,512,D]
  matmul  dot f32[512,512] x f32[512,512] vs f32[M,K] x f32[K,N]

Each run goes through the same host path (`runner.run(inputs, out=[out])`: the
generated host checks, the launch, the wait), so the difference is the kernel's. The
figure is the median of `--repeats` runs after `--warmup` runs; the ratio is
dynamic / static (the aim: within 1.3x). Results are printed and written as JSON
(default: benchmarks/dynamic.json).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

GELU = """HloModule gelu_{tag}

gelu {{
  %p = f32[{s}] parameter(0)
  %c0 = f32[] constant(0.5)
  %b0 = f32[{s}] broadcast(%c0), dimensions={{}}
  %c1 = f32[] constant(1)
  %b1 = f32[{s}] broadcast(%c1), dimensions={{}}
  %c2 = f32[] constant(0.79785)
  %b2 = f32[{s}] broadcast(%c2), dimensions={{}}
  %c3 = f32[] constant(0.044708)
  %b3 = f32[{s}] broadcast(%c3), dimensions={{}}
  %square = f32[{s}] multiply(%p, %p)
  %cube = f32[{s}] multiply(%square, %p)
  %m3 = f32[{s}] multiply(%cube, %b3)
  %a1 = f32[{s}] add(%p, %m3)
  %m2 = f32[{s}] multiply(%a1, %b2)
  %t = f32[{s}] tanh(%m2)
  %a0 = f32[{s}] add(%t, %b1)
  %m1 = f32[{s}] multiply(%a0, %b0)
  ROOT %m0 = f32[{s}] multiply(%p, %m1)
}}

ENTRY main {{
  %x = f32[{s}] parameter(0)
  ROOT %gelu = f32[{s}] fusion(%x), kind=kLoop, calls=gelu
}}
"""

DOT = """HloModule matmul_{tag}
ENTRY main {{
  %lhs = f32[{m},{k}] parameter(0)
  %rhs = f32[{k},{n}] parameter(1)
  ROOT %dot = f32[{m},{n}] dot(%lhs, %rhs), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
}}
"""


def cases():
    """(name, static text, dynamic text, inputs, reference function)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 512, 4096)).astype(np.float32)
    a = rng.standard_normal((512, 512)).astype(np.float32)
    b = rng.standard_normal((512, 512)).astype(np.float32)
    return [
        ("gelu f32[6,512,4096]", GELU.format(tag="static", s="6,512,4096"),
         GELU.format(tag="dynamic", s="?,512,D"), [x],
         lambda x: x * 0.5 * (1 + np.tanh(0.79785 * (x + 0.044708 * x ** 3)))),
        ("matmul f32[512,512]x[512,512]", DOT.format(tag="static", m=512, k=512, n=512),
         DOT.format(tag="dynamic", m="M", k="K", n="N"), [a, b], lambda a, b: a @ b),
    ]


def measure(runner, inputs, out, warmup: int, repeats: int) -> list[float]:
    for _ in range(warmup):
        runner.run(inputs, out=[out])
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        runner.run(inputs, out=[out])
        times.append(time.perf_counter() - start)
    return times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--json", default=os.path.join(HERE, "dynamic.json"))
    args = parser.parse_args(argv)

    from triton_spirv.hlo import read_hlo
    from triton_spirv.hlo.runtime import ModuleRunner

    results = []
    print(f"{'case':<32} {'static ms':>10} {'dynamic ms':>11} {'dynamic/static':>15}")
    for name, static_text, dynamic_text, inputs, reference in cases():
        row = {"case": name}
        expected = reference(*inputs)
        runners = {kind: ModuleRunner(read_hlo(text))
                   for kind, text in (("static", static_text), ("dynamic", dynamic_text))}
        outs = {kind: np.empty(expected.shape, np.float32) for kind in runners}
        for kind, runner in runners.items():        # compile, and check the results
            runner.run(inputs, out=[outs[kind]])
            err = float(np.max(np.abs(outs[kind] - expected)) / max(1.0, np.max(np.abs(expected))))
            row[f"{kind}_max_rel_error"] = err
            fusion = next(iter(runner.fusions.values()))
            row[f"{kind}_launch"] = fusion.report.launch
        # Interleave the two so that both see the same machine state.
        times = {kind: [] for kind in runners}
        for _ in range(2):
            for kind, runner in runners.items():
                times[kind] += measure(runner, inputs, outs[kind], args.warmup,
                                       (args.repeats + 1) // 2)
        for kind in runners:
            row[f"{kind}_ms"] = statistics.median(times[kind]) * 1e3
            row[f"{kind}_all_ms"] = [t * 1e3 for t in times[kind]]
        row["ratio"] = row["dynamic_ms"] / row["static_ms"]
        results.append(row)
        print(f"{name:<32} {row['static_ms']:>10.2f} {row['dynamic_ms']:>11.2f} "
              f"{row['ratio']:>14.2f}x")
    report = {"device": _device(), "host": platform.platform(), "cpus": os.cpu_count(),
              "warmup": args.warmup, "repeats": args.repeats, "aim": "ratio <= 1.3",
              "results": results}
    with open(args.json, "w") as f:
        json.dump(report, f, indent=2)
    print(f"written to {args.json}")
    return 0


def _device() -> str:
    try:
        from launcher.device import get_device
        device = get_device()
        return str(getattr(device, "name", device))
    except Exception as exc:   # the figures do not depend on it
        return f"unknown ({exc})"


if __name__ == "__main__":
    sys.exit(main())
