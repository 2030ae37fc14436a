"""Fuzzing the TTIR and HLO readers with hypothesis: mutations of real texts (line and
character deletions, duplications, token swaps and replacements, random bytes) either
read or raise the reader's own error type, never anything else, and never hang.

Each test is bounded by an example count (FUZZ_EXAMPLES, default 400, more with the
environment variable TRITON_SPIRV_FUZZ_EXAMPLES) and each example by a deadline and
an alarm; the number of examples run is printed.
"""

import glob
import os
import re
import signal
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

HERE = os.path.dirname(os.path.abspath(__file__))
FUZZ_EXAMPLES = int(os.environ.get("TRITON_SPIRV_FUZZ_EXAMPLES", "400"))
# CI runs the same examples every time; a longer campaign (the variable set) explores.
DERANDOMIZE = "TRITON_SPIRV_FUZZ_EXAMPLES" not in os.environ
HANG_SECONDS = 5

_TOKEN = re.compile(r"%[\w.#]+|[\w.]+|\"[^\"]*\"|[^\s\w]")
_POOL = ["%0", "%c0_i32", "tt.load", "tt.store", "arith.addi", "tensor<4xf32>", "!tt.ptr<f32>", "i32", "f16",
         "{", "}", "(", ")", "<", ">", "[", "]", ":", ",", "=", "->", "loc(#loc3)", "#loc", "\"", "0x7f",
         "-1", "99999999999999999999", "dense<1.0>", "scf.for", "scf.yield", "tt.return", "\\", "\n", "",
         "f32[2,3]{1,0}", "parameter(0)", "ROOT", "ENTRY", "HloModule", "add(", "s32[]", "%p.1", "pred[]",
         "dimensions={0}", "slice={[0:2]}", "to_apply=%add", "\x00", "\u00e9", "tensor<?xf32>"]

_STATS = {}


def _mutations():
    op = st.sampled_from(["delete_line", "dup_line", "delete_chars", "swap_tokens", "replace_token",
                          "insert_bytes", "truncate", "swap_lines"])
    return st.lists(st.tuples(op, st.integers(0, 10**6), st.integers(0, 10**6),
                              st.sampled_from(_POOL) | st.binary(max_size=8).map(
                                  lambda b: b.decode("latin-1"))), min_size=1, max_size=4)


def mutate(text, mutations):
    for kind, a, b, piece in mutations:
        lines = text.split("\n")
        if kind == "delete_line" and lines:
            del lines[a % len(lines)]
            text = "\n".join(lines)
        elif kind == "dup_line" and lines:
            i = a % len(lines)
            lines.insert(b % (len(lines) + 1), lines[i])
            text = "\n".join(lines)
        elif kind == "swap_lines" and len(lines) > 1:
            i, j = a % len(lines), b % len(lines)
            lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
        elif kind == "delete_chars" and text:
            i = a % len(text)
            text = text[:i] + text[i + 1 + b % 12:]
        elif kind == "truncate" and text:
            text = text[:a % len(text)]
        elif kind == "insert_bytes":
            i = a % (len(text) + 1)
            text = text[:i] + piece + text[i:]
        else:
            tokens = list(_TOKEN.finditer(text))
            if not tokens:
                continue
            t1 = tokens[a % len(tokens)]
            if kind == "swap_tokens":
                t2 = tokens[b % len(tokens)]
                if t1.start() > t2.start():
                    t1, t2 = t2, t1
                if t1.end() <= t2.start():
                    text = (text[:t1.start()] + t2.group() + text[t1.end():t2.start()] + t1.group()
                            + text[t2.end():])
            else:  # replace_token
                text = text[:t1.start()] + piece + text[t1.end():]
    return text


class _Hang(Exception):
    pass


def _alarm(_signum, _frame):
    raise _Hang()


