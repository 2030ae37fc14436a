"""Triton language: tl.rand / randn / randint / randint4x give the numbers of Triton's
own interpreter (TRITON_INTERPRET=1, run in a subprocess) for the same seeds and offsets;
tl.device_print, tl.static_print, tl.device_assert; unsupported ops are compile errors
naming the op, the kernel and the Python line."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import triton
import triton.language as tl

RANDOM_KERNEL = '''
import triton
import triton.language as tl


@triton.jit
def random_kernel(out_f, out_n, out_i, out_4, seed, N: tl.constexpr):
    offs = tl.program_id(0) * N + tl.arange(0, N)
    tl.store(out_f + offs, tl.rand(seed, offs))
    tl.store(out_n + offs, tl.randn(seed, offs))
    tl.store(out_i + offs, tl.randint(seed, offs))
    a, b, c, d = tl.randint4x(seed, offs)
    tl.store(out_4 + 4 * offs, a)
    tl.store(out_4 + 4 * offs + 1, b)
    tl.store(out_4 + 4 * offs + 2, c)
    tl.store(out_4 + 4 * offs + 3, d)
'''

SEEDS = [0, 123, 2**40 + 7]
PROGRAMS, N = 3, 64


def _run(random_kernel, seed):
    total = PROGRAMS * N
    outs = (torch.empty(total), torch.empty(total), torch.empty(total, dtype=torch.int32),
            torch.empty(4 * total, dtype=torch.int32))
    random_kernel[(PROGRAMS,)](*outs, seed, N=N)
    return [o.numpy() for o in outs]


@pytest.fixture(scope="module")
def random_module(tmp_path_factory):
    folder = tmp_path_factory.mktemp("random_kernel")
    (folder / "random_kernel_src.py").write_text(RANDOM_KERNEL)
    sys.path.insert(0, str(folder))
    try:
        import random_kernel_src
    finally:
        sys.path.remove(str(folder))
    return folder, random_kernel_src


@pytest.fixture(scope="module")
def interpreter_numbers(random_module):
    folder, _ = random_module
    script = textwrap.dedent(f"""
        import sys, numpy as np, torch
        sys.path.insert(0, {str(folder)!r})
        from random_kernel_src import random_kernel
        outs = {{}}
        for seed in {SEEDS!r}:
            total = {PROGRAMS} * {N}
            o = (torch.empty(total), torch.empty(total), torch.empty(total, dtype=torch.int32),
                 torch.empty(4 * total, dtype=torch.int32))
            random_kernel[({PROGRAMS},)](*o, seed, N={N})
            for i, t in enumerate(o):
                outs[f"{{seed}}_{{i}}"] = t.numpy()
        np.savez({str(folder / 'ref.npz')!r}, **outs)
    """)
    env = dict(os.environ, TRITON_INTERPRET="1")
    subprocess.run([sys.executable, "-c", script], check=True, env=env, timeout=300)
    data = np.load(folder / "ref.npz")
    return {key: data[key] for key in data.files}


@pytest.mark.parametrize("seed", SEEDS)
def test_random_matches_interpreter(seed, random_module, interpreter_numbers):
    _, src = random_module
    got = _run(src.random_kernel, seed)
    for i, name in enumerate(["rand", "randn", "randint", "randint4x"]):
        want = interpreter_numbers[f"{seed}_{i}"]
        if name == "randn":  # log/cos/sin: libm vs OpenCL builtins may differ in the last ulp
            np.testing.assert_allclose(got[i], want, rtol=1e-5, atol=1e-6, err_msg=name)
        else:
            np.testing.assert_array_equal(got[i], want, err_msg=name)
    rand = got[0]
    assert (rand >= 0).all() and (rand < 1).all()


# ---------------------------------------------------------------------------------------
# Debug ops


def _flush_c_stdout():
    import ctypes
    ctypes.CDLL(None).fflush(None)  # OpenCL printf goes through C stdio


@triton.jit
def print_kernel(x_ptr, N: tl.constexpr, TAG: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.static_print("static_print says", N, TAG)
    tl.device_print("x=", x)
    tl.device_print("pid ", tl.program_id(0))


def test_device_and_static_print(capfd):
    x = torch.tensor([0.5, 1.5, -2.0, 4.0])
    tag = os.getpid() * 1000 + int.from_bytes(os.urandom(2), "little")  # a fresh compile
    print_kernel[(2,)](x, N=4, TAG=tag)
    _flush_c_stdout()
    out = capfd.readouterr().out
    assert f"static_print says 4 {tag}" in out
    # Triton hands the prefix over as " x=: "
    assert "pid (1, 0, 0) idx (2)  x=: -2.000000" in out
    assert "pid (0, 0, 0) idx (3)  x=: 4.000000" in out
    assert "pid (1, 0, 0)  pid: 1" in out


@triton.jit
def assert_kernel(x_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.device_assert(x < 3.0, "x is too big")


def test_device_assert_reports_kernel_and_line(capfd):
    x = torch.tensor([0.5, 7.0, 1.0, 2.0])
    with pytest.raises(AssertionError, match="assert_kernel: test_lang_random_debug.py:.*x is too big"):
        assert_kernel[(1,)](x, N=4, debug=True)
    _flush_c_stdout()
    out = capfd.readouterr().out
    assert "assert_kernel" in out and "test_lang_random_debug.py:" in out
    assert "Assertion `x is too big` failed" in out and "thread: [1]" in out
    assert "thread: [0]" not in out


@triton.jit
def inline_asm_kernel(x_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.int32,
                                  is_pure=True, pack=1)
    tl.store(x_ptr + tl.arange(0, N), y)


def test_unsupported_op_is_a_compile_error_naming_op_kernel_and_line():
    with pytest.raises(Exception) as info:
        inline_asm_kernel[(1,)](torch.zeros(4, dtype=torch.int32), N=4)
    text = str(info.value)
    assert "tt.elementwise_inline_asm" in text
    assert "inline_asm_kernel" in text
    assert "test_lang_random_debug.py:" in text
