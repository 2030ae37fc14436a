"""Dynamic shapes in the HLO frontend: `?` and named dimensions, one compiled kernel for
every size, compile-time shape checks, and generated host checks that run before a
launch (and leave the outputs untouched when they fail)."""
import os

import numpy as np
import pytest

import triton_spirv
from triton_spirv.hlo import read_hlo
from triton_spirv.hlo.compile import compilations
from triton_spirv.hlo.dynamic import HloShapeError, check_module_shapes
from triton_spirv.hlo.errors import HloUnsupportedError
from triton_spirv.hlo.runtime import ModuleRunner

from hlo_helpers import gelu_reference

GELU = """HloModule gelu_dynamic

gelu {
  %p = f32[?,512,D] parameter(0)
  %c0 = f32[] constant(0.5)
  %b0 = f32[?,512,D] broadcast(%c0), dimensions={}
  %c1 = f32[] constant(1)
  %b1 = f32[?,512,D] broadcast(%c1), dimensions={}
  %c2 = f32[] constant(0.79785)
  %b2 = f32[?,512,D] broadcast(%c2), dimensions={}
  %c3 = f32[] constant(0.044708)
  %b3 = f32[?,512,D] broadcast(%c3), dimensions={}
  %square = f32[?,512,D] multiply(%p, %p)
  %cube = f32[?,512,D] multiply(%square, %p)
  %m3 = f32[?,512,D] multiply(%cube, %b3)
  %a1 = f32[?,512,D] add(%p, %m3)
  %m2 = f32[?,512,D] multiply(%a1, %b2)
  %t = f32[?,512,D] tanh(%m2)
  %a0 = f32[?,512,D] add(%t, %b1)
  %m1 = f32[?,512,D] multiply(%a0, %b0)
  ROOT %m0 = f32[?,512,D] multiply(%p, %m1)
}

ENTRY main {
  %x = f32[?,512,D] parameter(0)
  ROOT %gelu = f32[?,512,D] fusion(%x), kind=kLoop, calls=gelu
}
"""

