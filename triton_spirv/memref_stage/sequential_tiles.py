"""GPU-shaped kernels: tiles of ops that run one after the other share their memory.

Every `memref.alloc` becomes a `__local` array at kernel scope, live for the whole
kernel. Kernels with several stages -- the causal fused attention runs one loop over
the blocks left of the diagonal and one over the diagonal block, each with its own
k, v, qk and p tiles -- would need the tiles of all stages at once, although a stage's
tiles are dead once it ends. Here, in the kernel's top-level ops, a tile whose uses all
come after the last use of an earlier tile of the same type takes over that tile's
memory (first use order, greedily).

It runs inside work_group_sharing.py after the tiles that stay `__local` are known
(private tiles are work-items' own arrays) and before its barrier analysis, which then
sees one buffer and puts a barrier where the later stage's first write meets the
earlier stage's last accesses by other work-items.
"""
from __future__ import annotations

from mlir import ir

from .affine_nests import VIEW_OPS, op_of


def share_sequential_tiles(entry: ir.Block) -> int:
    """Merges tiles of `entry` (a kernel's body) with disjoint top-level lifetimes;
    returns how many tiles were folded into others."""
    positions = {op_of(op): k for k, op in enumerate(entry.operations)}
    spans = []      # [first, last, alloc] of each tile of the entry block
    for op in entry.operations:
        if op.operation.name != "memref.alloc" or len(op.operands):
            continue
        span = _span(op, entry, positions)
        if span is not None:
            spans.append([*span, op])
    spans.sort(key=lambda s: s[0])
    kept, merged = [], 0
    for span in spans:
        first, last, alloc = span
        donor = next((k for k in kept if k[1] < first and
                      k[2].results[0].type == alloc.results[0].type), None)
        if donor is None:
            kept.append(span)
            continue
        alloc.results[0].replace_all_uses_with(donor[2].results[0])
        alloc.operation.erase()
        donor[1] = last
        merged += 1
    return merged


def _span(alloc, entry: ir.Block, positions: dict):
    """(first, last) positions in `entry` of the top-level ops using `alloc`'s tile
    (directly or through views), or None for a tile without uses."""
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
    while op is not None:
        if op.block == entry:
            return op
        op = op.parent
    return None
