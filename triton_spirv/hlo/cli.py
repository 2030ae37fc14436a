"""`triton-spirv hlo run` and `triton-spirv hlo emit`.

    triton-spirv hlo run module.hlo --inputs in.npz --out out.npz [--report]
    triton-spirv hlo emit module.hlo -o DIR [--stages] [--program auto|spirv|source]

`run` reads the entry parameters from the .npz (by parameter name, else `arg0`,
`arg1`, ... in order) and writes the outputs as `out0`, `out1`, ... (bf16 outputs
widened to float32). `emit` writes one .cl per kernel, the generated host code of each
fusion (`<fusion>.host_checks.py`: shape checks, output shapes and launch grids, run
before every launch; `--host` also prints it) and `report.txt` (per fusion: partitions,
emitter, indexing maps, launch shape); `--stages` also writes each pass's IR
(`<kernel>.<stage>.mlir`). Shapes may use `?` and named dimensions (`f32[M,K]`): one
kernel serves every size.
"""
from __future__ import annotations

import argparse
import os
import sys


def add_hlo_commands(subparsers) -> None:
    hlo = subparsers.add_parser("hlo", help="compile and run HLO modules")
    commands = hlo.add_subparsers(dest="hlo_command", required=True)
    run = commands.add_parser("run", help="run an HLO module on the OpenCL device")
    run.add_argument("module", help="HLO text file")
    run.add_argument("--inputs", help=".npz with one array per entry parameter")
    run.add_argument("--out", help=".npz to write the outputs to")
    run.add_argument("--report", action="store_true", help="print the fusion report")
    _program_option(run)
    run.set_defaults(func=_run_command)
    emit = commands.add_parser("emit", help="write the OpenCL C of every kernel")
    emit.add_argument("module", help="HLO text file")
    emit.add_argument("-o", "--output", required=True, help="output directory")
    emit.add_argument("--stages", action="store_true", help="also write each pass's IR")
    emit.add_argument("--host", action="store_true",
                      help="print the generated host code (shape checks, launch grids)")
    _program_option(emit)
    emit.set_defaults(func=_emit_command)


def _program_option(parser) -> None:
    parser.add_argument("--program", choices=("auto", "spirv", "source"),
                        help="OpenCL C or SPIR-V for the device (default: TRITON_SPIRV_PROGRAM, "
                             "else auto); emit writes <kernel>.spv/.spvasm for SPIR-V kernels")


def _load_inputs(module, path):
    import numpy as np
    params = module.entry.parameters
    if not params:
        return []
    if path is None:
        raise SystemExit(f"error: the entry computation takes {len(params)} parameters; "
                         f"give them with --inputs FILE.npz")
    data = np.load(path)
    inputs = []
    for k, p in enumerate(params):
        for key in (p.name, f"arg{k}", f"arr_{k}"):
            if key in data:
                inputs.append(data[key])
                break
        else:
            raise SystemExit(f"error: {path} has no array for parameter %{p.name} "
                             f"(tried '{p.name}', 'arg{k}', 'arr_{k}')")
    return inputs


def _run_command(args) -> int:
    import numpy as np
    from .reader import read_hlo_file
    from .runtime import ModuleRunner
    module = read_hlo_file(args.module)
    runner = ModuleRunner(module, program=args.program)
    outputs = runner.run(_load_inputs(module, args.inputs))
    if args.report:
        for fusion in runner.fusions.values():
            print(fusion.report)
    if args.out:
        np.savez(args.out, **{f"out{k}": o for k, o in enumerate(outputs)})
    else:
        for k, o in enumerate(outputs):
            print(f"out{k}: {o.dtype}{list(o.shape)}\n{o}")
    return 0


def _emit_command(args) -> int:
    from .reader import read_hlo_file
    from .runtime import ModuleRunner
    module = read_hlo_file(args.module)
    runner = ModuleRunner(module, keep_stages=args.stages, program=args.program)
    fusions = runner.compile_all()
    os.makedirs(args.output, exist_ok=True)
    reports = []
    for fusion in fusions:
        reports.append(str(fusion.report))
        for kernel in fusion.kernels:
            with open(os.path.join(args.output, f"{kernel.name}.cl"), "w") as f:
                f.write(kernel.source)
            if kernel.spirv:
                _write_spirv(args.output, kernel)
            for stage, text in kernel.stages.items():
                with open(os.path.join(args.output, f"{kernel.name}.{stage}.mlir"), "w") as f:
                    f.write(text)
        with open(os.path.join(args.output, f"{fusion.name}.host_checks.py"), "w") as f:
            f.write(fusion.host_source)
        if args.host:
            print(f"# {fusion.name}.host_checks.py\n{fusion.host_source}")
    with open(os.path.join(args.output, "report.txt"), "w") as f:
        f.write("\n\n".join(reports) + "\n")
    print(f"{sum(len(f.kernels) for f in fusions)} kernels of {len(fusions)} fusions "
          f"written to {args.output}")
    return 0


def _write_spirv(directory: str, kernel) -> None:
    """`<kernel>.spv` (the SPIR-V binary) and `<kernel>.spvasm` (its spirv-dialect MLIR)."""
    with open(os.path.join(directory, f"{kernel.name}.spv"), "wb") as f:
        f.write(kernel.spirv)
    with open(os.path.join(directory, f"{kernel.name}.spvasm"), "w") as f:
        f.write(kernel.spvasm)


def write_module_pages(path: str, directory: str, only: str = "") -> list[str]:
    """Compiles every kernel of the HLO module in `path` (or only the kernel named
    `only`) and writes one page per kernel into `directory`; returns their paths."""
    from .reader import read_hlo_file
    from .runtime import ModuleRunner
    from .view import fusion_pages
    runner = ModuleRunner(read_hlo_file(path), keep_stages=True)
    runner.compile_all()
    pages = [page for instr, fusion in runner.fusions.items()
             for page in fusion_pages(runner, instr, fusion, directory, only)]
    if only and not pages:
        names = sorted(k.name for f in runner.fusions.values() for k in f.kernels)
        raise LookupError(f"{path} has no kernel named '{only}'; its kernels: {', '.join(names)}")
    return pages


def main(argv=None) -> int:
    """Stand-alone entry (`python -m triton_spirv.hlo.cli run ...`)."""
    parser = argparse.ArgumentParser(prog="triton-spirv")
    sub = parser.add_subparsers(dest="command", required=True)
    add_hlo_commands(sub)
    args = parser.parse_args(["hlo"] + list(argv if argv is not None else sys.argv[1:]))
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
