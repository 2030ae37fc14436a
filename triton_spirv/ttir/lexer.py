"""A tokenizer and token cursor for one line of MLIR text as Triton prints it.

Triton's printer puts every op on its own line, so the reader works line by line. The
cursor knows the few composite pieces of MLIR syntax the rewrite needs to recognise
(SSA values, types with nested `<...>`, attribute dictionaries, `loc(...)`) and hands
them back as the exact source text, so that nothing the reader does not understand is
ever re-spelled.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Tuple

from .errors import LineError

# Token kinds.
VALUE = "value"      # %name, %name#3
SYMBOL = "symbol"    # @name, @"quoted name"
BLOCK = "block"      # ^bb1
BANG = "bang"        # !tt.ptr (dialect type prefix)
HASH = "hash"        # #loc3, #tt.cache_policy (attribute alias or dialect attribute prefix)
STRING = "string"    # "..." with MLIR escapes
NUMBER = "number"    # 12, -1.5e+00, 0x7FC00000
IDENT = "ident"      # tt.load, tensor, i32, acq_rel, loc
PUNCT = "punct"      # ( ) [ ] { } < > , : = * ? + | -> -
EOF = "eof"

_SUFFIX_ID = r"(?:[0-9]+|[A-Za-z$._-][A-Za-z0-9$._-]*)"
_BARE_ID = r"[A-Za-z_][A-Za-z0-9_$.]*"
_STRING = r'"(?:[^"\\]|\\.)*"'

# One alternative per token kind; order matters: more specific patterns first.
_TOKEN_PATTERNS = [
    (VALUE, r"%" + _SUFFIX_ID + r"(?:#[0-9]+)?"),
    (SYMBOL, r"@(?:" + _BARE_ID + "|" + _STRING + ")"),
    (BLOCK, r"\^" + _SUFFIX_ID),
    (BANG, r"!" + _BARE_ID),
    (HASH, r"#" + _SUFFIX_ID),
    (STRING, _STRING),
    (NUMBER, r"-?0x[0-9A-Fa-f]+|-?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?"),
    (IDENT, _BARE_ID),
    (PUNCT, r"->|[()\[\]{}<>,:=*?+|-]"),
]
_TOKEN = re.compile(r"\s*(?:(//.*)|" + "|".join(
    f"(?P<{kind}>{pattern})" for kind, pattern in _TOKEN_PATTERNS) + ")")

_OPENERS = {"(": ")", "[": "]", "{": "}", "<": ">"}
_CLOSERS = {v: k for k, v in _OPENERS.items()}

# Names that start a builtin type; anything else that is a bare identifier is a keyword.
_BUILTIN_TYPE = re.compile(
    r"(?:[su]?i[0-9]+|f[0-9]+|bf16|tf32|f8E\w+|f6E\w+|f4E\w+|index|none"
    r"|tensor|vector|memref|complex|tuple)$")


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    start: int  # 0-based offset in the line
    end: int

    @property
    def column(self) -> int:
        return self.start + 1


def tokenize(line: str) -> List[Token]:
    """Split one line into tokens; `//` comments end the line."""
    tokens: List[Token] = []
    pos = 0
    end = len(line.rstrip())
    while pos < end:
        match = _TOKEN.match(line, pos)
        if match is None:
            raise _bad_character(line, pos)
        if match.group(1) is not None:  # a comment
            break
        kind = match.lastgroup
        tokens.append(Token(kind, match.group(kind), match.start(kind), match.end()))
        pos = match.end()
    return tokens


def _bad_character(line: str, pos: int) -> LineError:
    while pos < len(line) and line[pos].isspace():
        pos += 1
    if line[pos] == '"':
        return LineError("unterminated string", pos + 1)
    return LineError(f"unexpected character {line[pos]!r}", pos + 1)


def is_type_start(token: Token) -> bool:
    """Whether a type can begin at this token (builtin, `!dialect`, function type, `<...>`)."""
    if token.kind == IDENT:
        return bool(_BUILTIN_TYPE.match(token.text))
    return token.kind == BANG or token.text in ("(", "<")


class Cursor:
    """Reads tokens of one line; every `parse_*` returns the source text it consumed."""

    def __init__(self, line: str, tokens: Optional[List[Token]] = None):
        self.line = line
        self.tokens = tokenize(line) if tokens is None else tokens
        self.index = 0

    # -- primitives ---------------------------------------------------------------------

    def peek(self, ahead: int = 0) -> Token:
        i = self.index + ahead
        if i < len(self.tokens):
            return self.tokens[i]
        return Token(EOF, "", len(self.line), len(self.line))

    def at(self, text: str) -> bool:
        token = self.peek()
        return token.kind != STRING and token.text == text

    def at_end(self) -> bool:
        return self.peek().kind == EOF

    def next(self) -> Token:
        token = self.peek()
        if token.kind == EOF:
            raise LineError("unexpected end of line (truncated?)", token.column)
        self.index += 1
        return token

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.index += 1
            return True
        return False

    def expect(self, text: str) -> Token:
        if not self.at(text):
            raise self.error(f"expected `{text}`")
        return self.next()

    def expect_kind(self, kind: str, what: str) -> Token:
        if self.peek().kind != kind:
            raise self.error(f"expected {what}")
        return self.next()

    def error(self, message: str) -> LineError:
        token = self.peek()
        found = "the end of the line" if token.kind == EOF else f"`{token.text}`"
        return LineError(f"{message}, found {found}", token.column)

    def text_between(self, first: int, stop: int) -> str:
        """Source text of tokens [first, stop)."""
        if stop <= first:
            return ""
        return self.line[self.tokens[first].start:self.tokens[stop - 1].end]

    def rest(self) -> str:
        """Source text from the current token to the end of the line."""
        return self.line[self.peek().start:].rstrip() if not self.at_end() else ""

    # -- composite pieces ---------------------------------------------------------------

    def skip_balanced(self) -> None:
        """Consume one bracketed group `(...)`, `[...]`, `{...}` or `<...>`."""
        opener = self.next()
        stack = [_OPENERS[opener.text]]
        while stack:
            token = self.next()
            if token.kind in (STRING, EOF):
                continue
            if token.text in _OPENERS:
                stack.append(_OPENERS[token.text])
            elif token.text in _CLOSERS:
                if token.text != stack[-1]:
                    raise LineError(f"unbalanced `{token.text}`", token.column)
                stack.pop()

    def parse_value(self) -> str:
        return self.expect_kind(VALUE, "an SSA value").text

    def parse_value_list(self) -> List[str]:
        """Zero or more comma-separated SSA values."""
        values: List[str] = []
        if self.peek().kind != VALUE:
            return values
        values.append(self.parse_value())
        while self.at(",") and self.peek(1).kind == VALUE:
            self.next()
            values.append(self.parse_value())
        return values

    def parse_type(self) -> str:
        token = self.peek()
        if not is_type_start(token):
            raise self.error("expected a type")
        if token.text == "(":
            return self.parse_function_type()
        first = self.index
        if token.text == "<":
            self.skip_balanced()  # a dialect type printed without its `!dialect.name`
        else:
            self.next()
            if self.at("<") and self.peek().start == token.end:
                self.skip_balanced()
        return self.text_between(first, self.index)

    def parse_type_list(self, count: Optional[int] = None) -> List[str]:
        """`count` comma-separated types, or as many as there are when count is None."""
        types: List[str] = []
        if count == 0:
            return types
        types.append(self.parse_type())
        while (count is None or len(types) < count) and self.at(","):
            if count is None and not is_type_start(self.peek(1)):
                break
            self.next()
            types.append(self.parse_type())
        if count is not None and len(types) != count:
            raise self.error(f"expected {count} types, got {len(types)}")
        return types

    def parse_parenthesized_types(self) -> List[str]:
        self.expect("(")
        types = [] if self.at(")") else self.parse_type_list()
        self.expect(")")
        return types

    def parse_function_type_parts(self) -> Tuple[List[str], List[str]]:
        """`(inputs) -> result` or `(inputs) -> (results)`."""
        inputs = self.parse_parenthesized_types()
        self.expect("->")
        if self.at("("):
            return inputs, self.parse_parenthesized_types()
        return inputs, [self.parse_type()]

    def parse_function_type(self) -> str:
        first = self.index
        self.parse_function_type_parts()
        return self.text_between(first, self.index)

    def parse_attribute_value(self) -> str:
        """Tokens up to the next top-level `,` or the closing `}` of the dictionary."""
        first = self.index
        while not (self.at(",") or self.at("}")):
            if self.at_end():
                raise self.error("unterminated attribute dictionary")
            if self.peek().kind != STRING and self.peek().text in _OPENERS:
                self.skip_balanced()
            else:
                self.next()
        if first == self.index:
            raise self.error("expected an attribute value")
        return self.text_between(first, self.index)

    def parse_attribute_dict(self) -> List[Tuple[str, Optional[str]]]:
        """`{name = value, flag, ...}` as (name, value text or None for unit) pairs."""
        self.expect("{")
        entries: List[Tuple[str, Optional[str]]] = []
        while not self.accept("}"):
            if entries:
                self.expect(",")
            name = self.peek()
            if name.kind not in (IDENT, STRING):
                raise self.error("expected an attribute name")
            self.next()
            value = self.parse_attribute_value() if self.accept("=") else None
            entries.append((name.text, value))
        return entries

    def at_location(self) -> bool:
        return self.peek().text == "loc" and self.peek(1).text == "("

    def parse_location(self) -> str:
        first = self.index
        self.expect("loc")
        if not self.at("("):
            raise self.error("expected `(` after `loc`")
        self.skip_balanced()
        return self.text_between(first, self.index)

    def parse_optional_location(self) -> str:
        return self.parse_location() if self.at_location() else ""


def split_trailing_location(line: str, tokens: List[Token]) -> Tuple[str, str]:
    """(text before, `loc(...)`) when the line ends with a location, else (line, "")."""
    if not tokens or tokens[-1].text != ")":
        return line.rstrip(), ""
    depth = 0
    for i in range(len(tokens) - 1, 0, -1):
        token = tokens[i]
        if token.kind == STRING:
            continue
        depth += token.text == ")"
        depth -= token.text == "("
        if depth == 0:
            if tokens[i - 1].text == "loc" and token.text == "(":
                start = tokens[i - 1].start
                return line[:start].rstrip(), line[start:tokens[-1].end]
            return line.rstrip(), ""
    return line.rstrip(), ""
