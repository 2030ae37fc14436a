"""Computation partitioner: splits a fused computation into subgraph functions.

Rules (the seed's, as XLA's computation partitioner applies them), walking from the
root towards the parameters:
  * roots (the fusion outputs, and whatever the emitter needs as a separate function:
    its heroes and their operands) start a new function;
  * an instruction whose users are all elementwise and all in the same function with
    the same indexing is emitted in that function (its users read it at one index);
  * an instruction with several users (read at different indices) or that its one
    user evaluates at several indices (both operands of a concatenate, the indices of
    a gather) becomes its own function;
  * otherwise (one user reading it at one index, e.g. through a transpose) it joins
    its user's function with a new indexing.
Parameters belong to no function: functions read them with tensor.extract.
Scalar constants are emitted wherever they are used.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .elementwise import is_elementwise


@dataclass(eq=False)
class Subgraph:
    name: str
    root: object                       # HloInstruction
    instructions: list = field(default_factory=list)   # post order

    @property
    def index_dims(self) -> tuple[int, ...]:
        return self.root.shape.dims if not self.root.shape.is_tuple \
            else self.root.shape.tuple_shapes[0].dims

    def __str__(self) -> str:
        lines = [f"SUBGRAPH {self.name} {{"]
        for instr in self.instructions:
            prefix = "ROOT " if instr is self.root else ""
            operands = ", ".join(f"%{o.name}" for o in instr.operands)
            lines.append(f"  {prefix}%{instr.name} = {instr.shape} {instr.opcode}({operands})")
        lines.append("}")
        return "\n".join(lines)


@dataclass
class Partition:
    computation: object
    subgraphs: list[Subgraph]
    owner: dict                         # instruction -> Subgraph

    def of(self, instr) -> Subgraph | None:
        return self.owner.get(instr)

    def __str__(self) -> str:
        return f"PartitionedComputation {self.computation.name}:\n" + \
            "\n".join(str(s) for s in self.subgraphs)


def output_roots(computation) -> list:
    """The fusion outputs: the tuple's operands for multi-output fusions."""
    root = computation.root
    return list(root.operands) if root.opcode == "tuple" else [root]


def is_free_constant(instr) -> bool:
    """Scalar constants are materialized at each use instead of being functions."""
    return instr.opcode == "constant" and instr.shape.rank == 0


def partition(computation, extra_roots=(), prefix: str | None = None) -> Partition:
    roots = output_roots(computation)
    forced = set(roots) | set(extra_roots)
    order = [i for i in computation.post_order()
             if i.opcode != "tuple" or i is not computation.root]
    members = set(order)
    ids: dict = {}          # instruction -> (function id, indexing id)
    counters = [0, 0]

    def new_function(instr):
        ids[instr] = (counters[0], counters[1])
        counters[0] += 1
        counters[1] += 1

    for instr in reversed(order):
        if instr.opcode == "parameter" or is_free_constant(instr):
            continue
        users = [u for u in instr.users if u in members and u in ids]
        if instr in forced or not users:
            new_function(instr)
            continue
        same = len({ids[u] for u in users}) == 1
        if same and all(is_elementwise(u) for u in users):
            ids[instr] = ids[users[0]]
        elif len(users) > 1 or _evaluated_more_than_once(instr, users):
            new_function(instr)
        else:
            ids[instr] = (ids[users[0]][0], counters[1])
            counters[1] += 1

    functions: dict[int, list] = {}
    for instr in order:
        if instr in ids:
            functions.setdefault(ids[instr][0], []).append(instr)
    base = prefix or computation.name
    subgraphs, owner = [], {}
    for fid in sorted(functions):
        instrs = functions[fid]
        root = next(i for i in instrs if ids[i] == (fid, ids[i][1]) and
                    _is_function_root(i, ids, members, forced))
        sub = Subgraph(_sanitize(f"{base}_{root.name}"), root, instrs)
        subgraphs.append(sub)
        for i in instrs:
            owner[i] = sub
    return Partition(computation, subgraphs, owner)


def _is_function_root(instr, ids, members, forced) -> bool:
    if instr in forced:
        return True
    users = [u for u in instr.users if u in members and u in ids]
    return not users or any(ids[u][0] != ids[instr][0] for u in users)


def _evaluated_more_than_once(instr, users) -> bool:
    for user in users:
        slots = [k for k, op in enumerate(user.operands) if op is instr]
        if user.opcode == "concatenate" and len(slots) > 1:
            return True
        if user.opcode == "gather" and 1 in slots and instr.shape.rank >= 2 \
                and instr.shape.dims[1] > 1:
            return True
    return False


def _sanitize(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)
