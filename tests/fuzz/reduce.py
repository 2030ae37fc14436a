"""Reduce a failing program: delete statements while the same failure stays.

Delta debugging over the statement list (chunks of halving size, then single
statements, repeated until nothing more can go): a deleted statement's value becomes
`tl.full` of its kind and dtype (Program.without), so every candidate is a valid
program. A candidate is kept when the configuration still fails with the same
signature (the same normalized error, "mismatch", "hang", ...) and the reference still
runs. Then the problem sizes are shrunk the same way.
"""

import os
import re

from .run import run_program

REPRODUCER_FOOTER = '''

# ---------------------------------------------------------------------------------
# Reproducer: runs the kernel under Triton's interpreter (the reference) and in the
# configuration below, each in its own process, and prints what differs
# (tests/fuzz/reproducer.py).
CONFIG = {config!r}
ENVIRONMENT = {env!r}
OPTIONS = {options!r}
FOUND = {found!r}

if __name__ == "__main__":
    import sys

    root = os.path.dirname(os.path.abspath(__file__))  # the checkout this file is in, else the current folder
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    sys.path.insert(0, root if root != "/" else os.getcwd())
    from tests.fuzz.reproducer import main

    main(__file__, run, CONFIG, ENVIRONMENT, OPTIONS)
'''


def same_failure(program, config, signature, pool, workdir, path):
    result = run_program(program, path, pool, workdir, configs=[config])
    if result.reference_error:
        return False
    outcome = result.outcomes[0]
    return outcome.failed and outcome.signature == signature


def reduce_program(program, config, signature, pool, workdir, max_trials=80, log=None):
    """-> the smallest program found that fails in `config` with `signature`."""
    path = os.path.join(workdir, "candidate.py")
    return reduce_with(program, lambda candidate: same_failure(candidate, config, signature, pool, workdir, path),
                       max_trials, log)


def reduce_with(program, still_fails, max_trials=80, log=None):
    """Delta debugging with the predicate `still_fails(candidate) -> bool`."""
    trials = 0

    def check(candidate):
        nonlocal trials
        trials += 1
        return still_fails(candidate)

    best = program
    chunk = max(1, len(best.stmts) // 2)
    while chunk >= 1 and trials < max_trials:
        removed_any = False
        start = 0
        while start < len(best.stmts) and trials < max_trials:
            indices = set(range(start, min(start + chunk, len(best.stmts))))
            candidate = best.without(indices)
            if candidate.stmts and check(candidate):
                best, removed_any = candidate, True
                if log:
                    log(f"    reduced to {len(best.stmts)} statements")
            else:
                start += chunk
        if not removed_any:
            chunk //= 2
    return _shrink_sizes(best, check, lambda: trials < max_trials)


def _shrink_sizes(program, still_fails, budget):
    """Smaller M, N, K, T (keeping the block sizes): easier reproducers to read."""
    from .generator import Program
    for key in ("M", "N", "K", "T"):
        for value in (1, 2, program.sizes[key] // 2):
            if not budget() or value >= program.sizes[key] or value < 1:
                continue
            sizes = dict(program.sizes, **{key: value})
            candidate = Program(program.seed, sizes, program.inputs, program.outputs, program.stmts,
                                dict(program.scalars))
            if still_fails(candidate):
                program = candidate
                break
    return program


def reproducer_source(program, config, env, options, found):
    """`found`: the failure's first lines, without a traceback or the machine's paths."""
    found = re.sub(r"/[^\s'\":]+/", "", found.split("\nTraceback")[0])[:600]
    return program.source() + REPRODUCER_FOOTER.format(config=config, env=env, options=options, found=found)
