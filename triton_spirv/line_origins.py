"""Which source lines each line of a printed stage came from.

The stage viewer (viewer.py) highlights, for a selected Python (or HLO) line, the lines
it became in every stage. It reads that from the stage texts themselves, as printed:

* MLIR (TTIR, Linalg, memref stage, HLO pass stages): the `loc(...)` of each line,
  with `#locN = loc(...)` aliases resolved; name, call-site and fused locations count
  every file position they hold (a call site maps to the call and to the callee);
* OpenCL C: the emitter's comment before each group of lines, `// text  (file.py:12)`;
* SPIR-V disassembly: `OpLine %file LINE COL` up to the next `OpLine`/`OpNoLine`.

Each function returns, per line of the text (0-based), the set of line numbers of
`source_path` it came from. Files are compared by absolute path, or by base name when
the stage only names the base name (OpenCL comments).
"""
from __future__ import annotations

import os
import re

from launcher.program import origin_comment

# "path":LINE:COL inside a location (a NameLoc's name is followed by "(", not ":").
_FILE_POSITION = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):\d+')
_ALIAS_USE = re.compile(r"#loc\d*\b")
_ALIAS_DEFINITION = re.compile(r"^(#loc\d*)\s*=\s*loc\((.*)\)\s*$")
_OPSTRING = re.compile(r'^\s*(%\w+)\s*=\s*OpString\s+"((?:[^"\\]|\\.)*)"')
_OPLINE = re.compile(r"\bOpLine\s+(%\w+)\s+(\d+)\s+\d+")
# Lines where an OpenCL C origin ends: a new function begins.
_FUNCTION_START = re.compile(r"^(__kernel|static inline|__attribute__)")


def _same_file(named: str, source_path: str) -> bool:
    if os.path.isabs(named):
        return os.path.abspath(named) == os.path.abspath(source_path)
    return os.path.basename(named) == os.path.basename(source_path)


def _positions(text: str, source_path: str) -> set[int]:
    return {int(m.group(2)) for m in _FILE_POSITION.finditer(text)
            if _same_file(m.group(1), source_path)}


def _resolve_aliases(lines: list[str], source_path: str) -> dict[str, set[int]]:
    """`#locN` -> the source lines its definition reaches (aliases may use aliases)."""
    definitions = {}
    for line in lines:
        match = _ALIAS_DEFINITION.match(line)
        if match:
            definitions[match.group(1)] = match.group(2)
    resolved: dict[str, set[int]] = {}

    def resolve(alias: str, visiting: frozenset) -> set[int]:
        if alias in resolved:
            return resolved[alias]
        body = definitions.get(alias, "")
        found = _positions(body, source_path)
        for used in _ALIAS_USE.findall(body):
            if used not in visiting:
                found |= resolve(used, visiting | {used})
        resolved[alias] = found
        return found

    for alias in definitions:
        resolve(alias, frozenset({alias}))
    return resolved


def mlir_line_origins(text: str, source_path: str) -> list[set[int]]:
    lines = text.splitlines()
    aliases = _resolve_aliases(lines, source_path)
    origins = []
    for line in lines:
        if _ALIAS_DEFINITION.match(line):
            origins.append(set())
            continue
        found = _positions(line, source_path)
        for used in _ALIAS_USE.findall(line):
            found |= aliases.get(used, set())
        origins.append(found)
    _give_openers_their_closers_origin(lines, origins)
    return origins


def _give_openers_their_closers_origin(lines: list[str], origins: list[set[int]]) -> None:
    """An op with regions prints its location after its closing brace
    (`} loc(#loc7)`); the line that opens it (`scf.if %c {`) and the lines between its
    regions (`} else {`) get the same origin."""
    open_ops: list[list[int]] = []  # per op being printed, its lines ending in "{"
    for number, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("}") and stripped.endswith("{") and open_ops:
            open_ops[-1].append(number)
        elif stripped.startswith("}") and open_ops:
            for opener in open_ops.pop():
                if not origins[opener]:
                    origins[opener] = set(origins[number])
        elif stripped.endswith("{"):
            open_ops.append([number])


def opencl_line_origins(text: str, source_path: str) -> list[set[int]]:
    origins, current = [], set()
    for line in text.splitlines():
        comment = origin_comment(line)
        if comment is not None:
            current = {comment[1]} if _same_file(comment[0], source_path) else set()
        elif _FUNCTION_START.match(line):
            current = set()
        origins.append(set(current))
    return origins


def spirv_line_origins(text: str, source_path: str) -> list[set[int]]:
    files, origins, current = {}, [], set()
    for line in text.splitlines():
        named = _OPSTRING.match(line)
        if named:
            files[named.group(1)] = named.group(2)
        position = _OPLINE.search(line)
        if position:
            path = files.get(position.group(1), "")
            current = {int(position.group(2))} if _same_file(path, source_path) else set()
        elif "OpNoLine" in line or "OpFunctionEnd" in line:
            current = set()
        origins.append(set(current))
    return origins


def line_origins(stage: str, text: str, source_path: str) -> list[set[int]]:
    """Per line of a stage's text, the lines of `source_path` it came from."""
    if stage == "cl":
        return opencl_line_origins(text, source_path)
    if stage == "spvasm":
        return spirv_line_origins(text, source_path)
    return mlir_line_origins(text, source_path)
