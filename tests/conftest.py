"""Test tiers (docs/architecture.md, "Tests by stage").

- `device_free`: tests that never open an OpenCL device (IR, readers, FileCheck, emitter
  text, imports, docs). `python3 -m pytest -q -m device_free tests`, under a minute.
  A guard keeps the list true: while such a test runs, opening a context, building a
  program, allocating a buffer or launching a kernel fails the test, and a subprocess it
  starts sees no OpenCL driver.
- `fast`: the device-free tests plus a deterministic sample of every kernel family (the
  first parametrization of each test function of the other files, less `slow` tests and
  NOT_FAST_TESTS). `python3 -m pytest -q -m fast tests`, under five minutes.
- everything: `python3 -m pytest -q tests`.

The tiers are declared here, by file and test name, so that test files stay free of tier
bookkeeping. `--assume-device-free` runs every collected test under the guard: the tests
that still pass are the candidates for DEVICE_FREE_FILES / DEVICE_FREE_TESTS.
"""

import os
import tempfile
from contextlib import contextmanager

import pytest

# Files whose every test is device-free.
DEVICE_FREE_FILES = {
    "test_block_ownership.py", "test_branch_tiles.py", "test_filecheck.py",
    "test_hlo_emitter_maps.py", "test_hlo_indexing.py", "test_hlo_reader.py", "test_locations.py",
    "test_tiers.py", "test_ttir_reader.py", "test_ir_helpers.py", "test_async_copy_rows.py",
}

