"""Launching from a plain kernel description (launcher/kernels.py), the HLO runtime's way
in: hand-written OpenCL C, numpy arrays as pointer arguments, and the hidden parameters
of asserts and bounds checks laid out as opencl_abi says, checked against numpy."""

import numpy as np
import pytest

from launcher import KernelArgumentError, KernelDescription, LoadedKernel
from launcher.bounds import OutOfBoundsError
from opencl_abi import (ASSERT_ID, ASSERT_PROGRAM_ID, BOUNDS_CLAIMED, BOUNDS_COUNT, BOUNDS_INDEX_HIGH,
                        BOUNDS_INDEX_LOW, BOUNDS_SITE, BoundsSite)

SCALE_ADD = """
__kernel void scale_add(__global const float* x, __global const float* y, __global float* out,
                        long n) {
  long i = get_global_id(0);
  if (i < n) out[i] = 2.0f * x[i] + y[i];
}
"""
SCALE_ADD_PARAMS = (("x", "*fp32"), ("y", "*fp32"), ("out", "*fp32"), ("n", "i64"))
SCALE_ADD_TYPES = ("__global float*", "__global float*", "__global float*", "long")


def scale_add(**extra):
    return LoadedKernel(KernelDescription("scale_add", SCALE_ADD, SCALE_ADD_TYPES, SCALE_ADD_PARAMS,
                                          (8, 1, 1), **extra))


def test_numpy_arrays_are_passed_as_they_are():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32)
    out = np.zeros_like(x)
    scale_add().launch((125,), x, y, out, x.size)
    np.testing.assert_allclose(out, 2 * x + y, rtol=1e-6)


def test_an_array_that_is_not_contiguous_is_named():
    x = np.zeros((16, 2), np.float32)[:, 0]
    out = np.zeros(16, np.float32)
    with pytest.raises(KernelArgumentError, match=r"argument 'x'.*scale_add.*not C-contiguous"):
        scale_add().launch((2,), x, out, out, 16)


def test_a_description_whose_parameters_do_not_match_the_source_is_refused():
    kernel = LoadedKernel(KernelDescription("scale_add", SCALE_ADD, SCALE_ADD_TYPES, SCALE_ADD_PARAMS[:3]))
    out = np.zeros(8, np.float32)
    with pytest.raises(KernelArgumentError, match="has 4 OpenCL parameters"):
        kernel.launch((1,), out, out, out)


CHECK_POSITIVE = f"""
__kernel void check_positive(__global const float* x, __global int* record) {{
  size_t i = get_global_id(0);
  if (!(x[i] > 0.0f) && atomic_cmpxchg(&record[{ASSERT_ID}], 0, 1) == 0) {{
    record[{ASSERT_PROGRAM_ID}] = (int)get_group_id(0);
    record[{ASSERT_PROGRAM_ID} + 1] = (int)get_group_id(1);
    record[{ASSERT_PROGRAM_ID} + 2] = (int)get_group_id(2);
  }}
}}
"""


def test_a_failed_assert_is_reported_from_the_record_the_abi_describes():
    kernel = LoadedKernel(KernelDescription(
        "check_positive", CHECK_POSITIVE, ("__global float*", "__global int*"), (("x", "*fp32"),),
        (4, 1, 1), asserts=(["model.py", 12, "x must be positive"],)))
    x = np.ones(16, np.float32)
    kernel.launch((4,), x)  # nothing fails
    x[9] = -1.0
    with pytest.raises(AssertionError, match=r"check_positive: model\.py:12: x must be positive "
                                             r"\(program id \(2, 0, 0\)\)"):
        kernel.launch((4,), x)


COPY_CHECKED = f"""
__kernel void copy_checked(__global const float* x, __global float* out, long n,
                           long x_extent, long out_extent, __global int* err) {{
  long i = get_global_id(0);
  if (i >= n) return;
  if (i >= x_extent) {{
    atomic_inc(&err[{BOUNDS_COUNT}]);
    if (atomic_cmpxchg(&err[{BOUNDS_CLAIMED}], 0, 1) == 0) {{
      err[{BOUNDS_SITE}] = 0;
      err[{BOUNDS_INDEX_LOW}] = (int)(i & 0xffffffffL);
      err[{BOUNDS_INDEX_HIGH}] = (int)(i >> 32);
    }}
    return;
  }}
  if (i < out_extent) out[i] = x[i];
}}
"""


def test_an_out_of_bounds_access_is_reported_from_the_record_the_abi_describes():
    site = BoundsSite(param=0, access="load", op="memref.load", path="model.py", line=7)
    kernel = LoadedKernel(KernelDescription(
        "copy_checked", COPY_CHECKED,
        ("__global float*", "__global float*", "long", "long", "long", "__global int*"),
        (("x", "*fp32"), ("out", "*fp32"), ("n", "i64")), (1, 1, 1),
        bounds={"params": [0, 1], "sites": [site.as_dict()]}))
    x, out = np.arange(10, dtype=np.float32), np.zeros(16, np.float32)
    kernel.launch((10,), x, out, 10)
    np.testing.assert_array_equal(out[:10], x)
    with pytest.raises(OutOfBoundsError, match=r"out-of-bounds load of argument 'x' \(kernel parameter 0\) "
                                               r"at element index 1\d, but the buffer holds 10 elements.*"
                                               r"model\.py:7.*6 access\(es\)") as caught:
        kernel.launch((16,), x, out, 16)
    assert caught.value.argument == "x" and caught.value.count == 6 and 10 <= caught.value.index < 16
