"""Running a whole HLO module on the OpenCL device.

The entry computation is evaluated instruction by instruction on the host:
parameters, constants, tuples, get-tuple-element and default-layout bitcasts need no
kernel; fusions run their compiled kernels; a custom-call runs the fused computation
its handler builds (custom_calls.py); every other instruction is wrapped into a
one-instruction fusion and compiled the same way; `call`, `while` and `conditional`
evaluate their computations (the loop and branch decisions are taken on the host), and
so does a sort of long rows, lowered to a chain of passes (emitters/sort.py).

Kernels are launched from a plain description (`launcher.KernelDescription`: the
OpenCL C or SPIR-V module, parameter types from the kernel's buffers, "*fp32", "*bf16",
..., and the work-group size) by the same launcher core as Triton's kernels. Host
arrays are numpy arrays in storage form (bf16 as uint16 bit patterns), passed as they
are.

Dynamic shapes: the ENTRY parameters' arrays give the dimensions (the generated entry
check, host.py), outputs are allocated from them, and before each launch the fusion's
generated host code checks its arrays and computes the grid; dimensions are passed as
`long` kernel arguments after the buffers. A failed check raises `ShapeCheckError`
before anything runs.
"""
from __future__ import annotations

import os
import warnings

import numpy as np

from launcher import KernelDescription, LoadedKernel

from .computation_builder import wrap_instruction
from .compile import CompiledFusion, compile_fusion, kernel_name, source_file_for
from .custom_calls import lower_custom_call
from .elemental import literal_array
from .emitters.sort import lower_sort_to_passes, sorted_in_passes
from .errors import HloOutputError, HloUnsupportedError
from .reader import HloComputation, HloInstruction, HloModule, read_hlo, read_hlo_file
from .shapes import bf16_bits_to_f32, f32_to_bf16_bits
from .tuples import flatten_fused_tuples, leaf_paths, leaves, nest

# Entry-level instructions that move no data.
NO_KERNEL = {"parameter", "constant", "tuple", "get-tuple-element", "call", "while",
             "conditional", "opt-barrier", "after-all", "add-dependency"}


def to_storage(value, element) -> np.ndarray:
    """A user array -> the contiguous storage array of an HLO element type."""
    if hasattr(value, "detach"):  # torch tensor
        import torch
        t = value.detach().cpu()
        if t.dtype == torch.bfloat16:
            return _contiguous(t.view(torch.int16).numpy().view(np.uint16))
        value = t.numpy()
    arr = np.asarray(value)
    if element.name == "bf16":
        if arr.dtype == np.uint16:
            return _contiguous(arr)
        if arr.dtype.name == "bfloat16":
            return _contiguous(arr.view(np.uint16))
        return f32_to_bf16_bits(arr.astype(np.float32))
    return _contiguous(arr.astype(np.dtype(element.numpy), copy=False))


def _contiguous(arr: np.ndarray) -> np.ndarray:
    """C-contiguous, keeping 0-d arrays 0-d (np.ascontiguousarray makes them 1-d)."""
    return np.asarray(arr, order="C")


def from_storage(arr: np.ndarray, element, bf16_as: str = "float32") -> np.ndarray:
    if element.name == "bf16":
        values = bf16_bits_to_f32(arr)
        if bf16_as == "bfloat16":
            try:
                import ml_dtypes
                return values.astype(ml_dtypes.bfloat16)
            except ImportError:
                pass
        return values
    return arr


