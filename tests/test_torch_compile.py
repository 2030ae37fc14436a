"""torch.compile with Inductor's Triton path for CPU tensors, on the active OpenCL device.

Inductor (`torch._inductor.config.cpu_backend = "triton"`) finds the backend as
`triton.backends.backends["cpu"]` (triton_spirv/inductor/) and compiles the Triton
kernels it writes for `GPUTarget("cpu", ...)`, in its compile workers or in-process.
Each model of the zoo below runs compiled and eager on the same inputs; the results
must agree within the tolerances stated per case (float32 unless said otherwise).
"""
from __future__ import annotations

import contextlib
import math
import os
import tomllib

import pytest
import torch
import torch._dynamo
import torch._inductor.config as inductor_config
import torch.nn as nn
import torch.nn.functional as F

import triton.backends
from triton.backends.compiler import GPUTarget
from triton.compiler.compiler import make_backend
from triton.runtime import driver

from triton_spirv.compiler import OpenCLBackend
from triton_spirv.driver import OpenCLDriver
from triton_spirv.inductor.compiler import InductorCPUBackend
from triton_spirv.inductor.driver import InductorCPUDriver

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REINSTALL = ("the installed triton-spirv lacks the `cpu` entry point of pyproject.toml: "
             "reinstall it (pip install -e <checkout> --no-deps)")


def _cpu_backend_installed() -> bool:
    backend = triton.backends.backends.get("cpu")
    return backend is not None and backend.compiler is InductorCPUBackend


@contextlib.contextmanager
def triton_on_cpu(**settings):
    """Inductor writes Triton for CPU tensors; a fresh Dynamo state before and after.

    Inductor's own caches are off: with them, a graph or an autotuning choice cached by
    an earlier run (on another device, say) would skip compiling some of the kernels
    and configs this run should compile. Triton's cache still serves compiled kernels
    (its keys name the device)."""
    if not _cpu_backend_installed():
        pytest.fail(REINSTALL)
    torch._dynamo.reset()
    settings.setdefault("compile_threads", 1)
    settings.setdefault("force_disable_caches", True)
    try:
        with inductor_config.patch(cpu_backend="triton", **settings):
            yield
    finally:
        torch._dynamo.reset()


def _compare(fn, *args, atol=1e-5, rtol=1e-5, equal_nan=False, **compile_kwargs):
    """Runs fn compiled and eager on the same inputs; returns the compiled result."""
    expected = fn(*args)
    with triton_on_cpu():
        got = torch.compile(fn, **compile_kwargs)(*args)
    torch.testing.assert_close(got, expected, atol=atol, rtol=rtol, equal_nan=equal_nan)
    return got


# ---------------------------------------------------------------------------------------
# Registration: the names Triton and Inductor look up


def test_pyproject_declares_the_cpu_entry_point():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        entry_points = tomllib.load(f)["project"]["entry-points"]["triton.backends"]
    assert entry_points == {"opencl": "triton_spirv", "cpu": "triton_spirv.inductor"}


def test_discovery_finds_one_active_driver_and_the_cpu_name():
    assert _cpu_backend_installed(), REINSTALL
    backends = triton.backends.backends
    assert backends["opencl"].compiler is OpenCLBackend
    assert backends["cpu"].driver is InductorCPUDriver
    active = [name for name, backend in backends.items() if backend.driver.is_active()]
    assert active == ["opencl"]
    assert isinstance(driver.default, OpenCLDriver)


def test_each_target_has_one_compiler():
    assert _cpu_backend_installed(), REINSTALL
    opencl_target = driver.default.get_current_target()
    assert type(make_backend(opencl_target)) is OpenCLBackend
    # What Inductor passes for CPU tensors: no arch, its default warp size.
    cpu = make_backend(GPUTarget("cpu", "", 32))
    assert type(cpu) is InductorCPUBackend
    # The device's arch and warp size, so the cache key names the device.
    assert (cpu.target.arch, cpu.target.warp_size) == (opencl_target.arch, opencl_target.warp_size)
    assert cpu.hash() == make_backend(opencl_target).hash()


def test_inductor_sees_triton_for_cpu():
    from torch._dynamo.device_interface import get_interface_for_device
    from torch._inductor.runtime import triton_helpers

    assert _cpu_backend_installed(), REINSTALL
    get_interface_for_device("cpu").raise_if_triton_unavailable()
    triton_helpers.set_driver_to_cpu()
    try:
        assert isinstance(driver.active, InductorCPUDriver)
        assert triton_helpers.get_backend_options()["backend_name"] == "opencl"
    finally:
        driver.reset_active()


# ---------------------------------------------------------------------------------------
# The issue's example, in-process and in Inductor's compile workers


