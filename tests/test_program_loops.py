"""Program loops (triton_spirv/memref_stage/program_loops.py, launcher/program_loops.py):
on CPU targets a work-group runs consecutive programs of the grid's first dimension.
Results against torch for grids the launcher cannot divide evenly, program ids and
numbers of programs in 2-D and 3-D grids, and the kernels that keep one program per
work-group."""
import pytest
import torch

import triton
import triton.language as tl
from launcher.program_loops import MAX_PROGRAMS_PER_GROUP, MIN_GROUPS_PER_UNIT, groups_for
from triton_spirv.target import current_target

DEVICE = triton.runtime.driver.active.get_active_torch_device()
CPU_TARGET = current_target().is_cpu


@triton.jit
def axpy_kernel(a, x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = a * x + y over blocks of BLOCK elements, the last one masked."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    in_bounds = offs < n
    x = tl.load(x_ptr + offs, mask=in_bounds)
    y = tl.load(y_ptr + offs, mask=in_bounds)
    tl.store(out_ptr + offs, a * x + y, mask=in_bounds)


@triton.jit
def program_ids(out_ptr):
    """Each program writes (x, y, z, num_programs(0), (1), (2)) at its linear index."""
    x, y, z = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    nx, ny, nz = tl.num_programs(0), tl.num_programs(1), tl.num_programs(2)
    lanes = tl.arange(0, 8)
    row = (z * ny + y) * nx + x
    values = tl.where(lanes == 0, x, tl.where(lanes == 1, y, tl.where(lanes == 2, z, tl.where(
        lanes == 3, nx, tl.where(lanes == 4, ny, nz)))))
    tl.store(out_ptr + row * 6 + lanes, values, mask=lanes < 6)


@triton.jit
def count_programs(counter_ptr, out_ptr):
    """Takes a ticket from a counter: programs that talk to each other."""
    ticket = tl.atomic_add(counter_ptr, 1)
    tl.store(out_ptr + tl.program_id(0), ticket)


@triton.jit
def print_program(out_ptr):
    tl.device_print("program ", tl.program_id(0))
    tl.store(out_ptr + tl.program_id(0), tl.program_id(0))


@triton.jit
def assert_positive(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.device_assert(x > 0, "x must be positive")
    tl.store(out_ptr + offs, x * 2)


def loops_programs(compiled) -> bool:
    return bool(getattr(compiled.metadata, "program_loop", False))


def expected_ids(grid):
    gx, gy, gz = grid
    x, y, z = torch.meshgrid(torch.arange(gx), torch.arange(gy), torch.arange(gz), indexing="ij")
    columns = [x, y, z, torch.full_like(x, gx), torch.full_like(x, gy), torch.full_like(x, gz)]
    # Rows in (z, y, x) order, as the kernel writes them.
    return torch.stack(columns, -1).permute(2, 1, 0, 3).reshape(-1, 6).to(torch.int32)


@pytest.mark.parametrize("programs", [1, 15, 16, 17, 1000, 1031, 4099, 65537])
@pytest.mark.parametrize("compute_units", [1, 2, 3, 16, 64])
def test_every_program_runs_once(programs, compute_units):
    """The kernel's share per group (ceil(programs / groups)) over the launcher's groups
    covers each program exactly once, within the launcher's limits."""
    groups = groups_for(programs, compute_units)
    per_group = -(-programs // groups)
    runs = [p for g in range(groups) for p in range(g * per_group, min(g * per_group + per_group, programs))]
    assert runs == list(range(programs))
    assert per_group <= MAX_PROGRAMS_PER_GROUP
    if per_group > 1:
        assert groups >= compute_units * MIN_GROUPS_PER_UNIT


def test_small_grids_keep_one_program_per_group():
    assert groups_for(10, 2) == 10
    assert groups_for(2 * MIN_GROUPS_PER_UNIT * 2 - 1, 2) == 2 * MIN_GROUPS_PER_UNIT * 2 - 1


@pytest.mark.skipif(not CPU_TARGET, reason="program loops are for CPU targets")
@pytest.mark.parametrize("size", [1, 1000, 64 * 1031 + 5, 2**20 + 64 * 7 + 3])
def test_axpy_in_program_loops(size):
    x, y = torch.rand(size, device=DEVICE), torch.rand(size, device=DEVICE)
    out = torch.full_like(x, float("nan"))
    compiled = axpy_kernel[(triton.cdiv(size, 64),)](3.0, x, y, out, size, BLOCK=64)
    assert loops_programs(compiled)
    torch.testing.assert_close(out, 3.0 * x + y)
    source = compiled.asm["cl"]
    assert "long num_programs_x)" in source
    assert "for (long program = first_program; program < last_program; ++program) {" in source
    # The tiles are declared once for all the group's programs.
    assert source.index("__local float") < source.index("for (long program")


@pytest.mark.skipif(not CPU_TARGET, reason="program loops are for CPU targets")
def test_one_kernel_serves_grids_of_any_size():
    """The same compiled kernel, launched on grids the launcher divides differently."""
    for size in (64 * 4099, 64 * 17, 64 * 300 + 1):
        x, y = torch.rand(size), torch.rand(size)
        out = torch.empty_like(x)
        compiled = axpy_kernel[(triton.cdiv(size, 64),)](3.0, x, y, out, size, BLOCK=64)
        assert loops_programs(compiled)
        torch.testing.assert_close(out, 3.0 * x + y)


@pytest.mark.parametrize("grid", [(4099, 1, 1), (1000, 3, 1), (257, 2, 3), (1, 5, 2)])
def test_program_ids_and_numbers_of_programs(grid):
    """program_id and num_programs of every dimension as the grid says."""
    out = torch.full((grid[0] * grid[1] * grid[2], 6), -1, dtype=torch.int32)
    compiled = program_ids[grid](out)
    assert loops_programs(compiled) == CPU_TARGET
    assert torch.equal(out, expected_ids(grid))


def test_program_loops_false_keeps_one_program_per_group():
    size = 64 * 1031
    x, y = torch.rand(size), torch.rand(size)
    out = torch.empty_like(x)
    compiled = axpy_kernel[(triton.cdiv(size, 64),)](3.0, x, y, out, size, BLOCK=64, program_loops=False)
    assert not loops_programs(compiled)
    assert "for (long program" not in compiled.asm["cl"]
    torch.testing.assert_close(out, 3.0 * x + y)


def test_gpu_shape_keeps_one_program_per_group():
    out = torch.full((300 * 2, 6), -1, dtype=torch.int32)
    compiled = program_ids[(300, 2, 1)](out, opencl_target="gpu")
    assert not loops_programs(compiled)
    assert torch.equal(out, expected_ids((300, 2, 1)))


def test_atomics_keep_one_program_per_group():
    programs = 1000
    counter = torch.zeros(1, dtype=torch.int32)
    tickets = torch.full((programs,), -1, dtype=torch.int32)
    compiled = count_programs[(programs,)](counter, tickets)
    assert not loops_programs(compiled)
    assert counter.item() == programs
    assert sorted(tickets.tolist()) == list(range(programs))


def test_device_print_keeps_one_program_per_group(capfd):
    out = torch.full((300,), -1, dtype=torch.int32)
    compiled = print_program[(300,)](out)
    assert not loops_programs(compiled)
    assert out.tolist() == list(range(300))
    printed = capfd.readouterr().out.splitlines()
    assert sorted(printed) == sorted(f"pid ({i}, 0, 0)  program: {i}" for i in range(300))


def test_device_assert_keeps_one_program_per_group():
    x = torch.rand(64 * 300) + 0.5
    out = torch.empty_like(x)
    compiled = assert_positive[(300,)](x, out, BLOCK=64, debug=True)
    assert not loops_programs(compiled)
    torch.testing.assert_close(out, x * 2, rtol=0, atol=0)
    # Without debug=True Triton drops the assert, and nothing keeps the loop out.
    assert loops_programs(assert_positive[(300,)](x, out, BLOCK=64)) == CPU_TARGET


def test_bounds_checked_kernels_loop_programs_and_report_accesses():
    """Bounds-checked mode checks the same code: its parameters follow num_programs_x."""
    from launcher.bounds import OutOfBoundsError
    size = 64 * 300 + 1
    x, y = torch.rand(size), torch.rand(size)
    out = torch.empty_like(x)
    compiled = axpy_kernel[(triton.cdiv(size, 64),)](3.0, x, y, out, size, BLOCK=64, bounds_check=True)
    assert loops_programs(compiled) == CPU_TARGET
    torch.testing.assert_close(out, 3.0 * x + y)
    # n beyond the buffers: the first program past them reads out of bounds.
    with pytest.raises(OutOfBoundsError) as raised:
        axpy_kernel[(triton.cdiv(size, 64) + 1,)](3.0, x, y, out, size + 64, BLOCK=64, bounds_check=True)
    assert raised.value.size == size


@pytest.mark.skipif(not CPU_TARGET, reason="program loops are for CPU targets")
def test_recorded_launch_replays(tmp_path):
    """A recording keeps the hidden number of programs and the launched groups."""
    from launcher.replay import list_recordings, recording, replay
    size = 64 * 1031 + 5
    x, y = torch.rand(size), torch.rand(size)
    out = torch.empty_like(x)
    with recording(str(tmp_path)):
        compiled = axpy_kernel[(triton.cdiv(size, 64),)](3.0, x, y, out, size, BLOCK=64)
    assert loops_programs(compiled)
    torch.testing.assert_close(out, 3.0 * x + y)
    [path] = list_recordings(str(tmp_path))
    result = replay(path)
    assert result["ok"], result["problems"]
