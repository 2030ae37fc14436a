"""Compiled models: torch.compile through our backend next to Inductor's C++ backend and
eager, in one run.

Each case is a model step compiled twice by Inductor, once with
`torch._inductor.config.cpu_backend = "triton"` (Inductor writes Triton kernels, which
this backend compiles for the active OpenCL device) and once with `cpu_backend = "cpp"`
(Inductor's own C++ kernels), and run eager. Both compiled results are checked against
eager before anything is timed. Reported per case: the median step time of each, and the
compile time of each backend: the first call of the compiled step minus one steady step,
with Inductor's and Triton's caches cold (fresh, empty cache directories and a fresh
Dynamo state). A warm-up compile of a small function under each backend first pays what
any first compile in a process pays once (imports, the OpenCL device, the C++ compiler's
probe), so the figures are those of a new model in a process that has compiled before.
Kernels compile in-process (`compile_threads = 1`) for both backends.

    gelu_layer_norm     gelu(layer_norm(x)) * 2, x 4096x1024
    softmax_scaled      softmax(x * 0.5, -1), x 4096x1024
    argmax_rows         x.argmax(-1), x 4096x1024
    transformer_block   pre-norm attention + MLP block, forward
    mlp_train_step      an MLP's forward, loss and backward (the gradients)
    sum_of_squares      (x * x).sum(-1), x 256x20000: a looped reduction

`quick=True` takes small sizes (a smoke run, tests/test_compiled_model_benchmarks.py).
"""
from __future__ import annotations

import contextlib
import functools
import math
import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from typing import Callable

import torch
import torch._dynamo
import torch._inductor.config as inductor_config
import torch.nn as nn
import torch.nn.functional as F

BACKENDS = ("triton", "cpp")  # ours (Inductor's Triton for CPU tensors), Inductor's C++


# ---------------------------------------------------------------------------------------
# Models


def gelu_layer_norm(x, weight, bias):
    return F.gelu(F.layer_norm(x, x.shape[-1:], weight, bias)) * 2


def softmax_scaled(x):
    return torch.softmax(x * 0.5, -1)


def argmax_rows(x):
    return x.argmax(-1)


def sum_of_squares_rows(x):
    return (x * x).sum(-1)


