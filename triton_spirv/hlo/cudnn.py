"""XLA:GPU's cuDNN convolution custom-calls as ordinary HLO: a `convolution` with the
epilogue of `cudnn_conv_backend_config` fused in, so they run through this frontend's
convolution path.

  __cudnn$convForward                  the call's own convolution attributes
  __cudnn$convBiasActivationForward    the same, then conv_result_scale x conv
                                       (+ side_input_scale x side input) (+ bias per
                                       output feature), then activation_mode
  __cudnn$convBackwardInput            the input gradient: a convolution of the output
                                       gradient with the spatially reversed kernel
  __cudnn$convBackwardFilter           the kernel gradient: a convolution of the input
                                       with the output gradient as the kernel

The result is a tuple `(result, u8[workspace])`; the workspace is scratch for cuDNN and
is left alone (`LibraryCall.outputs` maps it to None). The lowered instructions keep the
call's line, so messages and the comments of the generated OpenCL C point at the call.
"""
from __future__ import annotations

from typing import Callable

from .computation_builder import LibraryCall
from .errors import HloUnsupportedError, where
from .reader import HloComputation, HloInstruction, backend_config, custom_call_target, read_hlo


# -- the convolution each target computes ----------------------------------------------

def _labels(instr) -> tuple[str, str, str]:
    operands, out = instr.attr("dim_labels").split("->")
    lhs, rhs = operands.split("_")
    return lhs, rhs, out


def _swap(labels: str, a: str, b: str) -> str:
    return labels.translate(str.maketrans({a: b, b: a}))


def _rename(labels: str, mapping: dict) -> str:
    return labels.translate(str.maketrans(mapping))


def _window_text(size, stride, pads, lhs_dilate=None, rhs_dilate=None, reversal=False) -> str:
    x = lambda values: "x".join(str(v) for v in values)
    parts = [f"size={x(size)}", f"stride={x(stride)}",
             "pad=" + "x".join(f"{lo}_{hi}" for lo, hi in pads)]
    if lhs_dilate and any(d != 1 for d in lhs_dilate):
        parts.append(f"lhs_dilate={x(lhs_dilate)}")
    if rhs_dilate and any(d != 1 for d in rhs_dilate):
        parts.append(f"rhs_dilate={x(rhs_dilate)}")
    if reversal:
        parts.append(f"rhs_reversal={x([1] * len(size))}")
    return "{" + " ".join(parts) + "}"


def _forward_window(instr, rank: int) -> dict:
    if rank == 0:
        return {"size": [], "stride": [], "pad": [], "lhs_dilate": [], "rhs_dilate": []}
    return instr.window()


def _spatial_dims(labels: str) -> list[int]:
    return [labels.index(str(n)) for n in range(sum(c.isdigit() for c in labels))]


def _forward_convolution(instr) -> str:
    """The call's own convolution attributes."""
    groups = instr.int_attr("feature_group_count", 1)
    attrs = f"window={instr.attrs['window']}, " if "window" in instr.attrs else ""
    attrs += f"dim_labels={instr.attr('dim_labels')}"
    if groups != 1:
        attrs += f", feature_group_count={groups}"
    return attrs


def _backward_input_convolution(instr) -> str:
    """The input gradient as a plain convolution of the output gradient with the
    spatially reversed kernel (input and output features swapped), the forward
    stride as lhs dilation: input position p gets g[s] * w[k] for every
    s * stride + k * rhs_dilate - pad_low = p."""
    _require_ungrouped(instr)
    lhs, rhs, out = _labels(instr)
    grad, _kernel = (o.shape for o in instr.operands)
    result = _result_shape(instr)
    rank = len(_spatial_dims(lhs))
    w = _forward_window(instr, rank)
    _require_no_lhs_dilation(instr, w)
    pads = []
    for d in range(rank):
        size, stride, rd = w["size"][d], w["stride"][d], w["rhs_dilate"][d]
        in_size = result.dims[_spatial_dims(lhs)[d]]
        out_size = grad.dims[_spatial_dims(out)[d]]
        extent = (size - 1) * rd + 1
        low = extent - 1 - w["pad"][d][0]
        high = in_size - 1 + extent - ((out_size - 1) * stride + 1) - low
        pads.append((low, high))
    window = _window_text(w["size"], [1] * rank, pads, w["stride"], w["rhs_dilate"],
                          reversal=rank > 0)
    return f"window={window}, dim_labels={out}_{_swap(rhs, 'i', 'o')}->{lhs}"


