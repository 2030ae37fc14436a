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

The steps are passes of the registry (passes.py: `WORK_GROUP_SHARING`), one module
per job: distribution and round counting (work_group_distribution.py), private
arrays (work_group_privatization.py), reductions (work_group_reductions.py, with
work_group_collectives.py; scans: work_group_scans.py), single-work-item sections
(single_work_item.py) and barriers with the quirks' barrier fix-ups
(work_group_barriers.py). This module holds what they share: the state of one
function's sharing (`WorkGroupSharing`, handed from pass to pass), the accesses the
barrier analysis reasons about (`Access`) and the predicates on buffers and ops.

Everything stays upstream scf/memref/gpu IR; the emitter prints `get_local_id(0)` and
`barrier(...)`, and `opencl.local_size` gives `reqd_work_group_size` and the launcher's
local size.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import gpu

from ..ir_helpers import root_buffer as _root
from .affine_nests import memory_access as _memory_access
from .affine_nests import op_of, owner


# Triton counts num_warps in warps of 32 lanes (its threads_per_warp).
WARP_LANES = 32


# Unit attribute of the `scf.if lid == 0` of a single-work-item section: later stages
# (the SPIR-V stage's copies, spirv/flatten.py) read from it that only work-item 0 runs
# the region, while every other branch of the kernel is taken by all work-items alike.
SINGLE_WORK_ITEM = "opencl.single_work_item"
# A gpu.barrier's unit attribute (work_group_barriers.py): only `__local` memory is
# shared across it, so it fences `__local` memory alone (emitter_opencl/memory.py).
LOCAL_FENCE = "opencl.local_fence"


def local_barrier():
    """A gpu.barrier at the insertion point that fences `__local` memory alone: for
    steps that share only `__local` arrays (a tree's or a scan's partials)."""
    barrier = gpu.barrier()
    barrier.attributes[LOCAL_FENCE] = ir.UnitAttr.get()
    return barrier


WRITES = ("memref.store", "vector.store", "vector.transfer_write", "memref.copy",
           "memref.atomic_rmw", "memref.generic_atomic_rmw", "gpu.printf")


READS = ("memref.load", "vector.load", "vector.transfer_read")


ATOMICS = ("memref.atomic_rmw", "memref.generic_atomic_rmw")


def work_group_size(target, num_warps: int) -> int:
    """Work-items per Triton program: one per work-item on CPU targets, else
    `num_warps` warps of 32 lanes within the target's work-group limit (a multiple of
    its preferred multiple where that is smaller)."""
    if target.is_cpu:
        return 1
    size = min(max(1, num_warps) * WARP_LANES, target.max_work_group_size)
    multiple = max(1, target.preferred_work_group_multiple)
    return max(multiple, size - size % multiple) if size >= multiple else size


def functions(module: ir.Module) -> list:
    """The module's functions with a body."""
    return [func for func in module.body.operations
            if func.operation.name == "func.func" and func.regions[0].blocks]


def entry_block(func) -> ir.Block:
    return func.regions[0].blocks[0]


def sharing_of(func, config, analyses: dict) -> "WorkGroupSharing":
    """The sharing state of `func` in this pipeline run's `analyses`, made by the first
    pass that asks: the work-item id (`gpu.thread_id x`) at the function's start."""
    key = (WorkGroupSharing, op_of(func))
    found = analyses.get(key)
    if found is None:
        with ir.Location.unknown(), ir.InsertionPoint.at_block_begin(entry_block(func)):
            lid = gpu.thread_id(gpu.Dimension.x)
        found = analyses[key] = WorkGroupSharing(
            lid, config.work_items, chunked=config.has_quirk("chunked_distribution"))
    return found


def set_local_size(module: ir.Module, config, _analyses: dict) -> None:
    """`opencl.local_size`: the emitter's `reqd_work_group_size` and the launcher's
    local size."""
    for func in functions(module):
        func.attributes["opencl.local_size"] = ir.DenseI64ArrayAttr.get(
            [config.work_items, 1, 1])


@dataclass(frozen=True)
class Distribution:
    """One distributed loop space: equal keys give each work-item the same iterations."""
    key: tuple        # ((lb, ub, step) per dimension, chunk), bounds as _bound_key
    ivs: tuple        # the iteration-space coordinates (Values) inside the loop body
    owned: ir.Value   # which of the work-item's own iterations this is: 0, 1, 2, ...


