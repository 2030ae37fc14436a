"""GPU-shaped kernels, work-group sharing (work_group_sharing.py), step 1: the
distribution of parallel loops over the work-items, and the rounds of loops that index
private arrays counted from 0 (work_group_sharing.py's docstring says the forms).
Before it, copies that convert element types become loops (shared_copies.py) and
column reductions split into strips (work_group_columns.py), so that it distributes
them too; tensor atomics' loops are distributed here as well (work_group_atomics.py).
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from .affine_nests import matched_loops, op_of, owner, static_trip_count
from .affine_nests import constant_index as _constant_index
from .affine_nests import memory_access as _memory_access
from .affine_nests import outermost_parallel_loops as _outermost_parallel_loops
from ..ir_helpers import holds
from ..ir_helpers import root_buffer as _root
from .shared_copies import converting_copy_loops
from .work_group_atomics import atomic_nests
from .work_group_columns import split_column_reductions
from .work_group_rows import split_row_reductions
from .work_group_sharing import (ACCESS_OPS, READS, WRITES, Distribution, Rounds, entry_block,
                                 functions, is_local, is_private, iv, sharing_of, vector_width)


def convert_copies_to_loops(module: ir.Module, _config, _analyses: dict) -> None:
    """Converting copies into tiles become loops (shared_copies.py), which the
    distribution then spreads over the work-items."""
    for func in functions(module):
        converting_copy_loops(entry_block(func))


def split_columns(module: ir.Module, config, _analyses: dict) -> None:
    """Column reductions split into strips of rows (work_group_columns.py)."""
    for func in functions(module):
        split_column_reductions(entry_block(func), config.work_items)


def split_rows(module: ir.Module, config, _analyses: dict) -> None:
    """Row reductions split into strips of columns (work_group_rows.py)."""
    for func in functions(module):
        split_row_reductions(entry_block(func), config.work_items)


def distribute_parallel_loops(module: ir.Module, config, analyses: dict) -> None:
    """Distribution: every outermost `scf.parallel`, then every perfect scf.for nest
    whose iterations are independent (`_owner_parallel_nests`), becomes a loop over the
    work-item's chunks."""
    for func in functions(module):
        sharing = sharing_of(func, config, analyses)
        for loop in _outermost_parallel_loops(entry_block(func)):
            distribute(sharing, loop)
        for nest in _owner_parallel_nests(entry_block(func), sharing.distributed):
            distribute_nest(sharing, nest)


def distribute_atomics(module: ir.Module, config, analyses: dict) -> None:
    """The loops of tensor atomics are distributed (work_group_atomics.py)."""
    for func in functions(module):
        sharing = sharing_of(func, config, analyses)
        for nest in atomic_nests(entry_block(func), sharing.distributed):
            distribute_nest(sharing, nest)


def count_distributed_rounds(module: ir.Module, config, analyses: dict) -> None:
    """Distributed loops that index private arrays count their rounds from 0
    (count_rounds)."""
    for func in functions(module):
        count_rounds(sharing_of(func, config, analyses),
                     one_round_strided=config.has_quirk("one_round_loops_strided"))


def distribute(sharing, parallel, chunk: int | None = None) -> None:
    """`chunk`: the iterations a work-item owns in a row; by default one, or as
    _chunk picks under the quirk chunked_distribution."""
    n = len(parallel.regions[0].blocks[0].arguments)
    lbs, ubs, steps = (list(parallel.operands)[k * n:(k + 1) * n] for k in range(3))
    body = parallel.regions[0].blocks[0]
    _distribute(sharing, parallel, lbs, ubs, steps, list(body.arguments),
                     list(body.operations)[:-1], chunk)      # all but scf.reduce


def distribute_nest(sharing, nest: list) -> None:
    """A perfect nest of scf.for loops that _owner_parallel proved parallel."""
    body = nest[-1].regions[0].blocks[0]
    _distribute(sharing, nest[0], [l.operands[0] for l in nest], [l.operands[1] for l in nest],
                     [l.operands[2] for l in nest], [iv(l) for l in nest],
                     list(body.operations)[:-1])


