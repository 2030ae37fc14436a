"""One entry per op of the Triton dialect (TritonOps.td, Triton 3.9): how to read its
custom form and what its generic form holds.

Each `OpSpec` lists
- `operands` and `results` in declaration order (the order of the generic form), with
  `?` for Optional and `*` for Variadic;
- `format`: the op's `assemblyFormat`, copied from TritonOps.td;
- `keywords`: the attributes the format spells as keywords or literals ($axis, $sem, ...)
  and how to read them;
- `derive`: for each operand or result whose type the format does not print, the rule
  that gives it (the op's `TypesMatchWith` / `SameOperandsAndResultType` constraints);
- `defaults`: DefaultValuedAttr values, added when the custom form leaves them out, so
  that a converter can always read them by name;
- `bare_types`: operands/results whose dialect type the format prints without its
  `!tt.name` prefix (a `type(...)` of a TypeDef-constrained operand, e.g. `<f32>`);
- `segment_sizes`: ops with AttrSizedOperandSegments get `operandSegmentSizes`.

Ops without a format (`tt.reduce`, `tt.scan`, `tt.map_elementwise`) are printed by Triton
in generic form already; `tt.func` has a hand-written syntax handled by the reader.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, Optional, Tuple

from . import enums
from . import types as tt_types
from .assembly_format import (ONE, OPTIONAL, VARIADIC, AttrKind, Element, EnumAttr, Slot,
                              StrAttr, SymbolAttr, UnitAttr, compile_format)


@dataclass(frozen=True)
class Rule:
    """The type of one operand/result computed from the type of another (`source`)."""

    source: Optional[str]
    compute: Callable[[str], str]
    description: str


def same_as(name: str) -> Rule:
    return Rule(name, lambda t: t, f"type of {name}")


def pointee_of(name: str) -> Rule:
    return Rule(name, tt_types.pointee_shaped, f"pointee type of {name}")


def mask_like(name: str) -> Rule:
    return Rule(name, tt_types.mask_shaped, f"i1 with the shape of {name}")


def element_of(name: str) -> Rule:
    return Rule(name, tt_types.element_type, f"element type of {name}")


def fixed(type_text: str) -> Rule:
    return Rule(None, lambda _unused: type_text, type_text)


@dataclass(frozen=True)
class OpSpec:
    name: str
    operands: Tuple[Slot, ...]
    results: Tuple[Slot, ...]
    format: Optional[Tuple[Element, ...]]
    keywords: Dict[str, AttrKind] = field(default_factory=dict)
    derive: Dict[str, Rule] = field(default_factory=dict)
    defaults: Dict[str, str] = field(default_factory=dict)
    bare_types: Dict[str, str] = field(default_factory=dict)
    segment_sizes: bool = False
    format_text: Optional[str] = None  # the assemblyFormat as in TritonOps.td

    @property
    def has_custom_form(self) -> bool:
        return self.format is not None


def _slots(text: str) -> Tuple[Slot, ...]:
    """`"ptr mask? other?"` -> slots; `?` Optional, `*` Variadic."""
    slots = []
    for word in text.split():
        if word.endswith("?"):
            slots.append(Slot(word[:-1], OPTIONAL))
        elif word.endswith("*"):
            slots.append(Slot(word[:-1], VARIADIC))
        else:
            slots.append(Slot(word, ONE))
    return tuple(slots)


def op(name: str, operands: str, results: str, format: Optional[str], **details) -> OpSpec:
    compiled = compile_format(format) if format is not None else None
    return OpSpec("tt." + name, _slots(operands), _slots(results), compiled,
                  format_text=format, **details)


_PROGRAM_DIM = {"axis": EnumAttr(enums.PROGRAM_DIM)}
_ATOMIC_ORDER = {"sem": EnumAttr(enums.MEM_SEMANTIC), "scope": EnumAttr(enums.MEM_SYNC_SCOPE)}
_NO_CACHE_HINTS = {"cache": f"{enums.CACHE_MODIFIER['none']} : i32",
                   "evict": f"{enums.EVICTION_POLICY['evict_normal']} : i32"}

OPS: Tuple[OpSpec, ...] = (
    # -- casts ---------------------------------------------------------------------------
    op("int_to_ptr", "src", "result", "$src attr-dict `:` type($src) `->` type($result)"),
    op("ptr_to_int", "src", "result", "$src attr-dict `:` type($src) `->` type($result)"),
    op("bitcast", "src", "result", "$src attr-dict `:` type($src) `->` type($result)"),
    op("fp_to_fp", "src", "result",
       "$src attr-dict  (`,` `rounding` `=` $rounding^)? `:` type($src) `->` type($result)",
       keywords={"rounding": EnumAttr(enums.ROUNDING_MODE)}),
    # -- arithmetic ----------------------------------------------------------------------
    op("clampf", "x min max", "result",
       "$x `,` $min `,` $max `,` `propagateNan` `=` $propagateNan attr-dict `:` type($result)",
       keywords={"propagateNan": EnumAttr(enums.PROPAGATE_NAN)},
       derive={"x": same_as("result"), "min": same_as("result"), "max": same_as("result")}),
    op("precise_sqrt", "x", "result", "$x attr-dict `:` type($x)",
       derive={"result": same_as("x")}),
    op("precise_divf", "x y", "result", "$x `,` $y attr-dict `:` type($x)",
       derive={"y": same_as("x"), "result": same_as("x")}),
    op("approx_divf", "x y", "result", "$x `,` $y attr-dict `:` type($x)",
       derive={"y": same_as("x"), "result": same_as("x")}),
    op("mulhiui", "x y", "result", "$x `,` $y attr-dict `:` type($x)",
       derive={"y": same_as("x"), "result": same_as("x")}),
    op("addptr", "ptr offset", "result",
       "$ptr `,` $offset attr-dict `:` type($result) `,` type($offset)",
       derive={"ptr": same_as("result")}),
    # -- memory --------------------------------------------------------------------------
    op("load", "ptr mask? other?", "result",
       "$ptr (`,` $mask^)? (`,` $other^)? attr-dict `:` type($ptr)",
       derive={"mask": mask_like("ptr"), "other": pointee_of("ptr"),
               "result": pointee_of("ptr")},
       defaults={**_NO_CACHE_HINTS, "isVolatile": "false"}, segment_sizes=True),
    op("store", "ptr value mask?", "",
       "$ptr `,` $value (`,` $mask^)? attr-dict `:` type($ptr)",
       derive={"value": pointee_of("ptr"), "mask": mask_like("ptr")},
       defaults=dict(_NO_CACHE_HINTS)),
    op("grid_dependency_wait", "", "", "attr-dict"),
    op("grid_dependency_launch_dependents", "", "", "attr-dict"),
    op("atomic_load", "ptr mask?", "result",
       "$sem `,` $scope `,` $ptr (`,` $mask^)? attr-dict `:` functional-type(operands, $result)",
       keywords=_ATOMIC_ORDER),
    op("atomic_store", "ptr value mask?", "",
       "$sem `,` $scope `,` $ptr `,` $value (`,` $mask^)? attr-dict `:` type($ptr)",
       keywords=_ATOMIC_ORDER,
       derive={"value": pointee_of("ptr"), "mask": mask_like("ptr")}),
    op("atomic_poll", "ptr expected timeout?", "result",
       "$sem `,` $scope `,` $ptr `,` $expected (`timeout` $timeout^)? attr-dict `:` "
       "qualified(type($ptr)) `,` type($expected) `->` type($result)",
       keywords=_ATOMIC_ORDER, derive={"timeout": fixed("i64")}),
    op("atomic_rmw", "ptr val mask?", "result",
       "$atomic_rmw_op `,` $sem `,` $scope `,` $ptr `,` $val (`,` $mask^)?  attr-dict `:` "
       "functional-type(operands, $result)",
       keywords={"atomic_rmw_op": EnumAttr(enums.ATOMIC_RMW_OP), **_ATOMIC_ORDER}),
    op("atomic_cas", "ptr cmp val", "result",
       "$sem `,` $scope `,` $ptr `,` $cmp `,` $val attr-dict `:` "
       "functional-type(operands, $result)",
       keywords=_ATOMIC_ORDER),
    # -- shapes --------------------------------------------------------------------------
    op("splat", "src", "result", "$src attr-dict `:` type($src) `->` type($result)"),
    op("unsplat", "src", "result", "$src attr-dict `:` type($src)",
       derive={"result": element_of("src")}),
    op("expand_dims", "src", "result", "$src attr-dict `:` type($src) `->` type($result)"),
    op("reshape", "src", "result",
       "$src (`allow_reorder` $allow_reorder^)? (`efficient_layout` $efficient_layout^)? "
       "attr-dict `:` type($src) `->` type($result)",
       keywords={"allow_reorder": UnitAttr(), "efficient_layout": UnitAttr()}),
    op("broadcast", "src", "result", "$src attr-dict `:` type($src) `->` type($result)"),
    op("cat", "lhs rhs", "result", "$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)",
       derive={"rhs": same_as("lhs")}),
    op("join", "lhs rhs", "result", "$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)",
       derive={"rhs": same_as("lhs")}),
    op("split", "src", "outLHS outRHS", "$src attr-dict `:` type($src) `->` type($outLHS)",
       derive={"outRHS": same_as("outLHS")}),
    op("trans", "src", "result", "$src attr-dict `:` type($src) `->` type($result)"),
    # -- SPMD ----------------------------------------------------------------------------
    op("get_program_id", "", "result", "$axis attr-dict `:` type($result)",
       keywords=_PROGRAM_DIM),
    op("get_num_programs", "", "result", "$axis attr-dict `:` type($result)",
       keywords=_PROGRAM_DIM),
    # -- dot -----------------------------------------------------------------------------
    op("dot", "a b c", "d",
       "$a`,` $b`,` $c (`,` `inputPrecision` `=` $inputPrecision^)? attr-dict `:` "
       "type($a) `*` type($b) `->` type($d)",
       keywords={"inputPrecision": EnumAttr(enums.INPUT_PRECISION)},
       derive={"c": same_as("d")},
       defaults={"inputPrecision": f"{enums.INPUT_PRECISION['ieee']} : i32",
                 "maxNumImpreciseAcc": "0 : i32"}),
    op("dot_scaled", "a b c a_scale? b_scale?", "d",
       "$a (`scale` $a_scale^)? `,` $b (`scale` $b_scale^)? `,` $c "
       "`lhs` `=` $a_elem_type `rhs` `=` $b_elem_type attr-dict "
       "`:` type($a) (`,` type($a_scale)^)? `*` type($b) (`,` type($b_scale)^)? `->` type($d)",
       keywords={"a_elem_type": EnumAttr(enums.SCALE_DOT_ELEM_TYPE),
                 "b_elem_type": EnumAttr(enums.SCALE_DOT_ELEM_TYPE)},
       derive={"c": same_as("d")},
       defaults={"lhs_k_pack": "true", "rhs_k_pack": "true"}, segment_sizes=True),
    # -- ops with a combiner region (printed generic by Triton) ---------------------------
    op("reduce", "srcs*", "result*", None),
    op("reduce.return", "result*", "", "$result attr-dict `:` type($result)"),
    op("scan", "srcs*", "result*", None),
    op("scan.return", "result*", "", "$result attr-dict `:` type($result)"),
    op("map_elementwise", "srcs*", "result*", None),
    op("map_elementwise.return", "result*", "", "attr-dict ($result^ `:` type($result))?"),
    # -- elementwise escapes -------------------------------------------------------------
    op("extern_elementwise", "srcs*", "result",
       "operands attr-dict `:` functional-type(operands, $result)"),
    op("make_range", "", "result", "attr-dict `:` type($result)"),
    op("elementwise_inline_asm", "args*", "result*",
       "$asm_string attr-dict ($args^ `:` type($args))? `->` type($result)",
       keywords={"asm_string": StrAttr()}),
    op("histogram", "src mask?", "result",
       "$src (`,` $mask^)? attr-dict `:` type($src) `->` type($result)",
       derive={"mask": mask_like("src")}),
    op("gather", "src indices", "result",
       "$src `[` $indices `]` attr-dict `:` functional-type(operands, results)"),
    # -- debugging -----------------------------------------------------------------------
    op("print", "args*", "", "$prefix attr-dict (`:` $args^ `:` type($args))?",
       keywords={"prefix": StrAttr()}),
    op("assert", "condition", "", "$condition `,` $message attr-dict `:` type($condition)",
       keywords={"message": StrAttr()}),
    # -- tensor descriptors --------------------------------------------------------------
    op("make_tensor_descriptor", "base shape* strides*", "result",
       "$base `,` `[` $shape `]` `,` `[` $strides `]` attr-dict `:` type($base) `,` "
       "type($result)",
       derive={"shape": fixed("i32"), "strides": fixed("i64")},
       defaults={"padding": f"{enums.PADDING_OPTION['zero']} : i32"},
       bare_types={"base": "!tt.ptr", "result": "!tt.tensordesc"}),
    op("descriptor_load", "desc indices*", "result",
       "$desc `[` $indices `]` attr-dict `:` qualified(type($desc)) `->` type($result)",
       derive={"indices": fixed("i32")}, defaults=dict(_NO_CACHE_HINTS)),
    op("descriptor_store", "desc src indices*", "",
       "$desc `[` $indices `]` `,` $src attr-dict `:` qualified(type($desc)) `,` type($src)",
       derive={"indices": fixed("i32")}),
    op("descriptor_reduce", "desc src indices*", "",
       "$kind `,` $desc `[` $indices `]` `,` $src attr-dict `:` qualified(type($desc)) `,` "
       "type($src)",
       keywords={"kind": EnumAttr(enums.DESCRIPTOR_REDUCE_KIND)},
       derive={"indices": fixed("i32")}),
    op("descriptor_gather", "desc x_offsets y_offset", "result",
       "$desc `[` $x_offsets `,` $y_offset `]` attr-dict `:` functional-type(operands, results)"),
    op("descriptor_scatter", "desc x_offsets y_offset src", "",
       "$desc `[` $x_offsets `,` $y_offset `]` `,` $src attr-dict `:` type(operands)"),
    # -- functions -----------------------------------------------------------------------
    op("call", "operands*", "results*",
       "$callee `(` $operands `)` attr-dict `:` functional-type($operands, results)",
       keywords={"callee": SymbolAttr()}),
    op("func", "", "", None),  # custom syntax: see reader._FuncHeader
    op("return", "srcs*", "", "attr-dict ($srcs^ `:` type($srcs))?"),
)

OPS_BY_NAME: Dict[str, OpSpec] = {spec.name: spec for spec in OPS}
