"""HLO text -> Python objects (`HloModule`, `HloComputation`, `HloInstruction`).

Reads HLO as XLA prints it (`HloModule::ToString`, `jax.jit(f).lower(...).compile()
.as_text()`): the module header, the `FileNames`/`FunctionNames`/`FileLocations`/
`StackFrames` sections, computations with or without `%` sigils and signatures, the
ENTRY computation, instructions with typed or untyped operands and their attributes.
Attribute values are kept as raw text and interpreted on demand by the accessors of
`HloInstruction`, so attributes this frontend does not use (metadata, backend_config
JSON, frontend_attributes, sharding, ...) read without being understood.

Text that does not read raises `HloParseError` with the line and column.
"""
from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field

from .errors import HloParseError, HloUnsupportedError, where
from .shapes import ELEMENT_TYPES, OPAQUE_TYPES, Shape

_NAME = re.compile(r"%?([A-Za-z_][\w.\-]*)")
_INT = re.compile(r"-?\d+")
_DIM_NAME = re.compile(r"[A-Za-z_]\w*")
_SECTION_ENTRY = re.compile(r"\d+\s")
# Sections XLA prints between the header and the computations (stack-frame tables).
_SECTIONS = {"FileNames", "FunctionNames", "FileLocations", "StackFrames"}


@dataclass(eq=False)
class HloInstruction:
    name: str
    opcode: str
    shape: Shape
    operands: list["HloInstruction"]
    attrs: dict[str, str]
    line: int
    column: int
    literal: str | None = None          # the text between the parentheses of constant()
    parameter_number: int | None = None
    is_root: bool = False
    computation: "HloComputation | None" = None
    users: list["HloInstruction"] = field(default_factory=list)
    called: list["HloComputation"] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"%{self.name} = {self.shape} {self.opcode}(...)"

    # -- typed accessors of attributes ---------------------------------------

    def attr(self, key: str) -> str:
        if key not in self.attrs:
            raise HloUnsupportedError(f"{where(self)}: missing attribute {key}=")
        return self.attrs[key]

    def int_list(self, key: str, default=None) -> tuple[int, ...]:
        if key not in self.attrs and default is not None:
            return tuple(default)
        return tuple(int(v) for v in _INT.findall(self.attr(key)))

    def int_attr(self, key: str, default: int | None = None) -> int:
        if key not in self.attrs and default is not None:
            return default
        return int(self.attr(key))

    def dimensions(self) -> tuple[int, ...]:
        return self.int_list("dimensions", ())

    def slice_bounds(self) -> list[tuple[int, int, int]]:
        """slice={[a:b], [a:b:s]} -> [(start, limit, stride)]."""
        bounds = []
        for part in re.findall(r"\[([^\]]*)\]", self.attr("slice")):
            nums = [int(v) for v in part.split(":")]
            bounds.append((nums[0], nums[1], nums[2] if len(nums) > 2 else 1))
        return bounds

    def padding(self) -> list[tuple[int, int, int]]:
        """padding=lo_hi[_interior]x... -> [(low, high, interior)]."""
        text = self.attr("padding")
        result = []
        for part in text.split("x"):
            nums = [int(v) for v in part.split("_")]
            result.append((nums[0], nums[1], nums[2] if len(nums) > 2 else 0))
        return result

    def window(self) -> dict[str, list]:
        """window={size=2x2 stride=1x1 pad=0_0x1_1 ...} -> per-dimension lists."""
        text = self.attr("window").strip("{}")
        fields: dict[str, list] = {}
        for item in text.split():
            key, _, value = item.partition("=")
            if key == "pad":
                fields[key] = [tuple(int(v) for v in p.split("_")) for p in value.split("x")]
            else:
                fields[key] = [int(v) for v in value.split("x")]
        rank = len(fields.get("size", []))
        fields.setdefault("stride", [1] * rank)
        fields.setdefault("pad", [(0, 0)] * rank)
        fields.setdefault("lhs_dilate", [1] * rank)
        fields.setdefault("rhs_dilate", [1] * rank)
        return fields

    def called_computation(self) -> "HloComputation":
        if len(self.called) != 1:
            raise HloUnsupportedError(f"{where(self)}: expected one called computation")
        return self.called[0]


