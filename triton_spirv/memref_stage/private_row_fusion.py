"""Private row fusion (GPU shape): a work-item's loops over its rows of private tiles
become one loop, and each tile one row.

Work-group sharing gives each work-item rows of every tile it owns alone, as private
arrays (`float x_tile[2 * 4]`: round r of the distribution holds row r), and each
program step its own loop over the rounds: a load of `x` into its rows, a load of `y`,
the sum, the store. An OpenCL compiler that keeps those arrays in memory (Intel's CPU
runtime does) then writes and reads every element through the stack, where a GPU
engineer writes one loop that loads a row into registers, computes and stores it. This
pass makes that loop: consecutive loops over the same rounds, with nothing but pure ops
between them, fuse into the last when

- every private array they share is accessed only at row `round` of the loop at hand
  (so round r of one loop touches only what round r of another does), and
- no buffer that one of them writes is accessed by another (a work-item's stores and
  loads of global or `__local` memory keep their order), and
- none holds a barrier or another gpu op that involves other work-items
  (collectives, shuffles).

A loop wrapped alone in a branch on a value defined before it (the zero fill of a partial
tile, `if (is_partial) for r ...`) joins as the branch inside the fused loop. Each
private array that only the fused loop uses then shrinks to the one row a round holds,
which OpenCL compilers keep in registers.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, memref, scf

from ..ir_helpers import constant_index, holds, op_of, owner, root_buffer
from .affine_nests import is_nested_in
from .work_group_sharing import is_private

_PURE_PREFIXES = ("arith.", "math.", "index.")
_PURE_OPS = {"memref.reinterpret_cast", "memref.subview", "memref.cast", "memref.alloca",
             "memref.dim", "vector.broadcast", "vector.splat", "affine.apply",
             "gpu.thread_id", "gpu.block_id", "gpu.block_dim", "gpu.grid_dim"}
_ACCESSES = {"memref.load": 0, "memref.store": 1, "vector.load": 0, "vector.store": 1}
_WRITES = {"memref.store", "vector.store", "memref.copy", "memref.atomic_rmw",
           "memref.generic_atomic_rmw", "vector.transfer_write"}
# gpu ops that are not work-item ids: barriers, collectives, shuffles, printf. A loop
# holding one synchronizes or talks with other work-items; it is left as it stands.
_WORK_ITEM_IDS = ("gpu.thread_id", "gpu.block_id", "gpu.block_dim", "gpu.grid_dim")


def synchronizes(op) -> bool:
    """Whether `op` is a gpu op other than a work-item or group id."""
    return op.name.startswith("gpu.") and op.name not in _WORK_ITEM_IDS


def holds_synchronization(op) -> bool:
    """Whether `op` or an op nested in it synchronizes (see `synchronizes`)."""
    return holds(op, synchronizes)


def fuse_private_rows(module: ir.Module) -> int:
    """Fuses the loops over private rows in every block of `module`; returns how many
    loops were fused into others."""
    fused = 0
    for block in _blocks(module.operation):
        fused += _fuse_in_block(block)
    return fused


def _blocks(op):
    for region in op_of(op).regions:
        for block in region.blocks:
            yield block
            for inner in block.operations:
                yield from _blocks(inner)


def _fuse_in_block(block) -> int:
    fused, group = 0, []
    for op in list(block.operations):
        op = op_of(op)
        loop = _member_loop(op)
        if loop is not None:
            if group and _same_rounds(_member_loop(group[-1]), loop) and _fusable(group + [op]):
                group.append(op)
                continue
            fused += _fuse(group)
            group = [op]
        elif not _is_pure(op):
            fused += _fuse(group)
            group = []
    return fused + _fuse(group)


def _member_loop(op):
    """The scf.for of a group member: a loop without results, or a branch without
    results or else that holds such a loop alone."""
    if op.name == "scf.if" and not op.results and len(op.regions[1].blocks) == 0:
        inner = [op_of(o) for o in op.regions[0].blocks[0].operations]
        if len(inner) == 2 and inner[0].name == "scf.for":
            op = inner[0]
        else:
            return None
    if op.name == "scf.for" and not op.results:
        return op
    return None


def _same_rounds(a, b) -> bool:
    return all(_same_value(x, y) for x, y in zip(list(a.operands)[:3], list(b.operands)[:3]))


def _same_value(a: ir.Value, b: ir.Value) -> bool:
    if a == b:
        return True
    ca, cb = constant_index(a), constant_index(b)
    return ca is not None and ca == cb


def _is_pure(op) -> bool:
    return not op.regions and (op.name.startswith(_PURE_PREFIXES) or op.name in _PURE_OPS)


def _fusable(members: list) -> bool:
    """Whether `members` may run as one loop (the module docstring's conditions)."""
    written, accessed, private_uses = [], [], {}
    for member in members:
        loop = _member_loop(member)
        effects = _effects(loop)
        if effects is None:
            return False
        writes, reads, privates = effects
        written.append(writes)
        accessed.append(writes | reads)
        for buffer in privates:
            private_uses[buffer] = private_uses.get(buffer, 0) + 1
    for i, writes in enumerate(written):
        for j, touched in enumerate(accessed):
            if i != j and writes & touched:
                return False
    return any(count > 1 for count in private_uses.values())


def _effects(loop):
    """(buffers written, buffers read, private arrays used at row `round`) of `loop`, or
    None when it holds a barrier, an unknown memory op, or a private array used
    elsewhere than at its row."""
    round_ = loop.regions[0].blocks[0].arguments[0]
    writes, reads, privates = set(), set(), set()
    ok = True

    def visit(inner):
        nonlocal ok
        name = inner.name
        if synchronizes(inner):
            ok = False
            return ir.WalkResult.INTERRUPT
        for operand in [v for v in inner.operands if isinstance(v.type, ir.MemRefType)]:
            root = root_buffer(operand)
            if is_private(root):
                if operand != root or not _at_row(inner, round_):
                    ok = False
                    return ir.WalkResult.INTERRUPT
                privates.add(root)
                continue
            written = name in _WRITES and _written_operand(inner, operand)
            (writes if written else reads).add(root)
        return ir.WalkResult.ADVANCE

    loop.walk(visit)
    return (writes, reads, privates) if ok else None


def _at_row(access, round_: ir.Value) -> bool:
    """Whether `access` is a load or store of row `round_` alone: its first index, and a
    vector's elements along a later dimension (a rank-1 array's vector would span
    rows)."""
    if access.name not in _ACCESSES:
        return False
    indices = _indices(access)
    rank = len(indices)
    return rank > 0 and indices[0] == round_ and (rank > 1 or access.name.startswith("memref."))



def _indices(access) -> list:
    """The indices of a load or store (after its memref operand)."""
    base = _ACCESSES[access.name] + 1
    return list(access.operands)[base:]


def _written_operand(op, memref: ir.Value) -> bool:
    if op.name in _ACCESSES:
        return _ACCESSES[op.name] == 1 and list(op.operands)[1] == memref
    if op.name == "memref.copy":
        return list(op.operands)[1] == memref
    return True


def _fuse(group: list) -> int:
    """Moves the bodies of all but the last member of `group` to the start of the last
    one's body, in order, each under its branch if it had one; returns how many members
    were fused."""
    if len(group) < 2:
        return 0
    last = _unwrapped(group[-1])
    body = last.regions[0].blocks[0]
    round_ = body.arguments[0]
    first = op_of(list(body.operations)[0])
    for member in group[:-1]:
        loop = _member_loop(member)
        ops = [op_of(o) for o in list(loop.regions[0].blocks[0].operations)[:-1]]
        anchor = first
        if loop is not member:
            anchor = _guard_before(first, member)
        for inner in ops:
            inner.move_before(anchor)
        loop.regions[0].blocks[0].arguments[0].replace_all_uses_with(round_)
        member.erase()
    _shrink_privates(last)
    return len(group) - 1


def _guard_before(at, branch):
    """A new `scf.if` on `branch`'s condition before `at`; returns its yield, before
    which ops go into it."""
    with ir.InsertionPoint(at), branch.location:
        guard = scf.IfOp(branch.operands[0])
    with ir.InsertionPoint(guard.then_block), branch.location:
        return op_of(scf.YieldOp([]))


def _unwrapped(member):
    """`member`'s loop; a loop wrapped in a branch is moved out of it, its body into
    the branch."""
    loop = _member_loop(member)
    if loop is member:
        return loop
    body = loop.regions[0].blocks[0]
    ops = [op_of(o) for o in body.operations]
    anchor = _guard_before(ops[-1], member)
    for inner in ops[:-1]:
        inner.move_before(anchor)
    loop.move_before(member)
    member.erase()
    return loop


def _shrink_privates(loop) -> None:
    """Each private array that only `loop` uses, at its row `round`, becomes one row."""
    round_ = loop.regions[0].blocks[0].arguments[0]
    allocas = []
    for value in _private_operands(loop):
        alloca = op_of(owner(value))
        if alloca not in allocas:
            allocas.append(alloca)
    for alloca in allocas:
        uses = [op_of(use.owner) for use in alloca.results[0].uses]
        if not all(is_nested_in(use, loop) and _at_row(use, round_) for use in uses):
            continue
        old = ir.MemRefType(alloca.results[0].type)
        with ir.InsertionPoint(alloca), alloca.location:
            row = ir.MemRefType.get([1] + list(old.shape[1:]), old.element_type,
                                    memory_space=old.memory_space)
            shrunk = memref.AllocaOp(row, [], [])
            zero = arith.constant(ir.IndexType.get(), 0)
        alloca.results[0].replace_all_uses_with(shrunk.result)
        alloca.erase()
        for use in uses:
            use.operands[_ACCESSES[use.name] + 1] = zero


def _private_operands(loop) -> list:
    found = []

    def visit(inner):
        found.extend(v for v in inner.operands
                     if isinstance(v.type, ir.MemRefType) and is_private(v))
        return ir.WalkResult.ADVANCE
    loop.walk(visit)
    return found

