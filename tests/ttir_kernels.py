"""Triton kernels used to produce realistic TTIR for the reader tests.

Each kernel is compiled only to TTIR (no GPU is needed): `ttir(case, passes)` runs
Triton's front end for the CUDA backend and optionally the standard `make_ttir` pass
pipeline. The kernels are chosen to make Triton emit every `tt` op the reader knows.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass, field

import triton
import triton.language as tl
from triton.language.extra import libdevice
from triton.language.extra.cuda import gdc_launch_dependents, gdc_wait


# --- kernels -------------------------------------------------------------------------


@triton.jit
def vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0, cache_modifier=".cg", eviction_policy="evict_last")
    y = tl.load(y_ptr + offs, mask=mask, volatile=True)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def softmax(x_ptr, out_ptr, stride, n_cols, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    offs = rows[:, None] * stride + cols[None, :]
    mask = cols[None, :] < n_cols
    x = tl.load(x_ptr + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=1)[:, None]
    num = tl.exp(x)
    den = tl.sum(num, axis=1)
    tl.store(out_ptr + offs, num / den[:, None], mask=mask)


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k, other=0.0)
        acc = tl.dot(a, b, acc, input_precision="tf32")
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    c = acc.to(tl.float16)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], c, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def argmax(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    value, index = tl.max(x, axis=0, return_indices=True)
    tl.store(out_ptr, index)
    tl.store(out_ptr + 1, tl.argmin(x, axis=0))
    tl.store(out_ptr + 2, value.to(tl.int32))


@triton.jit
def _mul_combine(a, b):
    return a * b


@triton.jit
def scans(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    s = tl.cumsum(x, axis=0, reverse=True)
    p = tl.associative_scan(x, 0, _mul_combine)
    tl.store(out_ptr + offs, s + p)


@triton.jit
def atomics(ptr, cnt_ptr, val_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(val_ptr + offs, mask=mask)
    old = tl.atomic_add(ptr + offs, v, mask=mask, sem="acq_rel", scope="gpu")
    tl.atomic_max(ptr + offs, old, mask=mask, sem="relaxed", scope="cta")
    tl.atomic_xchg(val_ptr + offs, old, mask=mask, sem="release", scope="sys")
    prev = tl.atomic_cas(cnt_ptr, 0, 1, sem="acquire")
    seen = tl.atomic_load(cnt_ptr + 1, sem="acquire", scope="gpu")
    tl.atomic_store(cnt_ptr + 2, prev + seen, sem="release", scope="gpu")
    ready = tl.atomic_poll(cnt_ptr + 3, 1, sem="acquire", scope="gpu", timeout_ns=1000)
    tl.store(cnt_ptr + 4, ready.to(tl.int32))


@triton.jit
def random(out_ptr, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    r = tl.rand(seed, offs)
    tl.store(out_ptr + offs, r)


@triton.jit
def casts(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    f8 = x.to(tl.float8e5, fp_downcast_rounding="rtz")
    back = f8.to(tl.float32)
    bits = back.to(tl.int32, bitcast=True)
    addr = out_ptr.to(tl.int64, bitcast=True)
    p = (addr + 4).to(tl.pointer_type(tl.int32), bitcast=True)
    tl.store(p + offs, bits)
    h = x.to(tl.bfloat16)
    tl.store(out_ptr + offs, h.to(tl.float32))


@triton.jit
def shapes(x_ptr, idx_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    t = tl.trans(x)
    r = tl.reshape(t, (M * N,))
    p = tl.permute(tl.reshape(x, (M, 2, N // 2)), (2, 0, 1))
    j = tl.join(r, r)
    a, b = tl.split(j)
    c = tl.cat(a, b, can_reorder=True)
    idx = tl.load(idx_ptr + rm[:, None] * N + rn[None, :])
    g = tl.gather(x, idx, axis=1)
    h = tl.histogram(idx.reshape(M * N), 16, mask=r > 0)
    tl.store(out_ptr + tl.arange(0, 2 * M * N), c)
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], g)
    tl.store(out_ptr + tl.arange(0, 16), h.to(tl.float32))
    tl.store(out_ptr + tl.arange(0, M * N), tl.reshape(p, (M * N,), can_reorder=True))
    total = tl.sum(r, axis=0, keep_dims=True)
    tl.store(out_ptr, total.item())


@triton.jit
def elementwise(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    z = tl.where(x > y, x, y)
    z = tl.clamp(z, -1.0, 1.0, propagate_nan=tl.PropagateNan.ALL)
    z = tl.sqrt_rn(tl.abs(z)) + tl.fma(x, y, z)
    z = tl.div_rn(z, y) + tl.fdiv(x, y, approx=True)
    z = tl.maximum(z, x, propagate_nan=tl.PropagateNan.ALL) + tl.minimum(z, y)
    tl.store(out_ptr + offs, z)


@triton.jit
def debug_ops(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.device_print("x = ", x, offs, hex=True)
    tl.device_print("n")
    tl.device_assert(x >= 0, "x must be non-negative")
    tl.device_assert(n > 0, "n must be positive")
    tl.assume(n > 4)


@triton.jit
def descriptors(a_ptr, b_ptr, idx_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN],
                                       padding_option="nan")
    row_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, N], strides=[N, 1], block_shape=[1, BN])
    pid = tl.program_id(0)
    tile = a_desc.load([pid * BM, 0])
    b_desc.store([pid * BM, 0], tile * 2.0)
    b_desc.atomic_add([pid * BM, 0], tile)
    rows = tl.load(idx_ptr + tl.arange(0, BM))
    g = row_desc.gather(rows, 0)
    row_desc.scatter(g + 1.0, rows, 0)


@triton.jit
def extern_call(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, libdevice.asin(x))


@triton.jit
def inline_asm(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    lo, hi = tl.inline_asm_elementwise(
        "mov.b64 {$0, $1}, $2;", "=r,=r,l", [x], dtype=(tl.int32, tl.int32), is_pure=True, pack=1)
    y = tl.inline_asm_elementwise("shl.b32 $0, $1, 3;", "=r,r", [lo], dtype=tl.int32, is_pure=False, pack=1)
    tl.store(out_ptr + offs, y + hi)


@triton.jit
def while_loop(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.load(x_ptr + offs)
    i = 0
    while i < n:
        acc = acc * 0.5
        i += tl.load(x_ptr + i).to(tl.int32) + 1
    tl.store(x_ptr + offs, acc)


@triton.jit
def if_tensors(x_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if pid % 2 == 0:
        y = x * 2.0
        z = offs + 1
    else:
        y = x - 1.0
        z = offs
    tl.store(out_ptr + z, y)


@triton.jit
def grid_3d(out_ptr):
    x = tl.program_id(0)
    y = tl.program_id(1)
    z = tl.program_id(2)
    nx = tl.num_programs(0)
    ny = tl.num_programs(1)
    nz = tl.num_programs(2)
    gdc_wait()
    tl.store(out_ptr + (z * ny + y) * nx + x, nx * ny * nz)
    gdc_launch_dependents()


@triton.jit
def dot_scaled(a_ptr, a_scale_ptr, b_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    rs = tl.arange(0, K // 32)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    a_scale = tl.load(a_scale_ptr + rm[:, None] * (K // 32) + rs[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :]).to(tl.bfloat16)
    c = tl.dot_scaled(a, a_scale, "e4m3", b, None, "bf16")
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], c)


@triton.jit
def _select_scalar(x, y):
    if x > y:
        return x - y
    else:
        return y * 2.0


@triton.jit
def map_elementwise(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, tl.map_elementwise(_select_scalar, x, y))


@triton.jit(noinline=True)
def _scaled(x, factor):
    return x * factor


@triton.jit
def noinline_call(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    factor = _scaled(tl.load(x_ptr), 3.0)
    tl.store(out_ptr + offs, x * factor)


# --- cases ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """A kernel with its launch signature and constexpr values (by argument name)."""

    kernel: object
    signature: dict
    constexprs: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    divisible_by_16: tuple = ()  # argument names specialised with tt.divisibility = 16

    @property
    def name(self) -> str:
        return self.kernel.fn.__name__


def _case(kernel, signature, options=None, divisible_by_16=(), **constexprs):
    full = dict(signature)
    full.update({name: "constexpr" for name in constexprs})
    return Case(kernel, full, constexprs, options or {}, tuple(divisible_by_16))


CASES = [
    _case(vector_add, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, BLOCK=1024),
    _case(softmax, {"x_ptr": "*fp32", "out_ptr": "*fp32", "stride": "i32", "n_cols": "i32"},
          divisible_by_16=("x_ptr", "out_ptr", "stride"), ROWS=4, BLOCK=128),
    _case(matmul, {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
                   "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32"}, BM=32, BN=32, BK=16),
    _case(argmax, {"x_ptr": "*fp32", "out_ptr": "*i32"}, BLOCK=256),
    _case(scans, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, BLOCK=256),
    _case(atomics, {"ptr": "*fp32", "cnt_ptr": "*i32", "val_ptr": "*fp32", "n": "i32"}, BLOCK=128),
    _case(random, {"out_ptr": "*fp32", "seed": "i32"}, BLOCK=256),
    _case(casts, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, BLOCK=128),
    _case(shapes, {"x_ptr": "*fp32", "idx_ptr": "*i32", "out_ptr": "*fp32"}, M=8, N=16),
    _case(elementwise, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32"}, BLOCK=128),
    _case(debug_ops, {"x_ptr": "*fp32", "n": "i32"}, options={"debug": True}, BLOCK=64),
    _case(descriptors, {"a_ptr": "*fp32", "b_ptr": "*fp32", "idx_ptr": "*i32", "M": "i32", "N": "i32"},
          BM=16, BN=32),
    _case(extern_call, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, BLOCK=128),
    _case(inline_asm, {"x_ptr": "*i64", "out_ptr": "*i32"}, BLOCK=128),
    _case(while_loop, {"x_ptr": "*fp32", "n": "i32"}, BLOCK=64),
    _case(if_tensors, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, BLOCK=64),
    _case(grid_3d, {"out_ptr": "*i32"}),
    _case(dot_scaled, {"a_ptr": "*fp8e4nv", "a_scale_ptr": "*u8", "b_ptr": "*fp32", "out_ptr": "*fp32"},
          M=32, N=32, K=64),
    _case(map_elementwise, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32"}, BLOCK=128),
    _case(noinline_call, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, BLOCK=128),
]

CASES_BY_NAME = {case.name: case for case in CASES}


# --- TTIR generation -----------------------------------------------------------------


def _make_ir(case: Case, run_passes: bool):
    from triton._C.libtriton import ir as tir
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import ASTSource

    from triton_spirv.compiler import OpenCLBackend, make_ttir

    target = GPUTarget("opencl", "ttir-tests", 1)
    backend = OpenCLBackend(target)
    names = list(case.signature)
    constexprs = {(names.index(name),): value for name, value in case.constexprs.items()}
    attrs = {(names.index(name),): [["tt.divisibility", 16]] for name in case.divisible_by_16}
    source = ASTSource(case.kernel, case.signature, constexprs, attrs)
    context = tir.context()
    tir.load_dialects(context)
    backend.load_dialects(context)
    # FP fusion only matters for LLVM; naming it keeps Triton from warning about its default.
    options = backend.parse_options({"sanitize_overflow": False, "enable_fp_fusion": False,
                                     **case.options})
    with warnings.catch_warnings():
        # `shapes` uses tl.cat/tl.reshape(can_reorder=True) on purpose: it emits tt.cat and
        # `tt.reshape allow_reorder`.
        warnings.filterwarnings("ignore", message=r".*can_reorder=True\) is deprecated")
        module = source.make_ir(target, options, backend.get_codegen_implementation(options),
                                backend.get_module_map(), context)
    if run_passes:
        make_ttir(module, {}, options)  # the backend's own TTIR stage
    return module, context


def _op_signature(op) -> tuple:
    operands = tuple(str(op.get_operand(i).get_type()) for i in range(op.get_num_operands()))
    results = tuple(str(op.get_result(i).get_type()) for i in range(op.get_num_results()))
    return op.get_name(), operands, results


@dataclass(frozen=True)
class Generated:
    """TTIR text of a case, and Triton's own view of its ops (post-order walk)."""

    text: str
    text_without_locations: str
    ops: tuple  # (name, operand types, result types) per op


@functools.lru_cache(maxsize=None)
def ttir(case_name: str, run_passes: bool) -> Generated:
    module, _context = _make_ir(CASES_BY_NAME[case_name], run_passes)
    ops = []
    module.walk(lambda op: ops.append(_op_signature(op)))
    return Generated(str(module), module.str_nodebug(), tuple(ops))
