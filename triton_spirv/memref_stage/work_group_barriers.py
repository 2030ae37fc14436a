"""GPU-shaped kernels, work-group sharing (work_group_sharing.py): barriers, and the
barrier fix-ups of device quirks. An analysis of which work-item touches which
elements puts a `gpu.barrier` before an op that touches a buffer an op since the last
barrier touched under another owner, one of the two writing (work_group_sharing.py's
docstring, step 3). The quirks' forms: one_sided_barrier_branch (`balance_barriers`),
barrier_loop_after_branch (`barrier_before_loops`), uniform_loop_after_branch
(`barrier_before_uniform_loops`), barrier_in_uniform_branch
(`double_barriers_in_branches`, after the last canonicalize); barrier_in_fill_branch
and those two keep the barrier after a partial tile's fill out of its branch
(`barriers_in_branches`).

An async work-group copy (`collective_copy`) gets a barrier before it only where an
access pending there conflicts with it (the copy is the work-group's, every owner's),
and none after it: the emitter's `wait_group_events` right after the copy completes it
for every work-item. The copy is marked `opencl.copy_barriers_placed`; unmarked copies
(kernels this analysis does not see) keep the emitter's barrier before each, and so
does the SPIR-V stage's form of them (copy_loops.py, `spread_copy`, whose barrier after
the copy stands for the wait).

Each barrier the analysis meets (its own and those the reductions and scans placed)
also gets its fences: where no access pending before it touches a global buffer the
kernel writes (its inputs' reads need no ordering), the work-items communicate across
it through `__local` memory alone and it is marked `opencl.local_fence`
(`barrier(CLK_LOCAL_MEM_FENCE)` in OpenCL C); else it keeps the global fence too.
"""
from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import gpu, scf

from ..ir_helpers import holds
from ..ir_helpers import root_buffer as _root
from .affine_nests import op_of
from .affine_nests import memory_access as _memory_access
from .work_group_sharing import (ANY, LOCAL_FENCE, COLLECTIVE, SINGLE, WRITES, Access, Distribution,
                                 WorkGroupSharing, collective_copy, entry_block, functions, local_barrier,
                                 is_local, is_private, plain_accesses, sharing_of)


def insert_barriers(module: ir.Module, config, analyses: dict) -> None:
    """Barriers where an access meets a conflicting one of another owner (_Barriers)."""
    for func in functions(module):
        written = [a.buffer for a in plain_accesses(func, ANY) if a.writes and not is_local(a.buffer)]
        _Barriers(sharing_of(func, config, analyses), written,
                  barriers_in_branches(config)).scan(entry_block(func), [], insert=True)
        _keep_fences_of_adjacent_barriers(entry_block(func))


def _keep_fences_of_adjacent_barriers(block: ir.Block) -> None:
    """Canonicalization erases a barrier right before another: where one of the two
    needs the global fence, both keep it."""
    previous = None
    for op in block.operations:
        for region in op.regions:
            for inner in region.blocks:
                _keep_fences_of_adjacent_barriers(inner)
        if op.operation.name != "gpu.barrier":
            previous = None
            continue
        if previous is not None and \
                (LOCAL_FENCE in previous.attributes) != (LOCAL_FENCE in op.attributes):
            for barrier in (previous, op):
                if LOCAL_FENCE in barrier.attributes:
                    del barrier.attributes[LOCAL_FENCE]
        previous = op.operation


def balance_barriers(module: ir.Module, _config, _analyses: dict) -> None:
    """Quirk one_sided_barrier_branch (_balance_barriers)."""
    _on_entry_blocks(module, _balance_barriers)


def barrier_before_loops(module: ir.Module, _config, _analyses: dict) -> None:
    """Quirk barrier_loop_after_branch (_enter_barrier_loops_after_a_barrier)."""
    _on_entry_blocks(module, _enter_barrier_loops_after_a_barrier)


def barrier_before_uniform_loops(module: ir.Module, _config, _analyses: dict) -> None:
    """Quirk uniform_loop_after_branch (_enter_uniform_loops_after_a_barrier), in
    kernels that hold barriers: PoCL adds no implicit loop barriers to the others."""
    for func in functions(module):
        if has_barrier(func):
            _enter_uniform_loops_after_a_barrier(entry_block(func))


