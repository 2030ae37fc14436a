"""`tt.reduce` and `tt.dot` as Linalg ops.

tt.reduce: a `linalg.generic` with a reduction iterator over `axis`. Triton's combine
region has no identity value, so the accumulator starts as the first slice along the axis
and the generic combines the remaining slices in order (`acc = combine(acc, element)`),
exactly Triton's left-to-right semantics for non-commutative combines. The combine region
is converted with the kernel's own op handlers, into the generic's body.

tt.dot: `linalg.matmul` (`linalg.batch_matmul` for 3-D) accumulating into the converted
accumulator; fp16/bf16/int8 inputs are widened to the accumulator type element by element
by linalg's own cast semantics.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import tensor

from . import builders as b
from . import linalg_ops as linalg
from .values import Value


def _slice_along(value: ir.Value, axis: int, start: int, size: int, drop: bool) -> ir.Value:
    """`value[..., start:start+size, ...]` along `axis`; with `drop`, the axis removed."""
    shape = b.shape_of(value.type)
    offsets = [0] * len(shape)
    offsets[axis] = start
    sizes = list(shape)
    sizes[axis] = size
    result_shape = [s for d, s in enumerate(sizes) if not (drop and d == axis)]
    result = ir.RankedTensorType.get(result_shape, b.element_type(value.type))
    return tensor.ExtractSliceOp(result, value, [], [], [], offsets, sizes,
                                 [1] * len(shape)).result


# Combines that are associative and commutative (floating-point ones up to rounding,
# which GPUs reorder as well): a reduction with one of them may run in lanes.
_LANE_COMBINES = {"arith.addf", "arith.mulf", "arith.addi", "arith.muli", "arith.andi",
                  "arith.ori", "arith.xori", "arith.maxnumf", "arith.minnumf",
                  "arith.maximumf", "arith.minimumf", "arith.maxsi", "arith.minsi",
                  "arith.maxui", "arith.minui"}
LANES = 16


def _lane_combine(op, inputs, axis) -> bool:
    """Whether `op` reduces one tensor along its last, contiguous axis (a multiple of
    LANES long, at least two rows of lanes) with a single associative, commutative op."""
    if len(inputs) != 1:
        return False
    shape = b.shape_of(inputs[0].type)
    if axis != len(shape) - 1 or shape[axis] % LANES or shape[axis] < 2 * LANES:
        return False
    body = [o.operation for o in op.regions[0].blocks[0].operations]
    return len(body) == 2 and body[0].name in _LANE_COMBINES or \
        _where_extreme(op.regions[0].blocks[0]) is not None


# arith.cmpf / arith.cmpi predicates: the comparison that picks the first operand.
_PICKS_FIRST = {("arith.cmpf", 2): "arith.maximumf", ("arith.cmpf", 4): "arith.minimumf",
                ("arith.cmpi", 4): "arith.maxsi", ("arith.cmpi", 2): "arith.minsi",
                ("arith.cmpi", 8): "arith.maxui", ("arith.cmpi", 6): "arith.minui"}
_CMPF_UNE = 13


def _where_extreme(combine: ir.Block) -> str | None:
    """The one arith op equal to a maximum or minimum written as a select, else None:
    `where(a > b, a, b)` (maxsi/maxui on integers), and on floats Inductor's
    `where(a > b | a != a, a, b)` (triton_helpers.maximum/minimum, its max2/min2),
    which propagates NaN as arith.maximumf/minimumf do (a NaN `a` is picked by the
    second test, a NaN `b` by the first failing). Only the sign of a zero tie may
    differ (`a` or `b` against -0 < +0), as in any reordered reduction."""
    args = list(combine.arguments)
    ops = [o.operation for o in combine.operations]
    if len(args) != 2 or args[0].type != args[1].type or len(ops) not in (3, 5):
        return None
    select, ret = ops[-2], ops[-1]
    if select.name != "arith.select" or list(ret.operands) != [select.result] or \
            list(select.operands)[1:] != args:
        return None
    compare = ops[0]
    if compare.name not in ("arith.cmpf", "arith.cmpi") or list(compare.operands) != args:
        return None
    found = _PICKS_FIRST.get((compare.name, ir.IntegerAttr(compare.attributes["predicate"]).value))
    if found is None:
        return None
    if len(ops) == 3:   # a bare select: NaNs would not propagate
        return found if compare.name == "arith.cmpi" and select.operands[0] == compare.result \
            else None
    is_nan, either = ops[1], ops[2]
    nan_test = is_nan.name == "arith.cmpf" and list(is_nan.operands) == [args[0], args[0]] and \
        ir.IntegerAttr(is_nan.attributes["predicate"]).value == _CMPF_UNE
    joined = either.name == "arith.ori" and \
        set(either.operands) == {compare.result, is_nan.result} and \
        select.operands[0] == either.result
    return found if compare.name == "arith.cmpf" and nan_test and joined else None


def _reduce_in_lanes(conv, op, values: list, axis: int, single: str | None) -> list:
    """`values` [..., n] -> [..., LANES]: lane l combines elements l, l + LANES, ...

    A sequential reduction is one long dependency chain through the accumulator; in
    lanes the inner loop runs over LANES independent accumulators, which the OpenCL
    compiler vectorizes. The caller then reduces the lanes as usual."""
    shape = b.shape_of(values[0].type)
    rows = shape[axis] // LANES
    split = shape[:axis] + [rows, LANES]
    reassociation = [[d] for d in range(axis)] + [[axis, axis + 1]]
    firsts, rests = [], []
    for value in values:
        split_type = ir.RankedTensorType.get(split, b.element_type(value.type))
        rowed = tensor.ExpandShapeOp(split_type, value, reassociation, [], split).result
        firsts.append(_slice_along(rowed, axis, 0, 1, drop=True))
        rests.append(_slice_along(rowed, axis, 1, rows - 1, drop=False))
    return _reduce_into(conv, op, rests, firsts, axis, len(split), single)


def _lane_pair_combine(op, inputs, axis) -> bool:
    """Whether `op` reduces (value, index) pairs along their last, contiguous axis (a
    multiple of LANES long, at least two rows of lanes) by picking the greater (or
    lesser) pair with ties broken toward the smaller index: a total order, so the pairs
    may regroup into lanes (tl.argmax's tie_break_left combine, Inductor's
    maximum_with_index / minimum_with_index)."""
    if len(inputs) != 2:
        return False
    shape = b.shape_of(inputs[0].type)
    if axis != len(shape) - 1 or shape[axis] % LANES or shape[axis] < 2 * LANES:
        return False
    combine = op.regions[0].blocks[0]
    args = list(combine.arguments)
    results = list(list(combine.operations)[-1].operands)
    selects = [r.owner for r in results if not isinstance(r, ir.BlockArgument)]
    if len(args) != 4 or len(selects) != 2 or \
            any(s.operation.name != "arith.select" for s in selects) or \
            selects[0].operands[0] != selects[1].operands[0] or \
            [list(s.operands)[1:] for s in selects] != [[args[0], args[2]], [args[1], args[3]]]:
        return False
    return _index_tie_broken(selects[0].operands[0], args)


def _index_tie_broken(condition: ir.Value, args: list) -> bool:
    """`condition` = `greater | (equal & index_a < index_b)`, where `greater` and
    `equal` compare the values a, b (with NaN tests of a and b alone besides)."""
    top = condition.owner
    if isinstance(condition, ir.BlockArgument) or top.name != "arith.ori":
        return False
    for greater, tie in (top.operands, reversed(list(top.operands))):
        tie_op = tie.owner if not isinstance(tie, ir.BlockArgument) else None
        if tie_op is None or tie_op.name != "arith.andi":
            continue
        for equal, before in (tie_op.operands, reversed(list(tie_op.operands))):
            if _compares(before, "arith.cmpi", (2, 6), [args[1], args[3]]) and \
                    _value_test(equal, args, (1,)) and _value_test(greater, args, (2, 4, 9, 11)):
                return True
    return False


def _compares(value: ir.Value, name: str, predicates: tuple, operands: list) -> bool:
    op = None if isinstance(value, ir.BlockArgument) else value.owner
    return op is not None and op.name == name and list(op.operands) == operands and \
        ir.IntegerAttr(op.attributes["predicate"]).value in predicates


def _value_test(value: ir.Value, args: list, predicates: tuple) -> bool:
    """`value` is `cmpf <predicate> a, b`, alone or or-ed with an and of NaN tests of
    a and b (`a != a`, `b != b`, their negations)."""
    if _compares(value, "arith.cmpf", predicates, [args[0], args[2]]) or \
            _compares(value, "arith.cmpi", _INT_PREDICATES.get(predicates, ()), [args[0], args[2]]):
        return True
    op = None if isinstance(value, ir.BlockArgument) else value.owner
    if op is None or op.name != "arith.ori":
        return False
    left, right = op.operands
    return (_value_test(left, args, predicates) and _nan_tests(right, args)) or \
        (_value_test(right, args, predicates) and _nan_tests(left, args))


# arith.cmpf predicates of the value comparisons: oeq; ogt, olt, ugt, ult. Their
# arith.cmpi counterparts on integer values: eq; slt, sgt, ult, ugt.
_INT_PREDICATES = {(1,): (0,), (2, 4, 9, 11): (2, 4, 6, 8)}


def _nan_tests(value: ir.Value, args: list) -> bool:
    """An and/xor tree over `a != a`, `b != b` and constants."""
    if isinstance(value, ir.BlockArgument):
        return False
    op = value.owner
    if op.name == "arith.constant":
        return True
    if op.name == "arith.cmpf":
        return list(op.operands) in ([args[0], args[0]], [args[2], args[2]])
    return op.name in ("arith.andi", "arith.xori") and \
        all(_nan_tests(v, args) for v in op.operands)


# Bitwise combines of i1s (Inductor's `any`/`all`, triton_helpers' `a | b`), which
# reduce in bytes: the memref stage keeps i1 tiles as one `uchar` per element, and its
# vector rewrites (register blocking, lanes) have no i1 form, while i8 has (`uchar16`).
_BYTE_COMBINES = {"arith.andi", "arith.ori", "arith.xori"}


def _bitwise_of_bits(op, inputs) -> str | None:
    """The combine op of a lane reduction of one i1 tensor by a bitwise op, else None."""
    combine = op.regions[0].blocks[0]
    body = [o.operation for o in combine.operations]
    elem = b.element_type(inputs[0].type) if len(inputs) == 1 else None
    if not isinstance(elem, ir.IntegerType) or elem.width != 1 or \
            body[0].name not in _BYTE_COMBINES or \
            set(body[0].operands) != set(combine.arguments) or \
            list(body[1].operands) != [body[0].result]:
        return None
    return body[0].name


def _retyped(value: ir.Value, elem: ir.Type) -> ir.Value:
    """`value` with its i1/i8 elements zero-extended or truncated to `elem`."""
    shape = b.shape_of(value.type)
    return b.generic([value], b.parallel_maps(len(shape), 1),
                     [ir.RankedTensorType.get(shape, elem)],
                     lambda x, _out: [b.cast_int(x, elem, signed=False)])[0]


def reduce(conv, op):
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    inputs = [conv.get_value(op, v).value for v in op.operands]
    single = None    # the one arith op of the generic's body, when not the combine region
    if conv.lane_reductions and _lane_combine(op, inputs, axis):
        single = _bitwise_of_bits(op, inputs)
        if single is not None:
            with op.location:
                inputs = [_retyped(inputs[0], ir.IntegerType.get_signless(8))]
        inputs = _reduce_in_lanes(conv, op, inputs, axis, single)
    elif conv.lane_reductions and _lane_pair_combine(op, inputs, axis):
        inputs = _reduce_in_lanes(conv, op, inputs, axis, None)
    shape = b.shape_of(inputs[0].type)
    rank = len(shape)
    out_shape = [s for d, s in enumerate(shape) if d != axis]
    # Start from the first slice; reduce the rest into it.
    accumulators = [_slice_along(v, axis, 0, 1, drop=True) for v in inputs]
    if shape[axis] > 1:
        rest = [_slice_along(v, axis, 1, shape[axis] - 1, drop=False) for v in inputs]
        accumulators = _reduce_into(conv, op, rest, accumulators, axis, rank, single)
    if single is not None:
        with op.location:
            accumulators = [_retyped(acc, ir.IntegerType.get_signless(1)) if out_shape
                            else b.cast_int(tensor.extract(acc, []), ir.IntegerType.get_signless(1),
                                            signed=False)
                            for acc in accumulators]
        for old, acc in zip(op.results, accumulators):
            conv.set(old, Value(acc))
        return
    for old, acc in zip(op.results, accumulators):
        if out_shape:
            conv.set(old, Value(acc))
        else:
            conv.set(old, Value(tensor.extract(acc, [])))


def _reduce_into(conv, op, inputs, inits, axis, rank, single: str | None = None):
    in_map = ir.AffineMap.get_identity(rank)
    out_map = ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(d) for d in range(rank) if d != axis])
    kinds = ["reduction" if d == axis else "parallel" for d in range(rank)]
    count = len(inputs)
    generic = linalg.GenericOp(
        result_tensors=[v.type for v in inits], inputs=inputs, outputs=inits,
        indexing_maps=ir.ArrayAttr.get([ir.AffineMapAttr.get(m)
                                        for m in [in_map] * count + [out_map] * count]),
        iterator_types=b.iterator_types(kinds))
    block = generic.regions[0].blocks.append(
        *[b.element_type(v.type) for v in inputs + inits])
    elements, accs = list(block.arguments)[:count], list(block.arguments)[count:]
    combine = op.regions[0].blocks[0]
    extreme = single or _where_extreme(combine)
    if extreme is not None:
        # One op the memref-stage rewrites know (register blocking, vectors), rather
        # than a compare, an or and a select on i1s, which they leave scalar.
        with ir.InsertionPoint(block), op.location:
            linalg.YieldOp([ir.Operation.create(extreme, results=[accs[0].type],
                                                operands=[accs[0], elements[0]]).result])
        return list(generic.results)
    skip_nans = _is_arg_min_max(combine)
    with ir.InsertionPoint(block):
        # combine(acc..., element...): the accumulated values come first.
        for arg, value in zip(combine.arguments, accs + elements):
            conv.set(arg, Value(value))

        def yield_results(results):
            values = [r.value for r in results]
            if skip_nans:
                values = _skipping_nans(values, accs, elements)
            linalg.YieldOp(values)

        conv.convert_region(combine, yield_results)
    return list(generic.results)


# arith.cmpf predicates of Triton's argmax (ogt) and argmin (olt) combines.
_CMPF_OGT, _CMPF_OLT = 2, 4


def _is_arg_min_max(combine: ir.Block) -> bool:
    """True for the combine of tl.argmax / tl.argmin (and tl.max / tl.min with
    return_indices): (value, index) pairs, both results `arith.select`s on one
    condition that compares the two values with `>` or `<`."""
    args = list(combine.arguments)
    if len(args) != 4 or not isinstance(args[0].type, ir.FloatType) \
            or not isinstance(args[1].type, ir.IntegerType):
        return False
    results = list(list(combine.operations)[-1].operands)
    selects = [r.owner.operation for r in results if isinstance(r.owner, (ir.Operation, ir.OpView))]
    if len(results) != 2 or len(selects) != 2 \
            or any(s.name != "arith.select" for s in selects):
        return False
    condition = selects[0].operands[0]
    if selects[1].operands[0] != condition:
        return False
    picks = [list(s.operands)[1:] for s in selects]
    if picks != [[args[0], args[2]], [args[1], args[3]]] or _tests_nan(combine):
        return False
    return any(o.name == "arith.cmpf"
               and ir.IntegerAttr(o.attributes["predicate"]).value in (_CMPF_OGT, _CMPF_OLT)
               and list(o.operands) == [args[0], args[2]]
               for o in (op.operation for op in combine.operations))


def _tests_nan(combine: ir.Block) -> bool:
    """Whether the combine decides about NaNs itself (a `cmpf` of a value with itself:
    Inductor's maximum_with_index / minimum_with_index, where a NaN wins as in torch's
    argmax): then it is the semantics, not Triton's argmax, whose NaNs are skipped."""
    return any(o.name == "arith.cmpf" and o.operands[0] == o.operands[1]
               for o in (op.operation for op in combine.operations))


