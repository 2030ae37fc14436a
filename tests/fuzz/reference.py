"""What the reference (Triton 3.9's interpreter) needs to be one.

- libdevice: the interpreter has none (its functions are stubs that return None), so
  the reference computes them with numpy in float64, rounded to the argument's type.
- Float conversions to bf16 and fp8: the interpreter's `_convert_float` rounds by
  adding the cut-off bit to the mantissa without carrying into the exponent (0.4924
  becomes 0.25 in fp8e4nv instead of 0.5), rounds ties away from zero, truncates
  fp32 -> bf16 (`.to(tl.bfloat16)` rounds to nearest even in compiled Triton), and does
  not saturate. `patch_interpreter` replaces it with torch's conversions (round to
  nearest even) after saturating finite values to the fp8 format's largest finite
  value (Triton's fp8 downcasts saturate, tests/test_lang_fp8.py). Round-toward-zero
  conversions keep the interpreter's own code.
- bf16 arithmetic: the interpreter adds and compares bf16 bit patterns; the generator
  treats bf16 as a storage type (loaded and upcast, rounded to and back, stored) instead.

And what the comparison needs beyond one reference (`perturb_rounding`): how far each
output moves when every float operation errs as much as OpenCL allows it to, its
sensitivity to rounding (run.py, `rounding_spread`). While a perturbation is on, the
result of every rounded float operation (arithmetic, fma, math functions, libdevice,
each step of a sum or a scan) moves by its error bound in ulps of its type (`ULPS`: 1
for correctly rounded operations, which differ from a computation in wider types or in
another order by half an ulp each, else the OpenCL C specification's bound for single
precision; sin and cos of arguments beyond PERIODIC_ULP_LIMIT: an end of [-1, 1]),
upward, downward (Kahan's test of rerunning in other rounding modes) or,
per element, either way at random (Monte Carlo arithmetic); dots move by up to an ulp of
the sum of their products' magnitudes. Exact operations (min, max, abs, negation,
where, comparisons, casts, integer arithmetic) are left alone, so the data-dependent
branches of generated programs, which take only exact values, never flip.
"""

import math
import types

import numpy as np


# error bounds in ulps: OpenCL C's for single precision (its specification, "Relative
# error as ULPs"), at least 1 (a correctly rounded result may differ by half an ulp from
# one computed in wider types, as generated kernels compute fp16)
ULPS = {"div": 3, "sqrt": 3, "rsqrt": 2, "exp": 3, "log": 3, "sin_cos": 4, "erf": 16, "tanh": 5, "atan": 5,
        "log1p": 2, "expm1": 3, "pow": 16, "cbrt": 2, "asinh": 4}
# sin and cos of arguments whose ulp is at least this (beyond 2^20 in fp32, where CUDA's fast
# math stops promising anything) may be anything in [-1, 1]
PERIODIC_ULP_LIMIT = 2.0**-3
# the unit in the last place of 1.0 of each float type the interpreter computes in
_ULP_AT_ONE = {np.dtype(np.float16): 2.0**-10, np.dtype(np.float32): 2.0**-23, np.dtype(np.float64): 2.0**-52}
_perturbation = None  # while rounding is perturbed: (direction: "up", "down" or "random", its random numbers)


def _numpy(fn, ulps):
    def apply(x, *rest):
        import triton.language as tl
        from triton.runtime.interpreter import TensorHandle
        data = x.handle.data
        result = _perturbed(np.asarray(fn(data.astype(np.float64), *rest)).astype(data.dtype), ulps)
        return tl.tensor(TensorHandle(result, x.dtype.scalar), x.type)
    return apply


libdevice = types.SimpleNamespace(
    tanh=_numpy(np.tanh, ULPS["tanh"]), erf=_numpy(np.vectorize(math.erf), ULPS["erf"]),
    atan=_numpy(np.arctan, ULPS["atan"]), log1p=_numpy(np.log1p, ULPS["log1p"]),
    expm1=_numpy(np.expm1, ULPS["expm1"]), rsqrt=_numpy(lambda x: 1 / np.sqrt(x), ULPS["rsqrt"]),
    pow=_numpy(np.power, ULPS["pow"]), cbrt=_numpy(np.cbrt, ULPS["cbrt"]), asinh=_numpy(np.arcsinh, ULPS["asinh"]))

