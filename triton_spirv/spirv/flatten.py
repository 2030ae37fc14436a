"""Memref stage -> flat buffers with explicit index arithmetic (before SPIR-V conversion).

Upstream's memref-to-spirv conversion wants every access on a buffer it can turn into
a pointer: a kernel argument `memref<?xT>` or a work-group array with a static shape
and identity layout. The memref stage (docs/memref-stage.md) reaches its buffers
through views (`reinterpret_cast` with dynamic offsets, `subview`, `collapse_shape`,
`expand_shape`, `cast`) and moves tiles with `memref.copy`, which the conversion does
not legalize: memref_stage/copy_lowering.py has made each copy loops of loads and
stores on its views before this pass. This pass rewrites, in place:

- every work-group `memref.alloc`/`alloca` into a rank-1 array in workgroup memory;
- every load, store, vector load/store and atomic on a view into the same op on the
  root buffer at `offset + i0*s0 + i1*s1 + ...` (the emitter's own view arithmetic,
  emitter_opencl/views.py, with `arith` ops as expressions), and every `memref.dim` of
  a view into its size.

Views are then dead and erased. Anything else that reads a view is an error naming the
op and its source line.
"""
from __future__ import annotations

from typing import Sequence

from mlir import ir
from mlir.dialects import arith, memref, vector

from emitter_opencl.locations import source_line
from emitter_opencl.views import Buffer, Expr, View, product, rank_reduction_mask

VIEW_OPS = ("memref.reinterpret_cast", "memref.subview", "memref.collapse_shape",
            "memref.expand_shape", "memref.cast")
ALLOC_OPS = ("memref.alloc", "memref.alloca")
# Ops whose memref operand 0 is followed by one index per dimension.
INDEXED_OPS = {
    "memref.load": (0, 1),
    "memref.store": (1, 2),
    "vector.load": (0, 1),
    "vector.store": (1, 2),
    "memref.atomic_rmw": (1, 2),
    "memref.generic_atomic_rmw": (0, 1),
}
WORKGROUP = 3  # OpenCL numbering: the Workgroup storage class


class SpirvStageError(Exception):
    """The memref stage holds something the SPIR-V stage does not convert. The message
    starts with the op name and its source location (`file:line`)."""


class OpenCLCChosen(SpirvStageError):
    """The kernel is served from OpenCL C by design, not for want of a lowering: the
    device computes its SPIR-V wrong (a device quirk), or the mode asked for is one the
    OpenCL C path alone serves. `auto` mode says so at INFO level, not as a warning."""


def error_at(op, why: str) -> SpirvStageError:
    where = _enclosing_source_line(op.operation)
    return SpirvStageError(f"{op.operation.name} at {where or 'unknown location'}: {why}")


def _enclosing_source_line(op):
    """The source line of `op`, or else of the nearest op around it: the ops of a
    linalg body (a dot's multiply-add) come out of bufferization without a location,
    the loops around them keep the line of the linalg op."""
    while op is not None:
        where = source_line(op.location)
        if where:
            return where
        op = op.parent
    return None


class Index:
    """An `index` SSA value as a view expression: `+` and `*` build `arith` ops at the
    current insertion point (ints fold in emitter_opencl/views.py before reaching here)."""

    def __init__(self, value: ir.Value):
        self.value = value

    def __add__(self, other: Expr) -> "Index":
        return Index(arith.addi(self.value, index_value(other)))

    def __mul__(self, other: Expr) -> "Index":
        return Index(arith.muli(self.value, index_value(other)))

    __radd__ = __add__
    __rmul__ = __mul__


def index_value(e: Expr) -> ir.Value:
    if isinstance(e, Index):
        return e.value
    return arith.constant(ir.IndexType.get(), int(e))


def _mixed(static: Sequence[int], dynamic: Sequence[ir.Value]) -> list[Expr]:
    """Static/dynamic operand lists (`static_offsets` + `offsets`) as expressions."""
    dynamic = list(dynamic)
    out: list[Expr] = []
    for s in static:
        out.append(Index(dynamic.pop(0)) if s == ir.ShapedType.get_dynamic_size() else s)
    return out


def _static_ints(attr) -> list[int]:
    return list(ir.DenseI64ArrayAttr(attr))


def _reassociation(op) -> list[list[int]]:
    return [[ir.IntegerAttr(i).value for i in ir.ArrayAttr(group)]
            for group in ir.ArrayAttr(op.attributes["reassociation"])]


