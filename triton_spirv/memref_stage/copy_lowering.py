"""`memref.copy` lowered once, for every printer: the last pass of the memref stage
(`copy-lowering`, passes.py) gives each copy one form, the better of those the OpenCL C
emitter and the SPIR-V stage chose when each lowered copies itself.

    lower_copies_once(module, bounds_check=False, unroll_private_rows=False)   # the pass
    lower_copies(module)                            # the SPIR-V stage: marked copies too

The forms, in this order:
- rows in vectors of 16 (`copy_nest` with a width, copy_loops.py): unit stride on both
  sides, one element type with a vector form, rows that can reach 16 elements; copies
  between a global buffer and a work-group tile (f16 ones in any group: vload_half16 /
  vstore_half16_rte convert a vector per instruction; other types in groups of one
  work-item, where the default CPU runtime's async_work_group_copy moves element by
  element) and every copy one work-item makes alone (Intel's compiler vectorizes only
  explicit vectors in a kernel of one work-item per group). Where both sides are one
  dense block by their types, the copy is one row first (`memref.collapse_shape`), so
  a tile of short rows still moves in vectors. With `unroll_private_rows` (PoCL's quirk
  register_blocks_for_every_work_item, GPU shape), a row between two private arrays of
  at most UNROLLED_PRIVATE_VECTORS vectors is straight-line vector copies, no loop.
  Never in bounds-checked kernels, whose element accesses are each checked;
- a work-group async copy: a copy between a global buffer and a work-group tile of a
  plain element type (no conversion) with unit stride on the tile's side stays
  `memref.copy`, marked `opencl.async_work_group_copy`, where every work-item of the
  group reaches it with the same views (an async copy is a collective of the group:
  OpenCL C 6.15.11), as one row where both sides are one dense block by their types
  (`memref.collapse_shape`: one async copy, not one per row); the OpenCL C emitter prints it
  as `async_work_group_copy` / `wait_group_events` and the SPIR-V stage, whose
  upstream dialect has no OpGroupAsyncCopy, lowers it by the forms below;
- a copy reached by every work-item of a group of several, shared by them between
  barriers as an async copy would be (copy_loops.py, `spread_copy`): work-item w moves
  elements w, w + group size, ...; a barrier after it (the async copy's wait), and one
  before it unless the barrier analysis saw it as the group's async copy and placed
  the one it needs (`opencl.copy_barriers_placed`, work_group_barriers.py): the
  SPIR-V stage's form of every async copy. In the memref stage, the copies of the GPU
  shape that every work-item reaches are async copies, or tile-to-tile copies that
  single_work_item.py spreads before the analysis, so this form is left to kernels
  the analysis did not see;
- any other copy is made whole by whoever runs it, element by element, with no barrier
  (copy_loops.py, `copy_nest`): in kernels of one work-item per group, inside a
  single-work-item section (an `scf.if` marked `opencl.single_work_item` by
  work_group_sharing.py), under a branch or loop whose condition or bounds depend on
  the work-item id, between views that depend on it (an iteration of a distributed
  loop, whose rounds every work-item runs alike) and into or out of a work-item's
  private array (`memref.alloca`).

The loops index the copy's views; the printers turn their accesses into index
arithmetic on the root buffers like every other access.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, memref

from ..ir_helpers import owner, root_buffer
from .copy_loops import copy_nest, spread_copy
from .work_group_barriers import COPY_BARRIERS_PLACED
from .work_group_sharing import SINGLE_WORK_ITEM

# The unit attribute of a copy the OpenCL C emitter prints as a work-group async copy.
ASYNC_COPY = "opencl.async_work_group_copy"
VECTOR_WIDTH = 16
# Rows of private-to-private copies unrolled under `unroll_private_rows`: PoCL 3.1 loses
# a __local store of some work-items beside a loop of exactly two such vector copies
# (tests/test_pocl_register_blocks_every_work_item.py); up to four the straight-line
# copies are as short as the loop would be once PoCL unrolls it.
UNROLLED_PRIVATE_VECTORS = 4
RUN_TIME = "run time"       # a row length known only at run time
VECTOR_ELEMENTS = ("f16", "f32", "f64", "i8", "i16", "i32", "i64")
# Element types whose global buffers hold another type than their tiles (the printers
# convert each element): never moved by an async copy.
CONVERTED_ELEMENTS = ("f16", "bf16")


def lower_copies_once(module: ir.Module, bounds_check: bool = False,
                      unroll_private_rows: bool = False) -> int:
    """Gives every `memref.copy` of `module`'s kernels its form (module docstring);
    returns how many were lowered to loops."""
    return _lower_module(module, marks_async=True, vectors=not bounds_check,
                         unroll_private_rows=unroll_private_rows)


def lower_copies(module: ir.Module) -> ir.Module:
    """Replaces every `memref.copy` left in `module`, marked async copies included, by
    loops (the SPIR-V stage, which cannot print a work-group async copy)."""
    _lower_module(module, marks_async=False, vectors=True)
    return module


def _lower_module(module: ir.Module, marks_async: bool, vectors: bool,
                  unroll_private_rows: bool = False) -> int:
    lowered = 0
    for op in module.body.operations:
        if op.operation.name == "func.func":
            lowered += _lower_kernel_copies(op.operation, marks_async, vectors,
                                            unroll_private_rows)
    return lowered


def _lower_kernel_copies(func, marks_async: bool, vectors: bool,
                         unroll_private_rows: bool) -> int:
    copies = []

    def collect(op):
        if op.name == "memref.copy":
            copies.append(op.opview)
        return ir.WalkResult.ADVANCE

    func.walk(collect, ir.WalkOrder.PRE_ORDER)
    one_work_item = _work_items(func) == 1
    divergence = Divergence()
    lowered = 0
    for copy in copies:
        source, target = copy.operands[0], copy.operands[1]
        alone = one_work_item or divergence.reaches_some(copy) or \
            any(divergence.depends_on_work_item(v) or _is_private(v) for v in (source, target))
        with ir.InsertionPoint(copy), copy.location:
            if _lower_copy(copy, alone, one_work_item, marks_async, vectors,
                           unroll_private_rows):
                copy.operation.erase()
                lowered += 1
    return lowered


def _lower_copy(copy, alone: bool, one_work_item: bool, marks_async: bool,
                vectors: bool, unroll_private_rows: bool = False) -> bool:
    """Builds the loops of `copy` in front of it, in the first form that applies (module
    docstring); False where it stays, marked, the work-group's async copy."""
    source, target = copy.operands[0], copy.operands[1]
    unrolled = UNROLLED_PRIVATE_VECTORS if unroll_private_rows and \
        _is_private(source) and _is_private(target) else 0
    if vectors and _lower_as_vector_rows(source, target, alone, one_work_item, unrolled):
        return True
    # An async copy is the group's collective: every work-item, the same views.
    if marks_async and (one_work_item or not alone) and _async_copy(source, target):
        _mark_async(copy)
        return False
    if alone:
        copy_nest(source, target, _sizes(source, target))
    else:
        # A copy the barrier analysis saw as the group's async copy has the barrier it
        # needs before it already; its own barrier after it stands for the async copy's
        # wait, which the analysis counts on.
        spread_copy(source, target, _sizes(source, target),
                    barrier_before=COPY_BARRIERS_PLACED not in copy.operation.attributes)
    return True


