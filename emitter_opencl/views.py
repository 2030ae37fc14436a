"""Memref views as index arithmetic.

A memref value in the memref stage is always a *view* of a root buffer: a kernel
argument (`__global T*`) or a work-group array (`__local T[n]`). The emitter never
materializes a view; it tracks (root buffer, offset, sizes, strides) and prints the
element index `offset + i0*s0 + i1*s1 + ...` at each load, store and copy.

Offsets, sizes and strides are `Expr`s: a Python int when statically known (so that
static index arithmetic folds), else a C expression of type `long`. The SPIR-V stage
reuses the same views with a third kind of `Expr`, an object with `+` and `*` that
builds `arith` ops (triton_spirv/spirv/flatten.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence, Union

Expr = Union[int, str]

_ATOM = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+|\(.*\)")


def atom(e: Expr) -> str:
    """`e` as an operand that binds tighter than any binary operator."""
    text = str(e)
    if isinstance(e, int):
        return f"({text})" if e < 0 else text
    if _ATOM.fullmatch(text) and _balanced(text):
        return text
    return f"({text})"


# Texts that bind as tightly as an operand of any binary operator, parentheses aside:
# a call `min(a, b)`, or a cast of a name or number `(long)n`.
_CALL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\(.*\))")
_CAST_OF_NAME = re.compile(r"\((?:int|long|uint|ulong)\)[A-Za-z0-9_]+")


def inlined_operand(text: str) -> str:
    """An expression inlined into another, as an operand of a binary operator
    (parenthesized unless it binds tightly already)."""
    call = _CALL.fullmatch(text)
    if (call and _balanced(call.group(1))) or _CAST_OF_NAME.fullmatch(text):
        return text
    return atom(text)


def _balanced(text: str) -> bool:
    """True when an outer pair of parentheses (if any) encloses the whole text."""
    if not text.startswith("("):
        return True
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and i < len(text) - 1:
            return False
    return True


def add(a: Expr, b: Expr) -> Expr:
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    if a == 0:
        return b
    if b == 0:
        return a
    if _built(a, b):
        return a + b
    if isinstance(b, int) and b < 0:
        return f"{a} - {-b}"
    return f"{a} + {b}"


def mul(a: Expr, b: Expr) -> Expr:
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    if a == 0 or b == 0:
        return 0
    if a == 1:
        return b
    if b == 1:
        return a
    if _built(a, b):
        return a * b
    if isinstance(a, int):  # constants last reads better: `row * 32`
        a, b = b, a
    return f"{atom(a)} * {atom(b)}"


def _built(a: Expr, b: Expr) -> bool:
    """Neither side is C text: the operands build their own arithmetic."""
    return not isinstance(a, str) and not isinstance(b, str)


def product(items: Sequence[Expr]) -> Expr:
    result: Expr = 1
    for item in items:
        result = mul(result, item)
    return result


@dataclass(frozen=True)
class Buffer:
    """A root buffer: a kernel argument or a work-group (`__local`) array."""
    name: str
    space: str          # "global", "local" or "private"
    kind: str           # element kind ("f32", "f16", "i1", ...)
    num_elements: int = 0  # local arrays only

    @property
    def is_global(self) -> bool:
        return self.space == "global"


@dataclass(frozen=True)
class View:
    buffer: Buffer
    offset: Expr
    sizes: tuple[Expr, ...]
    strides: tuple[Expr, ...]

    @property
    def rank(self) -> int:
        return len(self.sizes)

    @staticmethod
    def contiguous(buffer: Buffer, shape: Sequence[Expr]) -> "View":
        """A row-major view of a whole buffer."""
        strides: list[Expr] = []
        running: Expr = 1
        for size in reversed(shape):
            strides.append(running)
            running = mul(running, size)
        return View(buffer, 0, tuple(shape), tuple(reversed(strides)))

    def element(self, indices: Sequence[Expr]) -> Expr:
        """The flat element index of `view[indices]` in the root buffer."""
        index = self.offset
        for i, stride in zip(indices, self.strides):
            index = add(index, mul(i, stride))
        return index

    def reinterpret(self, offset: Expr, sizes: Sequence[Expr],
                    strides: Sequence[Expr]) -> "View":
        # reinterpret_cast offsets are measured from the root, not from this view.
        return View(self.buffer, offset, tuple(sizes), tuple(strides))

    def subview(self, offsets: Sequence[Expr], sizes: Sequence[Expr],
                strides: Sequence[Expr], dropped: Sequence[int]) -> "View":
        offset = self.element(offsets)
        kept = [d for d in range(self.rank) if d not in dropped]
        return View(self.buffer, offset,
                    tuple(sizes[d] for d in kept),
                    tuple(mul(self.strides[d], strides[d]) for d in kept))

    def collapse(self, groups: Sequence[Sequence[int]]) -> "View":
        """collapse_shape: each group of dims is contiguous, so it is one dim with
        the innermost stride and the product of the sizes."""
        sizes = tuple(product([self.sizes[d] for d in group]) for group in groups)
        strides = tuple(self.strides[group[-1]] if group else 1 for group in groups)
        return View(self.buffer, self.offset, sizes, strides)

    def expand(self, groups: Sequence[Sequence[int]],
               out_sizes: Sequence[Expr]) -> "View":
        """expand_shape: each source dim splits row-major into its group."""
        strides: list[Expr] = [0] * len(out_sizes)
        for src_dim, group in enumerate(groups):
            running = self.strides[src_dim] if self.rank else 1
            for d in reversed(group):
                strides[d] = running
                running = mul(running, out_sizes[d])
        return View(self.buffer, self.offset, tuple(out_sizes), tuple(strides))


def rank_reduction_mask(sizes: Sequence[int | None],
                        reduced_shape: Sequence[int | None]) -> list[int] | None:
    """Which unit dims a rank-reducing subview drops (upstream's algorithm: match
    result dims left to right; a size-1 dim that does not match is dropped).
    Sizes are static ints or None for dynamic."""
    dropped: list[int] = []
    r = 0
    for d, size in enumerate(sizes):
        if r < len(reduced_shape) and size == reduced_shape[r]:
            r += 1
        elif size == 1:
            dropped.append(d)
        else:
            return None
    return dropped if r == len(reduced_shape) else None
