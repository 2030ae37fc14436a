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

from .computation_builder import ComputationBuilder, LibraryCall, array_shape
from .errors import HloUnsupportedError, where
from .reader import HloInstruction, backend_config, custom_call_target
from .shapes import ELEMENT_TYPES, Shape


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


def _forward_convolution(instr) -> dict:
    """The call's own convolution attributes."""
    attrs = {"window": instr.attrs["window"]} if "window" in instr.attrs else {}
    attrs["dim_labels"] = instr.attr("dim_labels")
    groups = instr.int_attr("feature_group_count", 1)
    if groups != 1:
        attrs["feature_group_count"] = str(groups)
    return attrs


def _backward_input_convolution(instr) -> dict:
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
    return {"window": window, "dim_labels": f"{out}_{_swap(rhs, 'i', 'o')}->{lhs}"}


def _backward_filter_convolution(instr) -> dict:
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
    attrs = {"window": window, "dim_labels": labels}
    if groups > 1:
        attrs["batch_group_count"] = str(groups)
    return attrs


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


# -- the epilogue -----------------------------------------------------------------------

# Activations of cudnn_conv_backend_config: (builder, y, leakyrelu_alpha) -> activated y.
def _relu(b: ComputationBuilder, y, alpha):
    return b.elementwise("maximum", y, b.splat(0, y.shape))


def _relu6(b: ComputationBuilder, y, alpha):
    return b.op("clamp", y.shape, [b.constant(y.shape.element, 0), y,
                                   b.constant(y.shape.element, 6)])


def _unary(opcode):
    return lambda b, y, alpha: b.elementwise(opcode, y)


def _select_negative(negative_part):
    """y where y > 0, else `negative_part` of y (ELU, leaky ReLU)."""
    def activated(b: ComputationBuilder, y, alpha):
        positive = b.op("compare", Shape(ELEMENT_TYPES["pred"], y.shape.dims),
                        [y, b.splat(0, y.shape)], direction="GT")
        return b.op("select", y.shape, [positive, y, negative_part(b, y, alpha)])
    return activated


def _gelu_exact(b: ComputationBuilder, y, alpha):
    """y * (1 + erf(y / sqrt(2))) / 2."""
    erf = b.elementwise("erf", b.elementwise("multiply", y,
                                             b.splat(0.7071067811865476, y.shape)))
    half_y = b.elementwise("multiply", y, b.splat(0.5, y.shape))
    return b.elementwise("multiply", half_y,
                         b.elementwise("add", b.splat(1, y.shape), erf))


ACTIVATIONS: dict[str, Callable | None] = {
    "kNone": None,
    "kRelu": _relu,
    "kRelu6": _relu6,
    "kSigmoid": _unary("logistic"),
    "kTanh": _unary("tanh"),
    "kElu": _select_negative(lambda b, y, alpha: b.elementwise("exponential-minus-one", y)),
    "kLeakyRelu": _select_negative(lambda b, y, alpha: b.elementwise(
        "multiply", y, b.splat(alpha, y.shape))),
    "kGeluExact": _gelu_exact,
}


def _cudnn_convolution(convolution: Callable[[HloInstruction], dict], with_epilogue: bool):
    def lower(instr) -> LibraryCall:
        result = _result_shape(instr)
        for s in [result, instr.shape.tuple_shapes[1]] + [o.shape for o in instr.operands]:
            if not s.is_static or not s.has_default_layout:
                raise HloUnsupportedError(f"{where(instr)}: {custom_call_target(instr)} with "
                                          f"a dynamic shape or a non-default layout ({s})")
        config = backend_config(instr).get("cudnn_conv_backend_config", {})
        b = ComputationBuilder(f"{instr.name}_convolution", instr)
        operands = instr.operands[:4 if with_epilogue else 2]
        params = [b.parameter(o.shape, o.name) for o in operands]
        conv = b.op("convolution", array_shape(result), params[:2], **convolution(instr))
        y = _epilogue(b, instr, config, conv, params[2:])
        return LibraryCall(b.finish(y), [0, None])
    return lower


def _epilogue(b: ComputationBuilder, instr, config, y, extra):
    """scale * conv (+ side_input_scale * side input) (+ bias), then the activation.
    `extra`: the parameters after input and kernel (bias, side input)."""
    scale = float(config.get("conv_result_scale", 1))
    if scale != 1:
        y = b.elementwise("multiply", y, b.splat(scale, y.shape))
    if len(extra) > 1:
        side_scale = float(config.get("side_input_scale", 0))
        if side_scale != 0:
            side = b.elementwise("multiply", extra[1], b.splat(side_scale, y.shape))
            y = b.elementwise("add", y, side)
    if extra:
        feature = _labels(instr)[2].index("f")
        biases = b.op("broadcast", y.shape, [extra[0]], dimensions=f"{{{feature}}}")
        y = b.elementwise("add", y, biases)
    mode = config.get("activation_mode", "kNone")
    if mode not in ACTIVATIONS:
        raise HloUnsupportedError(f"{where(instr)}: cuDNN activation_mode {mode} is not "
                                  f"supported (supported: {', '.join(ACTIVATIONS)})")
    activation = ACTIVATIONS[mode]
    return y if activation is None else activation(b, y, float(config.get("leakyrelu_alpha", 0)))


lower_cudnn_forward = _cudnn_convolution(_forward_convolution, with_epilogue=True)
lower_cudnn_backward_input = _cudnn_convolution(_backward_input_convolution,
                                                with_epilogue=False)
lower_cudnn_backward_filter = _cudnn_convolution(_backward_filter_convolution,
                                                 with_epilogue=False)
