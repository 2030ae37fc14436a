"""Tests of the TTIR reader (triton_spirv/ttir) on TTIR that Triton itself produces.

The kernels live in ttir_kernels.py; each is compiled to TTIR both raw (as the front end
emits it: private functions, tt.call, unreachable blocks) and after Triton's make_ttir
passes. Triton's own walk of each module is the reference for the ops and their types.
"""
from __future__ import annotations

import collections
import inspect
import os
import re
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import ttir_kernels  # noqa: E402
from mlir import ir  # noqa: E402

from triton_spirv.ttir import TTIRReadError, read_ttir, source_line, to_generic_text  # noqa: E402
from triton_spirv.ttir import enums  # noqa: E402
from triton_spirv.ttir.op_table import OPS_BY_NAME  # noqa: E402

KERNEL_FILE = os.path.abspath(ttir_kernels.__file__)
CASE_NAMES = [case.name for case in ttir_kernels.CASES]
VARIANTS = {"raw": False, "passes": True}


# ---------------------------------------------------------------------------------------
# Helpers


def ttir(name: str, variant: str = "passes") -> str:
    return ttir_kernels.ttir(name, VARIANTS[variant]).text


def walk(module: ir.Module):
    """All ops, post-order (the order of Triton's module.walk)."""
    ops = []

    def visit(op):
        ops.append(op.operation if hasattr(op, "operation") else op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.POST_ORDER)
    return ops


def signature(op) -> tuple:
    return (op.name, tuple(str(v.type) for v in op.operands),
            tuple(str(r.type) for r in op.results))


def ops_named(module: ir.Module, name: str):
    return [op for op in walk(module) if op.name == name]


def int_attr(op, name: str) -> int:
    return ir.IntegerAttr(op.attributes[name]).value


def bool_attr(op, name: str) -> bool:
    return ir.BoolAttr(op.attributes[name]).value


def str_attr(op, name: str) -> str:
    return ir.StringAttr(op.attributes[name]).value


def types_of(values) -> list:
    return [str(v.type) for v in values]


@pytest.fixture(scope="module")
def read():
    """read(name, variant) -> module, each TTIR parsed once per test module."""
    cache = {}

    def read_case(name: str, variant: str = "passes") -> ir.Module:
        if (name, variant) not in cache:
            cache[name, variant] = read_ttir(ttir(name, variant))
        return cache[name, variant]

    return read_case


# ---------------------------------------------------------------------------------------
# Every kernel, raw and after the passes


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", CASE_NAMES)
def test_ops_and_types_match_triton(read, name, variant):
    module = read(name, variant)
    assert module.operation.verify()
    reference = ttir_kernels.ttir(name, VARIANTS[variant]).ops
    ours = tuple(signature(op) for op in walk(module))
    assert collections.Counter(op[0] for op in ours) == collections.Counter(op[0] for op in reference)
    # Same ops in the same order, each with the same operand and result types.
    assert ours == reference


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", CASE_NAMES)
def test_every_op_keeps_its_python_location(read, name, variant):
    kernel_lines = open(KERNEL_FILE).read().count("\n") + 1
    for op in walk(read(name, variant)):
        where = source_line(op.location)
        if where is None:
            # Triton itself gives a few ops no location (hoisted constants, some calls).
            assert str(op.location) == "loc(unknown)", op.name
            continue
        file, line, column = where
        if variant == "passes" or _in_kernel_function(op):
            assert file == KERNEL_FILE, (op.name, where)
        else:  # raw text keeps the bodies of triton.language helpers as private functions
            assert file == KERNEL_FILE or f"{os.sep}triton{os.sep}" in file, (op.name, where)
        if file == KERNEL_FILE:
            assert 1 <= line <= kernel_lines and column >= 1


def _in_kernel_function(op) -> bool:
    """Whether op is (in) the public tt.func, i.e. the kernel itself."""
    while op is not None and op.name != "tt.func":
        op = op.parent
    return op is not None and str_attr(op, "sym_visibility") == "public"


@pytest.mark.parametrize("name", CASE_NAMES)
def test_reads_ttir_printed_without_locations(name):
    module = read_ttir(ttir_kernels.ttir(name, True).text_without_locations)
    assert tuple(signature(op) for op in walk(module)) == ttir_kernels.ttir(name, True).ops


