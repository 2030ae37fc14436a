"""Generated host code of HLO kernels (dynamic shapes): the checks that run before a
launch, the output shapes and the launch grids, as Python source.

The checks come from the shape-contract generator shared with the Triton frontend
(`triton_spirv.shapes.ShapeContract`): each parameter and output array has its shape
(ints, names, `?k` classes); each symbolic dimension must have one value across all
arrays ("dimension 'K' is not consistent: lhs.shape[1] = 64, rhs.shape[0] = 32"); no
dimension, output extent or launch grid may be zero; every array and output fits the
kernel's 64-bit index (`long` in the OpenCL C) and every grid the launcher's i32
program ids. A failed check raises `ShapeCheckError` before anything runs.
"""
from __future__ import annotations

from triton_spirv.shapes import (GRID_LIMIT, HOST_IMPORTS, Dim, Extent, ShapeContract,
                                 host_namespace)

from .emitters.base import host_product, leaf_shape

INDEX_BITS = 64   # emitter_opencl prints `index` as `long`


def _dims_of(shape) -> tuple[Dim, ...]:
    return tuple(Dim(size=d) if isinstance(d, int) else Dim(symbol=d) for d in shape.dims)


def fusion_contract(name: str, computation, builder, kernels) -> ShapeContract:
    shapes = {}
    for p in builder.params:
        shapes[p.name] = _dims_of(p.shape)
    output_names = []
    extents = []
    why = f"offsets would not fit the kernel's {INDEX_BITS}-bit index width"
    for k, (root, leaf) in enumerate(builder.outputs):
        shape = leaf_shape(root, leaf)
        out = "".join(c if c.isalnum() else "_" for c in f"out{k}_{root.name}")
        output_names.append(out)
        shapes[out] = _dims_of(shape)
    seen = {d.symbol for dims in shapes.values() for d in dims if d.symbol}
    free = tuple(s for s in builder.symbols if s not in seen)
    for k, (root, leaf) in enumerate(builder.outputs):
        shape = leaf_shape(root, leaf)
        if not shape.is_static:
            size = host_product(shape.dims)
            extents.append(Extent(f"output '{output_names[k]}' extent", size.expr, size.text,
                                  2 ** (INDEX_BITS - 1), why))
    for kernel in kernels:
        if kernel.plan.dynamic:
            extents.append(Extent(f"launch grid of kernel '{kernel.name}'", kernel.plan.grid,
                                  kernel.plan.grid_text, GRID_LIMIT + 1,
                                  f"beyond the launcher's limit of {GRID_LIMIT} work-groups"))
    contract = ShapeContract(name, shapes, (), INDEX_BITS, free, tuple(extents),
                             returns_dims=True)
    return contract, [p.name for p in builder.params], output_names


def fusion_host_source(fusion, contract: ShapeContract, builder) -> str:
    lines = [f'"""Host code of fusion \'{fusion.name}\', generated from its shapes; it runs '
             f'before every launch.',
             "",
             "    dims = check(args)    # {parameter or output name: array}; raises ShapeCheckError",
             "    output_shapes(dims)   # the shape of each output",
             "    launch(dims)          # work-groups of each kernel (local size in KERNELS)",
             '"""',
             HOST_IMPORTS,
             "",
             f"SYMBOLS = {list(fusion.symbols)!r}",
             f"PARAMETERS = {fusion.param_names!r}",
             f"OUTPUTS = {fusion.output_names!r}",
             "KERNELS = {" + ", ".join(
                 f"{k.name!r}: {{'local_size': {k.local_size[0]}, 'args': "
                 f"{[r.name for r in k.plan.buffers]!r}}}" for k in fusion.kernels) + "}",
             "", ""]
    lines.append(contract.host_source().rstrip("\n"))
    lines += ["", "", "def output_shapes(dims):",
              f'    """The shape of each output of fusion \'{fusion.name}\'."""']
    shapes = []
    for root, leaf in builder.outputs:
        shape = leaf_shape(root, leaf)
        dims = [str(d) if isinstance(d, int) else f"dims[{d!r}]" for d in shape.dims]
        shapes.append("(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")")
    lines.append("    return [" + ", ".join(shapes) + "]")
    lines += ["", "", "def launch(dims):",
              '    """The grid (number of work-groups) of each kernel."""',
              "    return {" + ", ".join(f"{k.name!r}: {k.plan.grid}" for k in fusion.kernels) + "}"]
    return "\n".join(lines) + "\n"


def attach_host_code(fusion, builder) -> None:
    contract, params, outputs = fusion_contract(fusion.name, fusion.computation, builder,
                                                fusion.kernels)
    fusion.param_names, fusion.output_names = params, outputs
    fusion.host_source = fusion_host_source(fusion, contract, builder)
    namespace = host_namespace()
    exec(compile(fusion.host_source, f"<host code of {fusion.name}>", "exec"), namespace)
    fusion.host = namespace


def entry_contract(module) -> ShapeContract:
    """The checks of the ENTRY parameters, run once before a module runs anything."""
    shapes = {p.name: _dims_of(p.shape) for p in module.entry.parameters}
    return ShapeContract(module.name, shapes, (), INDEX_BITS, returns_dims=True)
