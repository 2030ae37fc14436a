"""TTIR (as read by `triton_spirv.ttir.reader`) -> Linalg on tensors.

One `KernelConverter` per `tt.func`. It walks the TTIR ops in order and keeps, for each
TTIR value, what it became (`values.Value`, `Pointer`, `PointerTensor`). Each op kind has
one handler in `HANDLERS`; arith and math ops share the elementwise handler, which wraps
the scalar op in a `linalg.generic` when its operands are tensors. Handlers of whole op
families live in modules of their own: loops and branches (loops_and_branches.py),
reductions, shapes, atomics, debug ops; pointer types are read by pointer_types.py.

Before conversion, functions whose TTIR has several blocks (an early `return` inside an
`if`) are lifted to structured control flow by upstream `lift-cf-to-scf`
(control_flow.py); `tt.call` is inlined by converting the callee's body in place.

Kernel signature: each `!tt.ptr<T>` argument becomes a `memref<?xT>` (the whole buffer),
scalars keep their type. Hidden arguments follow: the flat memory buffers of kernels
with `tt.int_to_ptr` (flat.py), then the assert record of kernels with `tt.assert`
(debug.py). Program ids are `gpu.block_id`, numbers of programs
`gpu.grid_dim`: one Triton program is one OpenCL work-group.
"""
from __future__ import annotations

from typing import Callable, Dict, Optional

from mlir import ir
from mlir.dialects import arith, func, gpu, scf, tensor

from opencl_abi import ASSERT_RECORD, FLAT_MEMORY, hidden_parameters

from ..dialect_modules import use_light_dialect_modules
from ..ir_helpers import named
from . import analysis
from . import builders as b
from . import linalg_ops as linalg
from . import memory
from . import reductions
from . import elementwise
from . import shapes
from . import atomics
from . import debug
from . import flat
from .control_flow import ControlFlowError, lift_control_flow
from . import choices
from . import loops_and_branches
from . import versioning
from .pointer_types import is_pointer_type, pointee_of
from .values import Converted, Pointer, PointerChoice, PointerTensor, Value


class ConversionError(Exception):
    """A TTIR op or type the converter does not support, with where it came from."""


def _attr_int(op, name: str) -> int:
    return ir.IntegerAttr(op.attributes[name]).value


def _python_location(loc: ir.Location) -> str:
    from ..ttir.reader import source_line
    where = source_line(loc)
    if where is None:
        return "unknown location"
    file, line, _col = where
    return f"{file}:{line}"


# ---------------------------------------------------------------------------------------
# The converter