def _distribute(sharing, parallel, lbs, ubs, steps, old_ivs, body_ops, chunk=None) -> None:
    with parallel.location, ir.InsertionPoint(parallel):
        index = ir.IndexType.get()
        trips = [trip_count(lb, ub, step) for lb, ub, step in zip(lbs, ubs, steps)]
        total_static = _product([_constant_index(t) for t in trips])
        if chunk is None:
            chunk = _chunk(total_static, sharing.work_items, _elements_per_iteration(body_ops)) \
                if sharing.chunked else 1
        total = trips[0]
        for trip in trips[1:]:
            total = arith.muli(total, trip)
        c = lambda v: arith.constant(index, v)  # noqa: E731
        per_round = sharing.work_items * chunk
        start = arith.muli(sharing.lid, c(chunk))
        outer = scf.ForOp(start, total, c(per_round))
    with parallel.location, ir.InsertionPoint(outer.body):
        base = outer.induction_variable
        # which round of the work-group this is: base - start is a multiple of it
        round_ = arith.divui(arith.subi(base, start), c(per_round))
        if total_static is not None and total_static % chunk == 0:
            chunk_end = c(chunk)
        else:
            chunk_end = arith.minsi(c(chunk), arith.subi(total, base))
        inner = scf.ForOp(c(0), chunk_end, c(1))
        scf.YieldOp([])
    with parallel.location, ir.InsertionPoint(inner.body):
        linear = arith.addi(base, inner.induction_variable)
        coordinates = _delinearize(linear, trips)
        ivs = [arith.addi(lb, arith.muli(coordinate, step))
               for lb, step, coordinate in zip(lbs, steps, coordinates)]
        owned = arith.addi(arith.muli(round_, c(chunk)), inner.induction_variable)
        yield_op = scf.YieldOp([])
    for old, new in zip(old_ivs, ivs):
        old.replace_all_uses_with(new)
    for op in body_ops:
        op.move_before(yield_op)
    for nested in _outermost_parallel_loops(inner.body):
        _serialize(nested)
    key = (tuple((_bound_key(lb), _bound_key(ub), _bound_key(step))
                 for lb, ub, step in zip(lbs, ubs, steps)), chunk)
    sharing.distributed[op_of(outer)] = Distribution(key, tuple(ivs), owned)
    sharing.iterations[op_of(outer)] = (total_static, chunk)
    sharing.rounds[op_of(outer)] = Rounds(start, total, per_round, round_)
    parallel.operation.erase()


def count_rounds(sharing, one_round_strided: bool = False) -> None:
    """A distributed loop over a static trip count whose body indexes a private
    array by `owned`, the round and the place in the chunk counts its rounds from 0,
    `for k < ceil(total / (W * chunk))`, the chunk starting at
    `base = k * W * chunk + lid * chunk`, under `if (base < total)` unless
    W * chunk divides the total: a trip count a GPU compiler knows, so it unrolls
    the rounds and the array's indices are constants (registers, not scratch
    memory). Other loops keep `for base = lid * chunk; base < total; base += W * chunk`:
    counting theirs alike computed tutorial 06's attention wrong on PoCL and the
    host-descriptor copy kernel wrong on Intel's runtime (tests/test_tutorials.py,
    tests/test_runtime.py, GPU shape), a fault of that form not yet understood, so
    it is not used. With `one_round_strided` (quirk one_round_loops_strided) a loop
    of one round keeps its strided form too."""
    for loop, rounds in list(sharing.rounds.items()):
        total = sharing.iterations[loop][0]
        one_round = total is not None and total <= rounds.per_round
        if total is not None and not (one_round and one_round_strided) and \
                _indexes_private_array(loop):
            _count_rounds(sharing, loop, rounds)


