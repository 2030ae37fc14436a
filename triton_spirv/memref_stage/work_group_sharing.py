"""GPU-shaped kernels: the work-items of a work-group share a Triton program's tiles.

On CPU targets a program is one work-item that walks every tile (the default CPU runtime runs that fastest).
On GPU targets a program runs on `work_items` work-items (`gpu.thread_id x`, the
work-group id stays `program_id`). The rewrite runs on the scf stage, after upstream
`affine-parallelize` has turned every provably parallel outermost loop into
`scf.parallel`:

1. **Distribution.** Each outermost `scf.parallel` becomes a loop in which work-item
   `lid` owns chunks of `chunk` consecutive iterations (row-major over the parallel
   dimensions) strided by the work-group, `base = lid * chunk; base < total;
   base += work_items * chunk`, with chunks of one iteration: the lanes of a warp run
   consecutive iterations, so their loads and stores of one instruction are
   consecutive addresses (coalesced; a chunk of c scalar iterations spaced the lanes
   c elements apart and used 1/c of each memory transaction). A loop that indexes a private array (below)
   by its round counts the rounds from 0 instead (`count_rounds`):
   `for k < ceil(total / (work_items * chunk))`, `base = (k * work_items + lid) * chunk`,
   `if (base < total)` unless work_items * chunk divides a static total -- a static
   trip count a GPU compiler unrolls, so the array stays in registers.
2. **Single-work-item sections.** Any other op that writes memory (a serial reduction
   loop, a scalar store, a scalar atomic, a printf) would be run by every work-item; it
   runs on work-item 0 (`scf.if lid == 0`, marked `opencl.single_work_item`); a tensor
   atomic's loop is distributed instead (work_group_atomics.py). Ops that only read
   run on every work-item alike (uniform values, no race). Async copies between global
   and local memory stay work-group collective; copies between two tiles in a loop's
   body are spread over the work-items (element lid, lid + work_items, ...).
3. **Barriers.** An analysis of which work-item touches which elements: each access is
   owned by a distribution (the same chunk of the same loop space, indexed by the
   induction variables in the same positions of the same view), by work-item 0, or by
   anyone (collective copies, redundant reads, indices other than the induction
   variables). A `gpu.barrier` goes before an op that touches a buffer (a tile, or a
   kernel argument) that an op since the last barrier touched under another owner,
   one of the two writing. Loops are scanned twice (what the end of one iteration left
   pending meets the start of the next); `scf.if` branches join.

Everything stays upstream scf/memref/gpu IR; the emitter prints `get_local_id(0)` and
`barrier(...)`, and `opencl.local_size` gives `reqd_work_group_size` and the launcher's
local size.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu, memref, scf, vector

from ..ir_helpers import root_buffer as _root
from .affine_nests import matched_loops, nested_allocs, op_of, owner, static_trip_count
from .affine_nests import constant_index as _constant_index
from .affine_nests import memory_access as _memory_access
from .affine_nests import outermost_parallel_loops as _outermost_parallel_loops
from .block_ownership import block_offsets
from .copy_loops import copy_loop
from .sequential_tiles import share_sequential_tiles
from .work_group_atomics import atomic_nests
from .work_group_columns import split_column_reductions
from .work_group_collectives import has_collective, reduce_collectively
from .work_group_scans import scans_on_work_group
from .shared_copies import converting_copy_loops

# Triton counts num_warps in warps of 32 lanes (its threads_per_warp).
WARP_LANES = 32
# Unit attribute of the `scf.if lid == 0` of a single-work-item section: later stages
# (the SPIR-V stage's copies, spirv/flatten.py) read from it that only work-item 0 runs
# the region, while every other branch of the kernel is taken by all work-items alike.
SINGLE_WORK_ITEM = "opencl.single_work_item"

_WRITES = ("memref.store", "vector.store", "vector.transfer_write", "memref.copy",
           "memref.atomic_rmw", "memref.generic_atomic_rmw", "gpu.printf")
_READS = ("memref.load", "vector.load", "vector.transfer_read")
_ATOMICS = ("memref.atomic_rmw", "memref.generic_atomic_rmw")


def work_group_size(target, num_warps: int) -> int:
    """Work-items per Triton program: one per work-item on CPU targets, else
    `num_warps` warps of 32 lanes within the target's work-group limit (a multiple of
    its preferred multiple where that is smaller)."""
    if target.is_cpu:
        return 1
    size = min(max(1, num_warps) * WARP_LANES, target.max_work_group_size)
    multiple = max(1, target.preferred_work_group_multiple)
    return max(multiple, size - size % multiple) if size >= multiple else size


def share_work_group(module: ir.Module, work_items: int, collectives: bool = False,
                     quirks: tuple[str, ...] = ()) -> None:
    """Distributes, guards and synchronizes every kernel of `module` for `work_items`;
    with `collectives` (the target has work-group collective functions), reductions
    that have one use it instead of a tree (work_group_collectives.py). `quirks`: the
    target's device quirks (triton_spirv/target.py) whose workarounds this rewrite
    makes (`one_sided_barrier_branch`, `barrier_loop_after_branch`,
    `branch_after_barrier_loop`, `one_round_loops_strided`, `chunked_distribution`);
    none: the plain forms."""
    for func in module.body.operations:
        if func.operation.name != "func.func" or not func.regions[0].blocks:
            continue
        _share_function(func, work_items, collectives, frozenset(quirks))


def _share_function(func, work_items: int, collectives: bool, quirks: frozenset) -> None:
    entry = func.regions[0].blocks[0]
    with ir.Location.unknown(), ir.InsertionPoint.at_block_begin(entry):
        lid = gpu.thread_id(gpu.Dimension.x)
    sharing = _Sharing(lid, work_items, chunked="chunked_distribution" in quirks)
    converting_copy_loops(entry)        # loops the next lines distribute
    split_column_reductions(entry, work_items)
    for loop in _outermost_parallel_loops(entry):
        sharing.distribute(loop)
    for nest in _owner_parallel_nests(entry, sharing.distributed):
        sharing.distribute_nest(nest)
    for nest in atomic_nests(entry, sharing.distributed):
        sharing.distribute_nest(nest)
    for match in _serial_reductions(entry, sharing.distributed):
        if collectives and has_collective(match.combiner):
            sharing.reduce_with_collective(match)
        else:
            sharing.reduce_as_tree(match)
    for rows in scans_on_work_group(entry, lid, work_items, skip=sharing.distributed):
        sharing.partitioned[op_of(rows)] = _plain_accesses(rows, ANY)   # own barriers
    sharing.privatize(entry)
    sharing.count_rounds(one_round_strided="one_round_loops_strided" in quirks)
    # before the barriers, which then see the shared buffers; tree reductions keep
    # theirs (their accesses are recorded in `partitioned`)
    share_sequential_tiles(entry, keep=sharing.partitioned_buffers())
    sharing.guard_block(entry)
    _Barriers(sharing).scan(entry, [], insert=True)
    if "one_sided_barrier_branch" in quirks:
        _balance_barriers(entry)
    if "barrier_loop_after_branch" in quirks:
        _enter_barrier_loops_after_a_barrier(entry)
    if "branch_after_barrier_loop" in quirks:
        _leave_barrier_loops_by_a_barrier(entry)
    func.attributes["opencl.local_size"] = ir.DenseI64ArrayAttr.get([work_items, 1, 1])



def _bound_key(value: ir.Value):
    constant = _constant_index(value)
    return ("constant", constant) if constant is not None else ("value", value)


@dataclass(frozen=True)
class Distribution:
    """One distributed loop space: equal keys give each work-item the same iterations."""
    key: tuple        # ((lb, ub, step) per dimension, chunk), bounds as _bound_key
    ivs: tuple        # the iteration-space coordinates (Values) inside the loop body
    owned: ir.Value   # which of the work-item's own iterations this is: 0, 1, 2, ...


@dataclass(frozen=True)
class _Rounds:
    """How a distributed loop `for base = start; base < total; base += per_round`
    strides: `round` is `(base - start) / per_round`, computed in its body."""
    start: ir.Value
    total: ir.Value
    per_round: int
    round: ir.Value


class _Sharing:
    def __init__(self, lid: ir.Value, work_items: int, chunked: bool = False):
        self.lid = lid
        self.work_items = work_items
        # quirk chunked_distribution: loops over elements give a work-item up to
        # MAX_CHUNK consecutive iterations (_chunk) instead of one per round
        self.chunked = chunked
        self.distributed: dict = {}     # distributed outer loop op -> Distribution
        self.single: list = []          # scf.if ops of single-work-item sections
        # ops of work-group tree reductions: their accesses as the barrier analysis sees
        # them (they hold their own barriers)
        self.partitioned: dict = {}
        self.iterations: dict = {}      # distributed loop -> (static trip count, chunk)
        self.rounds: dict = {}          # distributed loop -> _Rounds

    # ------------------------------------------------------------ distribution

    def distribute(self, parallel, chunk: int | None = None) -> None:
        """`chunk`: the iterations a work-item owns in a row; by default one, or as
        _chunk picks under the quirk chunked_distribution."""
        n = len(parallel.regions[0].blocks[0].arguments)
        lbs, ubs, steps = (list(parallel.operands)[k * n:(k + 1) * n] for k in range(3))
        body = parallel.regions[0].blocks[0]
        self._distribute(parallel, lbs, ubs, steps, list(body.arguments),
                         list(body.operations)[:-1], chunk)      # all but scf.reduce

    def distribute_nest(self, nest: list) -> None:
        """A perfect nest of scf.for loops that _owner_parallel proved parallel."""
        body = nest[-1].regions[0].blocks[0]
        self._distribute(nest[0], [l.operands[0] for l in nest], [l.operands[1] for l in nest],
                         [l.operands[2] for l in nest], [_iv(l) for l in nest],
                         list(body.operations)[:-1])

    def _distribute(self, parallel, lbs, ubs, steps, old_ivs, body_ops, chunk=None) -> None:
        with parallel.location, ir.InsertionPoint(parallel):
            index = ir.IndexType.get()
            trips = [self._trip_count(lb, ub, step) for lb, ub, step in zip(lbs, ubs, steps)]
            total_static = _product([_constant_index(t) for t in trips])
            if chunk is None:
                chunk = _chunk(total_static, self.work_items, _elements_per_iteration(body_ops)) \
                    if self.chunked else 1
            total = trips[0]
            for trip in trips[1:]:
                total = arith.muli(total, trip)
            c = lambda v: arith.constant(index, v)  # noqa: E731
            per_round = self.work_items * chunk
            start = arith.muli(self.lid, c(chunk))
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
        self.distributed[op_of(outer)] = Distribution(key, tuple(ivs), owned)
        self.iterations[op_of(outer)] = (total_static, chunk)
        self.rounds[op_of(outer)] = _Rounds(start, total, per_round, round_)
        parallel.operation.erase()

    def count_rounds(self, one_round_strided: bool = False) -> None:
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
        for loop, rounds in list(self.rounds.items()):
            total = self.iterations[loop][0]
            one_round = total is not None and total <= rounds.per_round
            if total is not None and not (one_round and one_round_strided) and \
                    _indexes_private_array(loop):
                self._count_rounds(loop, rounds)

    def _count_rounds(self, loop, rounds: "_Rounds") -> None:
        total, _chunk_size = self.iterations[loop]
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
        for table in (self.distributed, self.iterations):
            table[op_of(counted)] = table.pop(loop)
        loop.erase()

    # ------------------------------------------------------ private tiles

    def privatize(self, block: ir.Block) -> None:
        """A tile whose every element is read and written only by the work-item that
        owns it in one distribution (element loads and stores at the induction
        variables, or inside the block of iterations a step covers -- register blocks
        of an accumulator, block_ownership.py --, or whole-tile copies to and from
        other such tiles: loop-carried tiles) becomes a private array of that
        work-item's elements: `[owned]`, or `[owned, offset...]` for blocks."""
        plans = {}
        for op in nested_allocs(block):
            plan = self._private_plan(op)
            if plan is not None:
                plans[op.results[0]] = plan
        changed = True
        while changed:     # a copy keeps both of its tiles private, or neither
            changed = False
            for tile, (_alloc, _accesses, copies, key) in list(plans.items()):
                partners = [c.operands[1] if c.operands[0] == tile else c.operands[0]
                            for c in copies]
                if any(p not in plans or plans[p][3] != key for p in partners):
                    del plans[tile]
                    changed = True
        privates = {}
        for tile, (alloc, accesses, _copies, _key) in plans.items():
            privates[tile] = self._make_private(alloc, accesses)
        unique = {}
        for _alloc, _accesses, copies, _key in plans.values():
            for copy in copies:
                unique.setdefault(op_of(copy), copy)
        for copy in unique.values():
            with copy.location, ir.InsertionPoint(copy):
                memref.copy(privates[copy.operands[0]], privates[copy.operands[1]])
            copy.operation.erase()
        for alloc, *_rest in plans.values():
            alloc.operation.erase()

    def _private_plan(self, alloc):
        """(alloc, element accesses, copies, distribution key and size) when the tile
        may be private, else None."""
        tile = alloc.results[0]
        tile_type = ir.MemRefType(tile.type)
        if not tile_type.has_static_shape or tile_type.rank == 0:
            return None
        accesses, copies = [], []
        for use in tile.uses:
            user = use.owner
            if user.name == "memref.copy" and self._distributed_loop_of(user) is None and \
                    all(owner(v) is not None and owner(v).name == "memref.alloc" and
                        v.type == tile.type for v in user.operands):
                copies.append(user)
                continue
            access = _memory_access(user)
            loop = self._distributed_loop_of(user)
            if access is None or access[0] != tile or loop is None:
                return None
            distribution = self.distributed[loop]
            steps = _constant_steps(distribution.key)
            offsets = None if steps is None else \
                block_offsets(access[1], distribution.ivs, steps, _vector_width(user))
            if offsets is None:
                return None
            accesses.append((user, distribution, loop, offsets))
        if not accesses:
            return None
        key = accesses[0][1].key
        total, chunk = self.iterations[accesses[0][2]]
        steps = _constant_steps(key)
        full = all(lb == ("constant", 0) and ub == ("constant", n) and n % step == 0
                   for (lb, ub, _step), n, step in zip(key[0], tile_type.shape, steps))
        if any(a[1].key != key for a in accesses) or not full or total is None:
            return None
        return alloc, accesses, copies, (key, total, chunk)

    def _make_private(self, alloc, accesses) -> ir.Value:
        """The private array of the blocks a work-item owns: one element per owned
        iteration when the loops step by 1, else one block `[steps...]` per iteration."""
        tile_type = ir.MemRefType(alloc.results[0].type)
        _user, distribution, loop, _offsets = accesses[0]
        total, chunk = self.iterations[loop]
        per_item = -(-total // (self.work_items * chunk)) * chunk
        steps = _constant_steps(distribution.key)
        blocked = any(step != 1 for step in steps)
        shape = [per_item, *steps] if blocked else [per_item]
        with alloc.location, ir.InsertionPoint(alloc):
            private = memref.alloca(ir.MemRefType.get(shape, tile_type.element_type), [], [])
        for user, distribution, _loop, offsets in accesses:
            first = 1 if user.name in ("memref.load", "vector.load") else 2
            user.operands[first - 1] = private
            with user.location, ir.InsertionPoint(user):
                index = ir.IndexType.get()
                within = [arith.constant(index, 0) if offset == 0 else offset
                          for offset in offsets] if blocked else []
            _replace_indices(user, first, [distribution.owned, *within])
        return private

    def _distributed_loop_of(self, op):
        parent = op_of(op).parent
        while parent is not None:
            if op_of(parent) in self.distributed:
                return op_of(parent)
            parent = parent.parent if hasattr(parent, "parent") else None
        return None

    # ------------------------------------------------------ tree reductions

    def reduce_with_collective(self, match: "SerialReduction") -> None:
        """The reduction as one work-group collective (work_group_collectives.py); its
        accesses as the barrier analysis sees them: every work-item reads the view,
        work-item 0 updates the accumulator."""
        made = reduce_collectively(match, self.lid, self.work_items)
        self.partitioned[op_of(made.fold)] = [Access(_root(match.view), False, ANY)]
        self._single_section(made.final)
        self.partitioned[op_of(made.final)] = _plain_accesses(made.final, SINGLE)

    def reduce_as_tree(self, match: "SerialReduction") -> None:
        """`for i: acc = acc <op> f(view[i])` becomes: each work-item folds f over its
        elements (i = lb + lid, lb + lid + W, ...) in a register and writes the partial
        to `__local partials[lid]`; log2(W) halving steps combine them (a barrier after
        each); work-item 0 folds partials[0] into acc."""
        loop, w = match.loop, self.work_items
        index = ir.IndexType.get()
        element_type = match.combiner.results[0].type
        with loop.location, ir.InsertionPoint(loop):
            c = lambda v: arith.constant(index, v)  # noqa: E731
            lb, ub, step = loop.operands[0], loop.operands[1], loop.operands[2]
            count = self._trip_count(lb, ub, step)
            # A loop of known length has at most that many partials: a smaller tile and
            # no halving steps in which no work-item has a partner.
            known = _constant_index(count)
            slots = w if known is None else max(1, min(known, w))
            valid = arith.minsi(count, c(w))
            partials = memref.alloc(ir.MemRefType.get([slots], element_type), [], [])
            has_element = arith.cmpi(arith.CmpIPredicate.ult, self.lid, count)
            fold = scf.IfOp(has_element)
        with loop.location, ir.InsertionPoint(fold.then_block):
            first_iv = arith.addi(lb, arith.muli(self.lid, step))
            first = match.clone_element(first_iv)
            stride = arith.muli(step, c(w))
            rest = scf.ForOp(arith.addi(first_iv, stride), ub, stride, [first])
            with ir.InsertionPoint(rest.body):
                value = match.clone_element(rest.induction_variable)
                combined = match.clone_combiner(rest.inner_iter_args[0], value)
                scf.YieldOp([combined])
            memref.store(rest.results[0], partials, [self.lid])
            scf.YieldOp([])
        self.partitioned[op_of(fold)] = [Access(_root(match.view), False, ANY)]
        with loop.location, ir.InsertionPoint(loop):
            gpu.barrier()
            half = 1
            while half < slots:
                half *= 2
            half //= 2
            while half >= 1:
                partner = arith.addi(self.lid, c(half))
                active = arith.andi(arith.cmpi(arith.CmpIPredicate.ult, self.lid, c(half)),
                                    arith.cmpi(arith.CmpIPredicate.ult, partner, valid))
                step_if = scf.IfOp(active)
                with ir.InsertionPoint(step_if.then_block):
                    mine = memref.load(partials, [self.lid])
                    theirs = memref.load(partials, [partner])
                    memref.store(match.clone_combiner(mine, theirs), partials, [self.lid])
                    scf.YieldOp([])
                self.partitioned[op_of(step_if)] = []
                gpu.barrier()
                half //= 2
            is_first = arith.cmpi(arith.CmpIPredicate.eq, self.lid, c(0))
            final = scf.IfOp(is_first)
            with ir.InsertionPoint(final.then_block):
                total = memref.load(partials, [c(0)])
                old = memref.load(match.accumulator, [])
                memref.store(match.clone_combiner(old, total), match.accumulator, [])
                scf.YieldOp([])
        # Only when the loop runs at all: an empty range leaves acc as it is.
        self._single_section(final)
        self.partitioned[op_of(final)] = _plain_accesses(final, SINGLE)
        loop.operation.erase()

    def partitioned_buffers(self) -> list:
        """The buffers the ops of tree reductions touch."""
        found = []

        def visit(inner):
            found.extend(_root(v) for v in inner.operands if isinstance(v.type, ir.MemRefType))
            return ir.WalkResult.ADVANCE
        for op in self.partitioned:
            op_of(op).walk(visit)
        return found

    @staticmethod
    def _trip_count(lb, ub, step):
        count = static_trip_count(lb, ub, step)
        if count is not None:
            return arith.constant(ir.IndexType.get(), count)
        return arith.ceildivsi(arith.subi(ub, lb), step)

    # ------------------------------------------------------ single sections

    def guard_block(self, block: ir.Block) -> None:
        """Puts each run of consecutive writing ops that every work-item would otherwise
        repeat into one `scf.if lid == 0`; recurses into ops holding shared work."""
        run = []
        for op in list(block.operations):
            if _tile_to_tile_copy(op):
                self._guard(run)
                run = []
                self._spread_copy(op)
                continue
            if self._shared(op) or not _writes_memory(op) or _is_terminator(op):
                self._guard(run)
                run = []
                if self._shared(op) and op_of(op) not in self.distributed and \
                        op_of(op) not in self.partitioned:
                    for region in op.regions:
                        for inner in region.blocks:
                            self.guard_block(inner)
                continue
            run.append(op)
        self._guard(run)

    def _spread_copy(self, copy) -> None:
        """A copy between two work-group tiles: work-item `lid` moves elements lid,
        lid + work_items, ... (row-major), a loop distributed in chunks of one: the
        work-group shares the copy instead of waiting on work-item 0's loop."""
        source, target = copy.operands[0], copy.operands[1]
        with copy.location, ir.InsertionPoint(copy):
            loop = copy_loop(source, target, list(ir.MemRefType(source.type).shape))
        copy.operation.erase()
        self.distribute(loop, chunk=1)

    def _shared(self, op) -> bool:
        """Distributed loops, collective copies, or ops holding them."""
        if op_of(op) in self.distributed or op_of(op) in self.partitioned or _collective_copy(op):
            return True
        return any(self._shared(inner) for region in op.regions
                   for block in region.blocks for inner in block.operations)

    def _guard(self, run: list) -> None:
        if not run:
            return
        first = run[0]
        escaping = [(result, uses) for op in run for result in op.results
                    if (uses := [(use.owner, use.operand_number) for use in result.uses
                                 if not _inside_any(use.owner, run)])]
        with first.location, ir.InsertionPoint(first):
            index = ir.IndexType.get()
            # Results every work-item uses go through __local memory.
            buffers = [memref.alloc(ir.MemRefType.get([], result.type), [], [])
                       for result, _uses in escaping]
            is_first = arith.cmpi(arith.CmpIPredicate.eq, self.lid, arith.constant(index, 0))
            guard = scf.IfOp(is_first)
        with first.location, ir.InsertionPoint(guard.then_block):
            terminator = scf.YieldOp([])
        for op in run:
            op.move_before(terminator)
        with first.location, ir.InsertionPoint(terminator):
            for (result, _uses), buffer in zip(escaping, buffers):
                memref.store(result, buffer, [])
        loads = []
        with first.location, ir.InsertionPoint(guard):
            for (_result, uses), buffer in zip(escaping, buffers):
                shared = memref.load(buffer, [])
                loads.append(shared)
                for owner_op, number in uses:
                    owner_op.operands[number] = shared
        if loads:   # the loads were put before the section; it goes first
            op_of(guard).move_before(loads[0].owner)
        self._single_section(guard)

    def _single_section(self, guard) -> None:
        """Records `guard` (an `scf.if lid == 0`) as a section work-item 0 runs alone,
        and marks it so for later stages."""
        guard.operation.attributes[SINGLE_WORK_ITEM] = ir.UnitAttr.get()
        self.single.append(op_of(guard))


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
            or ir.MemRefType(accumulator.type).rank != 0 or not _is_local(accumulator):
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
        elif name in _WRITES or name in _READS or op.regions or \
                not name.startswith(("arith.", "math.")):
            return None
    if len(views) != 1:
        return None
    return SerialReduction(loop, iv, accumulator, views[0], element_ops, element[0], combiner)


def _replace_indices(op, first: int, indices: list) -> None:
    """A scalar or vector load or store through `indices` from operand `first` on (a
    new op: the number of operands changes)."""
    operands = list(op.operands)
    with op.location, ir.InsertionPoint(op):
        if op.name == "memref.load":
            op.results[0].replace_all_uses_with(memref.load(operands[0], indices))
        elif op.name == "vector.load":
            op.results[0].replace_all_uses_with(
                vector.load(op.results[0].type, operands[0], indices))
        elif op.name == "vector.store":
            vector.store(operands[0], operands[1], indices)
        else:
            memref.store(operands[0], operands[1], indices)
    op.erase()


def _constant_steps(key: tuple) -> tuple | None:
    """The steps of a distribution key's loop space, when all are constants."""
    steps = tuple(step[1] if step[0] == "constant" else None for _lb, _ub, step in key[0])
    return None if None in steps else steps


_ACCESS_OPS = ("memref.load", "vector.load", "memref.store", "vector.store")


def _vector_width(op) -> int:
    """Elements a load or store touches along the last dimension."""
    value = op.results[0] if op.name in ("memref.load", "vector.load") else op.operands[0]
    return ir.VectorType(value.type).shape[-1] if isinstance(value.type, ir.VectorType) else 1


def _remap(op, mapping: dict) -> None:
    for i, operand in enumerate(op.operands):
        if operand in mapping:
            op.operands[i] = mapping[operand]


def _iv(loop) -> ir.Value:
    return loop.regions[0].blocks[0].arguments[0]


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
    ivs = [_iv(loop) for loop in nest]
    stores, loads, bad = [], [], []

    def visit(inner):
        name = inner.name
        if name == "memref.store":
            stores.append(inner)
        elif name == "memref.load":
            loads.append(inner)
        elif name in _WRITES or name in _READS or name.startswith(("gpu.", "func.")) \
                or name in ("scf.while", "memref.alloc", "memref.alloca"):
            bad.append(inner)
        return ir.WalkResult.ADVANCE
    op_of(nest[0]).walk(visit)
    if bad or not stores:
        return False
    written = set()
    for store in stores:
        target = store.operands[1]
        if not _is_local(target) or _root(target) != target or list(store.operands)[2:] != ivs:
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
    found = []

    def visit(inner):
        access = _memory_access(inner)
        if access is not None and _is_private(_root(access[0])):
            found.append(inner)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    op_of(loop).walk(visit)
    return bool(found)


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
    accesses = [op for op in _with_if_branches(body_ops) if op.name in _ACCESS_OPS]
    return max([_vector_width(op) for op in accesses], default=1)


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


def _inside_any(op, run) -> bool:
    """`op` is one of `run` or nested in one."""
    parent = op_of(op)
    while parent is not None:
        if any(op_of(parent) == op_of(r) for r in run):
            return True
        parent = parent.parent if hasattr(parent, "parent") else None
    return False


def _tile_to_tile_copy(op) -> bool:
    """A `memref.copy` of more than one element between two work-group tiles (not
    private arrays) of a static shape."""
    if op.operation.name != "memref.copy":
        return False
    source, target = op.operands[0], op.operands[1]
    if not all(_is_local(v) and not _is_private(_root(v)) for v in (source, target)):
        return False
    source_type = ir.MemRefType(source.type)
    return source_type.has_static_shape and math.prod(source_type.shape) > 1


def _is_terminator(op) -> bool:
    return op.operation.name in ("scf.yield", "func.return", "scf.condition", "scf.reduce")


def _writes_memory(op) -> bool:
    """Writes memory that other work-items see (not private arrays)."""
    found = []

    def visit(inner):
        if inner.name in ("memref.copy", "memref.store") and \
                _is_private(_root(inner.operands[1])):
            return ir.WalkResult.ADVANCE
        if inner.name in _WRITES:
            found.append(inner)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    op_of(op).walk(visit)
    return bool(found)


def _is_local(value: ir.Value) -> bool:
    defining = owner(_root(value))
    return defining is not None and defining.name in ("memref.alloc", "memref.alloca")


def _is_private(buffer: ir.Value) -> bool:
    defining = owner(buffer)
    return defining is not None and defining.name == "memref.alloca"


def _collective_copy(op) -> bool:
    """A global <-> local memref.copy that the emitter prints as async work-group copies
    every work-item calls (emitter_opencl/memory.py: plain element types, unit stride
    on the local side); other copies are loops."""
    if op.operation.name != "memref.copy":
        return False
    source, target = op.operands[0], op.operands[1]
    if _is_local(source) == _is_local(target):
        return False
    element = ir.MemRefType(source.type).element_type
    if isinstance(element, (ir.F16Type, ir.BF16Type)) or str(element).startswith("f8"):
        return False
    local = ir.MemRefType((target if _is_local(target) else source).type)
    if local.rank == 0:
        return False
    strides, _offset = local.get_strides_and_offset()
    return strides[-1] == 1


# ------------------------------------------------------------------- barriers

ANY = ("any",)
SINGLE = ("single",)
COLLECTIVE = ("collective",)


@dataclass(frozen=True)
class Access:
    buffer: ir.Value     # the root buffer: a tile or a kernel argument
    writes: bool
    owner: tuple         # ANY, SINGLE, COLLECTIVE or ("distributed", key, view, positions)
    # An atomic: it may synchronize with other programs (a lock taken or released, a
    # flag), so it orders every global access of the other work-items around it.
    orders: bool = False


def _conflict(a: Access, b: Access) -> bool:
    if (a.orders or b.orders) and a.owner != b.owner and _is_global(a.buffer) \
            and _is_global(b.buffer):
        return True
    if a.buffer != b.buffer or not (a.writes or b.writes) or _is_private(a.buffer):
        return False
    return a.owner == ANY or a.owner != b.owner


def _is_global(buffer: ir.Value) -> bool:
    return not _is_local(buffer)


class _Barriers:
    def __init__(self, sharing: _Sharing):
        self.sharing = sharing

    def scan(self, block: ir.Block, pending: list, insert: bool) -> list:
        """The accesses pending (since the last barrier) after `block`, given those
        pending before it; puts barriers where an op meets a conflicting access."""
        for op in list(block.operations):
            if op.operation.name == "gpu.barrier":
                pending = []
                continue
            accesses, nested = self._accesses(op)
            if nested:
                pending = self._scan_nested(op, pending, insert)
                continue
            if _collective_copy(op):
                # The emitter puts a barrier before every async copy of a work-group
                # of several work-items (emitter_opencl/memory.py).
                pending = []
            if any(_conflict(p, a) for p in pending for a in accesses):
                if insert:
                    with op.location, ir.InsertionPoint(op):
                        gpu.barrier()
                pending = []
            pending = pending + accesses
        return pending

    def _scan_nested(self, op, pending: list, insert: bool) -> list:
        name = op.operation.name
        if name == "scf.if":
            joined = list(pending)
            for region in op.regions:
                for block in region.blocks:
                    joined += self.scan(block, list(pending), insert)
            return joined
        if name in ("scf.for", "scf.while"):
            # One dry iteration: its leftovers meet the next iteration's start.
            after_one = self._scan_regions(op, list(pending), insert=False)
            return self._scan_regions(op, pending + after_one, insert)
        return self._scan_regions(op, pending, insert)

    def _scan_regions(self, op, pending: list, insert: bool) -> list:
        for region in op.regions:
            for block in region.blocks:
                pending = self.scan(block, pending, insert)
        return pending

    def _accesses(self, op) -> tuple[list, bool]:
        """(accesses of `op` as one unit, whether to scan inside it instead)."""
        key = op_of(op)
        if key in self.sharing.partitioned:
            return self.sharing.partitioned[key], False
        if key in self.sharing.distributed:
            return self._distributed_accesses(op, self.sharing.distributed[key]), False
        if any(key == single for single in self.sharing.single):
            return _plain_accesses(op, SINGLE), False
        if _collective_copy(op):
            return [Access(_root(op.operands[0]), False, COLLECTIVE),
                    Access(_root(op.operands[1]), True, COLLECTIVE)], False
        if op.regions and self.sharing._shared(op):
            return [], True
        return _plain_accesses(op, ANY), False

    def _distributed_accesses(self, loop, distribution: Distribution) -> list:
        found = []

        def visit(inner):
            access = _memory_access(inner)
            if access is not None:
                memref, indices, writes = access
                positions = tuple(_position(indices, iv) for iv in distribution.ivs)
                owned = None not in positions
                who = ("distributed", distribution.key, memref, positions) if owned else ANY
                found.append(Access(_root(memref), writes, who))
            elif inner.name in _WRITES:
                found.extend(Access(_root(v), True, ANY) for v in inner.operands
                             if isinstance(v.type, ir.MemRefType))
            return ir.WalkResult.ADVANCE
        op_of(loop).walk(visit)
        return found


def _balance_barriers(block: ir.Block) -> None:
    """Quirk one_sided_barrier_branch: where one branch of an `if` has barriers and the
    other none, that branch gets one barrier at its start (the condition is uniform,
    every work-item reaches it)."""
    for op in block.operations:
        for region in op.regions:
            for inner in region.blocks:
                _balance_barriers(inner)
        if op.operation.name != "scf.if" or not _has_barrier(op):
            continue
        if not op.regions[1].blocks:
            with op.location:
                op.regions[1].blocks.append()
                with ir.InsertionPoint(op.regions[1].blocks[0]):
                    scf.YieldOp([])
        for region in op.regions:
            branch = region.blocks[0]
            if not any(_has_barrier(inner) for inner in branch.operations):
                with op.location, ir.InsertionPoint.at_block_begin(branch):
                    gpu.barrier()


def _enter_barrier_loops_after_a_barrier(block: ir.Block) -> None:
    """Quirk barrier_loop_after_branch: a loop holding barriers, when the code between
    the previous barrier and the loop holds an `scf.if` (e.g. a single-work-item
    section: work-item 0's reset of the accumulator tile before the K loop of the
    persistent matmul, tutorial 09), gets a barrier right before it (once per entry,
    not per iteration; the loop's trip count is uniform, so every work-item reaches
    it)."""
    for op in block.operations:
        for region in op.regions:
            for inner in region.blocks:
                _enter_barrier_loops_after_a_barrier(inner)
    for op in list(block.operations):
        if op.operation.name in ("scf.for", "scf.while") and _has_barrier(op) and \
                _branch_since_barrier(op):
            with op.location, ir.InsertionPoint(op):
                gpu.barrier()


def _leave_barrier_loops_by_a_barrier(block: ir.Block) -> None:
    """Quirk branch_after_barrier_loop: a loop holding barriers, when control flow (a
    distributed loop, a guarded section) follows it before the next barrier, gets a
    barrier right after it (once per exit, not per iteration; the loop's trip count is
    uniform, so every work-item reaches it). Without it, LLVM's jump threading joins
    the loop's last section to the one after the loop when both branch on the same
    work-item condition (`lid < n`), and PoCL's parallel region formation aborts on
    the edge that enters the loop's exit section from inside the loop."""
    for op in block.operations:
        for region in op.regions:
            for inner in region.blocks:
                _leave_barrier_loops_by_a_barrier(inner)
    for op in list(block.operations):
        if op.operation.name in ("scf.for", "scf.while") and _has_barrier(op) and \
                _branch_before_barrier(op):
            with op.location, ir.InsertionPoint.after(op):
                gpu.barrier()


def _branch_before_barrier(loop) -> bool:
    """Whether an op with regions (a loop, an `scf.if`) comes after `loop` in its block
    before the next barrier (or the block's end)."""
    after = False
    for op in op_of(loop).block.operations:
        if op_of(op) == op_of(loop):
            after = True
        elif after and op.operation.name == "gpu.barrier":
            return False
        elif after and op.regions:
            return True
    return False


def double_barriers_in_branches(module: ir.Module) -> None:
    """Quirk barrier_in_uniform_branch: every barrier inside a branch of an `scf.if`
    holding barriers is followed by a second one, so that an empty stretch of code
    follows each (the conditions are uniform: every work-item reaches both). Run
    after the last canonicalization, which erases a barrier right after another."""
    for func in module.body.operations:
        for region in func.regions:
            for block in region.blocks:
                _double_barriers_in_branches(block)


def _double_barriers_in_branches(block: ir.Block) -> None:
    for op in block.operations:
        if op.operation.name == "scf.if" and _has_barrier(op):
            for region in op.regions:
                for inner in region.blocks:
                    _double_barriers(inner)
            continue
        for region in op.regions:
            for inner in region.blocks:
                _double_barriers_in_branches(inner)


def _double_barriers(block: ir.Block) -> None:
    for op in list(block.operations):
        if op.operation.name == "gpu.barrier":
            with op.location, ir.InsertionPoint.after(op):
                gpu.barrier()
            continue
        for region in op.regions:
            for inner in region.blocks:
                _double_barriers(inner)


def _branch_since_barrier(loop) -> bool:
    """Whether an `scf.if` comes between the last barrier of `loop`'s block (or the
    block's start) and `loop` (distributed loops there are compiled right)."""
    seen = False
    for op in op_of(loop).block.operations:
        if op_of(op) == op_of(loop):
            break
        if op.operation.name == "gpu.barrier":
            seen = False
        elif op.operation.name == "scf.if":
            seen = True
    return seen


def _has_barrier(op) -> bool:
    found = []

    def visit(inner):
        if inner.name == "gpu.barrier":
            found.append(inner)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    op_of(op).walk(visit)
    return bool(found)


def _position(indices: list, iv: ir.Value):
    for i, index in enumerate(indices):
        if index == iv:
            return i
    return None


def _plain_accesses(op, who: tuple) -> list:
    """Every memref an op (and its regions) reads or writes, owned by `who`."""
    found = []

    def visit(inner):
        access = _memory_access(inner)
        if access is not None:
            found.append(Access(_root(access[0]), access[2], who))
        elif inner.name in _WRITES or inner.name in _READS:
            memrefs = [v for v in inner.operands if isinstance(v.type, ir.MemRefType)]
            for i, v in enumerate(memrefs):
                writes = inner.name in _WRITES and (inner.name != "memref.copy" or i == 1)
                found.append(Access(_root(v), writes, who, orders=inner.name in _ATOMICS))
        return ir.WalkResult.ADVANCE
    op_of(op).walk(visit)
    return found
