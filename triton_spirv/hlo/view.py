"""Stage viewer pages for the kernels of an HLO module (see triton_spirv/viewer.py)."""
from __future__ import annotations


def fusion_pages(runner, instr, fusion, directory: str, only: str = "") -> list[str]:
    """Writes the page of each kernel of `fusion` (compiled with its stages kept) for the
    instruction `instr` of the runner's module; returns their paths."""
    from ..viewer import hlo_kernel_view, write_page
    return [write_page(hlo_kernel_view(runner.module.text, runner.source_path, instr, fusion, kernel),
                       directory)
            for kernel in fusion.kernels if not only or kernel.name == only]


def write_module_pages(path: str, directory: str, only: str = "") -> list[str]:
    """Compiles every kernel of the HLO module in `path` (or only the kernel named
    `only`) and writes one page per kernel into `directory`; returns their paths."""
    from .reader import read_hlo_file
    from .runtime import ModuleRunner
    runner = ModuleRunner(read_hlo_file(path), keep_stages=True)
    runner.compile_all()
    pages = [page for instr, fusion in runner.fusions.items()
             for page in fusion_pages(runner, instr, fusion, directory, only)]
    if only and not pages:
        names = sorted(k.name for f in runner.fusions.values() for k in f.kernels)
        raise LookupError(f"{path} has no kernel named '{only}'; its kernels: {', '.join(names)}")
    return pages
