"""Indexing maps of the pure index transforms, printed and checked against numpy."""
import numpy as np

from triton_spirv.hlo import read_hlo
from triton_spirv.hlo.indexing import operand_map, thread_map


def instr_of(body: str, name: str):
    m = read_hlo(f"HloModule m\nENTRY e {{\n{body}\n}}\n")
    return m.entry.by_name(name)


def check_against_numpy(instr, operand_value, expected, k=0, syms=()):
    """Evaluates the map at every output index and compares gathered input values."""
    m = operand_map(instr, k)
    grid = np.indices(instr.shape.dims)
    index, ok = m.evaluate(list(grid), syms)
    ok = np.broadcast_to(ok, instr.shape.dims)
    clipped = [np.clip(np.broadcast_to(i, instr.shape.dims), 0, d - 1)
               for i, d in zip(index, operand_value.shape)]
    got = operand_value[tuple(clipped)]
    np.testing.assert_array_equal(got[ok], expected[ok])
    return ok


def test_transpose_map_prints_like_xla():
    t = instr_of("  p = f32[20,40] parameter(0)\n  ROOT t = f32[40,20] transpose(p), dimensions={1,0}", "t")
    assert str(operand_map(t, 0)) == "(d0, d1) -> (d1, d0), domain: d0 in [0, 39], d1 in [0, 19]"
    x = np.arange(800).reshape(20, 40)
    check_against_numpy(t, x, x.T)


def test_broadcast_reshape_slice_reverse():
    x = np.arange(24).reshape(2, 3, 4)
    b = instr_of("  p = f32[3] parameter(0)\n  ROOT b = f32[2,3,4] broadcast(p), dimensions={1}", "b")
    assert str(operand_map(b, 0)) == \
        "(d0, d1, d2) -> (d1), domain: d0 in [0, 1], d1 in [0, 2], d2 in [0, 3]"
    check_against_numpy(b, np.arange(3), np.broadcast_to(np.arange(3)[:, None], (2, 3, 4)))
    r = instr_of("  p = f32[2,3,4] parameter(0)\n  ROOT r = f32[6,4] reshape(p)", "r")
    check_against_numpy(r, x, x.reshape(6, 4))
    s = instr_of("  p = f32[2,3,4] parameter(0)\n  ROOT s = f32[1,2,2] slice(p), slice={[1:2], [0:3:2], [1:4:2]}", "s")
    check_against_numpy(s, x, x[1:2, 0:3:2, 1:4:2])
    v = instr_of("  p = f32[2,3,4] parameter(0)\n  ROOT v = f32[2,3,4] reverse(p), dimensions={0,2}", "v")
    assert str(operand_map(v, 0)).startswith("(d0, d1, d2) -> (-d0 + 1, d1, -d2 + 3)")
    check_against_numpy(v, x, x[::-1, :, ::-1])


def test_pad_map_has_constraints():
    p = instr_of("  p = f32[3,4] parameter(0)\n  z = f32[] constant(0)\n"
                 "  ROOT q = f32[8,5] pad(p, z), padding=1_2_1x-1_2", "q")
    m = operand_map(p, 0)
    assert "mod 2 in [0, 0]" in str(m)
    x = np.arange(12).reshape(3, 4) + 1
    expected = np.zeros((8, 5), int)
    expected[1:6:2, 0:3] = x[:, 1:]
    ok = check_against_numpy(p, x, expected)
    assert ok.sum() == 9


def test_concatenate_and_bitcast():
    c = instr_of("  a = f32[2,3] parameter(0)\n  b = f32[2,5] parameter(1)\n"
                 "  ROOT c = f32[2,8] concatenate(a, b), dimensions={1}", "c")
    assert str(operand_map(c, 1)).endswith("d1 in [3, 7]")
    a, b = np.zeros((2, 3)), np.arange(10).reshape(2, 5)
    check_against_numpy(c, b, np.concatenate([a, b], 1), k=1)
    t = instr_of("  p = f32[3,4]{1,0} parameter(0)\n  ROOT t = f32[4,3]{0,1} bitcast(p)", "t")
    x = np.arange(12).reshape(3, 4)
    check_against_numpy(t, x, x.T)   # a layout-changing bitcast is a transpose


def test_dynamic_slice_and_gather_symbols():
    d = instr_of("  p = f32[10,6] parameter(0)\n  i = s32[] parameter(1)\n  j = s32[] parameter(2)\n"
                 "  ROOT d = f32[3,2] dynamic-slice(p, i, j), dynamic_slice_sizes={3,2}", "d")
    m = operand_map(d, 0)
    assert str(m) == ("(d0, d1)[s0, s1] -> (d0 + s0, d1 + s1), domain: d0 in [0, 2], "
                      "d1 in [0, 1], s0 in [0, 7], s1 in [0, 4]")
    x = np.arange(60).reshape(10, 6)
    check_against_numpy(d, x, x[4:7, 1:3], syms=(4, 1))
    g = instr_of("  p = f32[10,6] parameter(0)\n  i = s32[5,2] parameter(1)\n"
                 "  ROOT g = f32[5,2,3] gather(p, i), offset_dims={1,2}, collapsed_slice_dims={}, "
                 "start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,3}", "g")
    assert str(operand_map(g, 0)).startswith("(d0, d1, d2)[s0, s1] -> (d1 + s0, d2 + s1)")


def test_thread_map_of_the_seed_gelu():
    m = thread_map(128, 24576, 4, (6, 512, 4096))
    assert str(m).startswith("(th_x, bl_x)[vector_index] -> (")
    assert "th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]" in str(m)
    th, bl, v = np.meshgrid(np.arange(128), np.arange(0, 24576, 997), np.arange(4), indexing="ij")
    index, _ = m.evaluate([th, bl], [v])
    linear = (bl * 512 + th * 4 + v)
    np.testing.assert_array_equal(index[0] * 512 * 4096 + index[1] * 4096 + index[2], linear)