# Device-free tests of files that also launch kernels: file -> test function names.
DEVICE_FREE_TESTS = {
    "test_fuzz_tolerance.py": {
        "test_compare_allows_the_spread_only_where_given",
    },
    "test_build_logs.py": {
        "test_build_log_positions_of_every_driver",
        "test_snippet_lines_of_a_log_are_not_positions",
    },
    "test_compiled_launcher.py": {
        "test_a_bad_launcher_setting_is_named",
    },
    "test_conformance_libdevice.py": {
        "test_emitter_prints_builtin_and_helper_calls",
        "test_emitter_rejects_a_call_it_was_not_told_about",
        "test_every_other_libdevice_name_has_a_translation",
    },
    "test_conformance_names.py": {
        "test_helper_names_are_not_handed_out",
        "test_hlo_kernels_named_like_opencl_words_are_prefixed",
        "test_name_table_renames_only_what_it_must",
        "test_no_identifier_of_the_opencl_headers_is_handed_out",
    },
    "test_conformance_runtime.py": {
        "test_printf_fifo_size_hook_exists",
    },
    "test_device_quirks.py": {
        "test_a_version_at_or_after_the_fix_has_no_quirk",
        "test_default_order_puts_pocl_first",
        "test_every_quirk_names_its_reason_workaround_and_reproducer",
        "test_pocl_has_its_quirks_and_other_runtimes_none",
        "test_unknown_quirk_names_fail",
    },
    "test_dynamic_shapes.py": {
        "test_compile_time_shape_errors",
        "test_inconsistent_symbol_is_reported_before_launch",
        "test_reader_accepts_dynamic_dimensions",
        "test_static_size_rank_and_zero_checks",
    },
    "test_elementwise_vectors.py": {
        "test_gpu_shapes_get_float4_per_work_item",
        "test_loop_steps_by_16_on_vectors",
        "test_loops_that_are_not_elementwise_stay",
        "test_math_ops_become_vector_math",
    },
    "test_emitter.py": {
        "test_barrier_of_a_one_work_item_group_is_a_fence",
        "test_func_call_is_rejected_with_callsite_location",
        "test_literals_round_trip",
        "test_local_tiles_name_their_shape_bytes_and_source_line",
        "test_names_are_sanitized_and_unique",
        "test_unsupported_op_names_op_and_location",
        "test_unsupported_rounding_mode_is_rejected",
        "test_values_carry_a_python_name_only_when_they_are_that_value",
        "test_vector_add_source_shape",
    },
    "test_fuzz_readers.py": {
        "test_fuzz_hlo_reader",
        "test_hlo_reader_odd_inputs",
        "test_ttir_reader_odd_inputs",
    },
    "test_gpu_replay_kit.py": {
        "test_inputs_are_deterministic_and_shaped",
    },
    "test_hlo_modules.py": {
        "test_at_least_fifteen_xla_modules",
    },
    "test_hlo_ops.py": {
        "test_backward_filter_becomes_a_convolution_over_the_batch",
        "test_backward_input_becomes_a_convolution_with_the_reversed_kernel",
        "test_bias_activation_epilogue_lowered_in_and_out",
        "test_every_kind_of_text_is_there",
        "test_grouped_backward_input_is_refused_by_name",
        "test_long_rows_sort_in_passes_that_double_the_runs",
        "test_top_k_call_is_its_own_fused_computation",
    },
    "test_hlo_partitioner.py": {
        "test_gelu_is_one_function",
        "test_log_is_cut_because_its_users_read_it_at_different_indices",
        "test_log_transpose_add_gives_three_functions",
    },
    "test_hlo_rank0.py": {
        "test_empty_results_are_the_delinearization_of_one_element",
        "test_results_that_do_not_match_the_rank_are_still_refused",
        "test_xla_module_set",
    },
    "test_hlo_runtime_boundaries.py": {
        "test_importing_the_hlo_frontend_does_not_import_triton",
        "test_the_backend_modules_imported_before_triton_are_the_ones_triton_registers",
        "test_the_launcher_and_the_kernel_abi_import_no_frontend",
    },
    "test_hlo_transpose.py": {
        "test_emitted_ir_of_each_shape",
    },
    "test_hlo_tuples.py": {
        "test_a_tuple_parameter_read_whole_is_refused",
        "test_flatten_fused_tuples_in_and_out",
        "test_leaves_and_nest_round_trip",
    },
    "test_hlo_xla_gpu.py": {
        "test_cublas_call_lowered_in_and_out",
        "test_missing_bias_operand_is_named",
        "test_nested_tuple_input_of_the_wrong_structure_is_named",
        "test_the_data_has_nested_tuples_and_every_epilogue",
        "test_the_workspace_is_not_computed",
        "test_unknown_custom_call_target_names_target_and_line",
        "test_unknown_epilogue_is_named",
    },
    "test_inspection.py": {
        "test_cli_reports_bad_arguments",
    },
    "test_lang_control_flow.py": {
        "test_call_with_tensors_is_inlined",
        "test_index_switch_becomes_a_chain_of_ifs",
        "test_lift_control_flow_ir",
        "test_nested_loops_copy_the_accumulator_once",
    },
    "test_lang_fp8.py": {
        "test_frontend_lowers_fp_to_fp_to_truncf_with_its_rounding_mode",
        "test_unsupported_fp8_rounding_mode_is_rejected",
        "test_value_table_reference_agrees_with_torch",
    },
    "test_lang_pointer_choice.py": {
        "test_scalar_choice_becomes_one_branch_per_buffer_ir",
    },
    "test_launcher.py": {
        "test_blamed_lines_in_other_log_formats",
        "test_clock_rate_in_khz_and_nominal_where_the_device_reports_none",
        "test_driver_module_has_one_concrete_driver",
        "test_name_selection_prefers_exact_and_leading_matches",
        "test_unsupported_signature_type",
    },
    "test_launcher_grids.py": {
        "test_fewest_dimensions",
    },
    "test_local_memory_budget.py": {
        "test_every_tile_is_listed",
    },
    "test_program_loops.py": {
        "test_every_program_runs_once",
        "test_small_grids_keep_one_program_per_group",
    },
    "test_reduction_lanes.py": {
        "test_commutative_reduction_runs_in_lanes",
        "test_gpu_shapes_reduce_along_the_axis_itself",
        "test_non_commutative_reduction_stays_in_order",
        "test_short_or_ragged_axis_stays_in_order",
    },
    "test_register_blocking.py": {
        "test_accumulator_that_is_a_kernel_argument_stays",
        "test_block_shape_follows_the_extents",
        "test_blocks_shared_by_work_items_divide_the_rows",
        "test_matmul_nest_keeps_accumulators_in_vectors",
        "test_nests_that_are_not_contractions_stay",
        "test_product_used_twice_is_not_fused",
        "test_rewritten_nest_prints_as_vector_opencl",
    },
    "test_reliability_errors.py": {
        "test_good_ttir_reads",
        "test_malformed_hlo_is_an_hlo_error",
        "test_malformed_ttir_is_a_read_error_with_its_line",
        "test_no_opencl_device_at_all",
        "test_python_origin_of_cl_lines",
    },
    "test_runtime.py": {
        "test_host_view_helpers_are_plain_memory",
    },
    "test_shapes.py": {
        "test_anonymous_dimensions_and_index_width",
        "test_contract_errors_at_definition",
        "test_generated_host_code_is_readable_python",
        "test_inconsistent_dimension_is_reported_before_launch",
        "test_scalar_argument_must_match_its_dimension",
        "test_zero_size_and_rank_errors",
    },
    "test_spirv.py": {
        "test_a_bf16_tile_allocated_first_becomes_i16_too",
        "test_atomics_become_compare_exchange_loops",
        "test_bf16_buffers_become_i16_and_half_scalars_f32",
        "test_f16_tiles_hold_f32",
        "test_f32_tanh_becomes_the_emitter_formula",
        "test_flatten_copies_of_views_of_each_work_item_stay_with_it",
        "test_flatten_copy_of_one_work_item_moves_rows_in_vectors",
        "test_flatten_private_arrays_and_copies_under_a_branch_stay_with_one_work_item",
        "test_flatten_shared_copy_uses_every_work_item_between_barriers",
        "test_flatten_shares_copies_of_uniform_branches_only",
        "test_flatten_views_become_index_arithmetic_on_root_buffers",
        "test_fp8_values_become_f32_and_buffers_bytes",
        "test_groups_only_in_modules_for_opencl_2_targets",
        "test_modules_without_collectives_are_opencl_1_2_modules",
        "test_opencl_builtin_call_is_an_error_naming_op_and_line",
        "test_program_mode_is_checked",
        "test_saturating_float_to_int",
        "test_unconverted_fp8_is_an_error_naming_op_and_line",
        "test_widen_index_leaves_index_only_at_accesses",
    },
    "test_startup.py": {
        "test_a_bad_record_is_ignored",
        "test_a_digest_started_before_a_fork_is_computed_in_the_child",
        "test_a_file_changing_during_compute_is_not_recorded",
        "test_a_missing_file_means_computing",
        "test_backend_source_hash_is_the_hash_of_the_sources",
        "test_bytecode_caches_do_not_change_the_triton_key",
        "test_every_kind_of_change_recomputes",
        "test_files_under_skips_bytecode_and_follows_links",
        "test_install_can_be_disabled",
        "test_install_leaves_a_changed_triton_key_alone",
        "test_install_replaces_every_binding_of_the_original",
        "test_light_dialect_modules_give_upstreams_classes_once_imported_and_restore_the_search",
        "test_linalg_ops_build_what_upstream_builds",
        "test_recent_changes_are_not_trusted",
        "test_the_key_computed_ahead_is_tritons",
        "test_the_key_is_computed_ahead_only_when_not_remembered",
        "test_triton_key_is_recomputed_when_triton_changes",
        "test_triton_uses_the_remembered_key_everywhere_and_it_is_exact",
        "test_value_is_remembered_until_a_file_changes",
    },
    "test_stream_forwarding.py": {
        "test_a_global_store_before_the_nest_keeps_the_tiles",
        "test_a_tile_read_elsewhere_stays_a_tile",
        "test_pipeline_rewrites_are_listed_once",
        "test_vector_add_streams_full_tiles_and_keeps_tiles_for_the_rest",
    },
    "test_target.py": {
        "test_unknown_target_names_the_value_and_the_choices",
    },
    "test_torch_compile.py": {
        "test_discovery_finds_one_active_driver_and_the_cpu_name",
        "test_pyproject_declares_the_cpu_entry_point",
    },
    "test_versioning.py": {
        "test_clamped_offsets_are_a_block_behind_a_full_mask_guard",
        "test_guard_in_a_loop_body_that_reaches_no_pointer_is_not_versioned",
        "test_loop_that_carries_a_tensor_is_not_versioned",
        "test_loop_without_a_guard_converts_as_without_versioning",
        "test_offsets_in_a_loop_body_version_the_rest_of_the_body",
        "test_remainder_by_a_varying_tensor_is_not_versioned",
        "test_remainder_that_reaches_no_pointer_is_not_versioned",
        "test_two_guards_in_a_loop_body_nest_in_order_with_none_in_the_fallback",
        "test_wrapped_offsets_are_a_block_behind_an_in_range_guard",
    },
    "test_viewer.py": {
        "test_mlir_lines_follow_aliases_names_call_sites_and_regions",
        "test_opencl_lines_belong_to_the_comment_above_them",
        "test_spirv_lines_follow_opline",
        "test_view_reports_a_missing_kernel",
    },
    "test_work_group_collectives.py": {
        "test_all_reduce_prints_as_work_group_reduce",
        "test_float_maximum_collective_is_refused_naming_why",
    },
    "test_work_group_scans.py": {
        "test_a_1d_scan_runs_on_every_work_item",
        "test_a_loop_whose_carried_value_is_used_after_it_stays_on_work_item_zero",
        "test_more_rows_than_work_items_scan_whole_rows_in_rounds",
        "test_rows_share_the_work_group_and_keep_the_combine_order",
        "test_the_scan_writes_its_results_before_the_barrier_its_readers_wait_on",
    },
    "test_work_group_sharing.py": {
        "test_a_loop_holding_barriers_is_entered_after_a_barrier_not_a_branch",
        "test_a_short_reduction_gets_a_tree_of_its_own_length",
        "test_an_atomic_orders_the_other_work_items_global_accesses",
        "test_converting_copies_into_tiles_are_shared_by_the_work_items",
        "test_copies_between_tiles_outside_loops_are_spread",
        "test_gather_nests_are_shared_by_owner",
        "test_loop_carried_reuse_of_a_tile_gets_a_barrier",
        "test_loop_carried_tiles_stay_private_through_their_copies",
        "test_other_elements_need_a_barrier",
        "test_reduction_to_a_scalar_becomes_a_work_group_tree",
        "test_rounds_past_the_end_of_the_loop_are_skipped",
        "test_serial_work_runs_on_work_item_zero_between_barriers",
        "test_single_sections_are_marked_and_uniform_branches_are_not",
        "test_tile_to_tile_copy_is_spread_over_the_work_items",
        "test_tiles_only_their_owners_touch_become_private_without_barriers",
        "test_vector_loops_give_each_work_item_one_vector_per_step",
        "test_work_group_size_follows_the_target",
    },
}

