"""Elemental emission: the MLIR scalar code that computes one element of an HLO
instruction at a given output index.

`Elemental.value(instr, indices)` returns the instruction's element(s) at `indices`
(index-typed MLIR values, one per output dimension), emitting its operands recursively
until it reaches the edge of the subgraph: parameters become `tensor.extract`, other
subgraphs' roots become `func.call`s, injected hero values are used as given.

Elementwise opcodes are built from the table `ELEMENTWISE` (elementwise.py: opcode ->
builder of one scalar from the operands' scalars); pure index transforms go through
their indexing maps (indexing.py); reduce, reduce-window, dot, gather, dynamic-slice,
dynamic-update-slice, map and iota have builders of their own in `SPECIAL`.

Values of 16-bit float types are held as f32 (compute precision) and rounded only
when stored and by explicit converts.
"""
from __future__ import annotations

import math as pymath
from typing import Callable

import numpy as np
from mlir import ir
from mlir.dialects import arith, tensor

from .convolution import emit_convolution
from .elementwise import ELEMENTWISE, convert_value
from .errors import HloUnsupportedError, where
from .indexing import INDEX_TRANSFORMS, operand_map
from .mlir_types import compute_type, const_index, scalar_constant
from .scalar_code import (apply_map, clamp_index, if_else, loop_nest, to_index,
                          window_input_positions)
from .shapes import ELEMENT_TYPES, ElementType


class DimKey(str):
    """The key of a dynamic dimension's index value in a `tensors` dict (next to the
    parameter tensors, so that it travels wherever they do)."""

    def __hash__(self):
        return hash(("dim", str(self)))

    def __eq__(self, other):
        return isinstance(other, DimKey) and str.__eq__(self, other)


def dim_value(tensors, d) -> ir.Value:
    """A dimension (int or symbol) as an index value."""
    if isinstance(d, int):
        return const_index(d)
    try:
        return tensors[DimKey(d)]
    except (KeyError, TypeError):
        raise HloUnsupportedError(f"dynamic dimension '{d}' has no value here") from None



def parse_scalar_literal(text: str, et: ElementType):
    text = text.strip()
    if et.is_pred:
        return text.lower() in ("true", "1")
    if et.is_float:
        lowered = text.lower()
        if lowered in ("inf", "+inf"):
            return pymath.inf
        if lowered == "-inf":
            return -pymath.inf
        if lowered in ("nan", "-nan", "+nan"):
            return pymath.nan
        return float(text)
    return int(text, 0) if text.startswith(("0x", "-0x")) else int(float(text)) \
        if "e" in text.lower() else int(text)


def literal_array(instr) -> np.ndarray:
    """The value of a constant instruction as a numpy array (bf16 as float32)."""
    text = instr.literal or ""
    if "..." in text:
        raise HloUnsupportedError(f"{where(instr)}: the constant's value was elided in "
                                  f"the text ({{...}}); print the module with large "
                                  f"constants")
    import re
    tokens = re.findall(r"[-+]?(?:inf|nan|true|false|0x[0-9a-fA-F]+|"
                        r"\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)",
                        text.replace("{", " ").replace("}", " "), flags=re.IGNORECASE)
    et = instr.shape.element
    values = [parse_scalar_literal(t, et) for t in tokens]
    size = instr.shape.size
    if len(values) != size:
        raise HloUnsupportedError(f"{where(instr)}: constant has {len(values)} values, "
                                  f"its shape {instr.shape} needs {size}")
    dtype = np.float32 if et.name == "bf16" else np.dtype(et.numpy)
    return np.array(values, dtype=dtype).reshape(instr.shape.dims)


# ---------------------------------------------------------------------------
# Emitting index expressions
# ---------------------------------------------------------------------------

# ---------------------------------------------------------------------------
# The emitter
# ---------------------------------------------------------------------------


