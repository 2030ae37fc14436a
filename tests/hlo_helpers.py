"""Shared helpers of the HLO frontend tests."""
import os

import numpy as np

HLO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hlo")


def hlo_path(*parts) -> str:
    return os.path.join(HLO_DIR, *parts)


def run_file(path, inputs, **kw):
    from triton_spirv.hlo.reader import read_hlo_file
    from triton_spirv.hlo.runtime import ModuleRunner
    runner = ModuleRunner(read_hlo_file(path))
    return runner, runner.run(inputs, **kw)


def gelu_reference(x):
    x = x.astype(np.float64)
    return x * 0.5 * (1 + np.tanh(0.79785 * (x + 0.044708 * x ** 3)))


def listing(computation) -> list[str]:
    """A computation one line per instruction (`name = shape opcode(operands) attrs`), for
    tests of computations built from Python (custom-call lowerings)."""
    lines = []
    for i in computation.instructions:
        attrs = " ".join(f"{k}={v}" for k, v in i.attrs.items())
        literal = f" {i.literal}" if i.literal else ""
        operands = ", ".join(o.name for o in i.operands)
        lines.append(("ROOT " if i.is_root else "") +
                     f"{i.name} = {i.shape} {i.opcode}({operands}){literal} {attrs}".rstrip())
    return lines
