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
on vectors, `vector.broadcast` for loop-invariant scalars. A loop is rewritten only when
its extent is a multiple of WIDTH, every op in it is one of those, every value is f32,
and each buffer it stores to is read in it at the same index only (so no iteration reads
what another writes); anything else is left as it was.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import affine, vector

from ..ir_helpers import root_buffer
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
        if op.name == "affine.for" and _matches(op.opview, width):
            loops.append(op.opview)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for loop in loops:
        with loop.location:
            _rewrite(loop, width)
    return len(loops)


def vectorize_elementwise_per_work_item(module: ir.Module) -> int:
    """The GPU shape's vectors: GPU_WIDTH elements per work-item and iteration."""
    return vectorize_elementwise(module, GPU_WIDTH)


def _is_f32(t: ir.Type) -> bool:
    return isinstance(t, ir.F32Type)


def _matches(loop, width: int) -> bool:
    extent = constant_extent(loop)
    if extent is None or extent % width or extent < width:
        return False
    iv = induction_var(loop)
    ops = body_ops(loop)
    stored, loaded = {}, []
    for op in ops:
        name = op.operation.name
        if name in ("affine.load", "affine.store"):
            first = 1 if name == "affine.load" else 2
            value = op.results[0] if name == "affine.load" else op.operands[0]
            if not _is_f32(value.type) or not unit_stride_last(op, first, iv):
                return False
            key = (str(op.attributes["map"]), tuple(map(str, list(op.operands)[first:])))
            if name == "affine.store":
                stored.setdefault(root_buffer(op.operands[1]), set()).add(key)
            else:
                loaded.append((root_buffer(op.operands[0]), key))
        elif name in _ELEMENTWISE:
            if not all(_is_f32(v.type) for v in list(op.operands) + list(op.results)):
                return False
        else:
            return False
    return bool(stored) and all(buffer not in stored or stored[buffer] == {key}
                                for buffer, key in loaded) and \
        all(len(keys) == 1 for keys in stored.values())


def _rewrite(loop, width: int) -> None:
    loop.attributes["step"] = ir.IntegerAttr.get(ir.IndexType.get(), width)
    vtype = ir.VectorType.get([width], ir.F32Type.get())
    vectors, broadcasts = {}, {}

    def as_vector(v):
        if v in vectors:
            return vectors[v]
        if v not in broadcasts:
            with ir.InsertionPoint(loop.operation), loop.location:
                broadcasts[v] = vector.BroadcastOp(vtype, v).result
        return broadcasts[v]

    for op in body_ops(loop):
        name = op.operation.name
        with ir.InsertionPoint(op.operation), op.location:
            if name == "affine.load":
                vectors[op.results[0]] = affine.AffineVectorLoadOp(
                    vtype, op.operands[0], list(op.operands)[1:], op.attributes["map"]).result
            elif name == "affine.store":
                affine.AffineVectorStoreOp(as_vector(op.operands[0]), op.operands[1],
                                           list(op.operands)[2:], op.attributes["map"])
            else:
                attributes = {a: op.attributes[a] for a in op.attributes}
                vectors[op.results[0]] = ir.Operation.create(
                    name, results=[vtype], operands=[as_vector(v) for v in op.operands],
                    attributes=attributes).results[0]
    _erase_scalar_ops(loop, vectors)


def _erase_scalar_ops(loop, vectors) -> None:
    """Erases the scalar ops the vector ones replace (last first: users before defs)."""
    new = set(vectors.values())
    for op in reversed(body_ops(loop)):
        name = op.operation.name
        if name in ("affine.vector_load", "affine.vector_store"):
            continue
        if op.results and op.results[0] in new:
            continue
        op.operation.erase()
