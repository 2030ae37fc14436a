"""Launching kernels whose work-groups run consecutive programs (metadata `program_loop`;
triton_spirv/memref_stage/program_loops.py).

Such a kernel takes the grid's first dimension as a hidden `long` after its own
parameters and runs its share of those programs in each work-group of dimension 0, so
`tl.program_id(0)` and `tl.num_programs(0)` mean what the grid says. The launcher
chooses how many groups run them: enough that every compute unit gets
MIN_GROUPS_PER_UNIT groups to balance uneven programs, and no group more than
MAX_PROGRAMS_PER_GROUP programs; a grid too small for that keeps one program per group.
"""

import numpy as np

# Measured on 2 compute units (benchmarks/work_groups.py): a program that stores one
# float costs ~12 ns in a work-group of its own on the default CPU runtime and on Intel's runtime, 1-2 ns
# (the default CPU runtime) and 0.5-1 ns (Intel) in groups of 16 to 1024 programs. Groups of up to 64
# programs, 8 per unit, made the default CPU runtime's row kernels (softmax, layer norm over 4096 rows: 64
# groups) ~10% slower in alternating runs, and evenly matched with groups of 16, 64 per
# unit: many small groups keep the units balanced on a busy host.
MIN_GROUPS_PER_UNIT = 64
MAX_PROGRAMS_PER_GROUP = 16


def groups_for(programs: int, compute_units: int) -> int:
    """How many work-groups run `programs` programs on `compute_units` units."""
    per_group = min(MAX_PROGRAMS_PER_GROUP, programs // (compute_units * MIN_GROUPS_PER_UNIT))
    if per_group <= 1:
        return programs
    return -(-programs // per_group)


class ProgramLoopPlan:
    """The hidden `num_programs_x` parameter of one kernel and the groups it launches."""

    def __init__(self):
        self.index = None
        self.compute_units = 1

    def bind(self, function, index):
        """The parameter (`long`) is kernel parameter `index` of `function` (a KernelHandle)."""
        self.index = index
        self.compute_units = max(1, int(function.device.device.max_compute_units))
        function.programs_set = None

    def set_programs(self, function, programs):
        """Sets the parameter to `programs` (the grid's first dimension) unless it holds
        that already. The caller holds the kernel's lock."""
        if function.programs_set != programs:
            function.kernel.set_arg(self.index, np.int64(programs))
            function.programs_set = programs

    def global_size(self, function, programs, global_size):
        """`global_size` with the groups that run `programs` programs in dimension 0."""
        groups = groups_for(programs, self.compute_units)
        return (groups * function.local_size[0], *global_size[1:])

    def record(self, recording, programs):
        """The parameter's value in a launch recording (replay.py)."""
        recording.scalar(self.index, "l", int(programs))


def program_loop_plan(metadata):
    """A ProgramLoopPlan for kernels compiled with a program loop, else None."""
    loops = getattr(metadata, "program_loop", None)
    if loops is None and isinstance(metadata, dict):
        loops = metadata.get("program_loop")
    return ProgramLoopPlan() if loops else None
