"""Computation partitioner: the seed's rules and examples."""
from hlo_helpers import hlo_path
from triton_spirv.hlo import read_hlo_file
from triton_spirv.hlo.emitters import choose_emitter
from triton_spirv.hlo.partitioner import partition


def fused(path):
    return read_hlo_file(path).entry.root.called_computation()


def test_gelu_is_one_function():
    # The parameter has several users, all elementwise at the same index.
    p = partition(fused(hlo_path("seed_gelu.hlo")))
    assert len(p.subgraphs) == 1
    assert p.subgraphs[0].root.name == "multiply_0"


def test_log_transpose_add_gives_three_functions():
    comp = fused(hlo_path("log_transpose_add.hlo"))
    choice = choose_emitter(comp)
    assert choice.kind == "transpose"
    p = partition(comp, choice.forced_roots)
    assert sorted(s.root.name for s in p.subgraphs) == ["add", "log", "transpose"]
    assert all(len(s.instructions) == 1 for s in p.subgraphs)
    assert "SUBGRAPH" in str(p)


def test_log_is_cut_because_its_users_read_it_at_different_indices():
    comp = fused(hlo_path("log_transpose_add.hlo"))
    p = partition(comp)        # no hero: the transpose stays with its single user
    owners = {i.name: p.of(i).root.name for i in comp.instructions if p.of(i)}
    assert owners == {"log": "log", "transpose": "add", "add": "add"}


def test_subgraph_function_signature():
    from mlir import ir
    from triton_spirv.hlo.compile import build_fusion
    comp = fused(hlo_path("log_transpose_add.hlo"))
    with ir.Context(), ir.Location.unknown():
        _, plans = build_fusion("f", comp, None)
        text = str(plans[0].module)
    # (tensor params, one index per output dimension) -> element
    assert "func.func private @f_log(%arg0: tensor<64x64xf32>, %arg1: index, %arg2: index) -> f32" in text
    assert "call @f_log(" in text     # printed `func.call` inside scf regions
