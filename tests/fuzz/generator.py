"""Random valid Triton programs, built as a list of typed statements.

A program is one `@triton.jit` kernel over a 2-D grid of programs, each owning a
BM x BN block of an M x N problem (M, N need not be multiples of the blocks: masks
cover the tails), plus the host code that makes its inputs (seeded), launches it and
returns its outputs. Every statement defines at most one value whose kind (its shape:
a BM x BN tile, a row vector over the block's BM rows, a column vector over its BN
columns, a scalar, or a dot operand BM x BK / BK x BN) and dtype are tracked, so each
statement is built only from values it can legally combine: a generated program is
valid by construction, and stays valid when the reducer deletes statements (a deleted
value is replaced by `tl.full` of its kind and dtype).

Values also carry `exact`: whether every implementation must compute them bit for
bit (loaded data, integer arithmetic on exact values, min/max/neg/abs/where of exact
values). Only exact values feed discontinuous operations (comparisons, float-to-int
casts, floor, argmax, data-dependent masks and returns), so that rounding differences
allowed by the tolerances never flip a branch.
"""

import random
from dataclasses import dataclass, field

FLOATS = ["fp32", "fp16"]
# Storage types: loaded and upcast, or rounded to and back, or stored after a downcast.
# bf16 is one because Triton's interpreter does bf16 arithmetic on the bit patterns.
STORAGE = ["bf16", "fp8e4nv", "fp8e5"]
INTS = ["int8", "int16", "int32", "int64", "uint8"]
FP8 = ["fp8e4nv", "fp8e5"]
TL_DTYPE = {"fp32": "tl.float32", "fp16": "tl.float16", "bf16": "tl.bfloat16", "fp64": "tl.float64",
            "int8": "tl.int8", "int16": "tl.int16", "int32": "tl.int32", "int64": "tl.int64",
            "uint8": "tl.uint8", "uint32": "tl.uint32", "bool": "tl.int1",
            "fp8e4nv": "tl.float8e4nv", "fp8e5": "tl.float8e5"}
TORCH_DTYPE = {"fp32": "torch.float32", "fp16": "torch.float16", "bf16": "torch.bfloat16",
               "fp64": "torch.float64", "int8": "torch.int8", "int16": "torch.int16",
               "int32": "torch.int32", "int64": "torch.int64", "uint8": "torch.uint8",
               "fp8e4nv": "torch.float8_e4m3fn", "fp8e5": "torch.float8_e5m2"}
SHAPE = {"2d": "(BM, BN)", "m": "(BM,)", "n": "(BN,)", "s": "()", "mk": "(BM, BK)", "kn": "(BK, BN)"}


def is_float(dtype):
    return dtype in FLOATS or dtype == "fp64"


def is_int(dtype):
    return dtype in INTS or dtype in ("uint32",)


@dataclass
class Value:
    name: str
    kind: str
    dtype: str
    exact: bool


@dataclass
class Stmt:
    """One statement: `template` is Python source whose {0}, {1}, ... are the values it
    uses (Program.without writes `tl.full` over the places of deleted ones)."""
    template: str
    uses: list
    defines: Value = None
    features: tuple = ()
    outputs: tuple = ()  # names of outputs it writes

    def render(self):
        return self.template.format(*[u.name for u in self.uses])


@dataclass
class Input:
    name: str
    dtype: str
    role: str    # "mn" (M x N), "mk" (M x K), "kn" (K x N), "tn" (T x N)
    layout: str  # "contiguous", "transposed", "strided"


@dataclass
class Output:
    name: str
    dtype: str
    kind: str    # "2d" (M x N), "m" (M x grid_n), "n" (grid_m x N), "s" (grid_m x grid_n)
    atomic: bool = False


