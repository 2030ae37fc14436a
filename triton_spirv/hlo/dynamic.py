"""Dynamic shapes: anonymous (`?`) and named symbolic dimensions (`f32[M,K]`), checked
at compile time.

HLO text as this frontend reads it may use, in place of a dimension size, `?` (any
positive size, given at run time) or a name (any positive size, the same wherever the
name appears). `check_module_shapes(module)` walks every computation reachable from the
ENTRY computation, infers each instruction's shape from its operands and unifies it
with the shape written in the text:

  * ranks must agree wherever an op relates shapes (elementwise operands, dot batch and
    contracting dimensions, concatenate operands, broadcast `dimensions=`, transpose
    permutations, reduce inputs, fusion operands and parameters);
  * two dimensions that must be equal unify: `?` takes the other side's value; two
    different names, two different sizes, or a name and a size are reported, naming
    both ("dot 'dot.3': contracting dimension 'K' of lhs vs 'J' of rhs must be equal");
  * every symbolic dimension must be fixed by the ENTRY parameters (their arrays give
    the values at run time); a buffer declared inside a computation with a size that
    is not (a broadcast to `f32[N]` where nothing gives N, an iota of dynamic size) is
    an error, as are ops this frontend cannot index with a run-time size (slice, pad,
    reverse along, or reshape that regroups a dynamic dimension, gather, scatter...).

Afterwards each instruction's `shape` holds resolved dimensions: an int, a name, or
`"?k"` for the k-th class of anonymous dimensions. Static modules pass through the same
checks and keep their shapes.
"""
from __future__ import annotations

from dataclasses import replace

from .elementwise import is_elementwise
from .errors import HloShapeError, HloUnsupportedError, where

__all__ = ["HloShapeError", "check_module_shapes", "module_is_dynamic"]


# Ops whose operands and result share one shape (scalars allowed where XLA allows them).
def _is_elementwise(instr) -> bool:
    return is_elementwise(instr) and instr.opcode != "bitcast-convert"


SCALAR_OPERANDS_OK = {"clamp", "select"}
# Ops that take dynamic operands (the rest need static shapes).
DYNAMIC_OPS = {"parameter", "constant", "tuple", "get-tuple-element", "broadcast",
               "transpose", "reduce", "dot", "concatenate", "reshape", "bitcast",
               "fusion", "iota", "copy", "convert", "slice", "reverse", "pad"}


class _Dims:
    """Union-find over dimension terms: ("const", n), ("named", name), ("anon", where)."""

    def __init__(self):
        self.parent: list[int] = []
        self.kind: list[tuple[str, object]] = []
        self.bound: list[bool] = []          # the class holds an ENTRY parameter dimension
        self.names: dict[str, int] = {}

    def new(self, kind: str, value) -> int:
        self.parent.append(len(self.parent))
        self.kind.append((kind, value))
        self.bound.append(False)
        return len(self.parent) - 1

    def declared(self, d, where_: str) -> int:
        if isinstance(d, int):
            return self.new("const", d)
        if d == "?":
            return self.new("anon", where_)
        if d not in self.names:
            self.names[d] = self.new("named", d)
        return self.names[d]

    def find(self, t: int) -> int:
        while self.parent[t] != t:
            self.parent[t] = self.parent[self.parent[t]]
            t = self.parent[t]
        return t

    def describe(self, t: int) -> str:
        kind, value = self.kind[self.find(t)]
        return f"'{value}'" if kind == "named" else str(value) if kind == "const" else "'?'"

    def unify(self, a: int, b: int, message) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        (ka, va), (kb, vb) = self.kind[ra], self.kind[rb]
        if ka == "anon" or (ka == kb == "const" and va == vb):
            keep, drop = rb, ra
        elif kb == "anon":
            keep, drop = ra, rb
        else:
            raise HloShapeError(message(self.describe(ra), self.describe(rb)))
        self.parent[drop] = keep
        self.bound[keep] = self.bound[keep] or self.bound[drop]

    def static(self, t: int) -> int | None:
        kind, value = self.kind[self.find(t)]
        return value if kind == "const" else None


def _label(instr) -> str:
    return f"{instr.opcode} '{instr.name}'"