class Elemental:
    """Emits elements of the instructions of one subgraph (or one epilogue)."""

    def __init__(self, fusion, tensors: dict, current=None, injected: dict | None = None,
                 inline_all: bool = False):
        self.fusion = fusion          # FusionBuilder: partition, functions, locations
        self.tensors = tensors        # parameter instruction -> tensor value
        self.current = current        # the Subgraph being emitted
        self.injected = injected or {}
        self.inline_all = inline_all
        self.scopes: list[dict] = [{}]

    # -- caching per region ----------------------------------------------------

    def _lookup(self, key):
        for scope in reversed(self.scopes):
            if key in scope:
                return scope[key]
        return None

    def in_region(self, fn):
        """Runs `fn` with a fresh cache scope: values made inside a region must not
        be reused outside it."""
        self.scopes.append({})
        try:
            return fn()
        finally:
            self.scopes.pop()

    # -- entry point -------------------------------------------------------------

    def value(self, instr, indices) -> list[ir.Value]:
        """The element(s) of `instr` at `indices`: one value per tuple leaf."""
        key = (instr, tuple(indices))
        found = self._lookup(key)
        if found is not None:
            return found
        with self.fusion.location(instr):
            result = self._emit(instr, list(indices))
        self.scopes[-1][key] = result
        return result

    def scalar(self, instr, indices) -> ir.Value:
        return self.value(instr, indices)[0]

    def dim(self, d) -> ir.Value:
        """A dimension (int or symbol) as an index value."""
        return dim_value(self.tensors, d)

    def _emit(self, instr, indices) -> list[ir.Value]:
        if instr in self.injected:
            return list(self.injected[instr])
        if instr.opcode == "parameter":
            return [self._extract_parameter(instr, indices)]
        owner = self.fusion.partition.of(instr)
        emit_here = (self.inline_all or owner is None or owner is self.current)
        if not emit_here and owner.root is instr:
            return self.fusion.call(owner, self.tensors, indices)
        if not emit_here:
            raise HloUnsupportedError(f"{where(instr)}: not reachable from subgraph "
                                      f"{self.current.name if self.current else '?'}")
        return self._emit_here(instr, indices)

    def _extract_parameter(self, instr, indices) -> ir.Value:
        if instr not in self.tensors:
            raise HloUnsupportedError(f"{where(instr)}: parameter has no tensor")
        value = tensor.extract(self.tensors[instr], indices)
        et = instr.shape.element
        if et.name in ("f16", "bf16"):
            value = arith.extf(compute_type(et), value)
        return value

    def _emit_here(self, instr, indices) -> list[ir.Value]:
        op = instr.opcode
        if op == "constant":
            return [self._constant(instr, indices)]
        if op in ELEMENTWISE:
            args = [self.scalar(o, self._operand_indices(instr, k, indices))
                    for k, o in enumerate(instr.operands)]
            return [ELEMENTWISE[op](self, instr, args)]
        special = SPECIAL.get(op)
        if special is not None:
            return special(self, instr, indices)
        if op in INDEX_TRANSFORMS:
            return self._index_transform(instr, indices)
        raise HloUnsupportedError(f"{where(instr)}: opcode {op} has no elemental emitter")

    def _operand_indices(self, instr, k, indices):
        if instr.operands[k].shape.rank == 0:
            return []
        return indices

    def _constant(self, instr, indices) -> ir.Value:
        if instr.shape.rank == 0:
            value = literal_array(instr).reshape(()).item()
            return scalar_constant(instr.shape.element, value)
        # Array constants travel as extra kernel buffers (like XLA's constant buffers).
        buffer = self.fusion.constant_tensor(instr, self.tensors)
        value = tensor.extract(buffer, indices)
        et = instr.shape.element
        if et.name in ("f16", "bf16"):
            value = arith.extf(compute_type(et), value)
        return value

    def _index_transform(self, instr, indices) -> list[ir.Value]:
        op = instr.opcode
        if op == "pad":
            return [self._pad(instr, indices)]
        if op == "concatenate":
            return [self._concatenate(instr, indices, 0)]
        m = operand_map(instr, 0)
        operand_indices, _ = apply_map(m, indices)
        return self.value(instr.operands[0], operand_indices)

    def _pad(self, instr, indices) -> ir.Value:
        m = operand_map(instr, 0)
        operand_indices, inside = apply_map(m, indices)
        t = compute_type(instr.shape.element)
        if inside is None:
            return self.scalar(instr.operands[0], operand_indices)
        return if_else(inside, [t],
                       lambda: self.in_region(lambda: [self.scalar(instr.operands[0], operand_indices)]),
                       lambda: self.in_region(lambda: [self.scalar(instr.operands[1], [])]))[0]

    def _concatenate(self, instr, indices, k) -> ir.Value:
        m = operand_map(instr, k)
        operand_indices, inside = apply_map(m, indices)
        if k == len(instr.operands) - 1:
            return self.scalar(instr.operands[k], operand_indices)
        t = compute_type(instr.shape.element)
        return if_else(inside, [t],
                       lambda: self.in_region(lambda: [self.scalar(instr.operands[k], operand_indices)]),
                       lambda: self.in_region(lambda: [self._concatenate(instr, indices, k + 1)]))[0]

    # -- called computations (reducers, map) ----------------------------------

    def apply_computation(self, computation, args: list[ir.Value]) -> list[ir.Value]:
        """Emits a scalar computation (a reducer) on `args`; returns its root leaves."""
        values: dict = {}
        for instr in computation.post_order():
            with self.fusion.location(instr):
                values[instr] = self._scalar_instruction(instr, values, args)
        return values[computation.root]

    def _scalar_instruction(self, instr, values, args) -> list[ir.Value]:
        op = instr.opcode
        if op == "parameter":
            return [args[instr.parameter_number]]
        if op == "constant":
            return [scalar_constant(instr.shape.element, literal_array(instr).reshape(-1)[0].item())]
        if op == "tuple":
            return [v for o in instr.operands for v in values[o]]
        if op == "get-tuple-element":
            return [values[instr.operands[0]][instr.int_attr("index")]]
        if op in ELEMENTWISE:
            return [ELEMENTWISE[op](self, instr, [values[o][0] for o in instr.operands])]
        if op == "bitcast" and instr.shape.element != instr.operands[0].shape.element:
            # A scalar bitcast between types of one width (comparators of float
            # sorts) reinterprets the bits.
            return [ELEMENTWISE["bitcast-convert"](self, instr, [values[instr.operands[0]][0]])]
        if op in ("broadcast", "reshape", "bitcast") and instr.shape.size == 1:
            return values[instr.operands[0]]
        raise HloUnsupportedError(f"{where(instr)}: {op} is not supported in a scalar "
                                  f"(reducer) computation")


