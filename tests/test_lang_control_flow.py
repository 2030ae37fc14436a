"""Triton language, control flow the converter must restructure: early `return` inside
`if` (cf.cond_br in TTIR, lifted by upstream lift-cf-to-scf), nested `for` loops around
one tensor accumulator (convolution, pooling, instance norm), `while` loops around
`atomic_cas` (scatter with a multiply reduction), and functions Triton keeps as `tt.call`
(`noinline`, and calls with tensor arguments and several results). Results are compared
with torch (fp64 where sums are involved)."""
import re

import pytest
import torch
import torch.nn.functional as F

import triton
import triton.language as tl

# ---------------------------------------------------------------------------------------
# Early return


@triton.jit
def cross_entropy_fwd_kernel(logits_ptr, stride, labels_ptr, loss_ptr, n_cols, ignore_index,
                             BLOCK: tl.constexpr):
    """Loss per row, and the gradient of the mean loss written over the logits (the
    cross-entropy kernel of LLM-training libraries): ignored rows get zero gradient and
    return early."""
    row = tl.program_id(0).to(tl.int64)
    logits_ptr += row * stride
    label = tl.load(labels_ptr + row)
    if label == ignore_index:
        for start in range(0, n_cols, BLOCK):
            offs = start + tl.arange(0, BLOCK)
            tl.store(logits_ptr + offs, 0.0, mask=offs < n_cols)
        tl.store(loss_ptr + row, 0.0)
        return
    m = float("-inf")
    d = 0.0
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(logits_ptr + offs, mask=offs < n_cols, other=float("-inf"))
        new_m = tl.maximum(m, tl.max(x, 0))
        d = d * tl.exp(m - new_m) + tl.sum(tl.exp(x - new_m), 0)
        m = new_m
    lse = m + tl.log(d)
    target = tl.load(logits_ptr + label)
    tl.store(loss_ptr + row, lse - target)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n_cols
        x = tl.load(logits_ptr + offs, mask=mask)
        grad = tl.exp(x - lse) - tl.where(offs == label, 1.0, 0.0)
        tl.store(logits_ptr + offs, grad, mask=mask)


