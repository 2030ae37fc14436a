"""Full tiles of elementwise loop nests read and write global memory directly.

A Triton block load becomes a work-group tile: `__local` memory filled by an async copy
(after a fill with `other` when the mask cuts the block), and a block store copies a
tile back. That pays off when a work-group reuses the tile (dot operands, reductions);
for a nest that reads each element of its tiles once, at its own index, and writes each
element of its result once, it is three extra passes over the data, and on the default CPU runtime's CPU
device the streaming kernels (vector add) run at about half the bandwidth of the same
loop on global memory.

For such a nest this rewrite versions the code on whether every tile it streams is
full (the copies' extents equal the tile's shape):

    scf.if %all_full {
      <the nest, loading from the global views and storing to the global view>
    } else {
      <the fills, the async copies in, the nest on the tiles, the copy out>
    }

so full blocks stream straight from and to global memory (where the OpenCL compiler
vectorizes the loop) and only a partial block, usually the last one, goes through the
tiles. The tiles also give block semantics when a store overlaps a load at another
index (`tl.store(x + offs + 1, tl.load(x + offs))` reads the whole block first), so
`%all_full` also requires, at run time, that each stored range is disjoint from every
loaded and every other stored range, or (for a load) is the very same range. Everything stays upstream affine/scf/memref IR. A nest is rewritten only when
moving the copies next to it cannot reorder global memory accesses (see `_movable`).
"""
from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, memref, scf

from ..ir_helpers import named, block_order as _position, holds, remap_operands, root_buffer
from .affine_nests import (VIEW_OPS, ancestor_in, body_ops, constant_extent, induction_var,
                           is_alloc, op_of, owner)

_DYNAMIC = ir.ShapedType.get_dynamic_size()
# Ops that neither read nor write memory: they may move across copies.
_PURE_PREFIXES = ("arith.", "math.", "index.", "affine.apply", "affine.min", "affine.max")
_NO_MEMORY_ACCESS = VIEW_OPS + ("memref.alloc", "memref.dim", "gpu.block_id", "gpu.grid_dim",
                                "memref.extract_aligned_pointer_as_index")


@dataclass
class StreamIn:
    tile: ir.Value            # the work-group tile (memref.alloc)
    source: ir.Value          # the global view of the whole block (static shape)
    copy: ir.OpView           # memref.copy global -> tile
    fill: ir.OpView | None    # scf.if filling the tile with `other` when partial
    extents: list             # the copy's extents (Values or ints)


@dataclass
class StreamOut:
    tile: ir.Value
    target: ir.Value          # the global view of the whole block (static shape)
    copy: ir.OpView           # memref.copy tile -> global
    extents: list


def forward_streams(module: ir.Module) -> int:
    """Versions every elementwise nest whose tiles are streamed; returns how many."""
    # Collected first: a rewritten nest moves into a new branch and must not be seen again.
    nests = [op for block in _blocks(module.body) for op in block.operations
             if op.operation.name == "affine.for"]
    return sum(1 for nest in nests if _forward_nest(nest))


def _blocks(block: ir.Block):
    yield block
    for op in block.operations:
        for region in op.regions:
            for inner in region.blocks:
                yield from _blocks(inner)


# ------------------------------------------------------------------------- matching

def _perfect_nest(loop) -> tuple[list, list] | None:
    """(loops, innermost body ops) of a perfect nest with constant bounds from 0."""
    loops = [loop]
    while True:
        if constant_extent(loop) is None:
            return None
        ops = body_ops(loop)
        if len(ops) == 1 and ops[0].operation.name == "affine.for":
            loop = ops[0]
            loops.append(loop)
            continue
        if any(o.regions for o in ops):
            return None
        return loops, ops


def _identity_access(op: ir.OpView, first: int, ivs: list) -> bool:
    """The access is memref[iv0, iv1, ...] in loop order through an identity map."""
    amap = ir.AffineMapAttr(op.attributes["map"]).value
    return amap == ir.AffineMap.get_identity(len(ivs)) and list(op.operands)[first:] == ivs


def _static_shape(value: ir.Value) -> list[int]:
    return list(ir.MemRefType(value.type).shape)