# ---------------------------------------------------------------------------
# Builders of instructions that are not elementwise or pure index transforms
# ---------------------------------------------------------------------------


def reduce_operands(instr):
    n = len(instr.operands) // 2
    return instr.operands[:n], instr.operands[n:]


def _reduce(em: Elemental, instr, indices) -> list[ir.Value]:
    inputs, inits = reduce_operands(instr)
    dims = set(instr.dimensions())
    in_shape = inputs[0].shape
    reduced = [d for d in range(in_shape.rank) if d in dims]
    init_values = [em.scalar(i, []) for i in inits]
    reducer = instr.called_computation()

    def body(ivs, accs):
        full, it_kept, it_red = [], iter(indices), iter(ivs)
        for d in range(in_shape.rank):
            full.append(next(it_red) if d in dims else next(it_kept))

        def step():
            vals = [em.scalar(x, full) for x in inputs]
            return em.apply_computation(reducer, list(accs) + vals)
        return em.in_region(step)
    return loop_nest([_extent(em, in_shape.dims[d]) for d in reduced], init_values, body)


def _reduce_window(em: Elemental, instr, indices) -> list[ir.Value]:
    inputs, inits = reduce_operands(instr)
    window = instr.window()
    in_dims = inputs[0].shape.dims
    init_values = [em.scalar(i, []) for i in inits]
    reducer = instr.called_computation()
    types = [v.type for v in init_values]

    def body(ivs, accs):
        def step():
            positions, inside = window_input_positions(indices, ivs, window, in_dims)

            def apply():
                return em.in_region(lambda: em.apply_computation(
                    reducer, list(accs) + [em.scalar(x, positions) for x in inputs]))
            if inside is None:
                return apply()
            return if_else(inside, types, apply, lambda: list(accs))
        return em.in_region(step)
    return loop_nest(list(window["size"]), init_values, body)


