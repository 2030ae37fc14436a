"""The stage viewer: one self-contained HTML page per kernel.

The source (Python or HLO) and every stage the compiler kept (TTIR, Linalg, memref
stage, OpenCL C, SPIR-V disassembly where that stage exists) side by side; selecting
a source line highlights the lines it became in every stage (line_origins.py), each
stage shows its size and compile time, and a header the kernel's launch facts.

    triton-spirv view FILE.py KERNEL --signature ... --constexpr ... -o DIR
    triton-spirv view MODULE.hlo -o DIR
    TRITON_SPIRV_VIEW_DIR=DIR python3 script.py     # every kernel the script compiles
"""
from __future__ import annotations

import ast
import html
import json
import os
import re
from dataclasses import dataclass, field

from .line_origins import line_origins
from .viewer_page import SCRIPT, STYLE

# The stages a page shows, in pipeline order, with their column titles.
TRITON_STAGES = (("ttir", "TTIR"), ("linalg", "Linalg on tensors"), ("memref", "memref stage"),
                 ("cl", "OpenCL C"), ("spvasm", "SPIR-V"))
HLO_STAGES = (("emitted", "emitted (tensors)"), ("memref", "memref stage"), ("cl", "OpenCL C"),
              ("spvasm", "SPIR-V"))

# Triton names the kernel's function in the first location alias of its TTIR.
_FUNCTION_LOC = re.compile(r'^#loc\s*=\s*loc\("((?:[^"\\]|\\.)*)":(\d+):\d+\)', re.MULTILINE)
_ANY_FILE_LOC = re.compile(r'loc\("((?:[^"\\]|\\.)*\.py)":(\d+):\d+\)')


@dataclass
class StageColumn:
    name: str
    title: str
    text: str
    seconds: float | None
    origins: list[set[int]]

    @property
    def size(self) -> str:
        return f"{len(self.text.splitlines())} lines, {len(self.text.encode())} bytes"


@dataclass
class KernelView:
    kernel: str
    source_title: str                         # "Python" or "HLO"
    source_path: str
    source_lines: list[tuple[int, str] | None]  # shown lines; None is a gap
    stages: list[StageColumn]
    facts: list[tuple[str, str]]
    expand: dict[int, list[int]] = field(default_factory=dict)


def stage_columns(texts: dict, seconds: dict, source_path: str, known) -> list[StageColumn]:
    columns = []
    for name, title in known:
        text = texts.get(name)
        if isinstance(text, bytes) or not text:
            continue
        columns.append(StageColumn(name, title, text, seconds.get(name),
                                   line_origins(name, text, source_path)))
    return columns


# ---------------------------------------------------------------------------------------
# Triton kernels


def triton_source_path(ttir: str) -> str:
    """The kernel's Python file as its TTIR locations name it ("" when they name none)."""
    match = _FUNCTION_LOC.search(ttir) or _ANY_FILE_LOC.search(ttir)
    return match.group(1) if match else ""


def _read_source(path: str) -> str | None:
    """The source file's text, or None where it cannot be read (a kernel defined in
    a string, a file moved since): the page then shows the stages alone."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def _function_ranges(source: str) -> list[tuple[int, int]]:
    """(first, last) line of every function in a Python file, decorators included."""
    ranges = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            ranges.append((first, node.end_lineno))
    return ranges


def python_lines_shown(source: str, wanted: set[int]) -> list[tuple[int, str] | None]:
    """The functions holding a wanted line (the kernel and the helpers inlined into it),
    whole and in file order, with None between non-adjacent ones."""
    lines = source.splitlines()
    ranges = [r for r in _function_ranges(source) if any(r[0] <= n <= r[1] for n in wanted)]
    # Nested functions lie inside their parents: keep the outermost.
    ranges = [r for r in ranges if not any(o != r and o[0] <= r[0] and r[1] <= o[1] for o in ranges)]
    numbers = sorted({n for first, last in ranges for n in range(first, last + 1)}
                     | {n for n in wanted if 1 <= n <= len(lines)})
    shown, previous = [], None
    for n in numbers:
        if previous is not None and n != previous + 1:
            shown.append(None)
        shown.append((n, lines[n - 1]))
        previous = n
    return shown


def triton_kernel_view(texts: dict, metadata: dict) -> KernelView:
    """The page of a compiled Triton kernel: `texts` maps stage -> text (compiled.asm),
    `metadata` is the kernel's metadata as a dict."""
    source_path = triton_source_path(texts["ttir"])
    seconds = dict(metadata.get("stage_seconds") or {})
    stages = stage_columns(texts, seconds, source_path, TRITON_STAGES)
    wanted = set().union(*(o for s in stages for o in s.origins))
    source = _read_source(source_path)
    shown = python_lines_shown(source, wanted) if source is not None else []
    facts = triton_facts(metadata, stages)
    if source is None:
        facts.append(("source", f"not readable: {source_path or 'the TTIR names no file'}"))
    name = metadata.get("source_name") or metadata.get("name", "kernel")
    return KernelView(name, "Python", source_path, shown, stages, facts)


def _local_bytes(metadata: dict) -> int:
    if "local_mem_bytes" in metadata:
        return int(metadata["local_mem_bytes"])
    return int(metadata.get("shared", 0))


def _seconds_text(seconds) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f} ms"


