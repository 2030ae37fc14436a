"""Indexing maps: for an instruction, which input element each output element reads.

An `IndexingMap` is `(d0, ..., dn)[s0, ..., sm] -> (e0, ..., ek)` with a domain (a range
per dimension d and symbol s) and constraints (`expr in [lo, hi]`). Dimensions are the
output index; symbols are values known only at run time (dynamic-slice offsets, gather
indices) or inner loop variables. A result tuple gives the operand index; constraints say
when the element exists at all (pad's padding, concatenate's operand ranges).

Printed the way XLA prints them:

    (d0, d1) -> (d1, d0), domain: d0 in [0, 39], d1 in [0, 19]

`operand_map(instr, i)` is the output-to-input map of operand i for the pure index
transforms (transpose, broadcast, reshape, bitcast, slice, reverse, pad, concatenate,
iota, dynamic-slice, canonical gather) and elementwise ops; None where one output
element reads many input elements (reduce, dot, ...).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

from .elementwise import is_elementwise
from .shapes import strides_of

# ---------------------------------------------------------------------------
# Affine expressions
# ---------------------------------------------------------------------------


class Expr:
    def __add__(self, other) -> "Expr":
        return add(self, lift(other))

    __radd__ = __add__

    def __sub__(self, other) -> "Expr":
        return add(self, mul(lift(other), -1))

    def __mul__(self, c: int) -> "Expr":
        return mul(self, c)

    __rmul__ = __mul__

    def __floordiv__(self, c: int) -> "Expr":
        return floordiv(self, c)

    def __mod__(self, c: int) -> "Expr":
        return mod(self, c)


@dataclass(frozen=True, eq=True)
class Const(Expr):
    value: int

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True, eq=True)
class Dim(Expr):
    index: int

    def __str__(self) -> str:
        return f"d{self.index}"


@dataclass(frozen=True, eq=True)
class Sym(Expr):
    index: int

    def __str__(self) -> str:
        return f"s{self.index}"


@dataclass(frozen=True, eq=True)
class Add(Expr):
    terms: tuple[Expr, ...]

    def __str__(self) -> str:
        text = str(self.terms[0])
        for t in self.terms[1:]:
            if isinstance(t, Const) and t.value < 0:
                text += f" - {-t.value}"
            elif isinstance(t, Mul) and t.factor < 0:
                text += f" - {mul(t.expr, -t.factor)}"
            else:
                text += f" + {t}"
        return text


@dataclass(frozen=True, eq=True)
class Mul(Expr):
    expr: Expr
    factor: int

    def __str__(self) -> str:
        # (d0 mod 2) * 32: floordiv and mod bind as * does, so their operand of a
        # product is parenthesized as MLIR prints it.
        operand = f"({self.expr})" if isinstance(self.expr, (Add, FloorDiv, Mod)) \
            else str(self.expr)
        if self.factor == -1:
            return f"-{operand}"
        return f"{operand} * {self.factor}"


@dataclass(frozen=True, eq=True)
class FloorDiv(Expr):
    expr: Expr
    divisor: int

    def __str__(self) -> str:
        return f"{_paren(self.expr)} floordiv {self.divisor}"


@dataclass(frozen=True, eq=True)
class Mod(Expr):
    expr: Expr
    divisor: int

    def __str__(self) -> str:
        return f"{_paren(self.expr)} mod {self.divisor}"


def _paren(e: Expr) -> str:
    return f"({e})" if isinstance(e, Add) else str(e)


def lift(value) -> Expr:
    return Const(value) if isinstance(value, int) else value


def add(*terms) -> Expr:
    flat: list[Expr] = []
    constant = 0
    for t in map(lift, terms):
        parts = t.terms if isinstance(t, Add) else (t,)
        for p in parts:
            if isinstance(p, Const):
                constant += p.value
            else:
                flat.append(p)
    if constant:
        flat.append(Const(constant))
    if not flat:
        return Const(0)
    return flat[0] if len(flat) == 1 else Add(tuple(flat))


def mul(e: Expr, c: int) -> Expr:
    e = lift(e)
    if c == 0:
        return Const(0)
    if c == 1:
        return e
    if isinstance(e, Const):
        return Const(e.value * c)
    if isinstance(e, Mul):
        return mul(e.expr, e.factor * c)
    if isinstance(e, Add):
        return add(*(mul(t, c) for t in e.terms))
    return Mul(e, c)


def floordiv(e: Expr, c: int) -> Expr:
    e = lift(e)
    if c == 1:
        return e
    if isinstance(e, Const):
        return Const(e.value // c)
    if isinstance(e, Mul) and e.factor % c == 0:
        return mul(e.expr, e.factor // c)
    return FloorDiv(e, c)


def mod(e: Expr, c: int) -> Expr:
    e = lift(e)
    if c == 1:
        return Const(0)
    if isinstance(e, Const):
        return Const(e.value % c)
    if isinstance(e, Mul) and e.factor % c == 0:
        return Const(0)
    return Mod(e, c)


def substitute(e: Expr, dims: list[Expr], syms: list[Expr]) -> Expr:
    """`e` with d_i := dims[i] and s_j := syms[j]."""
    if isinstance(e, Const):
        return e
    if isinstance(e, Dim):
        return dims[e.index]
    if isinstance(e, Sym):
        return syms[e.index]
    if isinstance(e, Add):
        return add(*(substitute(t, dims, syms) for t in e.terms))
    if isinstance(e, Mul):
        return mul(substitute(e.expr, dims, syms), e.factor)
    if isinstance(e, FloorDiv):
        return floordiv(substitute(e.expr, dims, syms), e.divisor)
    if isinstance(e, Mod):
        return mod(substitute(e.expr, dims, syms), e.divisor)
    raise TypeError(e)


def evaluate(e: Expr, dims, syms=()):
    """The value of `e` for concrete (int or numpy array) dims and symbols."""
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Dim):
        return dims[e.index]
    if isinstance(e, Sym):
        return syms[e.index]
    if isinstance(e, Add):
        total = 0
        for t in e.terms:
            total = total + evaluate(t, dims, syms)
        return total
    if isinstance(e, Mul):
        return evaluate(e.expr, dims, syms) * e.factor
    if isinstance(e, FloorDiv):
        return evaluate(e.expr, dims, syms) // e.divisor
    if isinstance(e, Mod):
        return evaluate(e.expr, dims, syms) % e.divisor
    raise TypeError(e)


# ---------------------------------------------------------------------------
# Indexing maps
# ---------------------------------------------------------------------------


@dataclass
class IndexingMap:
    dim_ranges: list[tuple[int, int]]
    results: list[Expr]
    symbol_ranges: list[tuple[int, int]] = field(default_factory=list)
    constraints: list[tuple[Expr, int, int]] = field(default_factory=list)
    dim_names: list[str] | None = None
    symbol_names: list[str] | None = None

    @property
    def num_dims(self) -> int:
        return len(self.dim_ranges)

    @property
    def num_symbols(self) -> int:
        return len(self.symbol_ranges)

    def _names(self) -> tuple[list[str], list[str]]:
        dims = self.dim_names or [f"d{i}" for i in range(self.num_dims)]
        syms = self.symbol_names or [f"s{i}" for i in range(self.num_symbols)]
        return dims, syms

    def _render(self, e: Expr) -> str:
        text = str(e)
        dims, syms = self._names()
        if self.dim_names or self.symbol_names:
            import re
            text = re.sub(r"\b([ds])(\d+)\b",
                          lambda m: (dims if m.group(1) == "d" else syms)[int(m.group(2))], text)
        return text

    def __str__(self) -> str:
        dims, syms = self._names()
        head = f"({', '.join(dims)})"
        if syms:
            head += f"[{', '.join(syms)}]"
        body = ", ".join(self._render(r) for r in self.results)
        domain = [f"{n} in [{lo}, {hi}]" for n, (lo, hi) in zip(dims, self.dim_ranges)]
        domain += [f"{n} in [{lo}, {hi}]" for n, (lo, hi) in zip(syms, self.symbol_ranges)]
        domain += [f"{self._render(e)} in [{lo}, {hi}]" for e, lo, hi in self.constraints]
        return f"{head} -> ({body})" + (", domain: " + ", ".join(domain) if domain else "")

    def evaluate(self, dims, syms=()) -> tuple[list, object]:
        """(operand index, mask of where the constraints hold) at concrete points."""
        import numpy as np
        index = [evaluate(r, dims, syms) for r in self.results]
        ok = True
        for e, lo, hi in self.constraints:
            v = evaluate(e, dims, syms)
            ok = np.logical_and(ok, np.logical_and(v >= lo, v <= hi))
        return index, ok


def identity_map(dims) -> IndexingMap:
    return IndexingMap(dim_ranges(dims), [Dim(i) for i in range(len(dims))])


def linearize(indices: list[Expr], dims) -> Expr:
    return add(*(mul(e, s) for e, s in zip(indices, strides_of(dims))))


def delinearize(linear: Expr, dims) -> list[Expr]:
    """Row-major multi-index of a linear index (the outermost dim needs no mod)."""
    strides = strides_of(dims)
    out = []
    for i, (d, s) in enumerate(zip(dims, strides)):
        e = floordiv(linear, s)
        out.append(e if i == 0 else mod(e, d))
    return out


# ---------------------------------------------------------------------------
# Output-to-input maps of HLO instructions
# ---------------------------------------------------------------------------

def operand_map(instr, operand_index: int) -> IndexingMap | None:
    """The output-to-input indexing map of one operand, or None when an output element
    reads more than one element of it (reduce, dot, the indices of gather/scatter...)."""
    out_dims = instr.shape.dims if not instr.shape.is_tuple else None
    builder = _MAP_BUILDERS.get(instr.opcode)
    if builder is not None:
        return builder(instr, operand_index)
    if out_dims is not None and is_elementwise(instr):
        operand = instr.operands[operand_index]
        if operand.shape.rank == 0 and len(out_dims) > 0:   # scalar operands (clamp)
            return IndexingMap(dim_ranges(out_dims), [])
        return identity_map(out_dims)
    return None


def _out_ranges(instr) -> list[tuple[int, int]]:
    return dim_ranges(instr.shape.dims)


def dim_ranges(dims) -> list[tuple[int, object]]:
    """[0, d - 1] per dimension; a dynamic dimension's upper bound is symbolic ("M - 1")."""
    return [(0, d - 1 if isinstance(d, int) else f"{d} - 1") for d in dims]