def _dot(em: Elemental, instr, indices) -> list[ir.Value]:
    lhs, rhs = instr.operands
    lb, rb = instr.int_list("lhs_batch_dims", ()), instr.int_list("rhs_batch_dims", ())
    lc, rc = instr.int_list("lhs_contracting_dims", ()), instr.int_list("rhs_contracting_dims", ())
    lfree = [d for d in range(lhs.shape.rank) if d not in lb and d not in lc]
    rfree = [d for d in range(rhs.shape.rank) if d not in rb and d not in rc]
    out_et = instr.shape.element
    batch_idx = indices[:len(lb)]
    lfree_idx = indices[len(lb):len(lb) + len(lfree)]
    rfree_idx = indices[len(lb) + len(lfree):]
    zero = scalar_constant(out_et, 0)

    def body(ivs, accs):
        def step():
            li = [None] * lhs.shape.rank
            ri = [None] * rhs.shape.rank
            for d, v in zip(lb, batch_idx):
                li[d] = v
            for d, v in zip(rb, batch_idx):
                ri[d] = v
            for d, v in zip(lfree, lfree_idx):
                li[d] = v
            for d, v in zip(rfree, rfree_idx):
                ri[d] = v
            for d, e, v in zip(lc, rc, ivs):
                li[d] = v
                ri[e] = v
            a = convert_value(em.scalar(lhs, li), lhs.shape.element, out_et)
            b = convert_value(em.scalar(rhs, ri), rhs.shape.element, out_et)
            if out_et.is_pred:
                return [arith.ori(accs[0], arith.andi(a, b))]
            if out_et.is_float:
                return [arith.addf(accs[0], arith.mulf(a, b))]
            return [arith.addi(accs[0], arith.muli(a, b))]
        return em.in_region(step)
    return loop_nest([_extent(em, lhs.shape.dims[d]) for d in lc], [zero], body)


def _extent(em: Elemental, d):
    return d if isinstance(d, int) else em.dim(d)


def _iota(em: Elemental, instr, indices) -> list[ir.Value]:
    dim = instr.int_attr("iota_dimension")
    et = instr.shape.element
    i = indices[dim]
    if et.is_float:
        as_int = arith.index_cast(ir.IntegerType.get_signless(64), i)
        return [convert_value(arith.sitofp(ir.F64Type.get(), as_int),
                              ELEMENT_TYPES["f64"], et)]
    return [arith.index_cast(compute_type(et), i)]


def _clamped_starts(em: Elemental, start_operands, operand_dims, sizes) -> list[ir.Value]:
    starts = []
    for op, d, s in zip(start_operands, operand_dims, sizes):
        v = to_index(em.scalar(op, []), op.shape.element)
        starts.append(clamp_index(v, 0, d - s))
    return starts


def _dynamic_slice(em: Elemental, instr, indices) -> list[ir.Value]:
    operand = instr.operands[0]
    starts = _clamped_starts(em, instr.operands[1:], operand.shape.dims, instr.shape.dims)
    m = operand_map(instr, 0)
    operand_indices, _ = apply_map(m, indices, starts)
    return em.value(operand, operand_indices)


