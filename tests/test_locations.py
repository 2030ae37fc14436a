"""Which source line a location names (emitter_opencl/locations.py): the user's code,
never a frame inside Triton's language library."""
from mlir import ir

from emitter_opencl.locations import source_line

LIBRARY = "/site-packages/triton/language/standard.py"


def _file(path, line):
    return ir.Location.file(path, line, 1)


def test_a_library_callee_gives_way_to_its_call_site():
    with ir.Context():
        loc = ir.Location.callsite(_file(LIBRARY, 155), [_file("/src/kernel.py", 7)])
        assert str(source_line(loc)) == "/src/kernel.py:7"


def test_a_user_helper_callee_is_where_the_code_is_written():
    with ir.Context():
        loc = ir.Location.callsite(_file("/src/helpers.py", 3), [_file("/src/kernel.py", 7)])
        assert str(source_line(loc)) == "/src/helpers.py:3"


def test_library_code_inside_a_user_helper_names_the_helper_line():
    with ir.Context():
        inner = ir.Location.callsite(_file(LIBRARY, 155), [_file("/src/helpers.py", 3)])
        loc = ir.Location.callsite(inner, [_file("/src/kernel.py", 7)])
        named = ir.Location.name("zeros", childLoc=loc)
        assert str(source_line(named)) == "/src/helpers.py:3"


def test_fused_locations_prefer_a_user_line():
    with ir.Context():
        loc = ir.Location.fused([_file("/x/triton/language/core.py", 40), _file("/src/kernel.py", 9)])
        assert str(source_line(loc)) == "/src/kernel.py:9"


def test_only_library_lines_are_still_reported():
    with ir.Context():
        assert str(source_line(_file(LIBRARY, 155))) == f"{LIBRARY}:155"
