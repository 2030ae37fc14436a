"""Bounds-checked code generation (`emit_opencl(module, bounds_check=True)`).

Every access to a global buffer is checked against the buffer's extent before it
touches memory. The kernel gets hidden parameters after its own ones:

    long <buffer>_extent   one per global buffer parameter, in parameter order:
                           how many elements the buffer holds
    __global int* bounds_err
                           the bounds record (zeroed by the launcher before each launch)

An access out of bounds does nothing (a load yields 0, a store or an async copy is
skipped) and reports into the record: it counts the violations, and the first one
claims the record and writes its site and offending element index (the layout, and
where these parameters sit among the hidden ones: opencl_abi). A site is one access in
the source: which parameter, load or store, the op and the Python line
(`EmittedKernel.bounds_sites`).

Without the option none of this is printed: generated code is unchanged.
"""

from __future__ import annotations

from opencl_abi import (BOUNDS_CLAIMED, BOUNDS_COUNT, BOUNDS_EXTENT, BOUNDS_INDEX_HIGH,
                        BOUNDS_INDEX_LOW, BOUNDS_SITE, BoundsSite)

from . import ctypes_table as ct
from .locations import real_source_line, source_line
from .views import Buffer, Expr, atom

ERROR_PARAM = "bounds_err"


def _vector_helper_name(access: str, width: int, kind: str) -> str:
    return f"bounds_v{access}{width}_{kind}"


HELPER_NAMES = {"bounds_report", "bounds_ok", "bounds_range_ok", ERROR_PARAM} | {
    _vector_helper_name(access, width, kind) for access in ("load", "store")
    for width in ct.VECTOR_WIDTHS for kind in ct.SCALAR_KINDS}

_HELPERS = f"""\
// Bounds checking: an access outside its buffer is skipped and reported here.
static inline void bounds_report(__global int* err, long index, int site) {{
  atomic_inc(&err[{BOUNDS_COUNT}]);
  if (atomic_cmpxchg(&err[{BOUNDS_CLAIMED}], 0, 1) == 0) {{
    err[{BOUNDS_SITE}] = site;
    err[{BOUNDS_INDEX_LOW}] = (int)(index & 0xffffffffL);
    err[{BOUNDS_INDEX_HIGH}] = (int)(index >> 32);
  }}
}}
static inline bool bounds_ok(__global int* err, long index, long extent, int site) {{
  if (index >= 0 && index < extent)
    return true;
  bounds_report(err, index, site);
  return false;
}}
static inline bool bounds_range_ok(__global int* err, long start, long count, long stride,
                                   long extent, int site) {{
  if (count <= 0)
    return true;
  long last = start + (count - 1) * stride;
  if (start >= 0 && start < extent && last >= 0 && last < extent)
    return true;
  bounds_report(err, start < 0 || start >= extent ? start : last, site);
  return false;
}}"""


def _vector_access_helper(access: str, width: int, kind: str) -> str:
    """A checked vloadN / vstoreN: the whole vector when it lies inside the buffer, else
    lane by lane, so the in-bounds lanes are read or written as by the scalar loop the
    vector replaced (and each out-of-bounds lane is reported like a scalar access)."""
    name = _vector_helper_name(access, width, kind)
    elem, lane, vector = ct.GLOBAL_ELEM_CTYPE[kind], ct.value_ctype(kind), ct.value_ctype(kind, width)
    half = "_half" if kind == "f16" else ""
    inside = f"  if (start >= 0 && start + {width} <= extent)\n"
    if access == "load":
        lane_read = "vload_half(i, at)" if half else "at[i]"
        return (f"static inline {vector} {name}(__global int* err, const __global {elem}* at,\n"
                f"    long start, long extent, int site) {{\n{inside}"
                f"    return vload{half}{width}(0, at);\n"
                f"  {lane} lanes[{width}];\n"
                f"  for (int i = 0; i < {width}; ++i)\n"
                f"    lanes[i] = bounds_ok(err, start + i, extent, site) ? {lane_read} : 0;\n"
                f"  return vload{width}(0, lanes);\n}}")
    lane_write = "vstore_half_rte(lanes[i], i, at)" if half else "at[i] = lanes[i]"
    return (f"static inline void {name}(__global int* err, {vector} value, __global {elem}* at,\n"
            f"    long start, long extent, int site) {{\n"
            f"  if (start >= 0 && start + {width} <= extent) {{\n"
            f"    vstore{half}{width}{'_rte' if half else ''}(value, 0, at);\n"
            f"    return;\n  }}\n"
            f"  {lane} lanes[{width}];\n"
            f"  vstore{width}(value, 0, lanes);\n"
            f"  for (int i = 0; i < {width}; ++i)\n"
            f"    if (bounds_ok(err, start + i, extent, site))\n"
            f"      {lane_write};\n}}")


class BoundsChecks:
    """The hidden parameters, sites and guards of one kernel."""

    def __init__(self, emitter):
        self.emitter = emitter
        self.sites: list[BoundsSite] = []
        self._site_ids: dict[tuple, int] = {}
        self.extents: dict[str, str] = {}      # buffer C name -> extent parameter name
        self.params: dict[str, int] = {}       # buffer C name -> parameter index
        self.hidden_params: list[int] = []     # parameter index of each extent parameter
        self.vector_helpers: dict[str, str] = {}  # helper name -> its source, in first use order

    # -- declarations --------------------------------------------------------

    def add_hidden_params(self, params: list[str], buffers: list[tuple[int, str]],
                          hidden: list) -> list[str]:
        """Append bounds-checked mode's hidden parameters to `params`: `hidden`, as
        opencl_abi.hidden_parameters gives them, an extent per (index, C name) of `buffers`
        and the record; -> their C types."""
        names = self.emitter.names
        extents = iter(buffers)
        for parameter in hidden:
            if parameter.kind == BOUNDS_EXTENT:
                index, name = next(extents)
                extent = names.fresh(f"{name}_extent")
                self.extents[name] = extent
                self.params[name] = index
                self.hidden_params.append(index)
                params.append(f"{parameter.c_type} {extent}")
            else:
                params.append(f"{parameter.c_type} {ERROR_PARAM}")
        return [parameter.c_type for parameter in hidden]

    def helpers_source(self) -> str:
        return "\n".join([_HELPERS, *self.vector_helpers.values()])

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

    def vector_load(self, buffer: Buffer, start: Expr, width: int, pointer: str, text: str) -> str:
        """`text` (a vloadN of elements [start, start + width) at `pointer`) checked."""
        if not self.checked(buffer):
            return text
        name = self._vector_helper("load", width, buffer.kind)
        return (f"{name}({ERROR_PARAM}, {pointer}, {start}, {self.extents[buffer.name]}, "
                f"{self.site(buffer, 'load')})")

    def vector_store(self, buffer: Buffer, start: Expr, width: int, pointer: str, value: str,
                     text: str) -> str:
        """`text` (a vstoreN of `value` to elements [start, start + width)) checked."""
        if not self.checked(buffer):
            return text
        name = self._vector_helper("store", width, buffer.kind)
        return (f"{name}({ERROR_PARAM}, {value}, {pointer}, {start}, "
                f"{self.extents[buffer.name]}, {self.site(buffer, 'store')});")

    def _vector_helper(self, access: str, width: int, kind: str) -> str:
        name = _vector_helper_name(access, width, kind)
        if name not in self.vector_helpers:
            self.vector_helpers[name] = _vector_access_helper(access, width, kind)
        return name

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