class _Analysis:
    def __init__(self, module):
        self.module = module
        self.dims = _Dims()
        self.terms: dict = {}            # instruction -> terms (list of ints, or tuple of those)
        self.done: set[str] = set()

    # -- shapes as terms ---------------------------------------------------------

    def declared(self, instr, shape=None, path=""):
        shape = instr.shape if shape is None else shape
        if shape.is_tuple:
            return tuple(self.declared(instr, s, f"{path}{{{k}}}")
                         for k, s in enumerate(shape.tuple_shapes))
        return [self.dims.declared(d, f"%{instr.name}{path}.shape[{k}]")
                for k, d in enumerate(shape.dims)]

    def unify_shapes(self, instr, inferred, declared, what="the shape written") -> None:
        if isinstance(inferred, tuple) or isinstance(declared, tuple):
            if not (isinstance(inferred, tuple) and isinstance(declared, tuple)) or \
                    len(inferred) != len(declared):
                raise HloShapeError(f"{_label(instr)}: {what} {instr.shape} does not match "
                                    f"the operands ({where(instr)})")
            for a, b in zip(inferred, declared):
                self.unify_shapes(instr, a, b, what)
            return
        if len(inferred) != len(declared):
            raise HloShapeError(f"{_label(instr)}: {what} has rank {len(declared)}, the "
                                f"operands give rank {len(inferred)} ({where(instr)})")
        for k, (a, b) in enumerate(zip(inferred, declared)):
            self.dims.unify(a, b, lambda x, y, k=k: (
                f"{_label(instr)}: dimension {k} is {x} from the operands vs {y} in {what} "
                f"{instr.shape}; they must be equal ({where(instr)})"))

    # -- walking -----------------------------------------------------------------

    def computation(self, comp, param_terms=None) -> None:
        if comp.name in self.done:
            return
        self.done.add(comp.name)
        for instr in comp.instructions:
            self.instruction(instr, param_terms)

    def instruction(self, instr, param_terms) -> None:
        declared = self.declared(instr)
        op = instr.opcode
        if op == "parameter":
            if param_terms is not None and instr.parameter_number < len(param_terms):
                self.unify_shapes(instr, param_terms[instr.parameter_number], declared,
                                  "the parameter's shape")
            if param_terms is None and instr.computation is self.module.entry:
                for t in _flat(declared):
                    self.dims.bound[self.dims.find(t)] = True
            self.terms[instr] = declared
            return
        operands = [self.terms.get(o) for o in instr.operands]
        dynamic = any(not self._all_static(t) for t in operands) or not self._all_static(declared)
        if dynamic and op not in DYNAMIC_OPS and not _is_elementwise(instr):
            raise HloUnsupportedError(f"{where(instr)}: {op} does not support dynamic "
                                      f"dimensions (shape {instr.shape})")
        inferred = self.infer(instr, operands, declared)
        if inferred is not None:
            self.unify_shapes(instr, inferred, declared)
        self.terms[instr] = declared
        if dynamic:
            self.restrict(instr, operands)

    def _all_static(self, terms) -> bool:
        return all(self.dims.static(t) is not None for t in _flat(terms))

    # -- shape inference per op ------------------------------------------------------

    def infer(self, instr, ops, declared):
        op = instr.opcode
        if _is_elementwise(instr):
            return self.elementwise(instr, ops, declared)
        fn = getattr(self, "op_" + op.replace("-", "_"), None)
        return fn(instr, ops, declared) if fn is not None else None

    def elementwise(self, instr, ops, declared):
        shaped = [(k, t) for k, t in enumerate(ops) if isinstance(t, list)
                  and not (len(t) == 0 and instr.opcode in SCALAR_OPERANDS_OK)]
        if not shaped:
            return None
        k0, first = shaped[0]
        for k, t in shaped[1:]:
            if len(t) != len(first):
                raise HloShapeError(f"{_label(instr)}: operand {k} has rank {len(t)}, operand "
                                    f"{k0} has rank {len(first)}; ranks must agree "
                                    f"({where(instr)})")
            for d, (a, b) in enumerate(zip(first, t)):
                self.dims.unify(a, b, lambda x, y, d=d, k=k: (
                    f"{_label(instr)}: dimension {d} is {x} in operand {k0} vs {y} in operand "
                    f"{k}; they must be equal ({where(instr)})"))
        return list(first)

    def op_broadcast(self, instr, ops, declared):
        operand, dims = ops[0], instr.dimensions()
        if len(dims) != len(operand):
            raise HloShapeError(f"{_label(instr)}: the operand has rank {len(operand)} but "
                                f"dimensions={{{','.join(map(str, dims))}}} lists {len(dims)} "
                                f"({where(instr)})")
        for k, d in enumerate(dims):
            if not 0 <= d < len(declared):
                raise HloShapeError(f"{_label(instr)}: dimensions={{...}} names dimension {d} "
                                    f"of a rank-{len(declared)} result ({where(instr)})")
            self.dims.unify(operand[k], declared[d], lambda x, y, k=k, d=d: (
                f"{_label(instr)}: operand dimension {k} ({x}) vs result dimension {d} ({y}) "
                f"must be equal ({where(instr)})"))
        return None

    def op_transpose(self, instr, ops, declared):
        perm = instr.dimensions()
        if sorted(perm) != list(range(len(ops[0]))):
            raise HloShapeError(f"{_label(instr)}: dimensions={{{','.join(map(str, perm))}}} "
                                f"is not a permutation of the operand's rank {len(ops[0])} "
                                f"({where(instr)})")
        return [ops[0][p] for p in perm]

    def op_copy(self, instr, ops, declared):
        return list(ops[0])

    def op_reduce(self, instr, ops, declared):
        n = len(ops) // 2
        inputs = ops[:n]
        for k, t in enumerate(inputs[1:], 1):
            if len(t) != len(inputs[0]):
                raise HloShapeError(f"{_label(instr)}: input {k} has rank {len(t)}, input 0 "
                                    f"has rank {len(inputs[0])} ({where(instr)})")
            for d, (a, b) in enumerate(zip(inputs[0], t)):
                self.dims.unify(a, b, lambda x, y, d=d, k=k: (
                    f"{_label(instr)}: dimension {d} is {x} in input 0 vs {y} in input {k}; "
                    f"they must be equal ({where(instr)})"))
        reduced = set(instr.dimensions())
        if any(not 0 <= d < len(inputs[0]) for d in reduced):
            raise HloShapeError(f"{_label(instr)}: dimensions={{...}} out of range for rank "
                                f"{len(inputs[0])} ({where(instr)})")
        kept = [t for d, t in enumerate(inputs[0]) if d not in reduced]
        return list(kept) if n == 1 else tuple(list(kept) for _ in range(n))

    def op_dot(self, instr, ops, declared):
        lhs, rhs = ops[0], ops[1]
        lb, rb = instr.int_list("lhs_batch_dims", ()), instr.int_list("rhs_batch_dims", ())
        lc = instr.int_list("lhs_contracting_dims", ())
        rc = instr.int_list("rhs_contracting_dims", ())
        if len(lb) != len(rb) or len(lc) != len(rc):
            raise HloShapeError(f"{_label(instr)}: lhs has {len(lb)} batch and {len(lc)} "
                                f"contracting dimensions, rhs {len(rb)} and {len(rc)} "
                                f"({where(instr)})")
        for side, dims, rank in (("lhs", lb + lc, len(lhs)), ("rhs", rb + rc, len(rhs))):
            if any(not 0 <= d < rank for d in dims):
                raise HloShapeError(f"{_label(instr)}: {side} has rank {rank}, its batch/"
                                    f"contracting dimensions {list(dims)} do not fit "
                                    f"({where(instr)})")
        for what, ls, rs in (("batch", lb, rb), ("contracting", lc, rc)):
            for a, b in zip(ls, rs):
                self.dims.unify(lhs[a], rhs[b], lambda x, y, what=what: (
                    f"{_label(instr)}: {what} dimension {x} of lhs vs {y} of rhs must be "
                    f"equal ({where(instr)})"))
        lfree = [t for d, t in enumerate(lhs) if d not in lb and d not in lc]
        rfree = [t for d, t in enumerate(rhs) if d not in rb and d not in rc]
        return [lhs[d] for d in lb] + lfree + rfree

    def op_concatenate(self, instr, ops, declared):
        axis = instr.dimensions()[0]
        first = ops[0]
        for k, t in enumerate(ops[1:], 1):
            if len(t) != len(first):
                raise HloShapeError(f"{_label(instr)}: operand {k} has rank {len(t)}, operand "
                                    f"0 has rank {len(first)}; ranks must agree "
                                    f"({where(instr)})")
            for d, (a, b) in enumerate(zip(first, t)):
                if d != axis:
                    self.dims.unify(a, b, lambda x, y, d=d, k=k: (
                        f"{_label(instr)}: dimension {d} is {x} in operand 0 vs {y} in "
                        f"operand {k}; they must be equal ({where(instr)})"))
        sizes = [self.dims.static(t[axis]) for t in ops]
        if None in sizes:
            raise HloUnsupportedError(f"{where(instr)}: concatenate along a dynamic dimension "
                                      f"is not supported")
        out = list(first)
        out[axis] = self.dims.new("const", sum(sizes))
        return out

    def op_get_tuple_element(self, instr, ops, declared):
        return ops[0][instr.int_attr("index")] if isinstance(ops[0], tuple) else None

    def op_tuple(self, instr, ops, declared):
        return tuple(ops)

    def op_fusion(self, instr, ops, declared):
        comp = instr.called_computation()
        params = comp.parameters
        if len(params) != len(ops):
            raise HloShapeError(f"{_label(instr)}: {len(ops)} operands for a computation "
                                f"with {len(params)} parameters ({where(instr)})")
        self.computation(comp, ops)
        return self.terms[comp.root]

    def op_reshape(self, instr, ops, declared):
        return self._squeeze_map(instr, ops[0], declared)

    def op_bitcast(self, instr, ops, declared):
        return self._squeeze_map(instr, ops[0], declared)

    def _squeeze_map(self, instr, operand, declared):
        if self._all_static(operand) and self._all_static(declared):
            return None
        a = [t for t in operand if self.dims.static(t) != 1]
        b = [t for t in declared if self.dims.static(t) != 1]
        if len(a) != len(b) or (instr.opcode == "bitcast" and not instr.shape.has_default_layout):
            raise HloUnsupportedError(f"{where(instr)}: a {instr.opcode} of dynamic dimensions "
                                      f"may only add or remove dimensions of size 1 "
                                      f"({instr.operands[0].shape} -> {instr.shape})")
        for x, y in zip(a, b):
            self.dims.unify(x, y, lambda p, q: (
                f"{_label(instr)}: dimension {p} of the operand vs {q} of the result must be "
                f"equal ({where(instr)})"))
        return None

    # -- ops that index with sizes: dynamic dimensions only where that is not needed ----

    def restrict(self, instr, ops) -> None:
        op = instr.opcode
        static = self.dims.static
        if op == "slice":
            for d, (start, limit, stride) in enumerate(instr.slice_bounds()):
                if static(ops[0][d]) is None:
                    raise HloUnsupportedError(f"{where(instr)}: slice of dynamic dimension {d} "
                                              f"is not supported")
        elif op == "reverse":
            for d in instr.dimensions():
                if static(ops[0][d]) is None:
                    raise HloUnsupportedError(f"{where(instr)}: reverse of dynamic dimension "
                                              f"{d} is not supported")
        elif op == "pad":
            for d, t in enumerate(ops[0]):
                if static(t) is None:
                    raise HloUnsupportedError(f"{where(instr)}: pad of dynamic dimension {d} "
                                              f"is not supported")


