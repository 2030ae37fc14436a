"""What every emitter shares: one MLIR module per kernel, its subgraph functions, the
kernel (entry) function with its buffers, and the report of what was chosen.

A kernel's arguments are `memref<?xT>` buffers, in this order: the fusion parameters,
the fusion's array constants (XLA keeps those in buffers too), then the outputs. In the
entry function each buffer becomes a static 1-D tensor (`bufferization.to_tensor` of a
`memref.reinterpret_cast`); parameters are reshaped to their HLO shape for the subgraph
functions, whose signature is the seed's:

    (%p0: tensor<...>, ..., %pn: tensor<...>, %i0: index, ..., %i_r-1: index) -> (e0, ..., e_m)

The flatten pass later turns every N-d access back into a 1-D one.

Dynamic shapes: every symbolic dimension of the fusion (`M`, `?1`, ...) is one more
kernel argument, an `index` scalar after the buffers (`d_M`, `d_1`), and one more
`index` argument of every subgraph function (after the tensors), so that loop bounds and
index arithmetic read it. Buffers with dynamic dimensions are used as they come
(`memref<?xT>` -> `tensor<?xT>`, expanded to `tensor<?x512x?xT>` with the dimension
arguments); `Elemental.dim(d)` / `dim_value(tensors, d)` give a dimension as an index
value either way. Launch grids that depend on dimensions are Python expressions over
`dims`, evaluated on the host (compile.py writes them into the fusion's host code).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

from mlir import ir
from mlir.dialects import affine, arith, bufferization, func, gpu, memref, tensor

from ...ir_helpers import named
from ..elemental import DimKey, Elemental, dim_value
from ..mlir_types import compute_type, const_index, storage_type, tensor_type
from ..errors import HloUnsupportedError
from ..partitioner import Partition, Subgraph, partition
from ..target import EmitTarget


@dataclass
class BufferRef:
    """Which array a kernel argument is: ("param", k), ("const", instr), ("output", k),
    or ("dim", symbol) for the index scalar that carries a dynamic dimension."""
    kind: str
    key: object
    element: object            # ElementType
    name: str


@dataclass
class KernelPlan:
    name: str
    module: ir.Module
    buffers: list[BufferRef]
    grid: object               # int, or a Python expression over `dims` (dynamic shapes)
    local_size: int
    emitter: str
    description: str = ""
    grid_text: str = ""        # how messages show a dynamic grid ("cdiv(B*512*D, 512)")

    @property
    def dynamic(self) -> bool:
        return not isinstance(self.grid, int)


@dataclass
class FusionReport:
    fusion: str
    emitter: str
    hero: str
    launch: list[str] = field(default_factory=list)
    maps: list[str] = field(default_factory=list)
    partition: str = ""

    def __str__(self) -> str:
        lines = [f"fusion {self.fusion}: emitter={self.emitter} hero={self.hero}"]
        lines += [f"  launch: {l}" for l in self.launch]
        lines += [f"  indexing: {m}" for m in self.maps]
        lines += ["  " + l for l in self.partition.splitlines()]
        return "\n".join(lines)


def fusion_outputs(computation) -> list[tuple[object, int]]:
    """(root instruction, tuple leaf) of each fusion output, in order."""
    root = computation.root
    roots = list(root.operands) if root.opcode == "tuple" else [root]
    outputs = []
    for r in roots:
        if r.shape.is_tuple:
            outputs += [(r, k) for k in range(len(r.shape.tuple_shapes))]
        else:
            outputs.append((r, 0))
    return outputs


def leaf_shape(instr, k):
    return instr.shape.tuple_shapes[k] if instr.shape.is_tuple else instr.shape


def array_constants(computation) -> list:
    return [i for i in computation.post_order()
            if i.opcode == "constant" and i.shape.rank > 0]


class FusionBuilder:
    """Builds the kernels of one fusion. Emitters call `kernel()` to open an entry
    function, use `call`/`root_values`/`epilogue` to compute elements and
    `finish_kernel` to write the outputs."""

    def __init__(self, name: str, computation, source_path: str | None,
                 extra_roots=(), target=None):
        self.name = name
        self.target = target or EmitTarget()    # what the device prefers
        self.computation = computation
        self.source_path = source_path or "hlo"
        self.partition: Partition = partition(computation, extra_roots, prefix=name)
        self.params = computation.parameters
        self.constants = array_constants(computation)
        self.outputs = fusion_outputs(computation)
        self.symbols = fusion_symbols(computation)
        self.kernels: list[KernelPlan] = []
        self.module: ir.Module | None = None
        self.functions: dict = {}
        self.report = FusionReport(name, "", "", partition=str(self.partition))

    # -- locations -----------------------------------------------------------

    def location(self, instr) -> ir.Location:
        where = ir.Location.file(self.source_path, instr.line, instr.column)
        return ir.Location.name(instr.name, childLoc=where)

    def fusion_location(self) -> ir.Location:
        return ir.Location.name(self.name, childLoc=ir.Location.file(
            self.source_path, self.computation.line, 1))

    # -- functions -----------------------------------------------------------

    def tensor_instrs(self) -> list:
        return list(self.params) + list(self.constants)

    def function_for(self, subgraph: Subgraph, injected=()) -> func.FuncOp:
        key = (subgraph.name, tuple(injected))
        if key in self.functions:
            return self.functions[key]
        inputs = [tensor_type(i.shape) for i in self.tensor_instrs()]
        inputs += [ir.IndexType.get()] * len(self.symbols)
        index_count = len(subgraph.index_dims)
        inputs += [ir.IndexType.get()] * index_count
        injected_types = [compute_type(_leaf(h, k).element) for h in injected
                          for k in range(_arity(h))]
        inputs += injected_types
        results = [compute_type(_leaf(subgraph.root, k).element)
                   for k in range(_arity(subgraph.root))]
        name = subgraph.name + ("__epilogue" if injected else "")
        with ir.InsertionPoint(self.module.body), self.location(subgraph.root):
            fn = func.FuncOp(name, ir.FunctionType.get(inputs, results))
            fn.sym_visibility = ir.StringAttr.get("private")
            self.functions[key] = fn
            block = fn.add_entry_block()
            args = list(block.arguments)
            n = len(self.tensor_instrs())
            tensors = dict(zip(self.tensor_instrs(), args[:n]))
            for sym, arg in zip(self.symbols, args[n:n + len(self.symbols)]):
                tensors[DimKey(sym)] = arg
            n += len(self.symbols)
            indices = args[n:n + index_count]
            values, pos = {}, n + index_count
            for h in injected:
                values[h] = args[pos:pos + _arity(h)]
                pos += _arity(h)
            with ir.InsertionPoint(block):
                em = Elemental(self, tensors, current=subgraph, injected=values,
                               inline_all=bool(injected))
                func.ReturnOp(em.value(subgraph.root, indices))
        return fn

    def call(self, subgraph: Subgraph, tensors: dict, indices, injected: dict | None = None):
        heroes = tuple(injected) if injected else ()
        fn = self.function_for(subgraph, heroes)
        operands = [tensors[i] for i in self.tensor_instrs()]
        operands += [tensors[DimKey(sym)] for sym in self.symbols] + list(indices)
        for h in heroes:
            operands += list(injected[h])
        results = ir.FunctionType(fn.type.value if hasattr(fn.type, "value") else fn.type).results
        return list(func.CallOp(list(results), ir.FlatSymbolRefAttr.get(fn.name.value),
                                operands).results)

    def constant_tensor(self, instr, tensors):
        return tensors[instr]

    def root_values(self, root, indices, tensors) -> list[ir.Value]:
        """All leaves of a fusion root at `indices`."""
        owner = self.partition.of(root)
        if owner is not None and owner.root is root:
            return self.call(owner, tensors, indices)
        return Elemental(self, tensors, inline_all=True).value(root, indices)

    def epilogue(self, root, indices, tensors, injected: dict) -> list[ir.Value]:
        """A root computed from injected hero values (the seed's epilogue function)."""
        if root in injected:
            return list(injected[root])
        owner = self.partition.of(root)
        sub = Subgraph(owner.name if owner else f"{self.name}_{root.name}", root)
        return self.call(sub, tensors, indices, injected)

    # -- kernels ---------------------------------------------------------------

    def kernel(self, suffix: str, local_size: int) -> "KernelScope":
        self.module = ir.Module.create(loc=self.fusion_location())
        self.functions = {}
        return KernelScope(self, suffix, local_size)


class KernelScope:
    """The entry function being built: its buffers as tensors, thread ids, and the
    final write-back of the outputs."""

    def __init__(self, builder: FusionBuilder, suffix: str, local_size: int):
        self.b = builder
        self.name = builder.name + (f"_{suffix}" if suffix else "")
        self.local_size = local_size
        self.buffers: list[BufferRef] = []
        for k, p in enumerate(builder.params):
            self.buffers.append(BufferRef("param", k, p.shape.element, p.name))
        for c in builder.constants:
            self.buffers.append(BufferRef("const", c, c.shape.element, c.name))
        for k, (root, leaf) in enumerate(builder.outputs):
            self.buffers.append(BufferRef("output", k, leaf_shape(root, leaf).element,
                                          f"out{k}_{root.name}"))
        self.dims = [BufferRef("dim", sym, None, dim_arg_name(sym)) for sym in builder.symbols]

    def __enter__(self):
        b = self.b
        loc = b.fusion_location()
        self._loc = loc
        loc.__enter__()
        dyn = ir.ShapedType.get_dynamic_size()
        arg_types = [ir.MemRefType.get([dyn], storage_type(ref.element)) for ref in self.buffers]
        arg_types += [ir.IndexType.get()] * len(self.dims)
        with ir.InsertionPoint(b.module.body):
            self.func = func.FuncOp(self.name, ir.FunctionType.get(arg_types, []))
        self.func.attributes["opencl.local_size"] = ir.DenseI64ArrayAttr.get(
            [self.local_size, 1, 1])
        self.func.attributes["opencl.arg_names"] = ir.ArrayAttr.get(
            [ir.StringAttr.get(_c_name(r.name)) for r in self.buffers + self.dims])
        block = self.func.add_entry_block()
        self.ip = ir.InsertionPoint(block)
        self.ip.__enter__()
        args = list(block.arguments)
        n_in = len(b.params) + len(b.constants)
        n_buffers = len(self.buffers)
        self.tensors = {}
        for ref, arg in zip(self.dims, args[n_buffers:]):
            self.tensors[DimKey(ref.key)] = arg
        for instr, arg in zip(b.tensor_instrs(), args[:n_in]):
            self.tensors[instr] = _shaped_tensor(arg, instr.shape, writable=False,
                                                 tensors=self.tensors)
        self.output_memrefs, self.outputs = [], []
        for (root, leaf), arg in zip(b.outputs, args[n_in:n_buffers]):
            shape = leaf_shape(root, leaf)
            view = _flat_view(arg, shape)
            self.output_memrefs.append(view)
            self.outputs.append(bufferization.to_tensor(
                ir.RankedTensorType.get([_flat_size(shape)], storage_type(shape.element)),
                view, restrict=True, writable=True))
        self.thread_id = gpu.thread_id(gpu.Dimension.x, loc=named("th_x"))
        self.block_id = gpu.block_id(gpu.Dimension.x, loc=named("bl_x"))
        return self

    def finish(self, final_outputs, grid, description: str = "") -> None:
        """`grid`: an int, or a `HostSize` (dynamic shapes)."""
        for value, view in zip(final_outputs, self.output_memrefs):
            bufferization.materialize_in_destination(None, value, view, restrict=True,
                                                     writable=True)
        func.ReturnOp([])
        grid_text = ""
        if isinstance(grid, HostSize):
            grid, grid_text = (grid.static, "") if grid.static is not None else (grid.expr, grid.text)
        self.b.kernels.append(KernelPlan(self.name, self.b.module, self.buffers + self.dims,
                                         grid, self.local_size, self.b.report.emitter,
                                         description, grid_text))

    def __exit__(self, *exc):
        self.ip.__exit__(*exc)
        self._loc.__exit__(*exc)
        return False


def _c_name(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


def fusion_symbols(computation) -> list[str]:
    """The dynamic dimensions a fusion's shapes use, parameters first."""
    found: list[str] = []
    for instr in list(computation.parameters) + computation.post_order():
        for sym in instr.shape.symbols:
            if sym not in found:
                found.append(sym)
    return found


def dim_arg_name(symbol: str) -> str:
    """The kernel argument of a dimension: `d_M`, `d_1` for `?1`."""
    return "d_" + _c_name(symbol.lstrip("?"))


def _flat_size(shape) -> int:
    return max(shape.size, 1) if shape.is_static else ir.ShapedType.get_dynamic_size()


def _flat_view(arg, shape):
    if not shape.is_static:
        return arg          # the whole buffer: memref<?xT>
    size = max(shape.size, 1)
    t = ir.MemRefType.get([size], storage_type(shape.element))
    return memref.reinterpret_cast(t, arg, [], [], [], [0], [size], [1])


def _shaped_tensor(arg, shape, writable: bool, tensors=None):
    view = _flat_view(arg, shape)
    flat = bufferization.to_tensor(
        ir.RankedTensorType.get([_flat_size(shape)], storage_type(shape.element)),
        view, restrict=True, writable=writable)
    if shape.rank == 0:
        return tensor.collapse_shape(tensor_type(shape), flat, [])
    if shape.rank == 1:
        return flat
    dynamic, static = _mixed(shape.dims, tensors)
    return tensor.expand_shape(tensor_type(shape), flat, [list(range(shape.rank))], dynamic,
                               static)


def _mixed(dims, tensors) -> tuple[list, list[int]]:
    """(dynamic values, static sizes with the dynamic marker) of mixed dimensions: ints,
    symbols (looked up in `tensors`) or index values."""
    dyn = ir.ShapedType.get_dynamic_size()
    values, static = [], []
    for d in dims:
        if isinstance(d, int):
            static.append(d)
            continue
        values.append(dim_value(tensors, d) if isinstance(d, str) else d)
        static.append(dyn)
    return values, static


@dataclass
class HostSize:
    """A size the host computes from the dimensions: `static` when known at compile time,
    else `expr` (Python over `dims`) and `text` (for messages and reports)."""
    static: int | None
    expr: str = ""
    text: str = ""

    def __str__(self) -> str:
        return str(self.static) if self.static is not None else self.text


def host_product(dims) -> HostSize:
    """The product of dimensions (ints and symbols)."""
    const = prod(d for d in dims if isinstance(d, int))
    syms = [d for d in dims if not isinstance(d, int)]
    if not syms:
        return HostSize(const)
    expr = " * ".join([f"dims[{s!r}]" for s in syms] + ([str(const)] if const != 1 else []))
    text = "*".join(syms + ([str(const)] if const != 1 else []))
    return HostSize(None, expr, text)


def host_cdiv(size: HostSize, by: int) -> HostSize:
    if size.static is not None:
        return HostSize(cdiv(size.static, by))
    if by == 1:
        return size
    return HostSize(None, f"cdiv({size.expr}, {by})", f"cdiv({size.text}, {by})")


def host_mul(a: HostSize, b: HostSize) -> HostSize:
    if a.static is not None and b.static is not None:
        return HostSize(a.static * b.static)
    parts = [x for x in (a, b) if x.static != 1]
    expr = " * ".join(f"({x.expr})" if x.static is None else str(x.static) for x in parts)
    text = "*".join(x.text if x.static is None else str(x.static) for x in parts)
    return HostSize(None, expr, text)


def index_product(dims, tensors) -> ir.Value:
    """The product of dimensions as an index value (in the kernel)."""
    const = prod(d for d in dims if isinstance(d, int))
    value = None
    for d in dims:
        if isinstance(d, int):
            continue
        v = dim_value(tensors, d)
        value = v if value is None else arith.muli(value, v)
    if value is None:
        return const_index(const)
    return value if const == 1 else arith.muli(value, const_index(const))


def _arity(instr) -> int:
    return len(instr.shape.tuple_shapes) if instr.shape.is_tuple else 1


def _leaf(instr, k):
    return leaf_shape(instr, k)


# -- small index helpers used by all emitters ------------------------------------

def delinearize(linear: ir.Value, dims, tensors=None) -> list[ir.Value]:
    """`dims`: ints, symbols (looked up in `tensors`) or index values."""
    if len(dims) == 0:
        return []
    if len(dims) == 1:
        return [linear]
    dynamic, static = _mixed(dims, tensors)
    op = affine.AffineDelinearizeIndexOp([ir.IndexType.get()] * len(dims), linear, dynamic,
                                         static)
    return list(op.results)


def linearize(indices, dims, tensors=None) -> ir.Value:
    if len(dims) == 0:
        return const_index(0)
    if len(dims) == 1:
        return indices[0]
    dynamic, static = _mixed(dims, tensors)
    return affine.linearize_index(list(indices), dynamic, static, disjoint=True)


def cmp_lt(a, b) -> ir.Value:
    return arith.cmpi(arith.CmpIPredicate.slt, a, b)


def to_storage(value: ir.Value, element) -> ir.Value:
    if element.name in ("f16", "bf16"):
        return arith.truncf(storage_type(element), value)
    return value


def check_same_size(outputs, what: str) -> int:
    """The common number of elements of `outputs` (an int; for dynamic shapes the
    common dims, a tuple, whose product the caller computes)."""
    if not all(leaf_shape(r, k).is_static for r, k in outputs):
        shapes = {leaf_shape(r, k).dims for r, k in outputs}
        if len({tuple(d for d in s if d != 1) for s in shapes}) != 1:
            raise HloUnsupportedError(f"{what}: outputs of different dynamic shapes "
                                      f"{sorted(map(str, shapes))}")
        return None
    sizes = {leaf_shape(r, k).size for r, k in outputs}
    if len(sizes) != 1:
        raise HloUnsupportedError(f"{what}: outputs of different sizes {sorted(sizes)}")
    return sizes.pop()


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def apply_linear(terms, constant: int = 0) -> ir.Value:
    """sum(value * factor) + constant as one affine.apply."""
    expr = ir.AffineConstantExpr.get(constant)
    for k, (_, factor) in enumerate(terms):
        expr = expr + ir.AffineDimExpr.get(k) * ir.AffineConstantExpr.get(factor)
    amap = ir.AffineMap.get(len(terms), 0, [expr])
    return affine.apply(amap, [v for v, _ in terms])
