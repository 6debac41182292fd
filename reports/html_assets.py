"""The report's stylesheet and script, inlined into the page so it opens offline from one file.

The script reads nothing from the records: it sorts tables by the text (or `data-sort` value) of
their cells and copies the text of a replay command. Record data embedded in the page is JSON in a
`<script type="application/json">` block that the script never evaluates.
"""

from __future__ import annotations

CSS = """
:root { --fg: #1d2430; --muted: #5f6b7a; --line: #d9dee5; --soft: #f4f6f9; --accent: #2f5fa7;
  --bad: #c92a2a; --bad-soft: #fdecec; --good: #2f8a4c; --good-soft: #eef7f0; --warn: #b86e00;
  --mono: ui-monospace, SFMono-Regular, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: #fff;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", Roboto, sans-serif; }
header.page { background: #1f2a3c; color: #fff; padding: 18px 32px 14px; }
header.page h1 { margin: 0 0 2px; font-size: 22px; font-weight: 600; }
header.page p { margin: 0; color: #c5cedb; font-size: 13px; }
nav { display: flex; gap: 18px; padding: 8px 32px; background: var(--soft); border-bottom: 1px solid var(--line);
  position: sticky; top: 0; z-index: 5; }
nav a { color: var(--accent); text-decoration: none; font-weight: 500; }
main { padding: 8px 32px 40px; max-width: 1400px; }
section { margin-top: 26px; }
h2 { font-size: 18px; margin: 0 0 10px; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
h3 { font-size: 15px; margin: 0 0 6px; }
.muted { color: var(--muted); }
code, pre, .mono { font-family: var(--mono); font-size: 12.5px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 10px; margin-bottom: 14px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; background: #fff; }
.card .value { font-size: 22px; font-weight: 650; }
.card .label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
.card.bad { border-color: #f0b4b4; background: var(--bad-soft); }
.card.bad .value { color: var(--bad); }
.card.warn { border-color: #f1cf95; background: #fff7e8; }
.card.warn .value { color: var(--warn); }
.legend { display: flex; flex-wrap: wrap; gap: 14px; margin: 6px 0 0; font-size: 12.5px; color: var(--muted); }
.legend-item i { display: inline-block; width: 11px; height: 11px; border-radius: 2px; margin-right: 5px;
  vertical-align: -1px; }
.swatch-findings { background: #f1a7a7; }
.swatch-line { background: #1f2a3c; height: 3px !important; vertical-align: 3px !important; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { border-bottom: 1px solid var(--line); padding: 5px 8px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr:hover td { background: #f9fafc; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th::after { content: " \\2195"; color: #a9b2bf; font-size: 11px; }
table.sortable th[aria-sort=ascending]::after { content: " \\25B2"; color: var(--accent); }
table.sortable th[aria-sort=descending]::after { content: " \\25BC"; color: var(--accent); }
.scroll { overflow-x: auto; }
table.matrix { width: auto; }
table.matrix th.col { writing-mode: vertical-rl; transform: rotate(180deg); height: 96px; vertical-align: bottom;
  padding: 6px 4px; font-size: 12px; }
table.matrix td.cell { text-align: center; min-width: 38px; font-variant-numeric: tabular-nums; }
table.matrix td.zero { color: #b8c7ba; background: var(--good-soft); }
table.matrix td.target { font-weight: 600; background: #fff; }
table.matrix tr.first-of-target td { border-top: 2px solid #c4ccd6; }
.sig-code { font-family: var(--mono); font-size: 12px; overflow-wrap: anywhere; }
table.signatures td:nth-child(2) { min-width: 260px; }
td.when { white-space: nowrap; font-family: var(--mono); font-size: 12px; }
.badge { display: inline-block; padding: 0 7px; border-radius: 10px; font-size: 11.5px; font-weight: 600;
  background: var(--soft); color: var(--muted); border: 1px solid var(--line); white-space: nowrap; }
.badge.violation, .badge.no { background: var(--bad-soft); color: var(--bad); border-color: #f0b4b4; }
.badge.divergence { background: #eef3fb; color: var(--accent); border-color: #bfd0ea; }
.badge.timeout { background: #fff4e2; color: var(--warn); border-color: #f1cf95; }
.badge.warn { background: #fff4e2; color: var(--warn); border-color: #f1cf95; }
.badge.crash { background: #f3ecfa; color: #6d3aa0; border-color: #d5c2ea; }
.badge.yes { background: var(--good-soft); color: var(--good); border-color: #b9dcc3; }
.badge.control { font-family: inherit; font-weight: 500; margin-left: 4px; }
.chips { display: flex; flex-wrap: wrap; gap: 4px; }
.grid2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(460px, 1fr)); gap: 18px; }
.panel { border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; background: #fff; overflow-x: auto; }
.signature { border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; margin-bottom: 18px; }
.signature:target { border-color: var(--accent); box-shadow: 0 0 0 3px #dfe8f6; }
.signature .meta { color: var(--muted); font-size: 12.5px; margin: 2px 0 8px; }
.signature .message { background: var(--soft); border-left: 3px solid var(--bad); padding: 6px 10px; margin: 8px 0;
  white-space: pre-wrap; word-break: break-word; }
.note { color: var(--muted); font-size: 12.5px; margin: 4px 0 8px; }
.replay { display: flex; align-items: center; gap: 8px; margin: 10px 0 4px; }
.replay code { flex: 1; background: #1f2a3c; color: #e6edf6; padding: 7px 10px; border-radius: 6px;
  overflow-x: auto; white-space: pre; }
button.copy { font: inherit; font-size: 12.5px; padding: 5px 12px; border-radius: 6px; border: 1px solid #b7c3d3;
  background: #fff; cursor: pointer; }
button.copy:hover { background: var(--soft); }
details { margin-top: 8px; }
summary { cursor: pointer; color: var(--accent); font-weight: 500; }
pre.json { background: var(--soft); padding: 8px 10px; border-radius: 6px; overflow-x: auto; max-height: 320px; }
.diagram { overflow-x: auto; border: 1px solid var(--line); border-radius: 6px; background: #fcfdfe; margin-top: 6px; }
svg.chart { width: 100%; max-width: 760px; height: auto; display: block; }
svg text { font-family: system-ui, "DejaVu Sans", sans-serif; }
svg.sequence .lifeline { stroke: #aab4c2; stroke-dasharray: 4 4; }
svg.sequence .actor { fill: #1f2a3c; }
svg.sequence .actor-name { fill: #fff; font-size: 12px; font-weight: 600; text-anchor: middle; }
svg.sequence .arrow { stroke: #33415a; stroke-width: 1.4; fill: none; }
svg.sequence .head-plain { fill: #33415a; }
svg.sequence .head-hot { fill: var(--bad); }
svg.sequence .call { font-size: 11.5px; fill: #1d2430; text-anchor: middle; font-family: var(--mono); }
svg.sequence .result { font-size: 11px; fill: var(--muted); text-anchor: middle; }
svg.sequence .side { text-anchor: start; }
svg.sequence .step-number { font-size: 11px; fill: var(--muted); text-anchor: end; }
svg.sequence .diverging-row { fill: #fde4e4; }
svg.sequence .diverging .arrow, svg.sequence .differs .arrow { stroke: var(--bad); stroke-width: 2; }
svg.sequence .diverging .call { font-weight: 700; fill: var(--bad); }
svg.sequence .differs .result { fill: var(--bad); font-weight: 600; }
svg.sequence .diverging .step-number { fill: var(--bad); font-weight: 700; }
svg.chart .axis { stroke: #9aa5b4; }
svg.chart .grid { stroke: #e5e9ef; }
svg.chart .tick { font-size: 11px; fill: var(--muted); text-anchor: middle; }
svg.chart .tick.bars { fill: #c45555; }
svg.chart .axis-title { font-size: 11.5px; fill: var(--muted); text-anchor: middle; }
svg.chart .bar-findings { fill: #f1a7a7; }
svg.chart .line-signatures { fill: none; stroke: #1f2a3c; stroke-width: 2; }
svg.chart .bar-detected { fill: #4d7fc4; }
svg.chart .bar-undetected { fill: #f1f3f6; stroke: #d5dbe3; stroke-dasharray: 3 3; }
svg.chart .bar-label { font-size: 12px; font-weight: 600; fill: var(--fg); font-family: var(--mono); }
svg.chart .bar-value { font-size: 11.5px; fill: var(--muted); }
svg.chart .bar-value.undetected, svg.chart .bar-value.false-positive { fill: var(--bad); }
svg.chart .bar-false-positive { fill: var(--bad); }
svg.chart .bar-value.passed { fill: var(--good); }
svg.chart .bar-hist { fill: #6f93c9; }
.stats { margin: 4px 0 0; color: var(--muted); font-size: 12.5px; }
table.diffs td { font-family: var(--mono); font-size: 12px; overflow-wrap: anywhere; }
header.page p.provenance { color: #e6edf6; font-size: 13.5px; margin-bottom: 2px; }
.small { font-size: 12px; }
h3.group { margin-top: 16px; }
table.bugs td:nth-child(2) { min-width: 320px; }
table.bugs td.where { font-size: 12.5px; overflow-wrap: anywhere; max-width: 280px; }
a.bug-title { font-weight: 600; color: var(--fg); text-decoration: none; }
a.bug-title:hover { color: var(--accent); text-decoration: underline; }
details.sigs { margin-top: 2px; }
details.sigs summary { font-size: 12px; font-weight: 500; }
details.sigs ul { margin: 4px 0 0; padding-left: 18px; }
details.sigs li { font-size: 12px; overflow-wrap: anywhere; }
.badge.ticket { background: #f2eefb; color: #4d3a8a; border-color: #d8cdf0; font-family: var(--mono); }
table.matrix td.held { color: var(--good); background: var(--good-soft); font-weight: 700; }
table.matrix td.zero { color: #b9c0c9; background: #fafbfc; }
table.legend-table td:nth-child(2) { color: var(--fg); }
table.mutants { table-layout: auto; }
table.mutants th, table.bugs th, table.ran th, table.legend-table th { white-space: normal; }
@media (max-width: 1000px) { main { padding: 8px 16px 32px; } nav { gap: 12px; padding: 8px 16px; flex-wrap: wrap; }
  table.mutants td:nth-child(2) { min-width: 180px; } table.bugs td:nth-child(2) { min-width: 220px; } }
table.mutants td { overflow-wrap: anywhere; }
table.mutants td.num { overflow-wrap: normal; }
table.mutants td:nth-child(2) { min-width: 260px; }
table.ran td, table.coverage td { overflow-wrap: anywhere; }
table.coverage td.op { white-space: nowrap; overflow-wrap: normal; }
.cov-chip { display: inline-block; padding: 1px 7px; border-radius: 10px; font-size: 11.5px; font-family: var(--mono);
  border: 1px solid #bfd0ea; background: #eef3fb; color: #23467d; white-space: nowrap; }
.cov-chip b { font-family: system-ui, "DejaVu Sans", sans-serif; font-weight: 500; color: var(--muted); }
.cov-chip.miss { background: #fff; border: 1px dashed #c3cad3; color: #8a94a1; }
.cov-chip.extra { background: #fff; border-color: #4d7fc4; }
table.diffs { margin-top: 8px; table-layout: fixed; }
table.diffs th:nth-child(1) { width: 52px; } table.diffs th:nth-child(2) { width: 130px; }
table.diffs th:nth-child(5) { width: 24%; }
table.diffs tr.allowed td { color: #8a94a1; background: #f7f8fa; }
table.diffs td.allowed-why { font-family: inherit; font-size: 12px; }
table.diffs td.divergent-why { color: var(--bad); font-family: inherit; font-weight: 600; }
svg.sequence .uncompared .result { fill: #5f6b7a; }
svg.sequence .allowed .result, svg.sequence .expected .result { fill: #9aa3ae; font-style: italic; }
footer { color: var(--muted); font-size: 12px; padding: 16px 32px 28px; border-top: 1px solid var(--line); }
@media print { nav { display: none; } .signature { break-inside: avoid; } }
"""