def _shape(type_: ir.MemRefType) -> list[int | None]:
    return [None if d == ir.ShapedType.get_dynamic_size() else d for d in type_.shape]


class Flattener:
    """One kernel's rewrite: walks its ops in order, tracking each memref value as a
    View of a root buffer (emitter_opencl/views.py) whose offsets and strides are ints
    or `Index` values, and rewrites each access on the root."""

    def __init__(self, func: ir.Operation):
        self.func = func
        self.views: dict = {}       # memref Value -> View (buffer.name: root Value)
        self.roots: dict = {}       # root id -> root Value
        self.dead: list = []        # view and alloc ops to erase, in program order
        self.private: set = set()   # root Values of each work-item's own arrays

    # --- views ----------------------------------------------------------------------

    def root_view(self, value: ir.Value, shape: Sequence[Expr]) -> View:
        # The view arithmetic reads only the buffer's name: a key into self.roots.
        key = f"r{len(self.roots)}"
        self.roots[key] = value
        return View.contiguous(Buffer(key, "global", ""), list(shape))

    def view_of(self, value: ir.Value, user) -> View:
        view = self.views.get(value)
        if view is None:
            raise error_at(user, "reads a memref that is neither a kernel argument, a "
                           "work-group buffer nor a view of one")
        return view

    def root(self, view: View) -> ir.Value:
        return self.roots[view.buffer.name]

    def visit_view(self, op) -> None:
        src = self.view_of(op.operands[0], op)
        name = op.name
        if name == "memref.cast":
            view = src
        elif name == "memref.reinterpret_cast":
            view = src.reinterpret(
                _mixed(_static_ints(op.attributes["static_offsets"]), op.offsets)[0],
                _mixed(_static_ints(op.attributes["static_sizes"]), op.sizes),
                _mixed(_static_ints(op.attributes["static_strides"]), op.strides))
        elif name == "memref.subview":
            sizes = _mixed(_static_ints(op.attributes["static_sizes"]), op.sizes)
            static_sizes = [s if isinstance(s, int) else None for s in sizes]
            dropped = rank_reduction_mask(static_sizes, _shape(ir.MemRefType(op.result.type)))
            if dropped is None:
                raise error_at(op, "cannot tell which unit dimensions the subview drops")
            view = src.subview(_mixed(_static_ints(op.attributes["static_offsets"]), op.offsets),
                               sizes,
                               _mixed(_static_ints(op.attributes["static_strides"]), op.strides),
                               dropped)
        elif name == "memref.collapse_shape":
            view = src.collapse(_reassociation(op))
        else:  # memref.expand_shape
            out = _mixed(_static_ints(op.attributes["static_output_shape"]), op.output_shape)
            view = src.expand(_reassociation(op), out)
        self.views[op.result] = view
        self.dead.append(op)

    def visit_alloc(self, op) -> None:
        type_ = ir.MemRefType(op.result.type)
        if any(d is None for d in _shape(type_)):
            raise error_at(op, "a work-group buffer needs a static shape")
        if op.name == "memref.alloca":
            # A private array of each work-item (work_group_privatization.privatize): Function
            # storage, never shared by the work-items of a group.
            flat = ir.MemRefType.get([product(list(type_.shape))], type_.element_type,
                                     memory_space=ir.Attribute.parse("#spirv.storage_class<Function>"))
            new = memref.alloca(flat, [], [])
            self.private.add(new)
        else:
            flat = ir.MemRefType.get([product(list(type_.shape))], type_.element_type,
                                     memory_space=ir.IntegerAttr.get(ir.IntegerType.get_signless(64), WORKGROUP))
            new = memref.alloc(flat, [], [])
        self.views[op.result] = self.root_view(new, list(type_.shape))
        self.dead.append(op)

    # --- accesses -------------------------------------------------------------------

    def visit_indexed(self, op) -> None:
        memref_pos, first_index = INDEXED_OPS[op.name]
        view = self.view_of(op.operands[memref_pos], op)
        indices = [Index(v) for v in list(op.operands)[first_index:first_index + view.rank]]
        flat = index_value(view.element(indices))
        # Same op on the root buffer: swap the memref, drop all indices but one.
        operands = list(op.operands)
        operands[memref_pos] = self.root(view)
        operands[first_index:first_index + view.rank] = [flat]
        self.replace(op, operands)

    def replace(self, op, operands: list) -> None:
        """A copy of `op` with new operands (regions moved over), replacing `op`."""
        new = ir.Operation.create(op.name, results=[r.type for r in op.results],
                                  operands=operands, attributes=_attributes(op),
                                  regions=len(op.regions), loc=op.location)
        for old_region, new_region in zip(op.regions, new.regions):
            for block in list(old_region.blocks):
                block.append_to(new_region)
        for old, fresh in zip(op.results, new.results):
            old.replace_all_uses_with(fresh)
        op.erase()

    def visit_transfer(self, op) -> None:
        """In-bounds 1-D vector transfers along a unit-stride row become vector.load/store."""
        in_bounds = [ir.BoolAttr(b).value for b in ir.ArrayAttr(op.attributes["in_bounds"])]
        if not all(in_bounds):
            raise error_at(op, "only in-bounds vector transfers are converted")
        reading = op.name == "vector.transfer_read"
        source = op.operands[0] if reading else op.operands[1]
        view = self.view_of(source, op)
        first = 1 if reading else 2
        indices = [Index(v) for v in list(op.operands)[first:first + view.rank]]
        if view.strides[-1] != 1:
            raise error_at(op, "a vector transfer needs a unit-stride innermost dimension")
        flat = index_value(view.element(indices))
        if reading:
            new = vector.load(op.result.type, self.root(view), [flat])
            op.result.replace_all_uses_with(new)
        else:
            vector.store(op.operands[0], self.root(view), [flat])
        op.erase()

    # --- driver ---------------------------------------------------------------------

    def run(self) -> None:
        entry = self.func.regions[0].blocks[0]
        for arg in entry.arguments:
            if isinstance(arg.type, ir.MemRefType):
                self.views[arg] = self.root_view(arg, [None])
        ops: list = []
        self.func.walk(lambda o: ops.append(o.opview) or ir.WalkResult.ADVANCE,
                       ir.WalkOrder.PRE_ORDER)
        for op in ops[1:]:
            self.visit(op)
        for op in reversed(self.dead):
            op.erase()
        self.func.walk(_element_aligned)

    def visit(self, op) -> None:
        name = op.name
        with ir.InsertionPoint(op), op.location:
            if name in VIEW_OPS:
                self.visit_view(op)
            elif name in ALLOC_OPS:
                self.visit_alloc(op)
            elif name == "memref.dealloc":
                op.erase()
            elif name in INDEXED_OPS:
                self.visit_indexed(op)
            elif name in ("vector.transfer_read", "vector.transfer_write"):
                self.visit_transfer(op)
            elif name == "memref.dim":
                self.visit_dim(op)
            elif name == "memref.extract_aligned_pointer_as_index":
                self.visit_pointer(op)
            elif any(isinstance(v.type, ir.MemRefType) for v in op.operands):
                raise error_at(op, "is not supported on the SPIR-V path")

    def visit_dim(self, op) -> None:
        """The size of a view along a constant dimension (copy_lowering.py's extents)."""
        view = self.view_of(op.operands[0], op)
        dim = op.operands[1].owner
        size = view.sizes[ir.IntegerAttr(dim.attributes["value"]).value] \
            if isinstance(op.operands[1], ir.OpResult) and dim.name == "arith.constant" else None
        if size is None:
            raise error_at(op, "asks for a size the view does not know")
        op.result.replace_all_uses_with(index_value(size))
        op.erase()

    def visit_pointer(self, op) -> None:
        view = self.view_of(op.operands[0], op)
        if self.root(view) != op.operands[0]:
            raise error_at(op, "takes the address of a view, not of a kernel argument")


def _element_aligned(op):
    """Vector loads and stores read rows at any element offset (the OpenCL C emitter's
    vloadN/vstoreN); without an alignment, SPIR-V's vector access through a cast
    pointer would promise the vector's own alignment."""
    if op.name in ("vector.load", "vector.store") and "alignment" not in op.attributes:
        vector_type = ir.VectorType(op.operands[0].type if op.name == "vector.store" else op.results[0].type)
        element_bytes = max(1, vector_type.element_type.width // 8)
        op.attributes["alignment"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), element_bytes)
    return ir.WalkResult.ADVANCE


def _attributes(op) -> dict:
    return {name: op.attributes[name] for name in op.attributes}


def flatten_buffers(module: ir.Module) -> ir.Module:
    """Rewrites every kernel of `module` in place (see the module docstring)."""
    for op in module.body.operations:
        if op.operation.name == "func.func":
            Flattener(op.operation).run()
    return module


def local_size(func) -> list[int]:
    if "opencl.local_size" in func.attributes:
        return list(ir.DenseI64ArrayAttr(func.attributes["opencl.local_size"]))
    return [1, 1, 1]
