"""Shape contracts on Triton kernels: generated host checks run before every launch."""
import pytest
import torch

import triton
import triton.language as tl

import triton_spirv
from triton_spirv.shapes import ShapeContract, ShapeContractError


@triton_spirv.shapes({"a_ptr": ("M", "K"), "b_ptr": ("K", "N"), "c_ptr": ("M", "N")})
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), tl.float32)
    for k in range(0, K):
        a = tl.load(a_ptr + rows * K + k, mask=rows < M, other=0.0)
        b = tl.load(b_ptr + k * N + cols, mask=cols < N, other=0.0)
        acc += a[:, None] * b[None, :]
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc,
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def run(a, b, c, M=None, N=None, K=None):
    M = a.shape[0] if M is None else M
    K = a.shape[1] if K is None else K
    N = b.shape[1] if N is None else N
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))
    matmul_kernel[grid](a, b, c, M, N, K, BLOCK=16)


@pytest.mark.parametrize("M,N,K", [(1, 1, 1), (17, 33, 5), (40, 24, 70)])
def test_one_kernel_serves_many_sizes(M, N, K):
    a, b = torch.rand(M, K), torch.rand(K, N)
    c = torch.empty(M, N)
    run(a, b, c)
    torch.testing.assert_close(c, a @ b)


def test_sizes_that_specialize_alike_reuse_one_compiled_kernel():
    before = len(matmul_kernel.device_caches[0][0]) if matmul_kernel.device_caches else 0
    for M in (19, 23):  # neither is 1 nor a multiple of 16: the same specialization
        a, b = torch.rand(M, 7), torch.rand(7, 9)
        c = torch.empty(M, 9)
        run(a, b, c)
        torch.testing.assert_close(c, a @ b)
    assert len(matmul_kernel.device_caches[0][0]) - before <= 1


def test_inconsistent_dimension_is_reported_before_launch():
    a, b = torch.rand(8, 64), torch.rand(32, 8)
    c = torch.full((8, 8), 7.0)
    with pytest.raises(triton_spirv.ShapeCheckError) as err:
        run(a, b, c, K=64)
    assert ("kernel 'matmul_kernel': dimension 'K' is not consistent: "
            "a_ptr.shape[1] = 64, b_ptr.shape[0] = 32") in str(err.value)
    assert torch.all(c == 7.0)  # nothing was written


def test_scalar_argument_must_match_its_dimension():
    a, b = torch.rand(8, 4), torch.rand(4, 8)
    c = torch.full((8, 8), 7.0)
    with pytest.raises(triton_spirv.ShapeCheckError, match="argument M = 9, a_ptr.shape\\[0\\] = 8"):
        run(a, b, c, M=9)
    assert torch.all(c == 7.0)


def test_zero_size_and_rank_errors():
    with pytest.raises(triton_spirv.ShapeCheckError, match="dimension 0 \\('M'\\) of 'a_ptr' is 0"):
        run(torch.rand(0, 4), torch.rand(4, 8), torch.empty(0, 8), M=1)
    with pytest.raises(triton_spirv.ShapeCheckError, match="'a_ptr' must have rank 2 \\(M, K\\)"):
        run(torch.rand(16), torch.rand(4, 8), torch.empty(4, 8), M=4, K=4)


def test_contract_errors_at_definition():
    with pytest.raises(ShapeContractError, match="has no argument 'x_ptr'"):
        ShapeContract.make("k", ["a_ptr"], {"x_ptr": ("M",)})
    with pytest.raises(ShapeContractError, match="'1M' is not a dimension"):
        ShapeContract.make("k", ["a_ptr"], {"a_ptr": ("1M",)})
    with pytest.raises(ShapeContractError, match="must be positive"):
        ShapeContract.make("k", ["a_ptr"], {"a_ptr": (0,)})


def test_generated_host_code_is_readable_python():
    source = matmul_kernel.shape_contract.host_source()
    assert source.startswith("def check(args):")
    assert "dimension 'K' is not consistent" in source
    compile(source, "<check>", "exec")


def test_anonymous_dimensions_and_index_width():
    contract = ShapeContract.make("k", ["x_ptr", "y_ptr"], {"x_ptr": ("?", 4), "y_ptr": ("?",)},
                                  index_bits=8)
    check = contract.compile()
    assert check({"x_ptr": torch.empty(3, 4), "y_ptr": torch.empty(5)})
    with pytest.raises(triton_spirv.ShapeCheckError, match="dimension 1 must be 4, got 5"):
        check({"x_ptr": torch.empty(3, 5), "y_ptr": torch.empty(5)})
    with pytest.raises(triton_spirv.ShapeCheckError, match="8-bit index width"):
        check({"x_ptr": torch.empty(3, 4), "y_ptr": torch.empty(200)})
