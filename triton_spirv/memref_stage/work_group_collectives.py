"""GPU-shaped reductions on devices with work-group collective functions.

work_group_sharing.py reduces a serial reduction loop (`for i: acc = acc <op> f(view[i])`)
as a `__local` tree: partials, then steps that fold up to eight partials into one, a
barrier after each (work_group_reductions.py). Where the target has OpenCL C's work-group collective functions
(`TargetDescription.work_group_collectives`), a sum, minimum or maximum becomes instead:

    %first = lb + lid * step                     // work-item lid: lid, lid + W, ...
    %partial = scf.for %i = %first to %ub step (step * W) iter_args(%p = identity) {
      ... %p <op> f(view[%i]) ...
    }
    %total = gpu.all_reduce <kind> %partial uniform {}
    scf.if lid == 0 { acc = acc <op> %total }    // a single-work-item section

which the emitter prints as `work_group_reduce_add/min/max` and the SPIR-V stage as
OpGroup* instructions of work-group scope: no `__local` partials, no barrier of ours.

Float minimum and maximum: OpenCL leaves NaN to the device in `work_group_reduce_max`
(SPIR-V's OpGroupFMax as well), and the combiners differ there: `arith.maximumf`
propagates NaN (`tl.maximum(..., propagate_nan=ALL)`), `arith.maxnumf` returns the other
operand (`tl.max`). The partials are reduced as ordered integers instead: the float's
bits, negative values with their magnitude bits flipped (so that integers order like
the floats, -0 below +0), NaN made the greatest value where the combiner keeps it
(maximumf, minnumf) and the least where it drops it (minimumf, maxnumf). The integer
extreme is then exactly what the combiner would give, on every device.

8- and 16-bit integers (no collective of their own) are widened to 32 bits as the
combiner reads them (sign- or zero-extended); a sum truncated back wraps as theirs would.
f16/bf16 minima and maxima reduce their exact f32 values. Products, bitwise reductions
and f16/bf16 sums (f32 would round them differently from the tree) keep the tree.
"""
from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu, scf

from ..ir_helpers import named

# combiner -> (collective, identity of the combiner); float min/max reduce ordered
# integers (_ordered_key).
_KINDS = {
    "arith.addf": ("add", "negative zero"),
    "arith.addi": ("add", "zero"),
    "arith.maxsi": ("maxsi", "signed min"),
    "arith.minsi": ("minsi", "signed max"),
    "arith.maxui": ("maxui", "zero"),
    "arith.minui": ("minui", "all ones"),
    "arith.maximumf": ("maxsi", "-inf"),
    "arith.minimumf": ("minsi", "+inf"),
    "arith.maxnumf": ("maxsi", "nan"),
    "arith.minnumf": ("minsi", "nan"),
}
# Float combiners reduced as ordered integers: whether NaN is the greatest key.
_NAN_IS_GREATEST = {"arith.maximumf": True, "arith.minnumf": True,
                    "arith.minimumf": False, "arith.maxnumf": False}
_UNSIGNED = ("arith.maxui", "arith.minui")
_COLLECTIVE_OPS = {
    "add": gpu.AllReduceOperation.ADD,
    "maxsi": gpu.AllReduceOperation.MAXSI, "minsi": gpu.AllReduceOperation.MINSI,
    "maxui": gpu.AllReduceOperation.MAXUI, "minui": gpu.AllReduceOperation.MINUI,
}
# Integer widths with a collective (after widening 8/16-bit integers); floats: see
# has_collective.
_INT_WIDTHS = (8, 16, 32, 64)


@dataclass
class CollectiveReduction:
    """The ops that replaced a serial reduction loop."""
    fold: object        # the work-item's scf.for over its elements
    final: object       # `scf.if lid == 0` folding the total into the accumulator


def has_collective(combiner) -> bool:
    """Whether the reduction with `combiner` (an arith op) reduces as a collective."""
    name = combiner.operation.name
    element = combiner.results[0].type
    if name not in _KINDS:
        return False
    if isinstance(element, ir.IntegerType):
        return element.width in _INT_WIDTHS
    if isinstance(element, (ir.F16Type, ir.BF16Type)):
        return name in _NAN_IS_GREATEST     # exact in f32; sums would round differently
    return isinstance(element, (ir.F32Type, ir.F64Type))


def reduce_collectively(match, lid: ir.Value, work_items: int) -> CollectiveReduction:
    """Rewrites `match` (work_group_sharing.SerialReduction, whose combiner
    has_collective) as above; erases its loop."""
    loop = match.loop
    with loop.location, ir.InsertionPoint(loop):
        fold = fold_per_work_item(match, lid, work_items)
        total = reduce_across(match.combiner, fold.results[0], _group_reduce, "group")
        final = fold_into_accumulator(match, lid, total)
    loop.operation.erase()
    return CollectiveReduction(fold, final)


