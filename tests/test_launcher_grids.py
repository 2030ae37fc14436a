"""Grids of plain launches (launcher/launch.py, OpenCLLauncher.__call__): the work sizes
come from a per-kernel table of grids, are enqueued in as few dimensions as the grid
needs, and a launch returns once its kernel has finished; a program loop's hidden
parameter (launcher/program_loops.py) follows the kernel handle, whichever launcher
set it. Hand-written OpenCL C, checked against numpy."""

import numpy as np
import pytest
import torch

import launcher
from launcher import GridError, OpenCLLauncher
from launcher import launch as launch_module
from launcher.clbin import clbin_fields
from launcher.launch import load_kernel

IDS = """
__kernel void ids(__global int* out) {
    size_t g = get_group_id(0) + get_num_groups(0) * (get_group_id(1) + get_num_groups(1) * get_group_id(2));
    __global int* o = out + 8 * g;
    o[0] = (int)get_group_id(0); o[1] = (int)get_group_id(1); o[2] = (int)get_group_id(2);
    o[3] = (int)get_num_groups(1); o[4] = (int)get_num_groups(2);
    o[5] = (int)get_global_size(1); o[6] = (int)get_local_size(2); o[7] = (int)get_global_id(2);
}
"""

# Each work-group runs programs [first, last) of num_programs_x, as the emitted program
# loops do, and writes the count it was given into each of its programs' elements.
COUNT_PROGRAMS = """
__kernel void count_programs(__global long* out, long num_programs_x) {
    long groups = get_num_groups(0);
    long per_group = (num_programs_x + groups - 1) / groups;
    long first = get_group_id(0) * per_group;
    long last = min(first + per_group, num_programs_x);
    for (long program = first; program < last; ++program) out[program] = num_programs_x;
}
"""

# Spins long enough that a launch returning before its kernel ends would read zeros.
SLOW_FILL = """
__kernel void slow_fill(__global float* out, int steps) {
    float v = 0.0f;
    for (int i = 0; i < steps; ++i) v = v * 0.5f + 1.0f;
    out[get_global_id(0)] = v + (float)get_global_id(0);
}
"""


@pytest.fixture(scope="module")
def dev():
    return launcher.get_device()


def kernel(name, source, arg_types, params, metadata=None, local_size=(1, 1, 1)):
    """(KernelHandle, OpenCLLauncher) for hand-written OpenCL C."""
    handle = load_kernel(clbin_fields(name, source, arg_types, local_size, 0))
    return handle, OpenCLLauncher.for_parameters(name, params, metadata or {})


def launch(run, function, grid, *args):
    """The call Triton's CompiledKernel makes, with its empty hook chains."""
    from triton import knobs

    grid = tuple(grid) + (1,) * (3 - len(grid))
    run(*grid, 0, function, None, None, knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook, *args)


def expected_ids(nx, ny, nz):
    """What IDS writes for grid (nx, ny, nz), as numpy computes it."""
    z, y, x = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
    rows = [x, y, z, np.full_like(x, ny), np.full_like(x, nz), np.full_like(x, ny), np.ones_like(x), z]
    return np.stack([r.ravel() for r in rows], axis=1)


@pytest.mark.parametrize("grid", [(5, 1, 1), (4, 3, 1), (2, 1, 3), (1, 1, 1)])
def test_dimensions_beyond_the_grid_read_as_one(dev, grid):
    """A grid launched in fewer dimensions than three: the kernel still sees group ids 0
    and sizes 1 in the others, as in a three-dimensional launch."""
    function, run = kernel("ids", IDS, ["__global int*"], [("out", "*i32")])
    out = torch.full((grid[0] * grid[1] * grid[2], 8), -1, dtype=torch.int32)
    launch(run, function, grid, out)
    np.testing.assert_array_equal(out.numpy(), expected_ids(*grid))


def test_fewest_dimensions():
    fewest = launch_module._fewest_dimensions
    assert fewest((16, 1, 1), (16, 1, 1)) == ((16,), (16,))
    assert fewest((4, 3, 1), (1, 1, 1)) == ((4, 3), (1, 1))
    assert fewest((4, 1, 2), (1, 1, 1)) == ((4, 1, 2), (1, 1, 1))
    assert fewest((1, 1, 1), (1, 1, 1)) == ((1,), (1,))


def test_grids_change_between_launches_and_bad_ones_still_fail(dev, monkeypatch):
    """Grids in any order, empty ones and ones beyond the limits among them, with a table
    smaller than the number of grids: each launch runs its own grid."""
    monkeypatch.setattr(launch_module, "MAX_REMEMBERED_GRIDS", 2)
    function, run = kernel("ids", IDS, ["__global int*"], [("out", "*i32")])
    for grid in [(3, 1, 1), (2, 2, 1), (0, 1, 1), (3, 1, 1), (1, 2, 2), (2, 2, 1)]:
        out = torch.full((8 * 8,), -1, dtype=torch.int32)
        launch(run, function, grid, out)
        count = grid[0] * grid[1] * grid[2]
        np.testing.assert_array_equal(out[:8 * count].numpy().reshape(count, 8), expected_ids(*grid))
        assert torch.all(out[8 * count:] == -1)
        assert len(run._work_sizes) <= 2
        for bad, match in [((2**31, 1, 1), "beyond the limit"), ((-1, 1, 1), "negative"),
                           ((2.0, 1, 1), "must be integers")]:
            with pytest.raises(GridError, match=match):
                launch(run, function, bad, out)


@pytest.mark.parametrize("programs", [[8, 4, 8], [3, 300, 3, 300], [5000, 7, 5000]])
def test_program_loop_parameter_follows_the_kernel_handle(dev, programs):
    """Two launchers of one kernel handle (a kernel keeps its arguments) with different
    grids in turn: each launch runs the grid it asks for."""
    function, first = kernel("count_programs", COUNT_PROGRAMS, ["__global long*", "long"],
                             [("out", "*i64")], {"program_loop": True})
    second = OpenCLLauncher.for_parameters("count_programs", [("out", "*i64")], {"program_loop": True})
    for turn, count in enumerate(programs):
        out = torch.zeros(max(programs) + 1, dtype=torch.int64)
        launch((first, second)[turn % 2], function, (count,), out)
        assert torch.all(out[:count] == count) and torch.all(out[count:] == 0), (turn, count)


def test_a_launch_returns_once_its_kernel_has_finished(dev):
    function, run = kernel("slow_fill", SLOW_FILL, ["__global float*", "int"], [("out", "*fp32"), ("steps", "i32")],
                           local_size=(4, 1, 1))
    steps = 1_000_000
    for _ in range(3):
        out = torch.zeros(64)
        launch(run, function, (16,), out, steps)
        # v = v / 2 + 1 reaches its fixed point 2 in float after a few dozen steps.
        np.testing.assert_array_equal(out.numpy(), 2.0 + np.arange(64, dtype=np.float32))
