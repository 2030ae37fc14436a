"""Explicit vectors for elementwise loops over tiles at the memref stage.

An innermost loop such as softmax's

    affine.for %i = 0 to 4096 {
      %x = affine.load %tile[%i]
      %e = math.exp (arith.subf %x, %max)
      affine.store %e, %out[%i]

is one work-item's loop: the default CPU runtime's compiler vectorizes some of these, Intel's OpenCL CPU
compiler (which vectorizes across work-items) leaves them scalar, and a scalar `exp` is
several times slower than `exp` on a float16. This rewrite steps such a loop by WIDTH and
gives it WIDTH-wide vectors (GPU_WIDTH on GPU shapes, see below): `affine.vector_load`/`affine.vector_store` for the accesses
whose last index is the loop's induction variable (unit stride), the same arith/math ops
on vectors, `vector.broadcast` for loop-invariant scalars. Loads that do not move with the
loop and the arith/math on them stay scalar (Inductor's 2-D tiles: `x[i, j] - mean[i]`
in the loop on `j`). Flags move too: compares of moving f32 values, `&`/`|`/`^` of
them and their zero-extensions (_FLAG_OPS), stored as bytes for the i8 reductions of
Inductor's `any` (ttir_to_linalg/reductions.py). A loop is rewritten only when its
extent is a multiple of WIDTH, every moving value is f32 or such a flag and made by one
of those ops, every loaded moving value is f32, every store is unit-stride
(an invariant value stored is broadcast), and each buffer it stores to is read in it at
the same index only (so no
iteration reads what another writes); anything else is left as it was.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import affine, arith, vector

from ..ir_helpers import op_of, owner, root_buffer
from .affine_nests import body_ops, constant_extent, induction_var
from .register_blocking import unit_stride_last

WIDTH = 16
# GPU shapes: the work-items of a work-group share the loop (work_group_sharing.py), each
# taking one 16-byte float4 per iteration, so neighbouring work-items touch neighbouring
# 16 bytes and every lane has work (a 1024-element tile feeds 256 lanes, not 64). That is
# the layout Triton's GPU backends give f32 elementwise code (4 elements per thread).
GPU_WIDTH = 4
_ELEMENTWISE = {"arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.negf",
                "arith.maximumf", "arith.minimumf", "arith.maxnumf", "arith.minnumf",
                "math.exp", "math.exp2", "math.log", "math.log2", "math.sqrt", "math.rsqrt",
                "math.tanh", "math.erf", "math.absf", "math.fma"}


def vectorize_elementwise(module: ir.Module, width: int = WIDTH) -> int:
    """Rewrites every matching innermost loop in `module`; returns how many."""
    loops = []

    def visit(op):
        if op.name == "affine.for":
            varying = _varying_values(op.opview, width)
            if varying is not None:
                loops.append((op.opview, varying))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for loop, varying in loops:
        with loop.location:
            _rewrite(loop, width, varying)
    return len(loops)


def vectorize_elementwise_per_work_item(module: ir.Module) -> int:
    """The GPU shape's vectors: GPU_WIDTH elements per work-item and iteration."""
    return vectorize_elementwise(module, GPU_WIDTH)


def _is_f32(t: ir.Type) -> bool:
    return isinstance(t, ir.F32Type)


def _is_stored_type(t: ir.Type, name: str) -> bool:
    """f32 moves through loads and stores; bytes (flags widened to i8) are only stored."""
    return _is_f32(t) or (name == "affine.store" and _is_int(8)(t))


def _is_pure_scalar(op) -> bool:
    """An arith/math op without regions: it may stay scalar where nothing it reads
    moves with the loop."""
    return op.operation.name.split(".")[0] in ("arith", "math") and not op.regions


def _varying_values(loop, width: int) -> set | None:
    """The values of `loop`'s body that move with its induction variable, when the loop
    can be rewritten; else None.

    Values that move are f32 and come from unit-stride loads along the loop or from
    the elementwise ops of _ELEMENTWISE (and `arith.select` on a condition that does
    not move) over them, or are flags of _FLAG_OPS (stored as i8); everything else in the body is loop-invariant arith/math,
    which stays scalar: a row's statistic in `x[i, j] - mean[i]` over the loop on `j`
    (the `[:, None]` broadcasts of a 2-D tile) is loaded and computed once per
    iteration and broadcast. Every store is unit-stride (an invariant value it writes is
    broadcast), and each
    buffer stored to is read in the loop at that same index only, never at an
    invariant one (so no iteration reads what another writes)."""
    extent = constant_extent(loop)
    if extent is None or extent % width or extent < width:
        return None
    iv = induction_var(loop)
    varying = {iv}
    stored, loaded, invariant_loads = {}, [], set()
    for op in body_ops(loop):
        name = op.operation.name
        if name in ("affine.load", "affine.store"):
            first = 1 if name == "affine.load" else 2
            value = op.results[0] if name == "affine.load" else op.operands[0]
            indices = list(op.operands)[first:]
            buffer = root_buffer(op.operands[first - 1])
            if name == "affine.load" and not any(v in varying for v in indices):
                invariant_loads.add(buffer)
                continue
            if not _is_stored_type(value.type, name) or not unit_stride_last(op, first, iv) or \
                    any(v in varying and v != iv for v in indices):
                return None
            key = (str(op.attributes["map"]), tuple(map(str, indices)))
            if name == "affine.store":
                # An invariant value (a fill's constant) is broadcast to the store.
                stored.setdefault(buffer, set()).add(key)
            else:
                loaded.append((buffer, key))
                varying.add(value)
        elif not _is_pure_scalar(op) or len(op.results) != 1:
            return None
        elif any(v in varying for v in op.operands):
            if not _vector_op(op, varying, iv):
                return None
            varying.add(op.results[0])
    if not stored or any(buffer in stored for buffer in invariant_loads):
        return None
    if not all(buffer not in stored or stored[buffer] == {key} for buffer, key in loaded):
        return None
    return varying if all(len(keys) == 1 for keys in stored.values()) else None


