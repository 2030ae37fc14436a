"""What both frontends know about the OpenCL device they compile for.

A `TargetDescription` is read once per process from the OpenCL device in use
(`describe_device`), or taken from a named description, so that kernels shaped for a
kind of device can be compiled (and, within the real device's limits, run) on another:

    TRITON_SPIRV_TARGET=gpu-64k python3 script.py         # every kernel of the process
    kernel[grid](..., opencl_target="gpu-32k")            # one Triton kernel
    TRITON_SPIRV_TARGET=gpu                               # the device, typed as a GPU

Values: `device` (the default: the device as it is), a device type (`cpu`, `gpu`,
`accelerator`: the device's description with that type) or a named description
(`NAMED_TARGETS`). The description is part of Triton's cache key (the backend option
`opencl_target`, and the GPUTarget's arch when the variable is set) and of the HLO
compile key. The variable is read when a kernel is first compiled in a process.

On devices with OpenCL C's work-group collective functions (`work_group_collectives`,
the `-cl-std` that provides them), GPU-shaped reductions use them instead of a
`__local` tree (memref_stage/work_group_collectives.py);
TRITON_SPIRV_WORK_GROUP_COLLECTIVES=0 keeps the tree (a different description, so a
different cache key). On devices with OpenCL C's sub-group functions as well
(`sub_group_functions`: OpenCL C 3.0's `__opencl_c_subgroups`, or `cl_khr_subgroups`
with OpenCL C 2.0), those reductions run as `sub_group_reduce_*` within sub-groups and
one `__local` step across them (memref_stage/work_group_sub_groups.py);
TRITON_SPIRV_SUB_GROUP_REDUCTIONS=0 keeps the work-group collectives.

Quirks (`QUIRKS`): bugs of an OpenCL implementation that the code we emit cannot avoid
in its plain form, each by implementation and version, with a one-line reason and the
test that reproduces it. A description carries the names of the quirks of the device
that runs its kernels (`quirks`, part of its key); a pass that works around one reads
`target.has_quirk(...)` (or the quirk set it is handed), so devices without the bug
get the plain form. TRITON_SPIRV_QUIRKS_OFF=name,... compiles as if the device had
not those quirks (to check whether a new driver version still needs a workaround; a
different description, so a different cache key).

Compile-time checks use it: a kernel whose `__local` tiles exceed the target's local
memory, or whose work-group exceeds its work-group size, or that has 64-bit atomics on a
device without cl_khr_int64_base/extended_atomics, fails at compile time
(`check_kernel_fits`).
"""
from __future__ import annotations

import ctypes
import functools
import itertools
import os
from dataclasses import asdict, dataclass, replace

TARGET_ENV = "TRITON_SPIRV_TARGET"
COLLECTIVES_ENV = "TRITON_SPIRV_WORK_GROUP_COLLECTIVES"
QUIRKS_OFF_ENV = "TRITON_SPIRV_QUIRKS_OFF"
SUB_GROUPS_ENV = "TRITON_SPIRV_SUB_GROUP_REDUCTIONS"
DEVICE = "device"
DEVICE_TYPES = ("cpu", "gpu", "accelerator")