def _mark_async(copy) -> None:
    """Marks `copy` as the work-group's async copy, of one row where the types prove
    both sides one dense block: the printers then make one async copy, not one per row."""
    merged = _one_row(copy.operands[0], copy.operands[1])
    if merged is not None:
        copy.operation.operands[0], copy.operation.operands[1] = merged
    copy.operation.attributes[ASYNC_COPY] = ir.UnitAttr.get()


def _lower_as_vector_rows(source: ir.Value, target: ir.Value, alone: bool,
                          one_work_item: bool, unrolled_vectors: int = 0) -> bool:
    """Builds the copy as rows in vectors, one row where the types prove both sides one
    dense block, if that form applies (module docstring), rows of at most
    `unrolled_vectors` vectors with no loop; False where it does not."""
    merged = _one_row(source, target)
    if merged is not None:
        source, target = merged
    count = _row_length(source, target)
    if _vector_rows(source, target, count, alone) or \
            _tile_vector_rows(source, target, count, one_work_item):
        copy_nest(source, target, _sizes(source, target), VECTOR_WIDTH, unrolled_vectors)
        return True
    if merged is not None:      # built for nothing: no use, no effect
        for view in reversed(merged):
            view.owner.erase()
    return False


def _row_length(source: ir.Value, target: ir.Value):
    """The length of the copy's rows: an int where either side's type knows it, else
    RUN_TIME; None for a copy of one element (rank 0)."""
    shapes = [ir.MemRefType(v.type).shape for v in (source, target)]
    if not shapes[0]:
        return None
    known = [n for n in (shapes[0][-1], shapes[1][-1]) if not ir.ShapedType.is_dynamic_size(n)]
    return known[0] if known else RUN_TIME


