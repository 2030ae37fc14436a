"""Unique C identifiers for kernels, kernel arguments, SSA values, loops and buffers.

Every name the emitter prints comes from a `NameTable`, which never hands out a word
that means something to an OpenCL C compiler: a kernel called `kernel` or `half`, an
argument called `global`, `float4`, `M_PI` or `vload4` would not build (keywords, type
names, macros) or would shadow a builtin that the generated code calls.
"""

from __future__ import annotations

import re

# C99 keywords (6.4.1) and OpenCL C keywords, qualifiers and operators (OpenCL C 2.0 6.1).
_KEYWORDS = """
auto break case char const continue default do double else enum extern float for goto
if inline int long register restrict return short signed sizeof static struct switch
typedef union unsigned void volatile while _Bool _Complex _Imaginary
global local constant private generic kernel read_only write_only read_write uniform
pipe vec_step true false
""".split()

# Scalar types, the reserved ones (6.1.4) and the opaque ones (images, events, ...).
_SCALAR_TYPES = ("bool char uchar short ushort int uint long ulong half float double "
                 "quad").split()
_OTHER_TYPES = """
size_t ptrdiff_t intptr_t uintptr_t complex imaginary event_t sampler_t queue_t ndrange_t
clk_event_t reserve_id_t cl_mem_fence_flags memory_order memory_scope kernel_enqueue_flags_t
clk_profiling_info image1d_t image1d_array_t image1d_buffer_t image2d_t image2d_array_t
image2d_depth_t image2d_array_depth_t image2d_msaa_t image2d_array_msaa_t
image2d_msaa_depth_t image2d_array_msaa_depth_t image3d_t atomic_flag atomic_int
atomic_uint atomic_long atomic_ulong atomic_float atomic_double atomic_intptr_t
atomic_uintptr_t atomic_size_t atomic_ptrdiff_t
""".split()
_VECTOR_WIDTHS = ("2", "3", "4", "8", "16")

# Macros of the OpenCL C headers (a parameter called M_PI would expand to a number).
_MACROS = """
NULL NAN INFINITY HUGE_VAL HUGE_VALF MAXFLOAT FP_ILOGB0 FP_ILOGBNAN FP_FAST_FMA
FP_FAST_FMAF MAX_WORK_DIM CHAR_BIT CHAR_MAX CHAR_MIN SCHAR_MAX SCHAR_MIN UCHAR_MAX
SHRT_MAX SHRT_MIN USHRT_MAX INT_MAX INT_MIN UINT_MAX LONG_MAX LONG_MIN ULONG_MAX
ATOMIC_FLAG_INIT ATOMIC_VAR_INIT kernel_exec
""".split()
_MATH_CONSTANTS = ("E LOG2E LOG10E LN2 LN10 PI PI_2 PI_4 1_PI 2_PI 2_SQRTPI SQRT2 "
                   "SQRT1_2").split()
_FLOAT_LIMITS = "DIG MANT_DIG MAX_10_EXP MAX_EXP MIN_10_EXP MIN_EXP RADIX MAX MIN EPSILON".split()

# Builtin functions (OpenCL C 1.2 6.12 and the later ones the default CPU runtime's headers declare),
# except the generated families below.
_FUNCTIONS = """
abs abs_diff acos acosh acospi add_sat all any asin asinh asinpi async_work_group_copy
async_work_group_strided_copy atan atan2 atan2pi atanh atanpi barrier bit_reverse
bitfield_extract_signed bitfield_extract_unsigned bitfield_insert bitselect
capture_event_profiling_info cbrt ceil clamp clz copysign cos cosh cospi
create_user_event cross ctz degrees distance dot enqueue_kernel enqueue_marker erf erfc
exp exp10 exp2 expm1 fabs fast_distance fast_length fast_normalize fdim floor fma fmax
fmin fmod fract frexp get_default_queue get_enqueued_local_size get_fence get_global_id
get_global_linear_id get_global_offset get_global_size get_group_id get_local_id
get_local_linear_id get_local_size get_num_groups get_work_dim hadd hypot ilogb
is_valid_event is_valid_reserve_id isequal isfinite isgreater isgreaterequal isinf isless
islessequal islessgreater isnan isnormal isnotequal isordered isunordered ldexp length
lgamma lgamma_r log log10 log1p log2 logb mad mad24 mad_hi mad_sat max maxmag mem_fence
min minmag mix modf mul24 mul_hi nan ndrange_1D ndrange_2D ndrange_3D nextafter normalize
popcount pow pown powr prefetch printf radians read_mem_fence release_event remainder
remquo retain_event rhadd rint rootn rotate round rsqrt select set_user_event_status
shuffle shuffle2 sign signbit sin sincos sinh sinpi smoothstep sqrt step sub_sat tan tanh
tanpi tgamma trunc upsample wait_group_events write_mem_fence to_global to_local
to_private
read_imagef read_imagei read_imageui read_imageh write_imagef write_imagei write_imageui
write_imageh get_image_width get_image_height get_image_depth get_image_dim
get_image_array_size get_image_channel_data_type get_image_channel_order
atom_add atom_sub atom_xchg atom_inc atom_dec atom_cmpxchg atom_min atom_max atom_and
atom_or atom_xor atomic_add atomic_sub atomic_xchg atomic_inc atomic_dec atomic_cmpxchg
atomic_min atomic_max atomic_and atomic_or atomic_xor atomic_init atomic_load
atomic_store atomic_exchange atomic_work_item_fence atomic_load_explicit
atomic_store_explicit atomic_exchange_explicit
""".split()
_NATIVE_MATH = "cos divide exp exp10 exp2 log log10 log2 powr recip rsqrt sin sqrt tan".split()

