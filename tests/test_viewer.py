"""The stage viewer: which stage lines each source line became, and the HTML page,
checked in a real headless browser (Debian's `chromium`) where one is installed."""
import html
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from spirv_expectations import spirv_stages
from triton_spirv import cli
from triton_spirv.line_origins import mlir_line_origins, opencl_line_origins, spirv_line_origins
from triton_spirv.viewer import render_page, triton_kernel_view

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(HERE)
KERNELS = os.path.join(HERE, "data", "kernels_for_cli.py")
SIGNATURE = "x_ptr=*fp32,out_ptr=*fp32,n=i32,factor=fp32"
GELU_HLO = os.path.join(HERE, "hlo", "seed_gelu.hlo")
# Screenshots are kept here (the repository's .gitignore covers out/).
ARTIFACTS = os.path.join(REPO_ROOT, "out", "test-artifacts")


def _line_of(path, text):
    with open(path) as f:
        return next(n for n, line in enumerate(f, start=1) if text in line)


# ---------------------------------------------------------------------------------------
# Line origins: IR in, lines out

MLIR = """\
#loc = loc("/src/k.py":3:1)
#loc1 = loc("/src/k.py":5:9)
#loc2 = loc("offs"(#loc1))
#loc3 = loc("/src/lib.py":40:2)
module {
  func.func @k(%arg0: memref<?xf32> loc("x"(#loc))) {
    %0 = gpu.block_id x loc(#loc2)
    %1 = arith.addi %0, %0 : index loc(callsite(#loc3 at "/src/k.py":7:4))
    scf.if %c {
      %2 = arith.muli %0, %0 : index loc(fused[#loc1, "/src/k.py":8:1])
    } else {
      %3 = arith.muli %0, %0 : index loc(#loc3)
    } loc("/src/k.py":9:5)
    return loc(#loc)
  } loc(#loc)
} loc(unknown)
"""


def test_mlir_lines_follow_aliases_names_call_sites_and_regions():
    origins = mlir_line_origins(MLIR, "/src/k.py")
    by_text = {line.strip(): o for line, o in zip(MLIR.splitlines(), origins)}
    assert by_text['#loc = loc("/src/k.py":3:1)'] == set()  # alias definitions are no code
    assert by_text['func.func @k(%arg0: memref<?xf32> loc("x"(#loc))) {'] == {3}
    assert by_text["%0 = gpu.block_id x loc(#loc2)"] == {5}
    # An inlined call: the call's line in k.py (lib.py is another file).
    assert by_text["%1 = arith.addi %0, %0 : index loc(callsite(#loc3 at \"/src/k.py\":7:4))"] == {7}
    assert by_text['%2 = arith.muli %0, %0 : index loc(fused[#loc1, "/src/k.py":8:1])'] == {5, 8}
    assert by_text["%3 = arith.muli %0, %0 : index loc(#loc3)"] == set()
    # scf.if prints its location after the last region: the opening and the else line get it.
    assert by_text["scf.if %c {"] == {9}
    assert by_text["} else {"] == {9}
    assert by_text["return loc(#loc)"] == {3}
    assert mlir_line_origins(MLIR, "/src/lib.py")[7] == {40}


OPENCL = """\
// Kernel k: OpenCL C 1.2 printed from its memref-stage MLIR.
static inline float helper(float x) {
  return x;
}
__kernel void k(__global float* x_ptr) {
  __local float tile0[16];
  // offs = tl.program_id(0) * BLOCK  (k.py:5)
  long offs = get_group_id(0);
  // tl.store(x_ptr + offs, 1.0)  (k.py:7)
  if (offs < 4) {
    x_ptr[offs] = 1.0f;
  }
  // other file  (lib.py:7)
  long z = 0;
}
"""


def test_opencl_lines_belong_to_the_comment_above_them():
    origins = opencl_line_origins(OPENCL, "/anywhere/k.py")
    lines = OPENCL.splitlines()
    assert [sorted(o) for o in origins] == [[], [], [], [], [], [], [5], [5], [7], [7], [7], [7], [], [], []]
    assert lines[10].strip() == "x_ptr[offs] = 1.0f;"


