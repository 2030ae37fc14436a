"""`triton-spirv`: compile a Triton kernel from a Python file and show or write its stages.

    triton-spirv compile kernels.py add_kernel \
        --signature x_ptr=*fp32,y_ptr=*fp32,out_ptr=*fp32,n=i32 --constexpr BLOCK_SIZE=1024 \
        [--stage cl | --stage all] [-o DIR] [--program auto|spirv|source]

Stages: ttir, linalg, memref, cl (the OpenCL C), spvasm and spv (the SPIR-V module as
spirv-dialect MLIR and as a binary; `--stage spv`/`spvasm` asks for SPIR-V), clbin (the
packed program).

    triton-spirv hlo run module.hlo --inputs in.npz --out out.npz [--report]
    triton-spirv hlo emit module.hlo -o DIR [--stages]

run an HLO module on the OpenCL device, or write one .cl per fusion with a report.

    triton-spirv view kernels.py add_kernel --signature ... --constexpr ... [-o DIR]
    triton-spirv view module.hlo [-o DIR]

write the stage viewer's page of a kernel (of every kernel of an HLO module).

    triton-spirv devices

list every OpenCL platform and device, and which one kernels run on.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys

STAGES = ("ttir", "linalg", "memref", "cl", "spvasm", "spv")
SPIRV_STAGES = ("spvasm", "spv")


class CommandError(Exception):
    pass


def _load_python_file(path: str):
    if not os.path.exists(path):
        raise CommandError(f"no such file: {path}")
    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(module)
    return module


def _parse_pairs(text: str, what: str) -> dict:
    pairs = {}
    for item in filter(None, (t.strip() for t in (text or "").split(","))):
        if "=" not in item:
            raise CommandError(f"{what} entry '{item}' is not NAME=VALUE")
        name, value = item.split("=", 1)
        pairs[name.strip()] = value.strip()
    return pairs


def _constexpr_value(text: str):
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    if text in ("True", "False"):
        return text == "True"
    return text


def compile_kernel(path: str, kernel: str, signature: str, constexprs: str, program: str | None = None):
    """Compiles `kernel` of the Python file `path`; returns Triton's CompiledKernel."""
    import triton
    from triton.compiler.compiler import ASTSource

    module = _load_python_file(path)
    fn = getattr(module, kernel, None)
    # @triton.autotune / @triton.heuristics wrap the @triton.jit function as `.fn`.
    while fn is not None and not isinstance(fn, triton.runtime.JITFunction) and hasattr(fn, "fn"):
        fn = fn.fn
    if fn is None or not hasattr(fn, "arg_names"):
        raise CommandError(f"{path} has no @triton.jit function named '{kernel}'")
    types = _parse_pairs(signature, "--signature")
    consts = {k: _constexpr_value(v) for k, v in _parse_pairs(constexprs, "--constexpr").items()}
    sig = {}
    for name in fn.arg_names:
        if name in consts:
            sig[name] = "constexpr"
        elif name in types:
            sig[name] = types[name]
        else:
            raise CommandError(f"argument '{name}' of '{kernel}' needs a type in --signature "
                               f"or a value in --constexpr")
    unknown = set(types) | set(consts)
    unknown -= set(fn.arg_names)
    if unknown:
        raise CommandError(f"'{kernel}' has no argument(s) {sorted(unknown)}")
    const_paths = {(fn.arg_names.index(k),): v for k, v in consts.items()}
    src = ASTSource(fn, sig, const_paths)
    target = triton.runtime.driver.active.get_current_target()
    return triton.compile(src, target=target, options={"program": program} if program else None)


def parse_shapes(text: str) -> dict:
    """`a_ptr=M,K;b_ptr=K,N` -> {"a_ptr": ("M", "K"), "b_ptr": ("K", "N")}."""
    shapes = {}
    for item in filter(None, (t.strip() for t in (text or "").split(";"))):
        if "=" not in item:
            raise CommandError(f"--shapes entry '{item}' is not NAME=DIM,DIM,...")
        name, dims = item.split("=", 1)
        shapes[name.strip()] = tuple(int(d) if d.strip().isdigit() else d.strip()
                                     for d in dims.split(","))
    return shapes


def host_checks_source(path: str, kernel: str, shapes_text: str) -> str:
    from .shapes import ShapeContract, ShapeContractError
    fn = getattr(_load_python_file(path), kernel)
    try:
        return ShapeContract.make(kernel, list(fn.arg_names), parse_shapes(shapes_text)).host_source()
    except ShapeContractError as err:
        raise CommandError(str(err)) from None