def _uses_in(value: ir.Value, block: ir.Block) -> list:
    """The ops of `block` that use `value` (directly or inside their regions), in order."""
    found, seen = [], set()  # a set: a tile may have hundreds of uses
    for use in value.uses:
        top = ancestor_in(use.owner, block)
        if top is None:
            return None
        if op_of(top) not in seen:
            seen.add(op_of(top))
            found.append(top)
    return sorted(found, key=_position)


def _zero_offset_unit_subview(op) -> list | None:
    """Extents of `memref.subview %x[0, ...] [sizes] [1, ...]`, else None."""
    if op is None or op.name != "memref.subview":
        return None
    offsets = list(ir.DenseI64ArrayAttr(op.attributes["static_offsets"]))
    strides = list(ir.DenseI64ArrayAttr(op.attributes["static_strides"]))
    sizes = list(ir.DenseI64ArrayAttr(op.attributes["static_sizes"]))
    if any(o != 0 for o in offsets) or any(s != 1 for s in strides):
        return None
    dynamic = list(op.operands)[1:]   # only sizes can be dynamic here
    if len(dynamic) != sum(1 for s in sizes if s == _DYNAMIC):
        return None
    extents, values = [], iter(dynamic)
    for size in sizes:
        extents.append(next(values) if size == _DYNAMIC else size)
    return extents


def _stream_in(tile: ir.Value, nest_top, block: ir.Block) -> StreamIn | None:
    """The fill and copy that bring `tile` in from global memory, when those and the
    nest are its only uses."""
    users = _uses_in(tile, block)
    if users is None or users[-1] != nest_top.operation:
        return None
    fill, copy = None, None
    for user in users[:-1]:
        if user.name == "scf.if" and _only_fills(user, tile):
            fill = user
            continue
        if copy is not None:
            return None
        copy = _tile_copy(user, tile, into_tile=True)
        if copy is None:
            return None
    source, extents = global_block(copy, tile, into_tile=True)
    if source is None:
        return None
    return StreamIn(tile, source, copy, op_of(fill) if fill is not None else None, extents)


def _tile_copy(user, tile: ir.Value, into_tile: bool):
    """The memref.copy between `tile` and global memory that `user` (a use of the tile:
    the copy itself, or a leading subview only the copy uses) belongs to."""
    if user.name == "memref.subview":
        return _copy_through(user, into_tile)
    side = 1 if into_tile else 0
    if user.name == "memref.copy" and user.operands[side] == tile:
        return op_of(user)   # an unmasked load or store copies the whole block
    return None


def global_block(copy, tile: ir.Value, into_tile: bool):
    """(view of the whole global block, copied extents) of a tile's copy, or (None, None)
    when the other side is not a global block of the tile's shape."""
    if copy is None:
        return None, None
    global_side, tile_side = copy.operands[0], copy.operands[1]
    if not into_tile:
        global_side, tile_side = tile_side, global_side
    view, extents = _copied_block(global_side, tile_side, tile)
    if view is None or _static_shape(view) != _static_shape(tile) or _root_is_alloc(view):
        return None, None
    return view, extents


def _copied_block(global_side: ir.Value, tile_side: ir.Value, tile: ir.Value):
    """(view of the whole global block, copied extents) of a copy between a tile (or its
    leading subview) and a global block (or the same leading subview of it)."""
    if tile_side == tile:
        return global_side, _static_shape(tile)
    extents = _zero_offset_unit_subview(owner(global_side))
    if extents is None or _zero_offset_unit_subview(owner(tile_side)) != extents:
        return None, None
    return owner(global_side).operands[0], extents


def _copy_through(subview, into_tile: bool):
    """The memref.copy that is the only use of a tile's subview, with the tile on the
    expected side."""
    uses = list(subview.results[0].uses)
    if len(uses) != 1 or uses[0].owner.name != "memref.copy":
        return None
    copy = op_of(uses[0].owner)
    side = 1 if into_tile else 0
    return copy if copy.operands[side] == subview.results[0] else None


def _only_fills(if_op, tile: ir.Value) -> bool:
    """An scf.if without results or else branch whose code only stores into `tile`."""
    if len(if_op.results) or len(if_op.regions[1].blocks):
        return False
    ok = True

    def check(op):
        nonlocal ok
        name = op.name
        if name in ("affine.store", "memref.store") and op.operands[1] != tile:
            ok = False
        elif name not in ("affine.store", "memref.store", "affine.for", "affine.yield",
                          "scf.yield", "scf.if") and not name.startswith(_PURE_PREFIXES):
            ok = False
        return ir.WalkResult.ADVANCE

    if_op.walk(check)
    return ok


