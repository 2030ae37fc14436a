"""Shape contracts: anonymous (`?`) and named symbolic dimensions, checked before launch.

A contract says which shape each tensor argument of a kernel has, with dimensions that
are static (`64`), anonymous (`"?"`: any positive size) or symbolic (`"M"`: any positive
size, the same wherever `M` appears):

    @triton_spirv.shapes({"a_ptr": ("M", "K"), "b_ptr": ("K", "N"), "c_ptr": ("M", "N")})
    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, ...): ...

Compile-time checks (when the contract is made): every name is an argument of the kernel,
dimensions are well formed. Run-time checks are *generated host code*: a small Python
function, written out per contract (`contract.host_source()`, printed by
`triton-spirv compile --shapes`), that runs before every launch and raises
`ShapeCheckError` before anything is launched or written:

- each tensor has the declared rank and static sizes;
- each symbolic dimension has one value across all arguments
  ("dimension 'K' is not consistent: a_ptr.shape[1] = 64, b_ptr.shape[0] = 32"),
  including integer arguments named like the symbol (`K` above);
- no dimension is zero (a zero-size tile would be empty);
- each tensor fits the kernel's index width (32-bit element offsets by default).

The same generator serves the HLO frontend (`triton_spirv/hlo/compile.py`): there the
contract also lists symbols given only as integer arguments (`free`), derived extents
checked once the dimensions are known (`extents`: output sizes must be nonzero and fit
the index width, launch grids must be nonzero and fit the launcher), and the generated
`check` returns the dimension values (`returns_dims`), from which the host computes
output shapes and launch grids.
"""
from __future__ import annotations

import keyword
import math
from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple, Union

DimSpec = Union[int, str]


class ShapeContractError(ValueError):
    """A contract that cannot be right whatever the arguments (found when it is made)."""


class ShapeCheckError(ValueError):
    """Arguments that break a kernel's shape contract (found before launch)."""


@dataclass(frozen=True)
class Dim:
    symbol: str = None   # "M" for a named dimension, None for "?" or a static size
    size: int = None     # the static size, when given

    def __str__(self):
        return self.symbol or (str(self.size) if self.size is not None else "?")


def parse_dim(spec: DimSpec, where: str) -> Dim:
    if isinstance(spec, bool):
        raise ShapeContractError(f"{where}: a dimension must be an int, '?' or a name, not {spec!r}")
    if isinstance(spec, int):
        if spec <= 0:
            raise ShapeContractError(f"{where}: a static dimension must be positive, got {spec}")
        return Dim(size=spec)
    if spec == "?":
        return Dim()
    if isinstance(spec, str) and spec.isidentifier() and not keyword.iskeyword(spec):
        return Dim(symbol=spec)
    raise ShapeContractError(f"{where}: '{spec}' is not a dimension (an int, '?' or a name)")


@dataclass(frozen=True)
class Extent:
    """A size derived from the dimensions, checked after them: `expr` is Python over
    `dims` (the dict of dimension values), `text` how messages show it."""
    label: str            # "output 'out0'", "launch grid of kernel 'k'"
    expr: str             # "dims['M'] * dims['N']"
    text: str             # "M*N"
    limit: int            # the value must be below this
    why: str              # what the limit is, for the message


GRID_LIMIT = 2 ** 31 - 1   # program ids are i32 (launcher.launch.MAX_GRID_DIM)


