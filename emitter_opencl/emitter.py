"""Print OpenCL C 1.2 from a memref-stage module (see docs/memref-stage.md).

The emitter walks the single kernel function once, in program order:
  * scalar SSA values become C locals (constants become literals at their uses);
  * memref values become `View`s (root buffer + index arithmetic), never C values;
  * `memref.alloc`s become `__local` arrays declared at kernel scope;
  * structured control flow (scf) maps onto C loops and ifs, with loop-carried
    values as variables declared before the loop and assigned at `scf.yield`.
Anything outside the contract raises `OpenCLEmitError` naming the op and its
source location.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from mlir import ir
# Importing the dialect modules registers their op classes with the bindings.
from mlir.dialects import arith, func, gpu, math, memref, scf, vector  # noqa: F401

from . import ctypes_table as ct
from .bounds import HELPER_NAMES as BOUNDS_HELPER_NAMES, BoundsChecks
from .casts import (CAST_OPS, FOLDABLE_INT_CASTS, cast_expr, fold_int_cast,
                    vector_cast_expr)
from .errors import OpenCLEmitError, error_at
from .helpers import HELPER_NAMES, HelperSet
from .locations import SourceLine, real_source_line, source_name
from .memory import emit_copy, load_expr, pointer, store_stmt
from .names import NameTable, sanitize
from .optable import (ELEMENTWISE, CMPF, CMPI, CMPI_SIGNED, HELPER_OF, I1_ELEMENTWISE,
                      UNSIGNED_RESULT, VECTOR_ELEMENTWISE, VECTOR_WRAPPING, WRAPPING,
                      WRAPPING_KINDS, is_call)
from .views import Buffer, Expr, View, atom, product, rank_reduction_mask


@dataclass(frozen=True)
class LocalTile:
    """A kernel-scope `__local` array and the source line of the op that made it."""
    name: str
    ctype: str
    shape: tuple[int, ...]
    bytes: int
    origin: str                          # "kernel.py:12: a = tl.load(...)" or ""

    def describe(self) -> str:
        shape = "x".join(str(s) for s in self.shape) or "1"
        where = f" from {self.origin}" if self.origin else ""
        return f"{self.name} {self.ctype}[{shape}] = {self.bytes} bytes{where}"


@dataclass
class EmittedKernel:
    source: str                          # complete OpenCL C 1.2 program
    name: str                            # kernel function name
    arg_types: list[str]                 # C type of each kernel parameter, in order
    local_size: tuple[int, int, int]     # work-group size the kernel is written for
    local_mem_bytes: int                 # total size of the `__local` arrays
    # The `__local` arrays, largest first (for budget errors: which tile is too big).
    local_tiles: list[LocalTile] = field(default_factory=list)
    # Bounds-checked kernels only (see bounds.py): C types of the hidden parameters
    # after the kernel's own, the kernel parameter each extent parameter is for, and
    # the checked access sites.
    hidden_arg_types: list[str] = field(default_factory=list)
    bounds_params: list[int] = field(default_factory=list)
    bounds_sites: list[dict] = field(default_factory=list)
    # Kernels with tl.device_assert: [path, line, message] per assert id (from the
    # `opencl.asserts` attribute); their last parameter (before bounds-checked mode's)
    # is the assert record.
    asserts: list[list] = field(default_factory=list)
    # Kernels with tt.int_to_ptr: how many flat memory buffers follow the kernel's own
    # parameters (before the assert record).
    flat_memory: int = 0


def emit_opencl(module: ir.Module, bounds_check: bool = False) -> EmittedKernel:
    """OpenCL C for the one kernel function in a memref-stage module. With
    `bounds_check`, every global memory access is checked (emitter_opencl/bounds.py)."""
    with module.context:
        return KernelEmitter(_kernel_function(module), bounds_check=bounds_check).emit()


def _origin(op) -> str:
    """`file.py:12: source text` of the line that made an op, or "" when unknown."""
    line = real_source_line(op.location)
    if line is None:
        return ""
    text = line.text()
    return f"{line.short}: {text}" if text else line.short


def _kernel_function(module: ir.Module) -> ir.OpView:
    kernels = []
    for op in module.body.operations:
        if op.operation.name != "func.func":
            raise error_at(op, "only func.func may appear at module level")
        if not _is_private(op):  # unused private helpers are dead code
            kernels.append(op)
    if len(kernels) != 1:
        raise OpenCLEmitError(f"builtin.module: expected exactly one kernel function, "
                              f"found {len(kernels)}")
    return kernels[0]


def _is_private(func_op: ir.OpView) -> bool:
    attrs = func_op.attributes
    return ("sym_visibility" in attrs
            and ir.StringAttr(attrs["sym_visibility"]).value == "private")


class CodeWriter:
    """Indented lines of C."""

    def __init__(self, depth: int = 1):
        self.lines: list[str] = []
        self.depth = depth

    def line(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)

    def open(self, header: str) -> None:
        self.line(header + " {")
        self.depth += 1

    def close(self, trailer: str = "}") -> None:
        self.depth -= 1
        self.line(trailer)


@dataclass
class Target:
    """A C variable that a terminator (scf.yield / scf.condition) assigns."""
    name: str
    ctype: str


# Ops with no side effects: skipped when none of their results is used.
_PURE_PREFIXES = ("arith.", "math.")
_PURE_OPS = {"memref.load", "memref.extract_aligned_pointer_as_index", "gpu.block_id", "gpu.grid_dim", "gpu.thread_id",
             "gpu.block_dim", "vector.transfer_read", "vector.load",
             "vector.extract", "vector.insert", "vector.broadcast", "vector.splat",
             "vector.from_elements"}

_GPU_INDEX = {  # op -> (OpenCL builtin, default variable name)
    "gpu.block_id": ("get_group_id", "pid"),
    "gpu.grid_dim": ("get_num_groups", "num_pids"),
    "gpu.thread_id": ("get_local_id", "lid"),
    "gpu.block_dim": ("get_local_size", "lsize"),
}

_LOOP_VAR_NAMES = ("i", "j", "k", "l")

# Lane type of a vector mask over lanes of each kind: what OpenCL relational
# builtins and operators return (-1 for true), and what select() expects.
_MASK_LANE = {"i1": "int", "i8": "char", "i16": "short", "i32": "int", "i64": "long",
              "index": "long", "f16": "int", "bf16": "int", "f32": "int", "f64": "long",
              **{kind: "int" for kind in ct.FP8_KINDS}}


class KernelEmitter:
    def __init__(self, func_op: ir.OpView, bounds_check: bool = False):
        self.func = func_op
        self.names = NameTable(reserved=set(HELPER_NAMES))
        self.out = CodeWriter()
        self.helpers = HelperSet()
        self.exprs: dict[ir.Value, str] = {}            # value -> C variable
        self.literals: dict[ir.Value, Callable[[bool], str]] = {}  # value -> literal
        self.int_constants: dict[ir.Value, int] = {}    # integer literals, for folding
        self.mask_ctypes: dict[ir.Value, str] = {}      # C type of vector<Nxi1> values
        self.views: dict[ir.Value, View] = {}
        self.local_arrays: list[tuple[Buffer, str, str]] = []  # buffer, ctype, extent
        self.local_tiles: list[LocalTile] = []
        self.targets: list[list[Target]] = []           # for scf.yield / scf.condition
        self.last_source: SourceLine | None = None
        self.loop_depth = 0
        self.current_op = None                          # the op being printed
        self.bounds: BoundsChecks | None = None
        if bounds_check:
            self.bounds = BoundsChecks(self)
            for reserved in BOUNDS_HELPER_NAMES:
                self.names.reserve(reserved)

    # ------------------------------------------------------------------ driver

    def emit(self) -> EmittedKernel:
        name = self.names.kernel_name(ir.StringAttr(self.func.attributes["sym_name"]).value)
        params, arg_types = self._declare_params()
        hidden = self._declare_bounds_params(params) if self.bounds is not None else []
        local_bytes = self._declare_local_arrays()
        self._emit_block(self.func.regions[0].blocks[0])
        local_size = self._local_size()
        source = self._assemble(name, params, local_size, local_bytes)
        kernel = EmittedKernel(source, name, arg_types, local_size, local_bytes,
                               sorted(self.local_tiles, key=lambda t: -t.bytes))
        if self.bounds is not None:
            kernel.hidden_arg_types = hidden
            kernel.bounds_params = list(self.bounds.hidden_params)
            kernel.bounds_sites = [site.as_dict() for site in self.bounds.sites]
        kernel.asserts = self._asserts()
        kernel.flat_memory = self._flat_memory()
        return kernel

    def _flat_memory(self) -> int:
        """How many flat memory buffers (tt.int_to_ptr) follow the kernel's own parameters."""
        attrs = self.func.attributes
        return int(ir.IntegerAttr(attrs["opencl.flat_memory"]).value) \
            if "opencl.flat_memory" in attrs else 0

    def _n_hidden_args(self) -> int:
        """Parameters after the kernel's own: flat memory buffers, then the assert record."""
        return self._flat_memory() + ("opencl.asserts" in self.func.attributes)

    def _extract_pointer(self, op) -> None:
        """memref.extract_aligned_pointer_as_index of a global buffer: its address."""
        view = self.view(op, op.operands[0])
        if not view.buffer.is_global:
            raise error_at(op, "the address of a __local buffer is not available")
        self.define(op, op.results[0], f"(long){view.buffer.name}")

    def _asserts(self) -> list[list]:
        """[path, line, message] per assert id; the record parameter is the last one."""
        attrs = self.func.attributes
        if "opencl.asserts" not in attrs:
            return []
        entries = []
        for entry in ir.ArrayAttr(attrs["opencl.asserts"]):
            path, line, message = list(ir.ArrayAttr(entry))
            entries.append([ir.StringAttr(path).value, ir.IntegerAttr(line).value,
                            ir.StringAttr(message).value])
        return entries

    def _declare_bounds_params(self, params: list[str]) -> list[str]:
        """Bounds-checked mode: an extent per global buffer and the error record."""
        block = self.func.regions[0].blocks[0]
        # The flat memory buffers and the assert record are the launcher's own buffers.
        arguments = list(block.arguments)
        arguments = arguments[:len(arguments) - self._n_hidden_args()]
        buffers = [(i, self.views[arg].buffer.name) for i, arg in enumerate(arguments)
                   if arg in self.views]
        return self.bounds.add_hidden_params(params, buffers)

    def single_work_item(self) -> bool:
        """True when a work-group is one work-item: nothing to synchronize with."""
        x, y, z = self._local_size()
        return x * y * z == 1

    def _local_size(self) -> tuple[int, int, int]:
        attrs = self.func.attributes
        if "opencl.local_size" not in attrs:
            return (1, 1, 1)
        dims = [int(d) for d in ir.DenseI64ArrayAttr(attrs["opencl.local_size"])]
        return tuple((dims + [1, 1, 1])[:3])  # type: ignore[return-value]

    def _assemble(self, name: str, params: list[str], local_size: tuple[int, int, int],
                  local_bytes: int) -> str:
        body = "\n".join(self.out.lines)
        helpers = self.helpers.source()
        if self.bounds is not None:
            helpers = "\n\n".join(h for h in (helpers, self.bounds.helpers_source()) if h)
        header = (f"// Kernel {name}: OpenCL C 1.2 printed from its memref-stage MLIR.\n"
                  f"// Work-group size {local_size}; {local_bytes} bytes of __local memory.")
        if self._uses_16_bit_floats():
            header += ("\n// f16 / bf16 values are computed in float; global f16 buffers "
                       "are read and\n// written with vload_half / vstore_half_rte, "
                       "bf16 ones as ushort bit patterns.")
        if self._uses_fp8():
            header += ("\n// fp8 values are computed in float; global fp8 buffers hold "
                       "uchar bit patterns.")
        parts = [header]
        if "double" in body or "double" in helpers or any("double" in p for p in params):
            parts.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
        if helpers:
            parts.append(helpers)
        # Always fixed: the launcher uses exactly this size, and a device compiler that
        # knows it specializes the work-group function (PoCL builds barrier-free code
        # for one work-item instead of generic work-item loops).
        attribute = "__attribute__((reqd_work_group_size({}, {}, {})))\n".format(*local_size)
        declarations = [f"  {'__local ' if buf.space == 'local' else ''}{ctype} {buf.name}[{extent}];"
                        for buf, ctype, extent in self.local_arrays]
        kernel = (f"{attribute}__kernel void {name}({', '.join(params)}) {{\n"
                  + "".join(d + "\n" for d in declarations)
                  + (body + "\n" if body else "") + "}")
        parts.append(kernel)
        return "\n\n".join(parts) + "\n"

    def _value_types(self) -> list[str]:
        values = list(self.func.regions[0].blocks[0].arguments)
        for op in _walk(self.func.regions[0]):
            values += list(op.results)
        return [str(v.type) for v in values]

    def _uses_16_bit_floats(self) -> bool:
        return any("f16" in t for t in self._value_types())  # f16, bf16, vectors, memrefs

    def _uses_fp8(self) -> bool:
        return any("f8E" in t for t in self._value_types())

    # ------------------------------------------------------------ declarations

    def _declare_params(self) -> tuple[list[str], list[str]]:
        block = self.func.regions[0].blocks[0]
        wanted = self._arg_names(len(block.arguments))
        params, arg_types = [], []
        for i, arg in enumerate(block.arguments):
            name = self.names.fresh(sanitize(wanted[i] or "") or f"arg{i}")
            ctype = self._param_ctype(arg, name)
            params.append(f"{ctype} {name}")
            arg_types.append(ctype)
        return params, arg_types

    def _arg_names(self, count: int) -> list[str | None]:
        attrs = self.func.attributes
        names: list[str | None] = [None] * count
        if "opencl.arg_names" in attrs:
            for i, attr in enumerate(ir.ArrayAttr(attrs["opencl.arg_names"])):
                if i < count:
                    names[i] = ir.StringAttr(attr).value
        return names

    def _param_ctype(self, arg: ir.BlockArgument, name: str) -> str:
        t = arg.type
        if isinstance(t, ir.MemRefType):
            mt = ir.MemRefType(t)
            kind = ct.scalar_kind(mt.element_type)
            if mt.rank != 1 or kind is None or kind == "index" or not _identity(mt):
                raise error_at(self.func, f"kernel argument {name}: {t} is not a "
                                          f"rank-1 identity-layout buffer of a scalar type")
            self.views[arg] = View(Buffer(name, "global", kind), 0, (None,), (1,))
            return f"__global {ct.GLOBAL_ELEM_CTYPE[kind]}*"
        kind = ct.scalar_kind(t)
        if kind is None:
            raise error_at(self.func, f"kernel argument {name} has unsupported type {t}")
        self.exprs[arg] = name
        return ct.ARG_CTYPE[kind]

    def _declare_local_arrays(self) -> int:
        """Hoist every alloc (wherever it sits) to a kernel-scope `__local` array;
        OpenCL only allows `__local` declarations there."""
        total = 0
        for op in _walk(self.func.regions[0]):
            if op.operation.name not in ("memref.alloc", "memref.alloca"):
                continue
            mt = ir.MemRefType(op.results[0].type)
            kind = ct.scalar_kind(mt.element_type)
            if kind is None or not mt.has_static_shape or not _identity(mt):
                raise error_at(op, f"work-group buffers need a static shape, identity "
                                   f"layout and scalar elements, not {mt}")
            wanted = source_name(op.location)
            name = (self.names.fresh(sanitize(wanted) + "_tile")
                    if wanted and sanitize(wanted) else self.names.numbered("tile"))
            shape = list(mt.shape)
            count = product(shape) if shape else 1
            # memref.alloca: a private array of each work-item (GPU-shaped kernels,
            # triton_spirv/memref_stage/work_group_sharing.py); not in __local memory.
            private = op.operation.name == "memref.alloca"
            buffer = Buffer(name, "private" if private else "local", kind, count)
            ctype = ct.LOCAL_ELEM_CTYPE[kind]
            extent = " * ".join(str(s) for s in shape) if len(shape) > 1 else str(count)
            self.local_arrays.append((buffer, ctype, extent))
            self.views[op.results[0]] = View.contiguous(buffer, shape)
            if private:
                continue
            size = count * ct.CTYPE_BYTES[ctype]
            self.local_tiles.append(LocalTile(name, ctype, tuple(shape), size, _origin(op)))
            total += size
        return total

    # ------------------------------------------------------------------ values

    def shape_of(self, op, value: ir.Value) -> tuple[str, int]:
        """(element kind, vector width or 1) of a scalar or vector value."""
        kind = ct.scalar_kind(value.type)
        if kind is not None:
            return kind, 1
        shape = ct.vector_shape(value.type)
        if shape is None:
            raise error_at(op, f"values of type {value.type} are outside the contract")
        return shape

    def ctype_of(self, op, value: ir.Value) -> str:
        if value in self.mask_ctypes:
            return self.mask_ctypes[value]
        return ct.value_ctype(*self.shape_of(op, value))

    def operand(self, value: ir.Value, typed: bool = False) -> str:
        """C text of a scalar/vector value: a variable name or a literal."""
        if value in self.literals:
            return self.literals[value](typed)
        if value in self.exprs:
            return self.exprs[value]
        owner = value.owner
        raise error_at(owner if isinstance(owner, (ir.OpView, ir.Operation)) else self.func,
                       "a memref or unsupported value is used as a scalar")

    def index_expr(self, value: ir.Value) -> Expr:
        """An index operand as a foldable Expr: int when it is a constant."""
        if value in self.int_constants:
            return self.int_constants[value]
        return self.operand(value)

    def view(self, op, value: ir.Value) -> View:
        if value not in self.views:
            raise error_at(op, "memref operand is not a view of a kernel argument or "
                               "work-group buffer")
        return self.views[value]

    def unsigned(self, text: str, kind: str, width: int) -> str:
        """An operand reinterpreted as the unsigned type of the same width."""
        if ct.is_float(kind):
            return text
        utype = ct.UNSIGNED_CTYPE[kind]
        return f"as_{utype}{width}({text})" if width > 1 else f"({utype}){text}"

    # ------------------------------------------------------------------ output

    def note_source(self, op) -> None:
        """One comment per group of ops from the same source line."""
        where = real_source_line(op.location)
        if where is None or where == self.last_source:
            return
        self.last_source = where
        text = where.text() or op.operation.name
        if len(text) > 72:
            text = text[:69] + "..."
        self.out.line(f"// {text}  ({where.short})")

    def stmt(self, op, text: str) -> None:
        self.note_source(op)
        self.out.line(text)

    def open_stmt(self, op, header: str) -> None:
        """`header {` and indent (a loop or if belonging to `op`)."""
        self.note_source(op)
        self.out.open(header)

    def define(self, op, result: ir.Value, expr: str, ctype: str | None = None,
               default_name: str | None = None) -> str:
        """Declare and initialize the C variable holding `result`, named after the
        source variable, else `default_name`, else `v0`, `v1`, ..."""
        ctype = ctype or self.ctype_of(op, result)
        wanted = sanitize(source_name(op.location) or "")
        if not wanted and default_name:
            wanted = default_name
        name = self.names.fresh(wanted) if wanted else self.names.numbered("v")
        self.stmt(op, f"{ctype} {name} = {expr};")
        self.exprs[result] = name
        return name

    def alias(self, result: ir.Value, source: ir.Value) -> None:
        """`result` is the same C value as `source` (no-op casts)."""
        if source in self.literals:
            self.literals[result] = self.literals[source]
            if source in self.int_constants:
                self.int_constants[result] = self.int_constants[source]
        else:
            self.exprs[result] = self.exprs[source]

    # ---------------------------------------------------------------- dispatch

    def _emit_block(self, block: ir.Block) -> None:
        for op in block.operations:
            self._emit_op(op)

    def _emit_region_block(self, block: ir.Block, targets: list[Target],
                           own_scope: bool = True) -> None:
        """A nested block (in its own C scope unless it shares its caller's), with
        the variables its terminator assigns."""
        if own_scope:
            self.names.push_scope()
        self.targets.append(targets)
        self._emit_block(block)
        self.targets.pop()
        if own_scope:
            self.names.pop_scope()

    def _emit_op(self, op) -> None:
        name = op.operation.name
        handler = _HANDLERS.get(name)
        if handler is None:
            raise error_at(op, "op is outside the memref-stage contract")
        self.current_op = op
        if _is_pure(name) and op.results and not any(_has_uses(r) for r in op.results):
            return
        handler(self, op)

    # ------------------------------------------------------------- arithmetic

    def _constant(self, op) -> None:
        result = op.results[0]
        attr = op.attributes["value"]
        if ct.scalar_kind(result.type) is None and ct.vector_shape(result.type) is None:
            # Let the consumer report the problem: it is the op outside the contract.
            self.literals[result] = lambda typed: self._reject(op, result)
            return
        kind, width = self.shape_of(op, result)
        if width > 1:
            self._vector_constant(op, result, attr, kind, width)
            return
        if ct.is_int(kind):
            value = int(_scalar_attr_value(attr, kind))
            self.literals[result] = lambda typed, v=value: ct.int_literal(v, kind, typed)
            self.int_constants[result] = value
        else:
            value = ir.FloatAttr(attr).value
            self.literals[result] = lambda typed, v=value: ct.float_literal(v, kind)

    def _vector_constant(self, op, result, attr, kind: str, width: int) -> None:
        ctype = self.ctype_of(op, result)
        dense = ir.DenseElementsAttr(attr)
        if dense.is_splat:
            values = [_scalar_attr_value(dense.get_splat_value(), kind)]
        else:
            typed = ir.DenseFPElementsAttr(attr) if ct.is_float(kind) \
                else ir.DenseIntElementsAttr(attr)
            values = [typed[i] for i in range(width)]
        if kind == "i1":  # vector lanes hold -1 for true
            texts = [ct.int_literal(-int(bool(v)), "i32") for v in values]
        elif ct.is_int(kind):
            texts = [ct.int_literal(v, kind) for v in values]
        else:
            texts = [ct.float_literal(v, kind) for v in values]
        text = f"({ctype})({', '.join(texts)})"
        self.literals[result] = lambda typed: text

    def _reject(self, op, value: ir.Value) -> str:
        raise error_at(op, f"values of type {value.type} are outside the contract")

    def _elementwise(self, op) -> None:
        name = op.operation.name
        result = op.results[0]
        kind, width = self.shape_of(op, result)
        operand_kind, _ = self.shape_of(op, op.operands[0])
        fmt = ((I1_ELEMENTWISE.get(name) if kind == "i1" else None)
               or _wrapping_format(name, kind, width)
               or (VECTOR_ELEMENTWISE.get(name) if width > 1 else None)
               or ELEMENTWISE[name])
        ctype = self.ctype_of(op, result) if kind != "i1" else self._mask_ctype(op, result)
        typed = [is_call(fmt)] * len(op.operands)
        if _needs_wide_literal(name, operand_kind, [v in self.literals for v in op.operands]):
            typed[0] = True
        texts = [self.operand(v, t) for v, t in zip(op.operands, typed)]
        fields = dict(zip("abc", texts))
        fields.update({f"u{k}": self.unsigned(t, operand_kind, width)
                       for k, t in zip("abc", texts)})
        expr = fmt.format(T=ctype, **fields)
        if name in HELPER_OF:
            self.helpers.need(f"{HELPER_OF[name]}_{ctype}")
        if width > 1 and name in UNSIGNED_RESULT:
            expr = f"as_{ctype}({expr})"
        self.define(op, result, expr, ctype)

    def _opencl_call(self, op) -> None:
        """func.call of a libdevice function that the converter mapped to an OpenCL
        builtin or a helper family (triton_spirv/ttir_to_linalg/opencl_calls.py)."""
        attrs = op.attributes
        if "opencl.call" not in attrs:
            raise error_at(op, "calls of functions are outside the memref-stage contract")
        name = ir.StringAttr(attrs["opencl.call"]).value
        if "opencl.helper" in attrs:
            name = self.helpers.need(f"{name}_{self.ctype_of(op, op.operands[0])}")
        args = ", ".join(self.operand(v, True) for v in op.operands)
        result = op.results[0]
        self.define(op, result, f"{name}({args})", self.ctype_of(op, result))

    def _mask_ctype(self, op, result: ir.Value) -> str:
        """C type of an i1 result: bool for scalars; for vectors the signed lane type
        OpenCL relational ops return for the operands (int4 for float4, long4 for
        double4, ...), or the operand's own mask type."""
        _, width = self.shape_of(op, result)
        if width == 1:
            return "bool"
        first = op.operands[0]
        if first in self.mask_ctypes:
            ctype = self.mask_ctypes[first]
        else:
            kind, _ = self.shape_of(op, first)
            ctype = f"{_MASK_LANE[kind]}{width}"
        self.mask_ctypes[result] = ctype
        return ctype

    def _compare(self, op) -> None:
        predicate = ir.IntegerAttr(op.attributes["predicate"]).value
        is_int = op.operation.name == "arith.cmpi"
        fmt = (CMPI if is_int else CMPF)[predicate]
        kind, width = self.shape_of(op, op.operands[0])
        ctype = self._mask_ctype(op, op.results[0])
        texts = [self.operand(v, is_call(fmt)) for v in op.operands]
        if is_int and kind == "i1" and predicate in CMPI_SIGNED:
            texts = [f"(-(int){t})" for t in texts]  # signed i1: true is -1
        if fmt in ("true", "false") and width > 1:
            expr = f"({ctype})({-1 if fmt == 'true' else 0})"
        else:
            expr = fmt.format(a=texts[0], b=texts[1],
                              ua=self.unsigned(texts[0], kind, width),
                              ub=self.unsigned(texts[1], kind, width))
        self.define(op, op.results[0], expr, ctype)

    def _select(self, op) -> None:
        cond, if_true, if_false = (self.operand(v) for v in op.operands)
        result = op.results[0]
        _, width = self.shape_of(op, result)
        _, cond_width = self.shape_of(op, op.operands[0])
        if cond_width == 1:
            self.define(op, result, f"{cond} ? {if_true} : {if_false}")
            return
        # Lane-wise: select() reads the top bit of a mask lane as wide as the data.
        kind, _ = self.shape_of(op, result)
        wanted = f"{_MASK_LANE[kind]}{width}"
        if self.mask_ctypes.get(op.operands[0], f"int{width}") != wanted:
            cond = f"convert_{wanted}({cond})"
        self.define(op, result, f"select({if_false}, {if_true}, {cond})")

    def _cast(self, op) -> None:
        name = op.operation.name
        source, result = op.operands[0], op.results[0]
        if "roundingmode" in op.attributes and str(result.type) not in ct.FP8_KINDS and \
                "to_nearest_even" not in str(op.attributes["roundingmode"]):
            raise error_at(op, f"rounding mode {op.attributes['roundingmode']} is not "
                               f"supported (only to_nearest_even)")
        src_kind, width = self.shape_of(op, source)
        dst_kind, _ = self.shape_of(op, result)
        if source in self.int_constants and name in FOLDABLE_INT_CASTS and width == 1:
            value = fold_int_cast(name, self.int_constants[source], src_kind, dst_kind)
            self.literals[result] = lambda typed: ct.int_literal(value, dst_kind, typed)
            self.int_constants[result] = value
            return
        text = self.operand(source)
        expr = (cast_expr if width == 1 else vector_cast_expr)(
            self, op, name, text, src_kind, dst_kind, width)
        if expr is None:
            self.alias(result, source)
        else:
            self.define(op, result, expr)

    # ----------------------------------------------------------------- memory

    def _mixed(self, static_attr: ir.Attribute, dynamic: Sequence[ir.Value]) -> list[Expr]:
        """Static offsets/sizes/strides with the dynamic ones filled in."""
        dynamic_values = iter(dynamic)
        result: list[Expr] = []
        for value in ir.DenseI64ArrayAttr(static_attr):
            if value == _DYNAMIC:
                result.append(self.index_expr(next(dynamic_values)))
            else:
                result.append(int(value))
        return result

    def _offsets_sizes_strides(self, op) -> tuple[list[Expr], list[Expr], list[Expr]]:
        segments = _operand_segments(op)
        return (self._mixed(op.attributes["static_offsets"], segments[1]),
                self._mixed(op.attributes["static_sizes"], segments[2]),
                self._mixed(op.attributes["static_strides"], segments[3]))

    def _reinterpret_cast(self, op) -> None:
        source = self.view(op, op.operands[0])
        offsets, sizes, strides = self._offsets_sizes_strides(op)
        self.views[op.results[0]] = source.reinterpret(offsets[0], sizes, strides)

    def _subview(self, op) -> None:
        source = self.view(op, op.operands[0])
        offsets, sizes, strides = self._offsets_sizes_strides(op)
        # Which unit dims a rank-reducing subview drops follows from the static sizes
        # and the result type, exactly as the verifier decides it.
        static_sizes = [None if s == _DYNAMIC else s
                        for s in ir.DenseI64ArrayAttr(op.attributes["static_sizes"])]
        result_shape = [None if s == _DYNAMIC else s
                        for s in ir.MemRefType(op.results[0].type).shape]
        dropped = rank_reduction_mask(static_sizes, result_shape)
        if dropped is None:
            raise error_at(op, "cannot tell which dimensions this subview drops")
        self.views[op.results[0]] = source.subview(offsets, sizes, strides, dropped)

    def _collapse_shape(self, op) -> None:
        groups = _reassociation(op)
        self.views[op.results[0]] = self.view(op, op.operands[0]).collapse(groups)

    def _expand_shape(self, op) -> None:
        groups = _reassociation(op)
        sizes = self._mixed(op.attributes["static_output_shape"], list(op.operands)[1:])
        self.views[op.results[0]] = self.view(op, op.operands[0]).expand(groups, sizes)

    def _memref_cast(self, op) -> None:
        self.views[op.results[0]] = self.view(op, op.operands[0])

    def _no_code(self, op) -> None:
        """Ops that print nothing: allocs are hoisted, deallocs are implicit."""

    def _load(self, op) -> None:
        view = self.view(op, op.operands[0])
        index = view.element([self.index_expr(v) for v in list(op.operands)[1:]])
        self.define(op, op.results[0], load_expr(self, view.buffer, index))

    def _store(self, op) -> None:
        value = self.operand(op.operands[0])
        view = self.view(op, op.operands[1])
        index = view.element([self.index_expr(v) for v in list(op.operands)[2:]])
        self.stmt(op, store_stmt(self, view.buffer, index, value))

    def _copy(self, op) -> None:
        emit_copy(self, op)

    # ------------------------------------------------------------ control flow

    def _declare_targets(self, op, results: Sequence[ir.Value],
                         namesakes: Sequence[Sequence[ir.Value]],
                         inits: Sequence[str] | None, fallback: str) -> list[Target]:
        """C variables for loop-carried values / if results, declared before the
        construct (initialized when `inits` is given). Each is named after the first
        of its `namesakes` (block argument, yielded value) with a source name."""
        targets = []
        for i, result in enumerate(results):
            candidates = [_value_name(v[i]) for v in namesakes if i < len(v)]
            wanted = next((c for c in candidates if c), None) or source_name(op.location)
            name = self.names.from_source(wanted, fallback)
            ctype = self.ctype_of(op, result)
            init = f" = {inits[i]}" if inits is not None else ""
            self.stmt(op, f"{ctype} {name}{init};")
            targets.append(Target(name, ctype))
            self.exprs[result] = name
        return targets

    def _for(self, op) -> None:
        body = op.regions[0].blocks[0]
        operands = list(op.operands)
        lower, upper, step = (self.operand(v) for v in operands[:3])
        inits = [self.operand(v) for v in operands[3:]]
        iv, carried_args = body.arguments[0], list(body.arguments)[1:]
        yielded = list(_terminator(body).operands)
        targets = self._declare_targets(op, list(op.results), [carried_args, yielded],
                                        inits, "acc")
        for arg, target in zip(carried_args, targets):
            self.exprs[arg] = target.name
        self.names.push_scope()
        depth_name = _LOOP_VAR_NAMES[min(self.loop_depth, len(_LOOP_VAR_NAMES) - 1)]
        var = self.names.fresh(sanitize(source_name(iv.location) or "") or depth_name)
        self.exprs[iv] = var
        iv_ctype = self.ctype_of(op, iv)
        bound = f"{var} < {upper}"
        if "unsignedCmp" in op.attributes:
            iv_kind, _ = self.shape_of(op, iv)
            bound = f"{self.unsigned(var, iv_kind, 1)} < {self.unsigned(upper, iv_kind, 1)}"
        increment = f"++{var}" if step == "1" else f"{var} += {step}"
        self.open_stmt(op, f"for ({iv_ctype} {var} = {lower}; {bound}; {increment})")
        self.loop_depth += 1
        self._emit_region_block(body, targets)
        self.loop_depth -= 1
        self.out.close()
        self.names.pop_scope()

    def _if(self, op) -> None:
        results = list(op.results)
        yielded = list(_terminator(op.regions[0].blocks[0]).operands)
        targets = self._declare_targets(op, results, [yielded], None, "r")
        self.open_stmt(op, f"if ({self.operand(op.operands[0])})")
        self._emit_region_block(op.regions[0].blocks[0], targets)
        else_region = op.regions[1]
        if len(else_region.blocks) and _has_code(else_region.blocks[0]):
            self.out.close("} else {")
            self.out.depth += 1
            self._emit_region_block(else_region.blocks[0], targets)
        self.out.close()

    def _while(self, op) -> None:
        before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
        inits = [self.operand(v) for v in op.operands]
        carried = self._declare_targets(
            op, list(before.arguments),
            [list(before.arguments), list(_terminator(after).operands)], inits, "w")
        results = self._declare_targets(
            op, list(op.results),
            [list(after.arguments), list(_terminator(before).operands)[1:]], None, "r")
        for arg, target in zip(after.arguments, results):
            self.exprs[arg] = target.name
        self.open_stmt(op, "while (1)")
        # Both regions print into the one C block of the loop: one name scope.
        self.names.push_scope()
        self._emit_region_block(before, results, own_scope=False)
        self._emit_region_block(after, carried, own_scope=False)
        self.names.pop_scope()
        self.out.close()

    def _yield(self, op) -> None:
        targets = self.targets[-1] if self.targets else []
        values = [self.operand(v) for v in op.operands]
        self._assign_all(op, targets, values)

    def _condition(self, op) -> None:
        operands = list(op.operands)
        self._assign_all(op, self.targets[-1], [self.operand(v) for v in operands[1:]])
        self.stmt(op, f"if (!{atom(self.operand(operands[0]))}) break;")

    def _assign_all(self, op, targets: list[Target], values: list[str]) -> None:
        """targets[i] = values[i] for all i at once. Assignments are ordered so that
        no target is overwritten while another assignment still reads it; a cycle
        (a swap of loop-carried values) saves one target in a temporary first."""
        pending = [(t, v) for t, v in zip(targets, values) if t.name != v]
        while pending:
            still_read = {v for _, v in pending}
            ready = next((p for p in pending if p[0].name not in still_read), None)
            if ready is None:
                target = pending[0][0]
                saved = self.names.fresh(f"{target.name}_prev")
                self.stmt(op, f"{target.ctype} {saved} = {target.name};")
                pending = [(t, saved if v == target.name else v) for t, v in pending]
                continue
            self.stmt(op, f"{ready[0].name} = {ready[1]};")
            pending.remove(ready)

    # --------------------------------------------------------------- gpu, func

    def _gpu_index(self, op) -> None:
        builtin, default = _GPU_INDEX[op.operation.name]
        dim = str(op.attributes["dimension"]).rstrip(">")[-1]
        self.define(op, op.results[0], f"{builtin}({'xyz'.index(dim)})", "long",
                    default_name=f"{default}_{dim}")

    def _barrier(self, op) -> None:
        if self.single_work_item():
            # A one-work-item group has no one to wait for: the barrier's remaining effect
            # is ordering this work-item's memory accesses, which is a fence. PoCL's
            # work-group compiler can take minutes on kernels with barriers, fences it
            # compiles as usual.
            self.stmt(op, "mem_fence(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);")
            return
        self.stmt(op, "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);")

    def _return(self, op) -> None:
        if len(op.operands):
            raise error_at(op, "kernels return nothing")

    # ------------------------------------------------------------------ vector

    def _vector_access(self, op, memref_value: ir.Value, indices: Sequence[ir.Value],
                       vector_type: ir.Type) -> tuple[Buffer, str, int, str]:
        """(buffer, pointer to the first element, width, element kind) of a 1-D
        unit-stride vector access."""
        shape = ct.vector_shape(vector_type)
        view = self.view(op, memref_value)
        if shape is None or view.rank == 0 or view.strides[-1] != 1:
            raise error_at(op, "only 1-D vectors of width 2, 3, 4, 8, 16 over unit-"
                               "stride memory are supported")
        if "permutation_map" in op.attributes:
            amap = ir.AffineMapAttr(op.attributes["permutation_map"]).value
            if amap != ir.AffineMap.get_minor_identity(amap.n_dims, 1):
                raise error_at(op, "transposing vector transfers are not supported")
        if "in_bounds" in op.attributes:
            if not all(ir.BoolAttr(b).value for b in ir.ArrayAttr(op.attributes["in_bounds"])):
                raise error_at(op, "vector transfers must be in bounds")
        kind, width = shape
        if kind in ("i1", "bf16") + ct.FP8_KINDS:
            raise error_at(op, f"vector loads/stores of {kind} are not supported")
        index = view.element([self.index_expr(v) for v in indices])
        self.vector_index = index  # for bounds checks
        return view.buffer, pointer(view, index), width, kind

    def _vector_read(self, op) -> None:
        name = op.operation.name
        segments = _operand_segments(op) if name == "vector.transfer_read" else None
        if segments is not None and len(segments) > 3 and len(segments[3]):
            raise error_at(op, "masked vector transfers are not supported")
        indices = segments[1] if segments is not None else list(op.operands)[1:]
        buffer, pointer, width, kind = self._vector_access(
            op, op.operands[0], indices, op.results[0].type)
        if buffer.is_global and kind == "f16":
            expr = f"vload_half{width}(0, {pointer})"
        else:
            expr = f"vload{width}(0, {pointer})"
        if self.bounds is not None:
            expr = self.bounds.vector_load(buffer, self.vector_index, width, pointer, expr)
        self.define(op, op.results[0], expr)

    def _vector_write(self, op) -> None:
        name = op.operation.name
        if name == "vector.transfer_write":
            segments = _operand_segments(op)
            if len(segments) > 3 and len(segments[3]):
                raise error_at(op, "masked vector transfers are not supported")
            indices = segments[2]
        else:
            indices = list(op.operands)[2:]
        buffer, pointer, width, kind = self._vector_access(
            op, op.operands[1], indices, op.operands[0].type)
        value = self.operand(op.operands[0])
        if buffer.is_global and kind == "f16":
            text = f"vstore_half{width}_rte({value}, 0, {pointer});"
        else:
            text = f"vstore{width}({value}, 0, {pointer});"
        if self.bounds is not None:
            text = self.bounds.vector_store(buffer, self.vector_index, width, pointer, value, text)
        self.stmt(op, text)

    def _vector_lane(self, op, position_operands: Sequence[ir.Value]) -> str:
        positions = [int(p) for p in ir.DenseI64ArrayAttr(op.attributes["static_position"])]
        if len(positions) != 1 or positions[0] < 0 or len(position_operands):
            raise error_at(op, "only constant positions in 1-D vectors are supported")
        return f"s{positions[0]:x}"

    def _vector_extract(self, op) -> None:
        lane = self._vector_lane(op, list(op.operands)[1:])
        self.define(op, op.results[0], f"{atom(self.operand(op.operands[0]))}.{lane}")

    def _vector_insert(self, op) -> None:
        lane = self._vector_lane(op, list(op.operands)[2:])
        name = self.define(op, op.results[0], self.operand(op.operands[1]))
        self.stmt(op, f"{name}.{lane} = {self.operand(op.operands[0])};")

    def _vector_broadcast(self, op) -> None:
        source, result = op.operands[0], op.results[0]
        if source.type == result.type:
            self.alias(result, source)
            return
        if ct.scalar_kind(source.type) is None:
            raise error_at(op, "only scalar-to-vector broadcasts are supported")
        ctype = self.ctype_of(op, result)
        self.define(op, result, f"({ctype})({self.operand(source)})")

    def _vector_from_elements(self, op) -> None:
        result = op.results[0]
        if ir.VectorType(result.type).rank != 1:
            raise error_at(op, "only 1-D vectors are supported")
        lanes = ", ".join(self.operand(v) for v in op.operands)
        self.define(op, result, f"({self.ctype_of(op, result)})({lanes})")


