"""cuBLAS library calls of XLA:GPU (`__cublas$gemm`, `__cublas$lt$matmul`) as ordinary
HLO: a `dot` with the call's dimension numbers, then its epilogue as elementwise work
in the same fused computation, so they run through this frontend's dot path.

What a call computes (XLA's GemmBackendConfig, in `backend_config`):

    D = activation(alpha * dot(A, B) + beta * C + bias)

with C the third operand when beta != 0, bias the next operand for the BIAS epilogues
(one value per output column, broadcast along the last dimension), and the activation
of the epilogue: RELU (max(x, 0)) or GELU (cuBLAS's tanh approximation). The *_AUX
epilogues also return the value before the activation. The result is a tuple
`(D, [aux,] s8[workspace])`; the workspace is scratch for cuBLAS and is left alone.
`precision_config` needs nothing here: products and sums are computed in f32 (or the
output's wider type), at least as precise as any precision it asks for.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .computation_builder import ComputationBuilder, LibraryCall, array_shape
from .errors import HloUnsupportedError, where
from .reader import HloInstruction, backend_config
from .shapes import Shape

# epilogue -> (adds a bias, activation, returns the pre-activation value too)
EPILOGUES = {
    "DEFAULT": (False, None, False),
    "BIAS": (True, None, False),
    "RELU": (False, "relu", False),
    "BIAS_RELU": (True, "relu", False),
    "GELU": (False, "gelu", False),
    "BIAS_GELU": (True, "gelu", False),
    "GELU_AUX": (False, "gelu", True),
    "BIAS_GELU_AUX": (True, "gelu", True),
}
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


@dataclass
class GemmConfig:
    alpha: float
    beta: float
    epilogue: str
    lhs_batch: list
    rhs_batch: list
    lhs_contracting: list
    rhs_contracting: list


def gemm_config(instr: HloInstruction) -> GemmConfig:
    config = backend_config(instr).get("gemm_backend_config")
    if config is None:
        raise HloUnsupportedError(f"{where(instr)}: a cuBLAS call needs gemm_backend_config "
                                  f"in its backend_config")
    if float(config.get("alpha_imag", 0)) != 0:
        raise HloUnsupportedError(f"{where(instr)}: complex alpha (alpha_imag="
                                  f"{config['alpha_imag']}) is not supported")
    epilogue = config.get("epilogue", "DEFAULT")
    if epilogue not in EPILOGUES:
        raise HloUnsupportedError(f"{where(instr)}: cuBLAS epilogue {epilogue} is not "
                                  f"supported (supported: {', '.join(EPILOGUES)})")
    dims = config.get("dot_dimension_numbers", {})

    def ints(key):
        return [int(v) for v in dims.get(key, [])]
    return GemmConfig(float(config.get("alpha_real", 1)), float(config.get("beta", 0)),
                      epilogue, ints("lhs_batch_dimensions"), ints("rhs_batch_dimensions"),
                      ints("lhs_contracting_dimensions"), ints("rhs_contracting_dimensions"))


def lower_cublas_gemm(instr: HloInstruction) -> LibraryCall:
    config = gemm_config(instr)
    has_bias, activation, has_aux = EPILOGUES[config.epilogue]
    leaves = list(instr.shape.tuple_shapes) if instr.shape.is_tuple else [instr.shape]
    outputs = 2 if has_aux else 1
    if len(leaves) < outputs or any(s.is_tuple for s in leaves):
        raise HloUnsupportedError(f"{where(instr)}: result {instr.shape} does not fit epilogue "
                                  f"{config.epilogue} ({outputs} array(s) then the workspace)")
    expected = 2 + (config.beta != 0) + has_bias
    if len(instr.operands) != expected:
        raise HloUnsupportedError(
            f"{where(instr)}: {len(instr.operands)} operands, expected {expected} for "
            f"beta={config.beta:g} and epilogue {config.epilogue} (A, B"
            f"{', C' if config.beta != 0 else ''}{', bias' if has_bias else ''})")
    out_shape = array_shape(leaves[0])
    b = ComputationBuilder(f"{instr.name}_gemm", instr)
    params = [b.parameter(o.shape, o.name) for o in instr.operands]
    x = b.op("dot", out_shape, params[:2],
             lhs_batch_dims=_braces(config.lhs_batch), rhs_batch_dims=_braces(config.rhs_batch),
             lhs_contracting_dims=_braces(config.lhs_contracting),
             rhs_contracting_dims=_braces(config.rhs_contracting))
    if config.alpha != 1:
        x = b.elementwise("multiply", x, b.splat(_number(config.alpha), out_shape))
    rest = params[2:]
    if config.beta != 0:
        c = _as(b, rest.pop(0), out_shape)
        if config.beta != 1:
            c = b.elementwise("multiply", c, b.splat(_number(config.beta), out_shape))
        x = b.elementwise("add", x, c)
    if has_bias:
        x = b.elementwise("add", x, _bias(b, rest.pop(0), out_shape, instr))
    pre_activation = x
    if activation == "relu":
        x = b.elementwise("maximum", x, b.splat(0.0, out_shape))
    elif activation == "gelu":
        x = _gelu_tanh(b, x)
    computation = b.finish(*([x, pre_activation] if has_aux else [x]))
    return LibraryCall(computation, list(range(outputs)) + [None] * (len(leaves) - outputs))


def _braces(values) -> str:
    return "{" + ",".join(str(v) for v in values) + "}"


def _number(value: float):
    return int(value) if float(value).is_integer() else value


def _as(b: ComputationBuilder, value, shape):
    """`value` converted to the element type of `shape` (C may be narrower)."""
    if value.shape.element == shape.element:
        return value
    return b.op("convert", shape, [value])


def _bias(b: ComputationBuilder, bias, out_shape, instr):
    """The bias as an output-shaped value: cuBLASLt adds one value per output column."""
    if tuple(bias.shape.dims) == tuple(out_shape.dims):
        return _as(b, bias, out_shape)
    if bias.shape.rank != 1 or bias.shape.dims[0] != out_shape.dims[-1]:
        raise HloUnsupportedError(f"{where(instr)}: bias {bias.shape} is neither the output "
                                  f"shape {out_shape} nor one value per output column")
    bias = _as(b, bias, Shape(out_shape.element, bias.shape.dims))
    return b.op("broadcast", out_shape, [bias], dimensions=f"{{{out_shape.rank - 1}}}")


def _gelu_tanh(b: ComputationBuilder, x):
    """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), cuBLASLt's GELU."""
    shape = x.shape
    cube = b.elementwise("multiply", b.elementwise("multiply", x, x), x)
    inner = b.elementwise("add", x, b.elementwise("multiply", cube, b.splat(0.044715, shape)))
    t = b.elementwise("tanh", b.elementwise("multiply", inner, b.splat(_SQRT_2_OVER_PI, shape)))
    half_x = b.elementwise("multiply", x, b.splat(0.5, shape))
    return b.elementwise("multiply", half_x, b.elementwise("add", t, b.splat(1, shape)))