def _stream_out(tile: ir.Value, nest_top, block: ir.Block) -> StreamOut | None:
    """The copy that takes `tile` to global memory after the nest, when the nest and
    that copy are its only uses."""
    users = _uses_in(tile, block)
    if users is None or len(users) != 2 or users[0] != nest_top.operation:
        return None
    copy = _tile_copy(users[1], tile, into_tile=False)
    target, extents = global_block(copy, tile, into_tile=False)
    if target is None:
        return None
    return StreamOut(tile, target, copy, extents)


# -------------------------------------------------------------------------- rewrite

def _forward_nest(nest_top) -> bool:
    found = _perfect_nest(nest_top)
    if found is None:
        return False
    loops, body = found
    ivs = [induction_var(loop) for loop in loops]
    shape = [constant_extent(loop) for loop in loops]
    block = nest_top.operation.block
    ins, outs = {}, {}
    for op in body:
        name = op.operation.name
        if name == "affine.load" and is_alloc(op.operands[0]):
            tile = op.operands[0]
            if not _identity_access(op, 1, ivs) or _static_shape(tile) != shape:
                return False  # a tile read elsewhere than at the nest's own index
            if tile not in ins and (stream := _stream_in(tile, nest_top, block)):
                ins[tile] = stream
        elif name == "affine.store" and is_alloc(op.operands[1]):
            tile = op.operands[1]
            if not _identity_access(op, 2, ivs) or _static_shape(tile) != shape:
                return False
            stream = _stream_out(tile, nest_top, block)
            if stream is None:
                return False  # the result tile is used later as a tile: keep it
            outs[tile] = stream
        elif name not in ("affine.load", "affine.store") and not name.startswith(_PURE_PREFIXES):
            return False
    if not outs or not _movable(nest_top, list(ins.values()), list(outs.values())):
        return False
    views = [s.source for s in ins.values()] + [s.target for s in outs.values()]
    if any(_block_view(v) is None for v in views):
        return False  # the overlap check needs base, offset and strides
    _version(nest_top, shape, list(ins.values()), list(outs.values()))
    return True


def _between(first, last) -> list:
    """The ops strictly between two ops of the same block."""
    first, last = op_of(first), op_of(last)
    ops, inside = [], False
    for op in first.block.operations:
        if op.operation == last:
            break
        if inside:
            ops.append(op.operation)
        if op.operation == first:
            inside = True
    return ops


def _writes_global_or(op, tiles: set) -> bool:
    """Whether `op` (with its regions) may write memory other than work-group tiles
    being streamed, or read/write any of `tiles`."""
    bad = False

    def check(inner):
        nonlocal bad
        name = inner.name
        if name.startswith(_PURE_PREFIXES) or name in _NO_MEMORY_ACCESS or name in (
                "affine.for", "affine.yield", "scf.yield", "scf.if", "scf.for"):
            return ir.WalkResult.ADVANCE
        if name in ("affine.load", "memref.load"):
            if inner.operands[0] in tiles:
                bad = True
            return ir.WalkResult.ADVANCE
        if name in ("affine.store", "memref.store") and is_alloc(inner.operands[1]) \
                and inner.operands[1] not in tiles:
            return ir.WalkResult.ADVANCE
        if name == "memref.copy" and _root_is_alloc(inner.operands[1]) and \
                root_buffer(inner.operands[1]) not in tiles:
            return ir.WalkResult.ADVANCE
        bad = True
        return ir.WalkResult.INTERRUPT

    op.walk(check)
    return bad


def _reads_or_writes_memory(op) -> bool:
    return holds(op, lambda inner: not (inner.name.startswith(_PURE_PREFIXES) or
                                        inner.name in _NO_MEMORY_ACCESS))


def _root_is_alloc(memref: ir.Value) -> bool:
    return is_alloc(root_buffer(memref))