def isolate_register_blocks(module: ir.Module, _config, _analyses: dict) -> None:
    """Quirk register_blocks_beside_private_loops (_isolate_register_blocks)."""
    _on_entry_blocks(module, _isolate_register_blocks)


def barrier_after_loops(module: ir.Module, _config, _analyses: dict) -> None:
    """Quirk branch_after_barrier_loop (_leave_barrier_loops_by_a_barrier)."""
    _on_entry_blocks(module, _leave_barrier_loops_by_a_barrier)


def _on_entry_blocks(module: ir.Module, rewrite) -> None:
    """`rewrite` of each kernel's entry block."""
    for func in functions(module):
        rewrite(entry_block(func))


def _conflict(a: Access, b: Access) -> bool:
    if (a.orders or b.orders) and a.owner != b.owner and _is_global(a.buffer) \
            and _is_global(b.buffer):
        return True
    if a.buffer != b.buffer or not (a.writes or b.writes) or is_private(a.buffer):
        return False
    return a.owner == ANY or a.owner != b.owner


# A memref.copy's unit attribute: the copy is an async work-group copy whose barriers
# this analysis placed (a gpu.barrier before it where an access pending there conflicts
# with it; none after it: its wait completes it for every work-item), so the emitter
# adds none of its own (emitter_opencl/memory.py).
COPY_BARRIERS_PLACED = "opencl.copy_barriers_placed"


def barriers_in_branches(config) -> bool:
    """Whether a barrier may go into one branch of a (uniform) `scf.if` alone: not on
    devices that mishandle such barriers (quirks one_sided_barrier_branch,
    barrier_in_uniform_branch: their fix-ups would cost more barriers than they save;
    barrier_in_fill_branch: Intel's compiler crashes on values kept across such
    barriers of partial tiles' fills followed by async copies)."""
    return not (config.has_quirk("one_sided_barrier_branch")
                or config.has_quirk("barrier_in_uniform_branch")
                or config.has_quirk("barrier_in_fill_branch"))


@dataclass
class _Branch:
    """The then-branch of an `scf.if` without an else branch that the scan went
    through: its op and the accesses pending at its end."""
    op: ir.Operation
    at_end: list


def _is_global(buffer: ir.Value) -> bool:
    return not is_local(buffer)