SPIRV = """\
%1 = OpString "/src/k.py"
%2 = OpString "/src/lib.py"
%main = OpFunction %void None %fn
OpLine %1 5 3
%5 = OpIAdd %int %a %b
OpLine %2 9 1
%6 = OpIMul %int %a %b
OpLine %1 7 2
%7 = OpIMul %int %a %b
OpNoLine
OpReturn
OpFunctionEnd
"""


def test_spirv_lines_follow_opline():
    origins = spirv_line_origins(SPIRV, "/src/k.py")
    assert [sorted(o) for o in origins] == [[], [], [], [5], [5], [], [], [7], [7], [], [], []]


# ---------------------------------------------------------------------------------------
# Pages


@pytest.fixture(scope="module")
def scale_page(tmp_path_factory):
    out = tmp_path_factory.mktemp("view")
    assert cli.main(["view", KERNELS, "scale_kernel", "--signature", SIGNATURE,
                     "--constexpr", "BLOCK=256", "-o", str(out)]) == 0
    return out / "scale_kernel.html"


def _page_data(page_text):
    found = re.search(r'<script type="application/json" id="view-data">(.*?)</script>', page_text, re.S)
    return json.loads(found.group(1))


def test_page_is_self_contained_with_every_stage(scale_page):
    text = scale_page.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text), "the page loads nothing"
    assert "@import" not in text and "url(" not in text
    stages = {"ttir", "linalg", "memref", "cl"} | spirv_stages("spvasm")
    assert set(_page_data(text)["stages"]) == stages
    assert ("SPIR-V" in text) == ("spvasm" in stages)  # a SPIR-V column exactly with the stage
    # Header: the work-group size and the __local bytes the OpenCL C declares (2 tiles of 256 floats).
    assert re.search(r"<dt>work-group size</dt><dd>1 x 1 x 1</dd>", text)
    assert re.search(r"<dt>__local bytes</dt><dd>2048</dd>", text)
    # Every stage shows its size and compile time.
    assert len(re.findall(r'<span class="size">\d+ lines, \d+ bytes, [\d.]+ ms</span>', text)) == len(stages)


def _compiled_here(tmp_path) -> tuple[dict, str]:
    """The stages of scale_kernel, and the source path its locations name. Triton's cache
    key has a kernel's source but not its path, so a kernel cached from another checkout
    of this repository names that checkout's copy of the file."""
    page_dir = tmp_path / "compiled"
    assert cli.main(["compile", KERNELS, "scale_kernel", "--signature", SIGNATURE, "--constexpr",
                     "BLOCK=256", "--stage", "all", "-o", str(page_dir)]) == 0
    texts = {ext: (page_dir / f"scale_kernel.{ext}").read_text() for ext in ("ttir", "linalg", "memref", "cl")}
    recorded = re.search(r'loc\("([^"]*kernels_for_cli\.py)"', texts["ttir"])
    assert recorded, "the TTIR names no source file"
    return texts, recorded.group(1)


def test_spirv_column_appears_with_the_stage(scale_page, tmp_path):
    """A kernel whose asm holds an `spvasm` stage gets a SPIR-V column, lines mapped by OpLine."""
    texts, source = _compiled_here(tmp_path)
    store_line = _line_of(KERNELS, "tl.store(")
    texts["spvasm"] = SPIRV.replace("/src/k.py", source).replace("OpLine %1 5 3", f"OpLine %1 {store_line} 3")
    view = triton_kernel_view(texts, {"name": "scale_kernel", "local_size": [1, 1, 1]})
    text = render_page(view)
    assert "SPIR-V" in text
    assert [sorted(o) for o in _page_data(text)["stages"]["spvasm"]][3:5] == [[store_line], [store_line]]


