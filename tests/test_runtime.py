"""What Triton's runtime asks of the active driver, exercised the way scripts written
for Triton's GPU backends use it: autotune and heuristics, warmup and the metadata of
compiled kernels, device properties, the benchmarking utilities, perf_report, and
the launcher's handling of host tensor descriptors and global scratch memory.
"""
import ctypes
from types import SimpleNamespace

import pytest
import torch

import triton
import triton.language as tl
import triton.testing
from triton.runtime import _allocation
from triton.runtime import driver as triton_driver
from triton.tools.tensor_descriptor import TensorDescriptor

from launcher import OpenCLLauncher, load_binary, pack_clbin

DEVICE = triton.runtime.driver.active.get_active_torch_device()

# Short benchmark windows: these tests check that timing works, not what it measures.
FAST_BENCH = dict(warmup=1, rep=5)


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)


def fast_benchmarker(kernel_call, quantiles):
    return triton.testing.do_bench(kernel_call, quantiles=quantiles, **FAST_BENCH)


# ---------------------------------------------------------------------------------------
# Autotune and heuristics


def other_backends_configs():
    """Configs as GPU scripts write them, with options of the CUDA and HIP backends."""
    return [
        triton.Config({"BLOCK": 64}, num_warps=2, num_stages=2),
        triton.Config({"BLOCK": 256, "waves_per_eu": 2, "matrix_instr_nonkdim": 16, "kpack": 2}, num_warps=8,
                      num_stages=3),
        triton.Config({"BLOCK": 1024}, num_warps=4, num_stages=4, maxnreg=128),
    ]


def test_autotune_picks_a_config_and_matches_torch():
    kernel = triton.autotune(configs=other_backends_configs(), key=["n"], do_bench=fast_benchmarker)(scale_kernel)
    x = torch.randn(5000, device=DEVICE)
    out = torch.empty_like(x)
    kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]), )](x, out, x.numel(), 3.0)
    torch.testing.assert_close(out, x * 3.0)
    assert kernel.best_config in kernel.configs
    timings = kernel.configs_timings
    assert set(timings) == set(kernel.configs)
    assert all(t[0] > 0 for t in timings.values())


def test_autotune_with_the_drivers_benchmarker():
    """Without do_bench=, the autotuner asks the driver for its benchmarker."""
    configs = [triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 512})]
    kernel = triton.autotune(configs=configs, key=["n"])(scale_kernel)
    assert kernel.do_bench is triton_driver.active.get_benchmarker()
    x = torch.randn(3000, device=DEVICE)
    out = torch.empty_like(x)
    kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]), )](x, out, x.numel(), 0.5)
    torch.testing.assert_close(out, x * 0.5)
    assert kernel.best_config in configs


def test_autotune_prunes_configs_before_benchmarking():
    configs = [triton.Config({"BLOCK": b}) for b in (32, 64, 128, 256, 512)]
    seen = []

    def early_prune(configs, named_args, **kwargs):
        seen.append(named_args["n"])
        return [c for c in configs if c.kwargs["BLOCK"] >= 128]

    def perf_model(**kwargs):  # the larger the block, the faster: keeps the two largest
        return 1.0 / kwargs["BLOCK"]

    kernel = triton.autotune(configs=configs, key=["n"], do_bench=fast_benchmarker,
                             prune_configs_by={"early_config_prune": early_prune, "perf_model": perf_model,
                                               "top_k": 2})(scale_kernel)
    x = torch.randn(2048, device=DEVICE)
    out = torch.empty_like(x)
    kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]), )](x, out, x.numel(), 2.0)
    torch.testing.assert_close(out, x * 2.0)
    assert seen == [2048]
    assert sorted(c.kwargs["BLOCK"] for c in kernel.configs_timings) == [256, 512]