@dataclass(frozen=True)
class TargetDescription:
    name: str                              # "device", a device type or a named description
    device_type: str                       # "cpu", "gpu" or "accelerator"
    max_work_group_size: int
    preferred_work_group_multiple: int     # CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE
    sub_group_sizes: tuple[int, ...]       # () where the device has no sub-groups
    local_mem_bytes: int
    fp16: bool
    fp64: bool
    il_versions: tuple[str, ...]           # e.g. ("SPIR-V_1.0", ...)
    compute_units: int
    vendor: str
    device_name: str
    driver_version: str
    # The OpenCL C version (`-cl-std` value, "CL2.0" or "CL3.0") in which the device
    # has the work-group collective functions (work_group_reduce_add, ...); "" without.
    work_group_collectives: str = ""
    # The `-cl-std` value under which the device compiles OpenCL C's sub-group
    # functions (get_sub_group_id, sub_group_reduce_add, ...); "" without.
    sub_group_functions: str = ""
    # cl_khr_int64_base_atomics and cl_khr_int64_extended_atomics: atomics on 64-bit
    # elements (integers, and f64 through compare-exchange loops on their bits).
    int64_atomics: bool = True
    # The OpenCL implementation and its version ("pocl", "3.1"; launcher.device_runtime),
    # and the names of its quirks (QUIRKS) that the compiler works around.
    runtime: str = ""
    runtime_version: str = ""
    quirks: tuple[str, ...] = ()

    def has_quirk(self, name: str) -> bool:
        if name not in QUIRKS:
            raise KeyError(f"unknown device quirk {name!r} (known: {', '.join(QUIRKS)})")
        return name in self.quirks

    @property
    def is_cpu(self) -> bool:
        return self.device_type == "cpu"

    @property
    def loops_programs(self) -> bool:
        """Whether a work-group runs several consecutive programs (memref_stage/
        program_loops.py): on CPU devices, where each work-group costs a call of the
        runtime's scheduler and many small ones cost more than they balance."""
        return self.is_cpu

    def key(self) -> str:
        """Every field, as text: equal keys compile alike."""
        return ";".join(f"{k}={v}" for k, v in sorted(asdict(self).items()))

    def summary(self) -> str:
        """For error messages: which target and its limits."""
        where = self.device_name if self.name in (DEVICE, *DEVICE_TYPES) else "named description"
        return (f"target '{self.name}' ({self.device_type}, {where}: {self.local_mem_bytes} bytes "
                f"of local memory, work-groups of at most {self.max_work_group_size})")


def _named_gpu(name: str, local_kib: int, sub_group: int) -> TargetDescription:
    """A GPU of the common shape: work-groups of up to 256, sub-groups of `sub_group`."""
    return TargetDescription(
        name=name, device_type="gpu", max_work_group_size=256,
        preferred_work_group_multiple=sub_group, sub_group_sizes=(sub_group,),
        local_mem_bytes=local_kib * 1024, fp16=True, fp64=False,
        il_versions=("SPIR-V_1.0",), compute_units=32, vendor="named description",
        device_name=name, driver_version="")


# Shapes of GPU OpenCL devices, to compile for without one: 64 KB of local memory
# (AMD, NVIDIA, Intel Xe) and 32 KB (Arm Mali, Qualcomm Adreno, older parts).
NAMED_TARGETS = {
    "gpu-64k": _named_gpu("gpu-64k", 64, 32),
    "gpu-32k": _named_gpu("gpu-32k", 32, 32),
}


# ---------------------------------------------------------------------------------------
# Quirks


@dataclass(frozen=True)
class Quirk:
    """A bug of an OpenCL implementation the compiler works around on it alone."""
    name: str
    runtime: str                 # launcher.device_runtime's name, e.g. "pocl"
    fixed_in: str | None         # the first version without the bug; None: none known yet
    reason: str                  # what goes wrong, in one line
    workaround: str              # what the compiler emits instead, and where
    reproducer: str              # the test that shows the bug on that implementation

    def applies(self, runtime: str, version: str) -> bool:
        return runtime == self.runtime and (
            self.fixed_in is None or _version_tuple(version) < _version_tuple(self.fixed_in))


def _version_tuple(version: str) -> tuple[int, ...]:
    """"3.1+debian" -> (3, 1): the leading dotted numbers."""
    numbers = []
    for part in version.split("."):
        digits = "".join(itertools.takewhile(str.isdigit, part))
        if not digits:
            break
        numbers.append(int(digits))
        if len(digits) < len(part):
            break
    return tuple(numbers)