def _transpose(instr, i) -> IndexingMap:
    perm = instr.dimensions()
    results: list[Expr] = [Const(0)] * len(perm)
    for out_dim, in_dim in enumerate(perm):
        results[in_dim] = Dim(out_dim)
    return IndexingMap(_out_ranges(instr), results)


def _broadcast(instr, i) -> IndexingMap:
    return IndexingMap(_out_ranges(instr), [Dim(d) for d in instr.dimensions()])


def _reshape(instr, i) -> IndexingMap:
    out_dims, in_dims = instr.shape.dims, instr.operands[0].shape.dims
    if not (instr.shape.is_static and instr.operands[0].shape.is_static):
        # Dynamic shapes (dynamic.py allows only adding or removing unit dimensions):
        # the i-th dimension that is not 1 reads the operand's i-th such dimension.
        kept = [k for k, d in enumerate(out_dims) if d != 1]
        results = []
        it = iter(kept)
        for d in in_dims:
            results.append(Const(0) if d == 1 else Dim(next(it)))
        return IndexingMap(_out_ranges(instr), results)
    linear = linearize([Dim(k) for k in range(len(out_dims))], out_dims)
    return IndexingMap(_out_ranges(instr), delinearize(linear, in_dims))


def _bitcast(instr, i) -> IndexingMap:
    """A bitcast reinterprets the physical layout: output logical index -> physical
    linear index (output layout) -> input logical index (input layout)."""
    out_shape, in_shape = instr.shape, instr.operands[0].shape
    if (out_shape.has_default_layout and in_shape.has_default_layout) or not \
            (out_shape.is_static and in_shape.is_static):
        return _reshape(instr, i)
    out_major = list(reversed(out_shape.minor_to_major))
    in_major = list(reversed(in_shape.minor_to_major))
    phys_out = [out_shape.dims[d] for d in out_major]
    linear = linearize([Dim(d) for d in out_major], phys_out)
    phys_in = [in_shape.dims[d] for d in in_major]
    parts = delinearize(linear, phys_in)
    results: list[Expr] = [Const(0)] * in_shape.rank
    for pos, d in enumerate(in_major):
        results[d] = parts[pos]
    return IndexingMap(_out_ranges(instr), results)


