"""An interpreter for ODS `assemblyFormat` strings, enough for the Triton ops.

The op table (`op_table.py`) copies each op's `assemblyFormat` from TritonOps.td. This
module compiles such a string into elements and matches the custom form of an op against
them, collecting operands, the types the custom form prints, and the attributes it
spells as keywords. The supported directives are the ones Triton uses: literals,
`$operand`, `$attribute`, optional groups `(... $anchor^ ...)?`, `attr-dict`, `operands`,
`type(...)`, `qualified(type(...))` and `functional-type(..., ...)`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple, Union

from .errors import LineError
from .lexer import IDENT, STRING, SYMBOL, VALUE, Cursor, is_type_start

# -- format elements ---------------------------------------------------------------------


@dataclass(frozen=True)
class Literal:
    text: str


@dataclass(frozen=True)
class Variable:
    name: str


@dataclass(frozen=True)
class AttrDict:
    pass


@dataclass(frozen=True)
class OperandsDirective:
    pass


@dataclass(frozen=True)
class TypeDirective:
    target: str  # an operand or result name, "operands" or "results"


@dataclass(frozen=True)
class FunctionalType:
    inputs: str
    outputs: str


@dataclass(frozen=True)
class OptionalGroup:
    elements: Tuple["Element", ...]


Element = Union[Literal, Variable, AttrDict, OperandsDirective, TypeDirective,
                FunctionalType, OptionalGroup]

_FORMAT_TOKEN = re.compile(
    r"\s*(`[^`]*`|\$\w+\^?|attr-dict|functional-type|qualified|type|operands|results|\)\?|[(),^])")


def compile_format(text: str) -> Tuple[Element, ...]:
    tokens = _format_tokens(text)
    elements, position = _compile_elements(tokens, 0)
    if position != len(tokens):
        raise ValueError(f"unbalanced assembly format: {text}")
    return elements


def _format_tokens(text: str) -> List[str]:
    tokens, position = [], 0
    text = text.strip()
    while position < len(text):
        match = _FORMAT_TOKEN.match(text, position)
        if not match:
            raise ValueError(f"cannot read assembly format at {text[position:]!r}")
        if match.group(1) != "^":  # an anchor after a directive; presence is all we need
            tokens.append(match.group(1))
        position = match.end()
        while position < len(text) and text[position].isspace():
            position += 1
    return tokens


def _compile_elements(tokens: List[str], position: int) -> Tuple[Tuple[Element, ...], int]:
    elements: List[Element] = []
    while position < len(tokens) and tokens[position] not in (")", ")?"):
        element, position = _compile_element(tokens, position)
        elements.append(element)
    return tuple(elements), position


def _compile_element(tokens: List[str], position: int) -> Tuple[Element, int]:
    token = tokens[position]
    if token.startswith("`"):
        return Literal(token[1:-1]), position + 1
    if token.startswith("$"):
        return Variable(token[1:].rstrip("^")), position + 1
    if token == "attr-dict":
        return AttrDict(), position + 1
    if token == "operands":
        return OperandsDirective(), position + 1
    if token == "(":
        inner, position = _compile_elements(tokens, position + 1)
        if tokens[position] != ")?":
            raise ValueError("only optional groups `(...)?` are supported")
        return OptionalGroup(inner), position + 1
    if token == "qualified":
        directive, position = _compile_element(tokens, position + 2)  # skip `(`
        return directive, position + 1  # skip `)`
    if token == "type":
        return TypeDirective(_target(tokens[position + 2])), position + 4
    if token == "functional-type":
        inputs, outputs = tokens[position + 2], tokens[position + 4]
        return FunctionalType(_target(inputs), _target(outputs)), position + 6
    raise ValueError(f"unsupported assembly format token {token!r}")


def _target(token: str) -> str:
    return token[1:] if token.startswith("$") else token


# -- attribute kinds that formats spell as keywords ---------------------------------------


class EnumAttr:
    """An I32EnumAttr printed as its keyword; stored as `N : i32`."""

    def __init__(self, keywords: Dict[str, int]):
        self.keywords = keywords

    def at(self, cursor: Cursor) -> bool:
        return cursor.peek().kind == IDENT and cursor.peek().text in self.keywords

    def parse(self, cursor: Cursor) -> str:
        if not self.at(cursor):
            raise cursor.error("expected one of " + ", ".join(self.keywords))
        return f"{self.keywords[cursor.next().text]} : i32"


class StrAttr:
    def at(self, cursor: Cursor) -> bool:
        return cursor.peek().kind == STRING

    def parse(self, cursor: Cursor) -> str:
        return cursor.expect_kind(STRING, "a string").text


class SymbolAttr:
    def at(self, cursor: Cursor) -> bool:
        return cursor.peek().kind == SYMBOL

    def parse(self, cursor: Cursor) -> str:
        return cursor.expect_kind(SYMBOL, "a symbol").text


class UnitAttr:
    """Present when its optional group is; the group's keyword is all that is printed."""

    def at(self, cursor: Cursor) -> bool:
        return True

    def parse(self, cursor: Cursor) -> str:
        return "unit"


