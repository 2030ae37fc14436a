"""GPU-shaped reductions on devices with sub-group functions.

Where the target has OpenCL C's sub-group functions (`TargetDescription.
sub_group_functions`), a serial reduction loop (`for i: acc = acc <op> f(view[i])`)
whose combiner has a collective (work_group_collectives.has_collective: sums, minima,
maxima) is reduced as a GPU kernel written by hand reduces it: within each sub-group by
the hardware, then across the few sub-groups through `__local` memory, one barrier:

    %partial = scf.for %i = lb + lid * step to %ub step (step * W) iter_args(identity)
    %sub_total = gpu.subgroup_reduce <kind> %partial uniform
    scf.if lane_id == 0 { sub_totals[subgroup_id] = %sub_total }
    gpu.barrier
    scf.if lid == 0 {                             // a single-work-item section
      %total = fold of sub_totals[0 .. num_subgroups)
      acc = acc <op> %total
    }

which the emitter prints with `sub_group_reduce_add/min/max`, `get_sub_group_id()`,
`get_sub_group_local_id()` and `get_num_sub_groups()`: nothing in it depends on the
sub-group size the device's compiler picks, only the `__local` tile's length
(work-items / the smallest sub-group size the device reports). Float minima and maxima
reduce as ordered integers within the sub-groups, exactly as the work-group collectives
do (work_group_collectives.reduce_across); the last fold uses the combiner itself.
The SPIR-V stage makes the same module into OpGroup* instructions of sub-group scope
(capability Groups) and the SubgroupId / SubgroupLocalInvocationId / NumSubgroups
built-ins.
"""
from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu, memref, scf

from ..ir_helpers import named
from .work_group_collectives import fold_per_work_item, identity, reduce_across


@dataclass
class SubGroupReduction:
    """The ops that replaced a serial reduction loop."""
    fold: object        # the work-item's scf.for over its elements
    publish: object     # `scf.if lane == 0` writing the sub-group's total to `__local`
    final: object       # `scf.if lid == 0` folding the sub-groups' totals into acc


def reduce_by_sub_groups(match, lid: ir.Value, work_items: int,
                         min_sub_group_size: int) -> SubGroupReduction:
    """Rewrites `match` (work_group_sharing.SerialReduction, whose combiner
    has_collective) as above; erases its loop."""
    loop, combiner = match.loop, match.combiner
    element_type = combiner.results[0].type
    index = ir.IndexType.get()
    slots = -(-work_items // max(1, min_sub_group_size))
    with loop.location, ir.InsertionPoint(loop):
        fold = fold_per_work_item(match, lid, work_items)
        sub_total = reduce_across(combiner, fold.results[0], _sub_group_reduce, "sub_group")
        sub_totals = memref.alloc(ir.MemRefType.get([slots], element_type), [], [])
        with named("lane", loop.location):
            lane = gpu.lane_id()
        is_leader = arith.cmpi(arith.CmpIPredicate.eq, lane, arith.constant(index, 0))
        publish = scf.IfOp(is_leader)
        with ir.InsertionPoint(publish.then_block):
            with named("sub_group", loop.location):
                sub_group = gpu.subgroup_id()
            memref.store(sub_total, sub_totals, [sub_group])
            scf.YieldOp([])
        gpu.barrier()
        is_first = arith.cmpi(arith.CmpIPredicate.eq, lid, arith.constant(index, 0))
        final = scf.IfOp(is_first)
        with ir.InsertionPoint(final.then_block):
            with named("sub_groups", loop.location):
                count = gpu.num_subgroups()
            over = scf.ForOp(arith.constant(index, 0), count, arith.constant(index, 1),
                             [identity(combiner, element_type)])
            with ir.InsertionPoint(over.body):
                theirs = memref.load(sub_totals, [over.induction_variable])
                scf.YieldOp([match.clone_combiner(over.inner_iter_args[0], theirs)])
            old = match.load_accumulator()
            match.store_accumulator(match.clone_combiner(old, over.results[0]))
            scf.YieldOp([])
    loop.operation.erase()
    return SubGroupReduction(fold, publish, final)


def _sub_group_reduce(value: ir.Value, kind) -> ir.Value:
    return gpu.subgroup_reduce(value, kind, uniform=True)