def _movable(nest_top, ins: list[StreamIn], outs: list[StreamOut]) -> bool:
    """The fills and copies in may move down to the nest and the copies out up to it:
    nothing in between writes global memory or touches the streamed tiles (reads of
    global memory may be reordered with reads), and nothing between the nest and a copy
    out reads or writes memory at all."""
    nest = nest_top.operation
    tiles = {s.tile for s in ins} | {s.tile for s in outs}
    moved = {op for stream in ins for op in (stream.fill, stream.copy) if op is not None}
    for stream in ins:
        first = stream.fill if stream.fill is not None else stream.copy
        for op in _between(first, nest):
            if op in moved:
                continue
            if _writes_global_or(op, tiles):
                return False
    for stream in outs:
        for op in _between(nest, stream.copy):
            if _reads_or_writes_memory(op) and op not in {s.copy for s in outs}:
                return False
    return True


def _version(nest_top, shape: list[int], ins: list[StreamIn], outs: list[StreamOut]) -> None:
    nest = nest_top.operation
    loc = nest.location
    # Ops between the nest and its copies out are pure (checked): move them above the
    # nest so the copies' operands are defined where the copies will go.
    last_copy = max((s.copy for s in outs), key=_position)
    for op in _between(nest, last_copy):
        if op not in {s.copy for s in outs}:
            op.move_before(nest)
    with named("full_tiles", loc), ir.InsertionPoint(nest):
        full = _all_full(ins, outs, shape)
        if_op = scf.IfOp(full, has_else=True)
    with loc, ir.InsertionPoint(if_op.then_block):
        direct = nest.clone()
        scf.YieldOp([])
    # In the nest, tiles appear only as the memrefs of loads and stores (checked).
    remap_operands(direct, {s.tile: s.source for s in ins} | {s.tile: s.target for s in outs})
    else_yield = scf.YieldOp([], ip=ir.InsertionPoint(if_op.else_block), loc=loc)
    for stream in ins:
        for op in (stream.fill, stream.copy):
            if op is not None:
                op.move_before(else_yield)
    nest.move_before(else_yield)
    for stream in sorted(outs, key=lambda s: _position(s.copy)):
        stream.copy.move_before(else_yield)


def _all_full(ins: list[StreamIn], outs: list[StreamOut], shape: list[int]) -> ir.Value:
    """i1: every streamed copy moves the whole tile, and no stored range overlaps
    another streamed range (except a load of the very same range)."""
    conditions, seen = _no_overlaps(ins, outs, shape), set()
    for stream in list(ins) + list(outs):
        for extent, size in zip(stream.extents, shape):
            if isinstance(extent, int):
                if extent != size:
                    return arith.ConstantOp(ir.IntegerType.get_signless(1), 0).result
                continue
            if extent in seen:
                continue
            seen.add(extent)
            tile_size = arith.ConstantOp(ir.IndexType.get(), size).result
            conditions.append(arith.CmpIOp(arith.CmpIPredicate.eq, extent, tile_size).result)
    if not conditions:
        return arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result
    full = conditions[0]
    for condition in conditions[1:]:
        full = arith.AndIOp(full, condition).result
    return full


@dataclass
class BlockView:
    """`memref.reinterpret_cast %arg to offset: [o], sizes: [...], strides: [...]`."""
    base: ir.Value
    offset: object            # Value or int
    strides: list             # Values or ints
    element_bytes: int