@triton.jit
def accumulate_kernel(acc_ptr, x_ptr, n, BLOCK: tl.constexpr):
    """acc += x: running it once per benchmarked config would corrupt acc."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.load(acc_ptr + offs, mask=mask)
    tl.store(acc_ptr + offs, acc + tl.load(x_ptr + offs, mask=mask), mask=mask)


def test_autotune_restore_value_keeps_in_place_results():
    configs = [triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 256})]
    kernel = triton.autotune(configs=configs, key=["n"], restore_value=["acc_ptr"],
                             do_bench=fast_benchmarker)(accumulate_kernel)
    acc = torch.randn(1000, device=DEVICE)
    x = torch.randn(1000, device=DEVICE)
    expected = acc + x
    kernel[lambda meta: (triton.cdiv(1000, meta["BLOCK"]), )](acc, x, 1000)
    torch.testing.assert_close(acc, expected)


def test_autotune_reset_to_zero():
    configs = [triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 512})]
    kernel = triton.autotune(configs=configs, key=["n"], reset_to_zero=["acc_ptr"],
                             do_bench=fast_benchmarker)(accumulate_kernel)
    acc = torch.full((700, ), 5.0, device=DEVICE)  # zeroed before each run, so 5 is lost
    x = torch.randn(700, device=DEVICE)
    kernel[lambda meta: (triton.cdiv(700, meta["BLOCK"]), )](acc, x, 700)
    torch.testing.assert_close(acc, x)


@triton.heuristics({
    "BLOCK": lambda args: triton.next_power_of_2(args["n"]) if args["n"] <= 1024 else 1024,
    "EVEN": lambda args: args["n"] % 1024 == 0,
})
@triton.jit
def heuristic_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) + 1.0)
    else:
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1.0, mask=mask)


@pytest.mark.parametrize("n", [300, 4096, 5000])
def test_heuristics_choose_constexprs(n):
    x = torch.randn(n, device=DEVICE)
    out = torch.empty_like(x)
    heuristic_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]), )](x, out, n)
    torch.testing.assert_close(out, x + 1.0)


def test_heuristics_over_autotune():
    kernel = triton.heuristics({"factor": lambda args: 4.0})(triton.autotune(
        configs=[triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 256})], key=["n"],
        do_bench=fast_benchmarker)(scale_kernel))
    x = torch.randn(999, device=DEVICE)
    out = torch.empty_like(x)
    kernel[lambda meta: (triton.cdiv(999, meta["BLOCK"]), )](x, out, 999)
    torch.testing.assert_close(out, x * 4.0)


# ---------------------------------------------------------------------------------------
# warmup and the metadata of compiled kernels


@triton.jit
def row_softmax_kernel(out_ptr, in_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        cols = tl.arange(0, BLOCK)
        x = tl.load(in_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * n_cols + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)


def test_warmup_metadata_feeds_the_occupancy_formula():
    """What the fused-softmax tutorial does to size its persistent grid."""
    x = torch.randn(37, 100, device=DEVICE)
    y = torch.empty_like(x)
    num_warps = 8
    kernel = row_softmax_kernel.warmup(y, x, 37, 100, BLOCK=128, num_warps=num_warps, num_stages=2, grid=(1, ))
    kernel._init_handles()
    assert kernel.n_regs >= 1 and kernel.n_spills >= 0
    assert kernel.metadata.shared >= 1 and kernel.metadata.num_warps == num_warps

    props = triton.runtime.driver.active.utils.get_device_properties(DEVICE.index)
    occupancy = props["max_num_regs"] // (kernel.n_regs * props["warpSize"] * num_warps)
    occupancy = min(occupancy, props["max_shared_mem"] // kernel.metadata.shared)
    num_programs = min(props["multiprocessor_count"] * occupancy, 37)
    assert isinstance(num_programs, int) and num_programs >= 1

    kernel[(num_programs, 1, 1)](y, x, 37, 100, 128)
    torch.testing.assert_close(y, torch.softmax(x, dim=1))


def test_warmup_with_dtypes_instead_of_tensors():
    kernel = scale_kernel.warmup(torch.float16, torch.float16, 64, 1.0, BLOCK=64, grid=(1, ))
    assert kernel.metadata.name == "scale_kernel" and "cl" in kernel.asm
    kernel._init_handles()  # n_regs is known once the binary is loaded, as on GPUs
    assert kernel.n_regs >= 1


def test_empty_kernel_reports_some_shared_memory():
    @triton.jit
    def store_one(out_ptr):
        tl.store(out_ptr, 1.0)

    out = torch.zeros(1, device=DEVICE)
    compiled = store_one[(1, )](out)
    assert out.item() == 1.0 and compiled.metadata.shared >= 1


# ---------------------------------------------------------------------------------------
# The driver's device facts and utilities


def test_device_properties_as_tutorials_read_them():
    import pyopencl as cl

    from launcher import get_device

    props = triton.runtime.driver.active.utils.get_device_properties(DEVICE.index)
    for key in ("multiprocessor_count", "max_num_regs", "max_shared_mem", "warpSize", "sm_clock_rate",
                "mem_clock_rate", "mem_bus_width"):
        assert isinstance(props[key], int) and props[key] > 0, key
    device = get_device().device
    assert props["multiprocessor_count"] == device.get_info(cl.device_info.MAX_COMPUTE_UNITS)
    assert props["max_shared_mem"] == device.get_info(cl.device_info.LOCAL_MEM_SIZE)
    props["multiprocessor_count"] = -1  # a copy: the driver's cache is untouched
    assert triton.runtime.driver.active.utils.get_device_properties(0)["multiprocessor_count"] > 0
    with pytest.raises(ValueError):
        triton.runtime.driver.active.utils.get_device_properties(1)


def test_current_device_and_target():
    active = triton.runtime.driver.active
    target = active.get_current_target()
    assert (target.backend, target.warp_size) == ("opencl", 1) and target.arch
    assert active.get_current_device() == 0
    assert active.get_current_stream(0) == 0
    assert active.get_device_capability() == (0, 0)


def test_device_interface():
    di = triton.runtime.driver.active.get_device_interface()
    start, end = di.Event(enable_timing=True), di.Event(enable_timing=True)
    x = torch.randn(4096, device=DEVICE)
    out = torch.empty_like(x)
    stream = di.Stream()
    with di.stream(stream):
        start.record()
        scale_kernel[(4, )](x, out, 4096, 2.0, BLOCK=1024)
        end.record()
    di.synchronize()
    stream.synchronize()
    assert start.elapsed_time(end) > 0
    assert di.current_stream() is di.default_stream()
    torch.testing.assert_close(out, x * 2.0)


def test_benchmark_cache_and_benchmarker():
    active = triton.runtime.driver.active
    cache = active.get_empty_cache_for_benchmark()
    cache.fill_(7)
    active.clear_cache(cache)
    assert cache.numel() * cache.element_size() >= 16 * 2**20 and int(cache.abs().max()) == 0
    x = torch.randn(10000, device=DEVICE)
    out = torch.empty_like(x)
    ms = active.get_benchmarker()(lambda: scale_kernel[(10, )](x, out, 10000, 1.5, BLOCK=1024),
                                  quantiles=[0.5, 0.2, 0.8], **FAST_BENCH)
    assert len(ms) == 3 and all(t > 0 for t in ms)
    torch.testing.assert_close(out, x * 1.5)


def test_do_bench_and_cudagraph_fallback():
    x = torch.randn(10000, device=DEVICE)
    out = torch.empty_like(x)

    def run():
        scale_kernel[(10, )](x, out, 10000, 2.5, BLOCK=1024)

    assert triton.testing.do_bench(run, **FAST_BENCH) > 0
    median, low, high = triton.testing.do_bench(run, quantiles=[0.5, 0.2, 0.8], **FAST_BENCH)
    assert 0 < low <= median <= high
    assert triton.testing.do_bench_cudagraph(run, rep=5) > 0
    assert len(triton.testing.do_bench(run, return_mode="all", **FAST_BENCH)) >= 1
    torch.testing.assert_close(out, x * 2.5)


def test_perf_report_two_points(capsys):
    @triton.testing.perf_report(
        triton.testing.Benchmark(x_names=["size"], x_vals=[1024, 8192], line_arg="provider",
                                 line_vals=["triton", "torch"], line_names=["Triton", "Torch"], ylabel="GB/s",
                                 plot_name="scale-performance", args={}))
    def bench(size, provider):
        x = torch.randn(size, device=DEVICE)
        out = torch.empty_like(x)
        if provider == "triton":
            fn = lambda: scale_kernel[(triton.cdiv(size, 1024), )](x, out, size, 2.0, BLOCK=1024)
        else:
            fn = lambda: torch.mul(x, 2.0, out=out)
        ms, min_ms, max_ms = triton.testing.do_bench(fn, quantiles=[0.5, 0.2, 0.8], **FAST_BENCH)
        gbps = lambda ms: 2 * x.numel() * x.element_size() * 1e-9 / (ms * 1e-3)
        return gbps(ms), gbps(max_ms), gbps(min_ms)

    df = bench.run(print_data=True, show_plots=False, return_df=True)
    assert list(df["size"]) == [1024, 8192]
    assert (df["Triton (GB/s)"] > 0).all() and (df["Torch (GB/s)"] > 0).all()
    assert "scale-performance:" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------
# The launcher: host tensor descriptors and global scratch (hand-written OpenCL C, so
# these do not depend on what the compiler supports)

DESCRIPTOR_SOURCE = """
__kernel void describe(__global float* base, long shape0, long shape1, long stride0, long stride1,
                       uchar padding_nan, uchar round_tf32, int shape0_again, int shape1_again,
                       long stride0_again, long stride1_again, __global long* out) {
    out[0] = shape0; out[1] = shape1; out[2] = stride0; out[3] = stride1;
    out[4] = padding_nan; out[5] = round_tf32; out[6] = shape0_again; out[7] = shape1_again;
    out[8] = stride0_again; out[9] = stride1_again;
    out[10] = (long)base[stride0 + 2];  // element [1, 2]
}
"""
DESCRIPTOR_ARG_TYPES = (["__global float*"] + ["long"] * 4 + ["uchar"] * 2 + ["int"] * 2 + ["long"] * 2
                        + ["__global long*"])


def fake_source(signature):
    return SimpleNamespace(signature=dict(signature), constants={}, fn=SimpleNamespace(arg_names=list(signature)))


def load_hand_written(name, source, arg_types):
    clbin = pack_clbin(name, source, arg_types)
    return load_binary(name, clbin, 0, 0)[1]


def launch(run, function, grid, *args):
    """The call CompiledKernel's runner makes."""
    run(*grid, 0, function, (4, 1, 1), None, None, None, *args)