def _slice(instr, i) -> IndexingMap:
    results = [add(mul(Dim(k), stride), start)
               for k, (start, _, stride) in enumerate(instr.slice_bounds())]
    return IndexingMap(_out_ranges(instr), results)


def _reverse(instr, i) -> IndexingMap:
    rev = set(instr.dimensions())
    results = [add(Const(d - 1), mul(Dim(k), -1)) if k in rev else Dim(k)
               for k, d in enumerate(instr.shape.dims)]
    return IndexingMap(_out_ranges(instr), results)


def _pad(instr, i) -> IndexingMap:
    out = _out_ranges(instr)
    if i == 1:  # the padding value: a scalar
        return IndexingMap(out, [])
    results, constraints = [], []
    in_dims = instr.operands[0].shape.dims
    for k, ((lo, _, interior), size) in enumerate(zip(instr.padding(), in_dims)):
        shifted = add(Dim(k), -lo)
        step = interior + 1
        results.append(floordiv(shifted, step))
        constraints.append((shifted, 0, (size - 1) * step))
        if step > 1:
            constraints.append((mod(shifted, step), 0, 0))
    return IndexingMap(out, results, constraints=constraints)


def _concatenate(instr, i) -> IndexingMap:
    axis = instr.dimensions()[0]
    offset = sum(op.shape.dims[axis] for op in instr.operands[:i])
    size = instr.operands[i].shape.dims[axis]
    results = [add(Dim(k), -offset) if k == axis else Dim(k)
               for k in range(instr.shape.rank)]
    return IndexingMap(_out_ranges(instr), results,
                       constraints=[(Dim(axis), offset, offset + size - 1)])