# Test functions left out of the fast sample: their first parametrization alone took
# several seconds on PoCL on a shared two-core machine (subprocesses, Oclgrind, many
# kernels, torch.compile), or the test counts what the whole file ran
# (test_bad_input_count). Each file keeps at least one test in the sample.
# file -> test function names.
NOT_FAST_TESTS = {
    "test_conformance_argminmax.py": {
        "test_arg_reductions_with_nans_match_the_interpreter",
    },
    "test_fuzz_readers.py": {
        "test_fuzz_ttir_reader",
    },
    "test_gpu_local_memory.py": {
        "test_layer_norm_dwdb_fits_32k",
        "test_tutorial_family_fits_64k_and_matches_torch",
        "test_tutorial_family_is_race_free_under_oclgrind_at_64k",
        "test_wide_layer_norm_dwdb_names_its_tiles",
    },
    "test_gpu_replay_kit.py": {
        "test_bundles_are_small_and_regenerate_their_inputs",
    },
    "test_hlo_emitters.py": {
        "test_seed_gelu_bf16_full_shape",
    },
    "test_hlo_ops.py": {
        "test_sort_convolution_and_gather_kernels_are_clean_under_oclgrind",
    },
    "test_inspection.py": {
        "test_dump_directory_gets_every_stage",
    },
    "test_oclgrind.py": {
        "test_kernel_is_clean_under_oclgrind",
    },
    "test_reliability_concurrency.py": {
        "test_two_processes_compile_the_same_kernel_into_one_cache",
    },
    "test_reliability_errors.py": {
        "test_bad_input_count",
    },
    "test_target.py": {
        "test_environment_variable_changes_gpu_target_and_cache_key",
    },
    "test_torch_compile.py": {
        "test_attention_with_rotary_embedding_and_causal_mask",
        "test_conv_net_with_batch_norm_in_eval",
        "test_dynamic_shapes_at_two_sizes",
        "test_embedding_and_cross_entropy_with_ignored_rows",
        "test_gather_scatter_index_put",
        "test_issue_example_in_process",
        "test_mlp_with_layer_norm",
        "test_parallel_compile_workers",
        "test_training_step_forward_and_backward",
        "test_var_mean_logsumexp_argmax",
    },
    "test_triton_conventions.py": {
        "test_always_compile_skips_the_cache",
        "test_kernel_dump_writes_every_stage_to_the_dump_dir",
        "test_mlir_enable_dump_of_one_kernel_to_a_file",
        "test_mlir_enable_dump_prints_the_ir_after_each_pass",
        "test_print_autotuning_reports_the_best_config",
    },
    "test_tutorials.py": {
        "test_09_persistent_matmul",
    },
    "test_viewer.py": {
        "test_browser_click_highlights_the_opencl_lines_of_a_python_line",
        "test_browser_hlo_instruction_and_fusion_highlight_kernel_lines",
        "test_browser_matmul_tutorial_page",
        "test_view_dir_writes_a_page_per_compiled_kernel",
        "test_view_dir_writes_pages_for_hlo_kernels_a_script_runs",
    },
    "test_work_group_scans.py": {
        "test_cpu_shape_keeps_one_serial_loop",
        "test_cumsum_matches_torch",
        "test_integer_cumsum_is_exact",
        "test_non_commutative_two_operand_scan_matches_a_python_loop",
        "test_scan_inside_a_loop_matches_torch",
    },
    "test_work_group_sharing.py": {
        "test_tutorial_matmul_with_wrapped_offsets_matches_torch_on_gpu_shape",
    },
}

