"""Builds small computations (HLO objects, as the reader makes them) from Python: how
a custom-call becomes ordinary HLO that the emitters lower (cublas.py, cudnn.py), and
how a sort of long rows becomes a chain of passes (emitters/sort.py).

Every instruction built carries the line and column of the instruction it stands for,
so kernels, reports and error messages point at the HLO line of the original call."""
from __future__ import annotations

from dataclasses import dataclass

from .errors import HloUnsupportedError, where
from .reader import HloComputation, HloInstruction
from .shapes import Shape


@dataclass
class LibraryCall:
    """A custom-call lowered to a fused computation. `outputs[k]` says where leaf k of
    the call's result comes from: an output of `computation`, or None for scratch
    (a workspace: allocated for the tuple, never written or read)."""
    computation: HloComputation
    outputs: list


class ComputationBuilder:
    def __init__(self, name: str, origin: HloInstruction):
        self.origin = origin
        self.computation = HloComputation(name, [], origin.line)
        self.computation.module = origin.computation.module if origin.computation else None
        self._count = 0

    def add(self, instr: HloInstruction) -> HloInstruction:
        """Appends an instruction made by the caller (one that calls a computation, or
        needs a name of its own) and records it as a user of its operands."""
        instr.computation = self.computation
        for operand in instr.operands:
            if instr not in operand.users:
                operand.users.append(instr)
        self.computation.instructions.append(instr)
        return instr

    def _name(self, what: str) -> str:
        self._count += 1
        return f"{what}.{self._count}"

    def parameter(self, shape: Shape, name: str) -> HloInstruction:
        """A parameter, named after the value it receives (kernel arguments and shape
        checks then name the HLO values); a repeated name gets a suffix."""
        number = len(self.computation.parameters)
        taken = {p.name for p in self.computation.parameters}
        if name in taken:
            name = f"{name}.{number}"
        return self.add(HloInstruction(name, "parameter", shape, [], {}, self.origin.line,
                                        self.origin.column, parameter_number=number))

    def op(self, opcode: str, shape: Shape, operands: list, **attrs: str) -> HloInstruction:
        return self.add(HloInstruction(self._name(opcode.replace("-", "_")), opcode, shape,
                                        list(operands), dict(attrs), self.origin.line,
                                        self.origin.column))

    def constant(self, element, value) -> HloInstruction:
        """A scalar constant."""
        instr = HloInstruction(self._name("constant"), "constant", Shape(element, ()), [], {},
                               self.origin.line, self.origin.column, literal=repr(value))
        return self.add(instr)

    def splat(self, value, shape: Shape) -> HloInstruction:
        """`value` broadcast to an array shape."""
        return self.op("broadcast", array_shape(shape), [self.constant(shape.element, value)],
                       dimensions="{}")

    def elementwise(self, opcode: str, *operands) -> HloInstruction:
        return self.op(opcode, array_shape(operands[0].shape), operands)

    def finish(self, *outputs: HloInstruction) -> HloComputation:
        """Marks the root (a tuple for several outputs) and returns the computation."""
        root = outputs[0] if len(outputs) == 1 else \
            self.op("tuple", Shape(tuple_shapes=tuple(o.shape for o in outputs)), outputs)
        root.is_root = True
        return self.computation


def array_shape(shape: Shape) -> Shape:
    """The shape without its layout (built instructions use the default layout)."""
    return Shape(shape.element, shape.dims)


def wrap_instruction(instr) -> HloComputation:
    """An unfused instruction as a one-instruction fused computation."""
    if instr.opcode in ("rng", "rng-bit-generator", "infeed",
                        "outfeed", "send", "recv", "all-reduce", "fft", "triangular-solve",
                        "cholesky"):
        raise HloUnsupportedError(f"{where(instr)}: {instr.opcode} is not supported by the "
                                  f"HLO frontend")
    comp = HloComputation(f"wrapped_{instr.name}", [], instr.line)
    params: dict = {}
    for operand in instr.operands:
        if operand in params:
            continue
        # Named after the operand, so that shape-check messages name the HLO values.
        p = HloInstruction(operand.name, "parameter", operand.shape, [], {},
                           operand.line, operand.column, parameter_number=len(params))
        p.computation = comp
        params[operand] = p
        comp.instructions.append(p)
    clone = HloInstruction(instr.name, instr.opcode, instr.shape,
                           [params[o] for o in instr.operands], dict(instr.attrs),
                           instr.line, instr.column, literal=instr.literal, is_root=True,
                           called=list(instr.called))
    clone.computation = comp
    for p in params.values():
        p.users.append(clone)
    comp.instructions.append(clone)
    comp.module = instr.computation.module if instr.computation else None
    return comp