def _one_row(source: ir.Value, target: ir.Value):
    """Both sides as one row (`memref.collapse_shape`), or None where a side's type does
    not prove it one dense row-major block (or the copy is one row already)."""
    types = [ir.MemRefType(v.type) for v in (source, target)]
    if types[0].rank < 2 or any(isinstance(v, ir.BlockArgument) for v in (source, target)):
        return None
    shape = [_static_or_none(a, b) for a, b in zip(types[0].shape, types[1].shape)]
    if not all(_dense(t, shape) for t in types):
        return None
    group = ir.ArrayAttr.get([ir.ArrayAttr.get(
        [ir.IntegerAttr.get(ir.IntegerType.get_signless(64), d) for d in range(len(shape))])])
    total = ir.ShapedType.get_dynamic_size() if None in shape else _product(shape)
    return tuple(memref.collapse_shape(_row_type(t, total), v, group)
                 for t, v in zip(types, (source, target)))


def _static_or_none(a: int, b: int):
    if not ir.ShapedType.is_dynamic_size(a):
        return a
    return None if ir.ShapedType.is_dynamic_size(b) else b


def _dense(memref_type: ir.MemRefType, shape: list) -> bool:
    """Whether a view of `shape` (None: known at run time) and `memref_type`'s strides
    is one row-major block: each stride the product of the sizes after it."""
    strides = memref_type.get_strides_and_offset()[0]
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if expected is None or stride != expected:
            return False
        expected = None if size is None else expected * size
    return True


def _row_type(memref_type: ir.MemRefType, total: int) -> ir.MemRefType:
    """The type `memref.collapse_shape` gives a dense view collapsed into one row."""
    offset = memref_type.get_strides_and_offset()[1]
    layout = None
    identity = memref_type.layout == ir.AffineMapAttr.get(
        ir.AffineMap.get_identity(memref_type.rank))
    if not (identity and offset == 0):
        layout = ir.StridedLayoutAttr.get(offset, [1])
    return ir.MemRefType.get([total], memref_type.element_type, layout,
                             memref_type.memory_space)


def _product(values: list) -> int:
    total = 1
    for value in values:
        total *= value
    return total


def _work_items(func) -> int:
    if "opencl.local_size" not in func.attributes:
        return 1
    count = 1
    for size in ir.DenseI64ArrayAttr(func.attributes["opencl.local_size"]):
        count *= size
    return count


def _sizes(source: ir.Value, target: ir.Value) -> list:
    """The copy's extent per dimension: an int where either side's type knows it, else
    the target's run-time size (the source's where the target is a whole kernel
    argument)."""
    sizes = []
    for dim, (a, b) in enumerate(zip(ir.MemRefType(source.type).shape,
                                     ir.MemRefType(target.type).shape)):
        if not ir.ShapedType.is_dynamic_size(a):
            sizes.append(a)
        elif not ir.ShapedType.is_dynamic_size(b):
            sizes.append(b)
        else:
            side = source if isinstance(target, ir.BlockArgument) else target
            sizes.append(memref.dim(side, arith.constant(ir.IndexType.get(), dim)))
    return sizes


def _is_private(view: ir.Value) -> bool:
    return _root_op(view) == "memref.alloca"


def _is_tile(view: ir.Value) -> bool:
    """A view of a work-group tile (`memref.alloc`: a __local array)."""
    return _root_op(view) == "memref.alloc"


def _is_global(view: ir.Value) -> bool:
    """A view of a kernel argument (a __global buffer)."""
    return isinstance(root_buffer(view), ir.BlockArgument)


def _root_op(view: ir.Value) -> str | None:
    defining = owner(root_buffer(view))
    return None if defining is None else defining.name


def _tile_side(source: ir.Value, target: ir.Value) -> ir.Value | None:
    """The work-group tile of a copy between a global buffer and a tile, else None."""
    if _is_global(source) and _is_tile(target):
        return target
    if _is_tile(source) and _is_global(target):
        return source
    return None


def _unit_strides(*views: ir.Value) -> bool:
    return all(ir.MemRefType(v.type).get_strides_and_offset()[0][-1] == 1 for v in views)


def _element(view: ir.Value) -> str:
    return str(ir.MemRefType(view.type).element_type)


