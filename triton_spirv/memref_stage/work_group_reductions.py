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
from ..ir_helpers import block_order
from .affine_nests import ancestor_in, is_nested_in, matched_loops, op_of, owner, users_through_views
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
    init = _forwarded_init(match)
    made = reduce_collectively(match, sharing.lid, sharing.work_items)
    sharing.partitioned[op_of(made.fold)] = [Access(_root(match.view), False, ANY)]
    _finish(sharing, match, made.final, init)


def reduce_with_sub_groups(sharing, match: "SerialReduction", min_sub_group_size: int) -> None:
    """The reduction through sub-groups (work_group_sub_groups.py); its accesses as
    the barrier analysis sees them: every work-item reads the view, the sub-group
    leaders write their `__local` totals (ordered after work-item 0's reads of an
    earlier round by the analysis, before its reads by the form's own barrier),
    work-item 0 reads them and updates the accumulator."""
    init = _forwarded_init(match)
    made = reduce_by_sub_groups(match, sharing.lid, sharing.work_items, min_sub_group_size)
    sharing.partitioned[op_of(made.fold)] = [Access(_root(match.view), False, ANY)]
    sharing.partitioned[op_of(made.publish)] = plain_accesses(made.publish, ANY)
    _finish(sharing, match, made.final, init)


def _finish(sharing, match: "SerialReduction", final, init) -> None:
    """Work-item 0's update of the accumulator (`final`: `scf.if lid == 0 { old = acc;
    ...; acc = new }`) runs on every work-item in registers where the accumulator's
    value is forwarded (_forwarded_init: `init`), else as a single-work-item section."""
    if init is not None:
        _forward_into_registers(final, init)
        return
    # Only when the loop runs at all: an empty range leaves acc as it is.
    sharing.record_single_section(final)
    sharing.partitioned[op_of(final)] = plain_accesses(final, SINGLE)


def _forward_into_registers(final, init) -> None:
    """`final`'s ops run on every work-item before it, from the value `init`'s store
    set; its new value replaces the loads after the loop; the accumulator's store,
    `final` and `init`'s store go."""
    setter, loads = init
    start = _stored_value(setter)
    ops = [op_of(op) for op in final.then_block.operations][:-1]
    update = ops[-1]
    for op in ops[:-1]:
        op.move_before(final)
        if op.name == "memref.load" and op.operands[0] == update.operands[1]:
            op.results[0].replace_all_uses_with(start)
            op.erase()
    for load in loads:
        load.results[0].replace_all_uses_with(update.operands[0])
        load.erase()
    final.operation.erase()
    setter.erase()


# Partials each work-item of a tree step folds (one barrier per step), and how many
# partials are left to fold into the accumulator: 128 work-items' partials take one
# step of 16 work-items folding 8 each, where halving took 7 steps.
TREE_FANOUT = 8
FINAL_FOLD = 16