class ModuleRunner:
    """Compiles (lazily, once) and runs an HLO module."""

    def __init__(self, module: HloModule, keep_stages: bool = False, program: str | None = None):
        """`program`: auto, spirv or source (launcher/il.py); default TRITON_SPIRV_PROGRAM."""
        from launcher.il import requested_mode
        from .dynamic import check_module_shapes, module_is_dynamic
        self.program = requested_mode(program)
        check_module_shapes(module)    # compile-time shape checks (ranks, names, sizes)
        self.module = module
        self.source_path = source_file_for(module)
        # TRITON_SPIRV_VIEW_DIR: a stage viewer page for every kernel compiled (viewer.py).
        self.view_dir = os.environ.get("TRITON_SPIRV_VIEW_DIR")
        self.keep_stages = keep_stages or bool(self.view_dir)
        self.fusions: dict[HloInstruction, CompiledFusion] = {}
        self.library_calls: dict = {}        # custom-call -> LibraryCall
        self.lowerings: dict[HloInstruction, HloComputation] = {}   # sorts of long rows
        self.dynamic = module_is_dynamic(module)
        self._entry_check = None
        if self.dynamic:
            from .host import entry_contract
            self.entry_contract = entry_contract(module)
            self._entry_check = self.entry_contract.compile()
        self._dims: dict = {}

    # -- compiling -----------------------------------------------------------

    def compile_all(self) -> list[CompiledFusion]:
        """Every kernel of the module (entry and called computations)."""
        seen: list[CompiledFusion] = []
        for comp in self._kernel_computations():
            for instr in comp.instructions:
                if needs_kernel(instr):
                    seen.append(self.fusion_for(instr))
        return seen

    def _kernel_computations(self) -> list[HloComputation]:
        order, stack, visited = [], [self.module.entry], set()
        while stack:
            comp = stack.pop()
            if comp.name in visited:
                continue
            visited.add(comp.name)
            order.append(comp)
            for instr in comp.instructions:
                if instr.opcode in ("call", "while", "conditional"):
                    stack.extend(instr.called)
                elif sorted_in_passes(instr):
                    stack.append(self.lowering(instr))
        return order

    def lowering(self, instr: HloInstruction) -> HloComputation:
        """The computation a sort of long rows runs as: a chain of passes, each its own
        fusion (emitters/sort.py), evaluated as a `call` is."""
        if instr not in self.lowerings:
            self.lowerings[instr] = lower_sort_to_passes(instr)
        return self.lowerings[instr]

    def fusion_for(self, instr: HloInstruction) -> CompiledFusion:
        if instr not in self.fusions:
            if instr.opcode == "fusion":
                computation = instr.called_computation()
                flatten_fused_tuples(computation)
            elif instr.opcode == "custom-call":
                computation = self.library_call(instr).computation
            else:
                computation = wrap_instruction(instr)
            self.fusions[instr] = compile_fusion(kernel_name(instr), computation,
                                                 self.source_path, self.keep_stages,
                                                 program=self.program)
            if self.view_dir:
                self._write_view_pages(instr, self.fusions[instr])
        return self.fusions[instr]

    def _write_view_pages(self, instr, fusion) -> None:
        from .view import fusion_pages
        try:
            fusion_pages(self, instr, fusion, self.view_dir)
        except Exception as exc:  # the viewer must never fail a run
            warnings.warn(f"TRITON_SPIRV_VIEW_DIR: no page written for fusion %{instr.name}: "
                          f"{type(exc).__name__}: {exc}", RuntimeWarning, stacklevel=2)

    # -- running -------------------------------------------------------------

    def run(self, inputs, bf16_as: str = "float32", out=None):
        """Runs the entry computation; returns a list of output arrays (one per leaf
        of the result shape). `out`: arrays (storage dtype, C-contiguous) that the
        kernels computing the ENTRY root write into; they are returned."""
        params = self.module.entry.parameters
        if len(inputs) != len(params):
            raise HloUnsupportedError(f"entry computation {self.module.entry.name} takes "
                                      f"{len(params)} parameters, got {len(inputs)} inputs")
        args = [entry_argument(v, p.shape, f"%{p.name}", self._entry_check is None)
                for v, p in zip(inputs, params)]
        if self._entry_check is not None:
            self._dims = self._entry_check({p.name: a for p, a in zip(params, args)})
        self._out = list(out) if out is not None else None
        try:
            result = self.evaluate(self.module.entry, args)
        finally:
            self._out = None
        root = self.module.entry.root
        results = leaves(result)
        check_outputs(self.module.entry, results, [self.concrete(s) for s in root.shape.leaves()])
        shapes = root.shape.leaves()
        if out is not None:
            for target, value in zip(out, results):
                if target is not value and target.base is not value and \
                        value.base is not target:
                    np.copyto(target, value.reshape(target.shape))
            return list(out)
        return [from_storage(a, s.element, bf16_as) for a, s in zip(results, shapes)]

    def concrete(self, shape) -> tuple[int, ...]:
        """A shape's dims with the dynamic ones given by this run's parameters."""
        return tuple(d if isinstance(d, int) else int(self._dims[d]) for d in shape.dims)

    def evaluate(self, computation: HloComputation, args: list):
        values: dict = {}
        for instr in computation.instructions:
            values[instr] = self._evaluate_instruction(instr, values, args)
        return values[computation.root]

    def _evaluate_instruction(self, instr, values, args):
        op = instr.opcode
        operands = [values[o] for o in instr.operands]
        if op == "parameter":
            return args[instr.parameter_number]
        if op == "constant":
            return to_storage(literal_array(instr), instr.shape.element)
        if op == "tuple":
            return tuple(operands)
        if op == "get-tuple-element":
            return operands[0][instr.int_attr("index")]
        if op in ("opt-barrier", "add-dependency"):
            return operands[0]
        if op == "after-all":
            return ()
        if op == "bitcast" and is_noop_bitcast(instr):
            return operands[0].reshape(self.concrete(instr.shape))
        if op == "call":
            return self.evaluate(instr.called_computation(), operands)
        if sorted_in_passes(instr):
            return self.evaluate(self.lowering(instr), operands)
        if op == "while":
            return self._while(instr, operands[0])
        if op == "conditional":
            return self._conditional(instr, operands)
        if op == "custom-call":
            return self._library_call(instr, operands)
        targets = self._out if (self._out is not None and instr.is_root and
                                instr.computation is self.module.entry) else None
        return nest(self._run_kernels(instr, operands, targets), instr.shape)

    def library_call(self, instr):
        """The fused computation a custom-call (library call) runs as, made once."""
        if instr not in self.library_calls:
            self.library_calls[instr] = lower_custom_call(instr)
        return self.library_calls[instr]

    def _library_call(self, instr, operands):
        """Runs a library call's kernels; scratch leaves (workspaces) get an
        uninitialized array of their shape, which nothing reads."""
        computed = self._run_kernels(instr, operands)
        shapes = instr.shape.leaves()
        results = [computed[k] if k is not None else
                   np.empty(self.concrete(s), dtype=np.dtype(s.element.numpy))
                   for k, s in zip(self.library_call(instr).outputs, shapes)]
        return nest(results, instr.shape)

    def _while(self, instr, state):
        condition = instr.called[0] if "condition" in instr.attrs and \
            instr.called[0].name == instr.attrs["condition"].lstrip("%") else instr.called[1]
        body = instr.called[1] if condition is instr.called[0] else instr.called[0]
        while bool(np.asarray(self.evaluate(condition, [state])).reshape(-1)[0]):
            state = self.evaluate(body, [state])
        return state

    def _conditional(self, instr, operands):
        selector = np.asarray(operands[0]).reshape(-1)[0]
        branches = instr.called
        if instr.operands[0].shape.element.is_pred:
            index = 0 if bool(selector) else 1
        else:
            index = int(selector)
            if not 0 <= index < len(branches):
                index = len(branches) - 1
        return self.evaluate(branches[index], [operands[1 + index]])

    def _run_kernels(self, instr, operands, targets=None) -> list:
        """Runs the kernels of `instr`; returns its result leaves in order."""
        fusion = self.fusion_for(instr)
        operands = leaves(kernel_operands(instr, operands))
        if fusion.dynamic or targets is not None:
            return self._run_checked(instr, fusion, operands, targets)
        computation = fusion.computation
        params = [_contiguous(a) for a in operands]
        outputs = []
        from .emitters.base import fusion_outputs, leaf_shape
        for root, leaf in fusion_outputs(computation):
            shape = leaf_shape(root, leaf)
            outputs.append(np.empty(max(shape.size, 1), dtype=np.dtype(shape.element.numpy)))
        constants = {}
        for kernel in fusion.kernels:
            args = []
            for ref in kernel.plan.buffers:
                args.append(_buffer_argument(ref, params, outputs, constants))
            if kernel.plan.grid > 0 and all(
                    leaf_shape(r, l).size > 0 for r, l in fusion_outputs(computation)):
                self.launch(kernel, args)
        shaped = []
        for (root, leaf), out in zip(fusion_outputs(computation), outputs):
            shape = leaf_shape(root, leaf)
            shaped.append(out[:shape.size].reshape(shape.dims))
        return shaped

    def _run_checked(self, instr, fusion, operands, targets):
        """A launch through the fusion's generated host code: check, allocate, launch."""
        from .emitters.base import fusion_outputs, leaf_shape
        params = [_contiguous(a) for a in operands]
        shapes = [leaf_shape(r, l) for r, l in fusion_outputs(fusion.computation)]
        args = dict(zip(fusion.param_names, params))
        args.update({sym: self._dims[sym] for sym in fusion.symbols if sym in self._dims})
        if targets is None:
            # Check first with the shapes the outputs will have (an output too large
            # for the index width fails here, before it is allocated).
            planned = [_ShapeOnly(self.concrete(s)) for s in shapes]
            fusion.host["check"]({**args, **dict(zip(fusion.output_names, planned))})
            outputs = [np.empty(p.shape, dtype=np.dtype(s.element.numpy))
                       for p, s in zip(planned, shapes)]
        else:
            outputs = list(targets)
            for k, (o, s) in enumerate(zip(outputs, shapes)):
                if not isinstance(o, np.ndarray) or o.dtype != np.dtype(s.element.numpy) \
                        or not o.flags.c_contiguous:
                    raise HloUnsupportedError(
                        f"out[{k}] must be a C-contiguous numpy array of dtype "
                        f"{np.dtype(s.element.numpy)} for {s}")
        args.update(zip(fusion.output_names, outputs))
        dims = fusion.host["check"](args)
        grids = fusion.host["launch"](dims)
        constants = {}
        for kernel in fusion.kernels:
            call = []
            for ref in kernel.plan.buffers:
                if ref.kind == "dim":
                    call.append(int(dims[ref.key]))
                    continue
                call.append(_buffer_argument(ref, params, outputs, constants))
            grid = int(grids[kernel.name])
            if grid > 0 and all(o.size > 0 for o in outputs):
                self.launch(kernel, call, grid)
        return outputs

    def launch(self, kernel, args, grid=None) -> None:
        """Runs one compiled kernel on `args` (arrays and dimensions, in the order of its
        plan's buffers) over `grid` programs (default: its plan's grid)."""
        if kernel.loaded is None:
            kernel.loaded = LoadedKernel(kernel_description(kernel))
        kernel.loaded.launch((kernel.plan.grid if grid is None else grid,), *args)