AttrKind = Union[EnumAttr, StrAttr, SymbolAttr, UnitAttr]

# -- matching ----------------------------------------------------------------------------

ONE, OPTIONAL, VARIADIC = "one", "optional", "variadic"


@dataclass(frozen=True)
class Slot:
    """A named operand or result and how many values it takes."""

    name: str
    arity: str = ONE


@dataclass
class Matched:
    """What the custom form of one op spelled out."""

    values: Dict[str, List[str]] = field(default_factory=dict)          # operand -> SSA names
    types: Dict[str, List[str]] = field(default_factory=dict)           # operand/result -> types
    attributes: List[Tuple[str, str]] = field(default_factory=list)     # keyword attributes
    attr_dict: List[Tuple[str, Optional[str]]] = field(default_factory=list)


class FormatMatcher:
    """Matches one op's custom form against its compiled format."""

    def __init__(self, operands: Tuple[Slot, ...], results: Tuple[Slot, ...],
                 attributes: Dict[str, AttrKind], cursor: Cursor, result_count: int):
        self.operands = operands
        self.results = results
        self.attribute_kinds = attributes
        self.cursor = cursor
        self.result_count = result_count
        self.matched = Matched()

    def match(self, elements: Tuple[Element, ...]) -> Matched:
        for element in elements:
            self._match_element(element)
        return self.matched

    # -- elements ------------------------------------------------------------------------

    def _match_element(self, element: Element) -> None:
        if isinstance(element, Literal):
            self.cursor.expect(element.text)
        elif isinstance(element, Variable):
            self._match_variable(element.name)
        elif isinstance(element, AttrDict):
            if self.cursor.at("{"):
                self.matched.attr_dict = self.cursor.parse_attribute_dict()
        elif isinstance(element, OperandsDirective):
            self._assign_operand_values(self.cursor.parse_value_list())
        elif isinstance(element, TypeDirective):
            self._match_types(element.target)
        elif isinstance(element, FunctionalType):
            self._match_functional_type(element)
        elif isinstance(element, OptionalGroup):
            if self._group_present(element):
                self.match(element.elements)
        else:  # pragma: no cover - compile_format produces nothing else
            raise TypeError(element)

    def _group_present(self, group: OptionalGroup) -> bool:
        first = group.elements[0]
        if isinstance(first, Literal):
            return self.cursor.at(first.text)
        if isinstance(first, Variable):
            if first.name in self.attribute_kinds:
                return self.attribute_kinds[first.name].at(self.cursor)
            return self.cursor.peek().kind == VALUE
        if isinstance(first, TypeDirective):
            return is_type_start(self.cursor.peek())
        raise ValueError(f"unsupported first element of an optional group: {first}")

    def _match_variable(self, name: str) -> None:
        if name in self.attribute_kinds:
            value = self.attribute_kinds[name].parse(self.cursor)
            self.matched.attributes.append((name, value))
            return
        slot = self._operand(name)
        if slot.arity == VARIADIC:
            self.matched.values[name] = self.cursor.parse_value_list()
        else:
            self.matched.values[name] = [self.cursor.parse_value()]

    def _assign_operand_values(self, values: List[str]) -> None:
        if len(self.operands) != 1:
            raise ValueError("`operands` directive needs exactly one operand group")
        self.matched.values[self.operands[0].name] = values

    # -- types ---------------------------------------------------------------------------

    def _match_types(self, target: str) -> None:
        groups = self._groups_of(target)
        counts = [self._count(slot) for slot in groups]
        types = self.cursor.parse_type_list(sum(counts))
        self._distribute(groups, counts, types)

    def _match_functional_type(self, element: FunctionalType) -> None:
        start = self.cursor.peek()
        inputs, outputs = self.cursor.parse_function_type_parts()
        for target, types in ((element.inputs, inputs), (element.outputs, outputs)):
            groups = self._groups_of(target)
            counts = [self._count(slot) for slot in groups]
            if len(types) != sum(counts):
                raise LineError(
                    f"the function type lists {len(types)} {target} types, expected "
                    f"{sum(counts)}", start.column)
            self._distribute(groups, counts, types)

    def _groups_of(self, target: str) -> List[Slot]:
        if target == "operands":
            return [slot for slot in self.operands if slot.name in self.matched.values]
        if target == "results":
            return list(self.results)
        for slot in self.operands + self.results:
            if slot.name == target:
                return [slot]
        raise ValueError(f"format names unknown operand or result ${target}")

    def _count(self, slot: Slot) -> int:
        if slot in self.operands:
            return len(self.matched.values.get(slot.name, []))
        if slot.arity == VARIADIC:
            fixed = sum(1 for other in self.results if other.arity != VARIADIC)
            return max(self.result_count - fixed, 0)
        return 1

    def _distribute(self, groups: List[Slot], counts: List[int], types: List[str]) -> None:
        position = 0
        for slot, count in zip(groups, counts):
            self.matched.types[slot.name] = types[position:position + count]
            position += count

    def _operand(self, name: str) -> Slot:
        for slot in self.operands:
            if slot.name == name:
                return slot
        raise ValueError(f"format names unknown operand ${name}")