class _Barriers:
    def __init__(self, sharing: WorkGroupSharing, written: list, sink: bool):
        self.sharing = sharing
        self.written = written      # the global buffers the kernel writes
        self.sink = sink            # barriers may go into one branch (barriers_in_branches)
        self.branch_of = {}         # id of an access -> the _Branch it was made in

    def fence(self, barrier, pending: list) -> None:
        """Marks `barrier` local-only unless an access pending before it meets a later
        one through global memory: a global buffer the kernel writes."""
        global_shared = any(not is_local(p.buffer) and
                            (p.writes or p.orders or any(p.buffer == w for w in self.written))
                            for p in pending)
        attributes = op_of(barrier).attributes
        if global_shared:
            if LOCAL_FENCE in attributes:
                del attributes[LOCAL_FENCE]
        else:
            attributes[LOCAL_FENCE] = ir.UnitAttr.get()

    def scan(self, block: ir.Block, pending: list, insert: bool) -> list:
        """The accesses pending (since the last barrier) after `block`, given those
        pending before it; puts barriers where an op meets a conflicting access."""
        for op in list(block.operations):
            if op.operation.name == "gpu.barrier":
                if insert:
                    self.fence(op, pending)
                pending = []
                continue
            accesses, nested = self._accesses(op)
            if nested:
                pending = self._scan_nested(op, pending, insert)
                continue
            conflicting = [p for p in pending if any(_conflict(p, a) for a in accesses)]
            if conflicting:
                pending = self._synchronize(op, pending, conflicting, insert)
            if collective_copy(op):
                if insert:
                    op_of(op).attributes[COPY_BARRIERS_PLACED] = ir.UnitAttr.get()
                # The emitter waits for the async copy right after it: every
                # work-item leaves the wait with the copy complete, so its accesses
                # meet no later access (OpenCL C 6.12.10, wait_group_events).
                continue
            pending = pending + accesses
        return pending

    def _synchronize(self, op, pending: list, conflicting: list, insert: bool) -> list:
        """A barrier before `op`, which meets the `conflicting` accesses of `pending`;
        -> the accesses still pending after it. Where all of them were made in the
        then-branch of an earlier `scf.if` of `op`'s block that has no else branch (a
        tile's fill that only partial tiles run), the barrier goes to that branch's end:
        the work-groups that skip the branch skip the barrier too. The accesses made
        before the branch then stay pending."""
        branches = {id(self.branch_of.get(id(p))) for p in conflicting}
        branch = self.branch_of.get(id(conflicting[0]))
        if not self.sink or len(branches) != 1 or branch is None or \
                not _precedes(branch.op, op):
            if insert:
                with op.location, ir.InsertionPoint(op):
                    self.fence(gpu.barrier(), pending)
            return []
        if insert:
            then = op_of(branch.op).regions[0].blocks[0]
            with op.location, ir.InsertionPoint(_terminator(then)):
                self.fence(gpu.barrier(), branch.at_end)
        # at_end also holds what was pending before the branch: only the accesses the
        # branch made are synchronized by its barrier.
        made_there = {id(a) for a in branch.at_end if self.branch_of.get(id(a)) is branch}
        return [p for p in pending if id(p) not in made_there]

    def _scan_nested(self, op, pending: list, insert: bool) -> list:
        name = op.operation.name
        if name == "scf.if" and _has_else(op):
            joined = list(pending)
            for region in op.regions:
                for block in region.blocks:
                    joined += self.scan(block, list(pending), insert)
            return joined
        if name == "scf.if":
            at_end = self.scan(op.regions[0].blocks[0], list(pending), insert)
            before = {id(p) for p in pending}
            branch = _Branch(op_of(op), at_end)
            for access in at_end:
                if id(access) not in before:
                    self.branch_of[id(access)] = branch
            return list(pending) + [a for a in at_end if id(a) not in before]
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
            return plain_accesses(op, SINGLE), False
        if collective_copy(op):
            return [Access(_root(op.operands[0]), False, COLLECTIVE),
                    Access(_root(op.operands[1]), True, COLLECTIVE)], False
        if op.regions and self.sharing.shared(op):
            return [], True
        return plain_accesses(op, ANY), False

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
            elif inner.name in WRITES:
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
        if op.operation.name != "scf.if" or not has_barrier(op):
            continue
        if not op.regions[1].blocks:
            with op.location:
                op.regions[1].blocks.append()
                with ir.InsertionPoint(op.regions[1].blocks[0]):
                    scf.YieldOp([])
        for region in op.regions:
            branch = region.blocks[0]
            if not any(has_barrier(inner) for inner in branch.operations):
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
        if op.operation.name in ("scf.for", "scf.while") and has_barrier(op) and \
                _branch_since_barrier(op):
            with op.location, ir.InsertionPoint(op):
                gpu.barrier()


def _enter_uniform_loops_after_a_barrier(block: ir.Block) -> None:
    """Quirk uniform_loop_after_branch: a loop without barriers whose bounds are the
    same for every work-item (the rounds over a work-item's private accumulator,
    `for (j = 0; j < 8; ++j)`), when a branch on the work-item (a distributed loop, a
    guarded section) comes between the previous barrier and the loop, gets a barrier
    right before it. PoCL adds barriers of its own to such a loop (implicit loop
    barriers: it becomes a loop holding barriers) and then loses the work of the branch
    before it, as in quirk barrier_loop_after_branch: tutorial 06's float32 attention
    lost its l_i sums (tests/test_pocl_f32_attention_reduced.py). Only loops every
    work-item reaches get one: those in the kernel's entry block and in ops that hold
    barriers (uniform by construction); local fence: the barrier orders nothing the
    analysis has not ordered already."""
    for op in block.operations:
        if op.regions and has_barrier(op):
            for region in op.regions:
                for inner in region.blocks:
                    _enter_uniform_loops_after_a_barrier(inner)
    for op in list(block.operations):
        if _is_uniform_loop(op) and _work_item_branch_since_barrier(op):
            with op.location, ir.InsertionPoint(op):
                local_barrier()


def _is_uniform_loop(op) -> bool:
    """An `scf.for` without barriers whose bounds and step do not depend on the
    work-item."""
    return op.operation.name == "scf.for" and not has_barrier(op) and \
        not any(_depends_on_thread_id(bound) for bound in list(op.operands)[:3])


def _work_item_branch_since_barrier(loop) -> bool:
    """Whether an op holding a branch on the work-item comes between the last barrier
    of `loop`'s block (or the block's start) and `loop`."""
    return _since_last_barrier(loop, lambda op: bool(op.regions) and
                               holds(op, _branches_on_work_item))