def run_bounded(fn, text):
    """fn(text) under an alarm, so that a hang fails instead of stalling the suite."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HANG_SECONDS)
    try:
        return fn(text)
    except _Hang:
        pytest.fail(f"the reader hung for {HANG_SECONDS} s on:\n{text[:2000]}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# ---------------------------------------------------------------------------------------
# TTIR


@pytest.fixture(scope="module")
def ttir_seeds():
    from reliability_kernels import run_add, run_matmul, run_reductions, run_while
    seeds = [run().asm["ttir"] for run in (run_add, run_matmul, run_reductions, run_while)]
    return [s if isinstance(s, str) else str(s) for s in seeds]


def _read_ttir(text):
    from triton_spirv.stages import new_context
    from triton_spirv.ttir import read_ttir
    from triton_spirv.ttir.errors import TTIRReadError
    try:
        with new_context() as ctx:
            read_ttir(text, ctx)
        return "read"
    except TTIRReadError as exc:
        assert str(exc), "an error without a message"
        return "error"


def test_ttir_seeds_read(ttir_seeds):
    for text in ttir_seeds:
        assert _read_ttir(text) == "read"


def test_fuzz_ttir_reader(ttir_seeds):
    counts = {"read": 0, "error": 0}
    start = time.time()

    @settings(max_examples=FUZZ_EXAMPLES, deadline=5000, database=None, derandomize=DERANDOMIZE,
              suppress_health_check=list(HealthCheck))
    @given(st.integers(0, 3), _mutations())
    def fuzz(seed, mutations):
        text = mutate(ttir_seeds[seed % len(ttir_seeds)], mutations)
        counts[run_bounded(_read_ttir, text)] += 1

    fuzz()
    _STATS["ttir"] = (sum(counts.values()), time.time() - start, counts)
    print(f"\nTTIR reader fuzz: {sum(counts.values())} examples in {time.time() - start:.1f} s, "
          f"{counts['read']} read, {counts['error']} TTIRReadError, no other outcome")
    assert sum(counts.values()) >= min(FUZZ_EXAMPLES, 50)


# ---------------------------------------------------------------------------------------
# HLO


def _hlo_seeds():
    paths = sorted(glob.glob(os.path.join(HERE, "hlo", "*.hlo")) + glob.glob(os.path.join(HERE, "hlo", "*", "*.hlo")))
    seeds = []
    for path in paths[:12]:
        with open(path) as f:
            seeds.append(f.read())
    return seeds


def _read_hlo(text):
    from triton_spirv.hlo.errors import HloError
    from triton_spirv.hlo.reader import read_hlo
    try:
        read_hlo(text)
        return "read"
    except HloError as exc:
        assert str(exc), "an error without a message"
        return "error"


def test_fuzz_hlo_reader():
    seeds = _hlo_seeds()
    assert seeds, "no HLO texts under tests/hlo to mutate"
    counts = {"read": 0, "error": 0}
    start = time.time()

    @settings(max_examples=FUZZ_EXAMPLES, deadline=5000, database=None, derandomize=DERANDOMIZE,
              suppress_health_check=list(HealthCheck))
    @given(st.integers(0, 100), _mutations())
    def fuzz(seed, mutations):
        text = mutate(seeds[seed % len(seeds)], mutations)
        counts[run_bounded(_read_hlo, text)] += 1

    fuzz()
    print(f"\nHLO reader fuzz: {sum(counts.values())} examples over {len(seeds)} seeds in "
          f"{time.time() - start:.1f} s, {counts['read']} read, {counts['error']} HloError, no other outcome")
    assert sum(counts.values()) >= min(FUZZ_EXAMPLES, 50)


@pytest.mark.parametrize("text", ["", "\x00\x01\x02", "module {", "}" * 50, "tt.func @f(" * 200,
                                  "module { tt.func public @k() { tt.return } }",
                                  "%0 = tt.load %1 : tensor<4x!tt.ptr<f32>>", "\ufeffmodule {}",
                                  "module {\n" * 300 + "}" * 300])
def test_ttir_reader_odd_inputs(text):
    assert run_bounded(_read_ttir, text) in ("read", "error")


@pytest.mark.parametrize("text", ["", "\x00", "HloModule", "HloModule m\nENTRY e {", "HloModule m\n}" * 3,
                                  "HloModule m\nENTRY e {\n ROOT p = f32[2] parameter(0)\n}",
                                  "HloModule m\nENTRY e {\n ROOT p = f32[99999999999999999999] parameter(0)\n}",
                                  "HloModule m\nENTRY e {\n ROOT a = f32[2] add(b, c)\n}"])
def test_hlo_reader_odd_inputs(text):
    assert run_bounded(_read_hlo, text) in ("read", "error")