def fold_per_work_item(match, lid: ir.Value, work_items: int):
    """Work-item `lid`'s fold of its elements (lid, lid + W, ...) from the combiner's
    identity: an scf.for with the partial as its result."""
    index = ir.IndexType.get()
    combiner = match.combiner
    lb, ub, step = match.loop.operands[0], match.loop.operands[1], match.loop.operands[2]
    first = arith.addi(lb, arith.muli(lid, step))
    stride = arith.muli(step, arith.constant(index, work_items))
    fold = scf.ForOp(first, ub, stride, [identity(combiner, combiner.results[0].type)])
    with ir.InsertionPoint(fold.body):
        value = match.clone_element(fold.induction_variable)
        scf.YieldOp([match.clone_combiner(fold.inner_iter_args[0], value)])
    return fold


def fold_into_accumulator(match, lid: ir.Value, total: ir.Value):
    """`scf.if lid == 0 { acc = acc <op> total }`."""
    is_first = arith.cmpi(arith.CmpIPredicate.eq, lid, arith.constant(ir.IndexType.get(), 0))
    final = scf.IfOp(is_first)
    with ir.InsertionPoint(final.then_block):
        old = match.load_accumulator()
        match.store_accumulator(match.clone_combiner(old, total))
        scf.YieldOp([])
    return final


def _group_reduce(value: ir.Value, kind) -> ir.Value:
    return gpu.all_reduce(value, op=kind, uniform=True)


def reduce_across(combiner, partial: ir.Value, reduce, scope: str) -> ir.Value:
    """The combination of every work-item's `partial` by `reduce(value, kind)` (a
    uniform gpu.all_reduce or gpu.subgroup_reduce of that gpu.AllReduceOperation), in
    the partial's own type; `scope` prefixes the C variables' names."""
    name = combiner.operation.name
    collective = _KINDS[name][0]
    kind = _COLLECTIVE_OPS[collective]
    here = ir.Location.current
    # the emitter names C variables after these (affine_nests.named)
    group = named(f"{scope}_sum" if collective == "add" else f"{scope}_{collective[:3]}", here)
    if name in _NAN_IS_GREATEST:
        narrow = isinstance(partial.type, (ir.F16Type, ir.BF16Type))
        value = arith.extf(ir.F32Type.get(), partial) if narrow else partial
        with named("key", here):
            key = _ordered_key(value, _NAN_IS_GREATEST[name])
        with group:
            extreme = reduce(key, kind)
        with named("total", here):
            total = arith.bitcast(value.type, _ordered_key_bits(extreme))
            return arith.truncf(partial.type, total) if narrow else total
    width = ir.IntegerType(partial.type).width if isinstance(partial.type, ir.IntegerType) else None
    if width is None or width >= 32:
        with group:
            return reduce(partial, kind)
    wide = ir.IntegerType.get_signless(32)
    with named("wide", here):
        widened = (arith.extui if name in _UNSIGNED else arith.extsi)(wide, partial)
    with group:
        total = reduce(widened, kind)
    with named("total", here):
        return arith.trunci(partial.type, total)


def _ordered_key(value: ir.Value, nan_is_greatest: bool) -> ir.Value:
    """The float `value` as a signed integer that orders like the floats, NaN as one
    canonical NaN at the top or the bottom."""
    width = ir.FloatType(value.type).width
    bits_type = ir.IntegerType.get_signless(width)
    quiet = {32: 9, 64: 12}[width]      # exponent bits and the quiet bit
    nan_bits = ((1 << quiet) - 1) << (width - 1 - quiet)
    if not nan_is_greatest:
        nan_bits |= 1 << (width - 1)
    is_nan = arith.cmpf(arith.CmpFPredicate.UNO, value, value)
    bits = arith.select(is_nan, arith.constant(bits_type, _signed(nan_bits, width)),
                        arith.bitcast(bits_type, value))
    return _ordered_key_bits(bits)


def _ordered_key_bits(bits: ir.Value) -> ir.Value:
    """Negative values with their magnitude bits flipped: float bits <-> ordered key
    (its own inverse)."""
    width = ir.IntegerType(bits.type).width
    magnitude = arith.constant(bits.type, (1 << (width - 1)) - 1)
    negative = arith.cmpi(arith.CmpIPredicate.slt, bits, arith.constant(bits.type, 0))
    return arith.select(negative, arith.xori(bits, magnitude), bits)


def identity(combiner, element_type) -> ir.Value:
    """The value that leaves every operand of `combiner` as it is."""
    identity = _KINDS[combiner.operation.name][1]
    if isinstance(element_type, ir.IntegerType):
        width = element_type.width
        value = {"zero": 0, "all ones": -1, "signed min": -(1 << (width - 1)),
                 "signed max": (1 << (width - 1)) - 1}[identity]
        return arith.constant(element_type, value)
    value = {"negative zero": -0.0, "-inf": float("-inf"), "+inf": float("inf"),
             "nan": float("nan")}[identity]
    return arith.constant(element_type, value)


def _signed(value: int, width: int) -> int:
    """`value`'s bits as a signed integer of `width` bits."""
    return value - (1 << width) if value >> (width - 1) else value
