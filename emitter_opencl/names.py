"""Unique C identifiers for kernel arguments, SSA values, loops and buffers."""

from __future__ import annotations

import re

# C / OpenCL C keywords and type names, plus the builtins the emitter calls, so that a
# Python variable called `max` or `float` cannot shadow what the generated code uses.
_RESERVED = set("""
auto break case char const continue default do double else enum extern float for goto
if inline int long register restrict return short signed sizeof static struct switch
typedef union unsigned void volatile while bool true false half uchar ushort uint ulong
size_t ptrdiff_t intptr_t uintptr_t event_t kernel global local constant private
read_only write_only read_write image2d_t image3d_t sampler_t NAN INFINITY
abs acos acosh asin asinh atan atan2 atanh cbrt ceil clz copysign cos cosh erf erfc exp
exp2 expm1 fabs floor fma fmax fmin fmod isnan isinf isfinite isordered isunordered
islessgreater log log10 log1p log2 max min pow pown popcount rint round rsqrt select
signbit sin sinh sqrt tan tanh trunc barrier as_float as_uint as_int as_double as_ulong
as_long get_group_id get_num_groups get_local_id get_local_size get_global_id
async_work_group_copy async_work_group_strided_copy wait_group_events vload_half
vstore_half vstore_half_rte
""".split())


def sanitize(name: str) -> str:
    """A C identifier resembling `name` (Python names may hold dots, brackets...)."""
    ident = re.sub(r"[^0-9A-Za-z_]", "_", name).strip("_")
    ident = re.sub(r"__+", "_", ident)
    if not ident:
        return ""
    if ident[0].isdigit():
        ident = "v" + ident
    return ident


class NameTable:
    """Hands out identifiers that are unique within one kernel: the first request
    for `offs` gets `offs`, later ones `offs_1`, `offs_2`, ..."""

    def __init__(self, reserved: set[str] | None = None):
        self._taken: set[str] = set(_RESERVED) | (reserved or set())
        self._counters: dict[str, int] = {}
        self._scopes: list[list[str]] = [[]]

    def push_scope(self) -> None:
        """Enter a C block: names taken inside it are free again after `pop_scope`
        (sibling loops can both use `i`), but never shadow an enclosing name."""
        self._scopes.append([])

    def pop_scope(self) -> None:
        for name in self._scopes.pop():
            self._taken.discard(name)

    def _take(self, name: str) -> str:
        self._taken.add(name)
        self._scopes[-1].append(name)
        return name

    def reserve(self, name: str) -> None:
        """Keep `name` (e.g. the kernel's own name) out of reach for good."""
        self._taken.add(name)

    def fresh(self, base: str) -> str:
        """`base` itself if still free, else `base_1`, `base_2`, ..."""
        if base not in self._taken:
            return self._take(base)
        return self._numbered(base)

    def from_source(self, wanted: str | None, fallback: str) -> str:
        """A name from a source variable name (sanitized), else `fallback` numbered
        (`v0`, `v1`, ...)."""
        base = sanitize(wanted) if wanted else ""
        if not base or base.startswith("__") or base.startswith("get_"):
            return self.numbered(fallback)
        return self.fresh(base)

    def numbered(self, prefix: str) -> str:
        """`prefix0`, `prefix1`, ...: for values without a source name."""
        n = self._counters.get(prefix + "#", 0)
        while f"{prefix}{n}" in self._taken:
            n += 1
        self._counters[prefix + "#"] = n + 1
        return self._take(f"{prefix}{n}")

    def _numbered(self, base: str) -> str:
        n = 1
        while f"{base}_{n}" in self._taken:
            n += 1
        return self._take(f"{base}_{n}")