DOT = """HloModule dot_dynamic
ENTRY main {
  %lhs = f32[M,K] parameter(0)
  %rhs = f32[K,N] parameter(1)
  ROOT %dot.3 = f32[M,N] dot(%lhs, %rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""

ROW_SUM = """HloModule row_sum_dynamic
add {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY main {
  %x = f32[R,C] parameter(0)
  %zero = f32[] constant(0)
  ROOT %sum = f32[R] reduce(%x, %zero), dimensions={1}, to_apply=add
}
"""

TRANSPOSE = """HloModule transpose_dynamic
fused {
  %p = f32[A,B] parameter(0)
  %e = f32[A,B] exponential(%p)
  %t = f32[B,A] transpose(%e), dimensions={1,0}
  ROOT %n = f32[B,A] negate(%t)
}
ENTRY main {
  %x = f32[A,B] parameter(0)
  ROOT %f = f32[B,A] fusion(%x), kind=kInput, calls=fused
}
"""


def _rand(*shape):
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)


def _runner(text):
    return ModuleRunner(read_hlo(text))


def test_gelu_one_kernel_many_sizes():
    runner = _runner(GELU)
    before = compilations()
    for shape in [(1, 512, 1), (2, 512, 5), (3, 512, 33)]:   # 5, 33: not multiples of anything
        x = _rand(*shape)
        (y,) = runner.run([x])
        assert y.shape == shape
        np.testing.assert_allclose(y, gelu_reference(x), rtol=1e-5, atol=1e-6)
    assert compilations() - before <= 1
    fusion = runner.fusions[runner.module.entry.root]
    assert fusion.symbols == ["?1", "D"]
    assert "cdiv(?1*D*512, 512)" in str(fusion.report)       # the grid, from the dims


@pytest.mark.parametrize("emitter,text,sizes,reference", [
    ("loop", DOT, [(1, 1, 1), (5, 7, 3), (33, 17, 65)], lambda a, b: a @ b),
    ("reduction", ROW_SUM, [(1, 1), (3, 7), (17, 300)], lambda x: x.sum(1)),
    ("transpose", TRANSPOSE, [(1, 1), (3, 7), (40, 70)], lambda x: -np.exp(x).T),
])
def test_one_kernel_many_sizes(emitter, text, sizes, reference):
    runner = _runner(text)
    for size in sizes:
        if text is DOT:
            inputs = [_rand(size[0], size[1]), _rand(size[1], size[2])]
        else:
            inputs = [_rand(*size)]
        (out,) = runner.run(inputs)
        np.testing.assert_allclose(out, reference(*inputs), rtol=1e-5, atol=1e-5)
    (fusion,) = runner.fusions.values()
    assert fusion.report.emitter == emitter
    assert len(fusion.kernels) == 1 and fusion.kernels[0].plan.dynamic


def test_two_sizes_of_an_anonymous_dimension_compile_once():
    text = """HloModule twice
ENTRY main {
  %x = f32[?] parameter(0)
  ROOT %e = f32[?] exponential(%x)
}
"""
    before = compilations()
    for n in (5, 7):
        runner = _runner(text)      # a fresh runner each time: the cache is per process
        x = _rand(n)
        (y,) = runner.run([x])
        np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)
    assert compilations() - before == 1
    # Static sizes are two different kernels (the counter counts real compilations).
    before = compilations()
    for n in (5, 7):
        _runner(text.replace("?", str(n))).run([_rand(n)])
    assert compilations() - before == 2


# -- generated host checks -------------------------------------------------------------

def _failing_run(text, inputs, out_shape, match):
    runner = _runner(text)
    out = np.full(out_shape, 7.0, dtype=np.float32)
    with pytest.raises(triton_spirv.ShapeCheckError, match=match):
        runner.run(inputs, out=[out])
    assert np.all(out == 7.0)   # nothing was written


def test_inconsistent_symbol_is_reported_before_launch():
    _failing_run(DOT, [_rand(8, 64), _rand(32, 8)], (8, 8),
                 r"dimension 'K' is not consistent: lhs.shape\[1\] = 64, rhs.shape\[0\] = 32")


def test_static_size_rank_and_zero_checks():
    _failing_run(GELU, [_rand(2, 500, 4)], (2, 500, 4), "'x' dimension 1 must be 512, got 500")
    _failing_run(GELU, [_rand(2, 512)], (2, 512), r"'x' must have rank 3 \(\?1, 512, D\)")
    _failing_run(GELU, [_rand(2, 512, 0)], (2, 512, 0),
                 r"dimension 2 \('D'\) of 'x' is 0; zero-size tiles are not allowed")


def test_outputs_passed_in_are_checked_and_written():
    runner = _runner(DOT)
    a, b = _rand(5, 3), _rand(3, 4)
    out = np.full((5, 4), 7.0, dtype=np.float32)
    runner.run([a, b], out=[out])
    np.testing.assert_allclose(out, a @ b, rtol=1e-5)
    wrong = np.full((5, 5), 7.0, dtype=np.float32)
    with pytest.raises(triton_spirv.ShapeCheckError,
                       match=r"dimension 'N' is not consistent: rhs.shape\[1\] = 4, "
                             r"out0_dot_3.shape\[1\] = 5"):
        runner.run([a, b], out=[wrong])
    assert np.all(wrong == 7.0)


class _Shaped:
    """Only a shape: the generated checks read nothing else, so sizes too large to
    allocate can be checked."""

    def __init__(self, *shape):
        self.shape = shape


def test_index_width_and_grid_checks_of_the_generated_code():
    dot = _runner(DOT)
    fusion = dot.fusion_for(dot.module.entry.root)
    check = fusion.host["check"]
    dims = check({"lhs": _Shaped(3, 4), "rhs": _Shaped(4, 5), "out0_dot_3": _Shaped(3, 5)})
    assert dims == {"M": 3, "K": 4, "N": 5}
    assert fusion.host["launch"](dims) == {"dot_3": 1}
    big = 2 ** 32
    with pytest.raises(triton_spirv.ShapeCheckError,
                       match="out0_dot_3' has 18446744073709551616 elements; offsets would "
                             "not fit the kernel's 64-bit index width"):
        check({"lhs": _Shaped(big, 1), "rhs": _Shaped(1, big), "out0_dot_3": _Shaped(big, big)})
    gelu = _runner(GELU)
    check = gelu.fusion_for(gelu.module.entry.root).host["check"]
    huge = _Shaped(2 ** 40, 512, 1)
    with pytest.raises(triton_spirv.ShapeCheckError,
                       match=r"launch grid of kernel 'gelu' is 1099511627776 "
                             r"\(cdiv\(\?1\*D\*512, 512\)\); beyond the launcher's limit"):
        check({"p": huge, "out0_m0": huge})


# -- compile-time checks ---------------------------------------------------------------

def _module(body, params):
    return "HloModule m\nENTRY main {\n" + params + body + "\n}\n"


@pytest.mark.parametrize("text,error,match", [
    (_module("  ROOT %dot.3 = f32[M,N] dot(%lhs, %rhs), lhs_contracting_dims={1}, "
             "rhs_contracting_dims={0}",
             "  %lhs = f32[M,K] parameter(0)\n  %rhs = f32[J,N] parameter(1)\n"),
     HloShapeError, "dot 'dot.3': contracting dimension 'K' of lhs vs 'J' of rhs must be equal"),
    (_module("  ROOT %dot.3 = f32[M,N] dot(%lhs, %rhs), lhs_contracting_dims={1}, "
             "rhs_contracting_dims={0}",
             "  %lhs = f32[M,64] parameter(0)\n  %rhs = f32[32,N] parameter(1)\n"),
     HloShapeError, "contracting dimension 64 of lhs vs 32 of rhs must be equal"),
    (_module("  ROOT %add.1 = f32[M,K] add(%x, %y)",
             "  %x = f32[M,K] parameter(0)\n  %y = f32[M] parameter(1)\n"),
     HloShapeError, "add 'add.1': operand 1 has rank 1, operand 0 has rank 2; ranks must agree"),
    (_module("  ROOT %add.1 = f32[M,K] add(%x, %y)",
             "  %x = f32[M,K] parameter(0)\n  %y = f32[M,J] parameter(1)\n"),
     HloShapeError, "dimension 1 is 'K' in operand 0 vs 'J' in operand 1; they must be equal"),
    (_module("  ROOT %b = f32[M,K] broadcast(%x), dimensions={0,1}",
             "  %x = f32[M] parameter(0)\n"),
     HloShapeError, r"the operand has rank 1 but dimensions=\{0,1\} lists 2"),
    (_module("  ROOT %b = f32[K,3] broadcast(%x), dimensions={0}",
             "  %x = f32[M] parameter(0)\n  %y = f32[K] parameter(1)\n"),
     HloShapeError, r"operand dimension 0 \('M'\) vs result dimension 0 \('K'\) must be equal"),
    (_module("  ROOT %c = f32[M,8] concatenate(%x, %y), dimensions={1}",
             "  %x = f32[M,4] parameter(0)\n  %y = f32[4] parameter(1)\n"),
     HloShapeError, "concatenate 'c': operand 1 has rank 1, operand 0 has rank 2"),
    (_module("  ROOT %y = f32[N] negate(%x)", "  %x = f32[M] parameter(0)\n"),
     HloShapeError, r"dimension 0 is 'M' from the operands vs 'N' in the shape written"),
    (_module("  ROOT %b = f32[N] broadcast(%x), dimensions={}", "  %x = f32[] parameter(0)\n"),
     HloShapeError, "dimension 'N' of f32\\[N\\] is not given by any ENTRY parameter; a buffer "
                    "declared inside a computation may not have a dynamic size"),
    (_module("  ROOT %s = f32[2] slice(%x), slice={[0:2]}", "  %x = f32[M] parameter(0)\n"),
     HloUnsupportedError, "slice of dynamic dimension 0 is not supported"),
])
def test_compile_time_shape_errors(text, error, match):
    with pytest.raises(error, match=match):
        check_module_shapes(read_hlo(text))
    with pytest.raises(error, match=match):
        ModuleRunner(read_hlo(text))


def test_reader_accepts_dynamic_dimensions():
    module = read_hlo(GELU)
    assert str(module.entry.parameters[0].shape) == "f32[?,512,D]"
    check_module_shapes(module)
    assert module.entry.parameters[0].shape.dims == ("?1", 512, "D")
    assert module.entry.root.shape.dims == ("?1", 512, "D")


def test_emit_writes_host_checks_next_to_the_cl(tmp_path, capsys):
    from triton_spirv.hlo.cli import main
    path = tmp_path / "dot.hlo"
    path.write_text(DOT)
    out = tmp_path / "out"
    assert main(["emit", str(path), "-o", str(out), "--host"]) == 0
    assert (out / "dot_3.cl").exists()
    source = (out / "dot_3.host_checks.py").read_text()
    assert "dimension 'K' is not consistent" in source
    assert "def launch(dims):" in source and "def output_shapes(dims):" in source
    assert "def check(args):" in capsys.readouterr().out
    namespace = {}
    exec(compile(source, "host_checks.py", "exec"), namespace)   # runnable as written
    with pytest.raises(triton_spirv.ShapeCheckError, match="'K' is not consistent"):
        namespace["check"]({"lhs": np.empty((2, 3)), "rhs": np.empty((4, 2)),
                            "out0_dot_3": np.empty((2, 2))})
    cl = (out / "dot_3.cl").read_text()
    assert "long d_M" in cl and "long d_K" in cl and "long d_N" in cl
    assert os.path.exists(out / "report.txt")


def test_multi_output_fusion_with_unit_dimension_reshapes():
    text = """HloModule centered
add {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
fused {
  %p = f32[B,C] parameter(0)
  %z = f32[] constant(0)
  %sum = f32[B] reduce(%p, %z), dimensions={1}, to_apply=add
  %r = f32[B,1] reshape(%sum)
  %r1 = f32[B] reshape(%r)
  %bc = f32[B,C] broadcast(%sum), dimensions={0}
  %d = f32[B,C] subtract(%p, %bc)
  %r2 = f32[B,C] broadcast(%r1), dimensions={0}
  ROOT %t = (f32[B,C], f32[B,C]) tuple(%d, %r2)
}
ENTRY main {
  %x = f32[B,C] parameter(0)
  %f = (f32[B,C], f32[B,C]) fusion(%x), kind=kLoop, calls=fused
  %g0 = f32[B,C] get-tuple-element(%f), index=0
  %g1 = f32[B,C] get-tuple-element(%f), index=1
  %e = f32[B,C] exponential(%g0)
  ROOT %o = (f32[B,C], f32[B,C]) tuple(%e, %g1)
}
"""
    runner = _runner(text)
    for shape in [(1, 1), (9, 130)]:
        x = _rand(*shape)
        e, s = runner.run([x])
        sums = x.sum(1, keepdims=True)
        np.testing.assert_allclose(e, np.exp(x - sums), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(s, np.broadcast_to(sums, shape), rtol=1e-4, atol=1e-5)
