"""triton_spirv/ir_helpers.py's block_order: ops of one block ordered as they stand, by
MLIR's numbering of the block (O(1) per comparison) instead of a walk over the block
per op (position_in_block), which made sorting a large block's ops quadratic."""
from __future__ import annotations

import random

import pytest
from mlir import ir

from triton_spirv import ir_helpers
from triton_spirv.ir_helpers import block_order, position_in_block
from triton_spirv.stages import new_context

COUNT = 300


def _module(ctx):
    body = "\n".join(f"    %v{i} = arith.addi %a, %c{i % 7} : index" for i in range(COUNT))
    constants = "\n".join(f"    %c{i} = arith.constant {i} : index" for i in range(7))
    return ir.Module.parse(f"""
func.func @f(%a: index) {{
{constants}
    scf.for %i = %c0 to %c6 step %c1 {{
      %x = arith.addi %i, %a : index
      %y = arith.muli %x, %x : index
    }}
{body}
    return
}}""", ctx)


def test_block_order_sorts_like_positions_without_walking_the_block(monkeypatch):
    with new_context() as ctx, ir.Location.unknown():
        module = _module(ctx)  # kept: its ops live as long as it does
        func = module.body.operations[0]
        ops = list(func.regions[0].blocks[0].operations)
        expected = [position_in_block(op) for op in ops]
        shuffled = ops[:]
        random.Random(0).shuffle(shuffled)

        def no_walk(op):
            raise AssertionError("ops of one block compared by walking the block")

        monkeypatch.setattr(ir_helpers, "position_in_block", no_walk)
        ordered = sorted(shuffled, key=block_order)
        assert [op.operation for op in ordered] == [op.operation for op in ops]
        assert expected == list(range(len(ops)))
        assert min(shuffled, key=block_order).operation == ops[0].operation
        assert max(shuffled, key=block_order).operation == ops[-1].operation
        low, high = block_order(ops[3]), block_order(ops[10])
        assert low < block_order(ops[5]) < high
        assert not (low < block_order(ops[3])) and block_order(ops[3]) == low


def test_ops_of_different_blocks_compare_by_position_as_before():
    with new_context() as ctx, ir.Location.unknown():
        module = _module(ctx)  # kept: its ops live as long as it does
        func = module.body.operations[0]
        outer = list(func.regions[0].blocks[0].operations)
        loop = next(op for op in outer if op.operation.name == "scf.for")
        inner = list(loop.regions[0].blocks[0].operations)
        # inner[1] is second in its block, outer[0] first in its own.
        assert (block_order(inner[1]) < block_order(outer[0])) == \
            (position_in_block(inner[1]) < position_in_block(outer[0]))
        assert block_order(outer[0]) < block_order(inner[1])


def test_block_order_is_a_key_not_a_set_member():
    with new_context() as ctx, ir.Location.unknown():
        module = _module(ctx)
        op = module.body.operations[0].regions[0].blocks[0].operations[0]
        with pytest.raises(TypeError):
            hash(block_order(op))