def _skipping_nans(combined, accs, elements):
    """argmax / argmin as Triton's interpreter computes them (np.nanargmax): NaNs are
    skipped, so the result is the first extreme non-NaN value and its index (the
    first element if all are NaN). A bare `>` fold would let a NaN element replace
    the accumulator and the next element replace the NaN."""
    from mlir.dialects import arith
    acc_value, element_value = accs[0], elements[0]
    acc_nan = arith.cmpf(arith.CmpFPredicate.UNO, acc_value, acc_value)
    element_nan = arith.cmpf(arith.CmpFPredicate.UNO, element_value, element_value)
    out = []
    for result, acc, element in zip(combined, accs, elements):
        result = arith.select(acc_nan, element, result)
        out.append(arith.select(element_nan, acc, result))
    return out


def dot(conv, op):
    """`acc[m, n] += a[m, k] * b[k, n]` as a `linalg.contract` whose loops run m, k, n:
    the innermost loop walks rows of `b` and `acc` contiguously, which a CPU compiler
    vectorizes (the named linalg.matmul would put k innermost). A leading batch dim
    (3-D dots) is one more parallel loop outside. Operands are widened to the
    accumulator type as Triton's dot does (fp16/bf16 -> f32, i8 -> i32 sign-extended:
    the contraction's default `cast_signed`).

    It stays a named op through elementwise fusion, so producers of its operands (casts,
    gathers, arithmetic) are not fused into it and recomputed for every element of the
    other operand; the pipeline generalizes it afterwards."""
    a, bm, acc = (conv.get_value(op, v).value for v in list(op.operands)[:3])
    rank = len(b.shape_of(a.type))
    if rank not in (2, 3):
        raise conv.error(op, f"tt.dot of rank-{rank} operands is not supported")
    batch = [ir.AffineDimExpr.get(0)] if rank == 3 else []
    m, k, n = (ir.AffineDimExpr.get(d + rank - 2) for d in range(3))
    loops = rank + 1
    maps = [ir.AffineMap.get(loops, 0, batch + list(dims)) for dims in ((m, k), (k, n), (m, n))]
    result = linalg.contract(a, bm, outs=[acc],
                             indexing_maps=maps)
    conv.set(op.results[0], Value(result))