class _ShapeOnly:
    """An output not allocated yet, as the generated checks see it (its shape)."""
    __slots__ = ("shape",)

    def __init__(self, shape):
        self.shape = tuple(shape)


def kernel_description(kernel) -> KernelDescription:
    """What the launcher needs of a compiled kernel: its code, its parameters (buffers as
    pointers to their element type, dynamic dimensions as i64) and its work-group size."""
    params = tuple((ref.name, "i64" if ref.kind == "dim" else "*" + ref.element.launcher)
                   for ref in kernel.plan.buffers)
    return KernelDescription(kernel.name, kernel.source, tuple(kernel.arg_types), params,
                             tuple(kernel.local_size), kernel.local_mem_bytes, spirv=kernel.spirv,
                             program=kernel.program)


def kernel_operands(instr, values: list) -> list:
    """The values the parameters of `instr`'s kernels receive, in order. A wrapped
    instruction has one parameter per distinct operand (`wrap_instruction`), so
    `clamp(%a, %a, %b)` passes a and b, not a, a."""
    if instr.opcode in ("fusion", "custom-call"):
        return values
    seen, distinct = set(), []
    for operand, value in zip(instr.operands, values):
        if operand not in seen:
            seen.add(operand)
            distinct.append(value)
    return distinct


def entry_argument(value, shape, what: str, check_dims: bool):
    """A user input -> the storage value of an ENTRY parameter of `shape`: an array, or
    (for a tuple shape) a tuple of them, nested like the shape."""
    if shape.is_tuple:
        if not isinstance(value, (tuple, list)) or len(value) != len(shape.tuple_shapes):
            got = f"{len(value)} items" if isinstance(value, (tuple, list)) else \
                type(value).__name__
            raise HloUnsupportedError(f"input for {what} must be a tuple of "
                                      f"{len(shape.tuple_shapes)} items for {shape}, got {got}")
        return tuple(entry_argument(v, s, f"{what}{{{k}}}", check_dims)
                     for k, (v, s) in enumerate(zip(value, shape.tuple_shapes)))
    array = to_storage(value, shape.element)
    if check_dims and tuple(array.shape) != tuple(shape.dims):
        raise HloUnsupportedError(f"input for {what} has shape {array.shape}, expected {shape}")
    return array


