"""GPU-shaped kernels: scans (`tl.cumsum`, `tl.cumprod`, `tl.associative_scan`) run on
the whole work-group instead of work-item 0.

The Triton frontend writes a scan as one serial loop per row of the tile
(ttir_to_linalg/reductions.py, `scan`): the first element's operands are loaded and
stored, then `scf.for %k = 1 to L iter_args(accumulators)` loads the operands at
`along(k)` (`k`, or `L - 1 - k` for `reverse=True`), applies the combine region and
stores the results; loops over the other dimensions of the tile hold it. Here each row
gets `lanes` work-items (a power of two) and each of them a contiguous chunk of the row
in scan order:

1. every lane folds its chunk with the combine region into a chunk total, stored in
   `__local partials[lid]` (one array per operand);
2. the totals of a row are scanned in place of the lanes, Hillis-Steele: log2(lanes)
   steps of `total[lane] = combine(total[lane - d], total[lane])`, reading one half of
   a double buffer and writing the other, a barrier after each;
3. every lane scans its chunk again, starting from the total of the lanes before it,
   and stores the results where the serial loop did.

The combine region is only ever applied with the earlier operand on the left, so any
associative combine (commutative or not, with any number of operands) gives Triton's
result up to the reassociation of floating-point operations. All rows are scanned at
once (`lanes * rows <= work_items`); where rows outnumber half the work-items, each
work-item runs the serial loop of whole rows, in rounds. The rewrite returns the loops
over rows it made: work_group_sharing.py's barrier analysis takes each as one unit that
reads its operand tiles and writes its result tiles; the barriers between the steps are
placed here.
"""
from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, memref, scf

from ..ir_helpers import root_buffer
from .affine_nests import (body_ops, constant_index, induction_var, is_alloc, is_nested_in,
                           matched_loops, op_of, owner)
from .work_group_sharing import (ANY, entry_block, functions, local_barrier, plain_accesses,
                                 sharing_of)


@dataclass
class SerialScan:
    """One scan as the frontend wrote it: `outer` loops over rows (outermost first, one
    per dimension besides the axis), holding `first_stores` of the first element and the
    scan `loop` of `length` elements."""
    loop: object
    outer: list
    length: int
    element_ops: list     # the body ops that load the operands at along(k), in order
    inputs: list          # the body's loads of the operands, one per accumulator
    combine_ops: list     # the body ops of the combine region, in order
    store_ops: list       # the body's stores of results and the index ops they need
    first_stores: list

    @property
    def rows(self) -> int:
        count = 1
        for loop in self.outer:
            count *= constant_index(loop.operands[1])
        return count


def scans_on_work_group(block: ir.Block, lid: ir.Value, work_items: int,
                        skip: dict) -> list:
    """Rewrites every scan in `block` (outside the ops of `skip`) for `work_items`
    work-items; -> the loops over rows that replace them."""
    return [_share_scan(scan, lid, work_items)
            for scan in matched_loops(block, _match_scan, skip)]


# ------------------------------------------------------------------------- matching

def _match_scan(loop) -> SerialScan | None:
    """The SerialScan of `loop`, or None when it is not one (it then stays serial)."""
    inits = list(loop.operands)[3:]
    length = constant_index(loop.operands[1])
    if not inits or any(len(list(r.uses)) for r in loop.results) or length is None or \
            constant_index(loop.operands[0]) != 1 or constant_index(loop.operands[2]) != 1:
        return None
    body = loop.regions[0].blocks[0]
    iv, accumulators = body.arguments[0], list(body.arguments)[1:]
    ops = body_ops(loop)
    if any(op.regions or not op.operation.name.startswith(("arith.", "math.", "memref.load",
                                                           "memref.store")) for op in ops):
        return None
    first_loads = [owner(v) for v in inits]
    if any(f is None or f.name != "memref.load" for f in first_loads) or \
            len({root_buffer(f.operands[0]) for f in first_loads}) != len(inits):
        return None
    loads = [op for op in ops if op.operation.name == "memref.load"]
    inputs = []
    for first in first_loads:
        same = [op for op in loads if op.operands[0] == first.operands[0]]
        if len(same) != 1:
            return None
        inputs.append(same[0])
    if len(loads) != len(inputs):
        return None
    indices = list(inputs[0].operands)[1:]
    if any(list(op.operands)[1:] != indices for op in inputs):
        return None
    axis = _axis(indices, loop, iv, length)
    if axis is None:
        return None
    # (a dimension of extent 1 has a constant index and no loop)
    outer = _row_loops(loop, [v for d, v in enumerate(indices)
                              if d != axis and constant_index(v) is None])
    if outer is None:
        return None
    yielded = list(list(body.operations)[-1].operands)
    stores = [op for op in ops if op.operation.name == "memref.store"]
    if not stores or any(op.operands[0] not in yielded or list(op.operands)[2:] != indices
                         or not is_alloc(root_buffer(op.operands[1])) for op in stores):
        return None
    first_stores = _first_stores(loop, stores, yielded, inits, first_loads)
    if first_stores is None:
        return None
    combine = _slice(ops, yielded, stop=set(accumulators) | {i.results[0] for i in inputs})
    if any(iv in list(op.operands) or op.operation.name.startswith("memref.")
           for op in combine):
        return None
    element = _slice(ops, [i.results[0] for i in inputs], stop=set())
    store_ops = _slice(ops, [v for op in stores for v in list(op.operands)[2:]], stop=set())
    scan = SerialScan(loop, outer, length, element, inputs, combine, store_ops + stores,
                      first_stores)
    return scan if _defined_outside(scan) else None