def _iota(instr, i) -> IndexingMap:
    return IndexingMap(_out_ranges(instr), [])


def _dynamic_slice(instr, i) -> IndexingMap:
    """Operand 0 at d + clamp(start); the clamped starts are symbols. Start operands
    (scalars) map to nothing."""
    out = _out_ranges(instr)
    if i > 0:
        return IndexingMap(out, [])
    in_dims = instr.operands[0].shape.dims
    sizes = instr.shape.dims
    return IndexingMap(out, [add(Dim(k), Sym(k)) for k in range(len(in_dims))],
                       symbol_ranges=[(0, d - s) for d, s in zip(in_dims, sizes)])


def _gather(instr, i) -> IndexingMap | None:
    """Canonical gather (as gather_simplifier leaves it): indices [N, K] with
    index_vector_dim=1, offset_dims = 1..K', no collapsed dims, start_index_map = 0..K-1.
    The operand index is offset + the clamped start (symbols)."""
    if not is_canonical_gather(instr):
        return None
    out = _out_ranges(instr)
    operand_dims = instr.operands[0].shape.dims
    if i == 1:
        k = instr.operands[1].shape.dims[1]
        return IndexingMap(out, [Dim(0), Sym(0)], symbol_ranges=[(0, k - 1)])
    slice_sizes = instr.int_list("slice_sizes")
    return IndexingMap(out, [add(Dim(1 + k), Sym(k)) for k in range(len(operand_dims))],
                       symbol_ranges=[(0, d - s) for d, s in zip(operand_dims, slice_sizes)])