def _flat(terms) -> list[int]:
    if isinstance(terms, tuple):
        return [t for part in terms for t in _flat(part)]
    return list(terms or [])


def check_module_shapes(module) -> None:
    """Checks and resolves the shapes of every computation reachable from ENTRY (see the
    module docstring); idempotent."""
    if getattr(module, "shapes_checked", False):
        return
    analysis = _Analysis(module)
    analysis.computation(module.entry)
    for comp in _called(module):
        analysis.computation(comp)
    _resolve(module, analysis)
    module.shapes_checked = True


def _called(module):
    """Computations called by call/while/conditional (kernels are compiled in them)."""
    order, stack, seen = [], [module.entry], {module.entry.name}
    while stack:
        comp = stack.pop()
        for instr in comp.instructions:
            if instr.opcode in ("call", "while", "conditional"):
                for c in instr.called:
                    if c.name not in seen:
                        seen.add(c.name)
                        order.append(c)
                        stack.append(c)
    return order


def _resolve(module, analysis: _Analysis) -> None:
    dims = analysis.dims
    names: dict[int, object] = {}
    counter = [0]

    def name_of(t: int):
        root = dims.find(t)
        if root in names:
            return names[root]
        kind, value = dims.kind[root]
        if kind == "const":
            names[root] = value
        else:
            if kind == "anon":
                counter[0] += 1
                value = f"?{counter[0]}"
            names[root] = value
        return names[root]

    # Name anonymous classes in the order of the ENTRY parameters.
    for p in module.entry.parameters:
        for t in _flat(analysis.terms.get(p)):
            name_of(t)
    for instr, terms in analysis.terms.items():
        for t in _flat(terms):
            root = dims.find(t)
            if dims.kind[root][0] != "const" and not dims.bound[root]:
                shown = dims.describe(root) if dims.kind[root][0] == "named" else "'?'"
                raise HloShapeError(
                    f"{where(instr)}: dimension {shown} of {instr.shape} is not given by any "
                    f"ENTRY parameter; a buffer declared inside a computation may not have a "
                    f"dynamic size")
        instr.shape = _resolved_shape(instr.shape, terms, name_of)


def _resolved_shape(shape, terms, name_of):
    if shape.is_tuple:
        return replace(shape, tuple_shapes=tuple(
            _resolved_shape(s, t, name_of) for s, t in zip(shape.tuple_shapes, terms)))
    return replace(shape, dims=tuple(name_of(t) for t in terms))


def module_is_dynamic(module) -> bool:
    return any(not p.shape.is_static for p in module.entry.parameters)