def reduce_as_tree(sharing, match: "SerialReduction") -> None:
    """`for i: acc = acc <op> f(view[i])` becomes: each work-item folds f over its
    elements (i = lb + lid, lb + lid + W, ...) in a register and writes the partial
    to `__local partials[lid]`; steps that fold up to TREE_FANOUT partials into one
    combine them until at most FINAL_FOLD are left, a barrier after each; work-item 0
    folds those into acc (or every work-item in registers: _finish)."""
    loop, w = match.loop, sharing.work_items
    index = ir.IndexType.get()
    element_type = match.combiner.results[0].type
    init = _forwarded_init(match)
    with loop.location, ir.InsertionPoint(loop):
        c = lambda v: arith.constant(index, v)  # noqa: E731
        lb, ub, step = loop.operands[0], loop.operands[1], loop.operands[2]
        count = trip_count(lb, ub, step)
        # A loop of known length has at most that many partials: a smaller tile and
        # no steps in which no work-item has a partner.
        known = _constant_index(count)
        slots = w if known is None else max(1, min(known, w))
        valid = arith.minsi(count, c(w)) if known is None else c(slots)
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
    # The partials' writes too: another pass of this code (a loop around it) must not
    # overwrite them while the last fold still reads them.
    sharing.partitioned[op_of(fold)] = [Access(_root(match.view), False, ANY),
                                        Access(_root(partials), True, ANY)]
    with loop.location, ir.InsertionPoint(loop):
        gpu.barrier()
        span = 1
        while span < slots:
            span *= 2
        while span > FINAL_FOLD:
            fanout = min(TREE_FANOUT, span // FINAL_FOLD)
            span //= fanout
            _tree_step(sharing, match, partials, valid, known, span, fanout)
            gpu.barrier()
        left = arith.minsi(valid, c(span)) if known is None else c(min(slots, span))
        is_first = arith.cmpi(arith.CmpIPredicate.eq, sharing.lid, c(0))
        final = scf.IfOp(is_first)
        with ir.InsertionPoint(final.then_block):
            total = _fold_partials(match, partials, left, match.load_accumulator())
            match.store_accumulator(total)
            scf.YieldOp([])
    loop.operation.erase()
    _finish(sharing, match, final, init)


def _fold_partials(match: "SerialReduction", partials, count, start) -> ir.Value:
    """`start` <op> partials[0] <op> ... <op> partials[count - 1], at the insertion
    point."""
    index = ir.IndexType.get()
    folds = scf.ForOp(arith.constant(index, 0), count, arith.constant(index, 1), [start])
    with ir.InsertionPoint(folds.body):
        theirs = memref.load(partials, [folds.induction_variable])
        scf.YieldOp([match.clone_combiner(folds.inner_iter_args[0], theirs)])
    return folds.results[0]


def _forwarded_init(match: "SerialReduction"):
    """(the store, the loads) when acc is set once before the reduction loop, in its
    block, and otherwise only read after the loop in that block: every work-item can
    then fold the partials from the stored value itself, and the loads take its
    result. Else None."""
    loop = op_of(match.loop)
    block = loop.block
    store, loads = None, []
    for user in users_through_views(_whole_accumulator(match.accumulator)):
        user = op_of(user)
        if is_nested_in(user, loop):
            continue
        mine = ancestor_in(user, block)
        if mine is None:
            return None
        if user.name in ("memref.store", "memref.copy") and mine == user and \
                block_order(user) < block_order(loop) and _sets(user, match.accumulator):
            if store is not None:
                return None
            store = user
        elif user.name == "memref.load" and block_order(loop) < block_order(mine):
            loads.append(user)
        else:
            return None
    if store is None:
        return None
    return store, loads


def _whole_accumulator(accumulator: ir.Value) -> ir.Value:
    """The buffer whose every access is an access of the accumulator: the accumulator,
    or its root where that is one element (its views are then the same element)."""
    root = _root(accumulator)
    return root if _one_element(root.type) else accumulator


def _sets(op, accumulator) -> bool:
    """Whether `op` is a store into the accumulator, or a copy of one element into it."""
    target = op.operands[1]
    if target != accumulator and _whole_accumulator(accumulator) == accumulator:
        return False
    if op.name == "memref.store":
        return True
    return _one_element(op.operands[0].type)


def _stored_value(op) -> ir.Value:
    """The value a store or a one-element copy (_sets) writes, read at its place."""
    if op.name == "memref.store":
        return op.operands[0]
    source = op.operands[0]
    with op.location, ir.InsertionPoint(op):
        return memref.load(source, _zero_indices(source))


def _zero_indices(buffer: ir.Value) -> list:
    """Index 0 on every dimension of `buffer`, at the insertion point: the element of a
    one-element buffer (_one_element)."""
    return [arith.constant(ir.IndexType.get(), 0) for _ in range(ir.MemRefType(buffer.type).rank)]


def _tree_step(sharing, match: "SerialReduction", partials, valid, known, span: int, fanout: int):
    """partials[lid] <op>= partials[lid + k * span] for k < fanout, on the work-items
    below `span` that hold a partial, each partner only where it holds one (tested
    unless the loop's known length says so)."""
    index = ir.IndexType.get()
    c = lambda v: arith.constant(index, v)  # noqa: E731
    active = arith.cmpi(arith.CmpIPredicate.ult, sharing.lid, c(span))
    if known is None or known < span:
        active = arith.andi(active, arith.cmpi(arith.CmpIPredicate.ult, sharing.lid, valid))
    step_if = scf.IfOp(active)
    with ir.InsertionPoint(step_if.then_block):
        mine = memref.load(partials, [sharing.lid])
        for k in range(1, fanout):
            partner = arith.addi(sharing.lid, c(k * span))
            if known is not None and (k + 1) * span <= known:
                mine = match.clone_combiner(mine, memref.load(partials, [partner]))
                continue
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
    element), acc[] }` reading `view` at [..., %iv]; acc holds one element
    (_holds_one_element)."""
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

    def load_accumulator(self) -> ir.Value:
        """acc's value, loaded at the insertion point (its one element: index 0)."""
        return memref.load(self.accumulator, _zero_indices(self.accumulator))

    def store_accumulator(self, value: ir.Value) -> None:
        memref.store(value, self.accumulator, _zero_indices(self.accumulator))


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
            or not _holds_one_element(accumulator) or not is_local(accumulator):
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
            if not _indexed_by(op, iv, op_of(loop)) or _root(op.operands[0]) == _root(accumulator):
                return None
            views.append(op.operands[0])
        elif name in WRITES or name in READS or op.regions or \
                not name.startswith(("arith.", "math.")):
            return None
    if len(views) != 1:
        return None
    return SerialReduction(loop, iv, accumulator, views[0], element_ops, element[0], combiner)


def _holds_one_element(accumulator: ir.Value) -> bool:
    """A rank-0 accumulator, or one whose whole buffer is one element: Inductor's
    persistent reductions keep a row's total in a `[XBLOCK=1, 1]` tile (every in-bounds
    index is 0 there)."""
    if ir.MemRefType(accumulator.type).rank == 0:
        return True
    return _one_element(_root(accumulator).type)


def _one_element(memref_type) -> bool:
    shape = ir.MemRefType(memref_type).shape
    return all(size == 1 for size in shape)


def _indexed_by(load, iv: ir.Value, loop) -> bool:
    """`load` reads `view[..., iv]`, its other indices fixed for the whole loop."""
    indices = list(load.operands)[1:]
    if not indices or indices[-1] != iv:
        return False
    for index in indices[:-1]:
        defining = owner(index)
        if index == iv or (defining is not None and is_nested_in(defining, loop)):
            return False
    return True


def _remap(op, mapping: dict) -> None:
    for i, operand in enumerate(op.operands):
        if operand in mapping:
            op.operands[i] = mapping[operand]