@dataclass(eq=False)
class HloComputation:
    name: str
    instructions: list[HloInstruction]
    line: int
    is_entry: bool = False
    module: "HloModule | None" = None

    @property
    def root(self) -> HloInstruction:
        for instr in self.instructions:
            if instr.is_root:
                return instr
        return self.instructions[-1]

    @property
    def parameters(self) -> list[HloInstruction]:
        params = [i for i in self.instructions if i.opcode == "parameter"]
        return sorted(params, key=lambda i: i.parameter_number)

    def by_name(self, name: str) -> HloInstruction:
        for instr in self.instructions:
            if instr.name == name:
                return instr
        raise KeyError(name)

    def post_order(self) -> list[HloInstruction]:
        """Instructions reachable from the root, operands before users."""
        seen: set[int] = set()
        order: list[HloInstruction] = []

        def visit(instr: HloInstruction) -> None:
            stack = [(instr, False)]
            while stack:
                node, done = stack.pop()
                if done:
                    order.append(node)
                    continue
                if id(node) in seen:
                    continue
                seen.add(id(node))
                stack.append((node, True))
                for op in reversed(node.operands):
                    if id(op) not in seen:
                        stack.append((op, False))
        visit(self.root)
        return order


@dataclass(eq=False)
class HloModule:
    name: str
    computations: dict[str, HloComputation]
    entry: HloComputation
    text: str
    path: str | None = None

    def __str__(self) -> str:
        return self.text


def custom_call_target(instr: HloInstruction) -> str:
    """The `custom_call_target` of a custom-call, without its quotes."""
    return instr.attrs.get("custom_call_target", "").strip().strip('"')


def backend_config(instr: HloInstruction) -> dict:
    """The `backend_config` JSON of an instruction (printed bare or as a quoted string)."""
    text = instr.attrs.get("backend_config", "").strip()
    try:
        value = json.loads(text) if text else {}
        if isinstance(value, str):
            value = json.loads(value)
    except json.JSONDecodeError as e:
        raise HloUnsupportedError(f"{where(instr)}: backend_config is not JSON ({e})") from e
    return value


def read_hlo(text: str, path: str | None = None) -> HloModule:
    """Reads one HLO module from its text; `path` is recorded for source locations."""
    return _Reader(text, path).module()


def read_hlo_file(path: str) -> HloModule:
    with open(path, encoding="utf-8") as f:
        return read_hlo(f.read(), path)