class KernelConverter:
    def __init__(self, tt_func: ir.Operation, out_module: ir.Module,
                 functions: Optional[Dict[str, ir.Operation]] = None):
        self.tt_func = tt_func
        # Every tt.func of the TTIR module by name: the callees of tt.call.
        self.functions = functions or {}
        # While a callee is inlined: what its tt.return hands back to the tt.call, and the
        # callees being inlined (a recursive call would never end).
        self.return_sink: Optional[Callable] = None
        self.active_calls: list = []
        self.name = ir.StringAttr(tt_func.attributes["sym_name"]).value
        self.out_module = out_module
        self.values: Dict[ir.Value, Converted] = {}
        # Templates for the values an scf.yield hands to its parent op, set by the parent.
        self.yield_sink: Optional[Callable] = None
        # Pointers Triton bitcast to an integer type of the same width (float atomics):
        # TTIR value -> the integer element type the atomic sees.
        self.reinterpreted: Dict[ir.Value, ir.Type] = {}
        # tt.assert: the AssertSite (opencl_abi) per assert id and the hidden record argument
        # (debug.py); no record when the kernel has no asserts. The asserts and pointer
        # casts of the functions it calls count: their bodies are converted in place.
        reached = _with_callees(tt_func, self.functions)
        self.asserts = _unique(key for f in reached for key in debug.collect_asserts(f))
        self.assert_record: Optional[ir.Value] = None
        # tt.int_to_ptr: element type of each hidden flat memory buffer (flat.py) and
        # str(type) -> that argument.
        self.flat_types = _unique(
            (t for f in reached for t in flat.collect_pointees(f, pointee_of)), key=str)
        self.flat_buffers: Dict[str, ir.Value] = {}
        # Kernel versioning (versioning.py): how many versioned branches the op being
        # converted sits in, and how many of them are fallbacks.
        self.branch_depth = 0
        self.fallback = 0
        self.versioning_allowed = True
        # Reductions along a contiguous axis run in LANES accumulators (reductions.py):
        # a one-work-item program's vector lanes. GPU shapes turn the whole reduction
        # into a work-group tree instead (memref_stage/work_group_sharing.py).
        self.lane_reductions = True

    # -- errors ---------------------------------------------------------------------------

    def error(self, op, message: str) -> ConversionError:
        return ConversionError(
            f"{message}\n  op: {op.name}\n  kernel: {self.name}\n"
            f"  at: {_python_location(op.location)}")

    # -- value map ------------------------------------------------------------------------

    def get(self, v: ir.Value) -> Converted:
        return self.values[v]

    def get_value(self, op, v: ir.Value) -> Value:
        c = self.values[v]
        if not isinstance(c, Value):
            raise self.error(op, "a pointer is used where a number is expected")
        return c

    def set(self, result: ir.Value, converted: Converted):
        self.values[result] = converted

    # -- driver ---------------------------------------------------------------------------

    def convert(self) -> func.FuncOp:
        entry = self.tt_func.regions[0].blocks[0]
        arg_types = []
        for arg in entry.arguments:
            pointee = pointee_of(arg.type)
            if pointee is not None and _is_i1(pointee):
                pointee = ir.IntegerType.get_signless(8)  # bool buffers hold bytes
            if pointee is not None:
                arg_types.append(ir.MemRefType.get([ir.ShapedType.get_dynamic_size()], pointee))
            elif b.is_tensor(arg.type) or not _is_scalar_number(arg.type):
                raise self.error(self.tt_func, f"kernel argument of type {arg.type} is not supported")
            else:
                arg_types.append(arg.type)
        names = [_arg_name(a, i) for i, a in enumerate(entry.arguments)]
        hidden_types, hidden_names = self._hidden_arguments()
        with self.tt_func.location, ir.InsertionPoint(self.out_module.body):
            kernel = func.FuncOp(self.name, ir.FunctionType.get(arg_types + hidden_types, []))
        kernel.attributes["opencl.arg_names"] = ir.ArrayAttr.get(
            [ir.StringAttr.get(n) for n in names + hidden_names])
        block = kernel.add_entry_block()
        self._bind_hidden_arguments(kernel, list(block.arguments)[len(entry.arguments):])
        with ir.InsertionPoint(block):
            for old, new in zip(entry.arguments, block.arguments):
                if pointee_of(old.type) is not None:
                    with old.location if hasattr(old, "location") else self.tt_func.location:
                        self.set(old, Pointer(new, arith.constant(b.i64(), 0)))
                else:
                    self.set(old, Value(new))
            # versions of the kernel's block each end at its tt.return; nothing follows
            kernel_exit = versioning.BlockExit([], lambda _results, _return: self._end_kernel())
            self.convert_block(entry, kernel_exit)
        return kernel

    def _hidden_arguments(self):
        """Arguments after the kernel's own: the flat memory buffers of tt.int_to_ptr
        (flat.py), then the assert record (debug.py). -> (types, names)"""
        dynamic = [ir.ShapedType.get_dynamic_size()]
        flat_types = iter(self.flat_types)
        types, names = [], []
        for parameter in hidden_parameters(0, flat_memory=len(self.flat_types),
                                           asserts=bool(self.asserts)):
            if parameter.kind == FLAT_MEMORY:
                pointee = next(flat_types)
                types.append(ir.MemRefType.get(dynamic, pointee))
                names.append(f"flat_memory_{pointee}")
            else:
                types.append(debug.assert_record_type())
                names.append(ASSERT_RECORD)
        return types, names

    def _bind_hidden_arguments(self, kernel, hidden):
        # in _hidden_arguments' order (opencl_abi)
        for t, arg in zip(self.flat_types, hidden):
            self.flat_buffers[str(t)] = arg
        if self.flat_types:
            kernel.attributes["opencl.flat_memory"] = ir.IntegerAttr.get(
                b.i64(), len(self.flat_types))
        if self.asserts:
            self.assert_record = hidden[len(self.flat_types)]
            kernel.attributes["opencl.asserts"] = debug.asserts_attr(self.asserts)

    def convert_block(self, block: ir.Block, block_exit: Optional[versioning.BlockExit] = None):
        """Converts `block`'s ops in order. With a `block_exit` (the kernel's own block, loop
        bodies), an op whose result is a block behind a run-time guard (versioning.py)
        splits the rest of the block into two versions."""
        self._convert_ops([op.operation for op in block.operations], block_exit)

    def _convert_ops(self, ops, block_exit: Optional[versioning.BlockExit]):
        for i, op in enumerate(ops):
            if block_exit is not None and self.versioning_allowed and not self.fallback:
                with op.location:
                    with versioning.guard_location(op.location):
                        guard = versioning.guard_of(self, op)
                    if guard is not None:
                        self._convert_versioned(op, ops[i + 1:], block_exit, *guard)
                        return
            self.convert_op(op)

    def _convert_versioned(self, op, rest, block_exit: versioning.BlockExit, condition, block):
        """`scf.if condition {op as the block; rest} else {op; rest}`, then the end of the
        block: the block's terminator in `rest` (tt.return, a loop body's scf.yield) ends
        each branch, handing on what the scf.if yields."""
        with versioning.versions_location(op, rest[-1]):
            if_op = scf.IfOp(condition, block_exit.types, has_else=True)
        self.branch_depth += 1
        try:
            with ir.InsertionPoint(if_op.then_block):
                self.convert_op(op)
                self.set(op.results[0], Value(self.get(op.results[0]).value, affine=block))
                self._convert_ops(rest, block_exit)
            self.fallback += 1  # no further versions inside the fallback: it is the rare path
            try:
                with ir.InsertionPoint(if_op.else_block):
                    self._convert_ops([op] + rest, None)
            finally:
                self.fallback -= 1
        finally:
            self.branch_depth -= 1
        block_exit.end(list(if_op.results), rest[-1])

    def _end_kernel(self):
        if self.branch_depth:
            scf.YieldOp([])
        else:
            func.ReturnOp([])

    def convert_op(self, op: ir.Operation):
        handler = HANDLERS.get(op.name)
        if handler is None and op.name.split(".")[0] in ("arith", "math"):
            handler = KernelConverter.elementwise
        if handler is None:
            raise self.error(op, f"unsupported operation '{op.name}'")
        if op.name not in CHOICE_AWARE and any(
                isinstance(self.values.get(v), PointerChoice) for v in op.operands):
            raise self.error(op, f"'{op.name}' on a pointer that selects between different "
                                 f"buffers is not supported")
        with op.location:
            handler(self, op)

    # -- program ids ----------------------------------------------------------------------

    def program_id(self, op):
        dim = ["x", "y", "z"][_attr_int(op, "axis")]
        idx = gpu.block_id(ir.Attribute.parse(f"#gpu<dim {dim}>"))
        self.set(op.results[0], Value(arith.index_cast(op.results[0].type, idx)))

    def num_programs(self, op):
        dim = ["x", "y", "z"][_attr_int(op, "axis")]
        n = gpu.grid_dim(ir.Attribute.parse(f"#gpu<dim {dim}>"))
        self.set(op.results[0], Value(arith.index_cast(op.results[0].type, n)))

    # -- tensor construction --------------------------------------------------------------

    def make_range(self, op):
        start = _attr_int(op, "start")
        rtype = op.results[0].type
        elem = b.element_type(rtype)

        def body(_out):
            i = linalg.IndexOp(0).result
            return [arith.index_cast(elem, arith.addi(i, b.const_index(start)))]

        value = b.generic([], [], [rtype], body)[0]
        self.set(op.results[0], Value(value, affine=analysis.AffineIndex(start, [1])))

    def constant(self, op):
        rtype = op.results[0].type
        attr = op.attributes["value"]
        if not b.is_tensor(rtype):
            self.set(op.results[0], Value(arith.ConstantOp(rtype, attr).result))
            return
        if not isinstance(attr, ir.DenseElementsAttr) or not ir.DenseElementsAttr(attr).is_splat:
            raise self.error(op, "only splat tensor constants are supported")
        elem = b.element_type(rtype)
        scalar = arith.ConstantOp(elem, ir.DenseElementsAttr(attr).get_splat_value()).result
        self.set_splat(op.results[0], scalar, b.shape_of(rtype))

    def set_splat(self, result, scalar: ir.Value, shape):
        affine = analysis.uniform(b.to_index(scalar), len(shape)) if b.is_integer(scalar.type) \
            and not _is_i1(scalar.type) else None
        box = analysis.box_from_condition(scalar, shape) if _is_i1(scalar.type) else None
        self.set(result, Value(b.splat(scalar, shape), affine=affine, box=box, splat_of=scalar))

    def splat(self, op):
        src = self.get(op.operands[0])
        shape = b.shape_of(op.results[0].type)
        if isinstance(src, PointerChoice):
            self.set(op.results[0],
                     choices.map_options(src, lambda p: _splat_pointer(p, shape)))
            return
        if isinstance(src, Pointer):
            self.set(op.results[0], _splat_pointer(src, shape))
            return
        self.set_splat(op.results[0], src.value, shape)

    def _map_value(self, op, src: Value, out_type, build, affine_fn, box_fn) -> Value:
        value = build(src.value, out_type)
        affine = affine_fn(src.affine) if src.affine is not None else None
        box = box_fn(src.box) if src.box is not None else None
        return Value(value, affine=affine, box=box, splat_of=src.splat_of)

    def _shape_op(self, op, build, affine_fn, box_fn):
        """Applies a shape op to numbers, masks and pointer offsets alike."""
        src = self.get(op.operands[0])
        out_type = op.results[0].type
        shape = b.shape_of(out_type)

        def map_pointers(p):
            offsets_type = ir.RankedTensorType.get(shape, b.i64())
            offsets = self._map_value(op, p.offsets, offsets_type, build, affine_fn, box_fn)
            return PointerTensor(p.buffer, offsets)

        if isinstance(src, PointerChoice):
            which_type = ir.RankedTensorType.get(shape, ir.IntegerType.get_signless(32))
            self.set(op.results[0], choices.map_options(
                src, map_pointers, lambda which: build(which, which_type)))
        elif isinstance(src, PointerTensor):
            self.set(op.results[0], map_pointers(src))
        else:
            self.set(op.results[0], self._map_value(op, src, out_type, build, affine_fn, box_fn))

    def broadcast(self, op):
        in_shape = b.shape_of(op.operands[0].type)
        out_shape = b.shape_of(op.results[0].type)

        def build(value, out_type):
            return b.generic([value], [b.broadcast_map(in_shape, out_shape)], [out_type],
                             lambda x, _o: [x])[0]

        self._shape_op(op, build,
                       lambda a: analysis.affine_broadcast(a, in_shape, out_shape),
                       lambda m: analysis.box_broadcast(m, in_shape, out_shape))

    def expand_dims(self, op):
        axis = _attr_int(op, "axis")
        in_rank = len(b.shape_of(op.operands[0].type))
        # expand_shape reassociation: the new unit dim joins the group of its left
        # neighbour (or of the first dim when it is inserted in front).
        groups = [[i + (1 if i >= axis else 0)] for i in range(in_rank)]
        if groups:
            if axis == 0:
                groups[0].insert(0, 0)
            else:
                groups[axis - 1].append(axis)
        reassociation = ir.ArrayAttr.get(
            [ir.ArrayAttr.get([ir.IntegerAttr.get(b.i64(), x) for x in g]) for g in groups])

        def build(value, out_type):
            return tensor.ExpandShapeOp(out_type, value, reassociation, [],
                                        b.shape_of(out_type)).result

        self._shape_op(op, build, lambda a: analysis.affine_expand(a, axis),
                       lambda m: analysis.box_expand(m, axis))

    def trans(self, op):
        order = list(ir.DenseI32ArrayAttr(op.attributes["order"]))

        def build(value, out_type):
            result = linalg.transpose(value, outs=[b.empty(b.shape_of(out_type),
                                                           b.element_type(out_type))],
                                      permutation=order)
            if isinstance(result, ir.Value):
                return result
            return result.results[0] if hasattr(result, "results") else result[0]

        self._shape_op(op, build, lambda a: analysis.affine_permute(a, order),
                       lambda m: analysis.box_permute(m, order))

    # -- pointers -------------------------------------------------------------------------

    def addptr(self, op):
        ptr = self.get(op.operands[0])
        offset = self.get_value(op, op.operands[1])
        if isinstance(ptr, PointerChoice):
            self.set(op.results[0], choices.map_options(ptr, lambda p: _add_offset(p, offset)))
        else:
            self.set(op.results[0], _add_offset(ptr, offset))

    # -- loads and stores -----------------------------------------------------------------

    def load(self, op):
        ptr = self.get(op.operands[0])
        mask = self.get_value(op, op.operands[1]) if len(op.operands) > 1 else None
        other = self.get_value(op, op.operands[2]) if len(op.operands) > 2 else None
        if isinstance(ptr, PointerChoice):
            value = choices.load(ptr, mask, other, _scalar_load, self._tensor_load)
        elif isinstance(ptr, Pointer):
            value = _scalar_load(ptr, mask.value if mask else None, other)
        else:
            value = self._tensor_load(ptr, mask, other)
        self.set(op.results[0], Value(value))

    def _tensor_load(self, ptr: PointerTensor, mask: Optional[Value], other: Optional[Value]):
        rank = len(ptr.shape)
        affine = analysis.affine_of(ptr.offsets, rank)
        box_ok = mask is None or mask.box is not None
        other_scalar = other.splat_of if other is not None else None
        if affine is not None and box_ok and (other is None or other_scalar is not None):
            block = PointerTensor(ptr.buffer, Value(ptr.offsets.value, affine=affine))
            box = mask.box if mask else None
            if memory.block_fits(block, box):
                return memory.block_load(block, box, other_scalar)
        return memory.gather_load(ptr, mask, other)

    def store(self, op):
        ptr = self.get(op.operands[0])
        value = self.get_value(op, op.operands[1])
        mask = self.get_value(op, op.operands[2]) if len(op.operands) > 2 else None
        if isinstance(ptr, PointerChoice):
            choices.store(ptr, value, mask, _scalar_store, self._tensor_store)
        elif isinstance(ptr, Pointer):
            _scalar_store(ptr, value, mask.value if mask else None)
        else:
            self._tensor_store(ptr, value, mask)

    def _tensor_store(self, ptr: PointerTensor, value: Value, mask: Optional[Value]):
        rank = len(ptr.shape)
        affine = analysis.affine_of(ptr.offsets, rank)
        if affine is not None and (mask is None or mask.box is not None):
            block = PointerTensor(ptr.buffer, Value(ptr.offsets.value, affine=affine))
            box = mask.box if mask else None
            if memory.block_fits(block, box):
                memory.block_store(block, value.value, box)
                return
        memory.scatter_store(ptr, value.value, mask)

    # -- elementwise arith/math -----------------------------------------------------------

    def elementwise(self, op):
        operands = [self.get(v) for v in op.operands]
        if any(isinstance(o, (Pointer, PointerTensor)) for o in operands):
            return self.pointer_elementwise(op, operands)
        result_types = [r.type for r in op.results]
        attrs = {name: op.attributes[name] for name in op.attributes}
        tensor_shape = next((b.shape_of(r) for r in result_types if b.is_tensor(r)), None)
        if tensor_shape is None:
            tensor_shape = next((b.shape_of(o.type) for o in operands if b.is_tensor(o.type)), None)
        if tensor_shape is None:
            new = ir.Operation.create(op.name, results=result_types,
                                      operands=[o.value for o in operands], attributes=attrs)
            for old, res in zip(op.results, new.results):
                self.set(old, Value(res))
            return
        rank = len(tensor_shape)
        tensor_inputs = [o.value for o in operands if b.is_tensor(o.type)]

        def body(*args):
            elements = iter(args)
            scalar_operands = [next(elements) if b.is_tensor(o.type) else o.value
                               for o in operands]
            scalar_types = [b.element_type(t) for t in result_types]
            new = ir.Operation.create(op.name, results=scalar_types, operands=scalar_operands,
                                      attributes=attrs)
            return list(new.results)

        out_types = [t if b.is_tensor(t) else ir.RankedTensorType.get(tensor_shape, t)
                     for t in result_types]
        results = b.generic(tensor_inputs, b.parallel_maps(rank, len(tensor_inputs)),
                            out_types, body)
        for old, res in zip(op.results, results):
            self.set(old, Value(res, affine=self._affine_of_result(op, operands, rank),
                                box=self._box_of_result(op, operands, rank)))

    def _affine_of_result(self, op, operands, rank):
        # Sign extension keeps every value; a truncation wraps the ones that do not fit
        # and a zero extension makes the negative ones large: no longer the same line.
        if op.name in ("arith.extsi", "arith.index_cast"):
            return operands[0].affine
        if len(operands) != 2 or not b.is_integer(b.element_type(op.results[0].type)):
            return None
        x, y = (analysis.affine_of(o, rank) for o in operands)
        if x is None or y is None:
            return None
        return analysis.affine_binary(op.name, x, y)

    def _box_of_result(self, op, operands, rank):
        if op.name == "arith.cmpi":
            with named("mask_bound", ir.Location.current):  # the mask is a box
                x, y = (analysis.affine_of(o, rank) for o in operands)
                if x is None or y is None:
                    return None
                return analysis.box_from_compare(_attr_int(op, "predicate"), x, y)
        if op.name == "arith.andi" and _is_i1(b.element_type(op.results[0].type)):
            x, y = operands[0].box, operands[1].box
            if x is None or y is None:
                return None
            return analysis.box_and(x, y)
        return None

    def pointer_elementwise(self, op, operands):
        """`arith.select` between pointers into one buffer selects between offsets."""
        if op.name != "arith.select":
            raise self.error(op, f"'{op.name}' on pointers is not supported")
        cond, x, y = operands
        if isinstance(x, PointerChoice) or isinstance(y, PointerChoice) or x.buffer != y.buffer:
            self.set(op.results[0], choices.select(self, cond, x, y, self._select_in_buffer))
        else:
            self.set(op.results[0], self._select_in_buffer(cond, x, y))

    def _select_in_buffer(self, cond: Value, x, y):
        """arith.select between two pointers into one buffer: a select of offsets."""
        if isinstance(x, Pointer):
            return Pointer(x.buffer, arith.select(cond.value, x.offset, y.offset))
        shape = x.shape
        otype = ir.RankedTensorType.get(shape, b.i64())
        inputs = [v for v in (cond.value, x.offsets.value, y.offsets.value)]
        tensor_inputs = [v for v in inputs if b.is_tensor(v.type)]

        def body(*args):
            it = iter(args)
            c = next(it) if b.is_tensor(cond.value.type) else cond.value
            return [arith.select(c, next(it), next(it))]

        value = b.generic(tensor_inputs, b.parallel_maps(len(shape), len(tensor_inputs)),
                          [otype], body)[0]
        return PointerTensor(x.buffer, Value(value))

    # -- regions, returns and calls (scf ops: loops_and_branches.py) ----------------------

    def convert_region(self, block, on_return, block_exit: Optional[versioning.BlockExit] = None):
        """Converts `block`; its terminator (scf.yield, tt.reduce.return, ...) calls
        `on_return` with the converted values it returns. `block_exit`: see convert_block."""
        saved = self.yield_sink
        self.yield_sink = lambda terminator: on_return(
            [self.get(v) for v in terminator.operands])
        try:
            self.convert_block(block, block_exit)
        finally:
            self.yield_sink = saved

    def region_return(self, op):
        if self.yield_sink is None:
            raise self.error(op, f"{op.name} outside a converted region")
        self.yield_sink(op)

    def tt_return(self, op):
        if self.return_sink is not None:
            self.return_sink([self.get(v) for v in op.operands])
            return
        if len(op.operands):
            raise self.error(op, "a kernel cannot return values")
        self._end_kernel()

    def call(self, op):
        """tt.call (a `noinline` function Triton kept): the callee's body is converted in
        place, its arguments bound to the call's operands (tensors and pointers alike);
        the values its tt.return hands back become the call's results. The memref stage has
        no calls (docs/memref-stage.md), so every call is inlined here."""
        name = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        callee = self.functions.get(name)
        if callee is None or not callee.regions[0].blocks:
            raise self.error(op, f"call of function '{name}', which the module does not define")
        if name in self.active_calls:
            raise self.error(op, f"recursive call of function '{name}' is not supported")
        body = callee.regions[0].blocks[0]
        for arg, operand in zip(body.arguments, op.operands):
            self.set(arg, self.get(operand))
        returned = []
        saved_return, saved_yield = self.return_sink, self.yield_sink
        self.return_sink, self.yield_sink = returned.extend, None
        self.active_calls.append(name)
        try:
            self.convert_block(body)
        finally:
            self.active_calls.pop()
            self.return_sink, self.yield_sink = saved_return, saved_yield
        for old, new in zip(op.results, returned):
            self.set(old, new)

    def poison(self, op):
        # ub.poison only feeds unreachable code after Triton's passes (and the paths
        # lift-cf-to-scf merges after an early return); any value will do. A pointer
        # points into no buffer: a branch or choice it joins takes the others' buffers.
        t = op.results[0].type
        if is_pointer_type(t):
            self.set(op.results[0], choices.nowhere(b.shape_of(t) if b.is_tensor(t) else None))
        elif b.is_tensor(t):
            self.set_splat(op.results[0], memory.zero(b.element_type(t)), b.shape_of(t))
        else:
            self.set(op.results[0], Value(memory.zero(t)))

    def int_to_ptr(self, op):
        flat.int_to_ptr(self, op, pointee_of)

    def ptr_to_int(self, op):
        flat.ptr_to_int(self, op)

    def ignore(self, op):
        """Ops that carry hints only (tt.assume)."""