# ---------------------------------------------------------------------------------------
# tt.scan


def scan(conv, op):
    """tt.scan as sequential loops: for every position of the other dims, an scf.for
    along `axis` carries the accumulators (one scalar per operand) and stores each
    prefix into a result tile. `out[0] = x[0]`, `out[i] = combine(out[i-1], x[i])`;
    `reverse` walks the axis from the end (Triton's interpreter flips, scans, flips)."""
    from mlir.dialects import arith, memref, scf
    from . import memory

    axis = ir.IntegerAttr(op.attributes["axis"]).value
    reverse = "reverse" in op.attributes and ir.BoolAttr(op.attributes["reverse"]).value
    inputs = [conv.get_value(op, v).value for v in op.operands]
    shape = b.shape_of(inputs[0].type)
    length = shape[axis]
    elems = [b.element_type(v.type) for v in inputs]
    tiles = [memory.tile_buffer(shape, e) for e in elems]
    outer = [s for d, s in enumerate(shape) if d != axis]
    combine = op.regions[0].blocks[0]

    def position(indices, i):
        coords = list(indices)
        coords.insert(axis, i)
        return coords

    def along(i):
        return arith.subi(b.const_index(length - 1), i) if reverse else i

    def per_row(indices):
        first = along(b.const_index(0))
        accs = [tensor.extract(v, position(indices, first)) for v in inputs]
        for acc, tile in zip(accs, tiles):
            memref.store(acc, tile, position(indices, first))
        loop = scf.ForOp(b.const_index(1), b.const_index(length), b.const_index(1), accs)
        with ir.InsertionPoint(loop.body):
            j = along(loop.induction_variable)
            elements = [tensor.extract(v, position(indices, j)) for v in inputs]
            for arg, value in zip(combine.arguments, list(loop.inner_iter_args) + elements):
                conv.set(arg, Value(value))
            results = []
            conv.convert_region(combine, lambda rs: results.extend(r.value for r in rs))
            for r, tile in zip(results, tiles):
                memref.store(r, tile, position(indices, j))
            scf.YieldOp(results)

    memory.loop_nest(outer, per_row)
    for old, tile in zip(op.results, tiles):
        conv.set(old, Value(memory.as_tensor(tile)))