def test_view_dir_writes_a_page_per_compiled_kernel(tmp_path):
    script = tmp_path / "two_kernels.py"
    script.write_text(TWO_KERNELS)
    env = dict(os.environ, TRITON_SPIRV_VIEW_DIR=str(tmp_path / "pages"),
               TRITON_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=REPO_ROOT)
    subprocess.run([sys.executable, str(script)], env=env, check=True, timeout=240)
    # negate_kernel is compiled for two block sizes: a page each.
    assert sorted(os.listdir(tmp_path / "pages")) == ["double_kernel.html", "negate_kernel-2.html",
                                                      "negate_kernel.html"]
    assert "tl.arange(0, BLOCK)" in html.unescape((tmp_path / "pages" / "negate_kernel-2.html").read_text())
    page = (tmp_path / "pages" / "negate_kernel.html").read_text()
    assert "tl.load(x_ptr + offs" in html.unescape(page)
    meta = json.loads(next((tmp_path / "cache").rglob("double_kernel.json")).read_text())
    assert "_view_stage_texts" not in meta  # the texts are not kept in the metadata
    assert set(meta["stage_seconds"]) == {"ttir", "linalg", "memref", "cl", "clbin"} | spirv_stages("spvasm")


TWO_KERNELS = """
import torch, triton, triton.language as tl

@triton.jit
def negate_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, -tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

@triton.jit
def double_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 2 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

x = torch.arange(100, dtype=torch.float32)
negate_kernel[(1,)](x, 100, BLOCK=128)
double_kernel[(1,)](x, 100, BLOCK=128)
negate_kernel[(2,)](x, 100, BLOCK=64)
assert torch.equal(x, 2 * torch.arange(100, dtype=torch.float32))
"""


@pytest.fixture(scope="module")
def gelu_page(tmp_path_factory):
    out = tmp_path_factory.mktemp("hlo-view")
    assert cli.main(["view", GELU_HLO, "-o", str(out)]) == 0
    return out / "fusion.html"


def test_hlo_page_maps_instructions_and_the_fusion(gelu_page):
    data = _page_data(gelu_page.read_text())
    assert set(data["stages"]) >= {"emitted", "memref", "cl"}
    fusion_line = _line_of(GELU_HLO, "fusion(%param)")
    first, last = _line_of(GELU_HLO, "gelu {"), _line_of(GELU_HLO, "ROOT %multiply_0")
    # The entry's fusion instruction stands for every line of its fused computation.
    assert set(range(first, last + 1)) <= set(data["expand"][str(fusion_line)])


def test_view_reports_a_missing_kernel(capsys, tmp_path):
    assert cli.main(["view", KERNELS, "-o", str(tmp_path)]) == 2
    assert "name of the @triton.jit function" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------
# In a real browser

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (scripts/setup.sh installs it with WITH_BROWSER=1)")

# Put first in <head>: records page errors and console.error calls.
ERROR_TRAP = """<script>
window.__errors = [];
window.addEventListener('error', function (e) { window.__errors.push(String(e.message)); });
(function () { var original = console.error; console.error = function () {
  window.__errors.push(Array.prototype.join.call(arguments, ' ')); original.apply(console, arguments); }; })();
</script>"""

# Put last in <body>: clicks a source line as a user would (on its text) and writes what
# is highlighted in the OpenCL C column into the DOM.
CLICK_AND_REPORT = """<script>
window.addEventListener('load', function () {
  var result = {errors: window.__errors};
  try {
    var line = document.querySelector('#source .line[data-src="%d"] span:last-child');
    line.click();
    result.cl = Array.prototype.map.call(
      document.querySelectorAll('.stage[data-stage="cl"] .line.hl span:last-child'),
      function (el) { return el.textContent; });
    result.selected = Array.prototype.map.call(document.querySelectorAll('#source .line.sel'),
      function (el) { return Number(el.dataset.src); });
  } catch (e) { result.errors.push('test script: ' + e); }
  var out = document.createElement('pre');
  out.id = 'test-result';
  out.textContent = JSON.stringify(result);
  document.body.appendChild(out);
});
</script>"""


