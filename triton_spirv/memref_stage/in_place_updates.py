"""GPU-shaped kernels: a loop-carried tile is updated in place.

`dw += tl.load(...)` inside a loop (layer norm's backward sums its partial gradients so)
bufferizes to a fresh tile for the sum, written by an elementwise loop that reads the
old sum, and a `memref.copy` of the fresh tile back onto the loop-carried one at the
end of each iteration: two tiles per sum, and a whole-tile copy per iteration, which on
GPU shapes one work-item runs between barriers (work_group_sharing.py). When that loop
reads the old tile only at the elements it is about to write, and nothing between the
loop and the copy touches the old tile, the loop writes the old tile itself: the copy
and the fresh tile go.

    scf.parallel (%i, %j) = (0, 0) to (32, 128) step (1, 16) {
      %a = vector.load %old[%i, %j]  ...  vector.store %sum, %new[%i, %j] }
    ...                                 (nothing here touches %old)
    memref.copy %new, %old
 -> scf.parallel (%i, %j) = (0, 0) to (32, 128) step (1, 16) {
      %a = vector.load %old[%i, %j]  ...  vector.store %sum, %old[%i, %j] }

Conditions: the loop steps over the whole tile one element (one vector along the last
dimension) at a time and stores into %new only at its induction variables, so it writes
every element of %new exactly once; %new has no other use than those stores and the
copy; inside the loop %old is only read, at those same indices with the same width, in
the stores' block before them. Each iteration then reads its own elements of %old
before it overwrites them and no other iteration touches them: the results are the ones
the copy gave.

It runs on the scf stage of GPU-shaped kernels before block_ownership.py and
work_group_sharing.py, which then see one tile per sum, owned element by element.
"""
from __future__ import annotations

from mlir import ir

from ..ir_helpers import block_order as _position
from .affine_nests import (access_width, ancestor_in, constant_index, is_alloc, is_nested_in,
                           kernel_ops, memory_access, op_of, users_through_views,
                           whole_tile_steps)


def update_in_place(module: ir.Module) -> int:
    """Makes the loops of `module` that compute a loop-carried tile's next value write
    it in place; returns how many copies went."""
    return sum(_update(copy) for copy in kernel_ops(module, "memref.copy"))


def _update(copy) -> int:
    new, old = copy.operands[0], copy.operands[1]
    if not (is_alloc(new) and is_alloc(old)) or new == old or new.type != old.type:
        return 0
    stores = [use.owner for use in new.uses if op_of(use.owner) != op_of(copy)]
    loop = _writing_loop(stores, new)
    if loop is None or op_of(loop).block != op_of(copy).block or \
            not op_of(loop).is_before_in_block(op_of(copy)):
        return 0
    if not _reads_only_own_elements(loop, old, stores) or \
            _touched_between(old, loop, copy):
        return 0
    for store in stores:
        store.operands[1] = old
    copy.erase()
    op_of(new.owner).erase()
    return 1


def _writing_loop(stores: list, tile: ir.Value):
    """The scf.parallel that holds `stores` when they are stores into `tile` at its
    induction variables and it steps over the whole tile, each element once."""
    if not stores or any(memory_access(s) is None or not memory_access(s)[2] or
                         memory_access(s)[0] != tile for s in stores):
        return None
    loop = op_of(stores[0]).parent
    if loop is None or loop.name != "scf.parallel" or \
            any(op_of(s).parent != loop for s in stores):
        return None
    ivs = list(loop.regions[0].blocks[0].arguments)
    shape = ir.MemRefType(tile.type).shape
    if len(shape) > len(ivs):      # an [XBLOCK=1, R] tile: the loop runs over R alone
        indices = memory_access(stores[0])[1]
        if not _unit_dimensions_at_zero(shape, indices):
            return None
        shape = [size for size, index in zip(shape, indices) if constant_index(index) is None]
    steps = whole_tile_steps(loop, shape)
    if steps is None or any(not _at_ivs(memory_access(s)[1], ivs) or
                            access_width(s) != steps[-1] for s in stores):
        return None
    return loop


def _unit_dimensions_at_zero(shape: list, indices: list) -> bool:
    """Whether every index that is a constant indexes a dimension of size 1 at 0."""
    for size, index in zip(shape, indices):
        value = constant_index(index)
        if value is not None and (size != 1 or value != 0):
            return False
    return True


def _at_ivs(indices: list, ivs: list) -> bool:
    """Whether `indices` are the loop's induction variables in order, with constant 0s
    (_unit_dimensions_at_zero) between them."""
    return [index for index in indices if constant_index(index) is None] == ivs and \
        all(constant_index(index) == 0 for index in indices if index not in ivs)


def _reads_only_own_elements(loop, old: ir.Value, stores: list) -> bool:
    """Whether every use of `old` inside `loop` is a read at the stores' indices and
    width, in their block, before the first of them."""
    first_store = min((op_of(s) for s in stores), key=_position)
    indices = memory_access(stores[0])[1]
    width = access_width(stores[0])
    for user in users_through_views(old):
        if not is_nested_in(user, loop):
            continue
        access = memory_access(user)
        if access is None or access[2] or access[0] != old or \
                not _same_indices(access[1], indices) or \
                access_width(user) != width or op_of(user).block != first_store.block or \
                not op_of(user).is_before_in_block(first_store):
            return False
    return True


def _same_indices(left: list, right: list) -> bool:
    """The same values, or constants of the same value."""
    return len(left) == len(right) and all(
        a == b or (constant_index(a) is not None and constant_index(a) == constant_index(b))
        for a, b in zip(left, right))


def _touched_between(tile: ir.Value, first, last) -> bool:
    """Whether an op strictly between `first` and `last` (ops of one block) uses `tile`
    or a view of it."""
    block = op_of(first).block
    low, high = _position(first), _position(last)
    return any(low < _position(top) < high
               for user in users_through_views(tile)
               if (top := ancestor_in(user, block)) is not None)
