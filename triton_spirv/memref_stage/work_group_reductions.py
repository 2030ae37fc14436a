"""GPU-shaped kernels, work-group sharing (work_group_sharing.py): a serial reduction
loop (`for i: acc = acc <op> f(view[i])`) outside the distributed loops is shared by
the work-group: sub-group functions and one `__local` step across the sub-groups where
the target has them and a collective for the combiner (work_group_sub_groups.py), a
work-group collective function where it has only those (work_group_collectives.py),
else a tree of partials in `__local` memory.
Its ops hold their own barriers; their accesses are recorded for the barrier analysis.
"""
from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu, memref, scf

from ..ir_helpers import root_buffer as _root
from .affine_nests import matched_loops, op_of, owner
from .affine_nests import constant_index as _constant_index
from .work_group_collectives import has_collective, reduce_collectively
from .work_group_distribution import trip_count
from .work_group_sub_groups import reduce_by_sub_groups
from .work_group_sharing import (ANY, READS, SINGLE, WRITES, Access, entry_block, functions,
                                 is_local, plain_accesses, sharing_of)


def reduce_on_work_group(module: ir.Module, config, analyses: dict) -> None:
    """Serial reduction loops outside the distributed ones: through sub-groups
    (`config.sub_groups`) or a work-group collective (`config.collectives`) where the
    target has them and one for the combiner, else a tree."""
    for func in functions(module):
        sharing = sharing_of(func, config, analyses)
        for match in _serial_reductions(entry_block(func), sharing.distributed):
            if config.sub_groups and has_collective(match.combiner):
                reduce_with_sub_groups(sharing, match, config.min_sub_group_size)
            elif config.collectives and has_collective(match.combiner):
                reduce_with_collective(sharing, match)
            else:
                reduce_as_tree(sharing, match)


def reduce_with_collective(sharing, match: "SerialReduction") -> None:
    """The reduction as one work-group collective (work_group_collectives.py); its
    accesses as the barrier analysis sees them: every work-item reads the view,
    work-item 0 updates the accumulator."""
    made = reduce_collectively(match, sharing.lid, sharing.work_items)
    sharing.partitioned[op_of(made.fold)] = [Access(_root(match.view), False, ANY)]
    sharing.record_single_section(made.final)
    sharing.partitioned[op_of(made.final)] = plain_accesses(made.final, SINGLE)


def reduce_with_sub_groups(sharing, match: "SerialReduction", min_sub_group_size: int) -> None:
    """The reduction through sub-groups (work_group_sub_groups.py); its accesses as
    the barrier analysis sees them: every work-item reads the view, the sub-group
    leaders write their `__local` totals (ordered after work-item 0's reads of an
    earlier round by the analysis, before its reads by the form's own barrier),
    work-item 0 reads them and updates the accumulator."""
    made = reduce_by_sub_groups(match, sharing.lid, sharing.work_items, min_sub_group_size)
    sharing.partitioned[op_of(made.fold)] = [Access(_root(match.view), False, ANY)]
    sharing.partitioned[op_of(made.publish)] = plain_accesses(made.publish, ANY)
    sharing.record_single_section(made.final)
    sharing.partitioned[op_of(made.final)] = plain_accesses(made.final, SINGLE)


# Partials each work-item of a tree step folds: four, so a step quarters them (one
# barrier per step: 4 steps for 128 work-items where halving took 7).
TREE_FANOUT = 4


def reduce_as_tree(sharing, match: "SerialReduction") -> None:
    """`for i: acc = acc <op> f(view[i])` becomes: each work-item folds f over its
    elements (i = lb + lid, lb + lid + W, ...) in a register and writes the partial
    to `__local partials[lid]`; steps that fold TREE_FANOUT partials into one (2 in the
    last where fewer are left) combine them, a barrier after each; work-item 0 folds
    partials[0] into acc."""
    loop, w = match.loop, sharing.work_items
    index = ir.IndexType.get()
    element_type = match.combiner.results[0].type
    with loop.location, ir.InsertionPoint(loop):
        c = lambda v: arith.constant(index, v)  # noqa: E731
        lb, ub, step = loop.operands[0], loop.operands[1], loop.operands[2]
        count = trip_count(lb, ub, step)
        # A loop of known length has at most that many partials: a smaller tile and
        # no steps in which no work-item has a partner.
        known = _constant_index(count)
        slots = w if known is None else max(1, min(known, w))
        valid = arith.minsi(count, c(w))
        partials = memref.alloc(ir.MemRefType.get([slots], element_type), [], [])
        has_element = arith.cmpi(arith.CmpIPredicate.ult, sharing.lid, count)
        fold = scf.IfOp(has_element)
    with loop.location, ir.InsertionPoint(fold.then_block):
        first_iv = arith.addi(lb, arith.muli(sharing.lid, step))
        first = match.clone_element(first_iv)
        stride = arith.muli(step, c(w))
        rest = scf.ForOp(arith.addi(first_iv, stride), ub, stride, [first])
        with ir.InsertionPoint(rest.body):
            value = match.clone_element(rest.induction_variable)
            combined = match.clone_combiner(rest.inner_iter_args[0], value)
            scf.YieldOp([combined])
        memref.store(rest.results[0], partials, [sharing.lid])
        scf.YieldOp([])
    sharing.partitioned[op_of(fold)] = [Access(_root(match.view), False, ANY)]
    with loop.location, ir.InsertionPoint(loop):
        gpu.barrier()
        span = 1
        while span < slots:
            span *= 2
        while span > 1:
            fanout = TREE_FANOUT if span >= TREE_FANOUT else 2
            span //= fanout
            _tree_step(sharing, match, partials, valid, span, fanout)
            gpu.barrier()
        is_first = arith.cmpi(arith.CmpIPredicate.eq, sharing.lid, c(0))
        final = scf.IfOp(is_first)
        with ir.InsertionPoint(final.then_block):
            total = memref.load(partials, [c(0)])
            old = memref.load(match.accumulator, [])
            memref.store(match.clone_combiner(old, total), match.accumulator, [])
            scf.YieldOp([])
    # Only when the loop runs at all: an empty range leaves acc as it is.
    sharing.record_single_section(final)
    sharing.partitioned[op_of(final)] = plain_accesses(final, SINGLE)
    loop.operation.erase()


