"""Quirk uniform_loop_after_branch (PoCL 3.1): PoCL computed GPU-shaped float32
attention (tutorial 06, 128 x 64, num_warps 4) wrong: the row maxima M came out -inf
and the outputs NaN or far off. Intel's runtime, Oclgrind (--data-races, no race) and
PoCL with -cl-opt-disable compute the same OpenCL C right (M[0] = 7.810274 on the
recorded launch).

Cause (PoCL's kernel IR, POCL_LEAVE_KERNEL_COMPILER_TEMP_FILES): PoCL's implicit loop
barriers make the loop of 8 rounds over every work-item's slice of the __local acc tile
(`for (j = 0; j < 8; ++j)`: its trip count is the same for every work-item) a loop
holding barriers. The code between the previous barrier and that loop is a branch on
the work-item (the distributed loops `for (j = lid; j < 16; j += 128)`, guarded by
`lid < 16`) that sums l_ij into the private tile4; in the work-group function that
region is gone (the alpha region's work-item loop runs straight into the 8-round loop's),
so tile4's replicated context is read uninitialized and l_i = l_i * alpha + l_ij is
garbage (0: M = m_i + log2(l_i) = -inf). The same loss as quirk
barrier_loop_after_branch, with barriers PoCL adds itself. Why the trip count of the
K/V loop must be an argument (constant ones are right) is not known; LLVM's unrolling
changes the regions.

Reduced from the launch's OpenCL C (one work-group of 128 work-items, the K/V loop
over N_CTX = 128 in steps of 32). Workaround (memref_stage/work_group_barriers.py,
`_enter_uniform_loops_after_a_barrier`): such a loop gets a barrier before it; FENCED
here. The plain form is wrong only where the quirk applies (a release that computes it
right gets `fixed_in` in the record); the fenced form is right everywhere.
"""
import numpy as np
import pyopencl as cl
import pytest

from launcher.device import device_runtime
from triton_spirv.target import QUIRKS

QUIRK = "uniform_loop_after_branch"

N_CTX, HEAD_DIM, SM_SCALE = 128, 64, 0.5

