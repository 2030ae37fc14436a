"""Bounds-checked code generation (`emit_opencl(module, bounds_check=True)`).

Every access to a global buffer is checked against the buffer's extent before it
touches memory. The kernel gets hidden parameters after its own ones:

    long <buffer>_extent   one per global buffer parameter, in parameter order:
                           how many elements the buffer holds
    __global int* bounds_err
                           the error record (BOUNDS_ERROR_INTS ints, zeroed by the
                           launcher before each launch)

An access out of bounds does nothing (a load yields 0, a store or an async copy is
skipped) and reports into the record: word 0 counts violations, word 1 is set once
by the first one, which also writes its site (word 2) and offending element index
(words 3 and 4: low and high 32 bits). A site is one access in the source: which
parameter, load or store, the op and the Python line (`EmittedKernel.bounds_sites`).

Without the option none of this is printed: generated code is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from .locations import real_source_line, source_line
from .views import Buffer, Expr, atom

BOUNDS_ERROR_INTS = 8
ERROR_PARAM = "bounds_err"
HELPER_NAMES = {"bounds_report", "bounds_ok", "bounds_range_ok", ERROR_PARAM}

_HELPERS = """\
// Bounds checking: an access outside its buffer is skipped and reported here.
static inline void bounds_report(__global int* err, long index, int site) {
  atomic_inc(&err[0]);
  if (atomic_cmpxchg(&err[1], 0, 1) == 0) {
    err[2] = site;
    err[3] = (int)(index & 0xffffffffL);
    err[4] = (int)(index >> 32);
  }
}
static inline bool bounds_ok(__global int* err, long index, long extent, int site) {
  if (index >= 0 && index < extent)
    return true;
  bounds_report(err, index, site);
  return false;
}
static inline bool bounds_range_ok(__global int* err, long start, long count, long stride,
                                   long extent, int site) {
  if (count <= 0)
    return true;
  long last = start + (count - 1) * stride;
  if (start >= 0 && start < extent && last >= 0 && last < extent)
    return true;
  bounds_report(err, start < 0 || start >= extent ? start : last, site);
  return false;
}"""


@dataclass(frozen=True)
class BoundsSite:
    """One checked access: `param` is the index of the kernel parameter."""
    param: int
    access: str      # "load" or "store" (async copies too)
    op: str          # the memref-stage op, e.g. "memref.copy"
    path: str        # Python source file ("" when unknown)
    line: int        # Python source line (0 when unknown)

    def as_dict(self) -> dict:
        return {"param": self.param, "access": self.access, "op": self.op, "path": self.path,
                "line": self.line}


class BoundsChecks:
    """The hidden parameters, sites and guards of one kernel."""

    def __init__(self, emitter):
        self.emitter = emitter
        self.sites: list[BoundsSite] = []
        self._site_ids: dict[tuple, int] = {}
        self.extents: dict[str, str] = {}      # buffer C name -> extent parameter name
        self.params: dict[str, int] = {}       # buffer C name -> parameter index
        self.hidden_params: list[int] = []     # parameter index of each extent parameter

    # -- declarations --------------------------------------------------------

    def add_hidden_params(self, params: list[str], buffers: list[tuple[int, str]]) -> list[str]:
        """Append the hidden parameters to `params`; -> their C types."""
        names = self.emitter.names
        types = []
        for index, name in buffers:
            extent = names.fresh(f"{name}_extent")
            self.extents[name] = extent
            self.params[name] = index
            self.hidden_params.append(index)
            params.append(f"long {extent}")
            types.append("long")
        params.append(f"__global int* {ERROR_PARAM}")
        types.append("__global int*")
        return types

    def helpers_source(self) -> str:
        return _HELPERS

    # -- guards --------------------------------------------------------------

    def site(self, buffer: Buffer, access: str) -> int:
        op = self.emitter.current_op
        where = real_source_line(op.location) or source_line(op.location) if op is not None else None
        key = (self.params[buffer.name], access, op.operation.name if op is not None else "",
               where.path if where else "", where.line if where else 0)
        if key not in self._site_ids:
            self._site_ids[key] = len(self.sites)
            self.sites.append(BoundsSite(*key))
        return self._site_ids[key]

    def checked(self, buffer: Buffer) -> bool:
        return buffer.is_global and buffer.name in self.extents

    def load(self, buffer: Buffer, index: Expr, expr: str) -> str:
        """`expr` (a load of buffer[index]) guarded: 0 when out of bounds."""
        if not self.checked(buffer):
            return expr
        condition = self._ok(buffer, index, "load")
        return f"({condition} ? {expr} : 0)"

    def store(self, buffer: Buffer, index: Expr, stmt: str) -> str:
        """`stmt` (a store to buffer[index]) guarded: skipped when out of bounds."""
        if not self.checked(buffer):
            return stmt
        return f"if ({self._ok(buffer, index, 'store')}) {stmt}"

    def vector(self, buffer: Buffer, start: Expr, width: int, text: str, store: bool,
               ctype: str = "") -> str:
        """A vloadN / vstoreN of elements [start, start + width) guarded."""
        if not self.checked(buffer):
            return text
        site = self.site(buffer, "store" if store else "load")
        condition = (f"bounds_range_ok({ERROR_PARAM}, {start}, {width}, 1, "
                     f"{self.extents[buffer.name]}, {site})")
        if store:
            return f"if ({condition}) {text}"
        return f"({condition} ? {text} : ({ctype})(0))"

    def copy_count(self, buffer: Buffer, start: Expr, count: Expr, stride: Expr, to_global: bool) -> Expr:
        """The element count of an async copy row: 0 (nothing copied) when the row is
        not entirely inside the global buffer."""
        if not self.checked(buffer):
            return count
        site = self.site(buffer, "store" if to_global else "load")
        return (f"(bounds_range_ok({ERROR_PARAM}, {start}, {count}, {stride}, "
                f"{self.extents[buffer.name]}, {site}) ? {atom(count)} : 0)")

    def _ok(self, buffer: Buffer, index: Expr, access: str) -> str:
        site = self.site(buffer, access)
        return f"bounds_ok({ERROR_PARAM}, {index}, {self.extents[buffer.name]}, {site})"
