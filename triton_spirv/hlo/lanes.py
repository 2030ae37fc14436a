"""pack-lane-accumulators: scalar lanes of a loop -> one vector per accumulator.

The row reduction emitter (per-work-item shape, emitters/reduction.py) walks a row
V positions at a time in an scf.for marked `hlo.lane_accumulators = V`. It carries V
scalar accumulators per reduced value, accumulator-major (all lanes of value 0, then
of value 1, ...); lane j updates its own from position i + j. After
vectorize-loads-stores, lane j of a load is `vector.extract %vload[j]`.

When the V lanes compute alike -- each yielded value is the same op on lane j of the
same operands, down to vector loads, the lanes' own accumulators and values common to
all lanes -- the loop is rebuilt to carry one vector<V x T> per reduced value and
compute each op once on vectors (`float16 acc = acc + vload16(...)`: the OpenCL
compiler of a CPU device vectorizes that; it does not vectorize V scalar chains).
After the loop, each lane is a `vector.extract` of the results, so the code that
combines the lanes stays as it was. A loop whose lanes differ (e.g. argmax, whose
index lanes are i + j) or use an op outside `PACKABLE` is left scalar: correct, and
the loads are still vector loads.
"""
from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, scf, vector

from ..ir_helpers import remap_operands

LANE_ATTR = "hlo.lane_accumulators"

# Elementwise ops that have the same meaning on vectors and that the OpenCL emitter
# prints for vectors. (No truncf: vector casts to f16/bf16 are not printed; their
# results are never vectors here, see _lanewise.)
PACKABLE = frozenset("""
arith.addf arith.subf arith.mulf arith.divf arith.negf arith.maximumf arith.minimumf
arith.maxnumf arith.minnumf arith.addi arith.subi arith.muli arith.maxsi arith.minsi
arith.maxui arith.minui arith.andi arith.ori arith.xori arith.cmpf arith.cmpi
arith.select arith.extf arith.sitofp arith.uitofp arith.extsi arith.extui arith.trunci
math.exp math.exp2 math.log math.log2 math.log1p math.expm1 math.sqrt math.rsqrt
math.absf math.absi math.tanh math.erf math.sin math.cos math.floor math.ceil
math.fma math.powf
""".split())
# Ops that may take vectors of i1 (comparison masks) as operands.
MASK_OPERANDS = frozenset({"arith.select", "arith.andi", "arith.ori", "arith.xori"})
# Casts of positions to integers (iota): lanes i + j become cast(i) + [0, 1, ..., V-1].
INDEX_CASTS = frozenset({"arith.index_cast", "arith.index_castui"})
# Elements of the vectors the pass makes (f16 lanes only come from loads, as vload_half:
# computing on them is done in f32).
VECTOR_ELEMENTS = ("f32", "f64", "i8", "i16", "i32", "i64")


# -- what a vector is made of -----------------------------------------------------

@dataclass(frozen=True)
class Uniform:
    """A value common to all lanes (defined outside the lanes): broadcast."""
    value: ir.Value


@dataclass(frozen=True)
class Carried:
    """The lanes of loop-carried accumulator `group`: the new vector iter_arg."""
    group: int


@dataclass(frozen=True)
class Loaded:
    """The lanes of a vector load in the loop body (width V): the load itself."""
    load: ir.Value


@dataclass(frozen=True)
class Counting:
    """Lane j is `first + j`: an index cast of positions i + j (iota along the row)."""
    first: ir.Value


@dataclass(frozen=True)
class Lanewise:
    """The same op on every lane: the op on vectors."""
    op: object                 # the lane-0 op, a template (name, attributes, location)
    operands: tuple


def pack_lane_accumulators(module: ir.Module) -> int:
    """Packs every marked loop whose lanes compute alike; returns how many."""
    loops = []

    def visit(op):
        if op.name == "scf.for" and LANE_ATTR in op.attributes:
            loops.append(op)
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    packed = sum(1 for loop in loops if _pack(loop))
    return packed


def _pack(loop) -> bool:
    lanes = ir.IntegerAttr(loop.attributes[LANE_ATTR]).value
    body = loop.regions[0].blocks[0]
    carried = list(loop.operands)[3:]
    if lanes < 2 or not carried or len(carried) % lanes:
        return False
    groups = len(carried) // lanes
    yielded = list(list(body.operations)[-1].operands)
    matcher = _LaneMatcher(body, lanes)
    plans = [matcher.match(yielded[g * lanes:(g + 1) * lanes]) for g in range(groups)]
    inits = [carried[g * lanes:(g + 1) * lanes] for g in range(groups)]
    if None in plans or any(len(set(i)) != 1 for i in inits) \
            or any(not _vector_element(i[0].type) for i in inits):
        return False
    _rebuild(loop, lanes, plans, [i[0] for i in inits])
    return True


