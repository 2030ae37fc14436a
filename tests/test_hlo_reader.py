"""HLO text reader: XLA-printed modules, attributes, and errors with line:column."""
import glob

import pytest

from hlo_helpers import hlo_path
from triton_spirv.hlo import HloParseError, read_hlo, read_hlo_file

JAX_FILES = sorted(glob.glob(hlo_path("jax", "*.hlo")))


def test_seed_gelu_module():
    m = read_hlo_file(hlo_path("seed_gelu.hlo"))
    assert m.name == "m"
    assert m.entry.name == "main"
    fusion = m.entry.root
    assert fusion.opcode == "fusion" and fusion.attrs["kind"] == "kLoop"
    gelu = fusion.called_computation()
    assert gelu.name == "gelu"
    assert str(gelu.root.shape) == "bf16[6,512,4096]"
    param = gelu.parameters[0]
    assert len(param.users) == 4  # square (twice), cube, add_1, multiply_0


@pytest.mark.parametrize("path", JAX_FILES, ids=lambda p: p.split("/")[-1])
def test_reads_xla_printed_modules(path):
    m = read_hlo_file(path)
    assert m.entry.root is not None
    for comp in m.computations.values():
        for instr in comp.instructions:
            for operand in instr.operands:
                assert instr in operand.users


def test_attributes():
    m = read_hlo("""HloModule t, is_scheduled=true, entry_computation_layout={(f32[4,6]{1,0})->f32[2,3]{1,0}}

FileNames
1 "/tmp/a.py"

StackFrames
1 {file_location_id=1 parent_frame_id=1}

ENTRY %main.1 (x: f32[4,6]) -> (f32[2,3], s32[5]) {
  %x = f32[4,6]{1,0} parameter(0), metadata={op_name="x" source_file="a.py" source_line=3}, sharding={replicated}
  %s = f32[2,3]{1,0} slice(f32[4,6]{1,0} %x), slice={[0:4:2], [1:4]}, backend_config={"a":{"b":[1,2]}}
  %c = s32[5]{0} constant({1, -2, 3, 4, 5})
  %p = f32[7,6]{1,0} pad(%x, %x), padding=1_2_0x0_0, frontend_attributes={_xla="1"}
  ROOT %t = (f32[2,3]{1,0}, s32[5]{0}) tuple(%s, %c)
}
""")
    s = m.entry.by_name("s")
    assert s.slice_bounds() == [(0, 4, 2), (1, 4, 1)]
    assert m.entry.by_name("p").padding() == [(1, 2, 0), (0, 0, 0)]
    assert m.entry.by_name("c").literal == "{1, -2, 3, 4, 5}"
    assert m.entry.root.shape.is_tuple
    assert m.entry.by_name("x").shape.layout == (1, 0)


@pytest.mark.parametrize("text, line, column, message", [
    ("HloModule m\nENTRY e {\n  %a = f32[2] parameter(0)\n  ROOT %b = f32[2] add(%a, %zz)\n}\n",
     4, 28, "unknown operand %zz"),
    ("HloModule m\nENTRY e {\n  %a = f33[2] parameter(0)\n}\n", 3, 8, "unknown element type"),
    ("HloModule m\nENTRY e {\n  %a = f32[2] parameter(0)\n", 4, 1, "not closed"),
    ("Module m\n", 1, 1, "expected 'HloModule'"),
    ("HloModule m\nENTRY e {\n  %a f32[2] parameter(0)\n}\n", 3, 6, "expected '='"),
])
def test_errors_have_line_and_column(text, line, column, message):
    with pytest.raises(HloParseError) as info:
        read_hlo(text)
    assert (info.value.line, info.value.column) == (line, column)
    assert message in str(info.value)
    assert str(info.value).startswith(f"{line}:{column}:")