class _Reader:
    def __init__(self, text: str, path: str | None):
        self.text = text
        self.path = path
        self.pos = 0
        self.line_starts = [0] + [m.end() for m in re.finditer(r"\n", text)]

    # -- positions and errors --------------------------------------------------

    def line_col(self, pos: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.line_starts, pos)
        return line, pos - self.line_starts[line - 1] + 1

    def error(self, message: str, pos: int | None = None) -> HloParseError:
        pos = self.pos if pos is None else pos
        line, col = self.line_col(pos)
        start = self.line_starts[line - 1]
        end = self.text.find("\n", start)
        source = self.text[start:end if end >= 0 else len(self.text)]
        return HloParseError(message, line, col, source)

    # -- low-level scanning ------------------------------------------------------

    def skip_space(self, newlines: bool = True) -> None:
        text, n = self.text, len(self.text)
        while self.pos < n:
            c = text[self.pos]
            if c in " \t\r" or (newlines and c == "\n"):
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = n if end < 0 else end
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos)
                if end < 0:
                    raise self.error("unterminated /* comment")
                self.pos = end + 2
            else:
                break

    def peek(self, s: str) -> bool:
        self.skip_space()
        return self.text.startswith(s, self.pos)

    def expect(self, s: str, what: str | None = None) -> None:
        if not self.peek(s):
            found = self.text[self.pos:self.pos + 12].split("\n")[0] or "end of text"
            raise self.error(f"expected {what or repr(s)}, found {found!r}")
        self.pos += len(s)

    def name(self, what: str = "a name") -> str:
        self.skip_space()
        m = _NAME.match(self.text, self.pos)
        if not m:
            found = self.text[self.pos:self.pos + 12].split("\n")[0] or "end of text"
            raise self.error(f"expected {what}, found {found!r}")
        self.pos = m.end()
        return m.group(1)

    def balanced(self, stops: str) -> str:
        """Raw text up to one of `stops` at bracket depth 0 (quotes respected)."""
        self.skip_space(newlines=False)
        start, depth, text, n = self.pos, 0, self.text, len(self.text)
        opener = {"(": ")", "{": "}", "[": "]"}
        closers: list[str] = []
        while self.pos < n:
            c = text[self.pos]
            if c == '"':
                end = self.pos + 1
                while end < n and text[end] != '"':
                    end += 2 if text[end] == "\\" else 1
                if end >= n:
                    raise self.error("unterminated string", self.pos)
                self.pos = end + 1
                continue
            if depth == 0 and c in stops:
                break
            if c in opener:
                closers.append(opener[c])
                depth += 1
            elif c in ")}]":
                if depth == 0:
                    break
                if c != closers[-1]:
                    raise self.error(f"unbalanced {c!r}", self.pos)
                closers.pop()
                depth -= 1
            elif c == "\n" and depth == 0:
                break
            self.pos += 1
        if depth:
            raise self.error("unbalanced brackets", start)
        return text[start:self.pos].strip()

    # -- shapes ------------------------------------------------------------------

    def shape(self) -> Shape:
        self.skip_space()
        if self.peek("("):
            self.pos += 1
            parts = []
            while not self.peek(")"):
                parts.append(self.shape())
                if self.peek(","):
                    self.pos += 1
            self.pos += 1
            return Shape(tuple_shapes=tuple(parts))
        start = self.pos
        type_name = self.name("an element type")
        if type_name in OPAQUE_TYPES:
            if self.peek("[]"):
                self.pos += 2
            return Shape(opaque=type_name)
        element = ELEMENT_TYPES.get(type_name)
        if element is None:
            raise self.error(f"unknown element type {type_name!r}", start)
        self.expect("[", "'[' after the element type")
        dims, dynamic = [], []
        while not self.peek("]"):
            self.skip_space()
            bounded = self.text.startswith("<=", self.pos)
            if bounded:
                self.pos += 2
            m = _INT.match(self.text, self.pos)
            if m:
                dims.append(int(m.group()))
            elif not bounded and self.text.startswith("?", self.pos):
                # Extension of HLO text: an anonymous dynamic dimension.
                dims.append("?")
                self.pos += 1
                m = None
            else:
                # Extension of HLO text: a named symbolic dimension (f32[M,K]).
                m = _DIM_NAME.match(self.text, self.pos)
                if bounded or not m:
                    raise self.error("expected a dimension size, '?' or a dimension name")
                dims.append(m.group())
            dynamic.append(bounded)
            if m is not None:
                self.pos = m.end()
            if self.peek(","):
                self.pos += 1
        self.pos += 1
        layout = None
        if self.text.startswith("{", self.pos):
            body = self.balanced_group()
            minor_to_major = body.split(":")[0]
            layout = tuple(int(v) for v in _INT.findall(minor_to_major))
        return Shape(element, tuple(dims), layout, dynamic=tuple(dynamic))

    def balanced_group(self) -> str:
        """The text of a `{...}` group starting at pos, without the braces."""
        start = self.pos
        depth = 0
        while self.pos < len(self.text):
            c = self.text[self.pos]
            depth += c == "{"
            depth -= c == "}"
            self.pos += 1
            if depth == 0:
                return self.text[start + 1:self.pos - 1]
        raise self.error("unbalanced '{'", start)

    # -- module structure ----------------------------------------------------------

    def module(self) -> HloModule:
        self.skip_space()
        if not self.peek("HloModule"):
            raise self.error("expected 'HloModule' at the start of the module")
        self.pos += len("HloModule")
        name = self.name("the module name")
        self.rest_of_line()
        computations: dict[str, HloComputation] = {}
        entry = None
        pending_calls: list[tuple[HloInstruction, str, int]] = []
        while True:
            self.skip_space()
            if self.pos >= len(self.text):
                break
            if self.section_header():
                continue
            comp = self.computation(pending_calls)
            if comp.name in computations:
                raise self.error(f"computation {comp.name} is defined twice",
                                 self.line_starts[comp.line - 1])
            computations[comp.name] = comp
            if comp.is_entry:
                entry = comp
        if entry is None:
            if not computations:
                raise self.error("the module has no computations")
            entry = list(computations.values())[-1]  # XLA prints ENTRY last
            entry.is_entry = True
        for instr, callee, pos in pending_calls:
            if callee not in computations:
                raise self.error(f"%{instr.name} calls unknown computation {callee}", pos)
            instr.called.append(computations[callee])
        module = HloModule(name, computations, entry, self.text, self.path)
        for comp in computations.values():
            comp.module = module
        return module

    def rest_of_line(self) -> None:
        end = self.text.find("\n", self.pos)
        self.pos = len(self.text) if end < 0 else end

    def section_header(self) -> bool:
        """Skips a stack-frame table section (`FileNames` and its numbered lines)."""
        m = _NAME.match(self.text, self.pos)
        if not m or m.group(0) not in _SECTIONS:
            return False
        self.pos = m.end()
        self.rest_of_line()
        while True:
            save = self.pos
            self.skip_space()
            if not _SECTION_ENTRY.match(self.text, self.pos):
                self.pos = save
                return True
            self.rest_of_line()

    def computation(self, pending_calls) -> HloComputation:
        self.skip_space()
        line, _ = self.line_col(self.pos)
        is_entry = False
        if self.text.startswith("ENTRY", self.pos) and not \
                re.match(r"ENTRY[\w.\-]", self.text[self.pos:self.pos + 6]):
            is_entry = True
            self.pos += len("ENTRY")
        name = self.name("a computation name")
        # The signature `(p: f32[2]) -> f32[2]` and `, execution_thread=...` are
        # implied by the parameter instructions; skip to the body.
        while not self.peek("{"):
            if self.pos >= len(self.text):
                raise self.error(f"expected '{{' to open computation {name}")
            before = self.pos
            self.balanced("{")
            if self.pos < len(self.text) and self.text[self.pos] == "\n":
                self.pos += 1
            if self.pos == before:  # a stray closing bracket: no progress (found by fuzzing)
                raise self.error(f"unbalanced {self.text[self.pos]!r} before the body of computation {name}")
        self.pos += 1
        comp = HloComputation(name, [], line, is_entry)
        by_name: dict[str, HloInstruction] = {}
        while not self.peek("}"):
            if self.pos >= len(self.text):
                raise self.error(f"computation {name} is not closed with '}}'")
            instr = self.instruction(by_name, pending_calls)
            instr.computation = comp
            if instr.name in by_name:
                raise self.error(f"instruction %{instr.name} is defined twice in {name}",
                                 self.line_starts[instr.line - 1])
            by_name[instr.name] = instr
            comp.instructions.append(instr)
        self.pos += 1
        if not comp.instructions:
            raise self.error(f"computation {name} has no instructions")
        self.resolve_operands(comp, by_name)
        return comp

    def instruction(self, by_name, pending_calls) -> HloInstruction:
        self.skip_space()
        start = self.pos
        is_root = False
        if re.match(r"ROOT\s", self.text[self.pos:self.pos + 5]):
            is_root = True
            self.pos += 4
        name = self.name("an instruction name")
        line, column = self.line_col(start)
        self.expect("=", f"'=' after %{name}")
        shape = self.shape()
        opcode = self.name("an opcode")
        self.skip_space(newlines=False)
        if not self.text.startswith("(", self.pos):
            raise self.error(f"expected '(' after opcode {opcode}")
        self.pos += 1
        args_start = self.pos
        args = self.balanced(")")
        self.expect(")", f"')' closing the operands of %{name}")
        instr = HloInstruction(name, opcode, shape, [], {}, line, column, is_root=is_root)
        if opcode == "constant":
            instr.literal = args
        elif opcode == "parameter":
            if not _INT.fullmatch(args.strip()):
                raise self.error("parameter() needs a number", args_start)
            instr.parameter_number = int(args)
        else:
            instr._operand_refs = self.operand_refs(args, args_start)  # type: ignore[attr-defined]
        while True:
            self.skip_space(newlines=False)
            if not self.text.startswith(",", self.pos):
                break
            self.pos += 1
            key_pos = self.pos
            key = self.name("an attribute name")
            self.expect("=", f"'=' after attribute {key}")
            value = self.balanced(",")
            instr.attrs[key] = value
            if key in ("to_apply", "calls", "condition", "body"):
                for callee in value.strip("{}").split(","):
                    pending_calls.append((instr, callee.strip().lstrip("%"), key_pos))
            elif key in ("branch_computations", "called_computations"):
                for callee in value.strip("{}").split(","):
                    pending_calls.append((instr, callee.strip().lstrip("%"), key_pos))
        self.skip_space(newlines=False)
        if self.pos < len(self.text) and self.text[self.pos] not in "\n}":
            raise self.error(f"unexpected text after instruction %{name}")
        return instr

    def operand_refs(self, args: str, args_start: int) -> list[tuple[str, int]]:
        """(name, position) of each operand in `f32[2] %a, %b`."""
        refs, depth, item_start = [], 0, 0
        for i, c in enumerate(args + ","):
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            elif c == "," and depth == 0:
                item = args[item_start:i].strip()
                if item:
                    token = item.split()[-1]
                    offset = args.index(token, item_start)
                    refs.append((token.lstrip("%"), args_start + offset))
                item_start = i + 1
        return refs

    def resolve_operands(self, comp: HloComputation, by_name) -> None:
        for instr in comp.instructions:
            for ref, pos in getattr(instr, "_operand_refs", []):
                if ref not in by_name:
                    raise self.error(f"%{instr.name} uses unknown operand %{ref} "
                                     f"(computation {comp.name})", pos)
                operand = by_name[ref]
                instr.operands.append(operand)
                if instr not in operand.users:
                    operand.users.append(instr)
            if hasattr(instr, "_operand_refs"):
                del instr._operand_refs  # type: ignore[attr-defined]