_SHIFTS = {"arith.shli", "arith.shrsi", "arith.shrui"}


def _wrapping_format(name: str, kind: str, width: int) -> str | None:
    """Wrap-around formats for signed +, -, *, << (see optable.WRAPPING)."""
    if kind not in WRAPPING_KINDS:
        return None
    return (VECTOR_WRAPPING if width > 1 else WRAPPING).get(name)


def _needs_wide_literal(name: str, kind: str, is_literal: list[bool]) -> bool:
    """Whether the first operand of a 64-bit op must be spelled `5L`: C types an
    expression by its operands, so `1 << n` and `1024 * 1048576` would be int."""
    return (ct.BIT_WIDTH.get(kind) == 64 and ct.is_int(kind) and bool(is_literal)
            and is_literal[0] and (name in _SHIFTS or all(is_literal)))


# ---------------------------------------------------------------------------
# Small IR utilities
# ---------------------------------------------------------------------------

_DYNAMIC = ir.ShapedType.get_dynamic_size()


def _walk(region: ir.Region):
    for block in region.blocks:
        for op in block.operations:
            yield op
            for inner in op.regions:
                yield from _walk(inner)


def _terminator(block: ir.Block):
    return list(block.operations)[-1]


def _value_name(value: ir.Value) -> str | None:
    """The source name of a block argument or of the op defining a value."""
    owner = value.owner
    loc = value.location if isinstance(owner, ir.Block) else owner.location
    return source_name(loc)


