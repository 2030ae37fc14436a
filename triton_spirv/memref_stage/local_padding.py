"""GPU shapes: `__local` tiles padded against bank conflicts.

Local memory is served by 32 banks of 4-byte words; the lanes of a warp that touch
distinct words of one bank in one access take turns. A tile read along its columns by
consecutive lanes -- a transpose's `tile[lane][j]`, the left operand of a dot
`a[row(lane)][k]` -- puts every lane's word in the same bank when a row is a multiple
of 32 words. One padding element per row (a row stride of N + 1 words) moves row r
r banks further, and the lanes of the column land in distinct banks.

Which tiles, and by how much, is measured rather than guessed: for every element
access of a `memref.alloc` tile (work-group memory in GPU shapes) the indices are
evaluated for lanes 0..31 of the first warp (`gpu.thread_id x` = the lane, a loop's
induction variable = its lower bound, kernel arguments and group ids = 0, uniform
across the lanes), the words each lane touches are spread over the banks and the
access is scored as the warp model scores it: the most distinct words in one bank
over the fewest passes its distinct words need. A tile is padded by the fewest
elements per row that give the best (worst access, then sum) score, when that beats
the unpadded one and the target's local memory still holds every tile. Accesses whose
indices depend on something else (a value loaded from memory) are not scored.

Padding changes the tile's type only: memref<R x C> becomes memref<R x (C + p)>, every
load and store keeps its indices, and each rank-preserving subview (the rows an async
copy fills) takes the padded row stride in its result type.
"""
from __future__ import annotations

import math

from mlir import ir

from .affine_nests import nested_allocs

BANKS = 32
BANK_BYTES = 4
WARP_LANES = 32
# Paddings tried per row, in elements: one word for 4-byte elements, two elements make
# one word of 2-byte ones, one 8-byte element shifts two banks.
PADDINGS = (1, 2, 3, 4)

_LOADS = ("memref.load", "vector.load")
_STORES = ("memref.store", "vector.store")
_UNIFORM = ("gpu.block_id", "gpu.grid_dim", "gpu.block_dim")


class _Unknown(Exception):
    """An index that depends on something the lane evaluation does not model."""


def pad_local_tiles(module: ir.Module, local_mem_bytes: int | None = None) -> int:
    """Pads the bank-conflicted tiles of every kernel of `module` while all its tiles fit
    in `local_mem_bytes` (no limit when None); returns how many tiles were padded."""
    padded = 0
    with ir.Location.unknown(module.context):
        for func in module.body.operations:
            padded += _pad_function(func, local_mem_bytes)
    return padded


def _pad_function(func, local_mem_bytes: int | None) -> int:
    if func.operation.name != "func.func" or not func.regions[0].blocks:
        return 0
    allocs = nested_allocs(func.regions[0].blocks[0])
    used = sum(_bytes(ir.MemRefType(a.results[0].type)) for a in allocs)
    padded = 0
    for alloc in allocs:
        plan = _best_padding(alloc)
        if plan is None:
            continue
        tile_type = ir.MemRefType(alloc.results[0].type)
        extra = _bytes(_padded_type(tile_type, plan)) - _bytes(tile_type)
        if local_mem_bytes is not None and used + extra > local_mem_bytes:
            continue
        _pad(alloc, plan)
        used += extra
        padded += 1
    return padded


def _bytes(tile_type: ir.MemRefType) -> int:
    return math.prod(tile_type.shape) * _element_bytes(tile_type.element_type)