def test_cross_entropy_with_ignored_rows_returns_early():
    torch.manual_seed(0)
    rows, cols, ignore = 7, 100, -100
    logits = torch.randn(rows, cols)
    labels = torch.randint(0, cols, (rows,))
    labels[[1, 4]] = ignore
    ref_logits = logits.double().requires_grad_()
    ref_loss = F.cross_entropy(ref_logits, labels, ignore_index=ignore, reduction="none")
    ref_loss.sum().backward()
    loss = torch.empty(rows)
    grad = logits.clone()
    cross_entropy_fwd_kernel[(rows,)](grad, grad.stride(0), labels, loss, cols, ignore,
                                      BLOCK=32)
    torch.testing.assert_close(loss.double(), ref_loss.detach(), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(grad.double(), ref_logits.grad, rtol=1e-5, atol=1e-6)
    assert (grad[[1, 4]] == 0).all()


@triton.jit
def nested_return_kernel(x_ptr, out_ptr, a, b, N: tl.constexpr):
    offs = tl.arange(0, N)
    v = tl.load(x_ptr + offs)
    if a > 0:
        if b > 0:
            tl.store(out_ptr + offs, v + 1)
            return
        v = v * 3
    elif b > 0:
        return
    tl.store(out_ptr + offs, v)


@pytest.mark.parametrize("a,b", [(1, 1), (1, 0), (0, 1), (0, 0)])
def test_return_from_nested_if(a, b):
    x = torch.randn(16)
    out = torch.full((16,), 42.0)
    nested_return_kernel[(1,)](x, out, a, b, N=16)
    if a > 0:
        want = x + 1 if b > 0 else x * 3
    else:
        want = torch.full((16,), 42.0) if b > 0 else x
    torch.testing.assert_close(out, want, rtol=0, atol=0)


@triton.jit
def return_leaves_pointer_unset_kernel(x_ptr, y_ptr, a, b):
    """The path that returns never sets `p`: lift-cf-to-scf merges it as ub.poison."""
    if a > 0:
        p = x_ptr
        if b > 0:
            return
    else:
        p = y_ptr
    tl.store(p, 1.0)


@pytest.mark.parametrize("a,b", [(2, 0), (2, 3), (0, 0)])
def test_return_on_a_path_that_leaves_a_pointer_unset(a, b):
    x, y = torch.zeros(1), torch.zeros(1)
    return_leaves_pointer_unset_kernel[(1,)](x, y, a, b)
    assert (x.item(), y.item()) == ((1.0 if b == 0 else 0.0, 0.0) if a > 0 else (0.0, 1.0))


@triton.jit
def rope_kernel(q_ptr, cos_ptr, sin_ptr, seq_len, HALF: tl.constexpr, BACKWARD: tl.constexpr):
    """Rotary embedding in place, one (token, head) row per program; programs past the
    sequence return before touching memory."""
    row = tl.program_id(0)
    if row >= seq_len:
        return
    offs = tl.arange(0, HALF)
    c = tl.load(cos_ptr + row * HALF + offs)
    s = tl.load(sin_ptr + row * HALF + offs)
    if BACKWARD:
        s = -s
    x1 = tl.load(q_ptr + row * 2 * HALF + offs)
    x2 = tl.load(q_ptr + row * 2 * HALF + HALF + offs)
    tl.store(q_ptr + row * 2 * HALF + offs, x1 * c - x2 * s)
    tl.store(q_ptr + row * 2 * HALF + HALF + offs, x2 * c + x1 * s)


def test_rope_programs_past_the_sequence_return():
    seq, half = 5, 8
    q = torch.randn(seq + 3, 2 * half)
    angle = torch.rand(seq, half) * 6
    got = q.clone()
    rope_kernel[(seq + 3,)](got, angle.cos(), angle.sin(), seq, HALF=half, BACKWARD=False)
    x1, x2 = q[:seq, :half], q[:seq, half:]
    want = q.clone()
    want[:seq] = torch.cat([x1 * angle.cos() - x2 * angle.sin(),
                            x2 * angle.cos() + x1 * angle.sin()], dim=1)
    torch.testing.assert_close(got, want)


def test_lift_control_flow_ir():
    """IR in, IR out: a tt.func with cf.cond_br becomes one block with scf.if, the tt ops
    and tt.return kept, and no cf op left."""
    from triton_spirv.stages import new_context
    from triton_spirv.ttir import read_ttir
    from triton_spirv.ttir_to_linalg.control_flow import lift_control_flow
    ttir = """
module {
  tt.func public @k(%p: !tt.ptr<i32>, %n: i32) attributes {noinline = false} {
    %c0 = arith.constant 0 : i32
    %c = arith.cmpi sgt, %n, %c0 : i32
    cf.cond_br %c, ^bb1, ^bb2
  ^bb1:
    tt.store %p, %n : !tt.ptr<i32>
    tt.return
  ^bb2:
    tt.store %p, %c0 : !tt.ptr<i32>
    tt.return
  }
}
"""
    with new_context() as ctx:
        module = lift_control_flow(read_ttir(ttir, ctx))
        text = str(module)
    assert not re.search(r"\bcf\.", text)
    assert "func.func" not in text and "func.return" not in text
    assert text.count('"tt.return"') == 1 and text.count('"tt.store"') == 2
    assert "scf.if" in text and '"tt.func"' in text


# ---------------------------------------------------------------------------------------
# Nested loops carrying tensor accumulators


@triton.jit
def conv2d_kernel(x_ptr, w_ptr, out_ptr, C, H, W, OH, OW, KH: tl.constexpr, KW: tl.constexpr,
                  BLOCK: tl.constexpr):
    """Direct convolution, one output channel per program axis 1, input channels and
    the kernel window as three nested loops around one accumulator."""
    pid = tl.program_id(0)
    oc = tl.program_id(1)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < OH * OW
    oh = offs // OW
    ow = offs % OW
    acc = tl.zeros([BLOCK], tl.float32)
    for c in range(C):
        for kh in range(KH):
            for kw in range(KW):
                w = tl.load(w_ptr + ((oc * C + c) * KH + kh) * KW + kw)
                x = tl.load(x_ptr + (c * H + oh + kh) * W + ow + kw, mask=mask, other=0.0)
                acc += x * w
    tl.store(out_ptr + oc * OH * OW + offs, acc, mask=mask)


def test_conv2d_nested_loops():
    torch.manual_seed(1)
    C, H, W, OC, K = 3, 11, 13, 4, 3
    x, w = torch.randn(C, H, W), torch.randn(OC, C, K, K)
    OH, OW = H - K + 1, W - K + 1
    out = torch.empty(OC, OH, OW)
    conv2d_kernel[(triton.cdiv(OH * OW, 32), OC)](x, w, out, C, H, W, OH, OW, KH=K, KW=K,
                                                  BLOCK=32)
    want = F.conv2d(x[None].double(), w.double())[0]
    torch.testing.assert_close(out.double(), want, rtol=1e-5, atol=1e-5)


@triton.jit
def max_pool2d_kernel(x_ptr, out_ptr, W, OH, OW, K: tl.constexpr, BH: tl.constexpr,
                      BW: tl.constexpr):
    oh = tl.program_id(0) * BH + tl.arange(0, BH)[:, None]
    ow = tl.program_id(1) * BW + tl.arange(0, BW)[None, :]
    mask = (oh < OH) & (ow < OW)
    acc = tl.full([BH, BW], float("-inf"), tl.float32)
    for kh in range(K):
        for kw in range(K):
            v = tl.load(x_ptr + (oh * K + kh) * W + ow * K + kw, mask=mask, other=float("-inf"))
            acc = tl.maximum(acc, v)
    tl.store(out_ptr + oh * OW + ow, acc, mask=mask)


def test_max_pool2d_nested_loops():
    x = torch.randn(14, 18)
    OH, OW = 7, 9
    out = torch.empty(OH, OW)
    max_pool2d_kernel[(triton.cdiv(OH, 4), triton.cdiv(OW, 4))](x, out, 18, OH, OW, K=2, BH=4,
                                                                BW=4)
    torch.testing.assert_close(out, F.max_pool2d(x[None, None], 2)[0, 0], rtol=0, atol=0)


@triton.jit
def instance_norm_kernel(x_ptr, out_ptr, H, W, eps, BW: tl.constexpr):
    """Mean and variance over one (H, W) plane per program: rows in the outer loop, column
    blocks in the inner one, two tensor accumulators carried through both."""
    plane = tl.program_id(0)
    base = x_ptr + plane * H * W
    s = tl.zeros([BW], tl.float32)
    q = tl.zeros([BW], tl.float32)
    for h in range(H):
        for start in range(0, W, BW):
            offs = start + tl.arange(0, BW)
            v = tl.load(base + h * W + offs, mask=offs < W, other=0.0)
            s += v
            q += v * v
    n = H * W
    mean = tl.sum(s, 0) / n
    rstd = 1.0 / tl.sqrt(tl.sum(q, 0) / n - mean * mean + eps)
    for h in range(H):
        for start in range(0, W, BW):
            offs = start + tl.arange(0, BW)
            mask = offs < W
            v = tl.load(base + h * W + offs, mask=mask)
            tl.store(out_ptr + plane * H * W + h * W + offs, (v - mean) * rstd, mask=mask)


def test_instance_norm_nested_loops():
    x = torch.randn(2, 3, 6, 21) + 0.5
    out = torch.empty_like(x)
    instance_norm_kernel[(6,)](x, out, 6, 21, 1e-5, BW=8)
    want = F.instance_norm(x.double(), eps=1e-5)
    torch.testing.assert_close(out.double(), want, rtol=1e-4, atol=1e-4)


@triton.jit
def inner_then_outer_update_kernel(x_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr,
                                   N: tl.constexpr):
    """The outer loop reads the accumulator both before and after the inner loop updated
    it, then rescales it: the inner loop cannot simply write over the outer value."""
    offs = tl.arange(0, N)
    s = tl.zeros([N], tl.float32)
    q = tl.zeros([N], tl.float32)
    for a in range(A):
        before = s
        for b in range(B):
            v = tl.load(x_ptr + (a * B + b) * N + offs)
            s += v
            q += v * v
        q = q + (s - before)
        s = s * 0.5
    tl.store(out_ptr + offs, s)
    tl.store(out_ptr + N + offs, q)


def test_accumulator_read_before_and_after_inner_loop():
    A, B, N = 3, 4, 8
    x = torch.randn(A, B, N)
    out = torch.empty(2 * N)
    inner_then_outer_update_kernel[(1,)](x, out, A=A, B=B, N=N)
    s = torch.zeros(N, dtype=torch.float64)
    q = torch.zeros(N, dtype=torch.float64)
    for a in range(A):
        before = s.clone()
        for b in range(B):
            s = s + x[a, b].double()
            q = q + x[a, b].double() ** 2
        q = q + (s - before)
        s = s * 0.5
    torch.testing.assert_close(out.double(), torch.cat([s, q]), rtol=1e-5, atol=1e-5)


@triton.jit
def implicit_gemm_conv_kernel(x_ptr, w_ptr, out_ptr, KH: tl.constexpr, KW: tl.constexpr,
                              M: tl.constexpr, C: tl.constexpr, O: tl.constexpr):
    """A convolution as one tl.dot per kernel tap, accumulated through both loops."""
    rm = tl.arange(0, M)
    rc = tl.arange(0, C)
    ro = tl.arange(0, O)
    acc = tl.zeros([M, O], tl.float32)
    for kh in range(KH):
        for kw in range(KW):
            tap = kh * KW + kw
            a = tl.load(x_ptr + tap * M * C + rm[:, None] * C + rc[None, :])
            b = tl.load(w_ptr + tap * C * O + rc[:, None] * O + ro[None, :])
            acc += tl.dot(a, b)
    tl.store(out_ptr + rm[:, None] * O + ro[None, :], acc)


def test_dot_accumulated_through_nested_loops():
    KH, KW, M, C, O = 2, 3, 16, 16, 16
    x, w = torch.randn(KH * KW, M, C), torch.randn(KH * KW, C, O)
    out = torch.empty(M, O)
    implicit_gemm_conv_kernel[(1,)](x, w, out, KH=KH, KW=KW, M=M, C=C, O=O)
    want = torch.einsum("kmc,kco->mo", x.double(), w.double())
    torch.testing.assert_close(out.double(), want, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------------------------
# while loops around atomic_cas; a store of every lane to one address


@triton.jit
def scatter_mul_kernel(inp_ptr, idx_ptr, src_ptr, n, BLOCK: tl.constexpr):
    """scatter_reduce(..., "prod") with a compare-and-swap loop (no atomic multiply)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    src = tl.load(src_ptr + offs, mask=mask, other=1)
    stop = tl.where(mask, 0, 1).to(tl.int1)
    block_stop = False
    while not block_stop:
        cur = tl.load(inp_ptr + idx, mask=mask, other=0)
        res = tl.where(stop, cur, cur * src)
        got = tl.atomic_cas(inp_ptr + idx, cur, res, sem="relaxed")
        stop |= cur == got
        block_stop = tl.sum(stop.to(tl.int32)) == BLOCK


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32])
def test_scatter_multiply_with_cas_loop(dtype):
    torch.manual_seed(2)
    n = 200
    inp = torch.randint(1, 4, (10,)).to(dtype)
    idx = torch.randint(0, 10, (n,), dtype=torch.int32)
    src = torch.where(torch.rand(n) < 0.1, 2, 1).to(dtype)  # products stay exact
    want = inp.clone().scatter_reduce(0, idx.long(), src, "prod")
    scatter_mul_kernel[(triton.cdiv(n, 64),)](inp, idx, src, n, BLOCK=64)
    torch.testing.assert_close(inp, want, rtol=0, atol=0)


@triton.jit
def scalar_cas_multiply_kernel(x_ptr, idx_ptr, val_ptr):
    """One element per program; the while loop's regions carry different values (the
    before region two, the after region one)."""
    pid = tl.program_id(0)
    p = x_ptr + tl.load(idx_ptr + pid)
    v = tl.load(val_ptr + pid)
    old = tl.load(p)
    got = tl.atomic_cas(p, old, old * v)
    while got != old:
        old = got
        got = tl.atomic_cas(p, old, old * v)


def test_scalar_cas_loop_with_different_region_values():
    x = torch.ones(4, dtype=torch.int32)
    idx = torch.tensor([0, 1, 1, 3, 1, 0], dtype=torch.int32)
    val = torch.tensor([2, 3, 5, 7, 11, 13], dtype=torch.int32)
    want = x.clone().scatter_reduce(0, idx.long(), val, "prod")
    scalar_cas_multiply_kernel[(6,)](x, idx, val)
    torch.testing.assert_close(x, want, rtol=0, atol=0)


@triton.jit
def one_address_store_kernel(out_ptr, v_ptr, n, N: tl.constexpr):
    i = tl.arange(0, N)
    v = tl.load(v_ptr + tl.program_id(0) * N + i)
    # every lane addresses out_ptr[pid]; only lane n stores
    tl.store(out_ptr + tl.program_id(0) + tl.zeros_like(i), v, mask=i == n)
    tl.store(out_ptr + tl.num_programs(0) + tl.program_id(0) + tl.zeros_like(i), v * 2,
             mask=v == tl.max(v, 0))


def test_masked_store_of_every_lane_to_one_address():
    v = torch.randn(3, 16)
    out = torch.zeros(6)
    one_address_store_kernel[(3,)](out, v, 5, N=16)
    torch.testing.assert_close(out, torch.cat([v[:, 5], 2 * v.max(1).values]), rtol=0, atol=0)


@triton.jit
def one_address_at_buffer_start_kernel(out_ptr, flags_ptr, v_ptr, n, N: tl.constexpr):
    """The one address is the buffer's first element (a static offset 0 with stride 0,
    masked by a lane index the kernel only knows at run time)."""
    i = tl.arange(0, N).to(tl.int64)
    v = tl.load(v_ptr + i)
    tl.store(out_ptr + tl.zeros_like(i), v, mask=i == n)
    tl.store(out_ptr + 1 + tl.zeros_like(i), tl.sum(v, 0), mask=i == n)
    tl.store(flags_ptr + tl.zeros_like(i), v > 0, mask=i == n)


@pytest.mark.parametrize("n", [0, 6])
def test_masked_store_of_every_lane_to_the_first_element(n):
    v = torch.randn(8)
    out, flags = torch.zeros(2), torch.zeros(1, dtype=torch.bool)
    one_address_at_buffer_start_kernel[(1,)](out, flags, v, n, N=8)
    torch.testing.assert_close(out, torch.stack([v[n], v.sum()]))
    assert flags[0] == (v[n] > 0)


@triton.jit
def float_cas_multiply_kernel(x_ptr, idx_ptr, val_ptr):
    """A float multiply by compare-and-swap on the bit patterns (the pointer bitcast to
    int32), as libraries without a float atomic multiply write it."""
    pid = tl.program_id(0)
    p = x_ptr + tl.load(idx_ptr + pid)
    bits_ptr = p.to(tl.pointer_type(tl.int32))
    v = tl.load(val_ptr + pid)
    old = tl.load(p)
    done = False
    while not done:
        expected = old.to(tl.int32, bitcast=True)
        got = tl.atomic_cas(bits_ptr, expected, (old * v).to(tl.int32, bitcast=True))
        done = got == expected
        old = got.to(tl.float32, bitcast=True)


def test_float_cas_loop_through_bitcast_pointer():
    x = torch.tensor([1.5, -2.0, 3.0, 0.25])
    idx = torch.tensor([0, 1, 1, 3, 1, 0, 2], dtype=torch.int32)
    val = torch.tensor([2.0, 0.5, -4.0, 8.0, 3.0, -1.0, 0.125])
    want = x.clone().scatter_reduce(0, idx.long(), val, "prod")
    float_cas_multiply_kernel[(7,)](x, idx, val)
    torch.testing.assert_close(x, want, rtol=0, atol=0)  # powers of two: exact in any order


# ---------------------------------------------------------------------------------------
# Calls Triton does not inline


@triton.jit(noinline=True)
def _sum_and_product(x, y):
    return x + y, x * y


@triton.jit(noinline=True)
def _load_row(ptr, row, N: tl.constexpr):
    offs = tl.arange(0, N)
    v = tl.load(ptr + row * N + offs)
    return v, tl.sum(v, 0)


@triton.jit
def noinline_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    s, p = _sum_and_product(tl.load(x_ptr + row), tl.load(y_ptr + row))
    v, total = _load_row(x_ptr, row, N)
    w, _ = _load_row(y_ptr, row, N)
    offs = tl.arange(0, N)
    tl.store(out_ptr + row * (N + 2) + offs, v * s + w * p + total)
    tl.store(out_ptr + row * (N + 2) + N, s)
    tl.store(out_ptr + row * (N + 2) + N + 1, p)


def test_noinline_functions_with_several_results():
    N = 8
    x, y = torch.randn(3, N), torch.randn(3, N)
    out = torch.empty(3, N + 2)
    compiled = noinline_kernel[(3,)](x, y, out, N=N)
    assert "tt.call" in compiled.asm["ttir"]  # Triton kept the calls; we inline them
    s, p = x.flatten()[:3] + y.flatten()[:3], x.flatten()[:3] * y.flatten()[:3]
    want = torch.cat([x * s[:, None] + y * p[:, None] + x.sum(1, keepdim=True),
                      s[:, None], p[:, None]], dim=1)
    torch.testing.assert_close(out, want)


@triton.jit(noinline=True)
def _clamp_below(x, lo):
    if x < lo:
        return lo, 1
    return x, 0


@triton.jit
def noinline_early_return_kernel(x_ptr, out_ptr, lo):
    pid = tl.program_id(0)
    v, clamped = _clamp_below(tl.load(x_ptr + pid), lo)
    tl.store(out_ptr + pid, v + clamped * 100)


def test_noinline_function_with_early_return():
    x = torch.tensor([-3.0, 0.5, 2.0, -0.1, 0.0])
    out = torch.empty(5)
    noinline_early_return_kernel[(5,)](x, out, 0.0)
    torch.testing.assert_close(out, torch.where(x < 0, torch.full_like(x, 100.0), x),
                               rtol=0, atol=0)


@triton.jit
def _plus_one(x):
    return x + 1


@triton.jit(noinline=True)
def _plus_one_kept(x):
    return x + 1


@triton.jit(noinline=True)
def _plus_by_program(x, pid):
    if pid == 0:
        return x + 1
    else:
        return x + 2


@triton.jit(noinline=True)
def _store_kept(out_ptr, x):
    tl.store(out_ptr, x)


@triton.jit(noinline=True)
def _call_graph(x, pid):
    return _plus_one_kept(_plus_one(x)) + _plus_by_program(x, pid)


@triton.jit
def noinline_modes_kernel(x_ptr, out_ptr, side_ptr, MODE: tl.constexpr):
    """The shapes of Triton's own noinline tests: nested kept calls, an early return
    inside a kept call, a kept call that only stores."""
    pid = tl.program_id(0)
    x = tl.load(x_ptr + pid)
    if MODE == "call_graph":
        z = _call_graph(x, pid)
    elif MODE == "by_program":
        z = _plus_by_program(x, pid)
    else:
        _store_kept(side_ptr + pid, x * 3)
        z = x
    tl.store(out_ptr + pid, z)


@pytest.mark.parametrize("mode", ["call_graph", "by_program", "store_only"])
def test_noinline_call_shapes(mode):
    x = torch.tensor([2.0, -5.0, 0.5])
    out, side = torch.zeros(3), torch.zeros(3)
    noinline_modes_kernel[(3,)](x, out, side, MODE=mode)
    by_program = x + torch.tensor([1.0, 2.0, 2.0])
    want = {"call_graph": (x + 2) + by_program, "by_program": by_program, "store_only": x}[mode]
    torch.testing.assert_close(out, want, rtol=0, atol=0)
    torch.testing.assert_close(side, x * 3 if mode == "store_only" else torch.zeros(3))


@triton.jit(noinline=True)
def _checked_double(x):
    tl.device_assert(x >= 0, "x must be non-negative")
    return x * 2


@triton.jit
def assert_in_callee_kernel(x_ptr, out_ptr):
    pid = tl.program_id(0)
    tl.store(out_ptr + pid, _checked_double(tl.load(x_ptr + pid)))


def test_device_assert_inside_a_noinline_function():
    x, out = torch.tensor([1.0, 2.0]), torch.zeros(2)
    assert_in_callee_kernel[(2,)](x, out, debug=True)
    torch.testing.assert_close(out, x * 2)
    with pytest.raises(AssertionError, match=r"assert_in_callee_kernel: .*test_lang_control_flow"
                                             r"\.py:\d+: x must be non-negative"):
        assert_in_callee_kernel[(2,)](-x, out, debug=True)


@triton.jit
def _affine_pair(a, b, scale):
    return a * scale + b, a - b * scale


@triton.jit
def tensor_call_kernel(a_ptr, b_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    u, v = _affine_pair(tl.load(a_ptr + offs), tl.load(b_ptr + offs), 3.0)
    tl.store(out_ptr + offs, u)
    tl.store(out_ptr + N + offs, v)


def _frontend_ttir(kernel, signature, constexprs) -> str:
    """TTIR straight from Triton's front end, before its inliner: every call of a
    @triton.jit function is still a tt.call (here with tensor arguments)."""
    from triton._C.libtriton import ir as tir
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import ASTSource
    from triton_spirv.compiler import OpenCLBackend
    target = GPUTarget("opencl", "frontend", 1)
    backend = OpenCLBackend(target)
    names = list(signature)
    source = ASTSource(kernel, signature,
                       {(names.index(k),): v for k, v in constexprs.items()})
    context = tir.context()
    tir.load_dialects(context)
    options = backend.parse_options({})
    module = source.make_ir(target, options, backend.get_codegen_implementation(options),
                            backend.get_module_map(), context)
    return str(module)


def test_call_with_tensor_arguments_and_two_results():
    import pyopencl
    import numpy as np
    from triton_spirv.stages import (linalg_to_memref_text, memref_to_opencl,
                                     ttir_to_linalg_text)
    N = 16
    ttir = _frontend_ttir(tensor_call_kernel, {"a_ptr": "*fp32", "b_ptr": "*fp32",
                                               "out_ptr": "*fp32", "N": "constexpr"}, {"N": N})
    assert "tt.call" in ttir and "tensor<16xf32>" in ttir.split("tt.call")[1].split("\n")[0]
    kernel = memref_to_opencl(linalg_to_memref_text(ttir_to_linalg_text(ttir)))
    a, b = np.random.randn(N).astype(np.float32), np.random.randn(N).astype(np.float32)
    out = np.zeros(2 * N, np.float32)
    ctx = pyopencl.create_some_context(interactive=False)
    queue = pyopencl.CommandQueue(ctx)
    flags = pyopencl.mem_flags.READ_WRITE | pyopencl.mem_flags.COPY_HOST_PTR
    bufs = [pyopencl.Buffer(ctx, flags, hostbuf=arr) for arr in (a, b, out)]
    program = pyopencl.Program(ctx, kernel.source).build()
    getattr(program, kernel.name)(queue, kernel.local_size, kernel.local_size, *bufs)
    pyopencl.enqueue_copy(queue, out, bufs[2])
    queue.finish()
    np.testing.assert_allclose(out, np.concatenate([a * 3 + b, a - b * 3]), rtol=1e-6)


# ---------------------------------------------------------------------------------------
# IR in, IR out: the converter's restructuring


def _to_linalg(ttir: str) -> str:
    from triton_spirv.stages import ttir_to_linalg_text
    return ttir_to_linalg_text(ttir)


def test_index_switch_becomes_a_chain_of_ifs():
    linalg = _to_linalg("""