def _branches_on_work_item(op) -> bool:
    """A loop whose bounds, or an `scf.if` whose condition, depend on the work-item."""
    if op.name == "scf.for":
        return any(_depends_on_thread_id(bound) for bound in list(op.operands)[:3])
    return op.name == "scf.if" and _depends_on_thread_id(op.operands[0])


def _isolate_register_blocks(block: ir.Block) -> None:
    """Quirk register_blocks_beside_private_loops: a distributed loop of register blocks (vector
    fmas: tl.dot's micro-kernel) gets a barrier right before and right after it where
    none stands there, so that it is the only work between two barriers. PoCL computes
    the blocks' sums wrong when loops over private arrays share that stretch
    (tests/test_pocl_register_blocks.py). The loop is distributed over the work-items,
    so every work-item reaches it; local fences: the barriers order nothing the
    analysis has not ordered already."""
    for op in block.operations:
        if not _is_register_block_loop(op):
            for region in op.regions:
                for inner in region.blocks:
                    _isolate_register_blocks(inner)
    for op in [op for op in block.operations if _is_register_block_loop(op)]:
        before, after = _neighbours(op)
        if before is None or before.name != "gpu.barrier":
            with op.location, ir.InsertionPoint(op):
                local_barrier()
        if after is not None and after.name != "gpu.barrier" and \
                after.name not in ("scf.yield", "func.return"):
            with op.location, ir.InsertionPoint(after):
                local_barrier()


def _is_register_block_loop(op) -> bool:
    """A loop distributed over the work-items (from `gpu.thread_id`) that holds vector
    fmas and no barrier."""
    if op.operation.name != "scf.for" or has_barrier(op) or \
            not _depends_on_thread_id(op.operands[0]):
        return False
    found = []

    def visit(inner):
        if inner.name == "math.fma" and isinstance(inner.results[0].type, ir.VectorType):
            found.append(inner)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    op_of(op).walk(visit)
    return bool(found)


def _depends_on_thread_id(value: ir.Value) -> bool:
    """Whether `value` is computed from `gpu.thread_id` by arith ops (a distributed
    loop's start: `lid * 1` before canonicalization)."""
    defining = value.owner
    if not isinstance(defining, (ir.OpView, ir.Operation)):
        return False
    if defining.name == "gpu.thread_id":
        return True
    return defining.name.startswith("arith.") and \
        any(_depends_on_thread_id(operand) for operand in defining.operands)


def _neighbours(op) -> tuple:
    """The ops right before and right after `op` in its block (None at either end)."""
    ops = list(op_of(op).block.operations)
    at = next(i for i, other in enumerate(ops) if op_of(other) == op_of(op))
    before = op_of(ops[at - 1]) if at > 0 else None
    after = op_of(ops[at + 1]) if at + 1 < len(ops) else None
    return before, after


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
        if op.operation.name in ("scf.for", "scf.while") and has_barrier(op) and \
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
        if op.operation.name == "scf.if" and has_barrier(op):
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
    return _since_last_barrier(loop, lambda op: op.operation.name == "scf.if")


def _since_last_barrier(loop, matches) -> bool:
    """Whether an op for which `matches` holds comes between the last barrier of
    `loop`'s block (or the block's start) and `loop`."""
    seen = False
    for op in op_of(loop).block.operations:
        if op_of(op) == op_of(loop):
            break
        if op.operation.name == "gpu.barrier":
            seen = False
        elif matches(op):
            seen = True
    return seen


def has_barrier(op) -> bool:
    """Whether `op` is a `gpu.barrier` or holds one."""
    return holds(op, lambda inner: inner.name == "gpu.barrier")


def _has_else(op) -> bool:
    """Whether an `scf.if` has an else branch doing more than yield."""
    blocks = op.regions[1].blocks
    return len(blocks) > 0 and len(list(blocks[0].operations)) > 1


def _terminator(block: ir.Block):
    return list(block.operations)[-1]


def _precedes(first: ir.Operation, op) -> bool:
    """Whether `first` comes before `op` in `op`'s block."""
    for other in op_of(op).block.operations:
        if op_of(other) == op_of(op):
            return False
        if op_of(other) == first:
            return True
    return False


def _position(indices: list, iv: ir.Value):
    for i, index in enumerate(indices):
        if index == iv:
            return i
    return None