def _vector_op(op, varying: set, iv: ir.Value) -> bool:
    """Whether `op`, which reads a moving value, has a WIDTH-wide form: an f32 op of
    _ELEMENTWISE, a select between f32 values (OpenCL's `c ? a : b` with a scalar `c`
    picks whole vectors, select() with a mask lane by lane), one of the ops of an i1
    flag stored as bytes (_FLAG_OPS: Inductor's `x != x | abs(x) == inf` before an
    `any`, whose reduction runs on i8, ttir_to_linalg/reductions.py), or the i32
    index arithmetic of a mask along the loop: the induction variable cast to i32 (the
    lanes' indices, iv + 0 ... iv + WIDTH - 1) and i32 adds, subtractions and products
    of it (Inductor's looped reductions: `r0_index = r0_offset + r0_base;
    r0_mask = r0_index < r0_numel`)."""
    name = op.operation.name
    values = list(op.operands) + list(op.results)
    if name == "arith.select":
        # A moving condition is a mask: select() picks lane by lane.
        return all(_is_f32(v.type) for v in values[1:])
    if name in _INDEX_CASTS:
        return op.operands[0] == iv and _is_int(32)(op.results[0].type)
    if name in _INT_OPS:
        return all(_is_int(32)(v.type) for v in values)
    if name in _FLAG_OPS:
        operands, result = _FLAG_OPS[name]
        return all(operands(v.type) for v in op.operands) and result(op.results[0].type)
    return name in _ELEMENTWISE and all(_is_f32(v.type) for v in values)


# The induction variable as an i32, and i32 arithmetic on such indices.
_INDEX_CASTS = ("arith.index_cast", "arith.index_castui")
_INT_OPS = ("arith.addi", "arith.subi", "arith.muli")


def _is_int(*widths: int):
    return lambda t: isinstance(t, ir.IntegerType) and t.width in widths


# Ops on flags: (test on every operand's type, test on the result's type). Triton
# compares an i1 with 0 as i32 (`tmp7 == 0`: extui to i32, cmpi).
_FLAG_OPS = {"arith.cmpf": (_is_f32, _is_int(1)), "arith.cmpi": (_is_int(1, 32), _is_int(1)),
             "arith.andi": (_is_int(1), _is_int(1)), "arith.ori": (_is_int(1), _is_int(1)),
             "arith.xori": (_is_int(1), _is_int(1)), "arith.extui": (_is_int(1), _is_int(8, 32))}


def _rewrite(loop, width: int, varying: set) -> None:
    loop.attributes["step"] = ir.IntegerAttr.get(ir.IndexType.get(), width)
    def vtype(v):
        return ir.VectorType.get([width], v.type)
    vectors, broadcasts, replaced = {}, {}, []
    body = loop.regions[0].blocks[0]

    def as_vector(v, user):
        if v in vectors:
            return vectors[v]
        if v not in broadcasts:
            # Values from outside the loop are broadcast once, before it; scalars the
            # body computes, right before their first vector user.
            defining = owner(v)
            where = op_of(user) if defining is not None and \
                op_of(defining).block == body else loop.operation
            with ir.InsertionPoint(where), loop.location:
                broadcasts[v] = vector.BroadcastOp(vtype(v), v).result
        return broadcasts[v]

    for op in body_ops(loop):
        name = op.operation.name
        if name == "affine.store":
            replaced.append(op)
            with ir.InsertionPoint(op.operation), op.location:
                affine.AffineVectorStoreOp(as_vector(op.operands[0], op), op.operands[1],
                                           list(op.operands)[2:], op.attributes["map"])
        elif op.results and op.results[0] in varying:
            replaced.append(op)
            with ir.InsertionPoint(op.operation), op.location:
                vectors[op.results[0]] = _vector_form(op, vtype(op.results[0]), as_vector, varying)
    for op in reversed(replaced):   # users before their definitions
        op.operation.erase()


def _vector_form(op, vtype, as_vector, varying: set) -> ir.Value:
    name = op.operation.name
    if name == "affine.load":
        return affine.AffineVectorLoadOp(
            vtype, op.operands[0], list(op.operands)[1:], op.attributes["map"]).result
    if name in _INDEX_CASTS:
        return _lane_indices(op, vtype)
    operands = list(op.operands)
    # A select's scalar condition picks whole vectors; every other operand is a vector.
    first = 1 if name == "arith.select" and operands[0] not in varying else 0
    operands[first:] = [as_vector(v, op) for v in operands[first:]]
    attributes = {a: op.attributes[a] for a in op.attributes}
    return ir.Operation.create(name, results=[vtype], operands=operands,
                               attributes=attributes).results[0]


def _lane_indices(cast, vtype) -> ir.Value:
    """The induction variable cast (`cast`, its first lane's index), broadcast, plus
    0, 1, ..., WIDTH - 1."""
    first = ir.Operation.create(cast.operation.name, results=[cast.results[0].type],
                                operands=[cast.operands[0]]).results[0]
    lanes = ir.VectorType(vtype).shape[0]
    element = ir.VectorType(vtype).element_type
    offsets = arith.ConstantOp(vtype, ir.DenseElementsAttr.get(
        [ir.IntegerAttr.get(element, k) for k in range(lanes)], type=vtype)).result
    return arith.addi(vector.BroadcastOp(vtype, first).result, offsets)
