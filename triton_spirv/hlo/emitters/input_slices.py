"""The input slices emitter: a multi-output fusion whose roots are slices of values of
one shape. The work-items walk that shape once; each element is computed once and
written to every slice that contains it (at (i - start) / stride)."""
from __future__ import annotations

from mlir import ir
from mlir.dialects import scf, tensor

from ..mlir_types import const_index
from ..indexing import Dim, IndexingMap, add, floordiv, mod
from ..scalar_code import apply_map
from .heroes import EmitterChoice
from .base import FusionBuilder, apply_linear, cdiv, cmp_lt, delinearize, linearize, to_storage



def try_input_slices(computation):
    root = computation.root
    if root.opcode != "tuple" or not root.operands:
        return None
    slices = root.operands
    if any(s.opcode != "slice" for s in slices):
        return None
    if len({s.operands[0].shape.dims for s in slices}) != 1:
        return None
    sources = list(dict.fromkeys(s.operands[0] for s in slices))
    return EmitterChoice("input_slices", slices, list(slices) + sources,
                         lambda b: emit_input_slices(b, slices), "roots are slices")


def _input_to_slice_map(s) -> IndexingMap:
    """input index -> slice index, with the constraints of being inside the slice."""
    dims = s.operands[0].shape.dims
    results, constraints = [], []
    for k, (start, limit, stride) in enumerate(s.slice_bounds()):
        shifted = add(Dim(k), -start)
        results.append(floordiv(shifted, stride))
        constraints.append((shifted, 0, limit - start - 1))
        if stride > 1:
            constraints.append((mod(shifted, stride), 0, 0))
    return IndexingMap([(0, d - 1) for d in dims], results, constraints=constraints)


def emit_input_slices(builder: FusionBuilder, slices) -> None:
    dims = slices[0].operands[0].shape.dims
    size = slices[0].operands[0].shape.size
    threads = builder.target.threads
    blocks = cdiv(size, threads)
    builder.report.launch.append(f"{builder.name}: grid {blocks} x local {threads} "
                                 f"work-items over the sliced shape {list(dims)}")
    maps = [_input_to_slice_map(s) for s in slices]
    builder.report.maps += [f"%{s.name}: {m}" for s, m in zip(slices, maps)]
    with builder.kernel("", threads) as k:
        linear = apply_linear([(k.block_id, threads), (k.thread_id, 1)])
        outs = list(k.outputs)
        op = scf.IfOp(cmp_lt(linear, const_index(size)), [o.type for o in outs], has_else=True)
        with ir.InsertionPoint(op.then_block):
            idx = delinearize(linear, dims)
            new = list(outs)
            for n, (s, m) in enumerate(zip(slices, maps)):
                if s.shape.size == 0:
                    continue
                out_idx, inside = apply_map(m, idx)
                inner = scf.IfOp(inside, [new[n].type], has_else=True)
                with ir.InsertionPoint(inner.then_block):
                    value = builder.root_values(s.operands[0], idx, k.tensors)[0]
                    scf.yield_([tensor.insert(to_storage(value, s.shape.element), new[n],
                                              [linearize(out_idx, s.shape.dims)])])
                with ir.InsertionPoint(inner.else_block):
                    scf.yield_([new[n]])
                new[n] = inner.results[0]
            scf.yield_(new)
        with ir.InsertionPoint(op.else_block):
            scf.yield_(outs)
        k.finish(list(op.results), blocks, "input slices")