class TransformerBlock(nn.Module):
    """Pre-norm block: causal multi-head self-attention, then a GELU MLP."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.up, self.down = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x):
        batch, seq, dim = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(batch, seq, 3, self.heads, dim // self.heads) \
            .permute(2, 0, 3, 1, 4).unbind(0)
        scores = q @ k.transpose(-2, -1) / math.sqrt(dim // self.heads)
        causal = torch.ones(seq, seq, dtype=torch.bool, device=x.device).triu(1)
        attention = torch.softmax(scores.masked_fill(causal, float("-inf")), -1) @ v
        x = x + self.proj(attention.transpose(1, 2).reshape(batch, seq, dim))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class MLP(nn.Module):
    def __init__(self, features: int, hidden: int, classes: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(features, hidden), nn.LayerNorm(hidden), nn.GELU(),
                                 nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, classes))

    def forward(self, x):
        return self.net(x)


def training_step(model: nn.Module, forward: Callable, x, labels):
    """Forward, cross-entropy loss and backward; returns the loss and the gradients
    (fresh each step: the model's are cleared first)."""
    model.zero_grad(set_to_none=True)
    loss = F.cross_entropy(forward(x), labels)
    loss.backward()
    return [loss.detach()] + [p.grad for p in model.parameters()]


# ---------------------------------------------------------------------------------------
# Cases: (name, eager step, step built from a compiled callable, tolerance)


@dataclass
class ModelCase:
    name: str
    eager: Callable[[], object]                       # one eager step
    compiled: Callable[[Callable], Callable[[], object]]  # torch.compile -> one compiled step
    atol: float = 1e-4
    rtol: float = 1e-4


def _elementwise_cases(quick: bool) -> list[ModelCase]:
    rows, cols = (256, 256) if quick else (4096, 1024)
    torch.manual_seed(0)
    x, weight, bias = torch.randn(rows, cols), torch.rand(cols), torch.rand(cols)
    y = torch.randn(rows, cols)
    return [
        ModelCase(f"gelu(layer_norm(x))*2 {rows}x{cols}", lambda: gelu_layer_norm(x, weight, bias),
                  lambda compile: functools.partial(compile(gelu_layer_norm), x, weight, bias)),
        ModelCase(f"softmax(x*0.5) {rows}x{cols}", lambda: softmax_scaled(y),
                  lambda compile: functools.partial(compile(softmax_scaled), y), 1e-5, 1e-4),
        ModelCase(f"argmax(x, -1) {rows}x{cols}", lambda: argmax_rows(y),
                  lambda compile: functools.partial(compile(argmax_rows), y), 0, 0),
    ]


def _transformer_case(quick: bool) -> ModelCase:
    batch, seq, dim, heads = (2, 32, 64, 2) if quick else (8, 256, 512, 8)
    torch.manual_seed(0)
    block = TransformerBlock(dim, heads).eval()
    x = torch.randn(batch, seq, dim)

    def compiled(compile):
        fn = compile(block)
        return lambda: fn(x)

    return ModelCase(f"transformer block {batch}x{seq}x{dim}", torch.no_grad()(lambda: block(x)),
                     lambda compile: torch.no_grad()(compiled(compile)), 1e-4, 1e-4)


def _mlp_case(quick: bool) -> ModelCase:
    rows, features, hidden, classes = (64, 64, 128, 10) if quick else (1024, 1024, 2048, 1000)
    torch.manual_seed(0)
    model = MLP(features, hidden, classes)
    x, labels = torch.randn(rows, features), torch.randint(0, classes, (rows,))

    def compiled(compile):
        fn = compile(model)
        return lambda: training_step(model, fn, x, labels)

    return ModelCase(f"MLP train step {rows}x{features}->{hidden}", lambda: training_step(model, model, x, labels),
                     compiled, 1e-4, 1e-3)


def _looped_reduction_case(quick: bool) -> ModelCase:
    """Rows too long for one block: Inductor writes a looped reduction (`r0_offset`
    blocks, a `tl.where` accumulator masked by the block's column indices)."""
    rows, cols = (16, 5000) if quick else (256, 20000)
    torch.manual_seed(0)
    x = torch.randn(rows, cols)
    return ModelCase(f"sum(x*x, -1) {rows}x{cols}", lambda: sum_of_squares_rows(x),
                     lambda compile: functools.partial(compile(sum_of_squares_rows), x), 1e-3, 1e-4)


def model_cases(quick: bool = False) -> list[ModelCase]:
    return _elementwise_cases(quick) + [_transformer_case(quick), _mlp_case(quick),
                                        _looped_reduction_case(quick)]


# ---------------------------------------------------------------------------------------
# Timing


@contextlib.contextmanager
def inductor_backend(backend: str, cold: bool = True):
    """Inductor with `cpu_backend = backend` and, when `cold`, empty cache directories
    of its own and Triton's (set for the span, removed after), in a fresh Dynamo state."""
    saved = {key: os.environ.get(key) for key in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")}
    with contextlib.ExitStack() as stack:
        if cold:
            for key in saved:
                os.environ[key] = stack.enter_context(tempfile.TemporaryDirectory(prefix=f"{backend}-"))
        torch._dynamo.reset()
        try:
            with inductor_config.patch(cpu_backend=backend, compile_threads=1):
                yield
        finally:
            torch._dynamo.reset()
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


def step_ms(step: Callable, seconds: float = 1.0, least: int = 5) -> float:
    """Median milliseconds of `step` over repeated calls (about `seconds` in all)."""
    step()
    times: list[float] = []
    deadline = time.perf_counter() + seconds
    while len(times) < least or time.perf_counter() < deadline:
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def _flat(result) -> list[torch.Tensor]:
    return list(result) if isinstance(result, (list, tuple)) else [result]


def check_close(got, expected, what: str, atol: float, rtol: float) -> None:
    """Raises AssertionError naming `what` when a compiled result differs from eager's."""
    got, expected = _flat(got), _flat(expected)
    if len(got) != len(expected):
        raise AssertionError(f"{what}: {len(got)} results, eager gives {len(expected)}")
    for index, (a, b) in enumerate(zip(got, expected)):
        try:
            torch.testing.assert_close(a, b, atol=atol, rtol=rtol)
        except AssertionError as err:
            raise AssertionError(f"{what}: result {index} differs from eager: "
                                 f"{str(err).splitlines()[0]}") from None


def warm_up() -> None:
    """One small compile under each backend: the once-per-process costs (see the module
    docstring) are paid before any case is timed."""
    x = torch.randn(8, 8)
    for backend in BACKENDS:
        with inductor_backend(backend):
            torch.compile(lambda t: torch.relu(t) + 1)(x)


def measure(case: ModelCase, seconds: float = 1.0) -> dict:
    """Checks each backend's result against eager, then times the steps and compiles."""
    expected = case.eager()
    result = {"case": case.name, "step_ms": {}, "compile_s": {}}
    for backend in BACKENDS:
        with inductor_backend(backend):
            step = case.compiled(torch.compile)
            start = time.perf_counter()
            got = step()
            first = time.perf_counter() - start
            check_close(got, expected, f"{case.name} ({backend})", case.atol, case.rtol)
            result["step_ms"][backend] = step_ms(step, seconds)
            result["compile_s"][backend] = max(0.0, first - result["step_ms"][backend] * 1e-3)
    result["step_ms"]["eager"] = step_ms(case.eager, seconds)
    return result


_warmed_up = False


def run_case(index: int, quick: bool = False) -> dict:
    """Case `index` of model_cases, measured (after the process's warm-up)."""
    global _warmed_up
    if not _warmed_up:
        warm_up()
        _warmed_up = True
    return measure(model_cases(quick)[index], 0.3 if quick else 1.0)


# ---------------------------------------------------------------------------------------
# The suite's row format (run.py): ours is the Triton backend


def as_row(measured: dict) -> dict:
    ours = measured["step_ms"]["triton"]
    peers = {"inductor cpp": measured["step_ms"]["cpp"], "eager": measured["step_ms"]["eager"]}
    return {"case": measured["case"], "unit": "steps/s", "ours": {"ms": ours, "rate": 1e3 / ours},
            "peers": {name: {"ms": ms, "rate": 1e3 / ms} for name, ms in peers.items()},
            "compile_s": dict(measured["compile_s"])}


def _suite_case(index: int):
    def case(quick=False):
        return as_row(run_case(index, quick))
    return case


# run.py's cases, in model_cases' order.
CASES = {name: _suite_case(index) for index, name in enumerate(
    ("compiled_gelu_layer_norm", "compiled_softmax", "compiled_argmax",
     "compiled_transformer_block", "compiled_mlp_train_step", "compiled_sum_of_squares"))}
