"""Triton kernels as PyTorch's Inductor (torch 2.13, `cpu_backend = "triton"`) wrote them
for CPU tensors, kept as its output with only the `@triton_heuristics` decorator and the
`set_driver_to_cpu()` call dropped: the shapes of code it generates (2-D
`[XBLOCK, R0_BLOCK]` tiles, `[:, None]` row masks and broadcasts, `triton_helpers`
combines, `tl.where` accumulators of looped reductions). Used by
tests/test_inductor_kernels.py; tests/filecheck/inductor_*.mlir hold their TTIR."""
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math


# gelu(layer_norm(x, (1024,), w, b)) * 2 on x 4096x1024: a persistent reduction.
@triton.jit
def triton_per_fused_gelu_mul_native_layer_norm_0(in_out_ptr1, in_ptr0, in_ptr1, in_ptr2, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 4096
    r0_numel = 1024
    R0_BLOCK: tl.constexpr = 1024
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = tl.full([XBLOCK], True, tl.int1)[:, None]
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 1024*x0), None, eviction_policy='evict_first')
    tmp16 = tl.load(in_ptr1 + (r0_1), None, eviction_policy='evict_last')
    tmp18 = tl.load(in_ptr2 + (r0_1), None, eviction_policy='evict_last')
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
    tmp3 = tl.sum(tmp1, 1)[:, None].to(tl.float32)
    tmp4 = tl.full([1, 1], 1024.0, tl.float32)
    tmp5 = (tmp3 / tmp4)
    tmp6 = tmp0 - tmp5
    tmp7 = tmp6 * tmp6
    tmp8 = tl.broadcast_to(tmp7, [XBLOCK, R0_BLOCK])
    tmp10 = tl.sum(tmp8, 1)[:, None].to(tl.float32)
    tmp11 = (tmp10 / tmp4)
    tmp12 = tl.full([1, 1], 1e-05, tl.float32)
    tmp13 = tmp11 + tmp12
    tmp14 = libdevice.rsqrt(tmp13)
    tmp15 = tmp6 * tmp14
    tmp17 = tmp15 * tmp16
    tmp19 = tmp17 + tmp18
    tmp20 = tl.full([1, 1], 0.5, tl.float32)
    tmp21 = tmp19 * tmp20
    tmp22 = tl.full([1, 1], 0.7071067811865476, tl.float32)
    tmp23 = tmp19 * tmp22
    tmp24 = libdevice.erf(tmp23)
    tmp25 = tl.full([1, 1], 1.0, tl.float32)
    tmp26 = tmp24 + tmp25
    tmp27 = tmp21 * tmp26
    tmp28 = tl.full([1, 1], 2.0, tl.float32)
    tmp29 = tmp27 * tmp28
    tl.store(in_out_ptr1 + (r0_1 + 1024*x0), tmp29, None)


# softmax(x * 0.5, -1) on x 4096x1024: a persistent reduction with max2 (a where-form
# maximum) and `any` reductions.
@triton.jit
def triton_per_fused__softmax_abs_all_amax_eq_mul_ne_sub_0(in_out_ptr0, in_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 4096
    r0_numel = 1024
    R0_BLOCK: tl.constexpr = 1024
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = tl.full([XBLOCK], True, tl.int1)[:, None]
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 1024*x0), None, eviction_policy='evict_first')
    tmp1 = tl.full([1, 1], 0.5, tl.float32)
    tmp2 = tmp0 * tmp1
    tmp3 = tmp2 == tmp2
    tmp4 = tl_math.abs(tmp2)
    tmp5 = tl.full([1, 1], float("inf"), tl.float32)
    tmp6 = tmp4 != tmp5
    tmp7 = tmp3 & tmp6
    tmp8 = tmp7 == 0
    tmp9 = tl.broadcast_to(tmp8, [XBLOCK, R0_BLOCK])
    tmp11 = triton_helpers.any(tmp9, 1)[:, None].to(tl.int1)
    tmp12 = tl.full([1, 1], 1.0, tl.float32)
    tmp13 = tmp0 * tmp12
    tmp14 = tl.broadcast_to(tmp13, [XBLOCK, R0_BLOCK])
    tmp16 = triton_helpers.max2(tmp14, 1)[:, None].to(tl.float32)
    tmp17 = tl.broadcast_to(tmp2, [XBLOCK, R0_BLOCK])
    tmp19 = triton_helpers.max2(tmp17, 1)[:, None].to(tl.float32)
    tmp20 = tmp11 == 0
    tmp21 = tmp13 - tmp16
    tmp22 = tmp21 * tmp1
    tmp23 = tmp2 - tmp19
    tmp24 = tl.where(tmp20, tmp22, tmp23)
    tmp25 = libdevice.exp(tmp24)
    tmp26 = tl.broadcast_to(tmp25, [XBLOCK, R0_BLOCK])
    tmp28 = tl.sum(tmp26, 1)[:, None].to(tl.float32)
    tmp29 = (tmp25 / tmp28)
    tl.store(in_out_ptr0 + (r0_1 + 1024*x0), tmp29, None)


# F.gelu(x) * 2 + torch.tanh(x) on x 1000x1000: a pointwise kernel with an `xmask`.
@triton.jit
def triton_poi_fused_add_gelu_mul_tanh_0(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xnumel = 1000000
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0), xmask)
    tmp1 = tl.full([1], 0.5, tl.float32)
    tmp2 = tmp0 * tmp1
    tmp3 = tl.full([1], 0.7071067811865476, tl.float32)
    tmp4 = tmp0 * tmp3
    tmp5 = libdevice.erf(tmp4)
    tmp6 = tl.full([1], 1.0, tl.float32)
    tmp7 = tmp5 + tmp6
    tmp8 = tmp2 * tmp7
    tmp9 = tl.full([1], 2.0, tl.float32)
    tmp10 = tmp8 * tmp9
    tmp11 = libdevice.tanh(tmp0)
    tmp12 = tmp10 + tmp11
    tl.store(out_ptr0 + (x0), tmp12, xmask)


# (x * x).sum(-1) on x 64x20000: a looped reduction.
@triton.jit
def triton_red_fused_mul_sum_0(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
    xnumel = 64
    r0_numel = 20000
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x0 = xindex
    _tmp3 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_1 = r0_index
        tmp0 = tl.load(in_ptr0 + (r0_1 + 20000*x0), r0_mask & xmask, eviction_policy='evict_first', other=0.0)
        tmp1 = tmp0 * tmp0
        tmp2 = tl.broadcast_to(tmp1, [XBLOCK, R0_BLOCK])
        tmp4 = _tmp3 + tmp2
        _tmp3 = tl.where(r0_mask & xmask, tmp4, _tmp3)
    tmp3 = tl.sum(_tmp3, 1)[:, None]
    tl.store(out_ptr0 + (x0), tmp3, xmask)