@dataclass
class ShapeContract:
    kernel: str
    shapes: Dict[str, Tuple[Dim, ...]]
    scalars: Tuple[str, ...] = ()   # integer arguments named like a symbol
    index_bits: int = 32
    free: Tuple[str, ...] = ()      # symbols given only as integer arguments
    extents: Tuple[Extent, ...] = ()
    returns_dims: bool = False      # `check` returns {symbol: value} instead of True

    @classmethod
    def make(cls, kernel: str, arg_names: Sequence[str], shapes: Dict[str, Sequence[DimSpec]],
             index_bits: int = 32) -> "ShapeContract":
        parsed = {}
        for arg, dims in shapes.items():
            if arg not in arg_names:
                raise ShapeContractError(f"kernel '{kernel}' has no argument '{arg}' "
                                         f"(arguments: {', '.join(arg_names)})")
            if isinstance(dims, (str, int)):
                dims = (dims,)
            parsed[arg] = tuple(parse_dim(d, f"kernel '{kernel}', shape of '{arg}'") for d in dims)
        symbols = {d.symbol for dims in parsed.values() for d in dims if d.symbol}
        scalars = tuple(name for name in arg_names if name in symbols and name not in parsed)
        return cls(kernel, parsed, scalars, index_bits)

    # -- generated host code --------------------------------------------------------------

    def host_source(self) -> str:
        """The Python source of this contract's check function `check(args)`."""
        lines = ["def check(args):",
                 f'    """Shape checks of kernel \'{self.kernel}\', generated from its contract."""']
        first_seen: Dict[str, str] = {}
        for arg, dims in self.shapes.items():
            lines += self._rank_check(arg, dims)
            for axis, dim in enumerate(dims):
                where = f"{arg}.shape[{axis}]"
                value = f"args[{arg!r}].shape[{axis}]"
                if dim.size is not None:
                    lines += _fail_if(f"{value} != {dim.size}",
                                      f"'{arg}' dimension {axis} must be {dim.size}, got {{{value}}}",
                                      self.kernel)
                    continue    # a static size: checked above (and not 0: parse_dim)
                lines += _fail_if(f"{value} == 0", f"dimension {axis} ('{dim}') of '{arg}' is 0; "
                                  "zero-size tiles are not allowed", self.kernel)
                if dim.symbol is None:
                    continue
                if dim.symbol in first_seen:
                    other, other_value = first_seen[dim.symbol]
                    lines += _fail_if(
                        f"{value} != {other_value}",
                        f"dimension '{dim.symbol}' is not consistent: {other} = {{{other_value}}}, "
                        f"{where} = {{{value}}}", self.kernel)
                else:
                    first_seen[dim.symbol] = (where, value)
            lines += self._index_width_check(arg)
        for name in self.scalars:
            where, value = first_seen[name]
            lines += _fail_if(f"args[{name!r}] != {value}",
                              f"dimension '{name}' is not consistent: argument {name} = "
                              f"{{args[{name!r}]}}, {where} = {{{value}}}", self.kernel)
        for name in self.free:
            if name in first_seen:
                continue
            value = f"args[{name!r}]"
            first_seen[name] = (f"argument {name}", value)
            lines += _fail_if(f"{value} <= 0", f"dimension '{name}' is {{{value}}}; it must be "
                              "positive (zero-size tiles are not allowed)", self.kernel)
        if not (self.returns_dims or self.extents):
            lines.append("    return True")
            return "\n".join(lines) + "\n"
        symbols = [name for name in first_seen]
        lines.append("    dims = {" + ", ".join(f"{n!r}: {first_seen[n][1]}" for n in symbols) + "}")
        for extent in self.extents:
            lines.append(f"    value = {extent.expr}")
            lines += _fail_if("value == 0", f"{extent.label} is 0 ({extent.text}); zero-size "
                              "tiles are not allowed", self.kernel)
            lines += _fail_if(f"value >= {extent.limit}", f"{extent.label} is {{value}} "
                              f"({extent.text}); {extent.why}", self.kernel)
        lines.append("    return dims" if self.returns_dims else "    return True")
        return "\n".join(lines) + "\n"

    def _rank_check(self, arg: str, dims) -> List[str]:
        shape_text = "(" + ", ".join(str(d) for d in dims) + ")"
        return [f"    if not hasattr(args[{arg!r}], 'shape'):",
                f"        raise ShapeCheckError(f\"kernel '{self.kernel}': argument '{arg}' must be a "
                f"tensor of shape {shape_text}, got {{type(args[{arg!r}]).__name__}}\")",
                *_fail_if(f"len(args[{arg!r}].shape) != {len(dims)}",
                          f"'{arg}' must have rank {len(dims)} {shape_text}, got shape "
                          f"{{tuple(args[{arg!r}].shape)}}", self.kernel)]

    def _index_width_check(self, arg: str) -> List[str]:
        limit = 2 ** (self.index_bits - 1)
        return _fail_if(f"numel(args[{arg!r}]) >= {limit}",
                        f"'{arg}' has {{numel(args[{arg!r}])}} elements; offsets would not fit the "
                        f"kernel's {self.index_bits}-bit index width", self.kernel)

    def compile(self):
        """The check function built from `host_source()`."""
        namespace = host_namespace()
        exec(compile(self.host_source(), f"<shape checks of {self.kernel}>", "exec"), namespace)
        return namespace["check"]


def numel(array) -> int:
    """Elements of a tensor or array (torch, numpy, or anything with `.shape`)."""
    return math.prod(int(d) for d in array.shape)


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


HOST_IMPORTS = "from triton_spirv.shapes import ShapeCheckError, cdiv, numel"


def host_namespace() -> dict:
    """The names generated host code uses (`HOST_IMPORTS` imports the same)."""
    return {"ShapeCheckError": ShapeCheckError, "cdiv": cdiv, "numel": numel}


def _fail_if(condition: str, message: str, kernel: str) -> List[str]:
    return [f"    if {condition}:",
            f"        raise ShapeCheckError(f\"kernel '{kernel}': {message}\")"]


def attach(kernel, shapes: Dict[str, Sequence[DimSpec]], index_bits: int = 32):
    """Attaches a shape contract to a @triton.jit kernel; returns the kernel.

    The checks run before every launch (a pre-run hook), so a failed check raises before
    anything is compiled or launched and no output is written.
    """
    contract = ShapeContract.make(kernel.__name__, list(kernel.arg_names), shapes, index_bits)
    check = contract.compile()
    names = list(kernel.arg_names)

    def hook(*args, **kwargs):
        bound = dict(zip(names, args))
        bound.update({k: v for k, v in kwargs.items() if k in names})
        check(bound)

    kernel.add_pre_run_hook(hook)
    kernel.shape_contract = contract
    return kernel


def shapes(spec: Dict[str, Sequence[DimSpec]], index_bits: int = 32):
    """Decorator form of `attach`, placed above `@triton.jit`."""
    return lambda kernel: attach(kernel, spec, index_bits)