def _axis(indices: list, loop, iv, length: int) -> int | None:
    """The position of the scanned dimension: the one index computed from the loop's
    induction variable, `k` (scanning forward) or `L - 1 - k` (reverse)."""
    inside = [d for d, v in enumerate(indices) if _inside(v, loop)]
    if len(inside) != 1:
        return None
    index = indices[inside[0]]
    if index == iv:
        return inside[0]
    defining = owner(index)
    if defining is not None and defining.name == "arith.subi" and \
            defining.operands[1] == iv and constant_index(defining.operands[0]) == length - 1:
        return inside[0]
    return None


def _row_loops(loop, row_indices: list) -> list | None:
    """The loops over the other dimensions that hold the scan, outermost first: each a
    `for 0 to N step 1` whose induction variable is one of `row_indices`, holding the
    next one alone, the innermost holding only the scan."""
    outer, current = [], loop
    for _ in row_indices:
        parent = op_of(current).parent
        if parent is None or parent.name != "scf.for" or len(parent.results) or \
                constant_index(parent.operands[0]) != 0 or \
                constant_index(parent.operands[2]) != 1 or \
                constant_index(parent.operands[1]) is None or \
                induction_var(parent) not in row_indices:
            return None
        allowed = ("memref.load", "memref.store", "arith.constant") if not outer else ()
        if any(op_of(op) != op_of(current) and op.operation.name not in allowed
               for op in body_ops(parent)):
            return None
        outer.insert(0, parent)
        current = parent
    return outer


def _first_stores(loop, stores: list, yielded: list, inits: list, first_loads: list):
    """The stores of the first element before the loop: for each store of the body, one
    of the same accumulator's first value into the same buffer, at the first load's
    indices; None when one is missing or another op writes that buffer there."""
    found = []
    block_ops = list(op_of(loop).block.operations)
    before = block_ops[:[op_of(op) for op in block_ops].index(op_of(loop))]
    for store in stores:
        accumulator = yielded.index(store.operands[0])
        init, first = inits[accumulator], first_loads[accumulator]
        candidates = [op for op in before if op.operation.name == "memref.store" and
                      op.operands[1] == store.operands[1]]
        if len(candidates) != 1 or candidates[0].operands[0] != init or \
                list(candidates[0].operands)[2:] != list(first.operands)[1:]:
            return None
        found.append(candidates[0])
    return found


def _slice(ops: list, wanted: list, stop: set) -> list:
    """The ops of `ops` (one block, in order) that compute `wanted`, up to values in
    `stop` and values from outside the block."""
    in_block = {r: op for op in ops for r in op.results}
    needed, work = set(), [v for v in wanted if v not in stop]
    while work:
        value = work.pop()
        op = in_block.get(value)
        if op is None or op_of(op) in needed:
            continue
        needed.add(op_of(op))
        work.extend(v for v in op.operands if v not in stop)
    return [op for op in ops if op_of(op) in needed]


def _inside(value: ir.Value, loop) -> bool:
    defining = owner(value)
    if defining is None:
        return value.owner.owner is not None and is_nested_in(value.owner.owner, loop)
    return is_nested_in(defining, loop)


def _defined_outside(scan: SerialScan) -> bool:
    """Every value the loop body uses from outside it comes from outside the row loops
    (or is a row loop's induction variable): the rewrite computes it there."""
    top = scan.outer[0] if scan.outer else scan.loop
    row_ivs = [induction_var(loop) for loop in scan.outer]
    for op in body_ops(scan.loop):
        for value in op.operands:
            if _inside(value, scan.loop) or value in row_ivs:
                continue
            if scan.outer and _inside(value, top):
                return False
    return True