JS = """
(function () {
  "use strict";
  function sortKey(cell) {
    return cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
  }
  function sortTable(table, column, header) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var numeric = header.getAttribute("data-type") === "number";
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    Array.prototype.forEach.call(header.parentNode.cells, function (cell) { cell.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    rows.sort(function (a, b) {
      var x = sortKey(a.cells[column]), y = sortKey(b.cells[column]);
      var order = numeric ? (parseFloat(x) || 0) - (parseFloat(y) || 0) : x.localeCompare(y);
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (header, column) {
      header.tabIndex = 0;
      header.title = "sort by " + header.textContent.trim();
      header.addEventListener("click", function () { sortTable(table, column, header); });
      header.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sortTable(table, column, header); }
      });
    });
  });
  function copied(button) {
    button.textContent = "Copied";
    setTimeout(function () { button.textContent = "Copy"; }, 1400);
  }
  Array.prototype.forEach.call(document.querySelectorAll("button.copy"), function (button) {
    button.addEventListener("click", function () {
      var text = document.getElementById(button.getAttribute("data-target")).textContent;
      function fallback() {
        var area = document.createElement("textarea");
        area.value = text;
        area.setAttribute("readonly", "");
        area.style.position = "fixed";
        area.style.opacity = "0";
        document.body.appendChild(area);
        area.select();
        try { document.execCommand("copy"); copied(button); } catch (e) { button.textContent = "Select and copy"; }
        document.body.removeChild(area);
      }
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(function () { copied(button); }, fallback);
      } else {
        fallback();
      }
    });
  });
  // read by the browser test: sections whose content is wider than their box (a table or diagram
  // that pushes past the page instead of fitting or scrolling in its own box), and whether the page
  // itself scrolls sideways
  var overflowing = [];
  Array.prototype.forEach.call(document.querySelectorAll("main > section"), function (section) {
    if (section.scrollWidth > section.clientWidth + 1) { overflowing.push(section.id); }
  });
  if (document.documentElement.scrollWidth > window.innerWidth + 1) { overflowing.push("page"); }
  document.documentElement.setAttribute("data-overflow", overflowing.join(" ") || "none");
  // read by the browser test: how many script elements the page holds once parsed (two of ours)
  document.documentElement.setAttribute("data-scripts", String(document.scripts.length));
  document.documentElement.setAttribute("data-ready", "yes");
})();
"""
