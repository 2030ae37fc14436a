"""Names vulture reports as unused that are used, but only dynamically.

`vulture` reads this file with the code (see [tool.vulture] in pyproject.toml); each name
here counts as used. Keep a reason next to each group.
"""
# ruff: noqa
_ = object()

# Python's import system calls these of a meta path finder's loader (triton_first.py).
_.create_module

# Triton's backend hooks (triton.backends.compiler.BaseBackend / DriverBase): Triton calls
# them and reads the option fields by name.
_.supports_target
_.binary_ext
binary_ext
_.pack_metadata
_.add_stages
_.set_current_device
_.allocate_default_profile_scratch
num_stages
maxnreg
enable_fp_fusion
deprecated_fp8_dot_operand_dtypes
default_dot_input_precision
allowed_dot_input_precisions
max_num_imprecise_acc_default
extern_libs
sanitize_overflow
launch_cooperative_grid
launch_pdl
backend_name
instrumentation_mode
fpsan_homomorphic_casts
matrix_instr_nonkdim
waves_per_eu
kpack
lhs_type  # min_dot_size(lhs_type, rhs_type): Triton's signature
rhs_type

# torch/Triton device-interface methods and parameters (launcher/device_interface.py) and
# the launcher's call signature, which Triton's generated launch code calls positionally.
empty_cache
blocking
interprocess
priority
_.query
_.wait_stream
_.wait_event
_.record_event
ExternalStream
packed_metadata
_.cl_device  # launcher/device.py: the pyopencl device, for users of the launcher API

# Module-level __getattr__ (PEP 562): lazy loading of triton_spirv.hlo's runtime.
__getattr__

# HLO interpreter (hlo/dynamic.py): ops dispatch by name, getattr(self, "op_" + opcode).
_.op_broadcast
_.op_transpose
_.op_copy
_.op_reduce
_.op_dot
_.op_concatenate
_.op_get_tuple_element
_.op_tuple
_.op_fusion
_.op_reshape
_.op_bitcast

# Attributes read by MLIR's Python bindings or by users of the error objects.
_.sym_visibility  # func.func's attribute, set through the op view
_.reason  # TtirParseError.reason: the message without its location
reason  # EmitterChoice.reason: why the emitter was chosen, for reports
num_elements  # emitter_opencl.views.Buffer: size of a __local array

# One of the comparison predicates unpacked from range(10) in ttir_to_linalg/analysis.py.
NE

# pytest: fixtures used by name as test parameters, autouse fixtures and module marks.
pytestmark
per_work_item
tree
restore_allocator
no_target_override
skip_slow_unless_selected

# pytest hooks of tests/conftest.py (the test tiers): pytest calls them by name.
pytest_addoption
pytest_collection_modifyitems
pytest_runtest_setup
pytest_runtest_call
pytest_runtest_teardown

# Kernels a test runs in a child process, by name (tests/test_intel_quirks.py).
atomic_after_not_max