def _tree_step(sharing, match: "SerialReduction", partials, valid, span: int, fanout: int):
    """partials[lid] <op>= partials[lid + k * span] for k < fanout, on the work-items
    below `span` that hold a partial, each partner only where it holds one."""
    index = ir.IndexType.get()
    c = lambda v: arith.constant(index, v)  # noqa: E731
    active = arith.andi(arith.cmpi(arith.CmpIPredicate.ult, sharing.lid, c(span)),
                        arith.cmpi(arith.CmpIPredicate.ult, sharing.lid, valid))
    step_if = scf.IfOp(active)
    with ir.InsertionPoint(step_if.then_block):
        mine = memref.load(partials, [sharing.lid])
        for k in range(1, fanout):
            partner = arith.addi(sharing.lid, c(k * span))
            has_partner = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ult, partner, valid),
                                   [mine.type], has_else=True)
            with ir.InsertionPoint(has_partner.then_block):
                theirs = memref.load(partials, [partner])
                scf.YieldOp([match.clone_combiner(mine, theirs)])
            with ir.InsertionPoint(has_partner.else_block):
                scf.YieldOp([mine])
            mine = has_partner.results[0]
        memref.store(mine, partials, [sharing.lid])
        scf.YieldOp([])
    sharing.partitioned[op_of(step_if)] = []


# Associative and commutative: a tree may combine in any order.
COMBINERS = ("arith.addf", "arith.mulf", "arith.maximumf", "arith.minimumf", "arith.maxnumf",
             "arith.minnumf", "arith.addi", "arith.muli", "arith.andi", "arith.ori",
             "arith.xori", "arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui")


@dataclass
class SerialReduction:
    """`scf.for %iv { <element_ops giving element>; a = load acc[]; store combiner(a,
    element), acc[] }` reading `view` at [%iv]."""
    loop: object
    iv: ir.Value
    accumulator: ir.Value
    view: ir.Value
    element_ops: list
    element: ir.Value
    combiner: object

    def clone_element(self, iv) -> ir.Value:
        """The loop body's value for element `iv`, cloned at the insertion point."""
        mapping = {self.iv: iv}
        for op in self.element_ops:
            clone = op.operation.clone()
            _remap(clone, mapping)
            for old, new in zip(op.results, clone.results):
                mapping[old] = new
        return mapping.get(self.element, self.element)

    def clone_combiner(self, left, right) -> ir.Value:
        clone = self.combiner.operation.clone()
        clone.operands[0], clone.operands[1] = left, right
        return clone.results[0]


def _serial_reductions(block: ir.Block, distributed: dict) -> list:
    """Reduction loops run by the whole work-group (not inside a distributed loop)."""
    return matched_loops(block, _match_reduction, distributed)


def _match_reduction(loop) -> SerialReduction | None:
    if len(loop.results) or _constant_index(loop.operands[2]) != 1:
        return None
    body = loop.regions[0].blocks[0]
    iv = body.arguments[0]
    ops = list(body.operations)[:-1]
    if len(ops) < 4 or ops[-1].operation.name != "memref.store":
        return None
    store, combiner, acc_load = ops[-1], ops[-2], None
    accumulator = store.operands[1]
    if combiner.operation.name not in COMBINERS or store.operands[0] != combiner.results[0] \
            or ir.MemRefType(accumulator.type).rank != 0 or not is_local(accumulator):
        return None
    for operand in combiner.operands:
        defining = owner(operand)
        if defining is not None and defining.name == "memref.load" and \
                defining.operands[0] == accumulator:
            acc_load = defining
    if acc_load is None or len(list(acc_load.results[0].uses)) != 1:
        return None
    element = [v for v in combiner.operands if v != acc_load.results[0]]
    element_ops = [op for op in ops[:-2] if op_of(op) != op_of(acc_load)]
    if len(element) != 1 or not element_ops:
        return None
    views = []
    for op in element_ops:
        name = op.operation.name
        if name == "memref.load":
            if list(op.operands)[1:] != [iv] or _root(op.operands[0]) == _root(accumulator):
                return None
            views.append(op.operands[0])
        elif name in WRITES or name in READS or op.regions or \
                not name.startswith(("arith.", "math.")):
            return None
    if len(views) != 1:
        return None
    return SerialReduction(loop, iv, accumulator, views[0], element_ops, element[0], combiner)


def _remap(op, mapping: dict) -> None:
    for i, operand in enumerate(op.operands):
        if operand in mapping:
            op.operands[i] = mapping[operand]