@dataclass
class Program:
    seed: int
    sizes: dict
    inputs: list
    outputs: list
    stmts: list
    scalars: dict = field(default_factory=dict)

    def features(self):
        found = set()
        for s in self.stmts:
            found.update(s.features)
        return found

    # ------------------------------------------------------------------ source
    def kernel_source(self):
        params = [i.name for i in self.inputs] + [o.name for o in self.outputs]
        params += [f"s{i.name}_{d}" for i in self.inputs for d in (0, 1)]
        params += ["M", "N", "K"] + list(self.scalars)
        params += ["BM: tl.constexpr", "BN: tl.constexpr", "BK: tl.constexpr", "T: tl.constexpr"]
        lines = ["@triton.jit", f"def kernel({', '.join(params)}):",
                 "    pid_m = tl.program_id(0)", "    pid_n = tl.program_id(1)",
                 "    gn = tl.num_programs(1)",
                 "    rm = pid_m * BM + tl.arange(0, BM)", "    rn = pid_n * BN + tl.arange(0, BN)",
                 "    rk = tl.arange(0, BK)", "    mm = rm < M", "    mn = rn < N"]
        for s in self.stmts:
            lines.extend("    " + line for line in s.render().split("\n"))
        return "\n".join(lines) + "\n"

    def source(self):
        """The program as a module: the kernel, its arguments' description and run(**launch_options)."""
        s = self.sizes
        inputs = ",\n    ".join(f"({i.name!r}, {TORCH_DTYPE[i.dtype]}, {i.role!r}, {i.layout!r})"
                               for i in self.inputs)
        outputs = ",\n    ".join(f"({o.name!r}, {TORCH_DTYPE.get(o.dtype, 'torch.int8')}, {o.kind!r}, {o.atomic})"
                                for o in self.outputs)
        return HEADER + REFERENCE_SETUP + "\n\n" + self.kernel_source() + HOST.format(
            seed=self.seed, sizes=s, scalars=self.scalars, inputs=inputs, outputs=outputs)

    def without(self, indices):
        """A copy with the statements at `indices` deleted (their values become tl.full)."""
        dropped = {self.stmts[i].defines.name: self.stmts[i].defines
                   for i in indices if self.stmts[i].defines is not None}
        kept = [s for i, s in enumerate(self.stmts) if i not in indices]
        replaced = []
        for s in kept:
            uses = [dropped.get(u.name, u) for u in s.uses]
            template = s.template
            for k, u in enumerate(s.uses):
                if u.name in dropped:
                    template = template.replace("{%d}" % k, _full(u))
            replaced.append(Stmt(template, uses, s.defines, s.features, s.outputs))
        return Program(self.seed, dict(self.sizes), self.inputs, self.outputs, replaced, dict(self.scalars))


# The index operand of a pair reduction along an axis of a value of a kind.
_PAIR_INDEX = {("2d", 1): "tl.broadcast_to(tl.arange(0, BN)[None, :], (BM, BN))",
               ("2d", 0): "tl.broadcast_to(tl.arange(0, BM)[:, None], (BM, BN))",
               ("m", 0): "tl.arange(0, BM)", ("n", 0): "tl.arange(0, BN)"}


def _pair_reduce(op: str, kind: str, arg: str, with_nans: bool) -> str:
    """An arg reduction written as Inductor writes it: tl.reduce of (value, index) pairs
    by its NaN-aware combine; with NaNs put where the value exceeds 0.5 (its exact
    values keep the pattern the same everywhere)."""
    axis = int(arg.split("=")[1]) if arg else 0
    value = "tl.where({0} > 0.5, float(\"nan\"), {0})" if with_nans else "{0}"
    combine = "_max_with_index" if op == "argmax" else "_min_with_index"
    return (f"tl.reduce(({value}, {_PAIR_INDEX[(kind, axis)]}), {axis}, {combine})[1]"
            ".to(tl.int32)")


def _full(v):
    return f"tl.full({SHAPE[v.kind]}, 1, {TL_DTYPE[v.dtype]})"


HEADER = '''import os

import numpy as np
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def _max_with_index(a, ia, b, ib):
    """Inductor's maximum_with_index: a NaN is the greatest, ties to the smaller index."""
    mask = (a > b) | ((a != a) & (b == b))
    equal = (a == b) | ((a != a) & (b != b))
    mask = mask | (equal & (ia < ib))
    return tl.where(mask, a, b), tl.where(mask, ia, ib)


@triton.jit
def _min_with_index(a, ia, b, ib):
    """Inductor's minimum_with_index: a NaN is the least, ties to the smaller index."""
    mask = (a < b) | ((a != a) & (b == b))
    equal = (a == b) | ((a != a) & (b != b))
    mask = mask | (equal & (ia < ib))
    return tl.where(mask, a, b), tl.where(mask, ia, ib)
'''

# The reference is Triton's interpreter with what tests/fuzz/reference.py adds.
REFERENCE_SETUP = '''
if os.environ.get("TRITON_INTERPRET") == "1":
    from tests.fuzz.reference import libdevice, patch_interpreter  # noqa: F811

    patch_interpreter()
'''

HOST = '''

SEED = {seed}
SIZES = {sizes!r}
SCALARS = {scalars!r}
INPUTS = [
    {inputs}
]
OUTPUTS = [
    {outputs}
]


def run(**options):
    # imported here: a reproducer run as a script finds its checkout only in its
    # __main__ block, and the processes that call run() have it on their path
    from tests.fuzz.reproducer import launch

    return launch(kernel, SEED, SIZES, SCALARS, INPUTS, OUTPUTS, **options)
'''


