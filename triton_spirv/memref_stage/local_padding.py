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
load and store keeps its indices, each subview (the rows an async copy fills, a row or
a column of a reduction) takes the padded row stride in its result type, and a copy of
the whole tile goes through a subview of its R x C elements. Accesses through subviews
are scored at the tile's indices they touch.
"""
from __future__ import annotations

import math

from mlir import ir

from mlir.dialects import memref

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
    """Per scorable load or store of `tile`, directly or through a subview: (lane -> the
    tile's indices, vector width); None when a use would not survive a change of the
    tile's row stride."""
    accesses = []
    for use in tile.uses:
        user = use.owner
        if user.name in _LOADS + _STORES:
            if not _add_access(accesses, user, tile, lambda lane, indices: indices):
                return None
        elif user.name == "memref.subview":
            kept = _kept_dimensions(user)
            if kept is None:
                return None
            for inner in user.results[0].uses:
                if inner.owner.name in _LOADS + _STORES:
                    into = _into_tile(user, kept)
                    if not _add_access(accesses, inner.owner, user.results[0], into):
                        return None
                elif inner.owner.name != "memref.copy":
                    return None
        elif user.name not in ("memref.dealloc", "memref.copy"):
            return None
    return accesses


def _add_access(accesses: list, op, memref_value, into) -> bool:
    """Scores `op`'s indices of `memref_value` for the lanes of a warp, mapped to the
    tile's by `into(lane, indices)`; False when `op` uses it other than as its memref."""
    first = 1 if op.name in _LOADS else 2
    if op.operands[first - 1] != memref_value:
        return False
    try:
        lanes = [into(lane, [_evaluate(v, lane, {}) for v in list(op.operands)[first:]])
                 for lane in range(WARP_LANES)]
    except _Unknown:
        return True
    accesses.append((lanes, _vector_width(op)))
    return True


def _into_tile(subview, kept: list):
    """lane, the subview's indices -> the tile's: offset + index * step on the kept
    dimensions, the offset on the dropped ones."""
    offsets = _static_or_operands(subview, "static_offsets", 1)
    steps = list(subview.attributes["static_strides"])

    def into(lane: int, indices: list) -> list:
        full = [_evaluate_or(o, lane) for o in offsets]
        for position, dimension in enumerate(kept):
            full[dimension] += indices[position] * steps[dimension]
        return full
    return into


def _static_or_operands(subview, attribute: str, first_operand: int) -> list:
    """The subview's offsets: the static ones, the dynamic ones as their operands."""
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    operands = iter(list(subview.operands)[first_operand:])
    return [next(operands) if v == dynamic else v for v in subview.attributes[attribute]]


def _evaluate_or(offset, lane: int) -> int:
    return offset if isinstance(offset, int) else _evaluate(offset, lane, {})


def _kept_dimensions(subview) -> list | None:
    """The tile's dimensions the subview keeps (a rank-reducing one drops unit ones), or
    None when its steps are dynamic or the dropped ones cannot be told."""
    source, result = (ir.MemRefType(v.type) for v in (subview.operands[0], subview.results[0]))
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    if dynamic in list(subview.attributes["static_strides"]):
        return None
    if source.rank == result.rank:
        return list(range(source.rank))
    sizes = list(subview.attributes["static_sizes"])
    kept = [d for d, size in enumerate(sizes) if size != 1]
    return kept if len(kept) == result.rank else None


def _vector_width(op) -> int:
    value = op.results[0] if op.name in _LOADS else op.operands[0]
    return math.prod(value.type.shape) if isinstance(value.type, ir.VectorType) else 1


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
        elif use.owner.name == "memref.copy":
            _copy_through_rows(use.owner, use.operand_number, tile, strides)


def _copy_through_rows(copy, operand: int, tile: ir.Value, strides: list) -> None:
    """A copy of the whole tile copies its rows without their padding: through a
    subview of the padded tile of the unpadded shape (copy_lowering.py copies it row by
    row)."""
    shape = list(ir.MemRefType(copy.operands[1 - operand].type).shape)
    rank = len(shape)
    with copy.location, ir.InsertionPoint(copy):
        rows = memref.SubViewOp(ir.MemRefType.get(shape, ir.MemRefType(tile.type).element_type,
                                                  memory_space=ir.MemRefType(tile.type).memory_space),
                                tile, [], [], [], [0] * rank, shape, [1] * rank)
    _restride(rows, strides)
    copy.operands[operand] = rows.results[0]


def _restride(subview, strides: list) -> None:
    """The subview's result type with the padded tile's row strides (of the dimensions
    it keeps)."""
    result = subview.results[0]
    old = ir.MemRefType(result.type)
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    offsets = list(subview.attributes["static_offsets"])
    steps = list(subview.attributes["static_strides"])
    offset = dynamic if dynamic in offsets else sum(o * s for o, s in zip(offsets, strides))
    kept = _kept_dimensions(subview)
    strides = [strides[d] * steps[d] for d in kept]
    layout = ir.StridedLayoutAttr.get(offset, strides)
    result.set_type(ir.MemRefType.get(old.shape, old.element_type, layout, old.memory_space))