def _scalar_load(ptr: Pointer, mask: Optional[ir.Value], other: Optional[Value]) -> ir.Value:
    return memory.scalar_load(ptr, mask, other.value if other else None)


def _scalar_store(ptr: Pointer, value: Value, mask: Optional[ir.Value]) -> None:
    memory.scalar_store(ptr, value.value, mask)


def _splat_pointer(ptr: Pointer, shape) -> PointerTensor:
    offsets = Value(b.splat(ptr.offset, shape),
                    affine=analysis.uniform(b.to_index(ptr.offset), len(shape)),
                    splat_of=ptr.offset)
    return PointerTensor(ptr.buffer, offsets)


def _add_offset(ptr, offset: Value):
    """tt.addptr on a pointer into one buffer (`Pointer` or `PointerTensor`)."""
    if isinstance(ptr, Pointer):
        delta = b.cast_int(offset.value, b.i64())
        return Pointer(ptr.buffer, arith.addi(ptr.offset, delta))
    shape = ptr.shape
    rank = len(shape)
    offsets_type = ir.RankedTensorType.get(shape, b.i64())
    width = b.int_width(b.element_type(offset.type))

    def body(p, o, _out):
        return [arith.addi(p, b.cast_int(o, b.i64()) if width != 64 else o)]

    value = b.generic([ptr.offsets.value, offset.value], b.parallel_maps(rank, 2),
                      [offsets_type], body)[0]
    lhs = analysis.affine_of(ptr.offsets, rank)
    rhs = analysis.affine_of(offset, rank)
    affine = analysis.affine_add(lhs, rhs) if lhs is not None and rhs is not None else None
    return PointerTensor(ptr.buffer, Value(value, affine=affine))


