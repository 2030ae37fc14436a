"""The loop and reduction emitters build their kernels from the indexing maps they print.

Each test reads the map back from the fusion report with a parser of its own (not the
printer's code), evaluates it over its whole domain and checks it against the kernel the
emitter built: the work-group size and grid are the ranges of th_x and bl_x, the loops'
bounds and steps are where the map's results start and how they move with its symbols,
and the map reaches every element of the output (row, column) exactly once.
"""
import re

import numpy as np
import pytest
from mlir import ir

from triton_spirv.hlo import read_hlo
from triton_spirv.hlo.compile import build_fusion
from triton_spirv.hlo.emitters.map_loops import constraints_hold, emit_expr, loop_bounds
from triton_spirv.hlo.indexing import (Dim, IndexingMap, Sym, coefficient, delinearize,
                                       linear_index_of, strided_loop, thread_map)
from triton_spirv.hlo.target import EmitTarget
from test_hlo_reduction_speedpaths import reduce_module


# ---------------------------------------------------------------------------
# Reading a printed map back
# ---------------------------------------------------------------------------

class PrintedMap:
    """`(th_x, bl_x)[s...] -> (e, ...), domain: name in [lo, hi], ..., e in [lo, hi]`."""

    def __init__(self, text: str):
        text = re.sub(r"  \([^()]*\)$", "", text.strip())     # the trailing "  (row, ...)" note
        head, rest = text.split(" -> ", 1)
        self.dims = re.match(r"\(([^)]*)\)", head).group(1).split(", ")
        symbols = re.search(r"\[([^\]]*)\]", head)
        self.symbols = symbols.group(1).split(", ") if symbols else []
        results, domain = _split_top(rest, ", domain: ")
        self.results = _split_commas(results[1:-1])
        self.ranges, self.constraints = {}, []
        for entry in _split_commas(domain):
            expr, bounds = entry.rsplit(" in ", 1)
            lo, hi = (int(b) for b in bounds.strip("[]").split(", "))
            if expr in self.dims or expr in self.symbols:
                self.ranges[expr] = (lo, hi)
            else:
                self.constraints.append((expr, lo, hi))

    def extent(self, name) -> int:
        lo, hi = self.ranges[name]
        return hi - lo + 1

    def points(self, **fixed):
        """Every point of the domain (numpy arrays by name); `fixed` pins some names."""
        names = self.dims + self.symbols
        axes = [np.array([fixed[n]]) if n in fixed else
                np.arange(self.ranges[n][0], self.ranges[n][1] + 1) for n in names]
        grids = np.meshgrid(*axes, indexing="ij")
        return {n: g.ravel() for n, g in zip(names, grids)}

    def evaluate(self, point):
        """(results, mask of the points where every constraint holds)."""
        values = [_eval(r, point) for r in self.results]
        ok = np.ones_like(next(iter(point.values())), dtype=bool)
        for expr, lo, hi in self.constraints:
            v = _eval(expr, point)
            ok &= (v >= lo) & (v <= hi)
        return [np.broadcast_to(v, ok.shape) for v in values], ok


def _eval(expr: str, point):
    python = expr.replace(" floordiv ", " // ").replace(" mod ", " % ")
    return eval(python, {}, dict(point))


def _split_top(text, sep):
    depth = 0
    for k in range(len(text)):
        depth += {"(": 1, ")": -1}.get(text[k], 0)
        if depth == 0 and text.startswith(sep, k):
            return text[:k], text[k + len(sep):]
    return text, ""


def _split_commas(text):
    parts, depth, current = [], 0, ""
    for c in text:
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(c, 0)
        if c == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += c
    return parts + ([current.strip()] if current.strip() else [])


def test_the_parser_reads_back_what_the_printer_writes():
    m = thread_map(128, 4, 4, (6, 40, 8))
    printed = PrintedMap(str(m))
    point = printed.points()
    values, ok = printed.evaluate(point)
    expected, expected_ok = m.evaluate([point["th_x"], point["bl_x"]], [point["vector_index"]])
    for got, want in zip(values, expected):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(ok, np.broadcast_to(expected_ok, ok.shape))


# ---------------------------------------------------------------------------
# Building a fusion's kernels and reading their loops
# ---------------------------------------------------------------------------

ELEMENTWISE = """HloModule m
fused {{
  p = f32[{shape}] parameter(0)
  ROOT e = f32[{shape}] exponential(p)
}}
ENTRY main {{
  p = f32[{shape}] parameter(0)
  ROOT f = f32[{shape}] fusion(p), kind=kLoop, calls=fused
}}
"""