def _chromium(*args, timeout=90):
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--enable-logging=stderr", "--v=0", *args],
                          capture_output=True, text=True, timeout=timeout)


def click_in_browser(page, source_line, tmp_path):
    """Loads the page with the two test scripts, clicks `source_line`; -> (result, stderr)."""
    text = page.read_text()
    text = text.replace("<head>", "<head>\n" + ERROR_TRAP, 1)
    text = text.replace("</body>", CLICK_AND_REPORT % source_line + "\n</body>", 1)
    probe = tmp_path / f"probe-{page.name}"
    probe.write_text(text)
    run = _chromium("--dump-dom", "--virtual-time-budget=5000", probe.as_uri())
    found = re.search(r'<pre id="test-result">(.*?)</pre>', run.stdout, re.S)
    assert found, f"the page's test script did not report:\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1))), run.stderr


def _console_errors(stderr):
    return [line for line in stderr.splitlines() if "CONSOLE" in line and ("Uncaught" in line or "rror" in line)]


def screenshot(page, source_line, name):
    os.makedirs(ARTIFACTS, exist_ok=True)
    path = os.path.join(ARTIFACTS, name)
    run = _chromium("--window-size=1600,900", f"--screenshot={path}", page.as_uri() + f"#L{source_line}")
    assert os.path.getsize(path) > 10_000, run.stderr[-2000:]
    return path


@needs_chromium
def test_browser_click_highlights_the_opencl_lines_of_a_python_line(scale_page, tmp_path):
    store_line = _line_of(KERNELS, "tl.store(")
    result, stderr = click_in_browser(scale_page, store_line, tmp_path)
    assert result["errors"] == [] and _console_errors(stderr) == []
    assert result["selected"] == [store_line]
    highlighted = "\n".join(result["cl"])
    # The store's copy to out_ptr, the load's copy from x_ptr and the multiply all come
    # from that line; the program id (line 8) and the mask (line 9) do not.
    assert "0, out_ptr + (" in highlighted
    assert "vload16(0, x_ptr" in highlighted
    assert "* factor" in highlighted
    assert "get_group_id" not in highlighted and "(long)n" not in highlighted

    mask_line = _line_of(KERNELS, "mask = offs < n")
    result, _ = click_in_browser(scale_page, mask_line, tmp_path)
    assert any("(long)n" in text for text in result["cl"])
    assert not any("vload16(0, x_ptr" in text for text in result["cl"])
    assert screenshot(scale_page, store_line, "viewer-scale_kernel.png")


@needs_chromium
def test_browser_hlo_instruction_and_fusion_highlight_kernel_lines(gelu_page, tmp_path):
    tanh_line = _line_of(GELU_HLO, "%tanh_0 =")
    result, stderr = click_in_browser(gelu_page, tanh_line, tmp_path)
    assert result["errors"] == [] and _console_errors(stderr) == []
    assert any("tanh_float(" in text for text in result["cl"])
    assert not any("bl_x * 512" in text for text in result["cl"])
    # The fusion instruction: the kernel's code, and the whole fused computation selected.
    fusion_line = _line_of(GELU_HLO, "fusion(%param)")
    result, _ = click_in_browser(gelu_page, fusion_line, tmp_path)
    assert tanh_line in result["selected"]
    assert any("tanh_float(" in text for text in result["cl"])
    assert any("get_group_id" in text for text in result["cl"])
    assert screenshot(gelu_page, tanh_line, "viewer-hlo-gelu.png")


MATMUL_TUTORIAL = os.path.join(REPO_ROOT, "python", "tutorials", "03-matrix-multiplication.py")
MATMUL_SIGNATURE = ",".join(["a_ptr=*fp16", "b_ptr=*fp16", "c_ptr=*fp16", "M=i32", "N=i32", "K=i32"]
                            + [f"stride_{s}=i32" for s in ("am", "ak", "bk", "bn", "cm", "cn")])