def _has_uses(value: ir.Value) -> bool:
    return any(True for _ in value.uses)


def _has_code(block: ir.Block) -> bool:
    ops = list(block.operations)
    return len(ops) > 1 or (len(ops) == 1 and len(ops[0].operands) > 0)


def _is_pure(name: str) -> bool:
    return name.startswith(_PURE_PREFIXES) or name in _PURE_OPS


def _identity(mt: ir.MemRefType) -> bool:
    """Whether a memref type has the default row-major layout."""
    layout = mt.layout
    if isinstance(layout, ir.AffineMapAttr):
        return ir.AffineMapAttr(layout).value == ir.AffineMap.get_identity(mt.rank)
    strides, offset = mt.get_strides_and_offset()
    return offset == 0 and tuple(strides) == View.contiguous(None, list(mt.shape)).strides


def _operand_segments(op) -> list[list[ir.Value]]:
    """Operands grouped by the op's `operandSegmentSizes`."""
    sizes = [int(s) for s in ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])]
    operands = list(op.operands)
    segments, start = [], 0
    for size in sizes:
        segments.append(operands[start:start + size])
        start += size
    return segments


def _reassociation(op) -> list[list[int]]:
    return [[ir.IntegerAttr(d).value for d in ir.ArrayAttr(group)]
            for group in ir.ArrayAttr(op.attributes["reassociation"])]


