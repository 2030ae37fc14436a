"""Stage viewer pages for the kernels of an HLO module (see triton_spirv/viewer.py)."""
from __future__ import annotations


def write_module_pages(path: str, directory: str, only: str = "") -> list[str]:
    """Compiles every kernel of the HLO module in `path` (or only the kernel named
    `only`) and writes one page per kernel into `directory`; returns their paths."""
    from ..viewer import hlo_kernel_view, write_page
    from .reader import read_hlo_file
    from .runtime import ModuleRunner
    module = read_hlo_file(path)
    runner = ModuleRunner(module, keep_stages=True)
    runner.compile_all()
    pages = []
    for instr, fusion in runner.fusions.items():
        for kernel in fusion.kernels:
            if only and kernel.name != only:
                continue
            view = hlo_kernel_view(module.text, runner.source_path, instr, fusion, kernel)
            pages.append(write_page(view, directory))
    if only and not pages:
        names = sorted(k.name for f in runner.fusions.values() for k in f.kernels)
        raise LookupError(f"{path} has no kernel named '{only}'; its kernels: {', '.join(names)}")
    return pages
