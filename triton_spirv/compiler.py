"""The Triton backend: compiler stages for OpenCL devices.

Stages (each a small function; Triton's cache keeps every one of them):

    ttir    Triton's own TTIR passes (inlining, canonicalization, descriptor rewrite)
    linalg  TTIR text -> upstream-MLIR module (ttir.reader) -> Linalg on tensors
    memref  upstream passes (memref_stage/pipeline.py) -> the memref stage (docs/memref-stage.md)
    cl      the OpenCL C source (emitter_opencl)
    spvasm  the SPIR-V module (triton_spirv/spirv), as spirv-dialect MLIR; only for
            kernels that go to the device as SPIR-V (launcher/il.py: program option)
    clbin   the program built for the device, packed with the source, the SPIR-V
            binary (the `spv` stage) and launch facts
"""
from __future__ import annotations

import functools
import hashlib
import os
import time
import warnings
from dataclasses import dataclass
from types import ModuleType
from typing import Dict, Optional, Tuple

from triton._C.libtriton import ir as triton_ir
from triton._C.libtriton import passes
from triton.backends.compiler import BaseBackend, GPUTarget, Language

from launcher import triton_key_cache
from opencl_abi import FP8E4B15_FROM_FLOAT, FP8E4B15_TO_FLOAT
from launcher.il import requested_mode, spirv_versions
from launcher.file_memo import files_under, remembered

from .target import check_kernel_fits, current_target, target_spec

BACKEND_NAME = "opencl"
# Bump when _hash_sources changes what it digests.
_SOURCE_HASH_VERSION = "1"

# Triton imports this module while discovering backends, before anything is compiled:
# from here on its triton_key() is read from disk on a warm start (triton_key_cache.py).
triton_key_cache.install()


@dataclass(frozen=True)
class OpenCLOptions:
    num_warps: int = 4
    num_ctas: int = 1
    num_stages: int = 1
    warp_size: int = 1
    maxnreg: Optional[int] = None
    enable_fp_fusion: bool = True
    # Every fp8 format is bytes in memory, converted in code (emitter_opencl/fp8.py).
    supported_fp8_dtypes: Tuple[str, ...] = ("fp8e4b15", "fp8e4b8", "fp8e4nv", "fp8e5", "fp8e5b16")
    deprecated_fp8_dot_operand_dtypes: Tuple[str, ...] = ()
    # tf32 has no meaning on OpenCL devices: every precision is computed as ieee fp32.
    default_dot_input_precision: str = "ieee"
    allowed_dot_input_precisions: Tuple[str, ...] = ("ieee", "tf32", "tf32x3", "bf16x3", "bf16x6")
    max_num_imprecise_acc_default: int = 0
    extern_libs: Optional[tuple] = None
    debug: bool = False
    # Triton's overflow checks would add i64 compares to every offset computation.
    sanitize_overflow: bool = False
    launch_cooperative_grid: bool = False
    launch_pdl: bool = False
    arch: Optional[str] = None
    backend_name: str = BACKEND_NAME
    instrumentation_mode: str = ""
    fpsan_homomorphic_casts: bool = False
    # Options of other backends that autotune configs written for them pass: accepted,
    # ignored.
    matrix_instr_nonkdim: int = 0
    waves_per_eu: int = 0
    kpack: int = 1
    # Check every global memory access against its buffer (a launch raises on an
    # out-of-bounds access); also on with TRITON_SPIRV_BOUNDS_CHECK=1.
    bounds_check: bool = False
    # The target description kernels are compiled for (triton_spirv/target.py):
    # "device", a device type or a named description such as "gpu-64k"; by default
    # $TRITON_SPIRV_TARGET, else "device".
    opencl_target: str = ""
    # How the device gets the kernel: auto, spirv or source (launcher/il.py); also
    # TRITON_SPIRV_PROGRAM.
    program: str = ""
    # On targets that loop programs (CPU devices, target.py), a work-group runs several
    # consecutive programs of the grid's first dimension where the kernel allows it
    # (memref_stage/program_loops.py); False keeps one program per work-group.
    program_loops: bool = True
    # On CPU targets, loops that stream a result the kernel never reads store it with
    # non-temporal stores when the launch writes enough (memref_stage/
    # streaming_stores.py); False keeps ordinary stores.
    streaming_stores: bool = True
    # On targets with work-group collective functions (target.py), GPU-shaped sums,
    # minima and maxima use them (memref_stage/work_group_collectives.py); False keeps
    # the __local tree (e.g. for a simulator of OpenCL C 1.2 such as Oclgrind).
    work_group_collectives: bool = True

    def hash(self) -> str:
        key = "_".join(f"{k}-{v}" for k, v in sorted(self.__dict__.items()))
        # The whole description, not only its name: "gpu" means this device's limits.
        key += "_target-" + current_target(self.opencl_target).key()
        return hashlib.sha256(key.encode()).hexdigest()


