"""Stage viewer pages for the kernels of an HLO fusion (see triton_spirv/viewer.py); the
pages of a whole module: hlo/cli.py, `write_module_pages`."""
from __future__ import annotations


def fusion_pages(runner, instr, fusion, directory: str, only: str = "") -> list[str]:
    """Writes the page of each kernel of `fusion` (compiled with its stages kept) for the
    instruction `instr` of the runner's module; returns their paths."""
    from ..viewer import hlo_kernel_view, write_page
    return [write_page(hlo_kernel_view(runner.module.text, runner.source_path, instr, fusion, kernel),
                       directory)
            for kernel in fusion.kernels if not only or kernel.name == only]
