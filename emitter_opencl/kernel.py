"""Print OpenCL C 1.2 from a memref-stage module (see docs/memref-stage.md); kernels
that call work-group collective functions (collectives.py) are OpenCL C 2.0.

The emitter walks the single kernel function once, in program order:
  * scalar SSA values become C locals (constants become literals at their uses);
  * memref values become `View`s (root buffer + index arithmetic), never C values;
  * `memref.alloc`s become `__local` arrays declared at kernel scope;
  * structured control flow (scf) maps onto C loops and ifs, with loop-carried
    values as variables declared before the loop and assigned at `scf.yield`.
Anything outside the contract raises `OpenCLEmitError` naming the op and its
source location.

This module assembles the kernel: its signature, the `__local` declarations, the
dispatch of each op to the handler table of its concern (scalars.py, control_flow.py,
vectors.py, memory.py, atomics.py) and the state those handlers share.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from mlir import ir
# Importing the dialect modules registers their op classes with the bindings.
from mlir.dialects import arith, func, gpu, math, memref, scf, vector  # noqa: F401

from opencl_abi import BOUNDS_EXTENT, BOUNDS_RECORD, hidden_parameters
from triton_spirv.ir_helpers import root_buffer

from . import atomics, collectives, control_flow, memory, prefetch, scalars, vectors
from . import ctypes_table as ct
from .bounds import HELPER_NAMES as BOUNDS_HELPER_NAMES, BoundsChecks
from .control_flow import Target
from .errors import OpenCLEmitError, error_at
from .helpers import HELPER_NAMES, HelperSet
from .ir_utils import has_identity_layout, walk
from .locations import SourceLine, real_source_line, source_line, source_name
from .names import NameTable, sanitize
from .views import Buffer, Expr, View, inlined_operand, product


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
    source: str                          # complete OpenCL C 1.2 program (2.0+: below)
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
    # Kernels whose work-groups run consecutive programs (`opencl.program_loop`): their
    # last parameter (before bounds-checked mode's) is the grid's first dimension, which
    # the launcher passes.
    program_loop: bool = False
    # Kernels that call work-group collective functions (collectives.py): built with
    # the OpenCL C version in which the target has them.
    work_group_collectives: bool = False
    # Kernels that call sub-group functions (collectives.py): built with the OpenCL C
    # version in which the target has them.
    sub_group_functions: bool = False
    # Kernels marked `opencl.unoptimized_build` (a device quirk's, memref_stage/
    # unoptimized_builds.py): built with -cl-opt-disable.
    unoptimized_build: bool = False
    # Kernels with 64-bit atomics (cl_khr_int64_base_atomics / _extended_atomics): the
    # source line of the first, for the error on devices without them; "" when none.
    int64_atomics_line: str = ""


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


Handler = Callable[["KernelEmitter", ir.OpView], None]


def _handler_table(*tables: dict[str, Handler]) -> dict[str, Handler]:
    """One op -> handler table from those of the concern modules; an op claimed by
    two of them is a bug."""
    merged: dict[str, Handler] = {}
    for table in tables:
        claimed = merged.keys() & table.keys()
        assert not claimed, f"ops handled twice: {sorted(claimed)}"
        merged.update(table)
    return merged


_HANDLERS = _handler_table(scalars.HANDLERS, control_flow.HANDLERS, vectors.HANDLERS,
                           memory.HANDLERS, prefetch.HANDLERS, atomics.HANDLERS,
                           collectives.HANDLERS)

# Results used once are inlined up to this length: longer ones read better named.
_INLINE_MAX_CHARS = 48
_TERMINATORS = {"scf.yield", "scf.condition", "memref.atomic_yield"}

# Ops with no side effects: skipped when none of their results is used.
_PURE_PREFIXES = ("arith.", "math.")
_PURE_OPS = {"memref.load", "memref.dim", "memref.extract_aligned_pointer_as_index", "gpu.block_id", "gpu.grid_dim", "gpu.thread_id",
             "gpu.block_dim", "vector.transfer_read", "vector.load",
             "vector.extract", "vector.insert", "vector.broadcast", "vector.splat",
             "vector.from_elements"}


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
        # buffer, ctype, extent, and the source line that made a __local one
        self.local_arrays: list[tuple[Buffer, str, str, str]] = []
        self.local_tiles: list[LocalTile] = []
        self.targets: list[list[Target]] = []           # for scf.yield / scf.condition
        self.last_source: SourceLine | None = None
        self.int64_atomics_line = ""                   # see EmittedKernel
        self.loop_depth = 0                             # scf.for nesting, for i, j, k
        self.current_op = None                          # the op being printed
        self.vector_index: Expr = 0                     # of the last vector access
        self.statement_writes: _StatementWrites | None = None  # computed when needed
        self.bounds: BoundsChecks | None = None
        # What the kernel-wide questions below ask of every op, gathered in one walk:
        # asking each of them with its own walk made a kernel's cost a multiple of its
        # size per question.
        self.inventory = _Inventory(func_op)
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
        kernel.program_loop = "opencl.program_loop" in self.func.attributes
        kernel.unoptimized_build = "opencl.unoptimized_build" in self.func.attributes
        kernel.work_group_collectives = self._uses_collectives()
        kernel.sub_group_functions = self._uses_sub_groups()
        kernel.int64_atomics_line = self.int64_atomics_line
        return kernel

    def _uses_collectives(self) -> bool:
        return "gpu.all_reduce" in self.inventory.op_names

    def _uses_sub_groups(self) -> bool:
        return not self.inventory.op_names.isdisjoint(collectives.SUB_GROUP_OPS)

    def _flat_memory(self) -> int:
        """How many flat memory buffers (tt.int_to_ptr) follow the kernel's own parameters."""
        attrs = self.func.attributes
        return int(ir.IntegerAttr(attrs["opencl.flat_memory"]).value) \
            if "opencl.flat_memory" in attrs else 0

    def _abi_facts(self) -> dict:
        """What decides the kernel's hidden parameters (opencl_abi.hidden_parameters)."""
        attrs = self.func.attributes
        return dict(program_loop="opencl.program_loop" in attrs,
                    flat_memory=self._flat_memory(), asserts="opencl.asserts" in attrs)

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
        # The hidden parameters the function has already (program loop, flat memory, assert
        # record) come before bounds-checked mode's and are not checked.
        arguments = list(self.func.regions[0].blocks[0].arguments)
        facts = self._abi_facts()
        n_own = len(arguments) - len(hidden_parameters(0, **facts))
        buffers = [(i, self.views[arg].buffer.name) for i, arg in enumerate(arguments[:n_own])
                   if arg in self.views]
        hidden = hidden_parameters(n_own, bounds_buffers=[index for index, _ in buffers], **facts)
        return self.bounds.add_hidden_params(
            params, buffers, [p for p in hidden if p.kind in (BOUNDS_EXTENT, BOUNDS_RECORD)])

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
        version = ("2.0 or later (sub-group functions)" if self._uses_sub_groups() else
                   "2.0 (work-group collective functions)" if self._uses_collectives() else "1.2")
        header = (f"// Kernel {name}: OpenCL C {version} printed from its memref-stage MLIR.\n"
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
        # knows it specializes the work-group function (the default CPU runtime builds barrier-free code
        # for one work-item instead of generic work-item loops).
        attribute = "__attribute__((reqd_work_group_size({}, {}, {})))\n".format(*local_size)
        # A __local array's line follows it (launcher/resources.py names it when the
        # tiles do not fit the device).
        declarations = [f"  {'__local ' if buf.space == 'local' else ''}{ctype} {buf.name}[{extent}];"
                        + (f"  // {origin.rstrip(chr(92) + ' ')}" if origin else "")
                        for buf, ctype, extent, origin in self.local_arrays]
        kernel = (f"{attribute}__kernel void {name}({', '.join(params)}) {{\n"
                  + "".join(d + "\n" for d in declarations)
                  + (body + "\n" if body else "") + "}")
        parts.append(kernel)
        return "\n\n".join(parts) + "\n"

    def _uses_16_bit_floats(self) -> bool:
        return any("f16" in t for t in self.inventory.value_types())  # f16, bf16, vectors, memrefs

    def _uses_fp8(self) -> bool:
        return any("f8E" in t for t in self.inventory.value_types())

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
            if mt.rank != 1 or kind is None or kind == "index" or not has_identity_layout(mt):
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
        writers = _writers(self.inventory.ops)
        for op in self.inventory.ops:
            if op.operation.name not in ("memref.alloc", "memref.alloca"):
                continue
            mt = ir.MemRefType(op.results[0].type)
            kind = ct.scalar_kind(mt.element_type)
            if kind is None or not mt.has_static_shape or not has_identity_layout(mt):
                raise error_at(op, f"work-group buffers need a static shape, identity "
                                   f"layout and scalar elements, not {mt}")
            tile_writers = writers.get(op.results[0], [])
            wanted = _tile_name(op, tile_writers)
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
            origin = "" if private else _tile_origin(op, tile_writers)
            self.local_arrays.append((buffer, ctype, extent, origin))
            self.views[op.results[0]] = View.contiguous(buffer, shape)
            if private:
                continue
            size = count * ct.CTYPE_BYTES[ctype]
            self.local_tiles.append(LocalTile(name, ctype, tuple(shape), size, origin))
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
        """C text of a scalar/vector value: a variable name, an inlined expression or
        a literal. Names and expressions have the value's C type (`define` keeps it
        so); literals have it when `typed` (`5L`, `(char)5`), else C's own (`5` is an
        int). Operands of overloaded builtins (`min`, `max`, `select`, ...) and of
        `?:` are typed: `max(long, int)` is ambiguous in OpenCL C."""
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
               role: str | None = None, python_name: bool = True,
               expr_ctype: str | None = None) -> str:
        """The C text of `result`: inlined at its one use when it is an integer step on
        the way to a Python value, else a C variable declared and initialized here,
        named after the Python variable the result is (unless `python_name` is False),
        else by its `role`, else `v0`, `v1`, ... `expr_ctype` is the C type of `expr`
        where it is not the result's (`(uint)a >> b` of an i32): an inlined `expr` is
        converted, so that the text of every value has its value's C type."""
        ctype = ctype or self.ctype_of(op, result)
        source = self.python_name(op) if python_name else None
        if source is None and self._inlinable(op, result, ctype, expr):
            if expr_ctype not in (None, ctype):
                expr = f"({ctype})({expr})"
            self.exprs[result] = inlined_operand(expr)
            return self.exprs[result]
        wanted = sanitize(source or "") or sanitize(role or "")
        name = self.names.fresh(wanted) if wanted else self.names.numbered("v")
        self.stmt(op, f"{ctype} {name} = {expr};")
        self.exprs[result] = name
        return name

    def _statement_stores_other(self, op, name: str, line) -> bool:
        """Whether the statement that made `op` goes on to write memory with something
        other than `op`'s result (a load's extent before its copy into the tile):
        then the statement's value is in memory and `op` is a step on the way."""
        if self.statement_writes is None:
            self.statement_writes = _statement_writes(self.func)
        block, index = self.statement_writes.positions[op.operation]
        results = list(op.results)
        return any(position > index and value not in results
                   for position, value in self.statement_writes.writes.get(
                       (block, name, line), ()))

    def is_kernel_argument(self, value: ir.Value) -> bool:
        return (isinstance(value.owner, ir.Block)
                and value.owner == self.func.regions[0].blocks[0])

    def python_name(self, op) -> str | None:
        """The Python variable that `op`'s result is: the name of its NameLoc, unless
        an op of the same statement (same name, same line) computes on from the
        result. Then the result is a step on the way (a bound, an address, a slice
        loaded for an elementwise op) and not the value the source assigned."""
        name = source_name(op.location)
        if not name:
            return None
        line = source_line(op.location)
        if self._statement_stores_other(op, name, line):
            return None
        for result in op.results:
            for use in result.uses:
                user = use.owner
                if (len(user.results) and source_name(user.location) == name
                        and source_line(user.location) == line):
                    return None
        return name

    @staticmethod
    def _inlinable(op, result: ir.Value, ctype: str, expr: str) -> bool:
        """Whether `result` is printed inside its one use rather than as a variable:
        integer arithmetic (pure; C types it as declared, and no float contraction can
        change results) used once, by a non-terminator of the same block (so it is
        evaluated once, and every variable it reads still holds its value)."""
        if not op.operation.name.startswith("arith.") or ctype not in ("int", "long"):
            return False
        uses = list(result.uses)
        if len(uses) != 1 or len(expr) > _INLINE_MAX_CHARS:
            return False
        user = uses[0].owner
        return (user.operation.block == op.operation.block
                and user.operation.name not in _TERMINATORS)

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

    def emit_region_block(self, block: ir.Block, targets: list[Target],
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


# Ops that write a memref operand, by operand position.
_WRITES = {"memref.store": 1, "vector.store": 1, "vector.transfer_write": 1,
           "memref.copy": 1}
class _Inventory:
    """The kernel's ops in program order (nested ones included) and their names, from
    one walk; the printer reads the IR and never changes it, so they stay true."""

    def __init__(self, func_op: ir.OpView):
        self.func = func_op
        self.ops = list(walk(func_op.regions[0]))
        self.op_names = {op.operation.name for op in self.ops}
        self._value_types: list[str] | None = None

    def value_types(self) -> list[str]:
        """The types of the kernel's arguments and of every op result, as text."""
        if self._value_types is None:
            values = list(self.func.regions[0].blocks[0].arguments)
            for op in self.ops:
                values += list(op.results)
            self._value_types = [str(v.type) for v in values]
        return self._value_types


def _writers(ops: list) -> dict[ir.Value, list]:
    """Per buffer, the ops of `ops` that write it, in program order."""
    found: dict[ir.Value, list] = {}
    for op in ops:
        position = _WRITES.get(op.operation.name)
        if position is not None:
            found.setdefault(root_buffer(op.operands[position]), []).append(op)
    return found


def _tile_name(alloc, writers: list) -> str | None:
    """A tile is named after the Python value its writers compute, when they all agree:
    allocs are shared after bufferization (one `tl.arange` tile serves several
    statements), so the alloc's own location may name another value."""
    named = {source_name(op.location) for op in writers} - {None}
    if not named:
        return source_name(alloc.location)
    return next(iter(named)) if len(named) == 1 else None


def _tile_origin(alloc, writers: list) -> str:
    """The source line that made a tile, else the first line that writes it: Triton
    drops the location of constants it hoists, so the tile of an accumulator that
    `tl.zeros` starts has none of its own (its line is then `acc += tl.dot(...)`)."""
    for op in [alloc] + writers:
        origin = _origin(op)
        if origin:
            return origin
    return ""


@dataclass
class _StatementWrites:
    """Memory writes by the statement that made them, per block: for (block, source
    name, source line), the position in the block of each op that writes (or holds
    an op that writes) and what it writes (the stored value, or the copy's source)."""
    positions: dict = field(default_factory=dict)   # op -> (block, position)
    writes: dict = field(default_factory=dict)      # (block, name, line) -> [(pos, value)]


def _statement_writes(func_op) -> _StatementWrites:
    found = _StatementWrites()

    def visit(block: ir.Block) -> list[tuple[str, object, ir.Value]]:
        inside = []
        for position, op in enumerate(block.operations):
            found.positions[op.operation] = (block, position)
            here = []
            if op.operation.name in _WRITES:
                here.append((source_name(op.location), source_line(op.location),
                             op.operands[0]))
            for region in op.regions:
                for nested in region.blocks:
                    here += visit(nested)
            for name, line, value in here:
                found.writes.setdefault((block, name, line), []).append((position, value))
            inside += here
        return inside

    visit(func_op.regions[0].blocks[0])
    return found


def _has_uses(value: ir.Value) -> bool:
    return any(True for _ in value.uses)


def _is_pure(name: str) -> bool:
    return name.startswith(_PURE_PREFIXES) or name in _PURE_OPS
