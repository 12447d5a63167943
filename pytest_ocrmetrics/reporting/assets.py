"""The HTML report's stylesheet and script, inlined into every report (no CDN, no fonts, works offline).

The report's Content-Security-Policy allows exactly these two blocks by their SHA-256 hashes, so even a piece of
OCR output that slipped past escaping could not run a script or load anything from the network.
"""

from __future__ import annotations

import base64
import hashlib

__all__ = ["CSS", "JS", "csp_hash"]


def csp_hash(text: str) -> str:
    """The CSP source expression allowing an inline block with exactly this text."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


CSS = """
:root { --fg:#1f2328; --muted:#59636e; --line:#d1d9e0; --bg:#ffffff; --panel:#f6f8fa; --accent:#0969da;
  --good:#1a7f37; --bad:#cf222e; --warn:#9a6700; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
  color: var(--fg); background: var(--bg); }
header.top { padding: 16px 24px 8px; border-bottom: 1px solid var(--line); background: var(--panel); }
header.top h1 { margin: 0 0 4px; font-size: 20px; }
.meta { color: var(--muted); font-size: 12.5px; display: flex; flex-wrap: wrap; gap: 4px 18px; }
.meta b { color: var(--fg); font-weight: 600; }
main { padding: 8px 24px 48px; max-width: 1600px; }
section { margin-top: 22px; }
h2 { font-size: 17px; margin: 0 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 14.5px; margin: 14px 0 6px; }
.note { color: var(--muted); font-size: 12.5px; margin: 4px 0 8px; }
.verdict { display: inline-block; padding: 3px 10px; border-radius: 12px; font-weight: 600; font-size: 13px; }
.verdict.ok { background: #dafbe1; color: var(--good); }
.verdict.fail { background: #ffebe9; color: var(--bad); }
.verdict.interrupted { background: #fff8c5; color: var(--warn); }
.toolbar { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 14px; margin: 6px 0; font-size: 13px; }
.toolbar label { white-space: nowrap; }
.toolbar fieldset { border: 1px solid var(--line); border-radius: 6px; padding: 2px 8px; margin: 0; }
.toolbar legend { font-size: 12px; color: var(--muted); padding: 0 4px; }
button, select, input[type=search] { font: inherit; font-size: 13px; }
button.action { border: 1px solid var(--line); background: var(--panel); border-radius: 6px; padding: 3px 10px; cursor: pointer; }
button.action:hover { border-color: var(--accent); }
.scroll { overflow-x: auto; max-width: 100%; }
table.data { border-collapse: collapse; font-size: 13px; font-variant-numeric: tabular-nums; }
table.data th, table.data td { border: 1px solid var(--line); padding: 4px 8px; vertical-align: top; }
table.data thead th { background: var(--panel); position: sticky; top: 0; z-index: 1; text-align: left; white-space: nowrap; }
table.data td.num, table.data th.num { text-align: right; white-space: nowrap; }
table.data tbody tr:nth-child(even) { background: #fbfcfd; }
table.data tbody tr:hover { background: #f0f6ff; }
th button.sort { all: unset; cursor: pointer; display: inline-flex; gap: 4px; align-items: center; }
th button.sort:focus-visible { outline: 2px solid var(--accent); }
th button.sort::after { content: "\\2195"; color: #b3bac1; font-size: 11px; }
th[aria-sort=ascending] button.sort::after { content: "\\25B2"; color: var(--accent); }
th[aria-sort=descending] button.sort::after { content: "\\25BC"; color: var(--accent); }
.dir { color: var(--muted); font-weight: normal; font-size: 11.5px; }
.col-hidden { display: none; }
.delta { display: block; font-size: 11.5px; color: var(--muted); }
.delta.worse { color: var(--bad); font-weight: 600; }
.delta.better { color: var(--good); font-weight: 600; }
.badge { display: inline-block; padding: 0 7px; border-radius: 10px; font-size: 12px; font-weight: 600; }
.badge.passed { background: #dafbe1; color: var(--good); }
.badge.failed, .badge.error, .badge.regression, .badge.unmatched { background: #ffebe9; color: var(--bad); }
.badge.skipped, .badge.filtered, .badge.ungated, .badge.unchanged { background: #eff2f5; color: var(--muted); }
.badge.improvement { background: #ddf4ff; color: var(--accent); }
.badge.not-significant { background: #fff8c5; color: var(--warn); }
.badge.flaky, .badge.unchecked { background: #fff8c5; color: var(--warn); }
table.facts td.explanation { min-width: 16em; max-width: 42em; word-break: break-word; }
table.facts td.fact-id { overflow-wrap: anywhere; min-width: 8em; }
.facts-rates { margin-top: 10px; }
.omnidoc { margin-top: 10px; }
table.omnidoc-blocks td { vertical-align: top; }
table.omnidoc-blocks pre.block { margin: 0; white-space: pre-wrap; word-break: break-word; max-width: 36em;
  max-height: 16em; overflow: auto; font-size: 12px; }
pre.excerpt { margin: 0; padding: 2px 6px; background: var(--panel); border: 1px solid var(--line); border-radius: 4px;
  white-space: pre-wrap; word-break: break-word; min-width: 16em;
  font: 12px/1.45 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace;
  max-width: 42em; max-height: 12em; overflow: auto; }
a { color: var(--accent); }
details.doc { border: 1px solid var(--line); border-radius: 6px; margin: 6px 0; background: var(--bg); }
details.doc > summary { cursor: pointer; padding: 6px 10px; display: flex; flex-wrap: wrap; gap: 4px 12px;
  align-items: baseline; list-style-position: inside; }
details.doc[open] > summary { border-bottom: 1px solid var(--line); background: var(--panel); }
details.doc > summary .rank { color: var(--muted); min-width: 2.5em; }
details.doc > summary .docid { font-weight: 600; word-break: break-all; }
details.doc > summary .metrics { color: var(--muted); font-size: 12.5px; }
.docbody { padding: 10px; display: grid; grid-template-columns: minmax(160px, 320px) 1fr; gap: 14px; }
.metrics-table { margin-bottom: 8px; }
.metrics-table tbody th { text-align: left; font-weight: 600; color: var(--muted); background: var(--panel); }
.docbody .side { min-width: 0; }
.docbody .texts { min-width: 0; }
.thumb { max-width: 100%; max-height: 420px; border: 1px solid var(--line); cursor: zoom-in; display: block; }
.thumb.zoom { max-height: none; cursor: zoom-out; }
.docbody.zoomed { grid-template-columns: 1fr; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 10px; }
.pane h4 { margin: 0 0 4px; font-size: 12.5px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
pre.text { margin: 0; padding: 8px; background: var(--panel); border: 1px solid var(--line); border-radius: 4px;
  white-space: pre-wrap; word-break: break-word; font: 12.5px/1.5 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace;
  max-height: 520px; overflow: auto; }
pre.message { margin: 0 0 8px; padding: 6px 8px; background: #fff8f7; border: 1px solid #ffcecb; border-radius: 4px;
  white-space: pre-wrap; font-size: 12px; }
.w-exact { background: transparent; }
.w-fuzzy { background: #e4d4fc; color: #4c1d95; border-bottom: 2px dotted #8250df; }
.w-unmatched { background: #ffcecb; color: #82071e; border-bottom: 2px solid #cf222e; }
.legend span.sw.w-exact { border: 1px solid var(--line); }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 12.5px; margin: 6px 0; align-items: center; }
.legend span.sw { padding: 0 6px; border-radius: 3px; }
table.small { font-size: 12px; }
table.heat td.cell { text-align: center; min-width: 2.2em; }
table.heat thead th, table.small thead th { position: static; }
table.heat caption { caption-side: top; text-align: left; white-space: nowrap; padding-bottom: 4px; }
table.heat th.ch, table.heat td.ch { font-family: ui-monospace, "DejaVu Sans Mono", monospace; text-align: center; }
.heat-0 { background: #ffffff; }
.heat-1 { background: #fff0ee; } .heat-2 { background: #ffe0dc; } .heat-3 { background: #ffc9c2; }
.heat-4 { background: #ffaea4; } .heat-5 { background: #ff8f82; } .heat-6 { background: #f46c5f; color: #fff; }
.heat-7 { background: #e0493d; color: #fff; } .heat-8 { background: #c2281f; color: #fff; } .heat-9 { background: #98140f; color: #fff; }
.grid2 { display: flex; flex-wrap: wrap; gap: 18px; align-items: flex-start; }
.missing-image { padding: 18px 8px; border: 1px dashed var(--line); color: var(--muted); font-size: 12px; text-align: center; }
.kv { font-size: 12px; color: var(--muted); }
.kv b { color: var(--fg); }
.charts { display: flex; flex-wrap: wrap; gap: 14px; align-items: flex-start; }
.chart-group { margin-bottom: 10px; }
svg.chart { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 6px; background: var(--bg);
  font: 11px system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
svg.chart text { fill: var(--muted); }
svg.chart text.chart-title { fill: var(--fg); font-weight: 600; font-size: 12px; }
svg.chart text.chart-note, svg.chart text.zone-label { font-size: 10.5px; }
svg.chart text.zone-label { fill: var(--bad); }
svg.chart text.value { fill: var(--fg); }
svg.chart .axis, svg.chart .frame { stroke: #8c959f; fill: none; }
svg.chart .grid { stroke: #eaeef2; }
svg.chart .bar { fill: #54aeff; }
svg.chart .bar:hover, svg.chart .cell:hover { fill: var(--accent); }
svg.chart .marker { stroke: var(--fg); stroke-dasharray: 4 3; }
svg.chart text.marker-label { fill: var(--fg); paint-order: stroke; stroke: var(--bg); stroke-width: 3px;
  stroke-linejoin: round; }
svg.chart .diagonal { stroke: #57606a; stroke-dasharray: 5 4; }
svg.chart .worse-zone { fill: #ffebe9; fill-opacity: .55; }
svg.chart .cell { fill: #0969da; }
svg.chart .pt { fill: #8c959f; fill-opacity: .75; stroke: #fff; stroke-width: .5; }
svg.chart .pt.worse { fill: var(--bad); fill-opacity: .95; }
svg.chart .pt.better { fill: var(--good); fill-opacity: .9; }
svg.chart .pt:hover { stroke: var(--fg); stroke-width: 2; }
.paired .pair { grid-template-columns: repeat(auto-fit, minmax(240px, 1fr)); }
.paired .docbody { grid-template-columns: minmax(140px, 260px) 1fr; }
.metrics-table td.missing { color: var(--muted); font-style: italic; }
.delta.versus { color: var(--muted); font-weight: normal; }
.delta.versus.worse { color: #a40e26; } .delta.versus.better { color: var(--good); }
@media (max-width: 900px) { .docbody, .pair, .paired .pair, .paired .docbody { grid-template-columns: 1fr; } }
"""

JS = """
(function () {
  'use strict';
  function numeric(cell) {
    var raw = cell.getAttribute('data-sort');
    if (raw === null || raw === '') return null;
    var n = parseFloat(raw);
    return isNaN(n) ? null : n;
  }
  function textOf(cell) {
    var raw = cell.getAttribute('data-sort');
    return (raw !== null ? raw : cell.textContent).trim().toLowerCase();
  }
  function sortBy(table, th) {
    var col = th.cellIndex;
    var dir = th.getAttribute('aria-sort') === 'ascending' ? -1 : 1;
    var isNum = th.classList.contains('num');
    var tbody = table.tBodies[0];
    var rows = Array.prototype.slice.call(tbody.rows);
    rows.sort(function (a, b) {
      var ca = a.cells[col], cb = b.cells[col];
      if (isNum) {
        var x = numeric(ca), y = numeric(cb);
        if (x === null && y === null) return 0;
        if (x === null) return 1;
        if (y === null) return -1;
        return (x - y) * dir;
      }
      var s = textOf(ca), t = textOf(cb);
      return s < t ? -dir : (s > t ? dir : 0);
    });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', dir === 1 ? 'ascending' : 'descending');
    rows.forEach(function (r) { tbody.appendChild(r); });
  }
  function setColumn(table, index, visible) {
    Array.prototype.forEach.call(table.rows, function (row) {
      var cell = row.cells[index];
      if (cell) cell.classList.toggle('col-hidden', !visible);
    });
  }
  function csvField(value) {
    value = String(value);
    // text that a spreadsheet would evaluate as a formula gets a leading ' (numbers such as -0.5 stay numbers)
    if (/^[=+\\-@\\t\\r]/.test(value) && !isFinite(Number(value))) value = "'" + value;
    return /[",\\n\\r]/.test(value) ? '"' + value.replace(/"/g, '""') + '"' : value;
  }
  function tableCsv(table) {
    var lines = [];
    Array.prototype.forEach.call(table.rows, function (row, r) {
      if (r > 0 && row.hidden) return;  // rows filtered out are not exported
      var fields = [];
      Array.prototype.forEach.call(row.cells, function (cell) {
        if (cell.classList.contains('col-hidden')) return;
        if (r === 0) fields.push(csvField(cell.getAttribute('data-label') || cell.textContent.trim()));
        else {
          var raw = cell.getAttribute('data-csv');
          if (raw === null) raw = cell.getAttribute('data-sort');
          fields.push(csvField(raw !== null ? raw : cell.textContent.trim()));
        }
      });
      lines.push(fields.join(','));
    });
    return lines.join('\\r\\n') + '\\r\\n';
  }
  function download(name, text) {
    var blob = new Blob([text], { type: 'text/csv;charset=utf-8' });
    var link = document.createElement('a');
    link.href = URL.createObjectURL(blob);
    link.download = name;
    document.body.appendChild(link);
    link.click();
    setTimeout(function () { URL.revokeObjectURL(link.href); link.remove(); }, 0);
  }
  function setStatistic(table, stat) {
    Array.prototype.forEach.call(table.querySelectorAll('td.metric'), function (td) {
      var value = td.getAttribute('data-' + stat);
      var shown = td.getAttribute('data-' + stat + '-text');
      td.setAttribute('data-sort', value === null ? '' : value);
      td.querySelector('.v').textContent = shown === null ? '-' : shown;
    });
    Array.prototype.forEach.call(table.querySelectorAll('th .stat'), function (s) { s.textContent = stat; });
    Array.prototype.forEach.call(table.querySelectorAll('th.metric'), function (th) {
      th.setAttribute('data-label', th.getAttribute('data-metric') + ' (' + stat + ')');
    });
  }
  function openDocument(id) {
    var target = document.getElementById(id);
    if (target && target.tagName === 'DETAILS') { target.open = true; target.scrollIntoView({ block: 'start' }); }
  }
  document.addEventListener('click', function (event) {
    var el = event.target;
    var sortButton = el.closest && el.closest('th button.sort');
    if (sortButton) { var th = sortButton.closest('th'); sortBy(th.closest('table'), th); return; }
    var link = el.closest && el.closest('a.doc-link');
    if (link) { openDocument(link.getAttribute('href').slice(1)); return; }
    if (el.classList && el.classList.contains('thumb')) {
      el.classList.toggle('zoom');
      var body = el.closest('.docbody');
      if (body) body.classList.toggle('zoomed', el.classList.contains('zoom'));
      return;
    }
    var action = el.getAttribute && el.getAttribute('data-action');
    if (!action) return;
    var table = document.getElementById(el.getAttribute('data-table') || '');
    if (action === 'export' && table) download(el.getAttribute('data-filename') || 'table.csv', tableCsv(table));
    if (action === 'expand' || action === 'collapse') {
      Array.prototype.forEach.call(document.querySelectorAll('details.doc'), function (d) { d.open = action === 'expand'; });
    }
  });
  // a row stays visible when it contains every filter text of its table and, for each row-select with a value,
  // that value is the row's data-<data-attr> attribute or one of its words
  function applyFilters(table) {
    var needles = [], selects = [];
    Array.prototype.forEach.call(document.querySelectorAll('[data-table="' + table.id + '"]'), function (el) {
      if (el.classList.contains('row-filter') && el.value.trim() !== '') needles.push(el.value.trim().toLowerCase());
      if (el.classList.contains('row-select') && el.value !== '') selects.push(el);
    });
    var rows = table.tBodies[0].rows, shown = 0;
    Array.prototype.forEach.call(rows, function (row) {
      var text = needles.length ? row.textContent.toLowerCase() : '';
      var visible = needles.every(function (n) { return text.indexOf(n) !== -1; }) && selects.every(function (s) {
        var value = row.getAttribute('data-' + s.getAttribute('data-attr')) || '';
        return value === s.value || value.split(' ').indexOf(s.value) !== -1;
      });
      row.hidden = !visible;
      if (visible) shown++;
    });
    Array.prototype.forEach.call(document.querySelectorAll('.row-count[data-table="' + table.id + '"]'), function (c) {
      c.textContent = shown === rows.length ? '' : shown + ' of ' + rows.length + ' shown';
    });
  }
  document.addEventListener('change', function (event) {
    var el = event.target;
    var table = document.getElementById(el.getAttribute('data-table') || '');
    if (!table) return;
    if (el.classList.contains('col-toggle')) setColumn(table, parseInt(el.getAttribute('data-col'), 10), el.checked);
    if (el.classList.contains('stat-select')) setStatistic(table, el.value);
    if (el.classList.contains('row-select')) applyFilters(table);
  });
  document.addEventListener('input', function (event) {
    var el = event.target;
    if (!el.classList.contains('row-filter')) return;
    var table = document.getElementById(el.getAttribute('data-table') || '');
    if (table) applyFilters(table);
  });
  // each page image is embedded once (in #images) and shown wherever a document refers to it
  Array.prototype.forEach.call(document.querySelectorAll('img[data-image]'), function (img) {
    var source = document.getElementById(img.getAttribute('data-image'));
    if (source) img.src = source.getAttribute('src');
  });
  if (location.hash) openDocument(location.hash.slice(1));
})();
"""