def _scalar_attr_value(attr: ir.Attribute, kind: str):
    if kind == "i1":
        return bool(ir.BoolAttr(attr).value) if isinstance(attr, ir.BoolAttr) \
            else bool(ir.IntegerAttr(attr).value)
    if ct.is_int(kind):
        return ir.IntegerAttr(attr).value
    return ir.FloatAttr(attr).value


_HANDLERS: dict[str, Callable[[KernelEmitter, ir.OpView], None]] = {
    "arith.constant": KernelEmitter._constant,
    "arith.cmpi": KernelEmitter._compare,
    "arith.cmpf": KernelEmitter._compare,
    "arith.select": KernelEmitter._select,
    "memref.alloc": KernelEmitter._no_code,
    "memref.alloca": KernelEmitter._no_code,
    "memref.dealloc": KernelEmitter._no_code,
    "memref.reinterpret_cast": KernelEmitter._reinterpret_cast,
    "memref.subview": KernelEmitter._subview,
    "memref.collapse_shape": KernelEmitter._collapse_shape,
    "memref.expand_shape": KernelEmitter._expand_shape,
    "memref.cast": KernelEmitter._memref_cast,
    "memref.extract_aligned_pointer_as_index": KernelEmitter._extract_pointer,
    "memref.load": KernelEmitter._load,
    "memref.store": KernelEmitter._store,
    "memref.copy": KernelEmitter._copy,
    "scf.for": KernelEmitter._for,
    "scf.if": KernelEmitter._if,
    "scf.while": KernelEmitter._while,
    "scf.yield": KernelEmitter._yield,
    "scf.condition": KernelEmitter._condition,
    "gpu.block_id": KernelEmitter._gpu_index,
    "gpu.grid_dim": KernelEmitter._gpu_index,
    "gpu.thread_id": KernelEmitter._gpu_index,
    "gpu.block_dim": KernelEmitter._gpu_index,
    "gpu.barrier": KernelEmitter._barrier,
    "func.return": KernelEmitter._return,
    "vector.transfer_read": KernelEmitter._vector_read,
    "vector.load": KernelEmitter._vector_read,
    "vector.transfer_write": KernelEmitter._vector_write,
    "vector.store": KernelEmitter._vector_write,
    "vector.extract": KernelEmitter._vector_extract,
    "vector.insert": KernelEmitter._vector_insert,
    "vector.broadcast": KernelEmitter._vector_broadcast,
    "vector.splat": KernelEmitter._vector_broadcast,
    "vector.from_elements": KernelEmitter._vector_from_elements,
    **{name: KernelEmitter._elementwise for name in ELEMENTWISE},
    "func.call": KernelEmitter._opencl_call,
    **{name: KernelEmitter._cast for name in CAST_OPS},
}

# Atomics and printf live in their own module (it imports Target and _pointer from here).
from . import atomics as _atomics  # noqa: E402

_HANDLERS.update(_atomics.HANDLERS)
