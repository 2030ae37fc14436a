"""Differential testing of Triton programs: `python3 -m tests.fuzz --help`.

    python3 -m tests.fuzz --seeds 0:200 --out /tmp/fuzz
    python3 -m tests.fuzz --seeds 0:2000 --configs pocl-cpu,intel-gpu-spirv --oclgrind-every 20 --out DIR

Each seed's program runs under Triton's interpreter and in every configuration; each
new failure class (configuration family and signature) is reduced and written to
OUT/findings/NN-CONFIG-SLUG.py (a standalone reproducer), all failures to
OUT/summary.json. The exit status is 1 when anything failed.
"""

import argparse
import json
import os
import re
import signal
import sys
import tempfile
import time
from collections import Counter, defaultdict

from .generator import ALL_FEATURES, generate
from .reduce import reduce_program, reproducer_source
from .run import CONFIGS, Pool, is_oclgrind, run_program


def _seeds(text):
    start, _, end = text.partition(":")
    return range(int(start), int(end)) if end else range(int(start), int(start) + 1)


def _slug(signature):
    return re.sub(r"[^a-z0-9]+", "-", signature.lower()).strip("-")[:60] or "failure"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m tests.fuzz", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", default="0:50", help="START:END (END excluded), or one seed")
    parser.add_argument("--configs", default=",".join(c for c in CONFIGS if not is_oclgrind(c)),
                        help=f"comma-separated, of {', '.join(CONFIGS)}")
    parser.add_argument("--oclgrind-every", type=int, default=10,
                        help="replay every N-th program under Oclgrind, in both shapes (0: never)")
    parser.add_argument("--features", default=",".join(ALL_FEATURES),
                        help=f"what the generator may use (default: everything: {','.join(ALL_FEATURES)})")
    parser.add_argument("--out", default=None, help="directory for findings and summary.json")
    parser.add_argument("--no-reduce", action="store_true", help="write failing programs unreduced")
    parser.add_argument("--max-trials", type=int, default=60, help="reducer runs per failure class")
    args = parser.parse_args(argv)

    configs = [c for c in args.configs.split(",") if c]
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        parser.error(f"unknown configuration(s) {unknown}; known: {list(CONFIGS)}")
    if args.oclgrind_every:
        configs += [c for c in CONFIGS if is_oclgrind(c) and c not in configs]
    out = args.out or tempfile.mkdtemp(prefix="fuzz-")
    os.makedirs(os.path.join(out, "findings"), exist_ok=True)
    os.makedirs(os.path.join(out, "programs"), exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="fuzz-work-")
    features = [f for f in args.features.split(",") if f]
    if set(features) - set(ALL_FEATURES):
        parser.error(f"unknown feature(s) {sorted(set(features) - set(ALL_FEATURES))}; known: {ALL_FEATURES}")

    pool = Pool(configs)
    runs, failures, invalid = Counter(), [], []
    classes = {}  # class key -> finding record
    per_class = defaultdict(Counter)
    started = time.time()
    done = 0
    # `timeout` ends a long run with SIGTERM: finish the summary as after the last seed
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))

    def summary():
        return {"seeds": args.seeds, "programs": done, "configs": configs, "seconds": round(time.time() - started),
                "runs": dict(runs), "invalid_programs": invalid,
                "classes": [dict(rec, configs=dict(per_class[key])) for key, rec in classes.items()],
                "failures": failures}

    def write_summary():
        with open(os.path.join(out, "summary.json"), "w") as f:
            json.dump(summary(), f, indent=1)

    try:
        for seed in _seeds(args.seeds):
            program = generate(seed, features)
            chosen = [c for c in configs if not is_oclgrind(c) or (args.oclgrind_every
                                                                   and seed % args.oclgrind_every == 0)]
            path = os.path.join(out, "programs", f"seed{seed}.py")
            result = run_program(program, path, pool, workdir, configs=chosen)
            done += 1
            if result.reference_error:
                invalid.append({"seed": seed, "error": result.reference_error[:500]})
                print(f"seed {seed}: reference failed (generator bug): {result.reference_error[:200]}", flush=True)
                continue
            bad = [o for o in result.outcomes if o.failed]
            for o in result.outcomes:
                runs[o.config] += 1
            if not bad:
                os.remove(path)
            print(f"seed {seed}: {len(result.outcomes) - len(bad)} ok"
                  + "".join(f"; {o.config}: {o.kind} {o.signature[:100]}" for o in bad), flush=True)
            for o in bad:
                # one build or compile error is one class on every configuration
                key = o.signature if o.kind == "error" else f"{o.config}: {o.signature}"
                per_class[key][o.config] += 1
                failures.append({"seed": seed, "config": o.config, "kind": o.kind, "signature": o.signature,
                                 "detail": o.detail[:3000], "program": path})
                if key not in classes:
                    classes[key] = _new_class(program, o, key, len(classes), out, pool, workdir, args)
            write_summary()
    except KeyboardInterrupt:
        print("stopped", flush=True)
    finally:
        pool.close()
    write_summary()
    print(f"\n{done} programs in {round(time.time() - started)} s; runs per configuration: {dict(runs)}")
    print(f"{len(invalid)} invalid programs; {len(failures)} failing runs in {len(classes)} classes:")
    for key, rec in classes.items():
        print(f"  {rec['file']}: {dict(per_class[key])}\n      {key[:150]}")
    return 1 if failures else 0


def _new_class(program, outcome, key, index, out, pool, workdir, args):
    env, options = CONFIGS[outcome.config]
    reduced = program
    if not args.no_reduce and not is_oclgrind(outcome.config):
        print(f"  new class {key}: reducing seed {program.seed} in {outcome.config}", flush=True)
        reduced = reduce_program(program, outcome.config, outcome.signature, pool, workdir,
                                 max_trials=args.max_trials, log=lambda m: print(m, flush=True))
    name = f"{index:02d}-{outcome.config}-{_slug(outcome.signature)}.py"
    path = os.path.join(out, "findings", name)
    with open(path, "w") as f:
        f.write(reproducer_source(reduced, outcome.config, env, options,
                                  f"{outcome.kind}: {outcome.signature}\n{outcome.detail[:1500]}"))
    return {"file": path, "seed": program.seed, "first_config": outcome.config, "kind": outcome.kind,
            "signature": outcome.signature, "statements": len(reduced.stmts), "original": len(program.stmts)}


if __name__ == "__main__":
    sys.exit(main())