class Built:
    """A fusion's first kernel as the emitter left it: launch, report map, loops."""

    def __init__(self, text, row_reduction="per_work_item"):
        module = read_hlo(text)
        computation = module.entry.root.called_computation()
        target = EmitTarget(row_reduction=row_reduction)
        with ir.Context(), ir.Location.unknown():
            builder, plans = build_fusion("f", computation, None, target)
            plan = plans[0]
            self.local_size, self.grid = plan.local_size, plan.grid
            self.loops = _for_loops(plan.module)
            self.ir = str(plan.module)
        self.map = PrintedMap(builder.report.maps[0])


def _constant(value):
    owner = value.owner
    if hasattr(owner, "name") and owner.name == "arith.constant":
        return ir.IntegerAttr(owner.attributes["value"]).value
    if hasattr(owner, "name") and owner.name == "gpu.thread_id":
        return "th_x"
    return None


def _for_loops(module):
    """(lower, upper, step, {attribute: value}) of every scf.for, in program order;
    bounds are ints where they are constants, "th_x" for the work-item id."""
    found = []

    def walk(op):
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    if inner.operation.name == "scf.for":
                        lower, upper, step = list(inner.operands)[:3]
                        attrs = {name: ir.IntegerAttr(inner.attributes[name]).value
                                 for name in ("hlo.lane_accumulators", "hlo.vector_loop")
                                 if name in inner.attributes}
                        found.append((_constant(lower), _constant(upper), _constant(step),
                                      attrs))
                    walk(inner.operation)
    walk(module.operation)
    return found


def _exactly_once(indices, ok, sizes):
    """The valid points reach every index of `sizes` once."""
    flat = np.ravel_multi_index([i[ok] for i in indices], sizes)
    counts = np.bincount(flat, minlength=int(np.prod(sizes)))
    return counts.min() == 1 and counts.max() == 1


# ---------------------------------------------------------------------------
# The emitters
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(1001, 100), (64, 4096), (5, 3)])
def test_per_work_item_row_reduction_follows_its_map(shape):
    built = Built(reduce_module(shape, (1,)))
    m = built.map
    assert m.dims == ["th_x", "bl_x"] and m.symbols == ["i", "lane"]
    assert (m.extent("th_x"), m.extent("bl_x")) == (built.local_size, built.grid)
    rows, length = shape
    (row, position), ok = m.evaluate(m.points())
    assert _exactly_once([row, position], ok, shape)
    # The walk along a row: it starts where lane 0 of step 0 is, moves by the step of
    # i, and lane j reads j positions further on.
    start = m.evaluate(m.points(th_x=0, bl_x=0, i=0, lane=0))[0][1][0]
    step = m.evaluate(m.points(th_x=0, bl_x=0, i=1, lane=0))[0][1][0] - start \
        if m.extent("i") > 1 else None
    lanes = m.extent("lane")
    lane_loops = [loop for loop in built.loops if "hlo.lane_accumulators" in loop[3]]
    if lanes == 1:
        assert not lane_loops and built.loops[0][:3] == (start, length, 1)
        return
    (lower, upper, loop_step, attrs), = lane_loops
    assert (lower, loop_step, attrs["hlo.lane_accumulators"]) == (start, step, lanes)
    assert upper == length - length % lanes
    if length % lanes:     # the positions the lanes leave over, one at a time
        assert built.loops[-1][:3] == (upper, length, 1)


@pytest.mark.parametrize("shape", [(6, 100), (3, 1000)])
def test_tree_row_reduction_follows_its_map(shape):
    built = Built(reduce_module(shape, (1,)), row_reduction="tree")
    m = built.map
    assert (m.extent("th_x"), m.extent("bl_x")) == (built.local_size, built.grid)
    (row, position), ok = m.evaluate(m.points())
    assert _exactly_once([row, position], ok, shape)
    # Work-item th_x starts at position th_x and moves by the work-group size.
    points = m.points(bl_x=0, i=0)
    np.testing.assert_array_equal(m.evaluate(points)[0][1], points["th_x"])
    step = m.evaluate(m.points(th_x=0, bl_x=0, i=1))[0][1][0]
    (lower, upper, loop_step, _), = built.loops
    assert (lower, upper, loop_step) == ("th_x", shape[1], step)