# Every PoCL quirk applies to every PoCL version until a release is verified to compute
# its reproducer right (`fixed_in`): a workaround costs time, the bug a wrong result.
_POCL_QUIRKS = (
    Quirk("abs_of_int_min_poison", "pocl", None,
          "the optimizer takes OpenCL C's abs of the most negative integer as undefined: "
          "`int v = abs(x); v > 0` holds v == INT_MIN and still folds to true for it "
          "(a mask `tl.abs(x) > 0` after a cumprod that wrapped); -cl-opt-disable, "
          "Intel's runtime and Oclgrind compute it right",
          "integer abs becomes `max(x, 0 - x)` in wrapping arithmetic "
          "(memref_stage/integer_abs.py)",
          "tests/test_pocl_int_min_abs.py"),
    Quirk("barrier_in_uniform_branch", "pocl", None,
          "work between two barriers inside a uniform branch holding barriers never "
          "lands, or reads __local tiles as zeros (early-returning programs' stores "
          "after a reduction; GPU shape)",
          "such a branch is split at its barriers: guarded stretches, the barriers "
          "outside (memref_stage/branch_barrier_splitting.py); one it cannot split gets "
          "each barrier doubled (work_group_barriers.py, double_barriers_in_branches)",
          "tests/test_device_quirks.py::test_early_return_rows, "
          "tests/test_pocl_early_return_store.py"),
    Quirk("register_blocks_beside_private_loops", "pocl", None,
          "a work-group-shared loop of float16 register blocks (tl.dot's micro-kernel) "
          "followed, before the next barrier, by loops over private arrays computes "
          "wrong sums (GPU shape, 3 of 24 matmul configs; right at -cl-opt-disable)",
          "the register blocks' loop stands alone between two barriers "
          "(memref_stage/work_group_barriers.py, register-block-barriers)",
          "tests/test_pocl_register_blocks.py"),
    Quirk("register_blocks_for_every_work_item", "pocl", None,
          "a store to __local memory by some of the work-items never lands when the "
          "same barrier region copies a private array in a loop of exactly two vector "
          "copies (float16 over 32 floats, float8 over 16): GPU-shaped tutorial 06 "
          "attention's private 4 x float8 accumulator, with register blocks as many as "
          "the work-items, lost its l_i update (right at -cl-opt-disable, unrolled, in "
          "narrower vectors, with other array sizes)",
          "a row copied between two private arrays in at most four vectors is "
          "straight-line vector copies, no loop (memref_stage/copy_lowering.py, "
          "unroll_private_rows; GPU shape), so the accumulator's private copy is never "
          "a two-vector loop; the register blocks follow the work-group as elsewhere",
          "tests/test_pocl_register_blocks_every_work_item.py, "
          "tests/test_tutorials.py (attention, TRITON_SPIRV_TARGET=gpu)"),
    Quirk("one_sided_barrier_branch", "pocl", None,
          "the work-group compiler crashes on an if whose one branch holds barriers and "
          "the other none",
          "the branch without barriers gets one at its start "
          "(memref_stage/work_group_sharing.py, _balance_barriers)",
          "tests/test_lang_control_flow.py (TRITON_SPIRV_TARGET=gpu); no reduced kernel"),
    Quirk("barrier_loop_after_branch", "pocl", None,
          "a loop holding barriers, entered after an if with no barrier between, loses "
          "work-item 0's section before it from the second tile on (tutorial 09)",
          "such a loop gets a barrier before it "
          "(memref_stage/work_group_sharing.py, _enter_barrier_loops_after_a_barrier)",
          "tests/test_tutorials.py (persistent matmul, TRITON_SPIRV_TARGET=gpu)"),
    Quirk("uniform_loop_after_branch", "pocl", None,
          "a loop without barriers whose trip count is the same for every work-item "
          "in a kernel with barriers (PoCL gives it implicit loop barriers), entered "
          "after a branch on the "
          "work-item with no barrier between, loses that branch's private results: "
          "GPU-shaped float32 attention (tutorial 06) lost its l_i sums (M -inf, NaN "
          "outputs; right at -cl-opt-disable)",
          "such a loop gets a barrier before it "
          "(memref_stage/work_group_barriers.py, _enter_uniform_loops_after_a_barrier)",
          "tests/test_pocl_f32_attention_reduced.py, "
          "tests/test_tutorials.py (attention float32, TRITON_SPIRV_TARGET=gpu)"),
    Quirk("branch_after_barrier_loop", "pocl", None,
          "the work-group compiler aborts the process (ParallelRegion.cc: \"Incoming edges "
          "to non-entry block!\") on a loop holding barriers followed by a branch on the "
          "work-item before the next barrier (a loop with a tensor carry, then a cumsum)",
          "such a loop gets a barrier after it "
          "(memref_stage/work_group_sharing.py, _leave_barrier_loops_by_a_barrier)",
          "tests/test_pocl_barrier_loop_exit.py"),
    Quirk("uniform_branches_in_work_item_branch", "pocl", None,
          "after a loop whose trip count is the same for every work-item (PoCL gives it "
          "implicit barriers), a branch on the work-item holding branches on uniform "
          "conditions runs those on every work-item: two masked scalar atomics after a "
          "reduction (GPU shape) count 64 times over, or hang in a float atomic's "
          "compare-exchange loop; -cl-opt-disable, Intel's runtime and Oclgrind run it "
          "right",
          "a single-work-item section's conditional writes are sections of their own, "
          "guarded by `lid == 0 & condition` (memref_stage/single_work_item.py)",
          "tests/test_pocl_work_item_branch.py"),
    Quirk("build_may_abort", "pocl", None,
          "the OpenCL compiler aborts the whole process on some kernels (LLVM assertions "
          "in the work-group compiler) and on truncated program binaries",
          "builds from source run in a child process and a dying child becomes a "
          "KernelBuildCrash (launcher/isolated_build.py, BUILD_MAY_ABORT_RUNTIMES, which "
          "agrees with this record); cached binaries carry a checksum (launcher/clbin.py)",
          "tests/test_isolated_build.py"),
    Quirk("one_round_loops_strided", "pocl", None,
          "hangs on one-round distributed loops made if (lid < n) sections between "
          "barriers (host tensor-descriptor copy kernel)",
          "a one-round loop indexing a private array keeps its strided form "
          "(memref_stage/work_group_sharing.py, count_rounds)",
          "tests/test_runtime.py (host descriptors, TRITON_SPIRV_TARGET=gpu)"),
    Quirk("chunked_distribution", "pocl", None,
          "computes tutorial 06's fp8 attention wrong (running max -inf, NaN outputs) when "
          "distributed loops give each work-item one iteration per round; Intel's runtime "
          "and Oclgrind compute the same OpenCL C right, with no race",
          "loops over elements give a work-item up to 4 consecutive iterations "
          "(memref_stage/work_group_sharing.py, _chunk)",
          "tests/test_tutorials.py::test_06_fused_attention_fp8_mode (TRITON_SPIRV_TARGET=gpu)"),
)