def _vector_element(t: ir.Type) -> bool:
    return str(t) in VECTOR_ELEMENTS


class _LaneMatcher:
    """Matches the V lane values of each yielded accumulator to one vector plan."""

    def __init__(self, body: ir.Block, lanes: int):
        self.body = body
        self.lanes = lanes
        self.memo: dict = {}

    def match(self, values):
        key = tuple(values)
        if key not in self.memo:
            self.memo[key] = self._match(values)
        return self.memo[key]

    def _match(self, values):
        first = values[0]
        if all(v == first for v in values):
            return Uniform(first) if _vector_element(first.type) or _is_mask(first) \
                else None
        return self._carried(values) or self._loaded(values) or self._lanewise(values)

    def _carried(self, values):
        positions = [_argument_number(v, self.body) for v in values]
        if None in positions:
            return None
        group, lane = divmod(positions[0] - 1, self.lanes)
        if lane != 0 or positions != [positions[0] + j for j in range(self.lanes)]:
            return None
        return Carried(group)

    def _loaded(self, values):
        ops = [_defining_op(v) for v in values]
        if any(o is None or o.name != "vector.extract" or len(o.operands) != 1
               for o in ops):
            return None
        source = ops[0].operands[0]
        vtype = ir.VectorType(source.type)
        if vtype.rank != 1 or vtype.shape[0] != self.lanes:
            return None
        for j, o in enumerate(ops):
            position = list(ir.DenseI64ArrayAttr(o.attributes["static_position"]))
            if o.operands[0] != source or position != [j]:
                return None
        return Loaded(source)

    def _lanewise(self, values):
        ops = [_defining_op(v) for v in values]
        if any(o is None for o in ops):
            return None
        template = ops[0]
        if template.name in INDEX_CASTS and self._counting([o.operands[0] for o in ops]):
            return Counting(values[0]) if _vector_element(values[0].type) else None
        if template.name not in PACKABLE or len(template.results) != 1 \
                or len(template.regions) or not _same_ops(ops):
            return None
        result = template.results[0].type
        if not (_vector_element(result) or str(result) == "i1"):
            return None
        if template.name in MASK_OPERANDS and str(result) == "i1" \
                and _mask_bits(template.results[0]) is None:
            return None
        operands = []
        for n in range(len(template.operands)):
            plan = self.match([o.operands[n] for o in ops])
            if plan is None or not self._operand_allowed(template, n, plan):
                return None
            operands.append(plan)
        return Lanewise(template, tuple(operands))

    def _counting(self, positions) -> bool:
        """Whether the lanes are positions p, p + 1, ..., p + V - 1."""
        return all(_plus_constant(v) == (positions[0], j) for j, v in enumerate(positions)
                   if j > 0)

    def _operand_allowed(self, op, n, plan) -> bool:
        """Masks (i1 lanes) only where OpenCL's mask semantics are the op's; a mask
        common to all lanes only as a select condition (printed `c ? a : b`)."""
        if str(op.operands[n].type) != "i1":
            return True
        if op.name not in MASK_OPERANDS:
            return False
        return not isinstance(plan, Uniform) or (op.name == "arith.select" and n == 0)


def _plus_constant(value) -> tuple[ir.Value, int] | None:
    """value = base + constant (an arith.addi of index values) -> (base, constant)."""
    op = _defining_op(value)
    if op is None or op.name != "arith.addi":
        return None
    for base, other in (op.operands, reversed(list(op.operands))):
        constant = _defining_op(other)
        if constant is not None and constant.name == "arith.constant":
            return base, ir.IntegerAttr(constant.attributes["value"]).value
    return None


def _mask_bits(value) -> int | None:
    """The lane width of a vector mask (OpenCL: a comparison of floatN gives intN, of
    doubleN longN); None when it has none or mixes widths, which OpenCL C cannot
    combine (`int8 & long8`)."""
    op = _defining_op(value)
    if op is None:
        return None
    if op.name in ("arith.cmpf", "arith.cmpi"):
        return bit_width(op.operands[0].type)
    if op.name in ("arith.andi", "arith.ori", "arith.xori"):
        widths = {_mask_bits(v) for v in op.operands}
        return widths.pop() if len(widths) == 1 else None
    return None


def bit_width(t: ir.Type) -> int:
    if isinstance(t, ir.IndexType):
        return 64
    if isinstance(t, ir.IntegerType):
        return ir.IntegerType(t).width
    return ir.FloatType(t).width