@pytest.mark.parametrize("name", ["vector_add", "argmax", "shapes", "map_elementwise"])
def test_generic_text_has_no_custom_tt_ops(name):
    for variant in VARIANTS:
        generic = to_generic_text(ttir(name, variant))
        assert not re.search(r"(^|=)\s*tt\.\w", generic, re.M)
        assert "<{" not in generic  # properties became attributes
        ir.Module.parse(generic, _unregistered_context())
        assert to_generic_text(generic) == generic  # generic tt ops pass through


def _unregistered_context() -> ir.Context:
    context = ir.Context()
    context.allow_unregistered_dialects = True
    return context


def test_uses_the_given_context():
    context = ir.Context()
    module = read_ttir(ttir("vector_add"), context)
    assert module.context is context
    assert context.allow_unregistered_dialects


# ---------------------------------------------------------------------------------------
# Individual ops, checked by hand


def test_vector_add_loads(read):
    for variant in VARIANTS:
        masked, volatile = ops_named(read("vector_add", variant), "tt.load")
        assert types_of(masked.operands) == [
            "tensor<1024x!tt.ptr<f32>>", "tensor<1024xi1>", "tensor<1024xf32>"]
        assert types_of(masked.results) == ["tensor<1024xf32>"]
        assert int_attr(masked, "cache") == enums.CACHE_MODIFIER["cg"] == 3
        assert int_attr(masked, "evict") == enums.EVICTION_POLICY["evict_last"] == 3
        assert not bool_attr(masked, "isVolatile")
        assert list(ir.DenseI32ArrayAttr(masked.attributes["operandSegmentSizes"])) == [1, 1, 1]
        assert len(volatile.operands) == 2 and bool_attr(volatile, "isVolatile")
        assert int_attr(volatile, "cache") == 1 and int_attr(volatile, "evict") == 1
        assert list(ir.DenseI32ArrayAttr(volatile.attributes["operandSegmentSizes"])) == [1, 1, 0]
        store, = ops_named(read("vector_add", variant), "tt.store")
        assert types_of(store.operands) == [
            "tensor<1024x!tt.ptr<f32>>", "tensor<1024xf32>", "tensor<1024xi1>"]


def test_vector_add_load_maps_to_the_tl_load_line(read):
    source, first_line = inspect.getsourcelines(ttir_kernels.vector_add.fn)
    index = next(i for i, text in enumerate(source) if "tl.load(" in text)
    expected = (KERNEL_FILE, first_line + index, source[index].index("tl.load(") + 1)
    for variant in VARIANTS:
        load = ops_named(read("vector_add", variant), "tt.load")[0]
        assert source_line(load.location) == expected
        assert source_line(load) == expected  # an op is accepted too


def test_vector_add_function(read):
    func, = ops_named(read("vector_add", "raw"), "tt.func")
    assert str_attr(func, "sym_name") == "vector_add"
    assert str_attr(func, "sym_visibility") == "public"
    assert str(ir.TypeAttr(func.attributes["function_type"]).value) == \
        "(!tt.ptr<f32>, !tt.ptr<f32>, !tt.ptr<f32>, i32) -> ()"
    assert not bool_attr(func, "noinline")
    entry = func.regions[0].blocks[0]
    assert types_of(entry.arguments) == ["!tt.ptr<f32>"] * 3 + ["i32"]
    assert str(entry.arguments[0].location).startswith('loc("x_ptr"')
    pid, = ops_named(read("vector_add"), "tt.get_program_id")
    assert int_attr(pid, "axis") == 0


def test_softmax_reductions_and_arg_attrs(read):
    module = read("softmax")
    reduces = ops_named(module, "tt.reduce")
    assert [int_attr(op, "axis") for op in reduces] == [1, 1]
    assert [types_of(op.results) for op in reduces] == [["tensor<4xf32>"]] * 2
    combiners = [op.name for op in walk(module) if op.parent and op.parent.name == "tt.reduce"]
    assert combiners == ["arith.maxnumf", "tt.reduce.return", "arith.addf", "tt.reduce.return"]
    func, = ops_named(module, "tt.func")
    arg_attrs = ir.ArrayAttr(func.attributes["arg_attrs"])
    assert str(arg_attrs[0]) == "{tt.divisibility = 16 : i32}" and str(arg_attrs[3]) == "{}"
    expands = ops_named(module, "tt.expand_dims")
    assert {int_attr(op, "axis") for op in expands} == {0, 1}