def check_outputs(entry: HloComputation, results: list, dims: list) -> None:
    """The output guard: every leaf of the ENTRY result must have the shape and storage
    dtype of the ENTRY root's shape, or nothing is returned. A kernel or a host step that
    produced something else (a wrong nesting, dtype or size) raises here instead of
    handing back a plausible-looking wrong array."""
    root = entry.root
    shapes = root.shape.leaves()
    problems = []
    if len(results) != len(shapes):
        problems.append(f"{len(results)} arrays for the {len(shapes)} leaves of {root.shape}")
    for path, shape, want, value in zip(leaf_paths(root.shape), shapes, dims, results):
        if shape.opaque:      # tokens carry no data
            continue
        dtype = np.dtype(shape.element.numpy)
        got_dtype = getattr(value, "dtype", type(value).__name__)
        got_shape = tuple(getattr(value, "shape", ()))
        if got_dtype != dtype or got_shape != tuple(want):
            source = leaf_source(root, path)
            problems.append(f"output {{{','.join(map(str, path))}}} ({shape}, from {source}) "
                            f"came out as {got_dtype}{list(got_shape)}, expected "
                            f"{dtype}{list(want)}")
    if problems:
        raise HloOutputError(f"entry computation {entry.name}: " + "; ".join(problems) +
                             "; no output was returned")