# Open-ended families of vendor and OpenCL 2.x builtins and macros, and names C
# reserves for the implementation (a leading double underscore).
_RESERVED_PREFIXES = re.compile(
    r"(__|_[A-Z]|CL_|CLK_|cl_|amd_|arm_|intel_|sub_group_|work_group_|get_|atomic_fetch_|"
    r"atomic_compare_exchange_|atomic_flag_|dot_4x8packed_|dot_acc_sat)")


def _type_names() -> set[str]:
    names = set(_SCALAR_TYPES) | set(_OTHER_TYPES)
    for t in _SCALAR_TYPES:
        names.update(t + w for w in _VECTOR_WIDTHS)
    for t in ("float", "double", "half"):    # reserved matrix types floatNxM
        names.update(f"{t}{n}x{m}" for n in _VECTOR_WIDTHS for m in _VECTOR_WIDTHS)
    return names


def _function_family_names() -> set[str]:
    """convert_T[_sat][_rte], as_T, vloadN, vstore_halfN_rte, native_f, half_f, ..."""
    widths = ("",) + _VECTOR_WIDTHS
    types = [t + w for t in _SCALAR_TYPES + ["size_t", "ptrdiff_t", "intptr_t", "uintptr_t"]
             for w in widths]
    roundings = ("", "_rte", "_rtz", "_rtp", "_rtn")
    names = {f"as_{t}" for t in types}
    names.update(f"convert_{t}{sat}{r}" for t in types for sat in ("", "_sat") for r in roundings)
    for w in widths:
        names.update({f"vload{w}", f"vstore{w}", f"vload_half{w}", f"vloada_half{w}"})
        names.update(f"{store}{w}{r}" for store in ("vstore_half", "vstorea_half")
                     for r in roundings)
    names.update(f"{kind}_{f}" for kind in ("native", "half") for f in _NATIVE_MATH)
    return names


def _macro_names() -> set[str]:
    names = set(_MACROS)
    for suffix in ("", "_F", "_H"):
        names.update(f"M_{c}{suffix}" for c in _MATH_CONSTANTS)
    names.update(f"{t}_{limit}" for t in ("FLT", "DBL", "HALF") for limit in _FLOAT_LIMITS)
    return names


RESERVED = frozenset(set(_KEYWORDS) | _type_names() | _macro_names() | set(_FUNCTIONS)
                     | _function_family_names())


def is_reserved(name: str) -> bool:
    """True when `name` means something to an OpenCL C compiler (or may, in a vendor's
    headers), so that the generated code must not declare it."""
    return name in RESERVED or _RESERVED_PREFIXES.match(name) is not None


def is_identifier(text: str) -> bool:
    """Whether C text is a plain identifier (a variable, not an expression or literal)."""
    return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text) is not None


def is_named(text: str) -> bool:
    """Whether C text is a variable with a name of its own (not a numbered `v3`)."""
    return is_identifier(text) and re.fullmatch(r"v\d+(_\d+)?", text) is None


def sanitize(name: str) -> str:
    """A C identifier resembling `name` (Python names may hold dots, brackets...)."""
    ident = re.sub(r"[^0-9A-Za-z_]", "_", name).strip("_")
    ident = re.sub(r"__+", "_", ident)
    if not ident:
        return ""
    if ident[0].isdigit():
        ident = "v" + ident
    return ident


class NameTable:
    """Hands out identifiers that are unique within one kernel: the first request
    for `offs` gets `offs`, later ones `offs_1`, `offs_2`, ..."""

    def __init__(self, reserved: set[str] | None = None):
        self._taken: set[str] = set(reserved or ())
        self._counters: dict[str, int] = {}
        self._scopes: list[list[str]] = [[]]

    def push_scope(self) -> None:
        """Enter a C block: names taken inside it are free again after `pop_scope`
        (sibling loops can both use `i`), but never shadow an enclosing name."""
        self._scopes.append([])

    def pop_scope(self) -> None:
        for name in self._scopes.pop():
            self._taken.discard(name)

    def _take(self, name: str) -> str:
        self._taken.add(name)
        self._scopes[-1].append(name)
        return name

    def reserve(self, name: str) -> None:
        """Keep `name` (e.g. a helper function's) out of reach for good."""
        self._taken.add(name)

    def _free(self, name: str) -> bool:
        return name not in self._taken and not is_reserved(name)

    def fresh(self, base: str) -> str:
        """`base` itself if still free, else `base_1`, `base_2`, ... (`v_base` first
        where `base` starts like a family of builtins, e.g. `cl_` or `intel_`)."""
        if _RESERVED_PREFIXES.match(base):
            base = "v_" + base
        if self._free(base):
            return self._take(base)
        return self._numbered(base)

    def kernel_name(self, wanted: str) -> str:
        """The kernel's own name, kept for good (the launcher looks it up by it)."""
        return self.fresh(sanitize(wanted) or "kernel_fn")

    def from_source(self, wanted: str | None, fallback: str) -> str:
        """A name from a source variable name (sanitized), else `fallback` numbered
        (`v0`, `v1`, ...)."""
        base = sanitize(wanted) if wanted else ""
        if not base or base.startswith("__") or base.startswith("get_"):
            return self.numbered(fallback)
        return self.fresh(base)

    def numbered(self, prefix: str) -> str:
        """`prefix0`, `prefix1`, ...: for values without a source name."""
        n = self._counters.get(prefix + "#", 0)
        while not self._free(f"{prefix}{n}"):
            n += 1
        self._counters[prefix + "#"] = n + 1
        return self._take(f"{prefix}{n}")

    def _numbered(self, base: str) -> str:
        n = 1
        while not self._free(f"{base}_{n}"):
            n += 1
        return self._take(f"{base}_{n}")