# The packages whose Python sources make up the compiler and runtime.
_SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SOURCE_PACKAGES = ("triton_spirv", "emitter_opencl", "launcher", "opencl_abi")


def _source_files():
    return [path for package in _SOURCE_PACKAGES for path in files_under(os.path.join(_SOURCE_ROOT, package), ".py")]


def _hash_sources(paths) -> str:
    digest = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


def _source_hash() -> str:
    """Changes whenever the compiler itself changes, so stale cache entries are not reused.

    Remembered on disk while no source file changes: reading them all would cost
    every warm start ~15 ms."""
    paths = _source_files()
    return remembered("backend_sources", f"{_SOURCE_HASH_VERSION}\0{_SOURCE_ROOT}", paths,
                      lambda: _hash_sources(paths))


class OpenCLBackend(BaseBackend):
    binary_ext = "clbin"

    @staticmethod
    def supports_target(target: GPUTarget):
        return target.backend == BACKEND_NAME

    def __init__(self, target: GPUTarget) -> None:
        super().__init__(target)
        self.binary_ext = "clbin"

    @functools.lru_cache(maxsize=None)
    def hash(self) -> str:
        return f"{BACKEND_NAME}-{self.target.arch}-{_source_hash()}"

    def parse_options(self, opts) -> OpenCLOptions:
        args = {k: opts[k] for k in OpenCLOptions.__dataclass_fields__ if k in opts
                and opts[k] is not None}
        args["arch"] = str(self.target.arch)
        args["warp_size"] = self.target.warp_size
        args.setdefault("sanitize_overflow", False)
        args["opencl_target"] = target_spec(args.get("opencl_target"))
        if os.environ.get(BOUNDS_CHECK_ENV, "0") not in ("", "0"):
            args["bounds_check"] = True
        args["program"] = requested_mode(args.get("program"))
        if "extern_libs" in args:
            args["extern_libs"] = tuple(dict(args["extern_libs"]).items())
        if "supported_fp8_dtypes" in args:
            args["supported_fp8_dtypes"] = tuple(args["supported_fp8_dtypes"])
        return OpenCLOptions(**args)

    def pack_metadata(self, metadata):
        return (metadata.num_warps, metadata.num_ctas, metadata.shared)

    def get_codegen_implementation(self, options):
        return {"min_dot_size": lambda lhs_type, rhs_type: (1, 1, 1),
                "convert_custom_types": _convert_custom_fp8}

    def get_module_map(self) -> Dict[str, ModuleType]:
        from triton.language.extra.cuda import libdevice
        return {"triton.language.extra.libdevice": libdevice}

    def load_dialects(self, ctx):
        pass

    def add_stages(self, stages, options, language):
        if language != Language.TRITON:
            raise NotImplementedError("the OpenCL backend compiles Triton kernels, not Gluon")
        # What later stages need from earlier ones beyond their input: the SPIR-V stage
        # reads the memref stage, clbin the OpenCL C and the SPIR-V binary.
        state: dict = {}
        chain = [("ttir", make_ttir), ("linalg", make_linalg), ("memref", _keeping("memref", make_memref, state)),
                 ("cl", _keeping("cl", make_cl, state))]
        if _wants_spirv(options.program):
            chain.append(("spvasm", functools.partial(make_spvasm, state=state)))
        chain.append(("clbin", functools.partial(make_clbin, state=state)))
        for ext, stage in chain:
            stages[ext] = _dumping(ext, functools.partial(_run_stage, stage, options=options))
        last = list(stages)[-1]
        for ext in list(stages):
            stages[ext] = _viewed(ext, _timed(ext, stages[ext]), last=ext == last)


