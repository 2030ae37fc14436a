"""Source locations and names carried by MLIR `Location`s.

Producers attach `NameLoc`s (`loc("offs"("/path/kernel.py":10:12))`) to the ops that
define named Python variables, and file:line locations to everything else; inlined
helpers show up as `CallSiteLoc`s and merged ops as `FusedLoc`s.
"""

from __future__ import annotations

import linecache
import os
from dataclasses import dataclass

from mlir import ir

# Files that are not real sources: MLIR text parsed from a string reports "-".
_PSEUDO_FILES = {"", "-", "<stdin>", "<unknown>"}


@dataclass(frozen=True)
class SourceLine:
    path: str
    line: int

    @property
    def short(self) -> str:
        return f"{os.path.basename(self.path)}:{self.line}"

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"

    def text(self) -> str:
        """The source line itself when the file is readable (for comments)."""
        return linecache.getline(self.path, self.line).strip()


def source_line(loc: ir.Location) -> SourceLine | None:
    """The first file:line reachable from `loc`; for call sites, the callee side
    (where the op's code is written) is preferred over the caller."""
    if loc.is_a_file():
        return SourceLine(loc.filename, loc.start_line)
    if loc.is_a_name():
        return source_line(loc.child_loc)
    if loc.is_a_callsite():
        return source_line(loc.callee) or source_line(loc.caller)
    if loc.is_a_fused():
        for part in loc.locations:
            found = source_line(part)
            if found is not None:
                return found
    return None


def real_source_line(loc: ir.Location) -> SourceLine | None:
    """Like `source_line`, but None for pseudo files such as parsed strings."""
    found = source_line(loc)
    return None if found is None or found.path in _PSEUDO_FILES else found


def source_name(loc: ir.Location) -> str | None:
    """The variable name of the first NameLoc reachable from `loc`."""
    if loc.is_a_name():
        return loc.name_str
    if loc.is_a_callsite():
        return source_name(loc.callee)
    if loc.is_a_fused():
        for part in loc.locations:
            found = source_name(part)
            if found:
                return found
    return None