def _with_callees(tt_func, functions) -> list:
    """The kernel and every function it calls, directly or not: their asserts and
    tt.int_to_ptr are the kernel's once calls are inlined."""
    found, names, todo = [], set(), [tt_func]
    while todo:
        f = todo.pop()
        name = ir.StringAttr(f.attributes["sym_name"]).value
        if name in names:
            continue
        names.add(name)
        found.append(f)
        for call in b.nested_ops(f, "tt.call"):
            callee = functions.get(ir.FlatSymbolRefAttr(call.attributes["callee"]).value)
            if callee is not None:
                todo.append(callee)
    return found


def _unique(items, key=lambda item: item) -> list:
    """`items` without repeats (by `key`), in order of first appearance."""
    out, seen = [], set()
    for item in items:
        if key(item) not in seen:
            seen.add(key(item))
            out.append(item)
    return out


def _is_i1(t: ir.Type) -> bool:
    return isinstance(t, ir.IntegerType) and t.width == 1


def _is_scalar_number(t: ir.Type) -> bool:
    return b.is_integer(t) or isinstance(t, ir.FloatType)


def _arg_name(arg: ir.Value, index: int) -> str:
    try:
        loc = arg.location
        if loc.is_a_name():
            return loc.name_str
    except Exception:
        pass
    return f"arg{index}"