def test_matmul_dot_and_pointer_loop(read):
    module = read("matmul")
    dot, = ops_named(module, "tt.dot")
    assert types_of(dot.operands) == [
        "tensor<32x16xf32>", "tensor<16x32xf32>", "tensor<32x32xf32>"]
    assert types_of(dot.results) == ["tensor<32x32xf32>"]
    assert int_attr(dot, "inputPrecision") == enums.INPUT_PRECISION["tf32"] == 0
    assert int_attr(dot, "maxNumImpreciseAcc") == 0
    loop, = ops_named(module, "scf.for")
    assert types_of(loop.results) == [
        "tensor<32x16x!tt.ptr<f32>>", "tensor<16x32x!tt.ptr<f32>>", "tensor<32x32xf32>"]
    assert dot.parent.name == "scf.for"


def test_argmax_multi_operand_reduce(read):
    reduces = ops_named(read("argmax"), "tt.reduce")
    assert len(reduces) == 2
    for op in reduces:
        assert types_of(op.operands) == ["tensor<256xf32>", "tensor<256xi32>"]
        assert types_of(op.results) == ["f32", "i32"]
        assert len(op.regions[0].blocks[0].arguments) == 4


def test_scans(read):
    for variant in VARIANTS:
        scans = ops_named(read("scans", variant), "tt.scan")
        assert sorted(bool_attr(op, "reverse") for op in scans) == [False, True]
        assert all(int_attr(op, "axis") == 0 for op in scans)
        assert all("reverse" in op.attributes for op in scans)  # an attribute, not a property


def test_atomics(read):
    module = read("atomics", "raw")
    rmws = ops_named(module, "tt.atomic_rmw")
    assert [(int_attr(op, "atomic_rmw_op"), int_attr(op, "sem"), int_attr(op, "scope"))
            for op in rmws] == [(5, 4, 1), (6, 1, 2), (9, 1, 2), (10, 3, 3)]  # fadd, max, umin, exch
    assert types_of(rmws[0].operands) == [
        "tensor<128x!tt.ptr<f32>>", "tensor<128xf32>", "tensor<128xi1>"]
    cas, = ops_named(module, "tt.atomic_cas")
    assert types_of(cas.operands) == ["!tt.ptr<i32>", "i32", "i32"]
    assert int_attr(cas, "sem") == enums.MEM_SEMANTIC["acquire"]
    load, = ops_named(module, "tt.atomic_load")
    assert types_of(load.results) == ["i32"]
    store, = ops_named(module, "tt.atomic_store")
    assert types_of(store.operands) == ["!tt.ptr<i32>", "i32", "i1"]
    poll, = ops_named(module, "tt.atomic_poll")
    assert types_of(poll.operands) == ["!tt.ptr<i32>", "i32", "i64"]
    assert types_of(poll.results) == ["i1"]


def test_random_uses_mulhiui(read):
    mulhis = ops_named(read("random"), "tt.mulhiui")
    assert len(mulhis) > 10
    for op in mulhis:
        x_type, y_type = types_of(op.operands)
        assert x_type == y_type == types_of(op.results)[0] and x_type in ("i32", "tensor<256xi32>")


def test_casts(read):
    module = read("casts", "raw")
    down, up = ops_named(module, "tt.fp_to_fp")
    assert int_attr(down, "rounding") == enums.ROUNDING_MODE["rtz"]
    assert types_of(down.results) == ["tensor<128xf8E5M2>"]
    assert "rounding" not in up.attributes
    ptr_to_int, = ops_named(module, "tt.ptr_to_int")
    assert types_of(ptr_to_int.operands) == ["!tt.ptr<f32>"] and types_of(ptr_to_int.results) == ["i64"]
    int_to_ptr, = ops_named(module, "tt.int_to_ptr")
    assert types_of(int_to_ptr.results) == ["!tt.ptr<i32>"]
    assert any(types_of(op.results) == ["tensor<128xi32>"] for op in ops_named(module, "tt.bitcast"))