# Intel's CPU OpenCL runtime (launcher.device_runtime: "intel-r", versions such as
# "2026.22.10.0.01-160000"); each quirk checked on 2026.22.10.
_INTEL_QUIRKS = (
    Quirk("fneg_across_barrier", "intel-r", None,
          "a float negation a work-item keeps in private memory across a barrier reads, "
          "after it, one work-item's value for all (GPU shape: -x of a bf16 load before "
          "a cumsum stored -0.0); -cl-opt-disable, PoCL and Oclgrind compute it right",
          "in kernels holding barriers, negations become fma(x, -1, -0), exact "
          "(memref_stage/barrier_negations.py)",
          "tests/test_intel_quirks.py::test_negation_across_barrier"),
    Quirk("i8_private_arrays", "intel-r", None,
          "programs built from SPIR-V lose the masked stores of values read from a "
          "Function-storage i8 array (GPU shape, num_warps=1: a constant int8 tile's "
          "store never lands); the OpenCL C and i16/i32 arrays are right",
          "private i8 tiles hold i32 in SPIR-V (spirv/private_bytes.py)",
          "tests/test_intel_quirks.py::test_i8_private_array_in_spirv"),
    Quirk("private_zero_tiles_in_gpu_spirv", "intel-r", None,
          "GPU-shaped programs built from SPIR-V lose the masked stores of a zero tile "
          "kept in a private array (tl.full(0) of int8/16/32 or float32, 32x32 to "
          "64x64 blocks, num_warps 1-4; other constants, the OpenCL C and the CPU "
          "shape's SPIR-V are right)",
          "GPU-shaped kernels that store zeros into a private array are built from "
          "OpenCL C there: the SPIR-V stage refuses them (spirv/lower.py, "
          "check_private_arrays), which auto mode answers with the OpenCL C",
          "tests/test_intel_quirks.py::test_zero_tile_gpu_shape"),
    Quirk("not_then_integer_max", "intel-r", None,
          "kernels taking an integer max or min of a bitwise not (tl.max(~x), "
          "tl.maximum(~x, y)) are miscompiled by its optimizer: a masked atomic after an "
          "early return lost, wrong values, or the compiler crashing; -cl-opt-disable "
          "computes the OpenCL C right, the SPIR-V stays wrong",
          "such kernels are built from OpenCL C with -cl-opt-disable "
          "(memref_stage/unoptimized_builds.py)",
          "tests/test_intel_quirks.py::test_not_then_max"),
    Quirk("byte_accumulators_in_loops", "intel-r", None,
          "its backend dies (Cannot emit physreg copy instruction, killing the process) "
          "on a loop folding rows of an i8 tile into an i8 accumulator 8 columns wide "
          "with ^, | or + (tl.xor_sum(x, axis=0) of a uint8 16x8 tile); an int "
          "accumulator and -cl-opt-disable build",
          "byte reductions whose combines keep low bits (add, sub, mul, and, or, xor) "
          "fold in i32 and truncate once (memref_stage/byte_accumulators.py)",
          "tests/test_intel_quirks.py::test_byte_accumulators_reduced"),
    Quirk("barrier_in_fill_branch", "intel-r", None,
          "its compiler crashes (SIGSEGV in its pass sycl-kernel-reduce-cross-barrier-"
          "values, killing the process) on a value a work-item keeps across barriers at "
          "the end of partial tiles' fill branches, each followed by a loop of async "
          "work-group copies (GPU shape: masked 2-D loads around a masked load kept in "
          "a private array, then a cumsum); -cl-opt-disable and PoCL compute it right",
          "the barrier after a partial tile's fill goes after its branch, not into it "
          "(memref_stage/work_group_barriers.py, barriers_in_branches)",
          "tests/test_intel_quirks.py::test_barrier_in_fill_branch_reduced"),
)
QUIRKS = {quirk.name: quirk for quirk in (*_POCL_QUIRKS, *_INTEL_QUIRKS)}


