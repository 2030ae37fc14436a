"""opencl_abi.hidden_parameters: the order and types of the parameters after a kernel's
own, as the module's docstring writes them (the converter, the emitter and the launcher
all take them from it; tests/test_device_assert.py and tests/test_reliability_bounds.py
run kernels that have them)."""
from opencl_abi import (ASSERT_RECORD, BOUNDS_EXTENT, BOUNDS_RECORD, FLAT_MEMORY, NUM_PROGRAMS,
                        first_index, hidden_parameters)


def test_a_plain_kernel_has_none():
    assert hidden_parameters(4) == []


def test_order_flat_memory_assert_record_bounds():
    hidden = hidden_parameters(3, flat_memory=2, asserts=True, bounds_buffers=[0, 2])
    assert [(p.kind, p.index, p.c_type, p.buffer) for p in hidden] == [
        (FLAT_MEMORY, 3, None, None), (FLAT_MEMORY, 4, None, None),
        (ASSERT_RECORD, 5, "__global int*", None),
        (BOUNDS_EXTENT, 6, "long", 0), (BOUNDS_EXTENT, 7, "long", 2),
        (BOUNDS_RECORD, 8, "__global int*", None)]
    assert first_index(hidden, ASSERT_RECORD) == 5
    assert first_index(hidden, NUM_PROGRAMS) is None


def test_program_loop_parameter_comes_first():
    hidden = hidden_parameters(2, program_loop=True, bounds_buffers=[1])
    assert [(p.kind, p.index, p.c_type) for p in hidden] == [
        (NUM_PROGRAMS, 2, "long"), (BOUNDS_EXTENT, 3, "long"), (BOUNDS_RECORD, 4, "__global int*")]


def test_bounds_checked_kernel_without_buffers_still_has_its_record():
    assert [p.kind for p in hidden_parameters(1, bounds_buffers=[])] == [BOUNDS_RECORD]