def test_shape_ops(read):
    module = read("shapes", "raw")
    orders = [list(ir.DenseI32ArrayAttr(op.attributes["order"])) for op in ops_named(module, "tt.trans")]
    assert orders == [[1, 0], [2, 0, 1]]
    reshapes = ops_named(module, "tt.reshape")
    assert sum("allow_reorder" in op.attributes for op in reshapes) == 1
    split, = ops_named(module, "tt.split")
    assert types_of(split.results) == ["tensor<128xf32>", "tensor<128xf32>"]
    join, = ops_named(module, "tt.join")
    assert types_of(join.operands) == ["tensor<128xf32>"] * 2
    cat, = ops_named(module, "tt.cat")
    assert types_of(cat.results) == ["tensor<256xf32>"]
    gather, = ops_named(module, "tt.gather")
    assert int_attr(gather, "axis") == 1
    assert types_of(gather.operands) == ["tensor<8x16xf32>", "tensor<8x16xi32>"]
    histogram, = ops_named(module, "tt.histogram")
    assert types_of(histogram.operands) == ["tensor<128xi32>", "tensor<128xi1>"]
    unsplat, = ops_named(module, "tt.unsplat")
    assert types_of(unsplat.results) == ["f32"]


def test_elementwise_ops(read):
    module = read("elementwise")
    clamp, = ops_named(module, "tt.clampf")
    assert int_attr(clamp, "propagateNan") == enums.PROPAGATE_NAN["all"] == 0xFFFF
    assert types_of(clamp.operands) == ["tensor<128xf32>"] * 3
    for name in ("tt.precise_sqrt", "tt.precise_divf", "tt.approx_divf"):
        op, = ops_named(module, name)
        assert types_of(op.results) == ["tensor<128xf32>"]


def test_print_assert_assume(read):
    module = read("debug_ops")
    tensors, scalar = ops_named(module, "tt.print")
    assert str_attr(tensors, "prefix") == " x =: " and bool_attr(tensors, "hex")
    assert types_of(tensors.operands) == ["tensor<64xf32>", "tensor<64xi32>"]
    assert list(ir.DenseI32ArrayAttr(tensors.attributes["isSigned"])) == [0, 1]
    assert str_attr(scalar, "prefix") == "n" and len(scalar.operands) == 0
    messages = [str_attr(op, "message") for op in ops_named(module, "tt.assert")]
    assert messages == ["x must be non-negative", "n must be positive"]
    assert len(ops_named(module, "llvm.intr.assume")) == 1


def test_tensor_descriptors(read):
    module = read("descriptors", "raw")
    plain, nan_padded, rows = ops_named(module, "tt.make_tensor_descriptor")
    assert types_of(plain.operands) == ["!tt.ptr<f32>", "i32", "i32", "i64", "i64"]
    assert types_of(plain.results) == ["!tt.tensordesc<16x32xf32>"]
    assert int_attr(plain, "padding") == enums.PADDING_OPTION["zero"]
    assert int_attr(nan_padded, "padding") == enums.PADDING_OPTION["nan"]
    load, = ops_named(module, "tt.descriptor_load")
    assert types_of(load.operands) == ["!tt.tensordesc<16x32xf32>", "i32", "i32"]
    assert types_of(load.results) == ["tensor<16x32xf32>"]
    store, = ops_named(module, "tt.descriptor_store")
    assert types_of(store.operands) == ["!tt.tensordesc<16x32xf32>", "tensor<16x32xf32>", "i32", "i32"]
    reduce, = ops_named(module, "tt.descriptor_reduce")
    assert int_attr(reduce, "kind") == enums.DESCRIPTOR_REDUCE_KIND["add"]
    gather, = ops_named(module, "tt.descriptor_gather")
    assert types_of(gather.results) == ["tensor<16x32xf32>"]
    scatter, = ops_named(module, "tt.descriptor_scatter")
    assert types_of(scatter.operands)[-1] == "tensor<16x32xf32>"
    # After the passes the descriptors are rewritten to pointers.
    assert not ops_named(read("descriptors"), "tt.descriptor_load")