def _issue_example(x, y):
    return F.gelu(x @ y + 1).softmax(-1).sum(-1)


def test_issue_example_in_process():
    torch.manual_seed(0)
    _compare(_issue_example, torch.randn(64, 128), torch.randn(128, 96), atol=1e-4, rtol=1e-4)


def test_parallel_compile_workers(monkeypatch):
    """The default compile_threads (> 1): kernels compile in Inductor's worker
    subprocesses, which import Triton afresh and find the `cpu` backend there."""
    from torch._inductor.async_compile import AsyncCompile

    torch.manual_seed(0)
    x, y = torch.randn(48, 80), torch.randn(80, 40)
    expected = _issue_example(x, y)
    with triton_on_cpu(compile_threads=2):
        # The pool starts on first use; until it is up, Inductor compiles in-process.
        if not AsyncCompile.use_process_pool():
            AsyncCompile._ready_future.result(timeout=300)
        assert AsyncCompile.use_process_pool()
        pool = AsyncCompile.process_pool()
        submitted = []
        original_submit = pool.submit

        def counting_submit(job, *args, **kwargs):
            submitted.append(getattr(job, "__name__", str(job)))
            return original_submit(job, *args, **kwargs)

        monkeypatch.setattr(pool, "submit", counting_submit)
        # A function of its own, so that no kernel comes from an earlier compile.
        got = torch.compile(lambda a, b: _issue_example(a, b) * 2 - 1)(x, y)
    torch.testing.assert_close(got, expected * 2 - 1, atol=1e-4, rtol=1e-4)
    assert "_worker_compile_triton" in submitted


# ---------------------------------------------------------------------------------------
# The model zoo


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.norm = nn.LayerNorm(64)
        self.fc2 = nn.Linear(64, 16)

    def forward(self, x):
        return self.fc2(F.gelu(self.norm(self.fc1(x))))


def test_mlp_with_layer_norm():
    torch.manual_seed(0)
    model = MLP().eval()
    with torch.no_grad():
        _compare(model, torch.randn(24, 32), atol=1e-5, rtol=1e-4)


def _rotary(x, cos, sin):
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


class RotaryAttention(nn.Module):
    def __init__(self, dim=32, heads=2):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        batch, seq, dim = x.shape
        q, k, v = self.qkv(x).view(batch, seq, 3, self.heads, self.head_dim).unbind(2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        positions = torch.arange(seq, dtype=torch.float32)
        inv_freq = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2, dtype=torch.float32) / self.head_dim))
        angles = torch.outer(positions, inv_freq).repeat(1, 2)
        q, k = _rotary(q, angles.cos(), angles.sin()), _rotary(k, angles.cos(), angles.sin())
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)
        causal = torch.ones(seq, seq, dtype=torch.bool).triu(1)
        scores = scores.masked_fill(causal, float("-inf"))
        attended = scores.softmax(-1) @ v
        return self.out(attended.transpose(1, 2).reshape(batch, seq, dim))


def test_attention_with_rotary_embedding_and_causal_mask():
    torch.manual_seed(0)
    model = RotaryAttention().eval()
    with torch.no_grad():
        _compare(model, torch.randn(2, 12, 32), atol=1e-5, rtol=1e-4)


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        return self.fc(x.flatten(1))


def test_conv_net_with_batch_norm_in_eval():
    torch.manual_seed(0)
    model = ConvNet()
    for bn in (model.bn1, model.bn2):  # statistics other than the initial 0 and 1
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
    model.eval()
    with torch.no_grad():
        _compare(model, torch.randn(2, 3, 16, 16), atol=1e-4, rtol=1e-4)


def _statistics(x):
    var, mean = torch.var_mean(x, dim=1, correction=1)
    return var, mean, torch.logsumexp(x, dim=-1), x.argmax(dim=1), x.argmin(dim=0), x.amax(dim=0)


def test_var_mean_logsumexp_argmax():
    torch.manual_seed(0)
    _compare(_statistics, torch.randn(33, 70), atol=1e-5, rtol=1e-5)


def _arg_extremes(x):
    values, indices = torch.max(x, dim=1)
    return x.argmax(dim=1), x.argmin(dim=1), values, indices, x.argmax(dim=0)


def test_argmax_argmin_with_nans():
    """torch's argmax/argmin take a NaN as the extreme (the first NaN's index), and so
    does the combine Inductor writes (triton_helpers.maximum_with_index tests `a != a`):
    its NaNs must not be skipped as Triton's own tl.argmax's are."""
    torch.manual_seed(0)
    x = torch.randn(40, 300)
    x[3, 100] = x[5, 0] = x[9, 200] = x[9, 250] = x[11, 299] = float("nan")
    x[7, :] = float("nan")
    x[20:, 17] = float("nan")
    _compare(_arg_extremes, x, equal_nan=True)