def _backward_filter_convolution(instr) -> str:
    """The kernel gradient as a plain convolution of the input (batch and features
    swapped) with the output gradient as the kernel: kernel position k gets
    x[s * stride + k * rhs_dilate - pad_low] * g[s], summed over batch and s. With
    feature groups, output feature o reads the input features of its group: the
    swapped input's batch splits into `batch_group_count` groups."""
    groups = instr.int_attr("feature_group_count", 1)
    lhs, rhs, out = _labels(instr)
    x, grad = (o.shape for o in instr.operands)
    rank = len(_spatial_dims(lhs))
    w = _forward_window(instr, rank)
    _require_no_lhs_dilation(instr, w)
    sizes, pads = [], []
    for d in range(rank):
        size, stride, rd = w["size"][d], w["stride"][d], w["rhs_dilate"][d]
        in_size = x.dims[_spatial_dims(lhs)[d]]
        out_size = grad.dims[_spatial_dims(out)[d]]
        low = w["pad"][d][0]
        sizes.append(out_size)
        pads.append((low, (size - 1) * rd + (out_size - 1) * stride + 1 - in_size - low))
    window = _window_text(sizes, w["rhs_dilate"], pads, None, w["stride"])
    labels = (f"{_swap(lhs, 'b', 'f')}_{_rename(out, {'b': 'i', 'f': 'o'})}"
              f"->{_rename(rhs, {'i': 'b', 'o': 'f'})}")
    grouped = f", batch_group_count={groups}" if groups > 1 else ""
    return f"window={window}, dim_labels={labels}{grouped}"


def _require_ungrouped(instr) -> None:
    if instr.int_attr("feature_group_count", 1) != 1:
        raise HloUnsupportedError(f"{where(instr)}: {custom_call_target(instr)} with "
                                  f"feature_group_count > 1 is not supported")


def _require_no_lhs_dilation(instr, window) -> None:
    if any(d != 1 for d in window["lhs_dilate"]):
        raise HloUnsupportedError(f"{where(instr)}: {custom_call_target(instr)} with "
                                  f"lhs_dilate is not supported")


def _result_shape(instr):
    """The convolution result: the first element of the (result, workspace) tuple."""
    shape = instr.shape
    if not shape.is_tuple or len(shape.tuple_shapes) != 2 or \
            shape.tuple_shapes[1].element is None or shape.tuple_shapes[1].element.name != "u8":
        raise HloUnsupportedError(f"{where(instr)}: expected a (result, u8[workspace]) "
                                  f"tuple, got {shape}")
    return shape.tuple_shapes[0]


# Activations of cudnn_conv_backend_config: (name of y, element type, dims text,
# alpha) -> lines computing the activated value, the last one named `activated`.
def _relu(y, t, dims, alpha):
    return [f"zero = {t}[] constant(0)", f"zeros = {t}[{dims}] broadcast(zero), dimensions={{}}",
            f"activated = {t}[{dims}] maximum({y}, zeros)"]


def _relu6(y, t, dims, alpha):
    return [f"zero = {t}[] constant(0)", f"six = {t}[] constant(6)",
            f"activated = {t}[{dims}] clamp(zero, {y}, six)"]


def _unary(opcode):
    return lambda y, t, dims, alpha: [f"activated = {t}[{dims}] {opcode}({y})"]


def _select_negative(negative_part):
    """y where y > 0, else `negative_part` of y (ELU, leaky ReLU)."""
    def lines(y, t, dims, alpha):
        return [f"zero = {t}[] constant(0)",
                f"zeros = {t}[{dims}] broadcast(zero), dimensions={{}}",
                f"positive = pred[{dims}] compare({y}, zeros), direction=GT",
                *negative_part(y, t, dims, alpha),
                f"activated = {t}[{dims}] select(positive, {y}, negative)"]
    return lines


def _gelu_exact(y, t, dims, alpha):
    """y * (1 + erf(y / sqrt(2))) / 2."""
    return [f"half = {t}[] constant(0.5)", f"halves = {t}[{dims}] broadcast(half), dimensions={{}}",
            f"one = {t}[] constant(1)", f"ones = {t}[{dims}] broadcast(one), dimensions={{}}",
            f"rsqrt2 = {t}[] constant(0.70710678118654752)",
            f"rsqrt2s = {t}[{dims}] broadcast(rsqrt2), dimensions={{}}",
            f"gelu_x = {t}[{dims}] multiply({y}, rsqrt2s)", f"gelu_erf = {t}[{dims}] erf(gelu_x)",
            f"gelu_1p = {t}[{dims}] add(ones, gelu_erf)",
            f"gelu_half = {t}[{dims}] multiply({y}, halves)",
            f"activated = {t}[{dims}] multiply(gelu_half, gelu_1p)"]