def test_extern_elementwise(read):
    op, = ops_named(read("extern_call"), "tt.extern_elementwise")
    assert str_attr(op, "symbol") == "__nv_asinf" and bool_attr(op, "pure")
    assert types_of(op.operands) == ["tensor<128xf32>"]


def test_inline_asm(read):
    pair, single = ops_named(read("inline_asm"), "tt.elementwise_inline_asm")
    assert types_of(pair.results) == ["tensor<128xi32>", "tensor<128xi32>"]
    assert str_attr(pair, "asm_string") == "mov.b64 {$0, $1}, $2;"
    assert int_attr(pair, "packed_element") == 1 and not bool_attr(single, "pure")


def test_control_flow(read):
    loop, = ops_named(read("while_loop"), "scf.while")
    assert types_of(loop.results) == ["tensor<64xf32>", "i32"]
    branch, = ops_named(read("if_tensors"), "scf.if")
    assert types_of(branch.results) == ["tensor<64xf32>", "tensor<64xi32>"]


def test_program_ids_in_three_dimensions(read):
    module = read("grid_3d")
    assert [int_attr(op, "axis") for op in ops_named(module, "tt.get_program_id")] == [0, 1, 2]
    assert [int_attr(op, "axis") for op in ops_named(module, "tt.get_num_programs")] == [0, 1, 2]
    assert len(ops_named(module, "tt.grid_dependency_wait")) == 1
    assert len(ops_named(module, "tt.grid_dependency_launch_dependents")) == 1


def test_dot_scaled(read):
    op, = ops_named(read("dot_scaled"), "tt.dot_scaled")
    assert types_of(op.operands) == [
        "tensor<32x64xf8E4M3FN>", "tensor<64x32xbf16>", "tensor<32x32xf32>", "tensor<32x2xi8>"]
    assert list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])) == [1, 1, 1, 1, 0]
    assert int_attr(op, "a_elem_type") == enums.SCALE_DOT_ELEM_TYPE["e4m3"]
    assert int_attr(op, "b_elem_type") == enums.SCALE_DOT_ELEM_TYPE["bf16"]
    assert not bool_attr(op, "fastMath") and bool_attr(op, "lhs_k_pack")


def test_map_elementwise(read):
    op, = ops_named(read("map_elementwise"), "tt.map_elementwise")
    assert int_attr(op, "pack") == 1
    assert len(op.regions[0].blocks) == 4  # the scalar if/else became a CFG


def test_calls_and_private_functions(read):
    raw = read("argmax", "raw")
    funcs = ops_named(raw, "tt.func")
    assert {str_attr(f, "sym_visibility") for f in funcs} == {"public", "private"}
    private = [f for f in funcs if str_attr(f, "sym_visibility") == "private"]
    assert all(len(f.regions[0].blocks) == 2 for f in private)  # `^bb1: // no predecessors`
    call = ops_named(raw, "tt.call")[0]
    assert ir.FlatSymbolRefAttr(call.attributes["callee"]).value.startswith("triton.language.standard.")
    module = read("noinline_call")
    callee = [f for f in ops_named(module, "tt.func") if str_attr(f, "sym_visibility") == "private"]
    assert len(callee) == 1 and bool_attr(callee[0], "noinline")
    call, = ops_named(module, "tt.call")
    assert ir.FlatSymbolRefAttr(call.attributes["callee"]).value == str_attr(callee[0], "sym_name")