def is_canonical_gather(instr) -> bool:
    indices = instr.operands[1].shape
    operand_rank = instr.operands[0].shape.rank
    return (indices.rank == 2 and instr.int_attr("index_vector_dim", 1) == 1
            and instr.int_list("offset_dims", ()) == tuple(range(1, operand_rank + 1))
            and instr.int_list("collapsed_slice_dims", ()) == ()
            and instr.int_list("start_index_map", ()) == tuple(range(indices.dims[1]))
            and indices.dims[1] == operand_rank)


_MAP_BUILDERS = {
    "transpose": _transpose,
    "broadcast": _broadcast,
    "reshape": _reshape,
    "bitcast": _bitcast,
    "slice": _slice,
    "reverse": _reverse,
    "pad": _pad,
    "concatenate": _concatenate,
    "iota": _iota,
    "dynamic-slice": _dynamic_slice,
    "gather": _gather,
}
INDEX_TRANSFORMS = frozenset(_MAP_BUILDERS)


def thread_map(threads: int, blocks: int, vector: int, dims) -> IndexingMap:
    """The loop emitter's map (th_x, bl_x)[vector_index] -> output index."""
    linear = loop_linear_index(threads, vector)
    total = prod(dims)
    constraints = [] if threads * blocks * vector == total else [(linear, 0, total - 1)]
    return IndexingMap([(0, threads - 1), (0, blocks - 1)], delinearize(linear, dims),
                       symbol_ranges=[(0, vector - 1)], constraints=constraints,
                       dim_names=["th_x", "bl_x"], symbol_names=["vector_index"])


def loop_linear_index(threads: int, vector: int) -> Expr:
    """The loop emitter's linear output index: work-item th_x of work-group bl_x writes
    the `vector` elements from (bl_x * threads + th_x) * vector on."""
    return add(mul(Dim(1), threads * vector), mul(Dim(0), vector), Sym(0))


class DynamicThreadMap:
    """The loop emitter's map when the output shape has dynamic dimensions: the linear
    index is delinearized by sizes that are symbols, which an affine map cannot divide
    by, so the map is kept as (linear index, dims) and printed in the same notation."""

    def __init__(self, threads: int, blocks, vector: int, dims, total):
        self.threads, self.blocks, self.vector = threads, blocks, vector
        self.dims, self.total = list(dims), total
        self.linear = loop_linear_index(threads, vector)

    @property
    def symbols(self) -> list[str]:
        return [d for d in self.dims if not isinstance(d, int)]

    def __str__(self) -> str:
        names = IndexingMap([(0, self.threads - 1), (0, 0)], [self.linear],
                            symbol_ranges=[(0, self.vector - 1)],
                            dim_names=["th_x", "bl_x"], symbol_names=["vector_index"])
        linear = names._render(self.linear)
        by = ", ".join(str(d) for d in self.dims)
        syms = ", ".join(["vector_index"] + self.symbols)
        domain = [f"th_x in [0, {self.threads - 1}]", f"bl_x in [0, {self.blocks} - 1]",
                  f"vector_index in [0, {self.vector - 1}]"]
        domain += [f"{s} in [1, inf)" for s in self.symbols]
        domain.append(f"{linear} in [0, {self.total} - 1]")
        return (f"(th_x, bl_x)[{syms}] -> delinearize({linear}, ({by})), domain: "
                + ", ".join(domain))


def dynamic_thread_map(threads, blocks, vector, dims, total) -> DynamicThreadMap:
    return DynamicThreadMap(threads, blocks, vector, dims, total)


# ---------------------------------------------------------------------------
# Reading loops back from a map (what the emitters build their kernels from)
# ---------------------------------------------------------------------------