# fp8e4b15 has no MLIR type in Triton (its values are i8 in TTIR), so Triton leaves its
# casts to the backend; they travel as extern calls (names: opencl_abi) that the frontend
# turns into fp8 conversions (ttir_to_linalg/elementwise.py, fp8e4b15_extern).


def _convert_custom_fp8(arg, dst_ty, fp_downcast_rounding=None, _semantic=None):
    """Casts to and from fp8e4b15 (through f32 when the other side is another fp8)."""
    import triton.language as tl
    from triton._C.libtriton import ir
    src, dst = arg.type.scalar, dst_ty.scalar

    def extern(value, symbol, result):
        return tl.core.extern_elementwise("", "", [value], {(value.type.scalar,): (symbol, result)},
                                          is_pure=True, _semantic=_semantic)

    if src.is_fp8e4b15():
        wide = tl.float32 if dst.is_fp8() else dst
        value = extern(arg, FP8E4B15_TO_FLOAT, wide)
        return _semantic.cast(value, dst) if dst.is_fp8() else value
    if src.is_fp8():
        arg = _semantic.cast(arg, tl.float32)
    rounding = "rtz" if fp_downcast_rounding == ir.ROUNDING_MODE.RTZ else "rtne"
    return extern(arg, FP8E4B15_FROM_FLOAT[rounding], tl.float8e4b15)


def _keeping(name, stage, state):
    def run(src, metadata, options):
        state[name] = stage(src, metadata, options)
        return state[name]
    return run


def _wants_spirv(mode: str) -> bool:
    """The SPIR-V stage runs for `spirv` (which raises on a device without SPIR-V) and,
    in `auto`, on devices that take SPIR-V."""
    if mode == "spirv":
        return True
    if mode == "source":
        return False
    from launcher import get_device
    return bool(spirv_versions(get_device()))


DUMP_ENV = "TRITON_SPIRV_DUMP_DIR"
VIEW_ENV = "TRITON_SPIRV_VIEW_DIR"
BOUNDS_CHECK_ENV = "TRITON_SPIRV_BOUNDS_CHECK"


def _run_stage(stage, src, metadata, options):
    return stage(src, metadata, options)


def _timed(ext, stage):
    """Records each stage's compile time in `metadata["stage_seconds"]` (the viewer
    shows it)."""

    def run(src, metadata):
        start = time.perf_counter()
        out = stage(src, metadata)
        metadata.setdefault("stage_seconds", {})[ext] = time.perf_counter() - start
        return out

    return run


# Stage texts kept while a kernel compiles with $TRITON_SPIRV_VIEW_DIR set; removed
# from the metadata before Triton writes it.
_VIEW_TEXTS = "_view_stage_texts"


def _viewed(ext, stage, last):
    """With $TRITON_SPIRV_VIEW_DIR set, keeps each stage's text and, after the last
    stage, writes the kernel's page there (viewer.py)."""

    def run(src, metadata):
        out = stage(src, metadata)
        directory = os.environ.get(VIEW_ENV)
        if not directory:
            return out
        texts = metadata.setdefault(_VIEW_TEXTS, {})
        texts[ext] = out if isinstance(out, (str, bytes)) else str(out)
        if last:
            metadata.pop(_VIEW_TEXTS)
            _write_view_page(directory, texts, metadata)
        return out

    return run