def _element_bytes(element_type: ir.Type) -> int:
    """Bytes of a scalar element; 0 for anything else (not scored)."""
    if isinstance(element_type, (ir.FloatType, ir.IntegerType)):
        return max(1, element_type.width // 8)
    return 0


# ---------------------------------------------------------------- which padding

def _best_padding(alloc) -> int | None:
    """The fewest elements per row whose score beats the unpadded tile's, or None."""
    tile_type = ir.MemRefType(alloc.results[0].type)
    if tile_type.rank < 2 or not tile_type.has_static_shape or \
            _element_bytes(tile_type.element_type) == 0 or \
            tile_type != _padded_type(tile_type, 0):        # a strided or mapped layout
        return None
    accesses = _element_accesses(alloc.results[0])
    if not accesses:
        return None
    unpadded = _score(accesses, tile_type, 0)
    if unpadded[0] <= 1:
        return None
    scores = {padding: _score(accesses, tile_type, padding) for padding in PADDINGS}
    best = min(PADDINGS, key=lambda padding: (scores[padding], padding))
    return best if scores[best] < unpadded else None


def _element_accesses(tile: ir.Value) -> list | None:
    """Per scorable load or store of `tile`: (lane -> flat indices, vector width); None
    when a use would not survive a change of the tile's row stride."""
    accesses = []
    for use in tile.uses:
        user = use.owner
        if user.name in _LOADS + _STORES:
            first = 1 if user.name in _LOADS else 2
            if user.operands[first - 1] != tile:
                return None
            width = _vector_width(user)
            try:
                lanes = [[_evaluate(v, lane, {}) for v in list(user.operands)[first:]]
                         for lane in range(WARP_LANES)]
            except _Unknown:
                continue
            accesses.append((lanes, width))
        elif user.name == "memref.subview":
            if not _rank_preserving(user):
                return None
        elif user.name != "memref.dealloc":
            return None
    return accesses


def _vector_width(op) -> int:
    value = op.results[0] if op.name in _LOADS else op.operands[0]
    return math.prod(value.type.shape) if isinstance(value.type, ir.VectorType) else 1


def _rank_preserving(subview) -> bool:
    """A subview of the same rank whose users only copy it (the async copies of rows)."""
    source, result = (ir.MemRefType(v.type) for v in (subview.operands[0], subview.results[0]))
    return source.rank == result.rank and \
        all(use.owner.name == "memref.copy" for use in subview.results[0].uses)


def _score(accesses: list, tile_type: ir.MemRefType, padding: int) -> tuple[float, float]:
    """(worst, sum) of the accesses' bank ways with rows of `padding` more elements."""
    strides = _row_major_strides(_padded_type(tile_type, padding).shape)
    element_bytes = _element_bytes(tile_type.element_type)
    ways = []
    for lanes, width in accesses:
        words = set()
        for indices in lanes:
            flat = sum(i * s for i, s in zip(indices, strides))
            words.update((flat + e) * element_bytes // BANK_BYTES for e in range(width))
        ways.append(bank_ways(words))
    return max(ways), sum(ways)


def bank_ways(words: set) -> float:
    """The passes a warp's access to `words` (4-byte word addresses) takes over the
    fewest it could take: the most distinct words in one bank, over ceil(words / 32)."""
    per_bank: dict = {}
    for word in words:
        per_bank[word % BANKS] = per_bank.get(word % BANKS, 0) + 1
    return max(per_bank.values()) / -(-len(words) // BANKS)


def _row_major_strides(shape) -> list:
    strides = [1]
    for extent in reversed(list(shape)[1:]):
        strides.insert(0, strides[0] * extent)
    return strides


def _padded_type(tile_type: ir.MemRefType, padding: int) -> ir.MemRefType:
    shape = list(tile_type.shape)
    shape[-1] += padding
    return ir.MemRefType.get(shape, tile_type.element_type, memory_space=tile_type.memory_space)


# ---------------------------------------------------------------- lane evaluation

_BINARY = {
    "arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b, "arith.andi": lambda a, b: a & b,
    "arith.ori": lambda a, b: a | b, "arith.xori": lambda a, b: a ^ b,
    "arith.shli": lambda a, b: a << b, "arith.shrui": lambda a, b: a >> b,
    "arith.shrsi": lambda a, b: a >> b, "arith.minsi": min, "arith.maxsi": max,
    "arith.minui": min, "arith.maxui": max,
    "arith.divui": lambda a, b: a // b if b else 0, "arith.remui": lambda a, b: a % b if b else 0,
    "arith.floordivsi": lambda a, b: a // b if b else 0,
    "arith.divsi": lambda a, b: int(a / b) if b else 0,
    "arith.remsi": lambda a, b: int(math.fmod(a, b)) if b else 0,
}
_CASTS = ("arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui", "arith.trunci")


def _evaluate(value: ir.Value, lane: int, memo: dict) -> int:
    """`value` in work-item `lane` of the first warp, at the first iteration of every
    loop; raises _Unknown where it depends on memory or on loop-carried values."""
    if value in memo:
        return memo[value]
    if isinstance(value, ir.BlockArgument):
        result = _evaluate_argument(value, lane, memo)
    else:
        op = value.owner
        name = op.name
        if name == "arith.constant" and isinstance(op.attributes["value"], ir.IntegerAttr):
            result = op.attributes["value"].value
        elif name == "gpu.thread_id":
            result = lane if str(op.attributes["dimension"]).endswith("x>") else 0
        elif name in _UNIFORM:
            result = 0
        elif name in _BINARY:
            result = _BINARY[name](*(_evaluate(v, lane, memo) for v in op.operands))
        elif name in _CASTS:
            result = _evaluate(op.operands[0], lane, memo)
        else:
            raise _Unknown(name)
    memo[value] = result
    return result


def _evaluate_argument(argument: ir.BlockArgument, lane: int, memo: dict) -> int:
    parent = argument.owner.owner
    if parent.name == "func.func":
        return 0                     # a kernel argument: the same in every lane
    if parent.name == "scf.for" and argument.arg_number == 0:
        return _evaluate(parent.operands[0], lane, memo)
    raise _Unknown(parent.name)


# ---------------------------------------------------------------- the rewrite

def _pad(alloc, padding: int) -> None:
    tile = alloc.results[0]
    padded = _padded_type(ir.MemRefType(tile.type), padding)
    tile.set_type(padded)
    strides = _row_major_strides(padded.shape)
    for use in list(tile.uses):
        if use.owner.name == "memref.subview":
            _restride(use.owner, strides)


def _restride(subview, strides: list) -> None:
    """The subview's result type with the padded tile's row strides."""
    result = subview.results[0]
    old = ir.MemRefType(result.type)
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    offsets = list(subview.attributes["static_offsets"])
    steps = list(subview.attributes["static_strides"])
    offset = dynamic if dynamic in offsets else sum(o * s for o, s in zip(offsets, strides))
    strides = [dynamic if step == dynamic else s * step for s, step in zip(strides, steps)]
    layout = ir.StridedLayoutAttr.get(offset, strides)
    result.set_type(ir.MemRefType.get(old.shape, old.element_type, layout, old.memory_space))