# ---------------------------------------------------------------------- generator

class Generator:
    """Builds one program from a seed; `features` limits what it may use."""

    def __init__(self, seed, features=None):
        self.r = random.Random(seed)
        # Choices added later draw from their own stream, so that the programs of
        # earlier seeds (the CI slice's, the findings') stay what they were otherwise.
        self.extra = random.Random(seed * 7919 + 1)
        self.seed = seed
        self.allowed = set(features) if features is not None else set(ALL_FEATURES)
        self.values = []
        self.stmts = []
        self.inputs = []
        self.outputs = []
        self.scalars = {}
        self.counter = 0

    def want(self, feature, p):
        return feature in self.allowed and self.r.random() < p

    def fresh(self, prefix="v"):
        self.counter += 1
        return f"{prefix}{self.counter}"

    # ---------------------------------------------------------------- program
    def program(self, n_stmts=None):
        r = self.r
        dot = self.want("dot", 0.35)
        self.use_dot = dot
        small = [1, 2, 4, 8, 16, 32] if "unit_block" in self.allowed else [2, 4, 8, 16, 32]
        BM = r.choice([16, 32]) if dot else r.choice(small)
        BN = r.choice([16, 32]) if dot else r.choice(small)
        BK = 16 if dot else r.choice([1, 2, 4, 8])
        if dot:  # matmul-sized blocks now and then, from their own stream (other seeds keep their programs)
            wide = random.Random(f"blocks{self.seed}")
            if wide.random() < 0.25:
                BM, BN, BK = 2 * BM, 2 * BN, wide.choice([16, 32])
        M = r.randint(1, 3 * BM)
        N = r.randint(1, 3 * BN)
        if self.want("masked_k", 0.3):
            K = r.randint(1, 3 * BK)
        else:
            K = BK * r.randint(1, 3)
        T = r.choice([1, 2, 3, 5])
        # work-items per program in the GPU shape (num_warps x 32); the CPU shape ignores it
        warps = random.Random(f"warps{self.seed}").choice([1, 2, 4, 4, 8])  # its own stream: seeds keep their programs
        self.sizes = dict(M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, T=T, num_warps=warps)
        n = n_stmts or r.randint(4, 16)
        self.add_load("2d")
        while len(self.stmts) < n:
            self.step()
        self.add_stores()
        # After the stores, from its own stream: programs without it stay as they were.
        flags = random.Random(f"flags{self.seed}")
        if "flags" in self.allowed and flags.random() < 0.3:
            self.r = flags
            for value in self.add_flags():
                self.store_stmt(value)
        return Program(self.seed, self.sizes, self.inputs, self.outputs, self.stmts, self.scalars)

    def step(self):
        r = self.r
        choices = [(self.add_load, 3), (self.add_binary, 5), (self.add_unary, 3), (self.add_cast, 2),
                   (self.add_compare_where, 2), (self.add_index, 0.5)]
        if "reduce" in self.allowed:
            choices.append((self.add_reduce, 2))
        if "scan" in self.allowed:
            choices.append((self.add_scan, 1))
        if "dot" in self.allowed and self.use_dot:
            choices.append((self.add_dot, 4))
        if "loop" in self.allowed:
            choices.append((self.add_loop, 1))
        if "reshape" in self.allowed:
            choices.append((self.add_reshape, 1))
        if "return" in self.allowed:
            choices.append((self.add_return, 0.4))
        if "atomic" in self.allowed:
            choices.append((self.add_atomic, 1.5))
        if "libdevice" in self.allowed:
            choices.append((self.add_math, 2))
        if "store" in self.allowed:
            choices.append((self.add_store_of_any, 1))
        fns, weights = zip(*choices)
        r.choices(fns, weights)[0]()

    def emit(self, template, uses, kind=None, dtype=None, exact=False, features=(), outputs=()):
        v = None
        if kind is not None:
            v = Value(self.fresh(), kind, dtype, exact)
            template = f"{v.name} = {template}"
            self.values.append(v)
        self.stmts.append(Stmt(template, list(uses), v, tuple(features), tuple(outputs)))
        return v

    def pick(self, pred=lambda v: True):
        cands = [v for v in self.values if pred(v) and v.kind in ("2d", "m", "n", "s")]
        if not cands:
            return None
        # favour recent values: longer dependency chains
        return cands[-1] if self.r.random() < 0.4 else self.r.choice(cands)

    # ---------------------------------------------------------------- inputs
    def new_input(self, role, dtype):
        layouts = ["contiguous"] * 3 + (["transposed", "strided"] if "strides" in self.allowed else [])
        inp = Input(f"x{len(self.inputs)}", dtype, role, self.r.choice(layouts))
        self.inputs.append(inp)
        return inp

    def data_dtype(self):
        r = self.r
        pool = FLOATS * 2 + INTS + ["bf16"]
        if "fp8" in self.allowed:
            pool = pool + FP8
        if "fp64" in self.allowed:
            pool = pool + ["fp64"]
        return r.choice(pool)

    def mask_for(self, kind):
        """The mask of a load of `kind`: the bounds, sometimes and-ed with a scalar or a
        data-dependent condition."""
        base = {"2d": "mm[:, None] & mn[None, :]", "m": "mm", "n": "mn", "s": "(pid_m < M)"}[kind]
        extra, uses = "", []
        r = self.r
        if kind != "s" and self.want("scalar_mask", 0.25):
            # a condition on a program id and a scalar argument; written on a zero tensor
            # plus the id because the interpreter cannot and a scalar condition into a mask
            name = f"c{len(self.scalars)}"
            self.scalars[name] = r.randint(0, 3)
            zero = {"2d": "rm[:, None] * 0", "m": "rm * 0", "n": "rn * 0"}[kind]
            extra = f" & ({zero} + pid_{r.choice('mn')} < {name})"
        elif kind != "s" and self.want("tensor_mask", 0.2):
            cond = self.pick(lambda v: v.exact and v.kind == kind and v.dtype != "bool" and not is_fp8(v.dtype))
            if cond is not None:
                extra, uses = " & ({0} > 0)", [cond]
        return base + extra, uses

    def add_load(self, kind=None):
        r = self.r
        kind = kind or r.choice(["2d", "2d", "m", "n", "s"])
        dtype = self.data_dtype()
        inp = self.new_input("mn", dtype)
        x, s0, s1 = inp.name, f"s{inp.name}_0", f"s{inp.name}_1"
        ptr = {"2d": f"{x} + rm[:, None] * {s0} + rn[None, :] * {s1}", "m": f"{x} + rm * {s0}",
               "n": f"{x} + rn * {s1}", "s": f"{x} + pid_m * {s0}"}[kind]
        mask, uses = self.mask_for(kind)
        other = r.choice(["0", "1", "-1"] if is_int(dtype) and dtype != "uint8" else ["0", "3"]
                         if is_int(dtype) else ["0.0", "1.0", "-1.0"])
        load = f"tl.load({ptr}, mask={mask}, other={other})"
        features = ["load"]
        if dtype in STORAGE:
            # arithmetic happens after an upcast
            up = r.choice(["fp32", "fp16"]) if is_fp8(dtype) else "fp32"
            load += f".to({TL_DTYPE[up]})"
            features.append("fp8" if is_fp8(dtype) else "bf16")
            dtype = up
        if uses or "(c" in mask:
            features.append("mask_condition")
        return self.emit(load, uses, kind, dtype, exact=True, features=features)

    def add_index(self):
        """Data from the block's indices (program ids and aranges)."""
        r = self.r
        kind = r.choice(["2d", "m", "n"])
        expr = {"2d": f"rm[:, None] * {r.randint(1, 5)} + rn[None, :] - {r.randint(0, 9)}",
                "m": f"rm * {r.randint(1, 5)} - pid_n", "n": f"rn - {r.randint(0, 9)} * pid_m"}[kind]
        dtype = r.choice(["int32", "int16", "fp32"])
        return self.emit(f"({expr}).to({TL_DTYPE[dtype]})", [], kind, dtype, exact=True)

    # ---------------------------------------------------------------- arithmetic
    def operand(self, pred=lambda v: True):
        v = self.pick(lambda v: v.dtype != "bool" and pred(v))
        return v if v is not None else self.add_load()

    def add_binary(self):
        r = self.r
        a = self.operand()
        b = self.operand()
        if is_int(a.dtype) and is_float(b.dtype):
            a, b = b, a  # b is cast to a's type: never a float to an integer (discontinuous, UB out of range)
        dtype = a.dtype
        kind = combine(a.kind, b.kind)
        ea, eb = bcast("{0}", a.kind, kind), bcast("{1}", b.kind, kind)
        if b.dtype != dtype:
            eb = f"{eb}.to({TL_DTYPE[dtype]})"
        exact = a.exact and b.exact and (b.dtype == dtype or not is_float(dtype) or not is_float(b.dtype))
        if is_float(dtype):
            op = r.choice(["+", "-", "*", "/", "max", "min", "fma"])
            exact = exact and op in ("max", "min")
        else:
            op = r.choice(["+", "-", "*", "&", "|", "^", "//", "%", "<<", ">>", "max", "min"])
        if op == "/":
            expr = f"{ea} / (tl.abs({eb}) + 1)"
        elif op in ("//", "%"):
            expr = f"{ea} {op} (({eb} & 7) + 1)"
        elif op in ("<<", ">>"):
            expr = f"{ea} {op} ({eb} & 3)"
        elif op in ("max", "min"):
            expr = f"tl.{op}imum({ea}, {eb})"
        elif op == "fma":
            expr = f"tl.fma({ea}, {eb}, {ea})"
        else:
            expr = f"{ea} {op} {eb}"
        if dtype in ("int8", "int16", "uint8") and op in ("+", "-", "*", "<<"):
            pass  # wraps in Triton (no promotion), as in the reference
        return self.emit(expr, [a, b], kind, dtype, exact=exact)

    def add_unary(self):
        r = self.r
        a = self.operand()
        if is_float(a.dtype):
            ops = ["-{0}", "tl.abs({0})"]
            if a.exact:
                x = "{0}" if a.dtype == "fp32" else "{0}.to(tl.float32)"
                ops += [f"tl.floor({x})", f"tl.ceil({x})"]
            expr = r.choice(ops)
            exact = a.exact
            if "floor" in expr or "ceil" in expr:
                return self.emit(expr, [a], a.kind, "fp32", exact=exact)
        else:
            expr = r.choice(["-{0}", "~{0}", "tl.abs({0})"] if a.dtype != "uint8" else ["~{0}", "{0} + 1"])
            exact = a.exact
        return self.emit(expr, [a], a.kind, a.dtype, exact=exact)

    def add_math(self):
        """Transcendentals and libdevice on fp32 (Triton's math wants fp32/fp64)."""
        r = self.r
        a = self.operand(lambda v: is_float(v.dtype))
        x = "{0}" if a.dtype == "fp32" else "{0}.to(tl.float32)"
        expr = r.choice([
            f"tl.exp(tl.minimum({x}, 8.0))", f"tl.log(tl.abs({x}) + 1)", f"tl.sqrt(tl.abs({x}))",
            f"tl.sin({x})", f"tl.cos({x})", f"tl.sigmoid({x})", f"tl.exp2(tl.minimum({x}, 8.0))",
            f"libdevice.tanh({x})", f"libdevice.erf({x})", f"libdevice.atan({x})",
            f"libdevice.log1p(tl.abs({x}))", f"libdevice.expm1(tl.minimum({x}, 8.0))",
            f"libdevice.rsqrt(tl.abs({x}) + 1)", f"libdevice.pow(tl.abs({x}) + 1, 1.5)",
            f"libdevice.cbrt({x})", f"libdevice.asinh({x})"])
        return self.emit(expr, [a], a.kind, "fp32", exact=False, features=["libdevice"])

    def add_cast(self):
        r = self.r
        a = self.operand()
        target = r.choice(FLOATS + INTS)
        if is_float(a.dtype) and is_int(target):
            if not a.exact:
                target = r.choice(FLOATS)
            else:
                # out-of-range float-to-int conversions are undefined: clamp first
                lo, hi = (0, 100) if target == "uint8" else (-100, 100)
                expr = f"tl.minimum(tl.maximum({{0}}, {lo}), {hi}).to({TL_DTYPE[target]})"
                return self.emit(expr, [a], a.kind, target, exact=True)
        exact = a.exact and (is_int(target) or (is_int(a.dtype) and target == "fp32"))
        if is_int(a.dtype) and is_int(target):
            exact = a.exact
        if is_float(a.dtype) and is_float(target) and _wider_or_same(a.dtype, target):
            exact = a.exact
        features = []
        if is_float(a.dtype) and is_float(target) and r.random() < 0.3:
            # a round trip through a storage type (rounds; fp8 saturates)
            via = r.choice(STORAGE if "fp8" in self.allowed else ["bf16"])
            expr = f"{{0}}.to({TL_DTYPE[via]}).to({TL_DTYPE[target]})"
            features.append("fp8" if is_fp8(via) else "bf16")
            exact = False
        else:
            expr = f"{{0}}.to({TL_DTYPE[target]})"
        return self.emit(expr, [a], a.kind, target, exact=exact, features=features)

    def add_compare_where(self):
        r = self.r
        a = self.operand(lambda v: v.exact)
        b = self.pick(lambda v: v.exact and v.dtype == a.dtype and v.dtype != "bool")
        if b is None:
            b = a
        kind = combine(a.kind, b.kind)
        op = r.choice(["<", "<=", ">", ">=", "==", "!="])
        cond = self.emit(f"{bcast('{0}', a.kind, kind)} {op} {bcast('{1}', b.kind, kind)}", [a, b],
                         kind, "bool", exact=True)
        x = self.operand()
        y = self.operand(lambda v: v.dtype == x.dtype)
        if is_int(x.dtype) and is_float(y.dtype):
            x, y = y, x  # y is cast to x's type: never a float to an integer
        k2 = combine(combine(kind, x.kind), y.kind)
        ey = bcast('{2}', y.kind, k2)
        if y.dtype != x.dtype:
            ey = f"{ey}.to({TL_DTYPE[x.dtype]})"
        expr = f"tl.where({bcast('{0}', kind, k2)}, {bcast('{1}', x.kind, k2)}, {ey})"
        return self.emit(expr, [cond, x, y], k2, x.dtype, exact=x.exact and y.exact, features=["where"])

    def add_flags(self):
        """A tensor's flags joined with a program's own condition (a scalar bool, `pid_m
        < 1`) by `&`, `|` or `^`, then picking between a value and 0 on them: vector
        lanes of 0 / -1 that the scalar joins. -> (the flags, the picked values)."""
        r = self.r
        a = self.operand(lambda v: v.exact and v.kind != "s" and not is_fp8(v.dtype))
        test = r.choice(["<", ">=", "!="])
        own = f"(pid_{r.choice('mn')} {r.choice(['<', '>='])} {r.randint(0, 2)})"
        flags = self.emit(f"({{0}} {test} 0) {r.choice(['&', '|', '^'])} {own}", [a], a.kind,
                          "bool", exact=True, features=["flags"])
        x = self.operand(lambda v: not is_fp8(v.dtype))
        kind = combine(flags.kind, x.kind)
        expr = f"tl.where({bcast('{0}', flags.kind, kind)}, {bcast('{1}', x.kind, kind)}, 0)"
        return flags, self.emit(expr, [flags, x], kind, x.dtype, exact=x.exact, features=["where"])

    # ---------------------------------------------------------------- reductions
    def add_reduce(self):
        r = self.r
        a = self.operand(lambda v: v.kind != "s")
        if a.kind == "s":
            return None
        op = r.choice(["sum", "max", "min", "argmax", "argmin", "xor_sum"] if is_int(a.dtype)
                      else ["sum", "max", "min", "argmax", "argmin"])
        if op.startswith("arg") and not a.exact:
            op = "max"
        if a.kind == "2d" and not op.startswith("arg") and r.random() < 0.2:
            kind, arg = "s", ""  # over both axes
        elif a.kind == "2d":
            axis = r.choice([0, 1])
            kind = "n" if axis == 0 else "m"
            arg = f", axis={axis}"
        else:
            kind, arg = "s", ", axis=0" if op.startswith("arg") else r.choice([", axis=0", ""])
        if op.startswith("arg"):
            dtype = "int32"
        elif op in ("sum", "xor_sum") and is_int(a.dtype):
            dtype = "int64" if a.dtype == "int64" else "int32"
            if a.dtype == "uint8":
                dtype = "int32"
        else:
            dtype = a.dtype
        pair = self.extra.random() < 0.2 and a.exact and is_float(a.dtype)
        pair_op, with_nans = self.extra.choice(["argmax", "argmin"]), self.extra.random() < 0.5
        if pair:
            if a.kind == "2d" and not arg:
                kind, arg = "m", ", axis=1"
            return self.emit(_pair_reduce(pair_op, a.kind, arg, with_nans), [a], kind, "int32",
                             exact=True, features=["reduce"])
        expr = f"tl.{op}({{0}}{arg}).to({TL_DTYPE[dtype]})"
        exact = a.exact and (op != "sum" or is_int(a.dtype))
        return self.emit(expr, [a], kind, dtype, exact=exact, features=["reduce"])

    def add_scan(self):
        r = self.r
        a = self.operand(lambda v: v.kind in ("2d", "m", "n"))
        if a.kind == "s":
            return None
        dtype = a.dtype
        if is_int(dtype) and dtype not in ("int64",):
            dtype = "int32"
        axis = r.choice([0, 1]) if a.kind == "2d" else 0
        op = r.choice(["cumsum", "cumsum", "cumprod"] if is_int(dtype) else ["cumsum"])
        reverse = r.random() < 0.2
        expr = f"tl.{op}({{0}}.to({TL_DTYPE[dtype]}), axis={axis}{', reverse=True' if reverse else ''})"
        exact = a.exact and is_int(dtype)
        return self.emit(expr, [a], a.kind, dtype, exact=exact, features=["scan"])

    def add_dot(self):
        r = self.r
        dtype = r.choice(["fp16", "fp32", "int8"])  # the interpreter multiplies bf16 bit patterns
        ins = []
        for role, kind in (("mk", "mk"), ("kn", "kn")):
            inp = self.new_input(role, dtype)
            x, s0, s1 = inp.name, f"s{inp.name}_0", f"s{inp.name}_1"
            if role == "mk":
                ptr, mask = f"{x} + rm[:, None] * {s0} + rk[None, :] * {s1}", "mm[:, None] & (rk[None, :] < K)"
            else:
                ptr, mask = f"{x} + rk[:, None] * {s0} + rn[None, :] * {s1}", "(rk[:, None] < K) & mn[None, :]"
            ins.append(self.emit(f"tl.load({ptr}, mask={mask}, other=0)", [], kind, dtype, exact=True,
                                 features=["dot"]))
        acc = "int32" if dtype == "int8" else "fp32"
        loop = self.sizes["K"] > self.sizes["BK"] and r.random() < 0.5
        if not loop:
            prec = "" if dtype == "int8" else ', input_precision="ieee"'
            return self.emit(f"tl.dot({{0}}, {{1}}{prec})", ins, "2d", acc, exact=dtype == "int8",
                             features=["dot"])
        # a K loop with pointer carries
        a_in, b_in = self.inputs[-2], self.inputs[-1]
        v = Value(self.fresh(), "2d", acc, dtype == "int8")
        n = v.name  # loop-local names are the value's: two loops never share a (typed) carry
        prec = "" if dtype == "int8" else ', input_precision="ieee"'
        body = (f"{v.name} = tl.zeros((BM, BN), {TL_DTYPE[acc]})\n"
                f"pa_{n} = {a_in.name} + rm[:, None] * s{a_in.name}_0 + rk[None, :] * s{a_in.name}_1\n"
                f"pb_{n} = {b_in.name} + rk[:, None] * s{b_in.name}_0 + rn[None, :] * s{b_in.name}_1\n"
                f"for k in range(0, K, BK):\n"
                f"    a_{n} = tl.load(pa_{n}, mask=mm[:, None] & (rk[None, :] + k < K), other=0)\n"
                f"    b_{n} = tl.load(pb_{n}, mask=(rk[:, None] + k < K) & mn[None, :], other=0)\n"
                f"    {v.name} += tl.dot(a_{n}, b_{n}{prec})\n"
                f"    pa_{n} += BK * s{a_in.name}_1\n"
                f"    pb_{n} += BK * s{b_in.name}_0")
        self.values.append(v)
        self.stmts.append(Stmt(body, [], v, ("dot", "loop"), ()))
        return v

    def add_loop(self):
        """A loop over T rows with a tensor carry (the accumulator) and a pointer carry."""
        r = self.r
        dtype = r.choice(["fp32", "int32", "fp16"])
        bound = r.choice(["T", "M"])
        # the input has T rows (a "tn" input) or M rows: every row the loop reads exists
        inp = self.new_input("tn" if bound == "T" else "mn", r.choice(["fp32", "int32", "fp16", "int8"]))
        x, s0, s1 = inp.name, f"s{inp.name}_0", f"s{inp.name}_1"
        v = Value(self.fresh(), "n", dtype, is_int(dtype) and is_int(inp.dtype))
        n = v.name  # loop-local names are the value's: two loops never share a (typed) carry
        step = r.choice(["{v} + ", "tl.maximum({v}, ", "{v} * 0.5 + " if is_float(dtype) else "{v} ^ "])
        close = ")" if step.startswith("tl.maximum") else ""
        body = (f"{v.name} = tl.zeros((BN,), {TL_DTYPE[dtype]})\n"
                f"p_{n} = {x} + rn * {s1}\n"
                f"for i in {'tl.static_range(T)' if bound == 'T' and r.random() < 0.3 else f'range(0, {bound})'}:\n"
                f"    row_{n} = tl.load(p_{n}, mask=mn, other=0).to({TL_DTYPE[dtype]})\n"
                f"    {v.name} = {step.format(v=v.name)}row_{n}{close}\n"
                f"    p_{n} += {s0}")
        if "0.5" in step:
            v.exact = False
        self.values.append(v)
        self.stmts.append(Stmt(body, [], v, ("loop",), ()))
        return v

    def add_reshape(self):
        a = self.operand(lambda v: v.kind == "2d")
        if a.kind != "2d":
            return None
        r = self.r
        if self.sizes["BM"] == self.sizes["BN"] and r.random() < 0.5:
            expr = "tl.trans({0})"
        elif r.random() < 0.5:
            expr = "tl.reshape(tl.reshape({0}, (BM * BN,)), (BM, BN))"
        else:
            expr = "tl.reshape(tl.reshape({0}, (BN, BM)), (BM, BN))"
        return self.emit(expr, [a], "2d", a.dtype, exact=a.exact, features=["reshape"])

    def add_return(self):
        r = self.r
        if r.random() < 0.5:
            return self.emit(f"if pid_m == {r.randint(0, 2)}:\n    return", [], features=["return"])
        a = self.operand(lambda v: v.exact and is_int(v.dtype))
        if not (a.exact and is_int(a.dtype)):
            return None
        red = "{0}" if a.kind == "s" else "tl.max({0})" if a.kind != "2d" else "tl.max(tl.max({0}, axis=1))"
        return self.emit(f"if {red} > {r.randint(0, 10)}:\n    return", [a], features=["return"])

    # ---------------------------------------------------------------- stores
    def store_stmt(self, v):
        kind = v.kind
        value = "{0}"
        dtype = v.dtype
        if dtype == "bool":
            value, dtype = "{0}.to(tl.int8)", "int8"
        if is_float(dtype) and not v.exact and self.r.random() < 0.2:
            via = self.r.choice(STORAGE if "fp8" in self.allowed else ["bf16"])
            value, dtype = f"{value}.to({TL_DTYPE[via]})", via
        out = Output(f"o{len(self.outputs)}", dtype, kind)
        self.outputs.append(out)
        o = out.name
        ptr, mask = {"2d": (f"{o} + rm[:, None] * N + rn[None, :]", "mm[:, None] & mn[None, :]"),
                     "m": (f"{o} + rm * gn + pid_n", "mm"), "n": (f"{o} + pid_m * N + rn", "mn"),
                     "s": (f"{o} + pid_m * gn + pid_n", None)}[kind]
        uses = [v]
        if mask and "tensor_mask" in self.allowed and self.r.random() < 0.2:
            cond = self.pick(lambda c: c.exact and c.kind == kind and is_int(c.dtype))
            if cond is not None:
                mask, uses = f"{mask} & ({{1}} > 0)", [v, cond]
        mask_arg = f", mask={mask}" if mask else ""
        self.stmts.append(Stmt(f"tl.store({ptr}, {value}{mask_arg})", uses, None, ("store",), (o,)))

    def add_store_of_any(self):
        v = self.pick()
        if v is not None:
            self.store_stmt(v)

    def add_stores(self):
        # store the last values (the ends of the chains) and a few random ones
        stored = {s.uses[0].name for s in self.stmts if s.outputs and s.uses}
        tail = [v for v in self.values[-3:] if v.kind in ("2d", "m", "n", "s") and v.name not in stored]
        for v in tail:
            self.store_stmt(v)

    def add_atomic(self):
        r = self.r
        a = self.operand(lambda v: v.kind in ("n", "s") and v.dtype in ("int32", "fp32"))
        if a.kind not in ("n", "s") or a.dtype not in ("int32", "fp32"):
            return None
        op = r.choice(["add", "max", "min"] if a.dtype == "int32" else ["add", "max"])
        out = Output(f"o{len(self.outputs)}", a.dtype, "n" if a.kind == "n" else "s", atomic=True)
        self.outputs.append(out)
        # every program row adds into the same places
        ptr, mask = (f"{out.name} + rn", ", mask=mn") if a.kind == "n" else (f"{out.name} + pid_n", "")
        self.stmts.append(Stmt(f"tl.atomic_{op}({ptr}, {{0}}{mask})", [a], None, ("atomic",), (out.name,)))


def is_fp8(dtype):
    return dtype in FP8


def _wider_or_same(src, dst):
    order = {"fp16": 1, "bf16": 1, "fp32": 2, "fp64": 3}
    return src == dst or (order[dst] > order[src] and not (src, dst) == ("fp16", "bf16"))


def combine(a, b):
    if a == b:
        return a
    if "2d" in (a, b) or {a, b} == {"m", "n"}:
        return "2d"
    return a if b == "s" else b


def bcast(expr, kind, to):
    if kind == to or kind == "s":
        return expr
    if to == "2d":
        return f"{expr}[:, None]" if kind == "m" else f"{expr}[None, :]"
    raise ValueError(f"cannot broadcast {kind} to {to}")


ALL_FEATURES = ["reduce", "scan", "dot", "loop", "reshape", "return", "atomic", "libdevice", "fp8", "strides",
                "scalar_mask", "tensor_mask", "masked_k", "store", "unit_block", "flags"]


def generate(seed, features=None):
    return Generator(seed, features).program()
