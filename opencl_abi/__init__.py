"""The OpenCL kernel ABI that the compilers and the launcher share.

A kernel may take hidden parameters after its own; the compilers declare them and
describe them in the kernel's metadata, the launcher passes them and reads the records
back. Their order, and the layout of each record, are written here once:

    own parameters
    flat memory buffers   one per pointee type (tt.int_to_ptr; launcher/flat_memory.py)
    assert record         `__global int*`, ASSERT_RECORD_INTS ints (tl.device_assert)
    bounds extents        one `long` per checked global buffer (bounds-checked mode)
    bounds record         `__global int*`, BOUNDS_RECORD_INTS ints (bounds-checked mode)

The launcher zeroes both records before each launch.

A kernel whose work-groups run consecutive programs (metadata `program_loop`) takes
`long num_programs_x` (the grid's first dimension) right after its own parameters; such
kernels have no flat memory buffers or assert record, and bounds-checked mode's
parameters follow it. `hidden_parameters` computes this list from a kernel's facts; the
converter, the emitter and the launcher all ask it.

The Triton backend's own extern functions (the fp8e4b15 casts, which Triton leaves to
the backend) are named here too: the backend hook (triton_spirv/compiler.py) calls
them, the Triton frontend (triton_spirv/ttir_to_linalg/elementwise.py) lowers them.

This package imports nothing of the project's: the emitter (emitter_opencl/bounds.py),
the Triton frontend (triton_spirv/ttir_to_linalg/debug.py) and the launcher
(launcher/bounds.py, launcher/asserts.py) all import it, and the launcher stays free of
any frontend and of MLIR.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

# -- The hidden parameters ---------------------------------------------------------------

NUM_PROGRAMS = "num_programs"      # long: the grid's first dimension (program loops)
FLAT_MEMORY = "flat_memory"        # one buffer per pointee type (tt.int_to_ptr)
ASSERT_RECORD = "assert_record"    # tl.device_assert
BOUNDS_EXTENT = "bounds_extent"    # long: element count of one checked buffer
BOUNDS_RECORD = "bounds_record"    # bounds-checked mode's error record


@dataclass(frozen=True)
class HiddenParameter:
    """One parameter after a kernel's own. `c_type` is its OpenCL C type (None for a flat
    memory buffer: a pointer to its pointee type, which the converter chooses); `buffer`
    is, for a bounds extent, the kernel parameter index of the buffer it bounds."""
    kind: str
    index: int
    c_type: str | None
    buffer: int | None = None


def hidden_parameters(n_own: int, *, program_loop: bool = False, flat_memory: int = 0,
                      asserts: bool = False,
                      bounds_buffers: Sequence[int] | None = None) -> list[HiddenParameter]:
    """The hidden parameters of a kernel with `n_own` parameters of its own, in order:
    `program_loop`: its work-groups run consecutive programs; `flat_memory`: how many flat
    memory buffers; `asserts`: it has device asserts; `bounds_buffers`: in bounds-checked
    mode, the parameter index of each checked buffer (None: not bounds-checked)."""
    kinds: list[tuple[str, str | None, int | None]] = []
    if program_loop:
        kinds.append((NUM_PROGRAMS, "long", None))
    kinds += [(FLAT_MEMORY, None, None)] * flat_memory
    if asserts:
        kinds.append((ASSERT_RECORD, "__global int*", None))
    if bounds_buffers is not None:
        kinds += [(BOUNDS_EXTENT, "long", buffer) for buffer in bounds_buffers]
        kinds.append((BOUNDS_RECORD, "__global int*", None))
    return [HiddenParameter(kind, n_own + k, c_type, buffer)
            for k, (kind, c_type, buffer) in enumerate(kinds)]


def first_index(hidden: list[HiddenParameter], kind: str) -> int | None:
    """The parameter index of the first hidden parameter of `kind`, None without one."""
    return next((p.index for p in hidden if p.kind == kind), None)


# -- The assert record (tl.device_assert) ------------------------------------------------
#
# The first failing element wins ASSERT_ID (an atomic compare-exchange 0 -> assert id + 1)
# and writes its program id (x, y, z) into the words from ASSERT_PROGRAM_ID on; later
# failures leave the record alone. The kernel's metadata `asserts` lists one
# AssertSite per assert id.

ASSERT_RECORD_INTS = 4
ASSERT_ID = 0
ASSERT_PROGRAM_ID = 1


@dataclass(frozen=True)
class AssertSite:
    """One `tl.device_assert` of a kernel: where it is and what it says."""
    path: str        # Python source file ("" when unknown)
    line: int        # Python source line (0 when unknown)
    message: str

    @classmethod
    def from_entry(cls, entry) -> AssertSite:
        path, line, message = entry
        return cls(str(path), int(line), str(message))


# -- The bounds record (bounds-checked mode) ----------------------------------------------
#
# BOUNDS_COUNT counts the out-of-bounds accesses; the first one claims BOUNDS_CLAIMED
# (compare-exchange 0 -> 1) and writes its site id and the offending element index (low
# and high 32 bits). The kernel's metadata `bounds` holds
# {"params": [kernel parameter of each extent parameter], "sites": [BoundsSite dicts]}.

BOUNDS_RECORD_INTS = 8
BOUNDS_COUNT = 0
BOUNDS_CLAIMED = 1
BOUNDS_SITE = 2
BOUNDS_INDEX_LOW = 3
BOUNDS_INDEX_HIGH = 4


@dataclass(frozen=True)
class BoundsSite:
    """One checked access in the source: `param` is the index of the kernel parameter."""
    param: int
    access: str      # "load" or "store" (async copies too)
    op: str          # the memref-stage op, e.g. "memref.copy"
    path: str        # Python source file ("" when unknown)
    line: int        # Python source line (0 when unknown)

    def as_dict(self) -> dict:
        """The metadata form."""
        return {"param": self.param, "access": self.access, "op": self.op, "path": self.path,
                "line": self.line}

    @classmethod
    def from_dict(cls, site: dict) -> BoundsSite:
        """A site read back from metadata; missing fields read as unknown."""
        return cls(int(site.get("param", -1)), str(site.get("access", "access")),
                   str(site.get("op", "?")), str(site.get("path", "") or ""),
                   int(site.get("line", 0) or 0))


def bounds_error_index(record) -> int:
    """The element index the first out-of-bounds access wrote into the bounds record."""
    return (int(record[BOUNDS_INDEX_HIGH]) << 32) | (int(record[BOUNDS_INDEX_LOW]) & 0xffffffff)


# -- The fp8e4b15 casts (extern calls of the Triton backend) ------------------------------
#
# fp8e4b15 has no MLIR type in Triton (its values are i8 in TTIR), so Triton leaves its
# casts to the backend, which calls these names; no kernel source ever defines them.

FP8E4B15_PREFIX = "__triton_spirv_fp8e4b15_"
FP8E4B15_TO_FLOAT = FP8E4B15_PREFIX + "to_float"
FP8E4B15_FROM_FLOAT = {"rtne": FP8E4B15_PREFIX + "from_float_rtne",
                       "rtz": FP8E4B15_PREFIX + "from_float_rtz"}
