"""The scatter emitter: the output takes the operand (a copy kernel), then a second
kernel applies the updates with the scatter's combiner. Work-items are spread over the
elements of one update window and walk the scatter indices in order, so that updates
of the same element are applied one after the other (no atomics needed). When
windows may overlap along the scattered dimensions, one work-item does everything.
Windows that do not fit the operand are skipped, as XLA specifies."""
from __future__ import annotations

from math import prod

from mlir import ir
from mlir.dialects import arith, scf, tensor

from ..elemental import Elemental, const_index
from ..errors import HloUnsupportedError, where
from ..scalar_code import to_index
from .heroes import EmitterChoice
from .base import FusionBuilder, apply_linear, cdiv, cmp_lt, delinearize, linearize, to_storage
from .dynamic_update_slice import emit_operand_copy



def try_scatter(computation):
    root = computation.root
    if root.opcode != "scatter":
        return None
    if len(root.operands) != 3:
        raise HloUnsupportedError(f"{where(root)}: variadic scatter is not supported")
    return EmitterChoice("scatter", [root], [root] + list(root.operands),
                         lambda b: emit_scatter(b, root), "root is a scatter")


def emit_scatter(builder: FusionBuilder, root) -> None:
    operand, indices, updates = root.operands
    update_window_dims = root.int_list("update_window_dims", ())
    inserted = root.int_list("inserted_window_dims", ())
    to_operand = root.int_list("scatter_dims_to_operand_dims", ())
    ivd = root.int_attr("index_vector_dim", indices.shape.rank)
    if root.int_list("input_batching_dims", ()):
        raise HloUnsupportedError(f"{where(root)}: scatter batching dims are not supported")
    upd_dims = updates.shape.dims
    scatter_dims = [d for d in range(len(upd_dims)) if d not in update_window_dims]
    window_sizes = [upd_dims[d] for d in update_window_dims]
    n_updates = prod(upd_dims[d] for d in scatter_dims)
    window_elems = prod(window_sizes)
    window_operand_dims = [d for d in range(operand.shape.rank) if d not in inserted]
    full_window = [1] * operand.shape.rank
    for d, s in zip(window_operand_dims, window_sizes):
        full_window[d] = s
    overlapping = any(full_window[d] > 1 for d in to_operand)
    threads = 1 if overlapping else min(builder.target.threads, max(1, window_elems))
    blocks = 1 if overlapping else cdiv(window_elems, threads)

    emit_operand_copy(builder, root, operand)
    builder.report.launch.append(
        f"{builder.name}_update: grid {blocks} x local {threads} work-items over the "
        f"window ({window_elems} elements), {n_updates} scatter indices in order"
        + (" (windows overlap along scattered dimensions: one work-item)" if overlapping else ""))
    combiner = root.called_computation()
    et = root.shape.element
    with builder.kernel("update", threads) as k:
        em = Elemental(builder, k.tensors, inline_all=True)
        elems_per_item = window_elems if overlapping else 1
        w0 = apply_linear([(k.block_id, threads), (k.thread_id, 1)])
        out = k.outputs[0]
        outer = scf.ForOp(const_index(0), const_index(elems_per_item), const_index(1), [out])
        with ir.InsertionPoint(outer.body):
            w = arith.addi(w0, outer.induction_variable)
            carried = outer.inner_iter_args[0]
            ok_w = cmp_lt(w, const_index(window_elems))
            wop = scf.IfOp(ok_w, [out.type], has_else=True)
            with ir.InsertionPoint(wop.then_block):
                widx = delinearize(w, window_sizes)
                loop = scf.ForOp(const_index(0), const_index(n_updates), const_index(1), [carried])
                with ir.InsertionPoint(loop.body):
                    cur = loop.inner_iter_args[0]
                    sidx = delinearize(loop.induction_variable, [upd_dims[d] for d in scatter_dims])
                    start = [const_index(0)] * operand.shape.rank
                    for kk, od in enumerate(to_operand):
                        iidx = list(sidx)
                        if ivd < indices.shape.rank:
                            iidx.insert(ivd, const_index(kk))
                        v = builder.root_values(indices, iidx, k.tensors)[0]
                        start[od] = to_index(v, indices.shape.element)
                    ok = _window_fits(start, operand.shape.dims, full_window)
                    op_idx = list(start)
                    for d, wi in zip(window_operand_dims, widx):
                        op_idx[d] = arith.addi(start[d], wi)
                    uidx = [None] * len(upd_dims)
                    for d, v in zip(scatter_dims, sidx):
                        uidx[d] = v
                    for d, v in zip(update_window_dims, widx):
                        uidx[d] = v
                    apply = scf.IfOp(ok, [cur.type], has_else=True)
                    with ir.InsertionPoint(apply.then_block):
                        flat = linearize(op_idx, operand.shape.dims)
                        old = tensor.extract(cur, [flat])
                        if et.name in ("f16", "bf16"):
                            old = arith.extf(ir.F32Type.get(), old)
                        upd = builder.root_values(updates, uidx, k.tensors)[0]
                        new = em.apply_computation(combiner, [old, upd])[0]
                        scf.yield_([tensor.insert(to_storage(new, et), cur, [flat])])
                    with ir.InsertionPoint(apply.else_block):
                        scf.yield_([cur])
                    scf.yield_([apply.results[0]])
                scf.yield_([loop.results[0]])
            with ir.InsertionPoint(wop.else_block):
                scf.yield_([carried])
            scf.yield_([wop.results[0]])
        k.finish([outer.results[0]], blocks, "scatter updates")


def _window_fits(start, operand_dims, window) -> ir.Value:
    """i1: the window at `start` lies inside the operand (always, for a rank-0 operand:
    its one window is the whole operand)."""
    fits = None
    for d, (size, extent) in enumerate(zip(operand_dims, window)):
        c = arith.andi(arith.cmpi(arith.CmpIPredicate.sge, start[d], const_index(0)),
                       arith.cmpi(arith.CmpIPredicate.sle, start[d], const_index(size - extent)))
        fits = c if fits is None else arith.andi(fits, c)
    return fits if fits is not None else arith.constant(ir.IntegerType.get_signless(1), 1)