def _count_rounds(sharing, loop, rounds: "Rounds") -> None:
    total, _chunk_size = sharing.iterations[loop]
    per_round = rounds.per_round
    with loop.location, ir.InsertionPoint(loop):
        index = ir.IndexType.get()
        c = lambda v: arith.constant(index, v)  # noqa: E731
        counted = scf.ForOp(c(0), c(-(-total // per_round)), c(1))
    with loop.location, ir.InsertionPoint(counted.body):
        base = arith.addi(arith.muli(counted.induction_variable, c(per_round)), rounds.start)
        terminator = scf.YieldOp([])
        if total % per_round:
            with ir.InsertionPoint(terminator):
                guard = scf.IfOp(arith.cmpi(arith.CmpIPredicate.slt, base, rounds.total))
                with ir.InsertionPoint(guard.then_block):
                    terminator = scf.YieldOp([])
    body = loop.regions[0].blocks[0]
    for op in list(body.operations)[:-1]:
        op.move_before(terminator)
    body.arguments[0].replace_all_uses_with(base)
    # the round computed from base, now the counter itself
    round_op = owner(rounds.round)
    offset_op = owner(round_op.operands[0])
    rounds.round.replace_all_uses_with(counted.induction_variable)
    round_op.erase()
    offset_op.erase()
    for table in (sharing.distributed, sharing.iterations):
        table[op_of(counted)] = table.pop(loop)
    loop.erase()


def trip_count(lb, ub, step):
    count = static_trip_count(lb, ub, step)
    if count is not None:
        return arith.constant(ir.IndexType.get(), count)
    return arith.ceildivsi(arith.subi(ub, lb), step)


def _bound_key(value: ir.Value):
    constant = _constant_index(value)
    return ("constant", constant) if constant is not None else ("value", value)


def _owner_parallel_nests(block: ir.Block, distributed: dict) -> list:
    """Perfect scf.for nests that upstream affine-parallelize could not analyze (loads
    through pointer tiles: gathers) but whose iterations are independent: every store
    writes a tile at exactly the nest's induction variables, and the nest reads what it
    writes only there."""
    return matched_loops(block, _owner_parallel_nest, distributed)


def _owner_parallel_nest(loop) -> list | None:
    nest = _perfect_nest(loop)
    return nest if nest is not None and _owner_parallel(nest) else None


def _perfect_nest(loop) -> list | None:
    nest = [loop]
    while True:
        current = nest[-1]
        if len(current.results) or len(current.regions[0].blocks[0].arguments) != 1:
            return None
        ops = list(current.regions[0].blocks[0].operations)[:-1]
        if len(ops) == 1 and ops[0].operation.name == "scf.for":
            nest.append(ops[0])
            continue
        return nest


def _owner_parallel(nest: list) -> bool:
    ivs = [iv(loop) for loop in nest]
    stores, loads, bad = [], [], []

    def visit(inner):
        name = inner.name
        if name == "memref.store":
            stores.append(inner)
        elif name == "memref.load":
            loads.append(inner)
        elif name in WRITES or name in READS or name.startswith(("gpu.", "func.")) \
                or name in ("scf.while", "memref.alloc", "memref.alloca"):
            bad.append(inner)
        return ir.WalkResult.ADVANCE
    op_of(nest[0]).walk(visit)
    if bad or not stores:
        return False
    written = set()
    for store in stores:
        target = store.operands[1]
        if not is_local(target) or _root(target) != target or list(store.operands)[2:] != ivs:
            return False
        written.add(target)
    for load in loads:
        source = load.operands[0]
        if any(_root(source) == w for w in written) and \
                (source not in written or list(load.operands)[1:] != ivs):
            return False
    return True


def _serialize(parallel) -> None:
    """A parallel loop inside a distributed one: plain loops, run by its owner."""
    n = len(parallel.regions[0].blocks[0].arguments)
    lbs, ubs, steps = (list(parallel.operands)[k * n:(k + 1) * n] for k in range(3))
    ivs, point = [], ir.InsertionPoint(parallel)
    with parallel.location:
        for lb, ub, step in zip(lbs, ubs, steps):
            with point:
                loop = scf.ForOp(lb, ub, step)
            with ir.InsertionPoint(loop.body):
                terminator = scf.YieldOp([])
            point = ir.InsertionPoint(terminator)
            ivs.append(loop.induction_variable)
    body = parallel.regions[0].blocks[0]
    for old, new in zip(body.arguments, ivs):
        old.replace_all_uses_with(new)
    for op in list(body.operations)[:-1]:
        op.move_before(terminator)
    for nested in _outermost_parallel_loops(loop.body):
        _serialize(nested)
    parallel.operation.erase()


def _indexes_private_array(loop) -> bool:
    """Whether a load or store in `loop` accesses a private array (memref.alloca)."""
    def private_access(inner) -> bool:
        access = _memory_access(inner)
        return access is not None and is_private(_root(access[0]))
    return holds(loop, private_access)


def _product(values):
    if None in values:
        return None
    result = 1
    for v in values:
        result *= v
    return result


# Under the quirk chunked_distribution: elements one work-item owns in a row, 4 being
# one 16-byte vector of f32 (a loop that already moves float4 vectors gets one iteration
# per chunk).
MAX_CHUNK = 4


def _chunk(total: int | None, work_items: int, elements: int = 1) -> int:
    """Contiguous iterations per chunk: up to MAX_CHUNK elements (`elements` per
    iteration) while every work-item still gets at least one chunk."""
    most = max(1, MAX_CHUNK // elements)
    if total is None:
        return most
    chunk = 1
    while chunk < most and total >= 2 * chunk * work_items:
        chunk *= 2
    return chunk


def _elements_per_iteration(body_ops: list) -> int:
    """The widest vector a load or store of a loop body moves, also inside its ifs (the
    vector path of a masked copy, owner_copies.py); 1 for scalar bodies."""
    accesses = [op for op in _with_if_branches(body_ops) if op.name in ACCESS_OPS]
    return max([vector_width(op) for op in accesses], default=1)


def _with_if_branches(ops: list) -> list:
    found = []
    for op in ops:
        found.append(op)
        if op.name == "scf.if":
            found += _with_if_branches([inner for region in op.regions
                                        for block in region.blocks for inner in block.operations])
    return found


def _delinearize(linear, trips: list) -> list:
    """Row-major coordinates of `linear` in the space of `trips`."""
    coordinates = []
    rest = linear
    for k in range(len(trips) - 1, 0, -1):
        coordinates.append(arith.remui(rest, trips[k]))
        rest = arith.divui(rest, trips[k])
    coordinates.append(rest)
    return coordinates[::-1]
