"""The HLO runner's host side: which arrays reach which kernel parameters."""
import numpy as np

from triton_spirv.hlo import read_hlo
from triton_spirv.hlo.runtime import ModuleRunner

CLAMP = """HloModule m
ENTRY %main (a: f32[4], b: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  %b = f32[4]{0} parameter(1)
  ROOT %c = f32[4]{0} clamp(%a, %a, %b)
}
"""


def test_an_operand_used_twice_before_another_reaches_the_right_parameters():
    """An unfused instruction gets one kernel parameter per distinct operand: with
    %a twice before %b, the kernel's second parameter is %b."""
    a = np.array([0, 1, 2, 3], np.float32)
    b = np.array([0.5, 0.5, 4.0, 0.5], np.float32)
    out = ModuleRunner(read_hlo(CLAMP)).run([a, b])[0]
    np.testing.assert_array_equal(out, np.minimum(np.maximum(a, a), b))