def device_quirks(runtime: str, version: str) -> tuple[str, ...]:
    """The names of the quirks of an implementation at a version, in table order."""
    return tuple(q.name for q in QUIRKS.values() if q.applies(runtime, version))


def without_quirks(description: TargetDescription) -> TargetDescription:
    """`description` as for a device without bugs: the plain forms everywhere."""
    return replace(description, quirks=())


def target_spec(spec: str | None = None) -> str:
    """The target asked for: `spec` (a backend option), else $TRITON_SPIRV_TARGET, else
    `device`; checked, so that a typo fails before anything compiles."""
    chosen = (spec or os.environ.get(TARGET_ENV, "") or DEVICE).strip()
    if chosen != DEVICE and chosen not in DEVICE_TYPES and chosen not in NAMED_TARGETS:
        raise ValueError(f"unknown OpenCL target {chosen!r} (option opencl_target or "
                         f"{TARGET_ENV}): expected '{DEVICE}', a device type "
                         f"({', '.join(DEVICE_TYPES)}) or a named description "
                         f"({', '.join(NAMED_TARGETS)})")
    return chosen


def resolve_target(spec: str | None = None, device=None) -> TargetDescription:
    """The description for `spec` (see target_spec); `device` (a launcher OpenCLDevice)
    defaults to the device in use."""
    chosen = target_spec(spec)
    description = _without_quirks_turned_off(
        describe_device(device if device is not None else _device_in_use()))
    if chosen in NAMED_TARGETS:
        # Compiled for that shape, run on this device: its quirks are this device's.
        return replace(NAMED_TARGETS[chosen], quirks=description.quirks)
    description = _without_collectives_if_asked(description)
    return description if chosen == DEVICE else replace(description, name=chosen, device_type=chosen)