HAND_WRITTEN = """\
#loc = loc("k.py":1:1)
module {
  tt.func private @ext(i32, !tt.ptr<f32> {tt.divisibility = 16 : i32}) -> (f32 {tt.res = 1 : i32}, i32) loc(#loc)
  tt.func @body(%p: !tt.ptr<f16>, %v: tensor<8xf16>, %i: tensor<8xi32>) {
    %ptrs = tt.splat %p : !tt.ptr<f16> -> tensor<8x!tt.ptr<f16>> loc("k.py":3:5)
    %q = tt.addptr %ptrs, %i : tensor<8x!tt.ptr<f16>>, tensor<8xi32> loc(callsite("k.py":9:1 at "k.py":4:7))
    tt.store %q, %v {cachePolicy = #tt.cache_policy<cache_modifier = cs, eviction_policy = evict_first>} : tensor<8x!tt.ptr<f16>> loc(fused["k.py":5:2, "k.py":6:3])
    %w = tt.fp_to_fp %v, rounding = rtne : tensor<8xf16> -> tensor<8xf8E4M3FN>
    %h = tt.histogram %i : tensor<8xi32> -> tensor<4xi32>
    %r = tt.reshape %h efficient_layout : tensor<4xi32> -> tensor<2x2xi32>
    %a = arith.constant dense<1.0> : tensor<2x2xf32>
    %d = tt.dot %a, %a, %a : tensor<2x2xf32> * tensor<2x2xf32> -> tensor<2x2xf32>
    %s = "tt.reduce"(%v) <{axis = 0 : i32}> ({
    ^bb0(%x: f16, %y: f16):
      %m = arith.maximumf %x, %y : f16
      tt.reduce.return %m : f16
    }) : (tensor<8xf16>) -> f16 loc("named"("k.py":7:7))
    tt.return
  }
}
"""


def test_hand_written_variants():
    module = read_ttir(HAND_WRITTEN)
    ext, body = ops_named(module, "tt.func")
    assert str(ir.TypeAttr(ext.attributes["function_type"]).value) == "(i32, !tt.ptr<f32>) -> (f32, i32)"
    assert len(ext.regions[0].blocks) == 0  # a declaration
    assert str(ext.attributes["arg_attrs"]) == "[{}, {tt.divisibility = 16 : i32}]"
    assert str(ext.attributes["res_attrs"]) == "[{tt.res = 1 : i32}, {}]"
    assert str_attr(body, "sym_visibility") == "public"
    store, = ops_named(module, "tt.store")
    assert (int_attr(store, "cache"), int_attr(store, "evict")) == (5, 2)  # cs, evict_first
    assert "cachePolicy" not in store.attributes
    assert source_line(store.location) == ("k.py", 5, 2)  # fused: the first part
    addptr, = ops_named(module, "tt.addptr")
    assert source_line(addptr.location) == ("k.py", 4, 7)  # callsite: the caller
    assert source_line(addptr.location, innermost=True) == ("k.py", 9, 1)
    reduce, = ops_named(module, "tt.reduce")
    assert source_line(reduce.location) == ("k.py", 7, 7)  # name: its child
    fp, = ops_named(module, "tt.fp_to_fp")
    assert int_attr(fp, "rounding") == enums.ROUNDING_MODE["rtne"]
    histogram, = ops_named(module, "tt.histogram")
    assert len(histogram.operands) == 1
    reshape, = ops_named(module, "tt.reshape")
    assert "efficient_layout" in reshape.attributes and "allow_reorder" not in reshape.attributes
    dot, = ops_named(module, "tt.dot")
    assert int_attr(dot, "inputPrecision") == enums.INPUT_PRECISION["ieee"]  # the default
    assert source_line(ir.Location.unknown(module.context)) is None


# ---------------------------------------------------------------------------------------
# The op table follows TritonOps.td


def _td_assembly_formats() -> dict:
    import triton
    path = os.path.join(os.path.dirname(triton.__file__),
                        "include/triton/Dialect/Triton/IR/TritonOps.td")
    if not os.path.exists(path):
        pytest.skip("the triton wheel ships no TritonOps.td")
    text = open(path).read()
    formats = {}
    for match in re.finditer(r'^def \w+\s*:\s*TT_Op<"([\w.]+)"', text, re.M):
        end = text.find("\ndef ", match.end())
        body = text[match.end():end if end > 0 else len(text)]
        found = re.search(r'let assemblyFormat = (?:"((?:[^"\\]|\\.)*)"|\[\{(.*?)\}\])', body, re.S)
        formats["tt." + match.group(1)] = (found.group(1) or found.group(2)) if found else None
    return formats


def test_every_triton_op_has_an_entry_with_its_assembly_format():
    def normalized(text):
        return None if text is None else " ".join(text.split())

    for name, td_format in _td_assembly_formats().items():
        assert name in OPS_BY_NAME, f"{name} is missing from the op table"
        assert normalized(OPS_BY_NAME[name].format_text) == normalized(td_format), name