@needs_chromium
def test_browser_matmul_tutorial_page(tmp_path):
    """The autotuned tutorial kernel (the view command unwraps @triton.autotune): its
    tl.dot line became the register-blocked contraction, its helper is shown."""
    assert cli.main(["view", MATMUL_TUTORIAL, "matmul_kernel", "--signature", MATMUL_SIGNATURE,
                     "--constexpr", "BLOCK_SIZE_M=32,BLOCK_SIZE_N=32,BLOCK_SIZE_K=32,GROUP_SIZE_M=8,"
                     "ACTIVATION=leaky_relu", "-o", str(tmp_path)]) == 0
    page = tmp_path / "matmul_kernel.html"
    assert "def leaky_relu(x):" in html.unescape(page.read_text())
    dot_line = _line_of(MATMUL_TUTORIAL, "accumulator = tl.dot(")
    result, stderr = click_in_browser(page, dot_line, tmp_path)
    assert result["errors"] == [] and _console_errors(stderr) == []
    highlighted = "\n".join(result["cl"])
    assert "vload16(" in highlighted and "accumulator" in highlighted
    assert "vstore_half" not in highlighted  # the store of C comes from tl.store's line
    assert screenshot(page, dot_line, "viewer-matmul_kernel.png")


def test_view_of_an_hlo_kernel_that_does_not_exist(capsys, tmp_path):
    assert cli.main(["view", GELU_HLO, "no_such_kernel", "-o", str(tmp_path)]) == 2
    assert "has no kernel named 'no_such_kernel'; its kernels: fusion" in capsys.readouterr().err


def test_page_without_a_readable_source_still_shows_the_stages(scale_page, tmp_path):
    texts, source = _compiled_here(tmp_path)
    texts["ttir"] = texts["ttir"].replace(source, "/gone/kernels_for_cli.py")
    text = render_page(triton_kernel_view(texts, {"name": "scale_kernel"}))
    assert "not readable: /gone/kernels_for_cli.py" in text
    assert "__kernel void scale_kernel" in text


HLO_SCRIPT = """
import sys
import numpy as np
import triton_spirv.hlo as hlo
module = hlo.read_hlo(open(sys.argv[1]).read())
x = np.linspace(-3, 3, 6 * 512 * 4096, dtype=np.float32).reshape(6, 512, 4096)
hlo.ModuleRunner(module).run([x])
"""


def test_view_dir_writes_pages_for_hlo_kernels_a_script_runs(tmp_path):
    script = tmp_path / "run_hlo.py"
    script.write_text(HLO_SCRIPT)
    env = dict(os.environ, TRITON_SPIRV_VIEW_DIR=str(tmp_path / "pages"), PYTHONPATH=REPO_ROOT)
    subprocess.run([sys.executable, str(script), GELU_HLO], env=env, check=True, timeout=240)
    page = (tmp_path / "pages" / "fusion.html").read_text()
    assert set(_page_data(page)["stages"]) >= {"emitted", "memref", "cl"}
    assert "%tanh_0 = bf16[6,512,4096] tanh" in html.unescape(page)


UNFUSED_HLO = """HloModule unfused
ENTRY main {
  p0 = f32[64] parameter(0)
  p1 = f32[64] parameter(1)
  ROOT sum = f32[64] add(p0, p1)
}
"""


def test_hlo_page_of_an_unfused_instruction(tmp_path):
    module = tmp_path / "unfused.hlo"
    module.write_text(UNFUSED_HLO)
    assert cli.main(["view", str(module), "-o", str(tmp_path / "pages")]) == 0
    data = _page_data((tmp_path / "pages" / "sum.html").read_text())
    assert data["expand"] == {}
    add_line = _line_of(module, "ROOT sum")
    cl_lines_of_add = [n for n, origins in enumerate(data["stages"]["cl"]) if add_line in origins]
    assert cl_lines_of_add, data["stages"]["cl"]
