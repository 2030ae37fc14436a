"""The stage viewer's page: one self-contained HTML file (no external assets).

The page reads one JSON block (`<script type="application/json" id="view-data">`):
per stage, the source lines each of its lines came from, and `expand` (a source line
that stands for others: an HLO fusion instruction stands for its fused computation).
Selecting a source line, a stage line, or opening the page at `#L12` highlights the
selected source lines and every stage line that came from them.
"""

STYLE = """
* { box-sizing: border-box; }
body { margin: 0; font: 13px/1.35 system-ui, sans-serif; color: #1d2330; background: #f4f5f7;
       height: 100vh; display: flex; flex-direction: column; }
header { padding: 8px 12px; background: #232a3a; color: #eef1f6; }
header h1 { font-size: 16px; margin: 0 0 4px 0; font-weight: 600; }
header dl { display: flex; flex-wrap: wrap; gap: 4px 18px; margin: 0; }
header dt { color: #9fb0cc; } header dd { margin: 0 0 0 4px; font-weight: 600; }
header .fact { display: flex; }
#columns { flex: 1; display: flex; min-height: 0; }
.column { flex: 1 1 0; min-width: 0; display: flex; flex-direction: column;
          border-right: 1px solid #c9ced8; background: #fff; }
.column h2 { margin: 0; padding: 4px 8px; font-size: 12px; background: #e4e8ef;
             border-bottom: 1px solid #c9ced8; white-space: nowrap; overflow: hidden;
             text-overflow: ellipsis; }
.column h2 .size { font-weight: normal; color: #555e70; }
.code { flex: 1; overflow: auto; font: 11px/1.4 ui-monospace, Menlo, Consolas, monospace; }
.line { display: flex; white-space: pre; cursor: default; }
.line .no { flex: none; width: 4.5em; padding-right: 0.8em; text-align: right; color: #98a0ad;
            user-select: none; }
.line.mapped { cursor: pointer; }
.line.mapped:hover { background: #eef3ff; }
.line.gap { color: #98a0ad; font-style: italic; }
.line.hl { background: #ffe9a8; }
.line.sel { background: #ffd35c; }
"""

SCRIPT = """
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('view-data').textContent);

  function selectedSet(sourceLines) {
    var chosen = {};
    sourceLines.forEach(function (n) {
      chosen[n] = true;
      (data.expand[n] || []).forEach(function (m) { chosen[m] = true; });
    });
    return chosen;
  }

  function scrollToFirst(column, cls) {
    var first = column.querySelector('.line.' + cls);
    var code = column.querySelector('.code');
    if (first && code) {
      code.scrollTop = Math.max(0, first.offsetTop - code.offsetTop - code.clientHeight / 3);
    }
  }

  function select(sourceLines) {
    var chosen = selectedSet(sourceLines);
    document.querySelectorAll('.line.hl, .line.sel').forEach(function (el) {
      el.classList.remove('hl', 'sel');
    });
    document.querySelectorAll('#source .line[data-src]').forEach(function (el) {
      if (chosen[el.dataset.src]) { el.classList.add('sel'); }
    });
    document.querySelectorAll('.stage').forEach(function (column) {
      var origins = data.stages[column.dataset.stage];
      column.querySelectorAll('.line').forEach(function (el, index) {
        var from = origins[index] || [];
        for (var k = 0; k < from.length; k++) {
          if (chosen[from[k]]) { el.classList.add('hl'); break; }
        }
      });
      scrollToFirst(column, 'hl');
    });
    scrollToFirst(document.getElementById('source'), 'sel');
  }

  document.getElementById('source').addEventListener('click', function (event) {
    var line = event.target.closest('.line[data-src]');
    if (line) {
      history.replaceState(null, '', '#L' + line.dataset.src);
      select([Number(line.dataset.src)]);
    }
  });
  document.querySelectorAll('.stage').forEach(function (column) {
    var origins = data.stages[column.dataset.stage];
    column.addEventListener('click', function (event) {
      var line = event.target.closest('.line');
      if (!line) { return; }
      var index = Array.prototype.indexOf.call(line.parentNode.children, line);
      if ((origins[index] || []).length) { select(origins[index]); }
    });
  });
  var wanted = /^#L(\\d+)$/.exec(location.hash);
  if (wanted) { select([Number(wanted[1])]); }
})();
"""