ACTIVATIONS: dict[str, Callable] = {
    "kNone": None,
    "kRelu": _relu,
    "kRelu6": _relu6,
    "kSigmoid": _unary("logistic"),
    "kTanh": _unary("tanh"),
    "kElu": _select_negative(lambda y, t, dims, alpha: [
        f"negative = {t}[{dims}] exponential-minus-one({y})"]),
    "kLeakyRelu": _select_negative(lambda y, t, dims, alpha: [
        f"alpha = {t}[] constant({alpha!r})",
        f"alphas = {t}[{dims}] broadcast(alpha), dimensions={{}}",
        f"negative = {t}[{dims}] multiply({y}, alphas)"]),
    "kGeluExact": _gelu_exact,
}


def _cudnn_convolution(convolution: Callable[[HloInstruction], str], with_epilogue: bool):
    def lower(instr) -> LibraryCall:
        result = _result_shape(instr)
        workspace = instr.shape.tuple_shapes[1]
        for s in [result, workspace] + [o.shape for o in instr.operands]:
            if not s.is_static or not s.has_default_layout:
                raise HloUnsupportedError(f"{where(instr)}: {custom_call_target(instr)} with "
                                          f"a dynamic shape or a non-default layout ({s})")
        config = backend_config(instr).get("cudnn_conv_backend_config", {})
        t, dims = result.element.name, ",".join(map(str, result.dims))
        operands = instr.operands[:4 if with_epilogue else 2]
        params = [f"p{k} = {o.shape} parameter({k})" for k, o in enumerate(operands)]
        body = params + [f"conv = {t}[{dims}] convolution(p0, p1), {convolution(instr)}"]
        body += _epilogue(instr, config, t, dims, with_epilogue)
        fused = "\n  ".join(body[:-1] + ["ROOT " + body[-1]])
        text = (f"HloModule {instr.name}_lowering\n\n"
                f"ENTRY fused_{_c(instr.name)} {{\n  {fused}\n}}\n")
        return LibraryCall(_at_call_site(read_hlo(text), instr), [0, None])
    return lower


def _epilogue(instr, config, t, dims, with_epilogue) -> list[str]:
    """scale * conv (+ side_input_scale * side input) (+ bias), then the activation;
    the last line is the fused computation's root."""
    lines, y = [], "conv"
    scale = float(config.get("conv_result_scale", 1))
    if scale != 1:
        lines += [f"scale = {t}[] constant({scale!r})",
                  f"scales = {t}[{dims}] broadcast(scale), dimensions={{}}",
                  f"scaled = {t}[{dims}] multiply(conv, scales)"]
        y = "scaled"
    if with_epilogue and len(instr.operands) > 3:
        side_scale = float(config.get("side_input_scale", 0))
        if side_scale != 0:
            lines += [f"side_scale = {t}[] constant({side_scale!r})",
                      f"side_scales = {t}[{dims}] broadcast(side_scale), dimensions={{}}",
                      f"side = {t}[{dims}] multiply(p3, side_scales)",
                      f"with_side = {t}[{dims}] add({y}, side)"]
            y = "with_side"
    if with_epilogue and len(instr.operands) > 2:
        feature = _labels(instr)[2].index("f")
        lines += [f"biases = {t}[{dims}] broadcast(p2), dimensions={{{feature}}}",
                  f"with_bias = {t}[{dims}] add({y}, biases)"]
        y = "with_bias"
    mode = config.get("activation_mode", "kNone")
    if mode not in ACTIVATIONS:
        raise HloUnsupportedError(f"{where(instr)}: cuDNN activation_mode {mode} is not "
                                  f"supported (supported: {', '.join(ACTIVATIONS)})")
    activation = ACTIVATIONS[mode]
    if activation is not None:
        lines += activation(y, t, dims, float(config.get("leakyrelu_alpha", 0)))
        y = "activated"
    if y == "conv":
        return []            # the convolution is the root
    return lines


def _c(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)


def _at_call_site(module, instr) -> HloComputation:
    """The fused computation (the module's entry), every instruction placed at the
    custom-call's line."""
    for comp in module.computations.values():
        comp.line = instr.line
        for i in comp.instructions:
            i.line, i.column = instr.line, instr.column
    module.path = None
    module.entry.module = instr.computation.module if instr.computation else module
    return module.entry


lower_cudnn_forward = _cudnn_convolution(_forward_convolution, with_epilogue=True)
lower_cudnn_backward_input = _cudnn_convolution(_backward_input_convolution,
                                                with_epilogue=False)
lower_cudnn_backward_filter = _cudnn_convolution(_backward_filter_convolution,
                                                 with_epilogue=False)