_patched = False


def patch_interpreter():
    global _patched
    if _patched:
        return
    import torch
    import triton.language as tl
    from triton._C.libtriton import ir
    from triton.runtime import interpreter

    original = interpreter._convert_float
    types_ = {tl.bfloat16: torch.bfloat16, tl.float16: torch.float16, tl.float32: torch.float32,
              tl.float64: torch.float64, tl.float8e4nv: torch.float8_e4m3fn, tl.float8e5: torch.float8_e5m2}
    largest = {tl.float8e4nv: 448.0, tl.float8e5: 57344.0}
    # bit patterns: numpy and torch integer types of each width (torch has no uint16)
    signed = {8: (np.uint8, torch.uint8), 16: (np.int16, torch.int16), 32: (np.int32, torch.int32),
              64: (np.int64, torch.int64)}
    unsigned = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}

    def convert(input, input_dtype, output_dtype, rounding_mode):
        if rounding_mode == ir.ROUNDING_MODE.RTZ or input_dtype not in types_ or output_dtype not in types_:
            return original(input, input_dtype, output_dtype, rounding_mode)
        raw = np.ascontiguousarray(input).view(signed[input_dtype.primitive_bitwidth][0])
        value = torch.from_numpy(raw.copy()).view(types_[input_dtype])
        if output_dtype in largest:
            limit = largest[output_dtype]
            value = torch.where(torch.isfinite(value), value.double().clamp(-limit, limit), value.double())
        out = value.to(types_[output_dtype])
        _, out_torch = signed[output_dtype.primitive_bitwidth]
        return out.view(out_torch).numpy().view(unsigned[output_dtype.primitive_bitwidth]).reshape(np.shape(input))

    interpreter._convert_float = convert
    _patched = True


# ---------------------------------------------------------------------- perturbed rounding

def perturb_rounding(how):
    """Perturbs the rounding of the interpreter's float operations from now on (see the
    module's docstring): `how` is "up", "down", or an integer, the seed of random
    directions; None stops."""
    global _perturbation
    _install_perturbation()
    if how is None:
        _perturbation = None
    elif how in ("up", "down"):
        _perturbation = (how, None)
    elif isinstance(how, int):
        _perturbation = ("random", np.random.default_rng(how))
    else:
        raise ValueError(f"perturb_rounding: {how!r} is not 'up', 'down', an integer seed or None")


