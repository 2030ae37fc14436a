"""Program loops: on CPU targets a work-group runs several consecutive programs.

A CPU OpenCL runtime pays a fixed cost per work-group (the default CPU runtime and Intel's runtime: ~12 ns
of scheduling and the call of the work-group function; benchmarks/work_groups.py); a
vector add of 1024 elements per program pays it for every 12 KB it moves. Here a kernel
of one work-item per group gets a loop over the programs of the grid's first dimension:

    num_programs_x                 a new last parameter (`index`): the grid's first dimension
    per_group = ceil(num_programs_x / num_groups(0))
    for program in [group_id(0) * per_group, min(that + per_group, num_programs_x)):
        the kernel's body, with program_id(0) = program, num_programs(0) = num_programs_x

The launcher (launcher/program_loops.py) sees the function attribute
`opencl.program_loop`, passes the grid's first dimension as that parameter and launches
fewer groups; the other grid dimensions stay as they are. Bounds-checked mode appends
its parameters after it (it reports accesses, not programs). Work-group buffers
(`memref.alloc`) stay before the loop, so every program reuses the same tiles.

Only kernels whose programs are independent and unordered get the loop: no atomics
(programs that count, lock or hand work to each other), no `scf.while` (spin loops),
no barriers or several work-items, no printf, no device asserts, no flat memory (hidden
parameters of their own). Everything else keeps one program per work-group.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, gpu, scf

from ..ir_helpers import named
from .affine_nests import nested_ops

PROGRAM_LOOP_ATTR = "opencl.program_loop"
NUM_PROGRAMS_NAME = "num_programs_x"

# Ops whose effects depend on other programs or on the order programs run in.
_ORDER_DEPENDENT_OPS = ("memref.atomic_rmw", "memref.generic_atomic_rmw", "scf.while",
                        "gpu.barrier", "gpu.printf", "gpu.thread_id", "gpu.block_dim")
# Function attributes of kernels with hidden parameters of their own.
_HIDDEN_PARAMETER_ATTRS = ("opencl.asserts", "opencl.flat_memory")


def loop_programs(module: ir.Module) -> None:
    """Wraps the body of every kernel that may run its programs one after another."""
    for op in module.body.operations:
        if op.operation.name == "func.func" and _loopable(op):
            _wrap_in_program_loop(op)


def _loopable(func) -> bool:
    """A public kernel of one work-item per group whose programs are independent."""
    attrs = func.attributes
    if "sym_visibility" in attrs or not func.regions[0].blocks:
        return False
    if any(name in attrs for name in (*_HIDDEN_PARAMETER_ATTRS, PROGRAM_LOOP_ATTR)):
        return False
    if "opencl.local_size" in attrs and list(ir.DenseI64ArrayAttr(attrs["opencl.local_size"])) != [1, 1, 1]:
        return False
    return not any(op.operation.name in _ORDER_DEPENDENT_OPS
                   for op in nested_ops(func.regions[0].blocks[0]))


def _wrap_in_program_loop(func) -> None:
    block = func.regions[0].blocks[0]
    body = list(block.operations)
    ret = body.pop()
    program_ids = [op for op in nested_ops(block) if _is_dimension_x(op, "gpu.block_id")]
    grid_sizes = [op for op in nested_ops(block) if _is_dimension_x(op, "gpu.grid_dim")]
    loc = func.location
    total = _append_argument(func, ir.IndexType.get(), NUM_PROGRAMS_NAME, loc)
    with ir.InsertionPoint(ret), loc:
        first, last = _programs_of_this_group(total, loc)
        one = arith.constant(ir.IndexType.get(), 1)
        loop = scf.ForOp(first, last, one)
        # The loop's attribute names its variable `program` in the OpenCL C (the printed
        # scf.for drops its induction variable's location).
        loop.attributes[PROGRAM_LOOP_ATTR] = ir.UnitAttr.get()
        with ir.InsertionPoint(loop.body):
            end = scf.YieldOp([])
    # The tiles stay at kernel scope, in front of the loop; everything else moves in.
    for op in body:
        if op.operation.name != "memref.alloc":
            op.move_before(end)
    program = loop.induction_variable
    for op in program_ids:
        op.results[0].replace_all_uses_with(program)
        op.erase()
    for op in grid_sizes:
        op.results[0].replace_all_uses_with(total)
        op.erase()
    func.attributes[PROGRAM_LOOP_ATTR] = ir.UnitAttr.get()


def _programs_of_this_group(total: ir.Value, loc: ir.Location) -> tuple[ir.Value, ir.Value]:
    """[first, last) of the consecutive programs this work-group runs: an equal share of
    `total` per group, the last group's cut at `total`."""
    groups = gpu.grid_dim(gpu.Dimension.x, loc=named("groups", loc))
    one = arith.constant(ir.IndexType.get(), 1)
    rounded_up = arith.subi(arith.addi(total, groups), one)
    per_group = arith.divsi(rounded_up, groups, loc=named("programs_per_group", loc))
    group = gpu.block_id(gpu.Dimension.x, loc=named("group", loc))
    first = arith.muli(group, per_group, loc=named("first_program", loc))
    last = arith.minsi(arith.addi(first, per_group), total, loc=named("last_program", loc))
    return first, last


def _is_dimension_x(op, name: str) -> bool:
    op = op.operation
    return op.name == name and str(op.attributes["dimension"]) == "#gpu<dim x>"


def _append_argument(func, arg_type: ir.Type, name: str, loc: ir.Location) -> ir.Value:
    """A new last parameter of `func`, named in `opencl.arg_names` when the kernel names
    its others there."""
    block = func.regions[0].blocks[0]
    argument = block.add_argument(arg_type, loc)
    inputs = [arg.type for arg in block.arguments]
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, []))
    if "opencl.arg_names" in func.attributes:
        names = [ir.StringAttr(n).value for n in ir.ArrayAttr(func.attributes["opencl.arg_names"])]
        func.attributes["opencl.arg_names"] = ir.ArrayAttr.get(
            [ir.StringAttr.get(n) for n in names + [name]])
    return argument
