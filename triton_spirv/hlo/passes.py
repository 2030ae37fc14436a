"""The seed's emitter pipeline on the shared stage, in one place.

After an emitter has built a kernel module (entry function + private subgraph
functions on tensors), these passes run, in order:

  1. `inline`: subgraph functions are inlined into the entry function (upstream
     `inline` + `symbol-dce`), so the OpenCL emitter gets one func.func per kernel.
  2. loop ops to scf with bounds checks: done by the emitters themselves, which build
     `scf.for`/`scf.if` directly (there is no upstream `xla_gpu.loop`).
  3. `flatten-tensors`: N-d `tensor.extract`s of parameters become 1-D accesses of the
     kernel buffers (`affine.linearize_index`, which folds away against the emitters'
     `affine.delinearize_index` when both use the same shape).
  4. `unroll-vector-loops`: the loop emitter's `hlo.vector_loop` scf.for loops
     (2-4 iterations) are unrolled.
  5. `vectorize-loads-stores`: groups of extracts of a kernel buffer at base+0..V-1
     become one `vector.transfer_read` (vloadN) and V `vector.extract`s.
  6. `pack-lane-accumulators` (lanes.py): the row reduction's lane loops carry one
     vector per accumulator instead of V scalars where the lanes compute alike.
  7. the shared Linalg -> memref pipeline (`triton_spirv.memref_stage.pipeline.lower_to_memref`),
     in the CPU shape (the emitters lay out work-items themselves) with the device's
     quirks: those whose passes apply to kernels of any shape (an Intel runtime's
     barrier-negations) work around its bugs in these kernels too.

`run_passes(module, dump, quirks)` calls `dump(stage_name, module_text)` after each
step, as the seed's reproducer dumps the IR after each pass.
"""
from __future__ import annotations

from typing import Callable

from mlir import ir, passmanager
from mlir.dialects import arith, tensor, vector

from ..ir_dump import dump_after
from ..memref_stage.pipeline import PipelineConfig, lower_to_memref  # the shared stage
from ..ir_helpers import constant_index, remap_operands
from .lanes import pack_lane_accumulators

STAGES = ("emitted", "inlined", "flattened", "unrolled", "vectorized", "packed", "memref")
VECTOR_WIDTHS = (16, 8, 4, 2)


def run_upstream(module: ir.Module, pipeline: str) -> None:
    pm = passmanager.PassManager.parse(f"builtin.module({pipeline})")
    pm.run(module.operation)


def inline(module: ir.Module) -> None:
    run_upstream(module, "inline,symbol-dce,canonicalize,cse")


def _walk(op, kinds: set[str]) -> list:
    found = []

    def visit(o):
        if o.name in kinds:
            found.append(o)
        return ir.WalkResult.ADVANCE
    op.walk(visit)
    return found


def flatten_tensors(module: ir.Module) -> None:
    """tensor.extract %expand(%flat)[i, j, k] -> tensor.extract %flat[linear(i, j, k)]."""
    for op in _walk(module.operation, {"tensor.extract"}):
        source = op.operands[0]
        owner = source.owner
        if not isinstance(owner, ir.Operation) and hasattr(owner, "operation"):
            owner = owner.operation
        if not hasattr(owner, "name") or owner.name not in ("tensor.expand_shape",
                                                              "tensor.collapse_shape"):
            continue
        flat = owner.operands[0]
        if ir.RankedTensorType(flat.type).rank != 1:
            continue
        dims = ir.RankedTensorType(source.type).shape
        # Dynamic dimensions (dynamic shapes): the expand_shape's output_shape operands,
        # in order, stand for the dimensions marked dynamic in the type.
        dynamic = list(owner.operands)[1:] if owner.name == "tensor.expand_shape" else []
        indices = list(op.operands)[1:]
        with ir.InsertionPoint(op), op.location:
            if len(indices) == 0:
                linear = arith.constant(ir.IndexType.get(), 0)
            elif len(indices) == 1:
                linear = indices[0]
            else:
                from mlir.dialects import affine
                linear = affine.linearize_index(indices, dynamic, list(dims), disjoint=True)
            new = tensor.extract(flat, [linear])
        op.results[0].replace_all_uses_with(new)
        op.erase()
    run_upstream(module, "canonicalize,cse")


def unroll_vector_loops(module: ir.Module) -> None:
    for loop in _walk(module.operation, {"scf.for"}):
        if "hlo.vector_loop" in loop.attributes:
            _unroll(loop)
    run_upstream(module, "canonicalize,cse")


def _unroll(loop) -> None:
    lower, upper, step = (constant_index(v) for v in list(loop.operands)[:3])
    if None in (lower, upper, step):
        return
    body = loop.regions[0].blocks[0]
    args = list(body.arguments)
    iv, carried_args = args[0], args[1:]
    current = list(loop.operands)[3:]
    ops = list(body.operations)
    terminator = ops[-1]
    for k in range(lower, upper, step):
        with ir.InsertionPoint(loop), loop.location:
            mapping = {iv: arith.constant(ir.IndexType.get(), k)}
        mapping.update(zip(carried_args, current))
        for op in ops[:-1]:
            clone = op.clone(ip=ir.InsertionPoint(loop))
            remap_operands(clone, mapping)
            for old, new in zip(op.results, clone.results):
                mapping[old] = new
        current = [mapping.get(v, v) for v in terminator.operands]
    for result, value in zip(loop.results, current):
        result.replace_all_uses_with(value)
    loop.erase()


