"""What scripts and libraries written for Triton's GPU backends expect of the runtime:
every pointer argument Triton's own launchers accept (TensorWrapper from
triton.reinterpret, objects with only data_ptr(), raw addresses, null pointers),
launching the kernel that warmup returns, a clear error for a replayed launch without
its constexprs, and the torch-style device helpers of the driver's device interface."""
import pytest
import torch

import triton
import triton.language as tl

from launcher.errors import KernelArgumentError

DEVICE = triton.runtime.driver.active.get_active_torch_device()
BLOCK = 64


@triton.jit
def exponent_bits_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    bits = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, (bits >> 23) & 0xFF, mask=mask)


def test_reinterpreted_tensor_is_a_pointer_argument():
    x = torch.randn(200)
    out = torch.zeros(200, dtype=torch.int32)
    exponent_bits_kernel[(triton.cdiv(200, BLOCK),)](triton.reinterpret(x, tl.uint32), out, 200, BLOCK=BLOCK)
    torch.testing.assert_close(out, (x.view(torch.int32) >> 23) & 0xFF)


def test_reinterpreted_slice_starts_at_its_offset_and_is_bounds_checked():
    x = torch.randn(300)
    out = torch.zeros(100, dtype=torch.int32)
    wrapped = triton.reinterpret(x[150:250], tl.uint32)
    exponent_bits_kernel[(2,)](wrapped, out, 100, BLOCK=BLOCK, bounds_check=True)
    torch.testing.assert_close(out, (x[150:250].view(torch.int32) >> 23) & 0xFF)
    with pytest.raises(IndexError, match="x_ptr"):
        exponent_bits_kernel[(2,)](wrapped, out, 101, BLOCK=BLOCK, bounds_check=True)


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def test_reinterpreted_bf16_as_int16_copies_bits():
    x = torch.randn(100).to(torch.bfloat16)
    out = torch.zeros(100, dtype=torch.int16)
    copy_kernel[(2,)](triton.reinterpret(x, tl.int16), out, 100, BLOCK=BLOCK)
    assert torch.equal(out, x.view(torch.int16))


class AddressOnly:
    """All that Triton's CUDA launcher asks of a pointer: data_ptr() (and a dtype for
    specialization)."""

    def __init__(self, tensor):
        self._tensor, self.dtype = tensor, tensor.dtype

    def data_ptr(self):
        return self._tensor.data_ptr()


def test_object_with_only_data_ptr_is_a_pointer_argument():
    x = torch.randn(100)
    out = torch.zeros(100)
    copy_kernel[(2,)](AddressOnly(x), AddressOnly(out), 100, BLOCK=BLOCK)
    assert torch.equal(out, x)


def test_compiled_kernel_takes_raw_addresses_and_null_pointers():
    x, out = torch.randn(100), torch.zeros(100)
    compiled = copy_kernel.warmup(x, out, 100, BLOCK=BLOCK, grid=(2,))
    compiled[(2, 1, 1)](x.data_ptr(), out.data_ptr(), 100, BLOCK)
    assert torch.equal(out, x)
    out.zero_()
    compiled[(2, 1, 1)](x, None, 0, BLOCK)   # a null pointer the kernel never dereferences
    assert torch.equal(out, torch.zeros(100))


def test_warmup_then_launch_the_compiled_kernel():
    x, out = torch.randn(1000), torch.empty(1000)
    compiled = copy_kernel.warmup(torch.float32, torch.float32, 1000, BLOCK=256, grid=(4,))
    compiled[(4, 1, 1)](x, out, 1000, 256)   # constexprs too, in signature order
    assert torch.equal(out, x)


def test_replayed_launch_without_constexprs_names_the_count():
    x, out = torch.randn(100), torch.empty(100)
    compiled = copy_kernel.warmup(x, out, 100, BLOCK=BLOCK, grid=(2,))
    with pytest.raises(KernelArgumentError, match=r"takes 4 arguments \(constexprs included\), got 3"):
        compiled[(2, 1, 1)](x, out, 100)


def test_torch_style_device_helpers_of_the_device_interface():
    di = triton.runtime.driver.active.get_device_interface()
    assert di.current_device() == 0 and di.device_count() == 1 and di.is_available()
    assert isinstance(di.get_device_name(), str) and di.get_device_name()
    props = di.get_device_properties(0)
    assert props.multi_processor_count >= 1 and props.total_memory > 0
    x, out = torch.randn(100, device=DEVICE), torch.empty(100, device=DEVICE)
    with di.device(0):
        copy_kernel[(2,)](x, out, 100, BLOCK=BLOCK)
    assert torch.equal(out, x)
    with pytest.raises(ValueError, match="index 1 does not exist"):
        di.device(1)


def test_printf_fifo_size_hook_exists():
    utils = triton.runtime.driver.active.utils
    utils.set_printf_fifo_size(1 << 20)
    with pytest.raises(ValueError, match="positive int"):
        utils.set_printf_fifo_size(0)
