"""The HLO frontend runs without Triton, and the backend's entry modules still load
first: each check runs in a fresh interpreter, where nothing was imported before."""

import os
import subprocess
import sys
import textwrap

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_python(code):
    env = dict(os.environ, PYTHONPATH=REPO_ROOT)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=env, cwd=REPO_ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_importing_the_hlo_frontend_does_not_import_triton():
    out = run_python("""
        import sys, triton_spirv.hlo
        print(sorted(m for m in sys.modules if m.split(".")[0] == "triton"))
    """)
    assert out.strip() == "[]"


def test_running_an_hlo_module_does_not_import_triton():
    out = run_python("""
        import sys
        import numpy as np
        from triton_spirv.hlo import run_hlo
        text = '''HloModule m
        ENTRY main {
          a = f32[300] parameter(0)
          b = f32[300] parameter(1)
          m = f32[300] multiply(a, b)
          ROOT s = f32[300] add(m, a)
        }'''
        a, b = np.linspace(-3, 3, 300, dtype=np.float32), np.linspace(1, 2, 300, dtype=np.float32)
        (out,) = run_hlo(text, [a, b])
        np.testing.assert_allclose(out, a * b + a, rtol=1e-6)
        print(sorted(m for m in sys.modules if m.split(".")[0] == "triton"))
    """)
    assert out.strip() == "[]"


def test_the_backend_modules_imported_before_triton_are_the_ones_triton_registers():
    out = run_python("""
        import sys
        import triton_spirv.compiler as compiler
        import triton_spirv.driver as driver
        from triton.backends import backends
        opencl = backends["opencl"]
        print(opencl.compiler is compiler.OpenCLBackend, opencl.driver is driver.OpenCLDriver,
              compiler.__spec__.origin == compiler.__file__)
    """)
    assert out.split() == ["True", "True", "True"]


def test_the_launcher_and_the_kernel_abi_import_no_frontend():
    out = run_python("""
        import sys
        import launcher, launcher.asserts, launcher.bounds, launcher.kernels, opencl_abi
        print(sorted({m.split(".")[0] for m in sys.modules}
                     & {"triton", "triton_spirv", "emitter_opencl", "mlir", "torch"}))
    """)
    assert out.strip() == "[]"