REDUCED = r"""
__attribute__((reqd_work_group_size(128, 1, 1)))
__kernel void attn_fwd(float sm_scale, __global float* M, int H, __global float* desc_q, __global float* desc_k, __global float* desc_v, __global float* desc_o, int N_CTX) {
  __local float tile0[64];  // 06-fused-attention.py:240: l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
  __local float l_i_tile[64];  // 06-fused-attention.py:240: l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
  float m_i_tile[1 * 4];
  __local float tile1[64 * 32];  // 06-fused-attention.py:251: acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q,  #
  __local float acc_tile[64 * 64];  // 06-fused-attention.py:108: acc = acc * alpha[:, None]
  float tile2[8 * 1 * 4];
  __local float q_tile[64 * 65];  // 06-fused-attention.py:246: q = desc_q.load([qo_offset_y, 0])
  __local float k_tile[32 * 65];  // 06-fused-attention.py:85: k = desc_k.load([offsetk_y, 0]).T
  __local float qk_tile[64 * 32];  // 06-fused-attention.py:86: qk = tl.dot(q, k)
  float tile3[1 * 4];
  __local float m_ij_tile[64];  // 06-fused-attention.py:93: m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
  float tile4[1 * 4];
  __local float v_tile[32 * 64];  // 06-fused-attention.py:113: v = desc_v.load([offsetv_y, 0])
  long lid_x = get_local_id(0);
  for (long i = lid_x; i < 16; i += 128) {
    vstore4((float4)(1.0f), 0, l_i_tile + (i * 4));
  }
  for (long i = lid_x; i < 16; i += 128) {
    vstore4((float4)((-INFINITY)), 0, m_i_tile + (((long)((ulong)(i - lid_x) / (ulong)128)) * 4));
  }
  for (long i = 0; i < 8; ++i) {
    vstore4((float4)(0.0f), 0, tile2 + i * 4);
  }
  long pid_x = get_group_id(0);
  int start_m = (int)pid_x;
  long pid_y = get_group_id(1);
  int off_hz = (int)pid_y;
  bool v0 = H == 0;
  bool v1 = H == (-1);
  bool v2 = v0 | v1;
  int v3 = v2 ? 1 : H;
  int off_z = v1 ? ((int)((uint)0 - (uint)off_hz)) : (off_hz / v3);
  int off_h = v1 ? 0 : (off_hz % v3);
  int y_dim = (int)((uint)H * (uint)N_CTX);
  int offset_y = (int)((uint)((int)((uint)off_z * (uint)y_dim)) + (uint)((int)((uint)off_h * (uint)N_CTX)));
  int v4 = (int)((uint)start_m * (uint)64);
  int qo_offset_y = (int)((uint)offset_y + (uint)v4);
  long offs_m = (long)v4;
  float qk_scale = sm_scale * 1.442695f;
  long qo_offset_y_1 = (long)qo_offset_y;
  long v5 = qo_offset_y_1 * 64;
  long mask_bound = 0 - qo_offset_y_1;
  long y_dim_1 = (long)y_dim;
  long mask_bound_1 = y_dim_1 - qo_offset_y_1;
  long v6 = min(max(mask_bound, 0L), 64L);
  long extent = min(max(mask_bound_1, v6), 64L) - v6;
  bool v7 = v6 != 0;
  bool v8 = extent != 64;
  bool is_partial = v7 | v8;
    barrier(CLK_LOCAL_MEM_FENCE);
  event_t ev = 0;
  for (long r = 0; r < extent; ++r) {
    ev = async_work_group_copy(q_tile + (v6 * 65 + r * 65), desc_q + (v5 + v6 * 64 + r * 64), 64, ev);
  }
  if (extent > 0) wait_group_events(1, &ev);
  int offsetk_y = offset_y;
  int offsetv_y = offset_y;
  for (int i = 0; i < N_CTX; i += 32) {
    long offsetk_y_1 = (long)offsetk_y;
    long mask_bound_2 = 0 - offsetk_y_1;
    long mask_bound_3 = y_dim_1 - offsetk_y_1;
    long v9 = min(max(mask_bound_2, 0L), 32L);
    long extent_1 = min(max(mask_bound_3, v9), 32L) - v9;
    bool v10 = v9 != 0;
    bool v11 = extent_1 != 32;
    bool is_partial_1 = v10 | v11;
        barrier(CLK_LOCAL_MEM_FENCE);
    event_t ev_1 = 0;
    for (long r = 0; r < extent_1; ++r) {
      ev_1 = async_work_group_copy(k_tile + (v9 * 65 + r * 65), desc_k + ((offsetk_y_1 * 64) + v9 * 64 + r * 64), 64, ev_1);
    }
    if (extent_1 > 0) wait_group_events(1, &ev_1);
    for (long j = (lid_x * 4); j < 2048; j += 512) {
      for (long k = 0; k < 4; ++k) {
        long v12 = j + k;
        long v13 = (ulong)v12 % (ulong)32;
        long v14 = (ulong)v12 / (ulong)32;
        float k_elem = k_tile[v13 * 65 + v14];
        tile1[v14 * 32 + v13] = k_elem;
      }
    }
    for (long j = lid_x; j < 512; j += 128) {
      vstore4((float4)(0.0f), 0, qk_tile + (((long)((ulong)j / (ulong)8)) * 32 + (((long)((ulong)j % (ulong)8)) * 4)));
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (long j = lid_x; j < 128; j += 128) {
      long v15 = ((long)((ulong)j / (ulong)4)) * 2;
      long row = ((long)((ulong)j % (ulong)4)) * 8;
      long row_1 = v15 + 1;
      float8 qk_vec = vload8(0, qk_tile + (v15 * 32 + row));
      float8 qk_vec_1 = vload8(0, qk_tile + (row_1 * 32 + row));
      float8 acc = qk_vec;
      float8 acc_1 = qk_vec_1;
      for (long k = 0; k < 64; ++k) {
        float q_elem = q_tile[v15 * 65 + k];
        float8 tile1_vec = vload8(0, tile1 + (k * 32 + row));
        float8 q_elem_splat = (float8)(q_elem);
        float8 acc_2 = fma(q_elem_splat, tile1_vec, acc);
        float q_elem_1 = q_tile[row_1 * 65 + k];
        float8 q_elem_1_splat = (float8)(q_elem_1);
        float8 acc_3 = fma(q_elem_1_splat, tile1_vec, acc_1);
        acc = acc_2;
        acc_1 = acc_3;
      }
      vstore8(acc, 0, qk_tile + (v15 * 32 + row));
      vstore8(acc_1, 0, qk_tile + (row_1 * 32 + row));
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (long j = lid_x; j < 16; j += 128) {
      long v16 = (ulong)(j - lid_x) / (ulong)128;
      long v17 = j * 4;
      for (long k = 0; k < 4; ++k) {
        float qk_elem = qk_tile[(v17 + k) * 32];
        tile3[v16 * 4 + k] = qk_elem;
      }
    }
    for (long j = lid_x; j < 16; j += 128) {
      long v18 = (ulong)(j - lid_x) / (ulong)128;
      long v19 = j * 4;
      for (long k = 0; k < 4; ++k) {
        long v20 = v19 + k;
        for (long l = 0; l < 31; ++l) {
          float qk_elem = qk_tile[1 + v20 * 32 + l];
          float tile3_elem = tile3[v18 * 4 + k];
          float v21 = fmax(tile3_elem, qk_elem);
          tile3[v18 * 4 + k] = v21;
        }
      }
    }
    float4 qk_scale_splat = (float4)(qk_scale);
    for (long j = lid_x; j < 16; j += 128) {
      long v22 = (ulong)(j - lid_x) / (ulong)128;
      float4 m_i_vec = vload4(0, m_i_tile + v22 * 4);
      float4 tile3_vec = vload4(0, tile3 + v22 * 4);
      float4 v23 = tile3_vec * qk_scale_splat;
      float4 m_ij = fmax(m_i_vec, v23);
      vstore4(m_ij, 0, m_ij_tile + (j * 4));
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (long j = lid_x; j < 64; j += 128) {
      for (long k = 0; k < 32; k += 4) {
        float4 qk_vec = vload4(0, qk_tile + (j * 32 + k));
        float m_ij_elem = m_ij_tile[j];
        float4 v24 = qk_vec * qk_scale_splat;
        float4 m_ij_elem_splat = (float4)(m_ij_elem);
        float4 qk = v24 - m_ij_elem_splat;
        float4 p = exp2(qk);
        vstore4(p, 0, tile1 + (j * 32 + k));
      }
    }
    for (long j = lid_x; j < 16; j += 128) {
      long v25 = j * 4;
      float4 m_i_vec = vload4(0, m_i_tile + (((long)((ulong)(j - lid_x) / (ulong)128)) * 4));
      float4 m_ij_vec = vload4(0, m_ij_tile + v25);
      float4 v26 = m_i_vec - m_ij_vec;
      float4 alpha = exp2(v26);
      vstore4(alpha, 0, tile0 + v25);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (long j = lid_x; j < 16; j += 128) {
      long v27 = (ulong)(j - lid_x) / (ulong)128;
      long v28 = j * 4;
      for (long k = 0; k < 4; ++k) {
        float tile1_elem = tile1[(v28 + k) * 32];
        tile4[v27 * 4 + k] = tile1_elem;
      }
    }
    for (long j = lid_x; j < 16; j += 128) {
      long v29 = (ulong)(j - lid_x) / (ulong)128;
      long v30 = j * 4;
      for (long k = 0; k < 4; ++k) {
        long v31 = v30 + k;
        for (long l = 0; l < 31; ++l) {
          float tile1_elem = tile1[1 + v31 * 32 + l];
          float tile4_elem = tile4[v29 * 4 + k];
          float v32 = tile4_elem + tile1_elem;
          tile4[v29 * 4 + k] = v32;
        }
      }
    }
#ifdef FENCED
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    for (long j = 0; j < 8; ++j) vstore4((float4)(0.0f), 0, acc_tile + (j * 128 + lid_x) * 4);
    for (long j = lid_x; j < 16; j += 128) {
      long v39 = j * 4;
      float4 l_i_vec = vload4(0, l_i_tile + v39);
      float4 tile0_vec = vload4(0, tile0 + v39);
      float4 tile4_vec = vload4(0, tile4 + (((long)((ulong)(j - lid_x) / (ulong)128)) * 4));
      float4 v40 = l_i_vec * tile0_vec;
      float4 l_i = v40 + tile4_vec;
      vstore4(l_i, 0, tile0 + v39);
    }
    int offsetk_y_2 = (int)((uint)offsetk_y + (uint)32);
    int offsetv_y_2 = (int)((uint)offsetv_y + (uint)32);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (long j = lid_x; j < 64; j += 128) {
      float tile0_elem = tile0[j];
      l_i_tile[j] = tile0_elem;
    }
    for (long j = lid_x; j < 16; j += 128) {
      float4 m_ij_vec = vload4(0, m_ij_tile + (j * 4));
      vstore4(m_ij_vec, 0, m_i_tile + (((long)((ulong)(j - lid_x) / (ulong)128)) * 4));
    }
    offsetk_y = offsetk_y_2;
    offsetv_y = offsetv_y_2;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (long i = lid_x; i < 16; i += 128) {
    long v42 = i * 4;
    float4 m_i_vec = vload4(0, m_i_tile + (((long)((ulong)(i - lid_x) / (ulong)128)) * 4));
    float4 l_i_vec = vload4(0, l_i_tile + v42);
    float4 v43 = log2(l_i_vec);
    float4 m_i = m_i_vec + v43;
    vstore4(m_i, 0, tile0 + v42);
  }
  for (long i = 0; i < 8; ++i) {
    long v44 = (i * 128) + lid_x;
    long v45 = (ulong)v44 / (ulong)16;
    float4 tile2_vec = vload4(0, tile2 + i * 4);
    float l_i_elem = l_i_tile[v45];
    float4 l_i_elem_splat = (float4)(l_i_elem);
    float4 acc = tile2_vec / l_i_elem_splat;
    vstore4(acc, 0, acc_tile + (v45 * 64 + (((long)((ulong)v44 % (ulong)16)) * 4)));
  }
  long m_ptrs = ((long)((int)((uint)off_hz * (uint)N_CTX))) + offs_m;
  barrier(CLK_LOCAL_MEM_FENCE);
  event_t ev_1 = async_work_group_copy(M + m_ptrs, tile0, 64, 0);
  wait_group_events(1, &ev_1);
  event_t ev_2 = async_work_group_copy(desc_o + (v5 + v6 * 64), acc_tile + v6 * 64, extent * 64, 0);
  wait_group_events(1, &ev_2);
}
"""


