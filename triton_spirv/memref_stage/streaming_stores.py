"""Streaming (non-temporal) stores for results a kernel writes once and never reads.

A store to a cache line that is not in cache first reads the line (write-allocate), so
an elementwise kernel such as vector add moves 16 bytes per element, not 12: two
loads, the line read for the store, the store. A non-temporal store writes whole lines
without reading them and without keeping them in cache. On CPU devices that is what a
large streaming loop wants, and what a small one does not: its output may still be in
cache when the next kernel reads it. Measured on a 2-core AMD EPYC (32 MiB L3) with
vector add, medians of alternating runs: the same loop written in OpenCL C by hand, on
a quiet machine, 2^25 fp32 elements (128 MiB written) 18 -> 23 GB/s on the default CPU runtime and
14 -> 29 GB/s on Intel's runtime, 2^22 (16 MiB) 19 -> 21 and 37 -> 49, but 2^20
(4 MiB) 47 -> 47 and 90 -> 64, 2^16 20 -> 19 and 56 -> 42; the compiled kernel
(benchmarks/streaming_stores.py) on a loaded one, 2^25 +20-37% on the default CPU runtime and +9-27% on
Intel's runtime (SPIR-V), 2^22 +60-190% and +70-150%. So the
streaming version runs only when the launch stores at least STREAMING_BYTES, which
the kernel checks at run time from its grid:

    %stored_bytes = grid_dim x * grid_dim y * grid_dim z * <bytes the loop stores>
    scf.if (%stored_bytes >= STREAMING_BYTES) {
      scf.for ... { ... vector.store %v, %out[%i] {nontemporal = true} }
    } else {
      scf.for ... { ... vector.store %v, %out[%i] }
    }

(With program loops, program_loops.py later reads the grid's first dimension from its
parameter.) A `vector.store` qualifies when it is in the streaming elementwise form that
stream_forwarding.py and elementwise_vectors.py make:
- f32 vectors stored at the induction variable of an `scf.for` that steps by the
  vector's width, into a view whose last stride is 1: the loop writes consecutive
  vectors, each element once;
- the loop body holds only vector loads and stores, `vector.broadcast` and arith/math
  ops (no nested loops, branches or calls);
- the stored buffer is a kernel argument (global memory) that the kernel never reads:
  no load from it or a view of it, no copy from it, no atomic on it.
The bytes per program count this loop's stores times the trip counts of the constant
loops around it (a lower bound where a loop around it has run-time bounds).
Non-temporal stores are weakly ordered on x86: a kernel whose programs hand data to
one another (atomics, barriers) keeps ordinary stores. The others' results are read
after the launch ends, which the runtime signals from the worker threads with locked
instructions or fences, and x86 orders non-temporal stores before those (the kernel
itself has no fence to give: OpenCL C's mem_fence prints none on the default CPU runtime). CPU targets
only (GPUs have their own cache policies); `nontemporal` is a hint that the emitter
prints as `__builtin_nontemporal_store` (emitter_opencl/vectors.py) and the SPIR-V
stage as the `Nontemporal` memory operand (triton_spirv/spirv/nontemporal.py).
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, gpu, scf

from ..ir_helpers import named, position_in_block as _position, root_buffer
from .affine_nests import (constant_index, nested_ops, op_of, static_trip_count,
                           users_through_views)

# 16 MiB: half this machine's L3; at 2^22 fp32 elements written (16 MiB) streaming
# stores won on both runtimes, at 2^20 (4 MiB) they lost a third on Intel's.
STREAMING_BYTES = 16 << 20
# Uses of a stored buffer that do not read its data.
_NOT_READING = ("vector.store", "memref.store", "memref.extract_aligned_pointer_as_index",
                "memref.dim")
_BODY_PREFIXES = ("arith.", "math.")
_BODY_OPS = ("vector.load", "vector.store", "vector.broadcast", "scf.yield")
_COMMUNICATING = ("memref.atomic_rmw", "memref.generic_atomic_rmw", "gpu.barrier")


def stream_stores(module: ir.Module) -> int:
    """Versions every loop with qualifying stores (see the module docstring) on the
    launch's stored bytes; returns how many."""
    versioned = 0
    for func in module.body.operations:
        if func.operation.name != "func.func" or not func.regions[0].blocks or \
                "opencl.flat_memory" in func.attributes or _communicates(func):
            continue
        loops: list[tuple[ir.Operation, list[int]]] = []
        for store in nested_ops(func.regions[0].blocks[0]):
            if store.operation.name == "vector.store" and _qualifies(store.operation):
                loop = store.operation.parent
                if not loops or loops[-1][0] != loop:
                    loops.append((loop, []))
                loops[-1][1].append(_position(store))
        for loop, positions in loops:
            _version(loop, positions)
        versioned += len(loops)
    return versioned