def leaf_source(root: HloInstruction, path: tuple) -> str:
    """Where a leaf of the ENTRY result comes from: through `tuple`s to the instruction
    that makes it (`%reduce.9.0 {1}, line 98`)."""
    instr, rest = root, list(path)
    while rest and instr.opcode == "tuple":
        instr = instr.operands[rest.pop(0)]
    index = f" {{{','.join(map(str, rest))}}}" if rest else ""
    return f"%{instr.name}{index}, line {instr.line}"


def is_noop_bitcast(instr) -> bool:
    return instr.shape.has_default_layout and instr.operands[0].shape.has_default_layout


def needs_kernel(instr) -> bool:
    if instr.opcode in NO_KERNEL or sorted_in_passes(instr):
        return False
    if instr.opcode == "bitcast" and is_noop_bitcast(instr):
        return False
    return True


def run_hlo(text_or_module, inputs, bf16_as: str = "float32"):
    """Reads (if text), compiles and runs a module; returns the list of outputs."""
    module = read_hlo(text_or_module) if isinstance(text_or_module, str) else text_or_module
    return ModuleRunner(module).run(inputs, bf16_as)


def run_hlo_file(path: str, inputs, bf16_as: str = "float32"):
    return ModuleRunner(read_hlo_file(path)).run(inputs, bf16_as)


def _buffer_argument(ref, params, outputs, constants):
    """The host array a kernel buffer argument refers to: an entry parameter, an array
    constant (converted once per run), or an output. Empty arrays pass one dummy element
    (OpenCL buffers cannot be empty)."""
    if ref.kind == "param":
        array = params[ref.key]
    elif ref.kind == "const":
        if ref.key not in constants:
            constants[ref.key] = to_storage(literal_array(ref.key), ref.element)
        array = constants[ref.key]
    else:
        array = outputs[ref.key]
    if array.size == 0:
        array = np.zeros(1, dtype=array.dtype)
    return array