def _platforms():
    try:
        platforms = [p for p in cl.get_platforms() if p.get_devices()]
    except cl.Error:   # no OpenCL driver installed
        platforms = []
    return [pytest.param(p, id=device_runtime(p, p.get_devices()[0])[0]) for p in platforms]


def _row_log_sums(platform, options: str = "") -> tuple[np.ndarray, np.ndarray]:
    """M of the reduced kernel for one work-group, and numpy's log2-sum-exp2 of q @ k.T."""
    context = cl.Context(platform.get_devices()[:1])
    queue = cl.CommandQueue(context)
    program = cl.Program(context, REDUCED).build(options=options)
    rng = np.random.default_rng(0)
    rows = 2 * N_CTX   # H = 2 heads of N_CTX rows
    q, k, v = (rng.standard_normal((rows, HEAD_DIM)).astype(np.float32) for _ in range(3))
    m = np.zeros(rows, np.float32)
    o = np.zeros((rows, HEAD_DIM), np.float32)
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    buffers = [cl.Buffer(context, flags, hostbuf=host) for host in (m, q, k, v, o)]
    program.attn_fwd(queue, (128, 1, 1), (128, 1, 1), np.float32(SM_SCALE), buffers[0],
                     np.int32(2), *buffers[1:], np.int32(N_CTX))
    cl.enqueue_copy(queue, m, buffers[0])
    scores = q[:64].astype(np.float64) @ k[:N_CTX].astype(np.float64).T * SM_SCALE * 1.442695
    return m[:64], np.log2(np.exp2(scores).sum(axis=1))


def _right(m: np.ndarray, expected: np.ndarray) -> bool:
    return bool(np.allclose(m, expected, rtol=1e-4, atol=1e-4))


@pytest.mark.parametrize("platform", _platforms())
def test_the_plain_form_is_wrong_only_where_the_quirk_applies(platform):
    m, expected = _row_log_sums(platform)
    applies = QUIRKS[QUIRK].applies(*device_runtime(platform, platform.get_devices()[0]))
    # where it applies, the lost l_i sums: log2 of 0 (-inf) or of garbage
    assert _right(m, expected) != applies, (m[:4], expected[:4])


@pytest.mark.parametrize("platform", _platforms())
def test_the_fenced_form_is_right_everywhere(platform):
    """The workaround's form: a barrier before the 8-round loop."""
    m, expected = _row_log_sums(platform, "-DFENCED")
    np.testing.assert_allclose(m, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("platform", _platforms())
def test_the_plain_form_is_right_unoptimized(platform):
    """The oracle of the reduction: every device, PoCL included, is right unoptimized."""
    m, expected = _row_log_sums(platform, "-cl-opt-disable")
    np.testing.assert_allclose(m, expected, rtol=1e-4, atol=1e-4)
