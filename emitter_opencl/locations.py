"""Source locations and names carried by MLIR `Location`s.

Producers attach `NameLoc`s (`loc("offs"("/path/kernel.py":10:12))`) to the ops that
define named Python variables, and file:line locations to everything else; inlined
helpers show up as `CallSiteLoc`s and merged ops as `FusedLoc`s.

Comments and error messages name the user's code: a frame inside Triton's language
library (`triton/language/standard.py:155` for `tl.zeros`) gives way to the call site
that reached it.
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


def is_library_file(path: str) -> bool:
    """Whether `path` is a module of Triton's language library (`.../triton/language/...`),
    whose lines mean nothing to the author of a kernel."""
    parts = os.path.normpath(path).split(os.sep)
    return any(parts[i:i + 2] == ["triton", "language"] for i in range(len(parts) - 1))


def source_line(loc: ir.Location) -> SourceLine | None:
    """The file:line of the user's code that `loc` stands for. For call sites the callee
    side (where the op's code is written, e.g. a @triton.jit helper) is preferred over
    the caller, unless the callee is inside Triton's language library: then the call
    site that reached it. Of fused parts, the first user line wins."""
    return _preferring_user_code(_candidates(loc))


def _candidates(loc: ir.Location) -> list[SourceLine]:
    """The lines `loc` could be reported at, best first, before skipping library frames."""
    if loc.is_a_file():
        return [SourceLine(loc.filename, loc.start_line)]
    if loc.is_a_name():
        return _candidates(loc.child_loc)
    if loc.is_a_callsite():
        callee = source_line(loc.callee)
        caller = source_line(loc.caller)
        return [line for line in (callee, caller) if line is not None]
    if loc.is_a_fused():
        return [line for part in loc.locations if (line := source_line(part)) is not None]
    return []


def _preferring_user_code(lines: list[SourceLine]) -> SourceLine | None:
    user = [line for line in lines if not is_library_file(line.path)]
    return (user or lines or [None])[0]


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