# ---------------------------------------------------------------------------------------
# Errors


def _replace_line(text: str, needle: str, change) -> tuple:
    lines = text.splitlines()
    index = next(i for i, line in enumerate(lines) if needle in line)
    lines[index] = change(lines[index])
    return "\n".join(lines), index + 1, lines[index]


def test_unknown_tt_op_is_named_with_its_line():
    text, number, line = _replace_line(
        ttir("vector_add"), "tt.make_range", lambda s: s.replace("tt.make_range", "tt.frobnicate"))
    with pytest.raises(TTIRReadError) as info:
        read_ttir(text)
    err = info.value
    assert (err.op, err.line, err.column) == ("tt.frobnicate", number, line.index("tt.") + 1)
    message = str(err)
    assert "tt.frobnicate" in message and f"line {number}" in message and line.strip() in message


def test_truncated_line_is_reported():
    text, number, line = _replace_line(
        ttir("vector_add"), "tt.load", lambda s: s[:s.index("cachePolicy") + 20])
    with pytest.raises(TTIRReadError) as info:
        to_generic_text(text)
    assert info.value.op == "tt.load" and info.value.line == number
    assert f"line {number}" in str(info.value) and line.strip() in str(info.value)


def test_truncated_text_names_the_unclosed_function():
    lines = ttir("vector_add").splitlines()
    cut = next(i for i, line in enumerate(lines) if "tt.return" in line)
    with pytest.raises(TTIRReadError) as info:
        read_ttir("\n".join(lines[:cut]))
    assert info.value.op == "tt.func" and "tt.func public @vector_add" in info.value.source


@pytest.mark.parametrize("needle, change, op, message", [
    ("tt.get_program_id", lambda s: s.replace(" x :", " w :"), "tt.get_program_id", "x, y, z"),
    ("tt.load", lambda s: s.replace(" : tensor", " tensor"), "tt.load", "expected `:`"),
    ("tt.load", lambda s: s.replace("%x_7 = ", "%x_7:2 = "), "tt.load", "1 result"),
    ("tt.splat", lambda s: s.replace("-> tensor<1024xi32>", "-> tensor<1024xi32"), "tt.splat", ""),
    ("tt.store", lambda s: s.replace("!tt.ptr<f32>", "!tt.ptr<f16>"), "tt.store",
     "different type"),
    ("arith.addf", lambda s: s.replace("arith.addf %", "arith.addf %undefined_"), "arith.addf",
     "undeclared"),
    ("tt.func", lambda s: s.replace("@vector_add", "vector_add"), "tt.func", "@name"),
])
def test_malformed_lines(needle, change, op, message):
    text, number, _line = _replace_line(ttir("vector_add"), needle, change)
    with pytest.raises(TTIRReadError) as info:
        read_ttir(text)
    assert (info.value.op, info.value.line) == (op, number)
    assert message in str(info.value)


def test_verifier_errors_point_at_the_ttir_line():
    text = ttir("while_loop")
    text, number, _line = _replace_line(
        text, "scf.yield", lambda s: re.sub(r"scf.yield (%\w+), %\w+ : ([^,]+), i32",
                                            r"scf.yield \1, \1 : \2, \2", s))
    with pytest.raises(TTIRReadError) as info:
        read_ttir(text)
    assert info.value.op == "scf.while"
    assert "scf.while" in info.value.source and "MLIR rejects it" in str(info.value)


def test_only_ttir_read_errors_escape():
    """Cut every line of a real kernel in a few places: the reader either reads the
    result or raises TTIRReadError, never anything else."""
    lines = ttir("matmul").splitlines()
    context = _unregistered_context()  # one context: creating one costs more than a read
    for index, line in enumerate(lines):
        for cut in sorted({len(line) // 3, len(line) // 2, len(line) - 3}):
            if cut <= 0:
                continue
            damaged = "\n".join(lines[:index] + [line[:cut]] + lines[index + 1:])
            try:
                read_ttir(damaged, context)
            except TTIRReadError as err:
                assert 1 <= err.line <= len(lines)