# What the guard replaces in pyopencl: everything that opens or uses a device.
_DEVICE_ENTRY_POINTS = ("Context", "CommandQueue", "Program", "Buffer", "Kernel", "enqueue_nd_range_kernel")


def pytest_addoption(parser):
    parser.addoption("--assume-device-free", action="store_true",
                     help="run every test under the device-free guard (to find device-free tests)")


def pytest_collection_modifyitems(config, items):
    seen_functions = set()
    files_in_fast = set()
    for item in items:
        file, function = _file_and_function(item)
        if file in DEVICE_FREE_FILES or function in DEVICE_FREE_TESTS.get(file, ()):
            item.add_marker(pytest.mark.device_free)
            _mark_fast(item, file, files_in_fast)
        elif (file, function) not in seen_functions and _may_be_fast(item, file, function):
            _mark_fast(item, file, files_in_fast)
        seen_functions.add((file, function))
    # Every file keeps a test in the fast sample, even one whose tests are all slow.
    for item in items:
        file, _ = _file_and_function(item)
        if file not in files_in_fast:
            _mark_fast(item, file, files_in_fast)


def _mark_fast(item, file, files_in_fast):
    item.add_marker(pytest.mark.fast)
    files_in_fast.add(file)


def _file_and_function(item):
    """('test_x.py', 'test_y') for tests/test_x.py::test_y[params] (a class method:
    'Class.test_y')."""
    file = os.path.basename(str(item.path))
    function = getattr(item, "originalname", None) or item.name.split("[")[0]
    if item.cls is not None:
        function = f"{item.cls.__name__}.{function}"
    return file, function