def _write_view_page(directory, texts, metadata):
    """A page that cannot be written is reported, and the kernel still compiles."""
    from .viewer import triton_kernel_view, write_page
    try:
        view = triton_kernel_view(texts, metadata)
        write_page(view, directory, _page_name(directory, view.kernel, metadata.get("hash")))
    except Exception as exc:  # the viewer must never fail a compilation
        warnings.warn(f"{VIEW_ENV}: no page written for kernel '{metadata.get('name')}' in "
                      f"{directory}: {type(exc).__name__}: {exc}", RuntimeWarning, stacklevel=2)


# (directory, kernel) -> the compilations of the kernel this process wrote pages for.
_VIEWED_HASHES: dict = {}


def _page_name(directory, kernel, compilation_hash):
    """`kernel` for the first specialization of a kernel the process compiles (constants,
    signature), then `kernel-2`, `kernel-3`, ... (autotuning compiles several)."""
    seen = _VIEWED_HASHES.setdefault((os.path.abspath(directory), kernel), [])
    if compilation_hash not in seen:
        seen.append(compilation_hash)
    number = seen.index(compilation_hash) + 1
    return kernel if number == 1 else f"{kernel}-{number}"


def _dumping(ext, stage):
    """Writes each stage's output to $TRITON_SPIRV_DUMP_DIR/<kernel>/<kernel>.<ext> when set."""

    def run(src, metadata):
        out = stage(src, metadata)
        _dump(metadata, ext, out if isinstance(out, (str, bytes)) else str(out))
        return out

    return run


def _dump(metadata, ext: str, content) -> None:
    directory = os.environ.get(DUMP_ENV)
    if directory:
        from .stages import dump_stage
        # One folder per kernel, named after the Triton function (the OpenCL name
        # may differ: C identifiers are sanitized).
        dump_stage(directory, metadata.get("source_name") or metadata.get("name", "kernel"),
                   ext, content)


# ---------------------------------------------------------------------------------------
# Stages


def make_ttir(mod, metadata, options):
    pm = triton_ir.pass_manager(mod.context)
    pm.enable_debug()
    passes.common.add_inliner(pm)
    passes.ttir.add_rewrite_tensor_descriptor_to_pointer(pm)
    passes.common.add_canonicalizer(pm)
    passes.ttir.add_combine(pm)
    passes.ttir.add_reorder_broadcast(pm)
    passes.common.add_cse(pm)
    passes.common.add_symbol_dce(pm)
    passes.ttir.add_loop_unroll(pm)
    pm.run(mod, "make_ttir")
    metadata["name"] = metadata["source_name"] = mod.get_entry_func_name()
    return mod


def make_linalg(src, metadata, options) -> str:
    from .stages import ttir_to_linalg_text
    from .memref_stage.work_group_sharing import work_group_size
    # No kernel versioning on GPU shapes (work-groups of several work-items), a design
    # choice of memory, not a device quirk: the block path's operand tile cannot share
    # with the result tile that the gather path's operand tile shares
    # (sequential_tiles.py works on the kernel's top level and loop bodies, not across
    # branches), so tutorial 03's 128x64x64 config would need 82176 bytes of __local
    # memory versioned (49408 not), over a 64 KiB GPU's; and a versioned GPU-shaped
    # matmul (64x64x32 blocks, 512^3) took 1.5x the unversioned one's time on Intel's
    # runtime, measured in one run. (PoCL, whose miscompile of barriers in branches was
    # the first reason, computes the versioned kernel right since such branches are
    # split there: branch_barrier_splitting.py.) Reductions in vector lanes suit one
    # work-item; work-items reduce as a tree.
    one_work_item = work_group_size(current_target(options.opencl_target), options.num_warps) == 1
    return ttir_to_linalg_text(str(src), versioning_allowed=one_work_item,
                               lane_reductions=one_work_item)


def make_memref(src: str, metadata, options) -> str:
    from .stages import linalg_to_memref_text
    from .memref_stage.passes import PipelineConfig
    from .memref_stage.work_group_sharing import work_group_size
    target = current_target(options.opencl_target)
    config = PipelineConfig.for_target(
        target, work_group_size(target, options.num_warps), program_loops=options.program_loops,
        streaming_stores=options.streaming_stores, collectives=options.work_group_collectives,
        bounds_check=options.bounds_check)
    return linalg_to_memref_text(src, config)