def _is_mask(value) -> bool:
    return str(value.type) == "i1"


def _same_ops(ops) -> bool:
    first = ops[0]
    shape = (first.name, len(first.operands), str(first.results[0].type), _attributes(first))
    return all((o.name, len(o.operands), str(o.results[0].type), _attributes(o)) == shape
               for o in ops[1:])


def _attributes(op) -> tuple:
    return tuple(sorted((name, str(op.attributes[name])) for name in op.attributes))


def _defining_op(value):
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    return owner.operation if hasattr(owner, "operation") else owner


def _argument_number(value, block) -> int | None:
    if not isinstance(value.owner, ir.Block) or value.owner != block:
        return None
    return ir.BlockArgument(value).arg_number


# -- rebuilding the loop on vectors -------------------------------------------------

def _rebuild(loop, lanes, plans, inits) -> None:
    """A new loop carrying one vector per group: its body is the old body (its
    accumulators read from the vectors' lanes, dead once the vector ops replace the
    yields) followed by the vector ops; the old loop's results become lanes of the
    new one's."""
    old_body = loop.regions[0].blocks[0]
    lower, upper, step = list(loop.operands)[:3]
    with ir.InsertionPoint(loop), loop.location:
        vector_inits = [vector.broadcast(_vector_type(v.type, lanes), v) for v in inits]
        new = scf.ForOp(lower, upper, step, vector_inits)
    for name in loop.attributes:
        if name != LANE_ATTR:
            new.operation.attributes[name] = loop.attributes[name]
    body_ops = list(old_body.operations)
    with ir.InsertionPoint(new.body), loop.location:
        accs = list(new.inner_iter_args)
        mapping = {old_body.arguments[0]: new.induction_variable}
        for g, acc in enumerate(accs):
            for j in range(lanes):
                mapping[old_body.arguments[1 + g * lanes + j]] = vector.extract(acc, [], [j])
        for op in body_ops[:-1]:
            clone = op.clone(ip=ir.InsertionPoint(new.body))
            remap_operands(clone, mapping)
            for old, cloned in zip(op.results, clone.results):
                mapping[old] = cloned
        builder = _VectorBuilder(lanes, mapping, accs)
        scf.yield_([builder.build(plan) for plan in plans])
    new.body.arguments[0].set_location(old_body.arguments[0].location)
    for g, acc in enumerate(accs):
        acc.set_location(old_body.arguments[1 + g * lanes].location)
    with ir.InsertionPoint(loop), ir.Location.name("lane", childLoc=loop.location):
        for g, result in enumerate(new.results):
            for j in range(lanes):
                loop.results[g * lanes + j].replace_all_uses_with(
                    vector.extract(result, [], [j]))
    loop.erase()


def _vector_type(element: ir.Type, lanes: int) -> ir.VectorType:
    return ir.VectorType.get([lanes], element)


class _VectorBuilder:
    def __init__(self, lanes, mapping, accs):
        self.lanes = lanes
        self.mapping = mapping
        self.accs = accs
        self.built: dict = {}

    def build(self, plan, scalar_ok: bool = False) -> ir.Value:
        key = (plan, scalar_ok)
        if key not in self.built:
            self.built[key] = self._build(plan, scalar_ok)
        return self.built[key]

    def _build(self, plan, scalar_ok):
        if isinstance(plan, Uniform):
            value = self.mapping.get(plan.value, plan.value)
            if scalar_ok:
                return value
            return vector.broadcast(_vector_type(value.type, self.lanes), value)
        if isinstance(plan, Carried):
            return self.accs[plan.group]
        if isinstance(plan, Loaded):
            return self.mapping[plan.load]
        if isinstance(plan, Counting):
            return self._counting(self.mapping[plan.first])
        op = plan.op
        operands = [self.build(p, scalar_ok=op.name == "arith.select" and n == 0)
                    for n, p in enumerate(plan.operands)]
        result = _vector_type(op.results[0].type, self.lanes)
        attributes = {name: op.attributes[name] for name in op.attributes}
        return ir.Operation.create(op.name, results=[result], operands=operands,
                                   attributes=attributes, loc=op.location).results[0]

    def _counting(self, first: ir.Value) -> ir.Value:
        """broadcast(first) + [0, 1, ..., V-1] (integers wrap, as the casts would)."""
        vtype = _vector_type(first.type, self.lanes)
        with first.owner.location:
            steps = ir.DenseElementsAttr.get(
                [ir.IntegerAttr.get(first.type, j) for j in range(self.lanes)], vtype)
            return arith.addi(vector.broadcast(vtype, first), arith.constant(vtype, steps))
