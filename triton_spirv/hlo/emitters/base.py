"""What every emitter shares: one MLIR module per kernel, its subgraph functions, the
kernel (entry) function with its buffers, and the report of what was chosen.

A kernel's arguments are `memref<?xT>` buffers, in this order: the fusion parameters,
the fusion's array constants (XLA keeps those in buffers too), then the outputs. In the
entry function each buffer becomes a static 1-D tensor (`bufferization.to_tensor` of a
`memref.reinterpret_cast`); parameters are reshaped to their HLO shape for the subgraph
functions, whose signature is the seed's:

    (%p0: tensor<...>, ..., %pn: tensor<...>, %i0: index, ..., %i_r-1: index) -> (e0, ..., e_m)

The flatten pass later turns every N-d access back into a 1-D one.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

from mlir import ir
from mlir.dialects import affine, arith, bufferization, func, gpu, memref, tensor

from ..elemental import (Elemental, compute_type, const_index, storage_type,
                         tensor_type)
from ..errors import HloUnsupportedError
from ..partitioner import Partition, Subgraph, partition


@dataclass
class BufferRef:
    """Which array a kernel argument is: ("param", k), ("const", instr), ("output", k)."""
    kind: str
    key: object
    element: object            # ElementType
    name: str


@dataclass
class KernelPlan:
    name: str
    module: ir.Module
    buffers: list[BufferRef]
    grid: int
    local_size: int
    emitter: str
    description: str = ""


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
                 extra_roots=()):
        self.name = name
        self.computation = computation
        self.source_path = source_path or "hlo"
        self.partition: Partition = partition(computation, extra_roots, prefix=name)
        self.params = computation.parameters
        self.constants = array_constants(computation)
        self.outputs = fusion_outputs(computation)
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
        operands = [tensors[i] for i in self.tensor_instrs()] + list(indices)
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

    def kernel(self, suffix: str, local_size: int, with_outputs=True) -> "KernelScope":
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

    def __enter__(self):
        b = self.b
        loc = b.fusion_location()
        self._loc = loc
        loc.__enter__()
        dyn = ir.ShapedType.get_dynamic_size()
        arg_types = [ir.MemRefType.get([dyn], storage_type(ref.element)) for ref in self.buffers]
        with ir.InsertionPoint(b.module.body):
            self.func = func.FuncOp(self.name, ir.FunctionType.get(arg_types, []))
        self.func.attributes["opencl.local_size"] = ir.DenseI64ArrayAttr.get(
            [self.local_size, 1, 1])
        self.func.attributes["opencl.arg_names"] = ir.ArrayAttr.get(
            [ir.StringAttr.get(_c_name(r.name)) for r in self.buffers])
        block = self.func.add_entry_block()
        self.ip = ir.InsertionPoint(block)
        self.ip.__enter__()
        args = list(block.arguments)
        n_in = len(b.params) + len(b.constants)
        self.tensors = {}
        for instr, arg in zip(b.tensor_instrs(), args[:n_in]):
            self.tensors[instr] = _shaped_tensor(arg, instr.shape, writable=False)
        self.output_memrefs, self.outputs = [], []
        for (root, leaf), arg in zip(b.outputs, args[n_in:]):
            shape = leaf_shape(root, leaf)
            view = _flat_view(arg, shape)
            self.output_memrefs.append(view)
            self.outputs.append(bufferization.to_tensor(
                ir.RankedTensorType.get([max(shape.size, 1)], storage_type(shape.element)),
                view, restrict=True, writable=True))
        self.thread_id = gpu.thread_id(gpu.Dimension.x, loc=named("th_x"))
        self.block_id = gpu.block_id(gpu.Dimension.x, loc=named("bl_x"))
        return self

    def finish(self, final_outputs, grid: int, description: str = "") -> None:
        for value, view in zip(final_outputs, self.output_memrefs):
            bufferization.materialize_in_destination(None, value, view, restrict=True,
                                                     writable=True)
        func.ReturnOp([])
        self.b.kernels.append(KernelPlan(self.name, self.b.module, self.buffers, grid,
                                         self.local_size, self.b.report.emitter, description))

    def __exit__(self, *exc):
        self.ip.__exit__(*exc)
        self._loc.__exit__(*exc)
        return False


def named(name: str) -> ir.Location:
    """A NameLoc: the OpenCL emitter names the C variable after it."""
    return ir.Location.name(name, childLoc=ir.Location.current)


def _c_name(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


def _flat_view(arg, shape):
    size = max(shape.size, 1)
    t = ir.MemRefType.get([size], storage_type(shape.element))
    return memref.reinterpret_cast(t, arg, [], [], [], [0], [size], [1])


def _shaped_tensor(arg, shape, writable: bool):
    view = _flat_view(arg, shape)
    flat = bufferization.to_tensor(
        ir.RankedTensorType.get([max(shape.size, 1)], storage_type(shape.element)),
        view, restrict=True, writable=writable)
    if shape.rank == 0:
        return tensor.collapse_shape(tensor_type(shape), flat, [])
    if shape.rank == 1:
        return flat
    return tensor.expand_shape(tensor_type(shape), flat, [list(range(shape.rank))], [],
                               list(shape.dims))


def _arity(instr) -> int:
    return len(instr.shape.tuple_shapes) if instr.shape.is_tuple else 1


def _leaf(instr, k):
    return leaf_shape(instr, k)


# -- small index helpers used by all emitters ------------------------------------

def delinearize(linear: ir.Value, dims) -> list[ir.Value]:
    if len(dims) == 0:
        return []
    if len(dims) == 1:
        return [linear]
    op = affine.AffineDelinearizeIndexOp([ir.IndexType.get()] * len(dims), linear, [],
                                         list(dims))
    return list(op.results)


def linearize(indices, dims) -> ir.Value:
    if len(dims) == 0:
        return const_index(0)
    if len(dims) == 1:
        return indices[0]
    return affine.linearize_index(list(indices), [], list(dims), disjoint=True)


def cmp_lt(a, b) -> ir.Value:
    return arith.cmpi(arith.CmpIPredicate.slt, a, b)


def to_storage(value: ir.Value, element) -> ir.Value:
    if element.name in ("f16", "bf16"):
        return arith.truncf(storage_type(element), value)
    return value


def num_elements(shape) -> int:
    return prod(shape.dims)


def check_same_size(outputs, what: str) -> int:
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
