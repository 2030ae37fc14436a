"""Structured control flow: scf.for, scf.if, scf.index_switch and scf.while.

Each op is rebuilt around the converted body of its regions (`KernelConverter.
convert_region`). What crosses a region boundary travels flattened (values.flatten,
pointer_types.carried_types): a pointer as its offsets, a pointer chosen between
buffers as its `which` and one offset per buffer.

Tiles keep one buffer across the op, as the memref stage requires
(docs/memref-stage.md): a loop copies what it yields into its iter_args
(destination-passing style), and the branches of an if or switch store tensor
results into a buffer made before the op instead of yielding them. Loops that move
a pointer tensor with block structure (the matmul idiom `a_ptrs += BLOCK_K * s`)
carry only its scalar base, so that loads in the body stay block copies.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, bufferization, scf

from . import analysis
from . import builders as b
from . import choices
from . import memory
from . import versioning
from .pointer_types import carried_type, carried_types, is_pointer_type
from .values import Pointer, PointerChoice, PointerTensor, Value, flatten, rebuild


def scf_for(conv, op):
    # Pointer tensors with block structure are carried as their scalar base so that
    # loads in the loop stay block copies (the matmul idiom `a_ptrs += BLOCK_K * s`);
    # if the body breaks that structure the loop is rebuilt carrying whole offsets.
    try:
        _scf_for(conv, op, keep_blocks=True)
    except _NotABlockLoop:
        _scf_for(conv, op, keep_blocks=False)


def _scf_for(conv, op, keep_blocks: bool):
    lb, ub, step = (conv.get_value(op, v).value for v in list(op.operands)[:3])
    inits = [conv.get(v) for v in list(op.operands)[3:]]
    carried = [_block_carry(init) if keep_blocks else None for init in inits]
    flat_inits = [b.as_index(c.base) if c is not None else v
                  for init, c in zip(inits, carried) for v in flatten(init)]
    loop = scf.ForOp(lb, ub, step, flat_inits)
    old_body = op.regions[0].blocks[0]
    try:
        with ir.InsertionPoint(loop.body):
            conv.set(old_body.arguments[0], Value(loop.induction_variable))
            args = iter(loop.inner_iter_args)
            for old_arg, init, c in zip(list(old_body.arguments)[1:], inits, carried):
                conv.set(old_arg, _uncarry(init, c, _take(args, init, c)))
            _region_body(conv, op, old_body, inits, carried,
                         destinations=list(loop.inner_iter_args),
                         block_exit=versioning.loop_exit(
                             [arg.type for arg in loop.inner_iter_args]))
    except _NotABlockLoop:
        loop.operation.erase()
        raise
    results = iter(loop.results)
    for old, init, c in zip(op.results, inits, carried):
        conv.set(old, _uncarry(init, c, _take(results, init, c)))


def _block_carry(init):
    if isinstance(init, PointerTensor):
        return analysis.affine_of(init.offsets, len(init.shape))
    return None


def _uncarry(template, affine, values):
    if affine is None:
        return rebuild(template, values)
    (value,) = values
    block = analysis.AffineIndex(value, list(affine.strides))
    offsets = analysis.materialize(block, template.shape)
    return PointerTensor(template.buffer, Value(offsets, affine=block))


def _region_body(conv, op, block, templates, carried=None, destinations=None, buffers=None,
                 block_exit=None):
    """Converts a region's block whose scf.yield hands back values like `templates`
    (pointer tensors listed in `carried` travel as the base of their block).

    Yielded tensors are copied into `destinations` (the loop's iter_args, or one buffer
    per scf.if result) in destination-passing style: bufferization then keeps every
    loop-carried tile in one buffer instead of yielding fresh allocations, which the
    memref stage does not allow (docs/memref-stage.md). Tensors whose position has a
    memref in `buffers` are stored into it instead of being yielded (scf.if). With a
    `block_exit` (loop bodies), the rest of the block may be versioned (versioning.py).
    """
    carried = carried or [None] * len(templates)

    def on_return(yielded):
        flat = []
        for got, want, affine in zip(yielded, templates, carried):
            if isinstance(want, PointerChoice):
                flat.extend(flatten(_as_carried_choice(conv, op, got, want)))
                continue
            if choices.points_nowhere(got) and type(got) is type(want):
                got = rebuild(want, flatten(got))
            if type(got) is not type(want) or (
                    not isinstance(want, Value) and got.buffer != want.buffer):
                raise conv.error(op, "a loop or branch yields a pointer into a different "
                                     "buffer than it started with; not supported")
            if affine is None:
                flat.extend(flatten(got))
                continue
            block_of = analysis.affine_of(got.offsets, len(got.shape))
            if block_of is None or not analysis.same_strides(block_of, affine):
                raise _NotABlockLoop()
            flat.append(b.as_index(block_of.base))
        if destinations is not None:
            flat = [_copy_into(v, d) for v, d in zip(flat, destinations)]
        if buffers is not None:
            for v, buffer in zip(flat, buffers):
                if buffer is not None:
                    bufferization.MaterializeInDestinationOp(None, v, buffer, restrict=False,
                                                             writable=True)
            flat = [v for v, buffer in zip(flat, buffers) if buffer is None]
        scf.YieldOp(flat)

    conv.convert_region(block, on_return, block_exit)


def _as_carried_choice(conv, op, got, want: PointerChoice) -> PointerChoice:
    """A pointer a branch or loop body yields, as the choice `want` the op carries:
    over the same buffers, with a `which` of the same type (a branch template has
    none yet: tensors of pointers carry a tensor `which`)."""
    if any(buffer not in want.buffers for buffer in choices.buffers_of(got)):
        raise conv.error(op, "a loop yields a pointer into a buffer it did not start "
                             "with; not supported")
    choice = choices.as_choice(got, want.buffers)
    tensor_which = isinstance(want.options[0], PointerTensor) if want.which is None \
        else b.is_tensor(want.which.type)
    if tensor_which and not b.is_tensor(choice.which.type):
        return PointerChoice(choice.options,
                             b.splat(choice.which, choice.options[0].shape))
    if not tensor_which and b.is_tensor(choice.which.type):
        raise conv.error(op, "a loop carries a pointer chosen by one condition for the "
                             "whole tile and yields one chosen per element; not supported")
    return choice


def scf_if(conv, op):
    cond = conv.get_value(op, op.operands[0]).value
    then_block = op.regions[0].blocks[0]
    has_else = len(op.regions[1].blocks) > 0
    buffers, templates, yielded_types = _branch_results(
        conv, op, [region.blocks[0] for region in op.regions if len(region.blocks)])
    if_op = scf.IfOp(cond, yielded_types, has_else=has_else)
    with ir.InsertionPoint(if_op.then_block):
        _region_body(conv, op, then_block, templates, buffers=buffers)
    if has_else:
        with ir.InsertionPoint(if_op.else_block):
            _region_body(conv, op, op.regions[1].blocks[0], templates, buffers=buffers)
    _bind_branch_results(conv, op, buffers, templates, if_op.results)


def _branch_results(conv, op, blocks):
    """How the results of a branching op (scf.if, scf.index_switch) travel.

    Tensor results are not yielded: each branch stores its tile into one buffer made
    before the op, read back after it. Yielding tiles would make bufferization return
    a different buffer from each branch, which the memref stage cannot hold.
    -> (buffer or None per result, templates, types of the results still yielded)"""
    templates = _branch_templates(conv, op, blocks)
    result_types = [t for r, template in zip(op.results, templates)
                    for t in carried_types(r.type, template)]
    buffers = [memory.tile_buffer(b.shape_of(t), b.element_type(t)) if b.is_tensor(t)
               else None for t in result_types]
    return buffers, templates, [t for t, m in zip(result_types, buffers) if m is None]


def _bind_branch_results(conv, op, buffers, templates, yielded_results):
    yielded = iter(yielded_results)
    values = iter(memory.as_tensor(buffer) if buffer is not None else next(yielded)
                  for buffer in buffers)
    for old, t in zip(op.results, templates):
        count = len(carried_types(old.type, t))
        conv.set(old, rebuild(t, [next(values) for _ in range(count)]))


def scf_index_switch(conv, op):
    """scf.index_switch (lift-cf-to-scf makes one where several paths leave a function
    through one exit) -> a chain of scf.if, one per case, the default in the last
    else."""
    selector = conv.get_value(op, op.operands[0]).value
    cases = list(ir.DenseI64ArrayAttr(op.attributes["cases"]))
    default_block = op.regions[0].blocks[0]
    case_blocks = [region.blocks[0] for region in list(op.regions)[1:]]
    buffers, templates, yielded_types = _branch_results(
        conv, op, case_blocks + [default_block])

    def convert(block):
        _region_body(conv, op, block, templates, buffers=buffers)

    def chain(i):
        """scf.if for cases[i:], built at the current insertion point."""
        cond = arith.cmpi(arith.CmpIPredicate.eq, selector, b.const_index(cases[i]))
        if_op = scf.IfOp(cond, yielded_types, has_else=True)
        with ir.InsertionPoint(if_op.then_block):
            convert(case_blocks[i])
        with ir.InsertionPoint(if_op.else_block):
            if i + 1 == len(cases):
                convert(default_block)
            else:
                scf.YieldOp(list(chain(i + 1).results))
        return if_op

    if not cases:
        execute = scf.ExecuteRegionOp(yielded_types)
        with ir.InsertionPoint(execute.regions[0].blocks.append()):
            convert(default_block)
        results = execute.results
    else:
        results = chain(0).results
    _bind_branch_results(conv, op, buffers, templates, results)


def _branch_templates(conv, op, blocks):
    """What each result of a branching op is; pointers take their buffers from the
    values the branches yield (defined outside the branch, or built from such values).
    A pointer that comes from different buffers in different branches is a
    `PointerChoice` over all of them."""
    terminators = [list(block.operations)[-1] for block in blocks]
    templates = []
    for i, r in enumerate(op.results):
        if not is_pointer_type(r.type):
            templates.append(Value(r))  # only the kind matters
            continue
        buffers = choices.union(*[_buffers_of(conv, t.operands[i]) for t in terminators])
        if not buffers:
            raise conv.error(op, "cannot tell which buffer a pointer chosen by scf.if "
                                 "points into")
        kind = PointerTensor if b.is_tensor(r.type) else Pointer
        options = [kind(buffer, None) for buffer in buffers]
        templates.append(options[0] if len(options) == 1 else PointerChoice(options, None))
    return templates


def _buffers_of(conv, v: ir.Value) -> list:
    """The kernel buffers a TTIR pointer value may point into, by walking its
    definition (selects and scf.if take the buffers of every value they choose from)."""
    for _ in range(1000):
        if v in conv.values:
            return choices.buffers_of(conv.values[v])
        owner = v.owner
        if isinstance(owner, ir.Block) or not owner.operands:
            return []
        owner = owner.operation
        if owner.name == "arith.select":
            return choices.union(_buffers_of(conv, owner.operands[1]),
                                 _buffers_of(conv, owner.operands[2]))
        if owner.name == "scf.if":
            i = ir.OpResult(v).result_number
            return choices.union(*[
                _buffers_of(conv, list(region.blocks[0].operations)[-1].operands[i])
                for region in owner.regions if len(region.blocks)])
        v = owner.operands[0]
    return []


def scf_while(conv, op):
    inits = [conv.get(v) for v in op.operands]
    before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    condition = list(before.operations)[-1]
    passed_ttir = list(condition.operands)[1:]
    # Positions where scf.condition passes the before region's argument on unchanged.
    # Only there may a pointer chosen between buffers travel on: the results must be
    # typed before the before region is converted.
    through = [i < len(inits) and v == before.arguments[i]
               for i, v in enumerate(passed_ttir)]
    chosen = [through[i] and isinstance(inits[i], PointerChoice)
              for i in range(len(passed_ttir))]
    flat_inits = [v for init in inits for v in flatten(init)]
    result_groups = [[v.type for v in flatten(inits[i])] if chosen[i]
                     else [carried_type(r.type)] for i, r in enumerate(op.results)]
    result_types = [t for group in result_groups for t in group]
    while_op = scf.WhileOp(result_types, flat_inits)
    before_block = while_op.before.blocks.append(*[v.type for v in flat_inits])
    after_block = while_op.after.blocks.append(*result_types)
    with ir.InsertionPoint(before_block):
        args = iter(before_block.arguments)
        for old, t in zip(before.arguments, inits):
            conv.set(old, rebuild(t, [next(args) for _ in flatten(t)]))
        saved = conv.yield_sink
        conv.yield_sink = None
        for inner in list(before.operations)[:-1]:
            conv.convert_op(inner.operation)
        conv.yield_sink = saved
        cond = conv.get_value(op, condition.operands[0]).value
        passed = [conv.get(v) for v in passed_ttir]
        if any(isinstance(p, PointerChoice) and not c for p, c in zip(passed, chosen)):
            raise conv.error(op, "a while loop's condition passes on a pointer that "
                                 "selects between different buffers and is not the "
                                 "loop's own argument; not supported")
        # What the after region and the results are: like the values passed on
        # (pointers keep the buffers they point into).
        after_templates = [p if c else rebuild(p, [None]) if not isinstance(p, Value)
                           else Value(None) for p, c in zip(passed, chosen)]
        with condition.location:
            scf.ConditionOp(cond, [v for p in passed for v in flatten(p)])
    after_groups = _grouped(after_block.arguments, result_groups)
    with ir.InsertionPoint(after_block):
        for old, group, t in zip(after.arguments, after_groups, after_templates):
            conv.set(old, rebuild(t, group))
        # Yielded tiles go into the buffers that flowed in (bufferization wants the
        # yielded values equivalent to the loop arguments): the after region's
        # arguments where the condition passed the loop's arguments on unchanged.
        destinations = [d for i, init in enumerate(inits)
                        for d in (after_groups[i] if i < len(through) and through[i]
                                  else [None] * len(flatten(init)))]
        _region_body(conv, op, after, inits, destinations=destinations)
    for old, group, t in zip(op.results, _grouped(while_op.results, result_groups),
                             after_templates):
        conv.set(old, rebuild(t, group))


class _NotABlockLoop(Exception):
    """A loop-carried pointer tensor loses its block structure in the loop body."""


def _take(values, init, affine) -> list:
    """The next values of `values` that carry `init` (one for a block-carried pointer)."""
    return [next(values) for _ in (flatten(init) if affine is None else [None])]


def _grouped(values, groups) -> list:
    """`values` cut into consecutive lists as long as the lists of `groups`."""
    values = iter(values)
    return [[next(values) for _ in group] for group in groups]


def _copy_into(value: ir.Value, destination) -> ir.Value:
    if destination is None or not b.is_tensor(value.type) or _already_in(value, destination):
        return value
    return bufferization.MaterializeInDestinationOp(value.type, value, destination).result


def _already_in(value: ir.Value, destination: ir.Value) -> bool:
    """Whether `value` is `destination` updated in place: the result of an inner loop
    that carried `destination` (nested loops around one accumulator), of a copy into it,
    or the value itself. Copying such a value into `destination` again would read the
    buffer after the inner loop overwrote it, which one-shot bufferization reports as a
    read-after-write conflict."""
    seen = 0
    while value != destination and seen < 1000:
        seen += 1
        owner = value.owner if isinstance(value, ir.OpResult) else None
        if owner is None:
            return False
        if owner.name == "scf.for":
            # results follow (lb, ub, step, inits...)
            value = owner.operands[3 + ir.OpResult(value).result_number]
        elif owner.name == "bufferization.materialize_in_destination":
            value = owner.operands[1]
        else:
            return False
    return value == destination