# Ops that take a PointerChoice (choices.py) as an operand; anything else is rejected.
CHOICE_AWARE = {"tt.addptr", "tt.splat", "tt.broadcast", "tt.expand_dims", "tt.trans",
                "tt.reshape",
                "tt.load", "tt.store", "tt.atomic_rmw", "tt.atomic_cas", "arith.select",
                "scf.yield", "tt.return", "tt.call", "scf.for", "scf.while", "scf.condition"}

HANDLERS: Dict[str, Callable] = {
    "tt.get_program_id": KernelConverter.program_id,
    "tt.get_num_programs": KernelConverter.num_programs,
    "tt.make_range": KernelConverter.make_range,
    "tt.splat": KernelConverter.splat,
    "tt.broadcast": KernelConverter.broadcast,
    "tt.expand_dims": KernelConverter.expand_dims,
    "tt.trans": KernelConverter.trans,
    "tt.addptr": KernelConverter.addptr,
    "tt.load": KernelConverter.load,
    "tt.store": KernelConverter.store,
    "tt.return": KernelConverter.tt_return,
    "tt.call": KernelConverter.call,
    "tt.assume": KernelConverter.ignore,
    "llvm.intr.assume": KernelConverter.ignore,  # tl.assume: a hint only
    "tt.int_to_ptr": KernelConverter.int_to_ptr,
    "tt.ptr_to_int": KernelConverter.ptr_to_int,
    "arith.constant": KernelConverter.constant,
    "scf.for": loops_and_branches.scf_for,
    "scf.if": loops_and_branches.scf_if,
    "scf.while": loops_and_branches.scf_while,
    "scf.index_switch": loops_and_branches.scf_index_switch,
    "scf.yield": KernelConverter.region_return,
    "tt.reduce": reductions.reduce,
    "tt.reduce.return": KernelConverter.region_return,
    "tt.dot": reductions.dot,
    "tt.scan": reductions.scan,
    "tt.scan.return": KernelConverter.region_return,
    **{name: elementwise.convert for name in elementwise.SCALAR_BUILDERS},
    **shapes.HANDLERS,
    **atomics.HANDLERS,
    **debug.HANDLERS,
    "ub.poison": KernelConverter.poison,
}