def _vector_rows(source: ir.Value, target: ir.Value, count, alone: bool) -> bool:
    """A copy one work-item makes alone, in rows that move as vectors: unit stride on
    both sides, one element type with a vector form, rows that can reach VECTOR_WIDTH
    (`count` itself, else the row pitch of each side whose pitch is known)."""
    if not alone or count is None or _element(source) != _element(target) or \
            _element(source) not in VECTOR_ELEMENTS or not _unit_strides(source, target):
        return False
    if isinstance(count, int):
        return count >= VECTOR_WIDTH
    strides = [ir.MemRefType(v.type).get_strides_and_offset()[0] for v in (source, target)]
    pitches = [s[-2] for s in strides if len(s) >= 2 and not ir.ShapedType.is_dynamic_size(s[-2])]
    return all(pitch >= VECTOR_WIDTH for pitch in pitches)


def _tile_vector_rows(source: ir.Value, target: ir.Value, count, one_work_item: bool) -> bool:
    """Rows between a global buffer and a work-group tile that move as vectors: unit
    stride on both sides; f16 in any group, other element types with a vector form in
    groups of one work-item; rows that can reach VECTOR_WIDTH (`count` itself, else the
    tile's row pitch, else the whole tile's size)."""
    tile = _tile_side(source, target)
    if tile is None:
        return False
    element = _element(source)
    if count is None or element != _element(target) or element not in VECTOR_ELEMENTS or \
            not _unit_strides(source, target) or (element != "f16" and not one_work_item):
        return False
    return _longest_row(tile, count) >= VECTOR_WIDTH


def _longest_row(tile: ir.Value, count) -> int:
    """An upper bound of the row length `count` of a copy into or out of `tile`: the
    count itself, else the tile's row pitch, else its size."""
    if isinstance(count, int):
        return count
    tile_type = ir.MemRefType(tile.type)
    if tile_type.rank >= 2:
        pitch = tile_type.get_strides_and_offset()[0][-2]
        if not ir.ShapedType.is_dynamic_size(pitch):
            return pitch
    return _product(ir.MemRefType(root_buffer(tile).type).shape)


def _async_copy(source: ir.Value, target: ir.Value) -> bool:
    """Whether the copy is one the OpenCL C emitter prints as a work-group async copy:
    between a global buffer and a work-group tile, of one element type its buffers hold
    unconverted, with unit stride on the tile's side."""
    tile = _tile_side(source, target)
    if tile is None:
        return False
    element = _element(source)
    return ir.MemRefType(tile.type).rank > 0 and element == _element(target) and \
        element not in CONVERTED_ELEMENTS and not element.startswith("f8") and \
        _unit_strides(tile)


class Divergence:
    """Which ops only some work-items of a group reach: those inside a single-work-item
    section, or under an `scf.if`/`scf.while`/`scf.for` whose operands (condition,
    bounds) depend on `gpu.thread_id`. Values loaded at the same index by every
    work-item are the same for all (the memref stage's sharing reads uniform values
    redundantly), so a branch on them is taken by the whole group."""

    def __init__(self):
        self.known: dict = {}       # Value -> whether it depends on the work-item id

    def reaches_some(self, op) -> bool:
        parent = op.parent
        while parent is not None and parent.name != "func.func":
            if SINGLE_WORK_ITEM in parent.attributes:
                return True
            if parent.name in ("scf.if", "scf.while", "scf.for") and \
                    any(self.depends_on_work_item(v) for v in _control_operands(parent)):
                return True
            parent = parent.parent
        return False

    def depends_on_work_item(self, value: ir.Value) -> bool:
        if value in self.known:
            return self.known[value]
        self.known[value] = False       # cycles through loop-carried values
        if isinstance(value, ir.OpResult):
            op = value.owner
            found = op.name == "gpu.thread_id" or \
                any(self.depends_on_work_item(v) for v in _control_operands(op))
        else:       # a block argument: the induction variable or iter_arg of a loop
            op = value.owner.owner
            found = op is not None and op.name != "func.func" and \
                any(self.depends_on_work_item(v) for v in _control_operands(op))
        self.known[value] = found
        return found


def _control_operands(op) -> list:
    """The operands of `op`, and for an `scf.while` the condition that ends it."""
    operands = list(op.operands)
    if op.name == "scf.while":
        operands.append(op.regions[0].blocks[0].operations[-1].operands[0])
    return operands
