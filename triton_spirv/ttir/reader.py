"""Read Triton's TTIR text into an upstream-MLIR module.

Triton 3.9 prints TTIR with the custom syntax of its `tt` dialect, which upstream MLIR
does not know. Upstream MLIR does parse unregistered ops in *generic* form, so the reader
rewrites every `tt` op into generic form, line by line (Triton prints one op a line),
and leaves everything else (arith, math, scf, cf, ub, llvm ops, `#loc` definitions,
block labels) exactly as printed. Each op's custom syntax is read with its
`assemblyFormat` from TritonOps.td (see `op_table.py`); the types the custom syntax
leaves out are derived by the op's type constraints.

Public API
----------
- `read_ttir(text, context=None) -> ir.Module`: parse and verify.
- `to_generic_text(text) -> str`: the rewritten text that `read_ttir` parses.
- `source_line(loc) -> (file, line, col) | None`: the Python source of a location.
- `TTIRReadError`: any input the reader cannot read, with its TTIR line.

What the generic ops hold
-------------------------
- Operands and results in the op's declaration order (TritonOps.td `arguments`), with
  all types. `tt.load` and `tt.dot_scaled` (AttrSizedOperandSegments) also carry
  `operandSegmentSizes = array<i32: ...>`.
- All attributes are ordinary (discardable) attributes named as in TritonOps.td, also
  those Triton prints as keywords and those it prints as generic properties `<{...}>`
  (`tt.reduce`/`tt.scan` `axis`, `reverse`, `tt.map_elementwise` `pack`), so
  `op.attributes["axis"]` works and iterating `op.attributes` lists them.
- Enum attributes are i32 IntegerAttrs with the values of TritonAttrEnums.td /
  TritonAttrDefs.td (also in `enums.py`):
    - `tt.get_program_id` / `tt.get_num_programs` `axis`: x=0, y=1, z=2
    - `tt.atomic_*` `sem`: relaxed=1, acquire=2, release=3, acq_rel=4;
      `scope`: gpu=1, cta=2, sys=3
    - `tt.atomic_rmw` `atomic_rmw_op`: and=1, or=2, xor=3, add=4, fadd=5, max=6, min=7,
      umax=8, umin=9, exch=10
    - `tt.fp_to_fp` `rounding`: rtz=0, rtne=1 (absent when Triton prints none)
    - `tt.clampf` `propagateNan`: none=0, all=65535
    - `tt.dot` `inputPrecision`: tf32=0, tf32x3=1, ieee=2, bf16x3=3, bf16x6=4
    - `tt.dot_scaled` `a_elem_type` / `b_elem_type`: e4m3=0, e5m2=1, e2m3=2, e3m2=3,
      e2m1=4, bf16=5, fp16=6
    - `tt.make_tensor_descriptor` `padding`: zero=1, nan=2
    - `tt.descriptor_reduce` `kind`: add=1, min=2, max=3, inc=4, dec=5, and=6, or=7, xor=8
    - cache hints: Triton 3.9 prints `cachePolicy = #tt.cache_policy<cache_modifier = M,
      eviction_policy = E>`; the reader replaces it by `cache` (none=1, ca=2, cg=3, wb=4,
      cs=5, wt=6, cv=7) and `evict` (evict_normal=1, evict_first=2, evict_last=3).
- Default-valued attributes the custom syntax leaves out are filled in: `tt.load`
  `isVolatile = false`, `cache = 1`, `evict = 1` (also on `tt.store` and
  `tt.descriptor_load`), `tt.dot` `inputPrecision = 2` (ieee) and
  `maxNumImpreciseAcc = 0`, `tt.dot_scaled` `lhs_k_pack`/`rhs_k_pack = true`,
  `tt.make_tensor_descriptor` `padding = 1`.
- Strings stay strings (`tt.print` `prefix`, `tt.assert` `message`,
  `tt.elementwise_inline_asm` `asm_string`), `tt.call` `callee` is a symbol reference,
  unit attributes (`tt.reshape` `allow_reorder`) are unit attributes.
- `tt.func` becomes `"tt.func"() ({^bb0(args): ...}) {sym_name, function_type,
  sym_visibility, [arg_attrs], [res_attrs], noinline, ...}`; the entry block arguments
  keep their locations (`loc("x_ptr"(...))`).

Source locations (`loc(#locN)` and the `#locN = ...` definitions) are kept as printed,
so every op of the module has the location Triton gave it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from mlir import ir

from . import enums
from .assembly_format import FormatMatcher, Matched, VARIADIC
from .errors import LineError, TTIRReadError
from .lexer import BLOCK, HASH, IDENT, NUMBER, STRING, SYMBOL, VALUE, Cursor, Token, \
    split_trailing_location, tokenize
from .op_table import OPS_BY_NAME, OpSpec

__all__ = ["TTIRReadError", "read_ttir", "to_generic_text", "source_line"]

AttrEntries = List[Tuple[str, Optional[str]]]  # (name, value text; None for a unit attr)


# ---------------------------------------------------------------------------------------
# Public API


def to_generic_text(ttir_text: str) -> str:
    """TTIR text with every `tt` op in generic form; upstream MLIR parses it."""
    return _render(_rewrite(ttir_text), with_locations=True)


def read_ttir(ttir_text: str, context: Optional[ir.Context] = None) -> ir.Module:
    """Parse TTIR text into a verified upstream-MLIR module (tt ops are unregistered)."""
    lines = _rewrite(ttir_text)
    if context is None:
        context = ir.Context()
    context.allow_unregistered_dialects = True
    ttir_lines = ttir_text.splitlines()
    try:
        module = ir.Module.parse(_render(lines, with_locations=True), context)
        module.operation.verify()
    except Exception as err:  # MLIRError, or anything else the bindings raise
        raise _error_from_mlir(err, lines, ttir_lines, context) from None
    return module


def source_line(loc, *, innermost: bool = False) -> Optional[Tuple[str, int, int]]:
    """(file, line, column) of the Python source a location points at, or None.

    Walks NameLoc (`loc("x"(#loc))`) to its child, FusedLoc to its first part that has a
    file, and CallSiteLoc (code inlined from a called function) to its *caller* by
    default: the line of the kernel the user wrote, e.g. the `tl.max(...)` call rather
    than the line inside triton/language/standard.py. `innermost=True` follows the
    callee instead. Also accepts an op (uses its location).
    """
    if loc is None:
        return None
    if not isinstance(loc, ir.Location) and hasattr(loc, "location"):
        loc = loc.location
    if loc.is_a_file():
        return loc.filename, loc.start_line, loc.start_col
    if loc.is_a_name():
        return source_line(loc.child_loc, innermost=innermost)
    if loc.is_a_callsite():
        first, second = (loc.callee, loc.caller) if innermost else (loc.caller, loc.callee)
        return (source_line(first, innermost=innermost)
                or source_line(second, innermost=innermost))
    if loc.is_a_fused():
        for part in loc.locations:
            found = source_line(part, innermost=innermost)
            if found is not None:
                return found
    return None


# ---------------------------------------------------------------------------------------
# Rewritten lines


@dataclass
class GenericLine:
    """One line of the generic text and the TTIR line it came from."""

    body: str       # the text without its trailing `loc(...)`
    location: str   # the trailing `loc(...)`, or ""
    ttir_line: int  # 1-based
    verbatim: bool  # the TTIR line unchanged, so MLIR's columns are TTIR columns too

    def render(self, with_location: bool) -> str:
        if with_location and self.location:
            return f"{self.body} {self.location}"
        return self.body


def _render(lines: List[GenericLine], with_locations: bool) -> str:
    return "\n".join(line.render(with_locations) for line in lines) + "\n"


@dataclass
class _Region:
    """An open region (or regions) of an op whose closing line is still to come."""

    kind: str        # "plain": leave the closing line alone; "func"; "generic"
    op: str
    ttir_line: int
    attributes: AttrEntries = field(default_factory=list)  # added to the closing line


# ---------------------------------------------------------------------------------------
# The line rewriter


def _rewrite(ttir_text: str) -> List[GenericLine]:
    return _Rewriter(ttir_text).run()


class _Rewriter:
    def __init__(self, ttir_text: str):
        self.ttir_lines = ttir_text.splitlines()
        self.output: List[GenericLine] = []
        self.regions: List[_Region] = []
        self.in_resources = False
        self.number = 0  # 1-based number of the TTIR line being rewritten

    def run(self) -> List[GenericLine]:
        for self.number, text in enumerate(self.ttir_lines, start=1):
            try:
                self._rewrite_line(text)
            except LineError as err:
                raise TTIRReadError(err.message, self.number, text, _op_on_line(text),
                                    err.column) from None
            except (IndexError, KeyError, ValueError, TypeError) as err:
                raise TTIRReadError(f"cannot read this line ({type(err).__name__}: {err})",
                                    self.number, text, _op_on_line(text)) from None
        if self.regions:
            region = self.regions[-1]
            raise TTIRReadError(
                f"the region of {region.op} opened here is never closed (truncated text?)",
                region.ttir_line, self.ttir_lines[region.ttir_line - 1], region.op)
        return self.output

    # -- output --------------------------------------------------------------------------

    def _emit(self, body: str, location: str = "", verbatim: bool = False) -> None:
        self.output.append(GenericLine(body, location, self.number, verbatim))

    def _emit_unchanged(self, text: str, tokens: List[Token]) -> None:
        body, location = split_trailing_location(text, tokens)
        self._emit(body, location, verbatim=True)

    # -- dispatch ------------------------------------------------------------------------

    def _rewrite_line(self, text: str) -> None:
        stripped = text.strip()
        if self._in_resource_block(stripped) or not stripped or stripped.startswith("//"):
            self._emit(text.rstrip(), verbatim=True)
            return
        tokens = tokenize(text)
        first = tokens[0]
        if first.text == "}":
            self._close_region(text, tokens)
        elif first.kind == BLOCK or (first.kind == HASH and _second_is(tokens, "=")):
            # A block label or a `#alias = ...` definition: no op location to split off.
            self._emit(text.rstrip(), verbatim=True)
        else:
            self._rewrite_op_line(text, tokens)

    def _in_resource_block(self, stripped: str) -> bool:
        """`{-# dialect_resources ... #-}` blocks pass through untouched."""
        if stripped.startswith("{-#"):
            self.in_resources = True
        if self.in_resources:
            if stripped.endswith("#-}"):
                self.in_resources = False
            return True
        return False

    def _rewrite_op_line(self, text: str, tokens: List[Token]) -> None:
        cursor = Cursor(text, tokens)
        results, result_count = _parse_result_list(cursor)
        name_token = cursor.next()
        indent = text[:len(text) - len(text.lstrip())]
        if name_token.kind == IDENT and name_token.text.startswith("tt."):
            self._rewrite_custom_tt_op(name_token, cursor, indent, results, result_count)
        elif name_token.kind == STRING and name_token.text.startswith('"tt.'):
            self._rewrite_generic_tt_op(name_token.text[1:-1], cursor, text, tokens)
        elif name_token.kind == IDENT and name_token.text == "ttg.barrier":
            self._rewrite_ttg_barrier(cursor, indent, tokens, text)
        else:
            self._emit_unchanged(text, tokens)
            if tokens[-1].text == "{":
                self.regions.append(_Region("plain", _op_name(name_token), self.number))

    def _rewrite_ttg_barrier(self, cursor: Cursor, indent: str, tokens: List[Token],
                             text: str) -> None:  # noqa: ARG002
        """`ttg.barrier <spaces>` (what tl.debug_barrier() leaves in TTIR) ->
        `"ttg.barrier"() {addrSpace = "<spaces>"}`."""
        body, location = split_trailing_location(text, tokens)
        spaces = body.strip()[len("ttg.barrier"):].strip().replace('"', "")
        self._emit(f'{indent}"ttg.barrier"() {{addrSpace = "{spaces}"}} : () -> ()',
                   location)

    def _rewrite_custom_tt_op(self, name_token: Token, cursor: Cursor, indent: str,
                              results: str, result_count: int) -> None:
        name = name_token.text
        if name == "tt.func":
            self._rewrite_func(cursor, indent)
            return
        spec = OPS_BY_NAME.get(name)
        if spec is None:
            raise LineError(f"unknown op {name}: not an op of the Triton dialect",
                            name_token.column)
        if not spec.has_custom_form:
            raise LineError(f"{name} has no custom syntax; Triton prints it in generic form")
        body, location = _generic_form_of_custom_op(spec, cursor, results, result_count)
        self._emit(indent + body, location)

    # -- ops Triton already prints in generic form ---------------------------------------

    def _rewrite_generic_tt_op(self, name: str, cursor: Cursor, text: str,
                               tokens: List[Token]) -> None:
        """Move `<{properties}>` into the attribute dictionary (see the module docstring)."""
        if name not in OPS_BY_NAME:
            raise LineError(f"unknown op {name}: not an op of the Triton dialect")
        cursor.expect("(")
        cursor.parse_value_list()
        cursor.expect(")")
        if cursor.at("["):
            cursor.skip_balanced()  # successors
        properties: AttrEntries = []
        cut_start = cut_end = cursor.peek().start
        if cursor.at("<") and cursor.peek(1).text == "{":
            cursor.next()
            properties = cursor.parse_attribute_dict()
            cut_end = cursor.expect(">").end
        head, tail = text[:cut_start].rstrip(), text[cut_end:].strip()
        if tokens[-1].text == "{":
            self._emit(f"{head} {tail}")
            self.regions.append(_Region("generic", name, self.number, properties))
            return
        tail_cursor = Cursor(tail)
        self._emit_with_attributes(head, tail_cursor, properties)

    def _emit_with_attributes(self, head: str, cursor: Cursor, extra: AttrEntries) -> None:
        """`head {extra + existing attributes} : type loc` from the rest of a generic op."""
        existing = cursor.parse_attribute_dict() if cursor.at("{") else []
        attributes = _convert_attributes(extra + existing)
        rest = cursor.rest()
        type_part, location = split_trailing_location(rest, tokenize(rest))
        self._emit(f"{head}{_attribute_dict_text(attributes)} {type_part}".rstrip(), location)

    # -- regions -------------------------------------------------------------------------

    def _close_region(self, text: str, tokens: List[Token]) -> None:
        if not self.regions:
            raise LineError("`}` closes no region", tokens[0].column)
        region = self.regions[-1]
        reopens = tokens[-1].text == "{"  # `} else {`, `}, {`: the same op goes on
        if reopens or region.kind == "plain":
            self._emit_unchanged(text, tokens)
        elif region.kind == "func":
            self._close_func(text, tokens, region)
        else:
            self._close_generic(text, tokens, region)
        if not reopens:
            self.regions.pop()

    def _close_func(self, text: str, tokens: List[Token], region: _Region) -> None:
        cursor = Cursor(text, tokens)
        cursor.expect("}")
        location = cursor.parse_optional_location()
        _expect_line_end(cursor)
        indent = text[:tokens[0].start]
        self._emit(f"{indent}}}){_attribute_dict_text(region.attributes)} : () -> ()", location)

    def _close_generic(self, text: str, tokens: List[Token], region: _Region) -> None:
        cursor = Cursor(text, tokens)
        cursor.expect("}")
        cursor.expect(")")
        head = text[:cursor.peek().start].rstrip() if not cursor.at_end() else text.rstrip()
        self._emit_with_attributes(head, cursor, region.attributes)

    # -- tt.func -------------------------------------------------------------------------

    def _rewrite_func(self, cursor: Cursor, indent: str) -> None:
        header = _parse_func_header(cursor)
        attributes = header.attributes()
        if not header.has_body:
            self._emit(f'{indent}"tt.func"() ({{}}){_attribute_dict_text(attributes)} : () -> ()',
                       header.location)
            return
        self._emit(f'{indent}"tt.func"() ({{')
        self._emit(f"{indent}^bb0{header.entry_block_arguments()}:")
        self.regions.append(_Region("func", "tt.func", self.number, attributes))


# ---------------------------------------------------------------------------------------
# Custom form -> generic form


def _generic_form_of_custom_op(spec: OpSpec, cursor: Cursor, results: str,
                               result_count: int) -> Tuple[str, str]:
    """(generic op text, location) for one op in custom form."""
    _check_result_count(spec, result_count)
    matcher = FormatMatcher(spec.operands, spec.results, spec.keywords, cursor, result_count)
    matched = matcher.match(spec.format)
    location = cursor.parse_optional_location()
    _expect_line_end(cursor)
    _derive_missing_types(spec, matched, result_count)
    _qualify_bare_types(spec, matched)
    operands, operand_types = _operands_in_order(spec, matched)
    result_types = [t for slot in spec.results for t in matched.types.get(slot.name, [])]
    if len(result_types) != result_count:
        raise LineError(f"{spec.name} has {len(result_types)} result types but "
                        f"{result_count} results are named")
    attributes = _attributes_of(spec, matched)
    head = f"{results} = " if results else ""
    body = (f'{head}"{spec.name}"({", ".join(operands)}){_attribute_dict_text(attributes)}'
            f' : ({", ".join(operand_types)}) -> ({", ".join(result_types)})')
    return body, location


def _check_result_count(spec: OpSpec, result_count: int) -> None:
    fixed = sum(1 for slot in spec.results if slot.arity != VARIADIC)
    variadic = any(slot.arity == VARIADIC for slot in spec.results)
    if result_count < fixed or (result_count > fixed and not variadic):
        raise LineError(f"{spec.name} has {fixed} result(s), but {result_count} are named")


def _derive_missing_types(spec: OpSpec, matched: Matched, result_count: int) -> None:
    """Fill in the types the custom form does not print, following `spec.derive`."""
    pending = [slot for slot in spec.operands + spec.results if _needs_type(slot, spec, matched)]
    # Rules may depend on other derived types; every pass resolves at least one.
    while pending:
        resolved = [slot for slot in pending if _derive_type(slot, spec, matched, result_count)]
        if not resolved:
            names = ", ".join(slot.name for slot in pending)
            raise LineError(f"{spec.name}: cannot tell the type of {names}")
        pending = [slot for slot in pending if slot not in resolved]


def _needs_type(slot, spec: OpSpec, matched: Matched) -> bool:
    if slot.name in matched.types:
        return False
    if slot in spec.operands:
        return bool(matched.values.get(slot.name))
    return True


def _derive_type(slot, spec: OpSpec, matched: Matched, result_count: int) -> bool:
    rule = spec.derive.get(slot.name)
    if rule is None:
        raise LineError(f"{spec.name}: the type of `{slot.name}` is neither printed nor derivable")
    if rule.source is not None and not matched.types.get(rule.source):
        return False
    source_type = matched.types[rule.source][0] if rule.source is not None else ""
    if slot in spec.operands:
        count = len(matched.values[slot.name])
    elif slot.arity == VARIADIC:
        count = result_count - sum(1 for s in spec.results if s.arity != VARIADIC)
    else:
        count = 1
    matched.types[slot.name] = [rule.compute(source_type)] * count
    return True


def _qualify_bare_types(spec: OpSpec, matched: Matched) -> None:
    """`<f32>` -> `!tt.ptr<f32>` where the format prints a dialect type unqualified."""
    for name, prefix in spec.bare_types.items():
        matched.types[name] = [prefix + t if t.startswith("<") else t
                               for t in matched.types.get(name, [])]


def _operands_in_order(spec: OpSpec, matched: Matched) -> Tuple[List[str], List[str]]:
    values: List[str] = []
    types: List[str] = []
    for slot in spec.operands:
        slot_values = matched.values.get(slot.name, [])
        slot_types = matched.types.get(slot.name, [])
        if slot.arity != "optional" and slot.arity != VARIADIC and not slot_values:
            raise LineError(f"{spec.name}: operand `{slot.name}` is missing")
        if len(slot_types) != len(slot_values):
            raise LineError(f"{spec.name}: {len(slot_values)} `{slot.name}` operand(s) but "
                            f"{len(slot_types)} type(s)")
        values += slot_values
        types += slot_types
    return values, types


def _attributes_of(spec: OpSpec, matched: Matched) -> AttrEntries:
    attributes = dict(_convert_attributes(list(matched.attributes) + matched.attr_dict))
    for name, value in spec.defaults.items():
        attributes.setdefault(name, value)
    if spec.segment_sizes:
        sizes = ", ".join(str(len(matched.values.get(slot.name, []))) for slot in spec.operands)
        attributes["operandSegmentSizes"] = f"array<i32: {sizes}>"
    return list(attributes.items())


# ---------------------------------------------------------------------------------------
# Attributes


def _convert_attributes(entries: AttrEntries) -> AttrEntries:
    """Attribute entries with Triton dialect attributes replaced by builtin ones."""
    converted: AttrEntries = []
    for name, value in entries:
        if name == "cachePolicy" and value is not None:
            converted += _cache_policy_attributes(value)
        else:
            converted.append((name, value))
    return converted


def _cache_policy_attributes(value: str) -> AttrEntries:
    """`#tt.cache_policy<cache_modifier = cg, eviction_policy = evict_last>` ->
    `cache = 3 : i32`, `evict = 3 : i32`; other cache policies are kept as they are."""
    cursor = Cursor(value)
    if not (cursor.accept("#tt.cache_policy") and cursor.accept("<")):
        return [("cachePolicy", value)]
    fields: Dict[str, str] = {}
    while not cursor.accept(">"):
        if fields:
            cursor.expect(",")
        key = cursor.expect_kind(IDENT, "a cache policy field").text
        cursor.expect("=")
        fields[key] = cursor.expect_kind(IDENT, "a cache policy keyword").text
    modifier = fields.get("cache_modifier", "none")
    eviction = fields.get("eviction_policy", "evict_normal")
    if modifier not in enums.CACHE_MODIFIER or eviction not in enums.EVICTION_POLICY:
        raise LineError(f"unknown cache policy {value}")
    return [("cache", f"{enums.CACHE_MODIFIER[modifier]} : i32"),
            ("evict", f"{enums.EVICTION_POLICY[eviction]} : i32")]


def _attribute_dict_text(entries: AttrEntries) -> str:
    """` {a = 1 : i32, flag}` (with a leading space), or "" when there are none."""
    if not entries:
        return ""
    return " {" + ", ".join(name if value is None else f"{name} = {value}"
                            for name, value in entries) + "}"


# ---------------------------------------------------------------------------------------
# tt.func headers


@dataclass
class _FuncArgument:
    name: Optional[str]  # None in a declaration
    type: str
    attributes: AttrEntries
    location: str


@dataclass
class _FuncHeader:
    symbol: str
    visibility: str
    arguments: List[_FuncArgument]
    results: List[Tuple[str, AttrEntries]]
    extra_attributes: AttrEntries
    has_body: bool
    location: str

    def function_type(self) -> str:
        inputs = ", ".join(arg.type for arg in self.arguments)
        outputs = ", ".join(t for t, _attrs in self.results)
        return f"({inputs}) -> ({outputs})"

    def attributes(self) -> AttrEntries:
        name = self.symbol[1:]
        entries: AttrEntries = [
            ("sym_name", name if name.startswith('"') else f'"{name}"'),
            ("function_type", self.function_type()),
            ("sym_visibility", f'"{self.visibility}"'),
        ]
        if any(arg.attributes for arg in self.arguments):
            entries.append(("arg_attrs", _dict_array([a.attributes for a in self.arguments])))
        if any(attrs for _t, attrs in self.results):
            entries.append(("res_attrs", _dict_array([attrs for _t, attrs in self.results])))
        return entries + _convert_attributes(self.extra_attributes)

    def entry_block_arguments(self) -> str:
        if not self.arguments:
            return ""
        parts = [f"{arg.name}: {arg.type}" + (f" {arg.location}" if arg.location else "")
                 for arg in self.arguments]
        return "(" + ", ".join(parts) + ")"


def _dict_array(dicts: List[AttrEntries]) -> str:
    return "[" + ", ".join(_attribute_dict_text(d).strip() or "{}" for d in dicts) + "]"


def _parse_func_header(cursor: Cursor) -> _FuncHeader:
    """`tt.func [visibility] @name(args) [-> results] [attributes {...}] [{]`.

    Arguments are `%name: type [{attrs}] [loc(...)]` in a definition and `type [{attrs}]`
    in a declaration (no body).
    """
    visibility = "public"
    if cursor.peek().text in ("public", "private", "nested"):
        visibility = cursor.next().text
    symbol = cursor.expect_kind(SYMBOL, "the function's @name").text
    arguments = _parse_func_arguments(cursor)
    results: List[Tuple[str, AttrEntries]] = []
    if cursor.accept("->"):
        results = _parse_func_results(cursor)
    extra: AttrEntries = []
    if cursor.accept("attributes"):
        extra = cursor.parse_attribute_dict()
    has_body = cursor.accept("{")
    location = "" if has_body else cursor.parse_optional_location()
    _expect_line_end(cursor)
    if has_body and any(arg.name is None for arg in arguments):
        raise LineError("a tt.func with a body needs named arguments")
    return _FuncHeader(symbol, visibility, arguments, results, extra, has_body, location)


def _parse_func_arguments(cursor: Cursor) -> List[_FuncArgument]:
    cursor.expect("(")
    arguments: List[_FuncArgument] = []
    while not cursor.accept(")"):
        if arguments:
            cursor.expect(",")
        name = None
        if cursor.peek().kind == VALUE:
            name = cursor.parse_value()
            cursor.expect(":")
        arg_type = cursor.parse_type()
        attributes = cursor.parse_attribute_dict() if cursor.at("{") else []
        location = cursor.parse_optional_location()
        arguments.append(_FuncArgument(name, arg_type, attributes, location))
    return arguments


def _parse_func_results(cursor: Cursor) -> List[Tuple[str, AttrEntries]]:
    if not cursor.accept("("):
        return [(cursor.parse_type(), [])]
    results: List[Tuple[str, AttrEntries]] = []
    while not cursor.accept(")"):
        if results:
            cursor.expect(",")
        result_type = cursor.parse_type()
        attributes = cursor.parse_attribute_dict() if cursor.at("{") else []
        results.append((result_type, attributes))
    return results


# ---------------------------------------------------------------------------------------
# Small parsing helpers


def _parse_result_list(cursor: Cursor) -> Tuple[str, int]:
    """(`%a, %b:2` text, number of results) of `%a, %b:2 = ...`; ("", 0) when none."""
    if cursor.peek().kind != VALUE:
        return "", 0
    first = cursor.index
    count = 0
    while True:
        cursor.parse_value()
        if cursor.accept(":"):
            count += int(cursor.expect_kind(NUMBER, "a result count").text)
        else:
            count += 1
        if not cursor.accept(","):
            break
    text = cursor.text_between(first, cursor.index)
    cursor.expect("=")
    return text, count


def _expect_line_end(cursor: Cursor) -> None:
    if not cursor.at_end():
        raise cursor.error("unexpected text after the op")


def _second_is(tokens: List[Token], text: str) -> bool:
    return len(tokens) > 1 and tokens[1].text == text


def _op_name(token: Token) -> str:
    return token.text[1:-1] if token.kind == STRING else token.text


_OP_NAME = re.compile(r'\s*(?:%[^=]*=\s*)?"?([A-Za-z_][\w$]*\.[\w$.]+)')


def _op_on_line(text: str) -> Optional[str]:
    """The op name on a TTIR line (`dialect.op`), for messages; None when there is none."""
    match = _OP_NAME.match(text)
    return match.group(1) if match else None


# ---------------------------------------------------------------------------------------
# MLIR diagnostics -> TTIR lines

# The buffer name MLIR's parser gives text parsed from a string.
_GENERIC_TEXT_FILE = "-"


def _error_from_mlir(err: Exception, lines: List[GenericLine], ttir_lines: List[str],
                     context: ir.Context) -> TTIRReadError:
    """A TTIRReadError at the TTIR line of MLIR's first diagnostic.

    Syntax errors point into the generic text. Verifier errors (`Module.parse` verifies
    too) point at the failing op's location, which is its Python source; parsing the
    text once more without op locations makes the same diagnostic name the line of the
    generic text."""
    message, location = _first_diagnostic(err)
    position = _generic_text_position(location)
    if position is None:
        position = _generic_text_position(_first_diagnostic(
            _error_without_op_locations(lines, context))[1])
    if position is None or not 1 <= position[0] <= len(lines):
        first = next((i for i, text in enumerate(ttir_lines) if text.strip()), 0)
        source = ttir_lines[first] if ttir_lines else ""
        return TTIRReadError(f"MLIR rejects the module: {message}", first + 1, source)
    line = lines[position[0] - 1]
    source = ttir_lines[line.ttir_line - 1] if line.ttir_line <= len(ttir_lines) else ""
    column = position[1] if line.verbatim else None
    return TTIRReadError(f"MLIR rejects it: {message}", line.ttir_line, source,
                         _op_on_line(source), column)


def _error_without_op_locations(lines: List[GenericLine],
                                context: ir.Context) -> Optional[Exception]:
    try:
        ir.Module.parse(_render(lines, with_locations=False), context).operation.verify()
    except Exception as err:  # the expected outcome: the same failure, now located
        return err
    return None


def _first_diagnostic(err: Optional[Exception]):
    """(message, location or None) of an MLIRError's first error diagnostic."""
    if err is None:
        return "", None
    diagnostics = getattr(err, "error_diagnostics", None) or []
    if not diagnostics:
        return str(err), None
    diagnostic = diagnostics[0]
    # The first line says what is wrong; the rest dumps the op in generic form.
    message = diagnostic.message.split("\n")[0].removesuffix("; see current operation:")
    for note in getattr(diagnostic, "notes", []) or []:
        if not note.message.startswith("see current operation"):
            message += f"; {note.message.splitlines()[0]}"
    return message, diagnostic.location


def _generic_text_position(location) -> Optional[Tuple[int, int]]:
    """(line, column) when `location` points into the generic text itself."""
    try:
        if location is not None and location.is_a_file() \
                and location.filename == _GENERIC_TEXT_FILE:
            return location.start_line, location.start_col
    except Exception:  # a location kind the bindings cannot inspect
        pass
    return None