def linear_index_of(results: list[Expr], dims) -> Expr | None:
    """L when `results` is `delinearize(L, dims)` (the loop emitter's maps), else None:
    the emitters emit such results as one delinearization of L, which the flatten pass
    folds against the linearization of the flat output buffer.

    Rank 0: `()` is the delinearization of the single element, whose linear index is 0
    (delinearize(0, ()) == []), whatever the map's dimensions and symbols are."""
    if len(dims) == 0:
        return Const(0) if not results else None
    if not results:
        return None
    first, last = results[0], results[-1]
    candidates = [last, first]
    if isinstance(last, Mod):
        candidates.insert(0, last.expr)
    if isinstance(first, FloorDiv):
        candidates.append(first.expr)
    for linear in candidates:
        if delinearize(linear, dims) == list(results):
            return linear
    return None


def thread_linear_index(m, dims) -> Expr:
    """The loop emitter's linear output index, read back from its map."""
    if isinstance(m, DynamicThreadMap):
        return m.linear
    linear = linear_index_of(m.results, dims)
    if linear is None:
        raise ValueError(f"{m}: the results are not a delinearization over {tuple(dims)}")
    return linear


def without_symbols(e: Expr, num_dims: int) -> Expr:
    """`e` with every symbol 0 (a loop's first iteration)."""
    return substitute(e, [Dim(i) for i in range(num_dims)], _Zeros())


class _Zeros:
    def __getitem__(self, _):
        return Const(0)


def coefficient(e: Expr, symbol: int) -> int:
    """The factor of symbol `symbol` in `e` (0 when `e` does not use it); `e` must be
    affine in it (the symbol not under floordiv or mod)."""
    terms = e.terms if isinstance(e, Add) else (e,)
    total = 0
    for t in terms:
        if t == Sym(symbol):
            total += 1
        elif isinstance(t, Mul) and t.expr == Sym(symbol):
            total += t.factor
        elif symbol in _symbols_of(t):
            raise ValueError(f"{e}: s{symbol} is not a plain term")
    return total


def _symbols_of(e: Expr) -> set[int]:
    if isinstance(e, Sym):
        return {e.index}
    if isinstance(e, Add):
        return set().union(*(_symbols_of(t) for t in e.terms))
    if isinstance(e, (Mul, FloorDiv, Mod)):
        return _symbols_of(e.expr)
    return set()


def constraints_on(m: IndexingMap, e: Expr) -> IndexingMap:
    """`m` with only the constraints on expression `e` (the guard of one result)."""
    return IndexingMap(m.dim_ranges, m.results, m.symbol_ranges,
                       [c for c in m.constraints if c[0] == e], m.dim_names, m.symbol_names)


@dataclass(frozen=True)
class StridedLoop:
    """The loop that walks one result of a map along one symbol: `start` (the result
    with every symbol 0, over the dimensions), `step` (the symbol's factor) and `stop`
    (one past the upper bound of the constraint on that result, an int or a symbolic
    bound; None when the result is unconstrained)."""
    start: Expr
    step: int
    stop: object


def strided_loop(m: IndexingMap, result: int, symbol: int) -> StridedLoop:
    e = m.results[result]
    start = without_symbols(e, m.num_dims)
    stop = None
    for c, _, hi in m.constraints:
        if c == e:
            stop = hi + 1 if isinstance(hi, int) else hi
    return StridedLoop(start, coefficient(e, symbol), stop)


def work_group_size(m) -> int:
    """Work-items per work-group: the range of th_x."""
    if isinstance(m, DynamicThreadMap):
        return m.threads
    return m.dim_ranges[0][1] + 1


def static_grid(m) -> int | None:
    """Work-groups: the range of bl_x, None when it is a dynamic size."""
    hi = m.dim_ranges[1][1] if isinstance(m, IndexingMap) else None
    return hi + 1 if isinstance(hi, int) else None


def symbol_extent(m, symbol: int) -> int:
    """How many values a symbol takes (its range is [0, n - 1])."""
    if isinstance(m, DynamicThreadMap):
        return m.vector
    lo, hi = m.symbol_ranges[symbol]
    return hi - lo + 1
