"""libdevice functions that are one OpenCL C builtin, or one short exact helper of the
emitter (emitter_opencl/helpers.py), as `func.call`s.

The call gets the attribute `opencl.call` (the C function: a builtin such as `cospi`,
or a helper family such as `fdiv_rz`, which the emitter completes with the C type of
the first operand: `fdiv_rz_float`) and calls a private declaration of its own, so that
the Linalg and memref stages treat it as an opaque scalar function; the emitter prints
the call.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import func

# libdevice base name (no `__nv_`, no trailing `f` of float variants) -> C function.
_BUILTINS = {
    "cospi": "cospi", "sinpi": "sinpi", "hypot": "hypot", "ilogb": "ilogb",
    "ldexp": "ldexp", "scalbn": "ldexp", "logb": "logb", "nextafter": "nextafter",
    "remainder": "remainder", "lgamma": "lgamma", "tgamma": "tgamma",
    "hadd": "hadd", "rhadd": "rhadd", "mulhi": "mul_hi", "mul64hi": "mul_hi",
}
# Conversions with a rounding mode: OpenCL's convert_T_rtX (saturating for float ->
# integer, as CUDA's cvt is: out of range gives the limit, NaN gives 0).
_ROUNDING = {"rn": "rte", "rz": "rtz", "rd": "rtn", "ru": "rtp"}
_INTEGER_TYPES = {"int": "int_sat", "uint": "uint_sat", "ll": "long_sat", "ull": "ulong_sat"}
for _mode, _rtx in _ROUNDING.items():
    for _src in ("float", "double"):
        for _dst, _c in _INTEGER_TYPES.items():
            _BUILTINS[f"{_src}2{_dst}_{_mode}"] = f"convert_{_c}_{_rtx}"
    _BUILTINS[f"double2float_{_mode}"] = f"convert_float_{_rtx}"
    for _src in ("int", "ll"):
        for _dst in ("float", "double"):
            _BUILTINS[f"{_src}2{_dst}_{_mode}"] = f"convert_{_dst}_{_rtx}"

# Helper families (emitter_opencl/libdevice.py), completed with the C type of the first
# operand by the emitter. (The _rn arithmetic is plain arith, see elementwise.py.)
_HELPERS = {}
for _mode in _ROUNDING:
    for _src in ("uint", "ull"):   # unsigned sources need an unsigned C parameter
        for _dst in ("float", "double"):
            _HELPERS[f"{_src}2{_dst}_{_mode}"] = f"{_src}2{_dst}_{_mode}"
for _mode in ("rz", "rd", "ru"):
    for _op in ("add", "sub", "mul", "div", "rcp", "sqrt"):
        for _prefix in ("f", "d"):
            _HELPERS[f"{_prefix}{_op}_{_mode}"] = f"{_op}_{_mode}"
    _HELPERS[f"fmaf_{_mode}"] = _HELPERS[f"fma_{_mode}"] = f"fma_{_mode}"
for _name in ("llrint", "llround", "brev", "ffs", "sad", "usad", "uhadd", "urhadd", "mul24",
              "umul24", "byte_perm", "double2hiint", "double2loint", "hiloint2double",
              "normcdf", "rhypot", "norm3d", "norm4d", "rnorm3d", "rnorm4d", "rcbrt"):
    _HELPERS[_name] = _name
_HELPERS.update(brevll="brev", ffsll="ffs")   # the long versions: brev_long, ffs_long


def opencl_function(name: str):
    """(C function, is a helper family) for a libdevice base name, or None."""
    if name in _BUILTINS:
        return _BUILTINS[name], False
    if name in _HELPERS:
        return _HELPERS[name], True
    return None


def call(conv, cname: str, helper: bool, args, result_type: ir.Type) -> ir.Value:
    """`func.call` of a private declaration standing for `cname`."""
    types = [a.type for a in args]
    symbol = "opencl_" + cname + "_" + "_".join(str(t) for t in types + [result_type])
    module = conv.out_module
    if not any(ir.StringAttr(f.attributes["sym_name"]).value == symbol
               for f in module.body.operations):
        with ir.InsertionPoint.at_block_begin(module.body):
            func.FuncOp(symbol, ir.FunctionType.get(types, [result_type]),
                               visibility="private")
    result = func.CallOp([result_type], ir.FlatSymbolRefAttr.get(symbol), list(args)).result
    result.owner.attributes["opencl.call"] = ir.StringAttr.get(cname)
    if helper:
        result.owner.attributes["opencl.helper"] = ir.UnitAttr.get()
    return result