# ------------------------------------------------------------------------- rewriting

def _lanes_per_row(rows: int, length: int, work_items: int) -> int:
    """Work-items per row: a power of two, at most one per element, all rows at once
    where the work-group holds them."""
    lanes = 1
    while lanes * 2 <= length and lanes * 2 * rows <= work_items:
        lanes *= 2
    return lanes


class _Builder:
    """Clones of the scan body's pieces for one row (`coordinates`) at the insertion
    point."""

    def __init__(self, scan: SerialScan, coordinates: list):
        self.scan = scan
        self.rows = dict(zip((induction_var(loop) for loop in scan.outer), coordinates))

    def _clone(self, ops: list, mapping: dict) -> None:
        for op in ops:
            if all(r in mapping for r in op.results) and op.results:
                continue
            clone = op.operation.clone()
            for i, operand in enumerate(clone.operands):
                if operand in mapping:
                    clone.operands[i] = mapping[operand]
            for old, new in zip(op.results, clone.results):
                mapping[old] = new

    def _mapping(self, k) -> dict:
        return {induction_var(self.scan.loop): k, **self.rows}

    def elements(self, k) -> list:
        """The operands at scan position `k`."""
        mapping = self._mapping(k)
        self._clone(self.scan.element_ops, mapping)
        return [mapping[load.results[0]] for load in self.scan.inputs]

    def combine(self, left: list, right: list) -> list:
        """The combine region of `left` (earlier) and `right` (later) operand tuples."""
        body = self.scan.loop.regions[0].blocks[0]
        mapping = dict(zip(list(body.arguments)[1:], left))
        mapping.update(zip((load.results[0] for load in self.scan.inputs), right))
        self._clone(self.scan.combine_ops, mapping)
        yielded = list(body.operations)[-1].operands
        return [mapping.get(v, v) for v in yielded]

    def store(self, k, values: list) -> None:
        """Stores the results at scan position `k`, as the serial loop did."""
        body = self.scan.loop.regions[0].blocks[0]
        yielded = list(list(body.operations)[-1].operands)
        mapping = self._mapping(k)
        mapping.update(zip(yielded, values))
        self._clone(self.scan.store_ops, mapping)

    def scan_from(self, start, end, first: list) -> None:
        """Stores `first` at `start`, then the scan of `start + 1 .. end` from it."""
        self.store(start, first)
        index = ir.IndexType.get()
        loop = scf.ForOp(arith.addi(start, arith.constant(index, 1)), end,
                         arith.constant(index, 1), first)
        with ir.InsertionPoint(loop.body):
            k = loop.induction_variable
            values = self.combine(list(loop.inner_iter_args), self.elements(k))
            self.store(k, values)
            scf.YieldOp(values)

    def fold(self, start, end) -> list:
        """The combination of the elements `start .. end - 1` (start < end)."""
        index = ir.IndexType.get()
        first = self.elements(start)
        loop = scf.ForOp(arith.addi(start, arith.constant(index, 1)), end,
                         arith.constant(index, 1), first)
        with ir.InsertionPoint(loop.body):
            scf.YieldOp(self.combine(list(loop.inner_iter_args),
                                     self.elements(loop.induction_variable)))
        return list(loop.results)


