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
"""

import math
import types

import numpy as np


def _numpy(fn):
    def apply(x, *rest):
        import triton.language as tl
        from triton.runtime.interpreter import TensorHandle
        data = x.handle.data
        result = np.asarray(fn(data.astype(np.float64), *rest)).astype(data.dtype)
        return tl.tensor(TensorHandle(result, x.dtype.scalar), x.type)
    return apply


libdevice = types.SimpleNamespace(
    tanh=_numpy(np.tanh), erf=_numpy(np.vectorize(math.erf)), atan=_numpy(np.arctan),
    log1p=_numpy(np.log1p), expm1=_numpy(np.expm1), rsqrt=_numpy(lambda x: 1 / np.sqrt(x)),
    pow=_numpy(np.power), cbrt=_numpy(np.cbrt), asinh=_numpy(np.arcsinh))

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