def _communicates(func) -> bool:
    """Whether the kernel's programs may wait for one another's stores (atomics,
    barriers): those keep ordinary, ordered stores."""
    return any(op.operation.name in _COMMUNICATING for op in nested_ops(func.regions[0].blocks[0]))


def _qualifies(store) -> bool:
    vector_type = ir.VectorType(store.operands[0].type)
    target, indices = store.operands[1], list(store.operands)[2:]
    loop = store.parent
    if vector_type.rank != 1 or not isinstance(vector_type.element_type, ir.F32Type) or \
            _nontemporal(store) or loop.operation.name != "scf.for" or \
            not indices or indices[-1] != loop.regions[0].blocks[0].arguments[0]:
        return False
    if constant_index(loop.operands[2]) != vector_type.shape[0] or \
            _trip_count(loop) is None or not _streaming_body(loop):
        return False
    strides, _ = ir.MemRefType(target.type).get_strides_and_offset()
    return strides[-1] == 1 and _written_only(root_buffer(target))


def _nontemporal(store) -> bool:
    return "nontemporal" in store.attributes and ir.BoolAttr(store.attributes["nontemporal"]).value


def _streaming_body(loop) -> bool:
    return all(op.operation.name in _BODY_OPS or op.operation.name.startswith(_BODY_PREFIXES) and not op.regions
               for op in loop.regions[0].blocks[0].operations)


def _written_only(buffer: ir.Value) -> bool:
    """Whether `buffer` is a kernel argument that nothing reads."""
    if not isinstance(buffer, ir.BlockArgument) or buffer.owner.owner.operation.name != "func.func":
        return False
    for user in users_through_views(buffer):
        if user.name == "memref.copy":
            if root_buffer(user.operands[0]) == buffer:
                return False  # a copy from it
        elif user.name not in _NOT_READING:
            return False
    return True


def _trip_count(loop) -> int | None:
    return static_trip_count(*list(loop.operands)[:3])


def _bytes_per_program(loop, stores: int) -> int:
    """Bytes the loop's qualifying stores write in one program, times the constant trip
    counts of the loops around it."""
    total = _trip_count(loop) * stores * constant_index(loop.operands[2]) * 4
    around = loop.parent
    while around.operation.name != "func.func":
        if around.operation.name == "scf.for":
            total *= _trip_count(around) or 1
        around = around.parent
    return total


def _version(loop, positions: list[int]) -> None:
    loop = op_of(loop)
    loc = loop.location
    with ir.InsertionPoint(loop), loc:
        programs = None
        for dimension in (gpu.Dimension.x, gpu.Dimension.y, gpu.Dimension.z):
            size = gpu.grid_dim(dimension)
            programs = size if programs is None else arith.muli(programs, size)
        per_program = arith.constant(ir.IndexType.get(), _bytes_per_program(loop, len(positions)))
        stored = arith.muli(programs, per_program, loc=named("stored_bytes", loc))
        threshold = arith.constant(ir.IndexType.get(), STREAMING_BYTES)
        large = arith.cmpi(arith.CmpIPredicate.uge, stored, threshold, loc=named("streaming", loc))
        if_op = scf.IfOp(large, has_else=True)
    with loc, ir.InsertionPoint(if_op.then_block):
        streaming = loop.clone()
        scf.YieldOp([])
    for position in positions:
        store = list(streaming.regions[0].blocks[0].operations)[position]
        store.attributes["nontemporal"] = ir.BoolAttr.get(True)
    loop.move_before(scf.YieldOp([], ip=ir.InsertionPoint(if_op.else_block), loc=loc))