@dataclass(frozen=True)
class Rounds:
    """How a distributed loop `for base = start; base < total; base += per_round`
    strides: `round` is `(base - start) / per_round`, computed in its body."""
    start: ir.Value
    total: ir.Value
    per_round: int
    round: ir.Value


class WorkGroupSharing:
    """What the work-group sharing passes of one function learn and later ones read:
    the work-item id `lid`, the distributed loops (`distributed`: op -> Distribution;
    `iterations`, `rounds`), the single-work-item sections (`single`) and the ops of
    reductions and scans that hold their own barriers, with their accesses as the
    barrier analysis sees them (`partitioned`). The IR does not say these (a
    distributed loop is an scf.for like others), so the passes hand this object along
    (passes.py: `analyses`) instead of matching the loops' form again."""

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
        self.rounds: dict = {}          # distributed loop -> Rounds

    def distributed_loop_of(self, op):
        parent = op_of(op).parent
        while parent is not None:
            if op_of(parent) in self.distributed:
                return op_of(parent)
            parent = parent.parent if hasattr(parent, "parent") else None
        return None

    def partitioned_buffers(self) -> list:
        """The buffers the ops of tree reductions touch."""
        found = []

        def visit(inner):
            found.extend(_root(v) for v in inner.operands if isinstance(v.type, ir.MemRefType))
            return ir.WalkResult.ADVANCE
        for op in self.partitioned:
            op_of(op).walk(visit)
        return found

    def shared(self, op) -> bool:
        """Distributed loops, collective copies, or ops holding them."""
        if op_of(op) in self.distributed or op_of(op) in self.partitioned or collective_copy(op):
            return True
        return any(self.shared(inner) for region in op.regions
                   for block in region.blocks for inner in block.operations)

    def record_single_section(self, guard) -> None:
        """Records `guard` (an `scf.if lid == 0`) as a section work-item 0 runs alone,
        and marks it so for later stages."""
        guard.operation.attributes[SINGLE_WORK_ITEM] = ir.UnitAttr.get()
        self.single.append(op_of(guard))


def is_local(value: ir.Value) -> bool:
    defining = owner(_root(value))
    return defining is not None and defining.name in ("memref.alloc", "memref.alloca")


def is_private(buffer: ir.Value) -> bool:
    defining = owner(buffer)
    return defining is not None and defining.name == "memref.alloca"


def collective_copy(op) -> bool:
    """A global <-> local memref.copy that the emitter prints as async work-group copies
    every work-item calls (emitter_opencl/memory.py: plain element types, unit stride
    on the local side); other copies are loops."""
    if op.operation.name != "memref.copy":
        return False
    source, target = op.operands[0], op.operands[1]
    if is_local(source) == is_local(target):
        return False
    element = ir.MemRefType(source.type).element_type
    if isinstance(element, (ir.F16Type, ir.BF16Type)) or str(element).startswith("f8"):
        return False
    local = ir.MemRefType((target if is_local(target) else source).type)
    if local.rank == 0:
        return False
    strides, _offset = local.get_strides_and_offset()
    return strides[-1] == 1


ACCESS_OPS = ("memref.load", "vector.load", "memref.store", "vector.store")


def vector_width(op) -> int:
    """Elements a load or store touches along the last dimension."""
    value = op.results[0] if op.name in ("memref.load", "vector.load") else op.operands[0]
    return ir.VectorType(value.type).shape[-1] if isinstance(value.type, ir.VectorType) else 1


def iv(loop) -> ir.Value:
    return loop.regions[0].blocks[0].arguments[0]


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


def plain_accesses(op, who: tuple) -> list:
    """Every memref an op (and its regions) reads or writes, owned by `who`."""
    found = []

    def visit(inner):
        access = _memory_access(inner)
        if access is not None:
            found.append(Access(_root(access[0]), access[2], who))
        elif inner.name in WRITES or inner.name in READS:
            memrefs = [v for v in inner.operands if isinstance(v.type, ir.MemRefType)]
            for i, v in enumerate(memrefs):
                writes = inner.name in WRITES and (inner.name != "memref.copy" or i == 1)
                found.append(Access(_root(v), writes, who, orders=inner.name in ATOMICS))
        return ir.WalkResult.ADVANCE
    op_of(op).walk(visit)
    return found