def _base_and_offset(index) -> tuple[object, int]:
    """index = base + constant -> (base, constant); otherwise (index, 0)."""
    owner = index.owner
    if hasattr(owner, "name") and owner.name == "arith.addi":
        a, b = owner.operands
        c = constant_index(b)
        if c is not None:
            return a, c
        c = constant_index(a)
        if c is not None:
            return b, c
    return index, 0


def _linear_base_and_offset(index) -> tuple[object, int]:
    """Like `_base_and_offset`, and also through `affine.linearize_index`, whose last
    index has stride 1: linear([..., x + c]) = linear([..., x]) + c. The base is then
    a key (the linearization of [..., x]), not a value."""
    owner = index.owner
    if not (hasattr(owner, "name") and owner.name == "affine.linearize_index"):
        return _base_and_offset(index)
    sizes = [int(n) for n in ir.DenseI32ArrayAttr(owner.attributes["operandSegmentSizes"])]
    operands = list(owner.operands)
    indices, basis = operands[:sizes[0]], operands[sizes[0]:]
    last, offset = _base_and_offset(indices[-1])
    key = ("linearize", tuple(indices[:-1]) + (last,), tuple(basis),
           str(owner.attributes["static_basis"]))
    return key, offset


_VECTOR_ELEMENTS = ("f32", "f64", "f16", "i8", "i16", "i32", "i64")


def vectorize_loads_stores(module: ir.Module) -> None:
    _vectorize_extracts(module)
    run_upstream(module, "canonicalize,cse")


def _vectorizable(tensor_type) -> bool:
    t = ir.RankedTensorType(tensor_type)
    return t.rank == 1 and str(t.element_type) in _VECTOR_ELEMENTS


def _is_kernel_buffer(value) -> bool:
    """Only global buffers are vectorized (work-group tiles are indexed per lane)."""
    owner = value.owner
    return hasattr(owner, "name") and owner.name == "bufferization.to_tensor"


def _vectorize_extracts(module) -> None:
    groups: dict = {}
    for op in _walk(module.operation, {"tensor.extract"}):
        operands = list(op.operands)
        if len(operands) != 2 or not _vectorizable(operands[0].type) \
                or not _is_kernel_buffer(operands[0]):
            continue
        base, offset = _linear_base_and_offset(operands[1])
        groups.setdefault((operands[0], base, op.operation.block), {})[offset] = op
    for (source, _, _), by_offset in groups.items():
        width = next((w for w in VECTOR_WIDTHS if all(k in by_offset for k in range(w))), 0)
        if width < 2 or set(by_offset) != set(range(width)):
            continue
        base = by_offset[0].operands[1]
        first = min(by_offset.values(), key=_block_position)
        element = ir.RankedTensorType(source.type).element_type
        vtype = ir.VectorType.get([width], element)
        with ir.InsertionPoint(first), first.location:
            pad = arith.constant(element, _zero_attr(element))
            read = vector.transfer_read(vtype, source, [base], _minor_identity(),
                                        pad, in_bounds=[True])
        for k, op in by_offset.items():
            with ir.InsertionPoint(op), op.location:
                lane = vector.extract(read, [], [k])
            op.results[0].replace_all_uses_with(lane)
            op.erase()


def pack_lanes(module: ir.Module) -> None:
    if pack_lane_accumulators(module):
        run_upstream(module, "canonicalize,cse")


def _minor_identity():
    return ir.AffineMapAttr.get(ir.AffineMap.get_minor_identity(1, 1))


def _zero_attr(element):
    if isinstance(element, (ir.F16Type, ir.F32Type, ir.F64Type)) or "f" in str(element):
        return ir.FloatAttr.get(element, 0.0)
    return ir.IntegerAttr.get(element, 0)


def _block_position(op) -> int:
    for n, o in enumerate(op.operation.block.operations):
        if o == op:
            return n
    return 0


PASSES: list[tuple[str, Callable]] = [
    ("inlined", inline),
    ("flattened", flatten_tensors),
    ("unrolled", unroll_vector_loops),
    ("vectorized", vectorize_loads_stores),
    ("packed", pack_lanes),
    ("memref", lower_to_memref),
]


def run_passes(module: ir.Module, dump: Callable[[str, str], None] | None = None,
               quirks: tuple[str, ...] = ()) -> ir.Module:
    """The steps above; `quirks`: the target device's (triton_spirv/target.py)."""
    memref_config = PipelineConfig(quirks=tuple(quirks))
    with module.context:
        dump_after("hlo-emitter", module)
        if dump:
            dump("emitted", _text(module))
        for name, step in PASSES:
            if name == "memref":
                step(module, memref_config)
            else:
                step(module)
            if name != "memref":  # lower_to_memref dumps after each of its passes
                dump_after(f"hlo-{name}", module)
            if dump:
                dump(name, _text(module))
    return module


def _text(module) -> str:
    return module.operation.get_asm(enable_debug_info=True)
