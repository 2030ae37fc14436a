"""Type arithmetic on the text of TTIR types, for the types Triton's custom op syntax
leaves out (`tt.load`'s result is the pointee type of its pointer operand, and so on).

Types are kept as text because they are only ever printed into the generic form; the
functions understand `tensor<AxBxE>`, `!tt.ptr<E>` and `!tt.ptr<E, addrspace>`.
"""
from __future__ import annotations

import re
from typing import List, Tuple

from .errors import LineError

_DIM = re.compile(r"(?:[0-9]+|\?)x")


def _split_top_level(text: str, separator: str = ",") -> List[str]:
    """Split at separators outside `<>`, `()`, `[]`, `{}` and strings."""
    parts, depth, current, in_string = [], 0, [], False
    for i, ch in enumerate(text):
        if ch == '"' and (i == 0 or text[i - 1] != "\\"):
            in_string = not in_string
        elif not in_string and ch in "<([{":
            depth += 1
        elif not in_string and ch in ">)]}" and not (ch == ">" and text[i - 1] == "-"):
            depth -= 1
        if ch == separator and depth == 0 and not in_string:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    parts.append("".join(current).strip())
    return parts


def tensor_parts(type_text: str) -> Tuple[str, str, str]:
    """(`AxBx` shape prefix, element type, `, encoding` suffix) of a ranked tensor type."""
    if not (type_text.startswith("tensor<") and type_text.endswith(">")):
        raise LineError(f"expected a tensor type, got `{type_text}`")
    inner = type_text[len("tensor<"):-1]
    position = 0
    while True:
        match = _DIM.match(inner, position)
        if not match:
            break
        position = match.end()
    element_and_encoding = _split_top_level(inner[position:])
    suffix = "".join(", " + part for part in element_and_encoding[1:])
    return inner[:position], element_and_encoding[0], suffix


def is_tensor(type_text: str) -> bool:
    return type_text.startswith("tensor<")


def element_type(type_text: str) -> str:
    """The element type of a tensor, the type itself for a scalar."""
    return tensor_parts(type_text)[1] if is_tensor(type_text) else type_text


def with_element_type(type_text: str, element: str) -> str:
    """A type of the same shape (and encoding) as `type_text` with another element type."""
    if not is_tensor(type_text):
        return element
    shape, _old, suffix = tensor_parts(type_text)
    return f"tensor<{shape}{element}{suffix}>"


def pointee(pointer_text: str) -> str:
    """E for `!tt.ptr<E>` (also with an address space)."""
    if not (pointer_text.startswith("!tt.ptr<") and pointer_text.endswith(">")):
        raise LineError(f"expected a `!tt.ptr` type, got `{pointer_text}`")
    return _split_top_level(pointer_text[len("!tt.ptr<"):-1])[0]


def pointee_shaped(pointer_like: str) -> str:
    """`tensor<NxE>` for `tensor<Nx!tt.ptr<E>>`, E for `!tt.ptr<E>`."""
    return with_element_type(pointer_like, pointee(element_type(pointer_like)))


def mask_shaped(type_text: str) -> str:
    """The i1 type of the same shape."""
    return with_element_type(type_text, "i1")