def _scans(x):
    return x.cumsum(-1), (x * 0.1 + 1).cumprod(0), torch.logcumsumexp(x, -1), x.int().cumsum(-1)


def test_scans():
    torch.manual_seed(0)
    _compare(_scans, torch.randn(9, 37), atol=1e-4, rtol=1e-4)


def _indexing(src, index, values, rows):
    gathered = torch.gather(src, 1, index)
    scattered = torch.zeros(src.shape[0], 16).scatter_add(1, index, values)
    put = src.clone().index_put((rows,), values[:, :1].expand(-1, src.shape[1])[: rows.numel()], accumulate=True)
    return gathered, scattered, put


def test_gather_scatter_index_put():
    torch.manual_seed(0)
    src = torch.randn(10, 16)
    index = torch.randint(0, 16, (10, 5))
    values = torch.randn(10, 5)
    rows = torch.tensor([1, 3, 3, 7, 0, 1])  # repeated rows accumulate
    _compare(_indexing, src, index, values, rows, atol=1e-5, rtol=1e-5)


def _half_math(x, y):
    h = (x.half() * y.half() + 1).relu()
    b = (x.bfloat16() - y.bfloat16()).sigmoid()
    return h, b, (h.float() + b.float()).sum(-1)


def test_fp16_and_bf16_casts():
    torch.manual_seed(0)
    x, y = torch.randn(20, 24), torch.randn(20, 24)
    # bf16 keeps 8 bits of mantissa: one rounding step of a value near 1 is 2**-8.
    _compare(_half_math, x, y, atol=1e-2, rtol=1e-2)


def _integer_math(a, b):
    return (a // b, a % b, torch.bitwise_xor(a, b) << 2, (a >> 1) & 0xFF, a * b - 7,
            torch.where(a > b, a, b).to(torch.int64).sum(-1), (a.to(torch.int8) + 100).to(torch.int32))


def test_integer_math():
    torch.manual_seed(0)
    a = torch.randint(-1000, 1000, (16, 24), dtype=torch.int32)
    b = torch.randint(1, 50, (16, 24), dtype=torch.int32) * torch.where(torch.rand(16, 24) > 0.5, 1, -1).int()
    _compare(_integer_math, a, b, atol=0, rtol=0)


class EmbeddingClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(50, 16)
        self.head = nn.Linear(16, 11)

    def forward(self, tokens, targets):
        logits = self.head(self.embedding(tokens).relu())
        return F.cross_entropy(logits.view(-1, 11), targets.view(-1), ignore_index=-100)


def test_embedding_and_cross_entropy_with_ignored_rows():
    torch.manual_seed(0)
    model = EmbeddingClassifier().eval()
    tokens = torch.randint(0, 50, (4, 7))
    targets = torch.randint(0, 11, (4, 7))
    targets[0, 2] = targets[3, :4] = -100
    with torch.no_grad():
        _compare(model, tokens, targets, atol=1e-5, rtol=1e-5)


def test_training_step_forward_and_backward():
    torch.manual_seed(0)
    eager = MLP()
    compiled = MLP()
    compiled.load_state_dict(eager.state_dict())
    x, target = torch.randn(16, 32), torch.randn(16, 16)
    expected = list(_steps(eager, eager, x, target, 2))
    with triton_on_cpu():
        got = list(_steps(torch.compile(compiled), compiled, x, target, 2))
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)
    for (name, p_eager), p_compiled in zip(eager.named_parameters(), compiled.parameters()):
        torch.testing.assert_close(p_compiled, p_eager, atol=1e-5, rtol=1e-5, msg=name)


def _steps(forward, model, x, target, count, learning_rate=0.1):
    """SGD steps through `forward` (compiled: the backward is the one AOTAutograd writes
    for it); the parameter updates run eagerly."""
    for _ in range(count):
        model.zero_grad()
        loss = F.mse_loss(forward(x), target)
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= learning_rate * p.grad
        yield loss.detach()


def _dynamic(x, w):
    return (F.silu(x @ w) * x[:, :1]).softmax(-1).sum(0)


def test_dynamic_shapes_at_two_sizes():
    torch.manual_seed(0)
    w = torch.randn(24, 24)
    with triton_on_cpu():
        compiled = torch.compile(_dynamic, dynamic=True)
        for rows in (7, 29):
            x = torch.randn(rows, 24)
            torch.testing.assert_close(compiled(x, w), _dynamic(x, w), atol=1e-4, rtol=1e-4)