def triton_facts(metadata: dict, stages: list[StageColumn]) -> list[tuple[str, str]]:
    target = metadata.get("target")
    arch = target.get("arch", "") if isinstance(target, dict) else getattr(target, "arch", "")
    total = sum(s.seconds for s in stages if s.seconds is not None)
    facts = [("OpenCL kernel", str(metadata.get("name", ""))),
             ("work-group size", " x ".join(str(n) for n in metadata.get("local_size") or (1, 1, 1))),
             ("__local bytes", str(_local_bytes(metadata))),
             ("device", str(arch)),
             ("compile time (stages shown)", _seconds_text(total))]
    if metadata.get("bounds_check"):
        facts.append(("bounds-checked", "yes"))
    return facts


# ---------------------------------------------------------------------------------------
# HLO kernels


def hlo_kernel_view(module_text: str, source_path: str, fusion_instr, fusion,
                    kernel) -> KernelView:
    """The page of one kernel of an HLO fusion: the module text (kept at `source_path`,
    which the kernel's locations name) and the kernel's stages; the fusion instruction
    stands for its whole fused computation."""
    texts = dict(kernel.stages, cl=kernel.source)
    stages = stage_columns(texts, dict(kernel.stage_seconds), source_path, HLO_STAGES)
    expand = _fusion_expansion(module_text, fusion_instr, fusion.computation)
    shown = list(enumerate(module_text.splitlines(), start=1))
    total = sum(s.seconds for s in stages if s.seconds is not None)
    facts = [("fusion", f"%{fusion_instr.name}"), ("emitter", str(fusion.report.emitter)),
             ("hero", str(fusion.report.hero)),
             ("work-group size", " x ".join(str(n) for n in kernel.local_size)),
             ("__local bytes", str(kernel.local_mem_bytes)),
             ("compile time (stages shown)", _seconds_text(total))]
    return KernelView(kernel.name, "HLO", source_path, shown, stages, facts, expand)


def _fusion_expansion(module_text: str, instr, computation) -> dict[int, list[int]]:
    """A `fusion` instruction stands for the lines of its fused computation (an unfused
    instruction's kernel maps to its own line through the locations)."""
    if instr.opcode != "fusion":
        return {}
    last = (_closing_line(module_text, computation.line)
            or max(i.line for i in computation.instructions))
    return {instr.line: list(range(computation.line, last + 1))}


def _closing_line(text: str, first: int) -> int | None:
    """The line of the `}` that closes the computation opened on line `first`."""
    depth = 0
    for number, line in enumerate(text.splitlines()[first - 1:], start=first):
        depth += line.count("{") - line.count("}")
        if depth <= 0 and "}" in line:
            return number
    return None


# ---------------------------------------------------------------------------------------
# HTML


def _line_html(number, text: str, attrs: str = "", classes: str = "line") -> str:
    return (f'<div class="{classes}"{attrs}><span class="no">{number}</span>'
            f"<span>{html.escape(text)}</span></div>")


def _source_html(view: KernelView, mapped: set[int]) -> str:
    rows = []
    for entry in view.source_lines:
        if entry is None:
            rows.append('<div class="line gap"><span class="no"></span><span>...</span></div>')
            continue
        number, text = entry
        classes = "line mapped" if number in mapped or number in view.expand else "line"
        rows.append(_line_html(number, text, f' data-src="{number}"', classes))
    return "\n".join(rows)


def _stage_html(stage: StageColumn) -> str:
    rows = [_line_html(n, text, "", "line mapped" if origins else "line")
            for n, (text, origins) in enumerate(zip(stage.text.splitlines(), stage.origins), start=1)]
    return "\n".join(rows)


def _column(classes: str, attrs: str, title: str, size: str, body: str) -> str:
    return (f'<section class="{classes}"{attrs}><h2>{html.escape(title)} '
            f'<span class="size">{html.escape(size)}</span></h2>'
            f'<div class="code">{body}</div></section>')


def page_data(view: KernelView) -> dict:
    return {"stages": {s.name: [sorted(o) for o in s.origins] for s in view.stages},
            "expand": {str(k): v for k, v in view.expand.items()}}


def render_page(view: KernelView) -> str:
    mapped = set().union(*(o for s in view.stages for o in s.origins))
    columns = [_column("column", ' id="source"', f"{view.source_title}: {os.path.basename(view.source_path)}",
                       f"{sum(1 for e in view.source_lines if e)} lines shown",
                       _source_html(view, mapped))]
    for stage in view.stages:
        size = f"{stage.size}, {_seconds_text(stage.seconds)}"
        columns.append(_column("column stage", f' data-stage="{stage.name}"', stage.title, size,
                               _stage_html(stage)))
    facts = "".join(f'<div class="fact"><dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd></div>'
                    for k, v in view.facts)
    data = json.dumps(page_data(view)).replace("</", "<\\/")
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{html.escape(view.kernel)}: compiler stages</title>
<style>{STYLE}</style>
</head>
<body>
<header><h1>{html.escape(view.kernel)} <small>({html.escape(view.source_path)})</small></h1>
<dl>{facts}</dl></header>
<main id="columns">
{chr(10).join(columns)}
</main>
<script type="application/json" id="view-data">{data}</script>
<script>{SCRIPT}</script>
</body>
</html>
"""


def write_page(view: KernelView, directory: str, name: str | None = None) -> str:
    """Writes `directory/<name or kernel>.html`; returns its path."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{name or view.kernel}.html")
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(render_page(view))
    os.replace(tmp, path)  # a page is written whole or not at all
    return path
