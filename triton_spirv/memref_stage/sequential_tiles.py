"""GPU-shaped kernels: tiles of ops that run one after the other share their memory.

Every `memref.alloc` becomes a `__local` array at kernel scope, live for the whole
kernel. Kernels with several stages -- the causal fused attention runs one loop over
the blocks left of the diagonal and one over the diagonal block, each with its own
k, v, qk and p tiles -- would need the tiles of all stages at once, although a stage's
tiles are dead once it ends. Here, in the kernel's top-level ops, a tile whose uses all
come after the last use of an earlier tile of the same type takes over that tile's
memory (first use order, greedily). Inside a loop body the same holds for tiles used
only in the body whose first use in each iteration overwrites the whole tile (the
partial rows of attention's max and its sum).

It runs among the work-group sharing passes (passes.py) after the tiles that stay `__local` are known
(private tiles are work-items' own arrays), before single-work-item sections are
guarded (a tile's first use is still the op itself) and before the barrier analysis, which then
sees one buffer and puts a barrier where the later stage's first write meets the
earlier stage's last accesses by other work-items.
"""
from __future__ import annotations

from mlir import ir

from .affine_nests import VIEW_OPS, nested_ops, op_of
from .work_group_sharing import WorkGroupSharing, entry_block, functions


def share_sequential_tiles(entry: ir.Block, keep=()) -> int:
    """Merges tiles with disjoint lifetimes among the top-level ops of `entry` (a
    kernel's body) and of every loop body in it, except the buffers of `keep`; returns
    how many tiles were folded into others."""
    tiles = [op for op in nested_ops(entry)
             if op.operation.name == "memref.alloc" and not len(op.operands) and
             op.results[0] not in keep]
    merged = []
    # Loop bodies first, inner ones before outer ones (a tile shared across two loops
    # is no longer used inside one), then the kernel's top level.
    for loop in reversed(nested_ops(entry)):
        if loop.operation.name == "scf.for":
            body = loop.regions[0].blocks[0]
            # A tile whose first use in each iteration overwrites all of it carries
            # nothing from one iteration to the next. Only allocs at the kernel's top
            # level (hoisted) or the body's: a kept one must precede the uses it takes.
            here = [t for t in _live(tiles, merged) if op_of(t).block in (entry, body)]
            merged += _share_in(body, here,
                                lambda span, body=body: _overwritten_first(span, body))
    merged += _share_in(entry, [t for t in _live(tiles, merged) if op_of(t).block == entry],
                        lambda _span: True)
    return len(merged)


def _live(tiles: list, merged: list) -> list:
    return [t for t in tiles if not any(t is m for m in merged)]


def _share_in(block: ir.Block, allocs: list, may_share) -> list:
    """Merges the tiles of `allocs` used only inside `block` (and allowed by
    `may_share`) whose spans there do not overlap; returns the allocs folded away."""
    positions = {op_of(op): k for k, op in enumerate(block.operations)}
    spans = []      # [first, last, alloc] of each tile used only inside `block`
    for alloc in allocs:
        span = _span(alloc, block, positions)
        if span is not None and may_share([*span, alloc]):
            spans.append([*span, alloc])
    spans.sort(key=lambda s: s[0])
    kept, merged = [], []
    for span in spans:
        first, last, alloc = span
        donor = next((k for k in kept if k[1] < first and
                      k[2].results[0].type == alloc.results[0].type), None)
        if donor is None:
            kept.append(span)
            continue
        alloc.results[0].replace_all_uses_with(donor[2].results[0])
        merged.append(alloc)
        alloc.operation.erase()
        donor[1] = last
    return merged


def _overwritten_first(span: list, body: ir.Block) -> bool:
    """The first op of `body` using the tile copies a whole tile into it."""
    first = list(body.operations)[span[0]]
    tile = span[2].results[0]
    return first.operation.name == "memref.copy" and first.operands[1] == tile and \
        first.operands[0] != tile and \
        sum(1 for use in tile.uses if op_of(use.owner) == op_of(first)) == 1



def _span(alloc, entry: ir.Block, positions: dict):
    """(first, last) positions in `entry` of the top-level ops using `alloc`'s tile
    (directly or through views), or None for a tile without uses or with uses
    outside `entry`."""
    found = []
    pending = [alloc.results[0]]
    while pending:
        for use in pending.pop().uses:
            top = _top_level(use.owner, entry)
            if top is None:
                return None
            found.append(positions[op_of(top)])
            if use.owner.name in VIEW_OPS:
                pending.append(use.owner.results[0])
    return (min(found), max(found)) if found else None


def _top_level(op, entry: ir.Block):
    """The op of `entry` that is or holds `op`."""
    op = op_of(op)
    while op is not None and op.name != "func.func":
        if op.block == entry:
            return op
        op = op.parent
    return None


def share_sequential_tiles_of_functions(module: ir.Module, _config, analyses: dict) -> None:
    """Tiles with disjoint lifetimes share memory (sequential_tiles.py); before the
    barriers, which then see the shared buffers; tree reductions keep theirs (their
    accesses are recorded in `partitioned`)."""
    for func in functions(module):
        sharing = analyses.get((WorkGroupSharing, op_of(func)))
        keep = sharing.partitioned_buffers() if sharing is not None else ()
        share_sequential_tiles(entry_block(func), keep=keep)