def convert_ttir(ttir_module: ir.Module, versioning_allowed: bool = True,
                 lane_reductions: bool = True) -> ir.Module:
    """Converts every public `tt.func` of `ttir_module` into a `func.func` on Linalg;
    `versioning_allowed=False` keeps every kernel on its one (gather) path,
    `lane_reductions=False` reduces along the axis itself (for GPU shapes).

    The result lives in the same MLIR context and passes the verifier. Functions of
    `ttir_module` with several blocks are restructured in place first (control_flow.py).
    """
    use_light_dialect_modules()  # the converter walks linalg and tt ops (dialect_modules)
    with ttir_module.context, ir.Location.unknown():
        try:
            lift_control_flow(ttir_module)
        except ControlFlowError as err:
            raise ConversionError(str(err)) from None
        out = ir.Module.create()
        kernels = [op.operation for op in ttir_module.body.operations
                   if op.operation.name == "tt.func"
                   and _visibility(op.operation) != "private"]
        if not kernels:
            raise ConversionError("the TTIR module has no public tt.func kernel")
        functions = {ir.StringAttr(op.operation.attributes["sym_name"]).value: op.operation
                     for op in ttir_module.body.operations
                     if op.operation.name == "tt.func"}
        for kernel in kernels:
            converter = KernelConverter(kernel, out, functions)
            converter.versioning_allowed = versioning_allowed
            converter.lane_reductions = lane_reductions
            converter.convert()
        try:
            out.operation.verify()
        except ir.MLIRError as err:
            raise ConversionError(f"the Linalg module does not verify: {err}") from None
    return out


def _visibility(op) -> str:
    if "sym_visibility" in op.attributes:
        return ir.StringAttr(op.attributes["sym_visibility"]).value
    return "public"