@pytest.mark.parametrize("shape", [(3, 50, 40), (2, 9, 64)])
def test_column_reduction_follows_its_map(shape):
    built = Built(reduce_module(shape, (1,)))
    m = built.map
    assert (m.extent("th_x"), m.extent("bl_x")) == (built.local_size, built.grid)
    (k1, reduced, column), ok = m.evaluate(m.points())
    assert _exactly_once([k1, reduced, column], ok, shape)
    step = m.evaluate(m.points(th_x=0, bl_x=0, i=1))[0][1][0]
    (_, upper, loop_step, _), = built.loops
    assert (upper, loop_step) == (shape[1], step)
    # Columns past the last one are the map's constraint (only where 32 does not
    # divide them), and the kernel's guard.
    column_bounds = [(lo, hi) for e, lo, hi in m.constraints if "mod" in e]
    assert column_bounds == ([(0, shape[2] - 1)] if shape[2] % 32 else [])
    assert "(bl_x mod 2) * 32 + th_x mod 32" in m.results[2] or shape[2] <= 32


@pytest.mark.parametrize("shape", [(6, 40, 8), (3, 5, 7), (4, 128)])
def test_loop_emitter_follows_its_map(shape):
    built = Built(ELEMENTWISE.format(shape=",".join(map(str, shape))))
    m = built.map
    assert m.symbols == ["vector_index"]
    assert (m.extent("th_x"), m.extent("bl_x")) == (built.local_size, built.grid)
    indices, ok = m.evaluate(m.points())
    assert _exactly_once(indices, ok, shape)
    vector = m.extent("vector_index")
    vector_loops = [loop for loop in built.loops if "hlo.vector_loop" in loop[3]]
    if vector == 1:
        assert not vector_loops
    else:
        assert vector_loops == [(0, vector, 1, {"hlo.vector_loop": vector})]
    # A work-item's guard is the map's constraint: present exactly when the grid covers
    # more elements than the output has.
    guarded = "scf.if" in built.ir
    covered = built.local_size * built.grid * vector
    assert guarded == (covered != int(np.prod(shape))) == bool(m.constraints)


# ---------------------------------------------------------------------------
# The pieces: reading loops back from a map, emitting its expressions
# ---------------------------------------------------------------------------

def test_linear_index_of_a_delinearization():
    linear = Dim(1) * 512 + Dim(0) * 4 + Sym(0)
    assert linear_index_of(delinearize(linear, (6, 40, 8)), (6, 40, 8)) == linear
    assert linear_index_of(delinearize(linear, (6, 40, 1)), (6, 40, 1)) == linear
    assert linear_index_of([Dim(0), Dim(1)], (6, 40)) is None


def test_strided_loop_and_coefficients():
    position = Sym(0) * 16 + Sym(1)
    m = IndexingMap([(0, 7), (0, 9)], [Dim(1) * 8 + Dim(0), position],
                    symbol_ranges=[(0, 6), (0, 15)], constraints=[(position, 0, 99)])
    loop = strided_loop(m, 1, 0)
    assert (str(loop.start), loop.step, loop.stop) == ("0", 16, 100)
    assert coefficient(position, 1) == 1 and coefficient(m.results[0], 0) == 0
    with pytest.raises(ValueError, match="not a plain term"):
        coefficient(Sym(0) // 2, 0)


def _kernel_ir(body) -> str:
    """The IR of a kernel function whose body `body(ids)` builds (ids: th_x, bl_x)."""
    from mlir.dialects import func, gpu
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp("k", ir.FunctionType.get([], []))
        with ir.InsertionPoint(fn.add_entry_block()):
            body([gpu.thread_id(gpu.Dimension.x), gpu.block_id(gpu.Dimension.x)])
            func.ReturnOp([])
        return str(module)


def test_emitted_expressions_and_guards():
    """The map's expressions become index arithmetic, its constraints compares, its
    strided loops scf.for bounds."""
    position = Dim(0) + Sym(0) * 64
    m = IndexingMap([(0, 63), (0, 9)], [Dim(1) * 8 + Dim(0) % 8, position],
                    symbol_ranges=[(0, 1)], constraints=[(position, 0, 99)])
    found = {}

    def body(ids):
        emit_expr(m.results[0], ids)
        found["guard"] = constraints_hold(m, ids, [ids[0]])
        found["start"], _, _ = loop_bounds(strided_loop(m, 1, 0), ids)
        found["th_x"] = ids[0]
    text = _kernel_ir(body)
    assert found["start"] == found["th_x"] and found["guard"] is not None
    # Non-negative expressions: C's / and % (arith.divsi/remsi) are floordiv and mod,
    # and a sum of ids is never below 0 (no lower-bound compare).
    assert "arith.remsi" in text and "arith.select" not in text
    assert "arith.cmpi sle" in text and "arith.cmpi sge" not in text
    assert "arith.constant 100 : index" in text and "arith.constant 64 : index" in text
    # An expression that may be negative gets floordiv's rounding toward -inf.
    negative = _kernel_ir(lambda ids: emit_expr((Dim(1) - Dim(0)) // 4, ids))
    assert "arith.floordivsi" in negative and "arith.divsi" not in negative