module {
  tt.func public @k(%p: !tt.ptr<i32>, %n: i32) attributes {noinline = false} {
    %i = arith.index_castui %n : i32 to index
    %r = scf.index_switch %i -> i32
    case 0 {
      %c10 = arith.constant 10 : i32
      scf.yield %c10 : i32
    }
    case 3 {
      %c30 = arith.constant 30 : i32
      scf.yield %c30 : i32
    }
    default {
      scf.yield %n : i32
    }
    tt.store %p, %r : !tt.ptr<i32>
    tt.return
  }
}
""")
    assert "index_switch" not in linalg
    assert linalg.count("scf.if") == 2
    assert re.search(r"arith\.cmpi eq, %\w+, %c0\b", linalg)
    assert re.search(r"arith\.cmpi eq, %\w+, %c3\b", linalg)


def test_call_with_tensors_is_inlined():
    linalg = _to_linalg("""
module {
  tt.func public @k(%p: !tt.ptr<f32>) attributes {noinline = false} {
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %s = tt.splat %p : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %q = tt.addptr %s, %r : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    %v = tt.load %q : tensor<8x!tt.ptr<f32>>
    %a:2 = tt.call @twice(%v, %q) : (tensor<8xf32>, tensor<8x!tt.ptr<f32>>) -> (tensor<8xf32>, tensor<8xf32>)
    tt.store %q, %a#1 : tensor<8x!tt.ptr<f32>>
    tt.return
  }
  tt.func private @twice(%x: tensor<8xf32>, %ptrs: tensor<8x!tt.ptr<f32>>) -> (tensor<8xf32>, tensor<8xf32>) attributes {noinline = true} {
    %y = arith.addf %x, %x : tensor<8xf32>
    %z = tt.load %ptrs : tensor<8x!tt.ptr<f32>>
    %w = arith.mulf %y, %z : tensor<8xf32>
    tt.return %y, %w : tensor<8xf32>, tensor<8xf32>
  }
}
""")
    assert "call" not in linalg and "twice" not in linalg
    assert linalg.count("func.func") == 1
    assert "arith.addf" in linalg and "arith.mulf" in linalg


def test_nested_loops_copy_the_accumulator_once():
    """The outer loop yields the inner loop's result, which already lives in the outer
    loop's buffer: only the inner loop's update is copied in place, and bufferization
    finds no read-after-write conflict."""
    from triton_spirv.stages import linalg_to_memref_text
    linalg = _to_linalg("""
module {
  tt.func public @k(%p: !tt.ptr<f32>) attributes {noinline = false} {
    %zero = arith.constant dense<0.0> : tensor<8xf32>
    %one = arith.constant dense<1.0> : tensor<8xf32>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 3 : i32
    %acc = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %zero) -> (tensor<8xf32>) : i32 {
      %inner = scf.for %j = %c0 to %c3 step %c1 iter_args(%b = %a) -> (tensor<8xf32>) : i32 {
        %n = arith.addf %b, %one : tensor<8xf32>
        scf.yield %n : tensor<8xf32>
      }
      scf.yield %inner : tensor<8xf32>
    }
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %s = tt.splat %p : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %q = tt.addptr %s, %r : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    tt.store %q, %acc : tensor<8x!tt.ptr<f32>>
    tt.return
  }
}
""")
    in_loops = [line for line in linalg.splitlines()
                if "materialize_in_destination" in line and "memref" not in line]
    assert len(in_loops) == 1, linalg
    linalg_to_memref_text(linalg)  # one-shot bufferization succeeds