def _share_scan(scan: SerialScan, lid: ir.Value, work_items: int):
    rows, length = scan.rows, scan.length
    # Rows take several rounds only with one lane each: no partials to overwrite.
    lanes = _lanes_per_row(rows, length, work_items)
    chunk = -(-length // lanes)
    holding = -(-length // chunk)           # lanes that get elements
    per_round = work_items // lanes
    rounds = -(-rows // per_round)
    top = scan.outer[0] if scan.outer else scan.loop
    types = [v.type for v in list(scan.loop.regions[0].blocks[0].arguments)[1:]]
    with scan.loop.location, ir.InsertionPoint(top):
        index = ir.IndexType.get()
        c = lambda v: arith.constant(index, v)  # noqa: E731
        partials = [memref.alloc(ir.MemRefType.get([2, work_items], t), [], [])
                    for t in types] if lanes > 1 else []
        # lane and slot of the row in a round; the comparisons that can fail
        lane = lid if lanes == work_items else c(0) if lanes == 1 else arith.remui(lid, c(lanes))
        slot = c(0) if lanes == work_items else lid if lanes == 1 else arith.divui(lid, c(lanes))
        start = arith.muli(lane, c(chunk))
        end = arith.minsi(arith.addi(start, c(chunk)), c(length))
        conditions = [(lane, holding)] if holding < lanes else []
        if work_items % lanes:
            conditions.append((slot, per_round))
        rounds_loop = scf.ForOp(c(0), c(rounds), c(1))
    with scan.loop.location, ir.InsertionPoint(rounds_loop.body):
        row = arith.addi(arith.muli(rounds_loop.induction_variable, c(per_round)), slot)
        if rounds * per_round != rows:
            conditions.append((row, rows))
        active = arith.constant(ir.IntegerType.get_signless(1), 1)
        for value, bound in conditions:
            active = arith.andi(active, arith.cmpi(arith.CmpIPredicate.ult, value, c(bound)))
        build = _Builder(scan, _row_coordinates(row, scan.outer))
        final = None
        if lanes > 1:
            final = _scan_chunk_totals(build, partials, lid, lane, lanes, start, end, active)
        _scan_chunks(build, partials, final, lid, lane, start, end, active)
        scf.YieldOp([])
    for store in scan.first_stores:
        store.operation.erase()
    top.operation.erase()
    return rounds_loop


def _scan_chunk_totals(build: _Builder, partials: list, lid, lane, lanes: int, start, end,
                       active) -> int:
    """Steps 1 and 2: each lane's chunk total, then their inclusive scan along the row;
    -> the half of `partials` that holds it."""
    index = ir.IndexType.get()
    c = lambda v: arith.constant(index, v)  # noqa: E731
    fold = scf.IfOp(active)
    with ir.InsertionPoint(fold.then_block):
        for total, buffer in zip(build.fold(start, end), partials):
            memref.store(total, buffer, [c(0), lid])
        scf.YieldOp([])
    local_barrier()
    half, distance = 0, 1
    while distance < lanes:
        step = scf.IfOp(active)
        with ir.InsertionPoint(step.then_block):
            mine = [memref.load(b, [c(half), lid]) for b in partials]
            has_earlier = arith.cmpi(arith.CmpIPredicate.uge, lane, c(distance))
            pick = scf.IfOp(has_earlier, [v.type for v in mine], has_else=True)
            with ir.InsertionPoint(pick.then_block):
                earlier = [memref.load(b, [c(half), arith.subi(lid, c(distance))])
                           for b in partials]
                scf.YieldOp(build.combine(earlier, mine))
            with ir.InsertionPoint(pick.else_block):
                scf.YieldOp(mine)
            for value, buffer in zip(pick.results, partials):
                memref.store(value, buffer, [c(1 - half), lid])
            scf.YieldOp([])
        local_barrier()
        half, distance = 1 - half, distance * 2
    return half



def _scan_chunks(build: _Builder, partials: list, final, lid, lane, start, end,
                 active) -> None:
    """Step 3: each lane scans its chunk from the total of the lanes before it."""
    index = ir.IndexType.get()
    run = scf.IfOp(active)
    with ir.InsertionPoint(run.then_block):
        first = build.elements(start)
        if partials:
            is_first = arith.cmpi(arith.CmpIPredicate.eq, lane, arith.constant(index, 0))
            seed = scf.IfOp(is_first, [v.type for v in first], has_else=True)
            with ir.InsertionPoint(seed.then_block):
                scf.YieldOp(first)
            with ir.InsertionPoint(seed.else_block):
                before = arith.subi(lid, arith.constant(index, 1))
                prefix = [memref.load(b, [arith.constant(index, final), before])
                          for b in partials]
                scf.YieldOp(build.combine(prefix, first))
            first = list(seed.results)
        build.scan_from(start, end, first)
        scf.YieldOp([])


def _row_coordinates(row, outer: list) -> list:
    """Row-major coordinates of row number `row` over the row loops."""
    index = ir.IndexType.get()
    coordinates, rest = [], row
    for loop in reversed(outer[1:]):
        extent = arith.constant(index, constant_index(loop.operands[1]))
        coordinates.append(arith.remui(rest, extent))
        rest = arith.divui(rest, extent)
    if outer:
        coordinates.append(rest)
    return coordinates[::-1]


# ------------------------------------------------------------------------- the pass

def scan_on_work_group(module: ir.Module, config, analyses: dict) -> None:
    """Scans outside the distributed loops run on the work-group (work_group_scans.py);
    their loops hold their own barriers."""
    for func in functions(module):
        sharing = sharing_of(func, config, analyses)
        for rows in scans_on_work_group(entry_block(func), sharing.lid, config.work_items,
                                        skip=sharing.distributed):
            sharing.partitioned[op_of(rows)] = plain_accesses(rows, ANY)   # own barriers
