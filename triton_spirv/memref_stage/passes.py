"""The memref stage's passes: one registry, written once, read by the pipeline
(pipeline.py), the FileCheck tests (tests/test_filecheck.py) and `MLIR_ENABLE_DUMP`.

A `Pass` is one concern: its `name` (kebab-case, as upstream MLIR names passes and as
the FileCheck tests' `// PASS:` lines and the IR dumps show it), `run(module, config,
analyses)`, and `applies(config)`: whether the pipeline runs it for a target's
`PipelineConfig` (GPU shape or CPU shape, the target's options and quirks). Upstream
MLIR passes are entries too (`run` is a pass manager over their pipeline text), so
the list below is the whole pipeline in order.

`analyses` is a dict one pipeline run shares among its passes, for what a rewrite
learns that a later one needs and the IR does not say: the work-group sharing passes
(GPU shape) record there, per function, which loops they distributed and which ops run
as partitions of a reduction (`WorkGroupSharing`, work_group_sharing.py): the
privatization, single-work-item and barrier passes read that, and rebuilding it from
the IR would mean matching the distributed loops' form again. Every other pass reads
only the IR.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from mlir import ir, passmanager

from .barrier_negations import negate_by_fma
from .block_ownership import align_to_blocks
from .branch_barrier_splitting import split_barrier_branches
from .copy_lowering import lower_copies_once
from .branch_tiles import share_branch_tiles
from .byte_accumulators import widen_byte_accumulators
from .elementwise_vectors import vectorize_elementwise, vectorize_elementwise_per_work_item
from .fill_forwarding import forward_fills
from .in_place_updates import update_in_place
from .integer_abs import wrap_integer_abs
from .local_padding import pad_local_tiles
from .owner_copies import copy_by_owners
from .private_row_fusion import fuse_private_rows
from .uniform_full_rows import version_full_rows
from .program_loops import loop_programs
from .register_blocking import block_contractions, block_contractions_exactly
from .stream_forwarding import forward_streams
from .streaming_stores import stream_stores
from .unoptimized_builds import mark_unoptimized_builds
from .sequential_tiles import share_sequential_tiles_of_functions
from .single_work_item import guard_single_sections
from .work_group_barriers import (balance_barriers, barrier_after_loops, barrier_before_loops,
                                  barrier_before_uniform_loops, double_barriers_in_branches,
                                  insert_barriers, isolate_register_blocks)
from .work_group_distribution import (convert_copies_to_loops, count_distributed_rounds,
                                      distribute_atomics, distribute_parallel_loops,
                                      split_columns, split_rows)
from .work_group_privatization import privatize_tiles
from .work_group_reductions import reduce_on_work_group
from .work_group_scans import scan_on_work_group
from .work_group_sharing import set_local_size


@dataclass(frozen=True)
class PipelineConfig:
    """What the memref stage's passes know of the target, fixed for one kernel.

    `work_items` > 1: the GPU shape, the work-items of a work-group share each program
    (reducing through work-group collective functions with `collectives`, through
    sub-group functions where `sub_groups`, in sub-groups of at least
    `min_sub_group_size` work-items);
    `program_loops` (CPU shape) a work-group runs consecutive programs of kernels that
    allow it (program_loops.py); `streaming_stores` (CPU shape) large launches write
    results they never read with non-temporal stores (streaming_stores.py); `quirks`:
    the target's device quirks (triton_spirv/target.py) the GPU shape works around;
    `local_mem_bytes`: the target's local memory, which padded tiles must still fit
    (local_padding.py); `bounds_check`: the kernel is bounds-checked (launcher/bounds.py),
    so copies keep element accesses, which the emitter checks one by one
    (copy_lowering.py)."""
    work_items: int = 1
    program_loops: bool = False
    streaming_stores: bool = False
    collectives: bool = False
    sub_groups: bool = False
    min_sub_group_size: int = 1
    quirks: tuple[str, ...] = ()
    local_mem_bytes: int | None = None
    bounds_check: bool = False

    @classmethod
    def for_target(cls, target, work_items: int, program_loops: bool = True,
                   streaming_stores: bool = True, collectives: bool = True,
                   bounds_check: bool = False) -> "PipelineConfig":
        """The config for a target description (triton_spirv/target.py) and a work-group
        of `work_items`; the flags are the kernel's options, each taken where the target
        supports it."""
        return cls(work_items=work_items,
                   program_loops=program_loops and target.loops_programs,
                   streaming_stores=streaming_stores and target.is_cpu,
                   collectives=collectives and bool(target.work_group_collectives),
                   sub_groups=collectives and bool(target.sub_group_functions),
                   min_sub_group_size=min(target.sub_group_sizes, default=1),
                   quirks=tuple(target.quirks), local_mem_bytes=target.local_mem_bytes,
                   bounds_check=bounds_check)

    @property
    def shares_work_group(self) -> bool:
        """The GPU shape: several work-items run each program."""
        return self.work_items > 1

    def has_quirk(self, name: str) -> bool:
        return name in self.quirks


# One work-item per program, no options: the HLO frontend's config and the default.
CPU_SHAPE = PipelineConfig()


def _always(_config: PipelineConfig) -> bool:
    return True


def _gpu_shape(config: PipelineConfig) -> bool:
    return config.shares_work_group


def _cpu_shape(config: PipelineConfig) -> bool:
    return not config.shares_work_group


def _gpu_quirk(name: str) -> Callable[[PipelineConfig], bool]:
    def applies(config: PipelineConfig) -> bool:
        return config.shares_work_group and config.has_quirk(name)
    return applies


@dataclass(frozen=True)
class Pass:
    """One step of the memref stage. `upstream`: the pipeline text of an upstream MLIR
    pass (run by a pass manager; consecutive ones run as one pipeline unless the IR is
    dumped after each)."""
    name: str
    run: Callable[[ir.Module, PipelineConfig, dict], object]
    applies: Callable[[PipelineConfig], bool] = _always
    upstream: str | None = None


def upstream(text: str, applies: Callable[[PipelineConfig], bool] = _always) -> Pass:
    """An upstream MLIR pass by its pipeline text (which is also its name)."""
    def run(module: ir.Module, _config: PipelineConfig, _analyses: dict) -> None:
        run_upstream(module, (text,))
    return Pass(text, run, applies, upstream=text)


def _module_rewrite(rewrite: Callable[[ir.Module], object]):
    """A rewrite that needs only the module."""
    def run(module: ir.Module, _config: PipelineConfig, _analyses: dict) -> object:
        return rewrite(module)
    run.__doc__ = rewrite.__doc__
    return run


def _register_blocking(module: ir.Module, config: PipelineConfig, _analyses: dict) -> int:
    """Register blocking of contraction nests (register_blocking.py); on the GPU shape
    work-items share the blocks: blocks that divide the extents, one loop, at least one
    block per work-item where the tile allows it."""
    if config.shares_work_group:
        return block_contractions_exactly(module, config.work_items)
    return block_contractions(module)


def _elementwise_vectors(module: ir.Module, config: PipelineConfig, _analyses: dict) -> int:
    """Vectors for elementwise loops (elementwise_vectors.py): a float16 row for one
    work-item, one float4 per work-item and iteration on the GPU shape."""
    if config.shares_work_group:
        return vectorize_elementwise_per_work_item(module)
    return vectorize_elementwise(module)


def _copy_lowering(module: ir.Module, config: PipelineConfig, _analyses: dict) -> int:
    """Every copy in its one form for all printers (copy_lowering.py): rows in vectors
    (not in bounds-checked kernels), marked work-group async copies, copies shared by a
    group's work-items, element loops; under the quirk register_blocks_for_every_work_item
    (GPU shape), short rows between private arrays unrolled."""
    return lower_copies_once(
        module, config.bounds_check,
        unroll_private_rows=_gpu_quirk("register_blocks_for_every_work_item")(config))


def _local_padding(module: ir.Module, config: PipelineConfig, _analyses: dict) -> int:
    return pad_local_tiles(module, config.local_mem_bytes)


# The work-group sharing of the GPU shape (work_group_sharing.py's docstring: the
# distribution, the single-work-item sections, the barriers), one pass per step, in
# the order their analyses need: the distribution first (the loops it leaves are what
# the rest reads), reductions and scans only outside the distributed loops, private
# arrays before the rounds are counted (a loop indexing one counts them), sequential
# tiles before the guards (a tile's first use is still the op itself), the barriers
# once every owner is known, the quirks' barrier fix-ups after them.
WORK_GROUP_SHARING = (
    Pass("converting-copies", convert_copies_to_loops, _gpu_shape),
    Pass("work-group-columns", split_columns, _gpu_shape),
    Pass("work-group-rows", split_rows, _gpu_shape),
    Pass("work-group-distribution", distribute_parallel_loops, _gpu_shape),
    Pass("work-group-atomics", distribute_atomics, _gpu_shape),
    Pass("work-group-reductions", reduce_on_work_group, _gpu_shape),
    Pass("work-group-scans", scan_on_work_group, _gpu_shape),
    Pass("work-group-privatization", privatize_tiles, _gpu_shape),
    Pass("work-group-rounds", count_distributed_rounds, _gpu_shape),
    Pass("sequential-tiles", share_sequential_tiles_of_functions, _gpu_shape),
    Pass("single-work-item", guard_single_sections, _gpu_shape),
    Pass("work-group-barriers", insert_barriers, _gpu_shape),
    Pass("register-block-barriers", isolate_register_blocks,
         _gpu_quirk("register_blocks_beside_private_loops")),
    Pass("balance-barriers", balance_barriers, _gpu_quirk("one_sided_barrier_branch")),
    Pass("barrier-before-loops", barrier_before_loops,
         _gpu_quirk("barrier_loop_after_branch")),
    Pass("barrier-before-uniform-loops", barrier_before_uniform_loops,
         _gpu_quirk("uniform_loop_after_branch")),
    Pass("barrier-after-loops", barrier_after_loops,
         _gpu_quirk("branch_after_barrier_loop")),
    Pass("work-group-size", set_local_size, _gpu_shape),
)

# Order matters:
# - a quirk's widened byte reductions (byte_accumulators.py), on tensors, so that
#   bufferization makes their accumulators i32 buffers;
# - fuse elementwise producers into consumers while still on tensors, so one loop nest
#   computes a whole chain of elementwise TTIR ops; named ops (tt.dot's linalg.contract,
#   transposes) are generalized only afterwards, so nothing is fused into a contraction,
#   where it would be recomputed for every element of the other operand;
# - one-shot bufferization turns tensors into memref.alloc buffers (the `__local` tiles);
# - linalg ops become affine loops, allocs inside loops are hoisted to kernel scope
#   (OpenCL requires `__local` arrays at kernel scope);
# - our rewrites of affine loops with analyzable accesses (register blocking, stream
#   forwarding, elementwise vectors: upstream's affine-super-vectorize failed on the
#   softmax module when tried);
# - GPU shape: provably parallel loops become scf.parallel, perfectly nested ones merge
#   into one (canonicalize), copies out of constant-filled tiles become fills, loop-carried
#   tiles are updated in place, the loops over a register-blocked accumulator step by
#   its blocks, the copies into and out of tiles that only their owners access run on
#   their owners (after block ownership, whose steps make a tile's loops agree), and the
#   work-group sharing steps distribute the loops over the work-items;
# - affine lowers to scf/arith; then the rewrites of scf loops: a quirk's doubled
#   barriers (after the canonicalize that would undo them), streaming stores (CPU shape;
#   lower-affine's vector.store has no nontemporal flag to keep), branch tiles, local
#   padding (GPU shape: __local tiles read along their columns get rows padded off the
#   same bank), private row fusion (GPU shape: a work-item's loops over its private
#   rows become one, after every pass that matches them one by one), that loop's
#   version for full tiles (uniform full rows) and program loops (CPU shape);
# - last, every copy in its one form (copy lowering): after every rewrite that matches
#   copies, and after program loops, whose loop makes no copy divergent.
PASSES = (
    upstream("canonicalize"),
    upstream("cse"),
    Pass("byte-accumulators", _module_rewrite(widen_byte_accumulators),
         lambda config: config.has_quirk("byte_accumulators_in_loops")),
    upstream("linalg-fuse-elementwise-ops"),
    upstream("linalg-generalize-named-ops"),
    upstream("canonicalize"),
    upstream("one-shot-bufferize{bufferize-function-boundaries=false}"),
    upstream("canonicalize"),
    upstream("cse"),
    upstream("func.func(convert-linalg-to-affine-loops)"),
    upstream("func.func(buffer-loop-hoisting)"),
    Pass("register-blocking", _register_blocking),
    # Full tiles straight from global memory, versioned on `if (full tiles)`, are for
    # one work-item's loops: work-items that share a program read its tiles through
    # __local memory, shared by their copies.
    Pass("stream-forwarding", _module_rewrite(forward_streams), _cpu_shape),
    Pass("elementwise-vectors", _elementwise_vectors),
    upstream("func.func(affine-parallelize)", _gpu_shape),
    upstream("lower-affine", _gpu_shape),
    upstream("canonicalize", _gpu_shape),
    Pass("fill-forwarding", _module_rewrite(forward_fills), _gpu_shape),
    Pass("in-place-updates", _module_rewrite(update_in_place), _gpu_shape),
    Pass("block-ownership", _module_rewrite(align_to_blocks), _gpu_shape),
    Pass("owner-copies", _module_rewrite(copy_by_owners), _gpu_shape),
    *WORK_GROUP_SHARING,
    upstream("lower-affine"),
    upstream("canonicalize"),
    upstream("cse"),
    Pass("branch-barrier-splitting", _module_rewrite(split_barrier_branches),
         _gpu_quirk("barrier_in_uniform_branch")),
    Pass("double-barriers", _module_rewrite(double_barriers_in_branches),
         _gpu_quirk("barrier_in_uniform_branch")),
    Pass("streaming-stores", _module_rewrite(stream_stores),
         lambda config: config.streaming_stores and not config.shares_work_group),
    Pass("branch-tiles", _module_rewrite(share_branch_tiles)),
    Pass("local-padding", _local_padding, _gpu_shape),
    Pass("private-row-fusion", _module_rewrite(fuse_private_rows), _gpu_shape),
    upstream("cse", _gpu_shape),
    Pass("uniform-full-rows", _module_rewrite(version_full_rows), _gpu_shape),
    Pass("barrier-negations", _module_rewrite(negate_by_fma),
         lambda config: config.has_quirk("fneg_across_barrier")),
    Pass("wrapping-integer-abs", _module_rewrite(wrap_integer_abs),
         lambda config: config.has_quirk("abs_of_int_min_poison")),
    Pass("program-loops", _module_rewrite(loop_programs),
         lambda config: config.program_loops and not config.shares_work_group),
    Pass("unoptimized-builds", _module_rewrite(mark_unoptimized_builds),
         lambda config: config.has_quirk("not_then_integer_max")),
    Pass("copy-lowering", _copy_lowering),
)

# Names that stand for several passes, run in order (the FileCheck tests' `// PASS:`).
PASS_GROUPS = {
    "work-group-sharing": tuple(p.name for p in WORK_GROUP_SHARING),
}


def registered(name: str) -> Pass:
    """The pass named `name` (the first of that name: upstream ones repeat)."""
    for one in PASSES:
        if one.name == name:
            return one
    known = ", ".join(sorted({p.name for p in PASSES} | set(PASS_GROUPS)))
    raise KeyError(f"no memref-stage pass named {name!r} (known: {known})")


def expand(names, config: PipelineConfig) -> list[Pass]:
    """The passes a list of names stands for, in order: a pass named alone runs
    whatever `config`; a group's passes run where they apply to it."""
    found = []
    for name in names:
        if name in PASS_GROUPS:
            found += [p for p in map(registered, PASS_GROUPS[name]) if p.applies(config)]
        else:
            found.append(registered(name))
    return found


class PipelineError(Exception):
    """An upstream pass failed on a frontend's Linalg module (a frontend bug), or one of
    ours produced invalid IR."""


def run_upstream(module: ir.Module, texts: tuple[str, ...]) -> None:
    """Runs upstream passes, given by their pipeline texts, as one pipeline."""
    pm = passmanager.PassManager.parse("builtin.module(" + ",".join(texts) + ")")
    try:
        pm.run(module.operation)
    except ir.MLIRError as err:
        raise PipelineError(f"Linalg -> memref pipeline failed: {err}") from None


def verify(module: ir.Module, name: str) -> None:
    try:
        module.operation.verify()
    except ir.MLIRError as err:
        raise PipelineError(f"{name} produced invalid IR: {err}") from None