def _block_view(view: ir.Value) -> BlockView | None:
    cast = owner(view)
    if cast is None or cast.name != "memref.reinterpret_cast":
        return None
    base = cast.operands[0]
    if owner(base) is not None:
        return None  # only kernel arguments have an address to compare
    element = ir.MemRefType(view.type).element_type
    width = getattr(element, "width", None)
    if width is None or width % 8:
        return None
    dynamic = iter(list(cast.operands)[1:])
    offsets = [next(dynamic) if o == _DYNAMIC else o
               for o in ir.DenseI64ArrayAttr(cast.attributes["static_offsets"])]
    for size in ir.DenseI64ArrayAttr(cast.attributes["static_sizes"]):
        if size == _DYNAMIC:
            next(dynamic)
    strides = [next(dynamic) if t == _DYNAMIC else t
               for t in ir.DenseI64ArrayAttr(cast.attributes["static_strides"])]
    return BlockView(base, offsets[0], strides, width // 8)


def _index(value) -> ir.Value:
    if isinstance(value, int):
        return arith.ConstantOp(ir.IndexType.get(), value).result
    return value


def _arg_name(base: ir.Value) -> str:
    """The source name of a kernel argument (for the C variables of its range)."""
    arg = ir.BlockArgument(base)
    func = arg.owner.owner
    if "opencl.arg_names" in func.attributes:
        names = ir.ArrayAttr(func.attributes["opencl.arg_names"])
        if arg.arg_number < len(names):
            return ir.StringAttr(names[arg.arg_number]).value
    return f"arg{arg.arg_number}"


def _byte_range(view: BlockView, shape: list[int]) -> tuple[ir.Value, ir.Value]:
    """[first byte, one past the last byte) the view of `shape` touches, as addresses
    named `<argument>_start` and `<argument>_end`."""
    loc = ir.Location.current
    arg = _arg_name(view.base)
    with named("block_end", loc):
        low, high = _index_range(view, shape)
    bytes_per = _index(view.element_bytes)
    with named("start_bytes", loc):
        low_bytes = arith.MulIOp(low, bytes_per).result
    with named("end_bytes", loc):
        high_bytes = arith.MulIOp(high, bytes_per).result
    with named(f"{arg}_addr", loc):
        base = memref.ExtractAlignedPointerAsIndexOp(view.base).result
    with named(f"{arg}_start", loc):
        start = arith.AddIOp(base, low_bytes).result
    with named(f"{arg}_end", loc):
        end = arith.AddIOp(base, high_bytes).result
    return start, end


def _index_range(view: BlockView, shape: list[int]) -> tuple[ir.Value, ir.Value]:
    """[first element, one past the last element) the view of `shape` touches."""
    low, high = _index(view.offset), _index(view.offset)
    for size, stride in zip(shape, view.strides):
        if size == 1:
            continue
        reach = arith.MulIOp(_index(stride), _index(size - 1)).result
        low = arith.AddIOp(low, arith.MinSIOp(reach, _index(0)).result).result
        high = arith.AddIOp(high, arith.MaxSIOp(reach, _index(0)).result).result
    return low, arith.AddIOp(high, _index(1)).result


def _same_placement(a: BlockView, b: BlockView) -> bool:
    """Statically the same elements in the same order (same argument, offset, strides)."""
    return a.base == b.base and a.offset == b.offset and a.strides == b.strides and \
        a.element_bytes == b.element_bytes


def _no_overlaps(ins: list[StreamIn], outs: list[StreamOut], shape: list[int]) -> list:
    """Run-time conditions under which streaming element by element gives the tiles'
    block semantics: every stored range is disjoint from each other streamed range, or
    is exactly a loaded range (read then written at the same index)."""
    conditions = []
    loads = [_block_view(s.source) for s in ins]
    stores = [_block_view(s.target) for s in outs]
    pairs = [(store, load, True) for store in stores for load in loads]
    pairs += [(a, b, False) for i, a in enumerate(stores) for b in stores[i + 1:]]
    for store, other, same_is_fine in pairs:
        if same_is_fine and _same_placement(store, other):
            continue
        store_low, store_high = _byte_range(store, shape)
        other_low, other_high = _byte_range(other, shape)
        with named("no_overlap", ir.Location.current):
            conditions.append(_apart_or_same(store, other, same_is_fine, store_low,
                                             store_high, other_low, other_high))
    return conditions


def _apart_or_same(store: BlockView, other: BlockView, same_is_fine: bool, store_low,
                   store_high, other_low, other_high) -> ir.Value:
    """i1: the two byte ranges are disjoint, or (when allowed) the same placement."""
    ok = arith.OrIOp(
        arith.CmpIOp(arith.CmpIPredicate.ule, store_high, other_low).result,
        arith.CmpIOp(arith.CmpIPredicate.ule, other_high, store_low).result).result
    if same_is_fine and store.element_bytes == other.element_bytes:
        same = arith.CmpIOp(arith.CmpIPredicate.eq, store_low, other_low).result
        for a, b in zip(store.strides, other.strides):
            same = arith.AndIOp(same, arith.CmpIOp(arith.CmpIPredicate.eq, _index(a),
                                                   _index(b)).result).result
        ok = arith.OrIOp(ok, same).result
    return ok