def _may_be_fast(item, file, function):
    return item.get_closest_marker("slow") is None and function not in NOT_FAST_TESTS.get(file, ())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    with _guard_if_device_free(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    with _guard_if_device_free(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item):
    with _guard_if_device_free(item):
        return (yield)


@contextmanager
def _guard_if_device_free(item):
    if item.get_closest_marker("device_free") is None and not item.config.getoption("assume_device_free"):
        yield
        return
    with pytest.MonkeyPatch.context() as patch, tempfile.TemporaryDirectory() as no_drivers:
        _forbid_devices(patch, item.nodeid, no_drivers)
        yield


def _forbid_devices(patch, nodeid, no_drivers):
    """Make every way to a device fail `nodeid`: pyopencl's entry points raise pytest's
    Failed (a BaseException, so no `except Exception` on the way turns it into a skip
    or a fallback), the launcher's cached device is hidden, and subprocesses get an
    OpenCL loader with no driver (an empty vendor directory)."""
    try:
        import pyopencl
    except Exception:  # no pyopencl: no device either
        pyopencl = None
    if pyopencl is not None:
        _load_opencl_drivers(pyopencl)
        for name in _DEVICE_ENTRY_POINTS:
            patch.setattr(pyopencl, name, _refusal(nodeid, f"pyopencl.{name}"))
    try:
        import launcher.device
    except Exception:
        pass
    else:
        patch.setattr(launcher.device, "_selected", None)
    patch.setenv("OCL_ICD_VENDORS", no_drivers)
    patch.delenv("OCL_ICD_FILENAMES", raising=False)


def _load_opencl_drivers(pyopencl):
    """Have this process's OpenCL loader read its drivers now: it reads OCL_ICD_VENDORS
    once, at the first platform query, so a first query under the guard's empty vendor
    directory would leave every later test of the session without a device."""
    try:
        pyopencl.get_platforms()
    except Exception:  # no driver: nothing to keep
        pass


def _refusal(nodeid, what):
    def refuse(*args, **kwargs):
        pytest.fail(f"{nodeid} is declared device-free (tests/conftest.py) but calls {what}: "
                    "take it out of DEVICE_FREE_FILES / DEVICE_FREE_TESTS", pytrace=True)
    return refuse