def make_cl(src: str, metadata, options) -> str:
    from .stages import memref_to_opencl
    emitted = memref_to_opencl(src, bounds_check=options.bounds_check)
    metadata["name"] = emitted.name
    # Before anything is built or cached: tiles beyond the target's local memory.
    check_kernel_fits(emitted, current_target(options.opencl_target))
    # Scripts written for GPUs divide by the shared memory a kernel uses (occupancy
    # estimates such as max_shared_mem // shared), so a kernel without tiles reports 1.
    metadata["shared"] = max(1, emitted.local_mem_bytes)
    metadata["local_mem_bytes"] = emitted.local_mem_bytes
    # What Triton's launchers read: no kernel of this backend needs scratch memory.
    metadata["global_scratch_size"] = 0
    metadata["global_scratch_align"] = 1
    metadata["profile_scratch_size"] = 0
    metadata["profile_scratch_align"] = 1
    metadata["local_size"] = list(emitted.local_size)
    metadata["arg_types"] = list(emitted.arg_types)
    target = current_target(options.opencl_target)
    if emitted.sub_group_functions:
        # sub_group_reduce_*, get_sub_group_id: the OpenCL C version in which the target
        # has them (work-group collectives, if any, come with it: CL2.0 or CL3.0 too).
        metadata["build_options"] = [f"-cl-std={target.sub_group_functions}"]
    elif emitted.work_group_collectives:
        # work_group_reduce_*: the OpenCL C version in which the target has them.
        metadata["build_options"] = [f"-cl-std={target.work_group_collectives}"]
    if emitted.unoptimized_build:
        # A device quirk's (memref_stage/unoptimized_builds.py): its optimizer
        # miscompiles this kernel.
        metadata["build_options"] = list(metadata.get("build_options") or ()) + ["-cl-opt-disable"]
    if emitted.asserts:
        # tl.device_assert: the launcher passes the record and names the failed assert.
        metadata["asserts"] = [list(entry) for entry in emitted.asserts]
    if emitted.flat_memory:
        # tt.int_to_ptr: the launcher passes host-memory buffers (zero-copy devices only).
        metadata["flat_memory"] = emitted.flat_memory
    if emitted.program_loop:
        # A work-group runs consecutive programs: the launcher passes the grid's first
        # dimension and launches fewer groups (launcher/program_loops.py).
        metadata["program_loop"] = True
    if options.bounds_check:
        _add_bounds_metadata(metadata, emitted)
    return emitted.source


def make_spvasm(src: str, metadata, options, state) -> str:
    """The SPIR-V module of the memref stage; its binary waits in `state` for clbin.
    In `auto` mode a kernel the stage cannot convert keeps OpenCL C (logged once)."""
    from .stages import spirv_for_kernel
    # The Groups capability (work-group collectives, sub-group reductions) only for
    # targets that have them.
    target = current_target(options.opencl_target)
    groups = options.work_group_collectives and bool(
        target.work_group_collectives or target.sub_group_functions)
    module = spirv_for_kernel(state["memref"], metadata["name"], options.program,
                              options.bounds_check, groups, target.quirks)
    if module is None:
        return f"// kernel '{metadata['name']}' runs from OpenCL C (see the log)\n"
    state["spirv"] = module.binary
    # The binary is not a Triton stage: Triton reads every stage but the last as text.
    _dump(metadata, "spv", module.binary)
    return module.assembly


def make_clbin(src: str, metadata, options, state) -> bytes:
    from .stages import kernel_clbin
    return kernel_clbin(state["cl"], metadata, state.get("spirv"), options.program)


def _add_bounds_metadata(metadata, emitted) -> None:
    """Bounds-checked kernels take hidden parameters after their own (the launcher
    passes them); the sites let it name the access that went out of bounds."""
    metadata["arg_types"] = list(emitted.arg_types) + list(emitted.hidden_arg_types)
    metadata["bounds"] = {"params": list(emitted.bounds_params), "sites": list(emitted.bounds_sites)}