def _dynamic_update_slice(em: Elemental, instr, indices) -> list[ir.Value]:
    operand, update = instr.operands[0], instr.operands[1]
    starts = _clamped_starts(em, instr.operands[2:], operand.shape.dims, update.shape.dims)
    inside = None
    local = []
    for i, s, size in zip(indices, starts, update.shape.dims):
        rel = arith.subi(i, s)
        c = arith.andi(arith.cmpi(arith.CmpIPredicate.sge, rel, const_index(0)),
                       arith.cmpi(arith.CmpIPredicate.slt, rel, const_index(size)))
        inside = c if inside is None else arith.andi(inside, c)
        local.append(rel)
    t = compute_type(instr.shape.element)
    if inside is None:
        return em.value(update, [])
    return if_else(inside, [t], lambda: em.in_region(lambda: [em.scalar(update, local)]),
                   lambda: em.in_region(lambda: [em.scalar(operand, indices)]))


def gather_operand_index(em: Elemental, instr, indices) -> list[ir.Value]:
    """The operand index an output element of a gather reads (general form, with
    batching dimensions: operand dimension `operand_batching_dims[k]` is indexed by
    the output's batch index along start-indices dimension
    `start_indices_batching_dims[k]`, as `vmap` of a gather prints)."""
    operand, starts_op = instr.operands
    offset_dims = instr.int_list("offset_dims", ())
    collapsed = instr.int_list("collapsed_slice_dims", ())
    start_map = instr.int_list("start_index_map", ())
    operand_batching = instr.int_list("operand_batching_dims", ())
    indices_batching = instr.int_list("start_indices_batching_dims", ())
    if len(operand_batching) != len(indices_batching):
        raise HloUnsupportedError(f"{where(instr)}: operand_batching_dims and "
                                  f"start_indices_batching_dims differ in length")
    slice_sizes = instr.int_list("slice_sizes")
    ivd = instr.int_attr("index_vector_dim", starts_op.shape.rank)
    batch_idx = [v for d, v in enumerate(indices) if d not in offset_dims]
    offset_idx = [v for d, v in enumerate(indices) if d in offset_dims]
    rank = operand.shape.rank
    start = [const_index(0)] * rank
    for k, od in enumerate(start_map):
        idx = list(batch_idx)
        if ivd < starts_op.shape.rank:
            idx.insert(ivd, const_index(k))
        v = to_index(em.scalar(starts_op, idx), starts_op.shape.element)
        start[od] = clamp_index(v, 0, operand.shape.dims[od] - slice_sizes[od])
    for od, sd in zip(operand_batching, indices_batching):
        # batch_idx walks the start-indices dimensions without index_vector_dim.
        start[od] = batch_idx[sd if sd < ivd else sd - 1]
    window = [d for d in range(rank) if d not in collapsed and d not in operand_batching]
    full = list(start)
    for d, off in zip(window, offset_idx):
        full[d] = arith.addi(start[d], off)
    return full


def _gather(em: Elemental, instr, indices) -> list[ir.Value]:
    return em.value(instr.operands[0], gather_operand_index(em, instr, indices))


def _map(em: Elemental, instr, indices) -> list[ir.Value]:
    args = [em.scalar(o, indices) for o in instr.operands]
    return em.apply_computation(instr.called_computation(), args)


def _get_tuple_element(em: Elemental, instr, indices) -> list[ir.Value]:
    values = em.value(instr.operands[0], indices)
    return [values[instr.int_attr("index")]]


SPECIAL: dict[str, Callable] = {
    "reduce": _reduce,
    "reduce-window": _reduce_window,
    "dot": _dot,
    "iota": _iota,
    "dynamic-slice": _dynamic_slice,
    "dynamic-update-slice": _dynamic_update_slice,
    "gather": _gather,
    "map": _map,
    "get-tuple-element": _get_tuple_element,
    "convolution": emit_convolution,
}