def _without_quirks_turned_off(description: TargetDescription) -> TargetDescription:
    """The description less the quirks that $TRITON_SPIRV_QUIRKS_OFF names."""
    names = [n.strip() for n in os.environ.get(QUIRKS_OFF_ENV, "").split(",") if n.strip()]
    unknown = [n for n in names if n not in QUIRKS]
    if unknown:
        raise ValueError(f"{QUIRKS_OFF_ENV} names unknown device quirks {', '.join(unknown)} "
                         f"(known: {', '.join(QUIRKS)})")
    if not names:
        return description
    return replace(description, quirks=tuple(q for q in description.quirks if q not in names))


def _without_collectives_if_asked(description: TargetDescription) -> TargetDescription:
    """$TRITON_SPIRV_WORK_GROUP_COLLECTIVES=0: the device as if it had neither work-group
    collective nor sub-group functions (reductions keep the `__local` tree; e.g. for a
    run under a simulator of OpenCL C 1.2, or to compare the two);
    $TRITON_SPIRV_SUB_GROUP_REDUCTIONS=0: as if it had no sub-group functions."""
    if os.environ.get(COLLECTIVES_ENV, "").strip() == "0":
        return replace(description, work_group_collectives="", sub_group_functions="")
    if os.environ.get(SUB_GROUPS_ENV, "").strip() == "0":
        return replace(description, sub_group_functions="")
    return description


def current_target(spec: str | None = None) -> TargetDescription:
    """Like resolve_target, but without a usable device (emitting only) the target is
    the default device: PoCL on the CPU, described by NO_DEVICE."""
    from launcher.errors import NoOpenCLDeviceError
    try:
        return resolve_target(spec)
    except NoOpenCLDeviceError:
        chosen = target_spec(spec)
        if chosen in (DEVICE, *DEVICE_TYPES):
            return replace(NO_DEVICE, device_type="cpu" if chosen == DEVICE else chosen)
        return NAMED_TARGETS[chosen]


# Emitting without any OpenCL device: kernels are made for a CPU device like PoCL.
NO_DEVICE = TargetDescription(
    name=DEVICE, device_type="cpu", max_work_group_size=4096, preferred_work_group_multiple=8,
    sub_group_sizes=(), local_mem_bytes=1 << 20, fp16=False, fp64=True, il_versions=(),
    compute_units=1, vendor="none", device_name="no OpenCL device", driver_version="")


def _device_in_use():
    from launcher import get_device
    return get_device()


# ---------------------------------------------------------------------------------------
# Reading a device