def _perturbed(data, ulps=1, magnitude=None):
    """`data` (a float array) with each element moved by `ulps` of its ulps (without
    `magnitude`) or by up to `ulps` ulps of `magnitude` (float64) in the perturbation's
    direction, rounded back to its type; `data` itself while no perturbation is on or
    for non-float data."""
    data = np.asarray(data)
    if _perturbation is None or data.dtype not in _ULP_AT_ONE:
        return data
    direction, rng = _perturbation
    wide = data.astype(np.float64)
    if direction == "random":
        sign = np.where(rng.random(data.shape) < 0.5, -1.0, 1.0)
    else:
        sign = 1.0 if direction == "up" else -1.0
    if magnitude is None:
        # an ulp of each element: the distance to its neighbour away from zero
        step = np.nextafter(np.abs(data), np.asarray(np.inf, data.dtype)).astype(np.float64) - np.abs(wide)
    else:
        step = _ULP_AT_ONE[data.dtype] * magnitude * (rng.random(data.shape) if rng is not None else 1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        moved = (wide + sign * ulps * step).astype(data.dtype)
    return np.where(np.isfinite(data), moved, data)


def _periodic_bounds(argument, result):
    """`result` of sin or cos, but an end of [-1, 1] (in the perturbation's direction) where
    an ulp of `argument` is at least PERIODIC_ULP_LIMIT: a few ulps of error in such an
    argument, which the operations before it may make, can move the result anywhere."""
    direction, rng = _perturbation
    ulp = np.nextafter(np.abs(argument), np.asarray(np.inf, argument.dtype)) - np.abs(argument)
    if direction == "random":
        end = np.where(rng.random(result.shape) < 0.5, -1.0, 1.0)
    else:
        end = 1.0 if direction == "up" else -1.0
    return np.where(ulp >= PERIODIC_ULP_LIMIT, np.asarray(end, result.dtype), result)


def _perturbed_accumulation(data, axis):
    """The partial sums of `data` along `axis`, each step rounded to its type and perturbed."""
    data = np.moveaxis(data, axis, 0)
    sums = np.empty_like(data)
    total = data[0]
    sums[0] = total
    for i in range(1, data.shape[0]):
        total = _perturbed(np.add(total, data[i]))
        sums[i] = total
    return np.moveaxis(sums, 0, axis)


# builder operations whose results are rounded (the others are exact) -> their error bounds in ulps
_ROUNDED = {"create_fadd": 1, "create_fsub": 1, "create_fmul": 1, "create_fma": 1, "create_fdiv": ULPS["div"],
            "create_precise_divf": ULPS["div"], "create_approx_divf": ULPS["div"], "create_exp": ULPS["exp"],
            "create_exp2": ULPS["exp"], "create_log": ULPS["log"], "create_log2": ULPS["log"],
            "create_sqrt": ULPS["sqrt"], "create_precise_sqrt": ULPS["sqrt"], "create_rsqrt": ULPS["rsqrt"],
            "create_erf": ULPS["erf"]}
_PERIODIC = ("create_cos", "create_sin")
_installed = False


def _install_perturbation():
    """Wraps the interpreter's rounded operations once; they perturb only while
    `_perturbation` is set."""
    global _installed
    if _installed:
        return
    from triton.runtime.interpreter import InterpreterBuilder, ReduceOps, ScanOps, TensorHandle

    def rounded(op, ulps):
        def apply(self, *args):
            out = op(self, *args)
            return TensorHandle(_perturbed(out.data, ulps), out.dtype) if _perturbation is not None else out
        return apply

    def periodic(op):
        def apply(self, arg):
            if _perturbation is None:
                return op(self, arg)
            out = op(self, TensorHandle(_perturbed(arg.data), arg.dtype))  # reduced with an ulp of error
            return TensorHandle(_periodic_bounds(arg.data, _perturbed(out.data, ULPS["sin_cos"])), out.dtype)
        return apply

    def dot(op):
        def apply(self, a, b, d, *rest):
            out = op(self, a, b, d, *rest)
            if _perturbation is None or not all(x.data.dtype in _ULP_AT_ONE for x in (a, b, out)):
                return out
            # the rounding errors of a dot scale with the sum of its products' magnitudes
            magnitude = np.abs(a.data.astype(np.float64)) @ np.abs(b.data.astype(np.float64)) + np.abs(d.data)
            return TensorHandle(_perturbed(out.data, 1, magnitude), out.dtype)
        return apply

    for name, ulps in _ROUNDED.items():
        setattr(InterpreterBuilder, name, rounded(getattr(InterpreterBuilder, name), ulps))
    for name in _PERIODIC:
        setattr(InterpreterBuilder, name, periodic(getattr(InterpreterBuilder, name)))
    InterpreterBuilder.create_dot = dot(InterpreterBuilder.create_dot)

    original_cumsum, original_sum = ScanOps.cumsum, ReduceOps.sum

    def cumsum(self, input):
        data = input.handle.data
        if _perturbation is None or data.dtype not in _ULP_AT_ONE:
            return original_cumsum(self, input)
        return [self.to_tensor(_perturbed_accumulation(data, self.axis), dtype=input.dtype)]

    def sum_(self, input):
        data = input.handle.data
        if _perturbation is None or data.dtype not in _ULP_AT_ONE:
            return original_sum(self, input)
        flat = data.reshape(-1) if self.axis is None else data
        axis = 0 if self.axis is None else self.axis
        total = np.take(_perturbed_accumulation(flat, axis), -1, axis=axis)  # the shape np.sum gives
        if self.keep_dims:
            total = np.reshape(total, (1,) * data.ndim) if self.axis is None else np.expand_dims(total, axis)
        return self.to_tensor(total, input.dtype)

    ScanOps.cumsum, ReduceOps.sum = cumsum, sum_
    _installed = True