def test_host_tensor_descriptor_is_decomposed():
    function = load_hand_written("describe", DESCRIPTOR_SOURCE, DESCRIPTOR_ARG_TYPES)
    run = OpenCLLauncher(fake_source({"desc": "tensordesc<fp32[4, 8]>", "out": "*i64"}),
                         SimpleNamespace(name="describe"))
    base = torch.arange(6 * 16, dtype=torch.float32).reshape(6, 16)
    desc = TensorDescriptor.from_tensor(base, block_shape=[4, 8])
    out = torch.zeros(11, dtype=torch.int64)
    launch(run, function, (1, 1, 1), desc, out)
    assert out.tolist() == [6, 16, 16, 1, 0, 0, 6, 16, 16, 1, 18]


SCRATCH_SOURCE = """
__kernel void use_scratch(__global int* out, int n, __global int* scratch) {
    int pid = get_group_id(0);
    scratch[pid * 4] = pid * 10;  // each program owns 16 bytes
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (pid < n) out[pid] = scratch[pid * 4] + 1;
}
"""


@pytest.fixture
def restore_allocator():
    previous = _allocation._allocator.get()
    yield
    triton.set_allocator(previous)


def test_global_scratch_comes_from_the_allocator(restore_allocator):
    function = load_hand_written("use_scratch", SCRATCH_SOURCE, ["__global int*", "int", "__global int*"])
    metadata = SimpleNamespace(name="use_scratch", num_ctas=1, global_scratch_size=16, global_scratch_align=8,
                               profile_scratch_size=0, profile_scratch_align=1)
    run = OpenCLLauncher(fake_source({"out": "*i32", "n": "i32"}), metadata)
    requests, buffers = [], []

    def allocator(size, alignment, stream):
        requests.append((size, alignment, stream))
        buffers.append(torch.full((size // 4, ), -1, dtype=torch.int32, device=DEVICE))
        return buffers[-1]

    triton.set_allocator(allocator)
    out = torch.zeros(5, dtype=torch.int32)
    launch(run, function, (5, 1, 1), out, 5)
    assert requests == [(5 * 16, 8, 0)]
    assert out.tolist() == [1, 11, 21, 31, 41]
    assert buffers[0].reshape(5, 4)[:, 0].tolist() == [0, 10, 20, 30, 40]


def test_global_scratch_without_an_allocator_says_so(restore_allocator):
    function = load_hand_written("use_scratch", SCRATCH_SOURCE, ["__global int*", "int", "__global int*"])
    metadata = SimpleNamespace(name="use_scratch", global_scratch_size=16, global_scratch_align=8)
    run = OpenCLLauncher(fake_source({"out": "*i32", "n": "i32"}), metadata)
    triton.set_allocator(_allocation.NullAllocator())
    with pytest.raises(RuntimeError, match="set_allocator"):
        launch(run, function, (2, 1, 1), torch.zeros(2, dtype=torch.int32), 2)


def test_profile_scratch_defaults_to_zeroed_host_memory():
    function = load_hand_written("use_scratch", SCRATCH_SOURCE, ["__global int*", "int", "__global int*"])
    metadata = SimpleNamespace(name="use_scratch", profile_scratch_size=16, profile_scratch_align=16)
    run = OpenCLLauncher(fake_source({"out": "*i32", "n": "i32"}), metadata)
    out = torch.zeros(3, dtype=torch.int32)
    launch(run, function, (3, 1, 1), out, 3)
    assert out.tolist() == [1, 11, 21]


def test_compiled_kernels_ask_for_no_scratch():
    compiled = scale_kernel.warmup(torch.float32, torch.float32, 64, 1.0, BLOCK=64, grid=(1, ))
    assert compiled.metadata.global_scratch_size == 0 and compiled.metadata.profile_scratch_size == 0


# ---------------------------------------------------------------------------------------
# Tensor descriptors end to end (need the compiler's descriptor support)


@triton.jit
def descriptor_copy_kernel(in_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    src = tl.make_tensor_descriptor(in_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    dst = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    dst.store([pid_m * BM, pid_n * BN], src.load([pid_m * BM, pid_n * BN]) * 2.0)


@triton.jit
def host_descriptor_copy_kernel(src, dst, BM: tl.constexpr, BN: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    dst.store([pid_m * BM, pid_n * BN], src.load([pid_m * BM, pid_n * BN]) + 1.0)


def test_device_descriptors_with_set_allocator(restore_allocator):
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device=DEVICE))
    x = torch.randn(40, 24, device=DEVICE)
    out = torch.zeros_like(x)
    descriptor_copy_kernel[(triton.cdiv(40, 16), triton.cdiv(24, 8))](x, out, 40, 24, BM=16, BN=8)
    torch.testing.assert_close(out, x * 2.0)


def test_host_descriptors_end_to_end():
    x = torch.randn(40, 24, device=DEVICE)
    out = torch.zeros_like(x)
    src = TensorDescriptor.from_tensor(x, block_shape=[16, 8])
    dst = TensorDescriptor.from_tensor(out, block_shape=[16, 8])
    host_descriptor_copy_kernel[(3, 3)](src, dst, BM=16, BN=8)
    torch.testing.assert_close(out, x + 1.0)


def test_host_view_helpers_are_plain_memory():
    """The zeroed buffer handed out for profile scratch is aligned, writable host memory."""
    from launcher.scratch import zeroed_host_buffer

    buf = zeroed_host_buffer(64, 32)
    assert buf.data_ptr() % 32 == 0 and buf.nbytes == 64
    view = (ctypes.c_char * 64).from_address(buf.data_ptr())
    assert bytes(view) == b"\0" * 64


def test_launch_hooks_registered_with_triton_see_each_launch():
    """Hooks added to Triton's launch hook chains are called around each launch with the
    kernel's launch metadata, and no longer once removed."""
    seen = []

    def enter(metadata):  # Triton's LazyDict
        seen.append(("enter", metadata.get()["name"]))

    def leave(metadata):
        seen.append(("exit", metadata.get()["name"]))

    x = torch.rand(100, device=DEVICE)
    out = torch.empty_like(x)
    triton.knobs.runtime.launch_enter_hook.add(enter)
    triton.knobs.runtime.launch_exit_hook.add(leave)
    try:
        scale_kernel[(4,)](x, out, 100, 2.0, BLOCK=32)
    finally:
        triton.knobs.runtime.launch_enter_hook.remove(enter)
        triton.knobs.runtime.launch_exit_hook.remove(leave)
    torch.testing.assert_close(out, x * 2.0)
    assert seen == [("enter", "scale_kernel"), ("exit", "scale_kernel")]
    scale_kernel[(4,)](x, out, 100, 3.0, BLOCK=32)
    torch.testing.assert_close(out, x * 3.0)
    assert len(seen) == 2