@functools.lru_cache(maxsize=None)
def describe_device(device) -> TargetDescription:
    """The description of a launcher OpenCLDevice, from OpenCL device queries."""
    import pyopencl as cl
    from launcher.device import device_runtime
    d = device.device
    extensions = set(d.extensions.split())
    runtime, version = device_runtime(device.platform, d)
    description = TargetDescription(
        name=DEVICE, device_type=_device_type(cl, d.type),
        max_work_group_size=int(d.max_work_group_size),
        preferred_work_group_multiple=_preferred_multiple(cl, d),
        sub_group_sizes=_sub_group_sizes(cl, device, extensions),
        local_mem_bytes=int(d.local_mem_size),
        fp16="cl_khr_fp16" in extensions, fp64="cl_khr_fp64" in extensions,
        il_versions=tuple(_optional_info(cl, d, "IL_VERSION", "").split()),
        compute_units=int(d.max_compute_units),
        vendor=d.vendor.strip(), device_name=d.name.strip(),
        driver_version=d.driver_version.strip(),
        work_group_collectives=_collectives_std(cl, d),
        sub_group_functions=_sub_groups_std(cl, d, extensions),
        int64_atomics=_INT64_ATOMICS <= extensions,
        runtime=runtime, runtime_version=version)
    return replace(description, quirks=device_quirks(description.runtime,
                                                     description.runtime_version))


_INT64_ATOMICS = {"cl_khr_int64_base_atomics", "cl_khr_int64_extended_atomics"}


def _device_type(cl, bits: int) -> str:
    # A device may set several bits (e.g. DEFAULT too); the kind that shapes kernels wins.
    for kind, bit in (("gpu", cl.device_type.GPU), ("accelerator", cl.device_type.ACCELERATOR),
                      ("cpu", cl.device_type.CPU)):
        if bits & bit:
            return kind
    return "accelerator"   # CL_DEVICE_TYPE_CUSTOM


def _optional_info(cl, d, name: str, default):
    """A device query that OpenCL 1.x devices may not answer."""
    param = getattr(cl.device_info, name, None)
    if param is None:
        return default
    try:
        return d.get_info(param)
    except cl.Error:
        return default


# OpenCL C 2.x has the work-group collective functions; in 3.0 they are optional,
# announced by this feature macro.
_COLLECTIVES_FEATURE = "__opencl_c_work_group_collective_functions"


def _collectives_std(cl, d) -> str:
    """The `-cl-std` value under which the device compiles work-group collective
    functions: CL3.0 where it announces the feature, else CL2.0 where it takes OpenCL
    C 2.0, else "" (OpenCL C 1.x devices such as PoCL 3.1 or Oclgrind)."""
    features = _optional_info(cl, d, "OPENCL_C_FEATURES", ())
    if any(feature.name == _COLLECTIVES_FEATURE for feature in features):
        return "CL3.0"
    versions = [_major(v.version) for v in _optional_info(cl, d, "OPENCL_C_ALL_VERSIONS", ())]
    if not versions:    # OpenCL 2.x devices: only CL_DEVICE_OPENCL_C_VERSION
        words = _optional_info(cl, d, "OPENCL_C_VERSION", "").split()   # "OpenCL C 2.0 ..."
        versions = [int(words[2].split(".")[0])] if len(words) > 2 and words[2][:1].isdigit() else []
    return "CL2.0" if 2 in versions else ""


_SUB_GROUPS_FEATURE = "__opencl_c_subgroups"


def _sub_groups_std(cl, d, extensions: set) -> str:
    """The `-cl-std` value under which the device compiles sub-group functions: CL3.0
    where it announces the feature, else CL2.0 with the cl_khr_subgroups extension on
    an OpenCL C 2.0 device, else "" (PoCL 3.1, Oclgrind)."""
    features = _optional_info(cl, d, "OPENCL_C_FEATURES", ())
    if any(feature.name == _SUB_GROUPS_FEATURE for feature in features):
        return "CL3.0"
    if "cl_khr_subgroups" in extensions and _collectives_std(cl, d) == "CL2.0":
        return "CL2.0"
    return ""


def _major(version: int) -> int:
    """The major number of a packed cl_version (major << 22 | minor << 12 | patch)."""
    return int(version) >> 22


def _preferred_multiple(cl, d) -> int:
    # A device query since OpenCL 3.0; older devices only say it per kernel.
    return int(_optional_info(cl, d, "PREFERRED_WORK_GROUP_SIZE_MULTIPLE", 0) or 1)


