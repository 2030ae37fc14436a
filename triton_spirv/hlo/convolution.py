"""Elemental emission of HLO `convolution`: each output element is a dot product over
the kernel window and the input features of its group, with im2col-style indexing
into the input (no im2col buffer is materialized).

    %c = f32[2,5,5,4] convolution(%x, %w), window={size=3x3 stride=2x2 pad=1_1x1_1},
         dim_labels=b01f_01io->b01f, feature_group_count=1

`dim_labels` name the dimensions of input, kernel and output (`b`/`f`: batch and
feature of input and output, `i`/`o`: input and output features of the kernel,
digits: spatial dimensions, in order). For output position `s` and kernel position
`w` along one spatial dimension the input is read at

    p = s * stride + w * rhs_dilate - pad_low      (in the lhs-dilated input)

when `p` falls on an input element (0 <= p <= (size-1) * lhs_dilate, p % lhs_dilate
== 0), at `p / lhs_dilate`; elsewhere the padding contributes zero. `rhs_reversal`
reads the kernel backwards along that dimension.

Groups: with `feature_group_count` G, output feature `o` belongs to group
`o / (O / G)` and reads input features `group * (C / G) + i`; with
`batch_group_count` B, output feature `o` reads the input batch
`(o / (O / B)) * (N / B) + b`.
"""
from __future__ import annotations

from dataclasses import dataclass

from mlir.dialects import arith

from ..ir_helpers import named
from .elementwise import convert_value
from .errors import HloUnsupportedError, where
from .indexing import Const, Dim
from .mlir_types import scalar_constant
from .scalar_code import apply_expr, if_else, loop_nest, window_input_positions


@dataclass(frozen=True)
class ConvDims:
    """Which dimension of input, kernel and output plays which role."""
    lhs_batch: int
    lhs_feature: int
    lhs_spatial: tuple[int, ...]
    rhs_in: int
    rhs_out: int
    rhs_spatial: tuple[int, ...]
    out_batch: int
    out_feature: int
    out_spatial: tuple[int, ...]


def conv_dims(instr) -> ConvDims:
    """Reads `dim_labels=b01f_01io->b01f`."""
    text = instr.attr("dim_labels")
    try:
        operands, out = text.split("->")
        lhs, rhs = operands.split("_")
        return ConvDims(lhs.index("b"), lhs.index("f"), _spatial(lhs),
                        rhs.index("i"), rhs.index("o"), _spatial(rhs),
                        out.index("b"), out.index("f"), _spatial(out))
    except ValueError:
        raise HloUnsupportedError(f"{where(instr)}: cannot read dim_labels={text}") from None


def _spatial(labels: str) -> tuple[int, ...]:
    """Positions of the spatial labels 0, 1, 2, ... in order."""
    digits = sorted((c, k) for k, c in enumerate(labels) if c.isdigit())
    if [c for c, _ in digits] != [str(n) for n in range(len(digits))]:
        raise ValueError(labels)
    return tuple(k for _, k in digits)


def conv_window(instr, spatial_rank: int) -> dict:
    """`window={...}` as `HloInstruction.window()` reads it, with `rhs_reversal`; a
    convolution without spatial dimensions prints none."""
    if "window" not in instr.attrs:
        if spatial_rank:
            raise HloUnsupportedError(f"{where(instr)}: convolution without window=")
        return {key: [] for key in ("size", "stride", "pad", "lhs_dilate", "rhs_dilate",
                                    "rhs_reversal")}
    window = instr.window()
    if len(window["size"]) != spatial_rank:
        raise HloUnsupportedError(f"{where(instr)}: window has {len(window['size'])} "
                                  f"dimensions, dim_labels name {spatial_rank}")
    window.setdefault("rhs_reversal", [0] * spatial_rank)
    return window


def check_convolution(instr) -> tuple[ConvDims, dict, int, int]:
    """Dimensions, window and group counts, with the shape relations XLA checks."""
    dims = conv_dims(instr)
    window = conv_window(instr, len(dims.lhs_spatial))
    lhs, rhs = (o.shape for o in instr.operands)
    groups = instr.int_attr("feature_group_count", 1)
    batch_groups = instr.int_attr("batch_group_count", 1)
    in_features, per_group = lhs.dims[dims.lhs_feature], rhs.dims[dims.rhs_in]
    out_features = rhs.dims[dims.rhs_out]
    problems = []
    if in_features != per_group * groups:
        problems.append(f"input features {in_features} != kernel input features "
                        f"{per_group} x feature_group_count {groups}")
    if out_features % (groups * batch_groups):
        problems.append(f"kernel output features {out_features} are not a multiple of "
                        f"the group counts")
    if lhs.dims[dims.lhs_batch] % batch_groups:
        problems.append(f"batch {lhs.dims[dims.lhs_batch]} is not a multiple of "
                        f"batch_group_count {batch_groups}")
    if [rhs.dims[d] for d in dims.rhs_spatial] != list(window["size"]):
        problems.append(f"window size {window['size']} != kernel spatial sizes")
    if problems:
        raise HloUnsupportedError(f"{where(instr)}: convolution shapes do not agree: "
                                  + "; ".join(problems))
    return dims, window, groups, batch_groups


def emit_convolution(em, instr, indices):
    """One output element: the window x group-features loop nest."""
    lhs, rhs = instr.operands
    dims, window, groups, batch_groups = check_convolution(instr)
    out_et = instr.shape.element
    per_group = rhs.shape.dims[dims.rhs_in]
    out_features = rhs.shape.dims[dims.rhs_out]
    out_batch = instr.shape.dims[dims.out_batch]
    o = indices[dims.out_feature]
    group_base = apply_expr((Dim(0) // (out_features // groups)) * per_group, [o])
    batch = indices[dims.out_batch]
    if batch_groups > 1:
        batch = apply_expr((Dim(0) // (out_features // batch_groups)) * out_batch + Dim(1),
                           [o, batch])
    lhs_spatial_sizes = [lhs.shape.dims[d] for d in dims.lhs_spatial]

    def body(ivs, accs):
        *taps, feature = ivs

        def step():
            with named("input_pos"):
                positions, inside = window_input_positions(
                    [indices[d] for d in dims.out_spatial], taps, window, lhs_spatial_sizes)
            li = [None] * lhs.shape.rank
            li[dims.lhs_batch] = batch
            li[dims.lhs_feature] = arith.addi(group_base, feature)
            for d, p in zip(dims.lhs_spatial, positions):
                li[d] = p
            ri = [None] * rhs.shape.rank
            ri[dims.rhs_in] = feature
            ri[dims.rhs_out] = o
            for d, w, size, rev in zip(dims.rhs_spatial, taps, window["size"],
                                       window["rhs_reversal"]):
                ri[d] = apply_expr(Const(size - 1) - Dim(0), [w]) if rev else w

            def accumulate():
                a = convert_value(em.scalar(lhs, li), lhs.shape.element, out_et)
                b = convert_value(em.scalar(rhs, ri), rhs.shape.element, out_et)
                if out_et.is_float:
                    return [arith.addf(accs[0], arith.mulf(a, b))]
                return [arith.addi(accs[0], arith.muli(a, b))]
            if inside is None:
                return em.in_region(accumulate)
            return if_else(inside, [accs[0].type], lambda: em.in_region(accumulate),
                           lambda: list(accs))
        return em.in_region(step)
    zero = scalar_constant(out_et, 0)
    return loop_nest(list(window["size"]) + [per_group], [zero], body)