def stage_content(compiled, ext: str):
    """A stage of a compiled kernel: text, or bytes for `spv` (kept in the clbin: Triton
    reads every stage file but the last as text)."""
    if ext == "spv":
        from launcher import unpack_clbin
        return unpack_clbin(compiled.asm["clbin"])["spirv"]
    return compiled.asm[ext]


def cmd_compile(args) -> int:
    program = args.program or ("spirv" if args.stage in SPIRV_STAGES else None)
    compiled = compile_kernel(args.file, args.kernel, args.signature, args.constexpr, program)
    if args.stage == "all":
        stages = tuple(ext for ext in STAGES if ext not in SPIRV_STAGES or stage_content(compiled, "spv"))
    else:
        stages = (args.stage,)
    if args.shapes:
        checks = host_checks_source(args.file, args.kernel, args.shapes)
        if args.output:
            path = os.path.join(args.output, f"{compiled.name}.host_checks.py")
            os.makedirs(args.output, exist_ok=True)
            with open(path, "w") as f:
                f.write(checks)
            print(path)
        else:
            print("# ===== host checks =====")
            print(checks)
    if args.output:
        os.makedirs(args.output, exist_ok=True)
        for ext in stages:
            path = os.path.join(args.output, f"{compiled.name}.{ext}")
            content = stage_content(compiled, ext)
            with open(path, "wb" if isinstance(content, bytes) else "w") as f:
                f.write(content)
            print(path)
        return 0
    for ext in stages:
        if ext == "spv" and len(stages) > 1:
            continue    # binary: with -o, or alone (`--stage spv > kernel.spv`)
        if len(stages) > 1:
            print(f"// ===== {ext} =====")
        content = stage_content(compiled, ext)
        if isinstance(content, bytes):
            sys.stdout.flush()
            sys.stdout.buffer.write(content)
        else:
            print(content)
    return 0


def cmd_view(args) -> int:
    from .viewer import triton_kernel_view, write_page
    if args.file.endswith(".hlo"):
        from .hlo.cli import write_module_pages
        if not os.path.exists(args.file):
            raise CommandError(f"no such file: {args.file}")
        try:
            paths = write_module_pages(args.file, args.output, only=args.kernel)
        except LookupError as err:
            raise CommandError(str(err)) from None
    else:
        if not args.kernel:
            raise CommandError("give the name of the @triton.jit function to view")
        compiled = compile_kernel(args.file, args.kernel, args.signature, args.constexpr)
        texts = {ext: compiled.asm[ext] for ext in compiled.asm.keys()}
        paths = [write_page(triton_kernel_view(texts, compiled.metadata._asdict()), args.output)]
    for path in paths:
        print(path)
    return 0


def cmd_devices(args) -> int:
    from launcher.devices_report import devices_report
    print(devices_report())
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="triton-spirv", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compile", help="compile a @triton.jit kernel and print/write its stages")
    c.add_argument("file", help="Python file defining the kernel")
    c.add_argument("kernel", help="name of the @triton.jit function")
    c.add_argument("--signature", default="", help="NAME=TYPE,... e.g. x_ptr=*fp32,n=i32")
    c.add_argument("--constexpr", default="", help="NAME=VALUE,... e.g. BLOCK_SIZE=1024")
    c.add_argument("--stage", default="cl", choices=STAGES + ("all",))
    c.add_argument("--program", choices=("auto", "spirv", "source"),
                   help="how the device gets the kernel (default: TRITON_SPIRV_PROGRAM, else auto)")
    c.add_argument("--shapes", default="", help="shape contract whose generated host checks "
                   "are printed too, e.g. 'a_ptr=M,K;b_ptr=K,N'")
    c.add_argument("-o", "--output", help="write the stages into this directory")
    c.set_defaults(run=cmd_compile)
    v = sub.add_parser("view", help="write the stage viewer's HTML page of a kernel")
    v.add_argument("file", help="Python file defining the kernel, or an HLO module (.hlo)")
    v.add_argument("kernel", nargs="?", default="",
                   help="name of the @triton.jit function (HLO: only this kernel)")
    v.add_argument("--signature", default="", help="NAME=TYPE,... e.g. x_ptr=*fp32,n=i32")
    v.add_argument("--constexpr", default="", help="NAME=VALUE,... e.g. BLOCK_SIZE=1024")
    v.add_argument("-o", "--output", default="view", help="directory for the pages (default: view)")
    v.set_defaults(run=cmd_view)
    d = sub.add_parser("devices", help="list the OpenCL devices and which one is used")
    d.set_defaults(run=cmd_devices)
    from .hlo.cli import add_hlo_commands
    add_hlo_commands(sub)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    run = getattr(args, "run", None) or args.func
    try:
        return run(args) or 0
    except CommandError as err:
        print(f"triton-spirv: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