# CL_DEVICE_SUB_GROUP_SIZES_INTEL (cl_intel_required_subgroup_size): every size the
# compiler can choose. pyopencl has no name for it, so it is read through the C API.
_SUB_GROUP_SIZES_INTEL = 0x4108


def _sub_group_sizes(cl, device, extensions: set) -> tuple[int, ...]:
    if "cl_intel_required_subgroup_size" in extensions:
        sizes = _intel_sub_group_sizes(device.device)
        if sizes:
            return sizes
    if int(_optional_info(cl, device.device, "MAX_NUM_SUB_GROUPS", 0) or 0) <= 0:
        return ()
    return _compiled_sub_group_size(cl, device)


def _intel_sub_group_sizes(d) -> tuple[int, ...]:
    try:
        opencl = ctypes.CDLL("libOpenCL.so.1")
    except OSError:
        return ()
    get_info = opencl.clGetDeviceInfo
    get_info.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_size_t, ctypes.c_void_p,
                         ctypes.POINTER(ctypes.c_size_t)]
    size = ctypes.c_size_t(0)
    if get_info(d.int_ptr, _SUB_GROUP_SIZES_INTEL, 0, None, ctypes.byref(size)) != 0:
        return ()
    values = (ctypes.c_size_t * (size.value // ctypes.sizeof(ctypes.c_size_t)))()
    if get_info(d.int_ptr, _SUB_GROUP_SIZES_INTEL, size.value, values, None) != 0:
        return ()
    return tuple(int(v) for v in values)


_SUB_GROUP_PROBE = "__kernel void sub_group_probe(__global int* x) { x[get_global_id(0)] = 1; }"


def _compiled_sub_group_size(cl, device) -> tuple[int, ...]:
    """Devices with sub-groups but no list of sizes: the size the compiler picks for a
    plain kernel in a work-group of the preferred size."""
    from launcher.build import build_quietly
    d = device.device
    try:
        kernel = cl.Kernel(build_quietly(cl.Program(device.context, _SUB_GROUP_PROBE)), "sub_group_probe")
        local = min(256, int(d.max_work_group_size))
        return (int(kernel.get_sub_group_info(
            d, cl.kernel_sub_group_info.MAX_SUB_GROUP_SIZE_FOR_NDRANGE, (local,))),)
    except (cl.Error, AttributeError):
        return ()


# ---------------------------------------------------------------------------------------
# Compile-time limits


class MissingDeviceFeature(Exception):
    """A kernel needs what the target device does not have (an OpenCL extension)."""


def check_kernel_fits(kernel, target: TargetDescription) -> None:
    """Raise Triton's OutOfResources (GridError without Triton) when an emitted kernel
    (emitter_opencl.EmittedKernel) needs more `__local` memory or a larger work-group
    than `target` has, naming the kernel, the limit and the biggest tiles with the
    source line that made each; MissingDeviceFeature when it has 64-bit atomics and the
    target lacks their extensions."""
    from launcher.resources import limit_error
    if kernel.int64_atomics_line and not target.int64_atomics:
        raise MissingDeviceFeature(
            f"kernel '{kernel.name}' has 64-bit atomics ({kernel.int64_atomics_line}: "
            f"int64/uint64/float64 elements) but {target.summary()} lacks "
            f"{' and '.join(sorted(_INT64_ATOMICS))}")
    x, y, z = kernel.local_size
    if x * y * z > target.max_work_group_size:
        raise limit_error(x * y * z, target.max_work_group_size, "threads", kernel.name,
                          kernel.source, kernel.local_size, target.summary())
    if kernel.local_mem_bytes > target.local_mem_bytes:
        raise limit_error(kernel.local_mem_bytes, target.local_mem_bytes, "shared memory",
                          kernel.name, kernel.source, kernel.local_size, target.summary(),
                          tiles=[tile.describe() for tile in
                                 sorted(kernel.local_tiles, key=lambda t: -t.bytes)])
