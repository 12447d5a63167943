(function () {
  'use strict';

  var MAX_BODY = 10 * 1024 * 1024;
  var SHOWN_WORDS = 20000;
  var $ = function (id) { return document.getElementById(id); };

  // ------------------------------------------------------------------------------------------------ helpers

  // control characters and bidi controls are shown as marks, as in the HTML report (reporting/safe_text.py)
  var BIDI = { '\u202a': 'LRE', '\u202b': 'RLE', '\u202c': 'PDF', '\u202d': 'LRO', '\u202e': 'RLO',
               '\u2066': 'LRI', '\u2067': 'RLI', '\u2068': 'FSI', '\u2069': 'PDI' };
  function visible(text) {
    return String(text).replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, function (ch) {
      var code = ch.charCodeAt(0);
      if (BIDI[ch]) return '\u27e8' + BIDI[ch] + '\u27e9';
      if (code === 0x0a) return '\u21b5';
      if (code === 0x09) return '\u2192';
      if (code === 0x7f) return '\u2421';
      if (code < 0x20) return String.fromCharCode(0x2400 + code);
      return '\u27e8U+' + code.toString(16).toUpperCase().padStart(4, '0') + '\u27e9';
    });
  }

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      if (key === 'text') node.textContent = attrs[key];
      else if (key === 'className') node.className = attrs[key];
      else node.setAttribute(key, attrs[key]);
    });
    (children || []).forEach(function (child) { if (child) node.appendChild(child); });
    return node;
  }

  function pct(x) { return (x * 100).toFixed(2) + '%'; }

  function settings() {
    return { threshold: parseInt($('threshold').value, 10), case_sensitive: $('case-sensitive').checked,
             ignore_punctuation: $('ignore-punctuation').checked };
  }

  function readAnswer(response) {
    return response.text().then(function (text) {
      var data;
      try { data = JSON.parse(text); } catch (e) {
        throw new Error('the server answered ' + response.status + ' without JSON');
      }
      if (!response.ok) throw new Error(data.error || ('the server answered ' + response.status));
      return data;
    });
  }

  function failed(error) {
    return error && error.message ? error.message : String(error);
  }

  // 503: the server computes a few requests at a time and is busy; wait as its Retry-After asks, then try again.
  function send(url, options, triesLeft) {
    return fetch(url, options).then(function (response) {
      if (response.status !== 503 || triesLeft <= 0) return response;
      var wait = Math.min(parseFloat(response.headers.get('Retry-After')) || 1, 10);
      return new Promise(function (resolve) { setTimeout(resolve, wait * 1000); })
        .then(function () { return send(url, options, triesLeft - 1); });
    });
  }

  function postJson(url, data) {
    return send(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(data) },
                5).then(readAnswer);
  }

  function showMessage(node, text, isError) {
    node.hidden = !text;
    node.textContent = text ? visible(text) : '';
    node.classList.toggle('error', !!isError);
  }

  // ------------------------------------------------------------------------------------------------ tabs

  var tabs = [];
  function selectTab(tab, focus) {
    tabs.forEach(function (other) {
      var selected = other === tab;
      other.setAttribute('aria-selected', selected ? 'true' : 'false');
      other.tabIndex = selected ? 0 : -1;
      $(other.getAttribute('aria-controls')).hidden = !selected;
    });
    if (focus) tab.focus();
  }

  function setUpTabs() {
    tabs = Array.prototype.slice.call(document.querySelectorAll('[role=tab]')).filter(function (t) { return !t.hidden; });
    tabs.forEach(function (tab, i) {
      tab.addEventListener('click', function () { selectTab(tab, false); });
      tab.addEventListener('keydown', function (event) {
        var next = null;
        if (event.key === 'ArrowRight') next = tabs[(i + 1) % tabs.length];
        else if (event.key === 'ArrowLeft') next = tabs[(i - 1 + tabs.length) % tabs.length];
        else if (event.key === 'Home') next = tabs[0];
        else if (event.key === 'End') next = tabs[tabs.length - 1];
        if (next) { event.preventDefault(); selectTab(next, true); }
      });
    });
  }

  // ------------------------------------------------------------------------------------------------ results

  var SIDE_TITLES = { ground_truth: 'not in the OCR output', ocr_output: 'not in the ground truth' };

  function renderWords(tokens, side, total) {
    var box = el('div', { className: 'words', 'data-side': side, tabindex: '0', role: 'region',
                          'aria-label': side === 'ground_truth' ? 'Ground truth, coloured' : 'OCR output, coloured' });
    var line = 0;
    var shown = tokens.slice(0, SHOWN_WORDS);
    shown.forEach(function (token, i) {
      if (token.line > line) {
        for (var k = 0; k < Math.min(token.line - line, 2); k++) box.appendChild(el('br'));
        line = token.line;
      } else if (i > 0) {
        box.appendChild(document.createTextNode(' '));
      }
      var span = el('span', { className: 'w ' + token['class'], text: visible(token.text),
                              'data-index': String(token.index) });
      if (token['class'] === 'fuzzy') {
        span.title = 'fuzzy match with \u201c' + visible(token.partner) + '\u201d, edit distance ' + token.distance +
          ', CRR ' + pct(token.crr);
      } else if (token['class'] === 'unmatched') {
        span.title = 'no match: ' + SIDE_TITLES[side];
      } else if (token['class'] === 'ignored') {
        span.title = 'punctuation only: not counted';
      }
      box.appendChild(span);
    });
    if (!tokens.length) box.appendChild(el('span', { className: 'note', text: '(empty)' }));
    if (tokens.length < total) {
      box.appendChild(el('p', { className: 'note', text: 'The first ' + tokens.length + ' of ' + total +
                                ' words are shown.' }));
    }
    return box;
  }

  var METRICS = [
    ['precision', 'Precision', function (r) { return r.exact_matches + ' / ' + r.ocr_words + ' OCR words exact'; }],
    ['recall', 'Recall', function (r) { return r.exact_matches + ' / ' + r.ground_truth_words + ' ground-truth words exact'; }],
    ['f1', 'F1 Score', function () { return 'harmonic mean of precision and recall'; }],
    ['crr', 'Avg CRR', function (r) { return 'over ' + (r.exact_matches + r.fuzzy_matches) + ' matched pairs (exact and fuzzy)'; }]
  ];

  function renderResult(container, result, titles) {
    container.textContent = '';
    var cards = el('div', { className: 'metrics' });
    METRICS.forEach(function (m) {
      cards.appendChild(el('div', { className: 'metric', 'data-metric': m[0] }, [
        el('div', { className: 'label', text: m[1] }),
        el('div', { className: 'value', text: pct(result[m[0]]), 'data-value': String(result[m[0]]) }),
        el('div', { className: 'formula', text: m[2](result) })
      ]));
    });
    container.appendChild(cards);
    container.appendChild(el('p', { className: 'counts', text:
      result.exact_matches + ' exact, ' + result.fuzzy_matches + ' fuzzy, ' + result.unmatched_ground_truth +
      ' ground-truth only, ' + result.unmatched_ocr + ' OCR only \u00b7 ' + result.ground_truth_words +
      ' ground-truth words, ' + result.ocr_words + ' OCR words' }));
    if (result.message) container.appendChild(el('p', { className: 'message', text: result.message }));
    var texts = el('div', { className: 'texts' });
    [['ground_truth', titles[0], result.ground_truth_words], ['ocr_output', titles[1], result.ocr_words]].forEach(function (s) {
      var tokens = result.tokens[s[0]];
      var total = result.tokens_truncated ? Math.max(tokens.length + 1, s[2]) : tokens.length;
      texts.appendChild(el('div', {}, [el('h3', { text: s[1] }), renderWords(tokens, s[0], total)]));
    });
    container.appendChild(texts);
  }

  // ------------------------------------------------------------------------------------------------ manual

  var manualShown = false;
  function analyzeManual() {
    var gt = $('ground-truth').value, ocr = $('ocr-output').value;
    var result = $('manual-result');
    if (!gt.trim() && !ocr.trim()) {
      result.textContent = '';
      manualShown = false;
      showMessage($('manual-message'), 'Enter a ground truth and an OCR output, then press Analyze.');
      return;
    }
    var body = settings();
    body.ground_truth = gt;
    body.ocr_output = ocr;
    if (new Blob([JSON.stringify(body)]).size > MAX_BODY) {
      showMessage($('manual-message'), 'The two texts are over the 10 MB limit together; compare a shorter part.', true);
      return;
    }
    $('analyze').disabled = true;
    postJson('/api/analyze', body).then(function (data) {
      showMessage($('manual-message'), '');
      renderResult(result, data, ['Ground truth', 'OCR output']);
      manualShown = true;
    }).catch(function (error) {
      showMessage($('manual-message'), failed(error), true);
    }).finally(function () { $('analyze').disabled = false; });
  }

  // ------------------------------------------------------------------------------------------------ batch

  var files = [];
  var batch = { models: [], sortKey: null, sortDir: 'ascending', hidden: {}, expanded: {} };
  var COLUMNS = [
    { key: 'model', label: 'Model', kind: 'text' },
    { key: 'precision', label: 'Precision', kind: 'pct' },
    { key: 'recall', label: 'Recall', kind: 'pct' },
    { key: 'f1', label: 'F1 Score', kind: 'pct' },
    { key: 'crr', label: 'Avg CRR', kind: 'pct' },
    { key: 'exact_matches', label: 'Exact', kind: 'int' },
    { key: 'fuzzy_matches', label: 'Fuzzy', kind: 'int' },
    { key: 'ocr_words', label: 'OCR words', kind: 'int' }
  ];
  var NAME_OK = /^(gt\.txt|.+_out\.txt)$/;

  function addFiles(list) {
    Array.prototype.forEach.call(list, function (file) {
      files = files.filter(function (f) { return f.name !== file.name; });
      files.push(file);
    });
    renderFiles();
  }

  function renderFiles() {
    var ul = $('file-list');
    ul.textContent = '';
    files.forEach(function (file) {
      var ok = NAME_OK.test(file.name);
      var remove = el('button', { type: 'button', 'aria-label': 'Remove ' + file.name, title: 'Remove', text: '\u00d7' });
      remove.addEventListener('click', function () {
        files = files.filter(function (f) { return f !== file; });
        renderFiles();
        $('browse').focus();
      });
      ul.appendChild(el('li', { className: ok ? '' : 'bad', title: ok ? '' : 'not gt.txt or <model>_out.txt' }, [
        el('span', { text: visible(file.name) + ' (' + (file.size < 1024 ? file.size + ' B' : (file.size / 1024).toFixed(1) + ' KB') + ')' }),
        remove
      ]));
    });
    $('analyze-all').disabled = !files.length;
    $('clear-files').disabled = !files.length;
  }

  function analyzeBatch() {
    if (!files.length) {
      showMessage($('batch-message'), 'Add gt.txt and at least one <model>_out.txt file first.');
      return;
    }
    var size = files.reduce(function (sum, f) { return sum + f.size; }, 0);
    if (size > MAX_BODY) {
      showMessage($('batch-message'), 'The files add up to ' + (size / 1048576).toFixed(1) +
                  ' MB, over the 10 MB limit; upload fewer or smaller files.', true);
      return;
    }
    var form = new FormData();
    var s = settings();
    Object.keys(s).forEach(function (key) { form.append(key, String(s[key])); });
    files.forEach(function (file) { form.append('files', file, file.name); });
    $('analyze-all').disabled = true;
    showMessage($('batch-message'), 'Analyzing ' + files.length + ' files\u2026');
    send('/api/batch', { method: 'POST', body: form }, 5).then(readAnswer).then(function (data) {
      showMessage($('batch-message'), data.models.length ? '' : 'No model output could be scored.');
      var errors = $('batch-errors');
      errors.textContent = '';
      data.errors.forEach(function (e) { errors.appendChild(el('li', { text: visible(e.error) })); });
      errors.hidden = !data.errors.length;
      batch.models = data.models;
      batch.expanded = {};
      $('batch-result').hidden = !data.models.length;
      renderTable();
    }).catch(function (error) {
      showMessage($('batch-message'), failed(error), true);
    }).finally(function () { $('analyze-all').disabled = !files.length; });
  }

  function sortedModels() {
    var models = batch.models.slice();
    var key = batch.sortKey;
    if (!key) return models;
    var sign = batch.sortDir === 'ascending' ? 1 : -1;
    models.sort(function (a, b) {
      var x = a[key], y = b[key];
      var c = typeof x === 'string' ? x.localeCompare(y) : x - y;
      return c * sign || a.model.localeCompare(b.model);
    });
    return models;
  }

  function renderHeader() {
    var row = document.querySelector('#batch-table thead tr');
    row.textContent = '';
    row.appendChild(el('th', { scope: 'col' }, [el('span', { className: 'visually-hidden', text: 'Details' })]));
    COLUMNS.forEach(function (col) {
      var th = el('th', { scope: 'col', 'data-col': col.key, className: col.kind === 'text' ? '' : 'num' });
      var button = el('button', { type: 'button', className: 'sort', text: col.label });
      button.addEventListener('click', function () {
        if (batch.sortKey === col.key) batch.sortDir = batch.sortDir === 'ascending' ? 'descending' : 'ascending';
        else { batch.sortKey = col.key; batch.sortDir = 'ascending'; }
        renderTable();
        document.querySelector('#batch-table th[data-col="' + col.key + '"] button').focus();
      });
      th.appendChild(button);
      if (batch.sortKey === col.key) th.setAttribute('aria-sort', batch.sortDir);
      if (batch.hidden[col.key]) th.classList.add('col-hidden');
      row.appendChild(th);
    });
  }

  function renderToggles() {
    var box = $('column-toggles');
    Array.prototype.slice.call(box.querySelectorAll('label')).forEach(function (l) { l.remove(); });
    COLUMNS.slice(1).forEach(function (col) {
      var input = el('input', { type: 'checkbox', className: 'col-toggle', 'data-col': col.key });
      input.checked = !batch.hidden[col.key];
      input.addEventListener('change', function () {
        batch.hidden[col.key] = !input.checked;
        renderTable();
      });
      box.appendChild(el('label', {}, [input, document.createTextNode(' ' + col.label)]));
    });
  }

  function renderTable() {
    renderHeader();
    var body = document.querySelector('#batch-table tbody');
    body.textContent = '';
    sortedModels().forEach(function (model) {
      var open = !!batch.expanded[model.model];
      var expand = el('button', { type: 'button', className: 'expand', 'aria-expanded': open ? 'true' : 'false',
                                  'aria-label': (open ? 'Hide' : 'Show') + ' the coloured texts of ' + model.model,
                                  text: open ? '\u2212' : '+' });
      expand.addEventListener('click', function () {
        batch.expanded[model.model] = !open;
        renderTable();
        var again = document.querySelector('#batch-table tr[data-model="' + CSS.escape(model.model) + '"] button.expand');
        if (again) again.focus();
      });
      var tr = el('tr', { 'data-model': model.model }, [el('td', {}, [expand])]);
      COLUMNS.forEach(function (col) {
        var value = model[col.key];
        var td = el('td', { 'data-col': col.key, className: col.kind === 'text' ? 'name' : 'num',
                            text: col.kind === 'pct' ? pct(value) : visible(value) });
        if (batch.hidden[col.key]) td.classList.add('col-hidden');
        tr.appendChild(td);
      });
      body.appendChild(tr);
      if (open) {
        var inner = el('div', { className: 'detail-inner' });  // stays in view when the table scrolls sideways
        renderResult(inner, model, ['Ground truth (gt.txt)', 'OCR output (' + model.file + ')']);
        var cell = el('td', { colspan: String(COLUMNS.length + 1) }, [inner]);
        body.appendChild(el('tr', { className: 'details', 'data-details-for': model.model }, [cell]));
      }
    });
  }

  function csvField(value) {
    var text = String(value);
    if (/^[=+\-@\t\r]/.test(text)) text = "'" + text;  // a spreadsheet would evaluate it
    return /[",\r\n]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
  }

  function exportCsv() {
    var columns = COLUMNS.filter(function (col) { return !batch.hidden[col.key]; });
    var lines = [columns.map(function (col) { return csvField(col.label); }).join(',')];
    sortedModels().forEach(function (model) {
      lines.push(columns.map(function (col) {
        var value = model[col.key];
        return csvField(col.kind === 'pct' ? Number(value.toFixed(6)) : value);
      }).join(','));
    });
    var blob = new Blob([lines.join('\r\n') + '\r\n'], { type: 'text/csv;charset=utf-8' });
    var link = el('a', { href: URL.createObjectURL(blob), download: 'ocr-metrics-comparison.csv' });
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(function () { URL.revokeObjectURL(link.href); }, 1000);
  }

  function setUpBatch() {
    var zone = $('drop-zone'), input = $('file-input');
    $('browse').addEventListener('click', function () { input.click(); });
    input.addEventListener('change', function () { addFiles(input.files); input.value = ''; });
    ['dragenter', 'dragover'].forEach(function (name) {
      zone.addEventListener(name, function (event) { event.preventDefault(); zone.classList.add('over'); });
    });
    ['dragleave', 'drop'].forEach(function (name) {
      zone.addEventListener(name, function (event) { event.preventDefault(); zone.classList.remove('over'); });
    });
    zone.addEventListener('drop', function (event) {
      if (event.dataTransfer && event.dataTransfer.files) addFiles(event.dataTransfer.files);
    });
    $('analyze-all').addEventListener('click', analyzeBatch);
    $('clear-files').addEventListener('click', function () { files = []; renderFiles(); $('browse').focus(); });
    $('export-csv').addEventListener('click', exportCsv);
    renderToggles();
  }

  // ------------------------------------------------------------------------------------------------ run

  var runShown = null;
  function showRunDocument(index) {
    runShown = index;
    fetch('/api/run/document?index=' + index).then(readAnswer).then(function (doc) {
      $('run-detail').hidden = false;
      $('run-detail-title').textContent = visible(doc.id + ' \u00b7 ' + doc.dataset + ' \u00b7 ' + doc.engine + ' \u00b7 ' + doc.outcome);
      var note = doc.message || '';
      if (!doc.has_texts) {
        note = (note ? note + ' \u2014 ' : '') + 'The run file holds no ' +
          (typeof doc.reference === 'string' ? 'OCR output' : 'reference text') + ' for this document, so there is nothing to colour.';
      }
      showMessage($('run-detail-message'), note, doc.outcome === 'failed' || doc.outcome === 'error');
      var picture = $('run-detail-image');
      picture.textContent = '';
      if (doc.image_url) {
        var img = el('img', {src: doc.image_url, alt: 'page image of ' + visible(doc.id)});
        img.addEventListener('error', function () {  // the server refused it (not an image, unreadable)
          picture.textContent = '';
          picture.appendChild(el('p', {className: 'note', text: 'The page image could not be shown.'}));
        });
        picture.appendChild(img);
      }
      else if (doc.image_note) picture.appendChild(el('p', {className: 'note', text: visible(doc.image_note)}));
      var result = $('run-detail-result');
      result.textContent = '';
      if (!doc.has_texts) return;
      var body = settings();
      body.ground_truth = doc.reference;
      body.ocr_output = doc.hypothesis;
      return postJson('/api/analyze', body).then(function (data) {
        renderResult(result, data, ['Reference', 'OCR output (' + doc.engine + ')']);
      });
    }).catch(function (error) {
      $('run-detail').hidden = false;
      showMessage($('run-detail-message'), failed(error), true);
    });
  }

  function setUpRun() {
    var tab = $('tab-run');
    tab.hidden = false;
    $('run-label').textContent = document.body.getAttribute('data-run-label');
    fetch('/api/run').then(readAnswer).then(function (data) {
      var body = document.querySelector('#run-table tbody');
      data.documents.forEach(function (doc) {
        var show = el('button', { type: 'button', text: 'Show', 'aria-label': 'Show ' + doc.id + ' (' + doc.engine + ')' });
        show.addEventListener('click', function () { showRunDocument(doc.index); });
        var metric = function (name) { return name in doc.metrics ? pct(doc.metrics[name]) : '\u2013'; };
        body.appendChild(el('tr', { 'data-index': String(doc.index) }, [
          el('td', { className: 'name', text: visible(doc.id) }), el('td', { text: visible(doc.dataset) }),
          el('td', { text: visible(doc.engine) }), el('td', { className: 'outcome-' + doc.outcome, text: doc.outcome }),
          el('td', { className: 'num', text: metric('cer') }), el('td', { className: 'num', text: metric('wer') }),
          el('td', {}, [show])
        ]));
      });
      $('run-count').textContent = data.documents.length + ' documents';
      if (data.normalization && data.normalization.name) {
        $('run-normalization').textContent = visible('The run\u2019s own metrics (CER, WER) were computed after its ' +
          'normalization profile \u201c' + data.normalization.name + '\u201d; the colouring compares the texts as stored.');
      }
    }).catch(function (error) {
      showMessage($('run-detail-message'), failed(error), true);
      $('run-detail').hidden = false;
    });
    $('run-filter').addEventListener('input', function () {
      var needle = this.value.toLowerCase();
      Array.prototype.forEach.call(document.querySelectorAll('#run-table tbody tr'), function (tr) {
        tr.hidden = needle && tr.textContent.toLowerCase().indexOf(needle) < 0;
      });
    });
  }

  // ------------------------------------------------------------------------------------------------ start

  function rerun() {  // a changed setting re-analyzes what is on screen
    if (!$('panel-manual').hidden && manualShown) analyzeManual();
    else if (!$('panel-run').hidden && runShown !== null) showRunDocument(runShown);
    else if (!$('panel-batch').hidden && batch.models.length) analyzeBatch();
  }

  $('analyze').addEventListener('click', analyzeManual);
  ['ground-truth', 'ocr-output'].forEach(function (id) {
    $(id).addEventListener('keydown', function (event) {
      if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) { event.preventDefault(); analyzeManual(); }
    });
  });
  ['threshold', 'case-sensitive', 'ignore-punctuation'].forEach(function (id) { $(id).addEventListener('change', rerun); });
  setUpBatch();
  if (document.body.getAttribute('data-run-mode') === 'true') setUpRun();
  setUpTabs();
  if (document.body.getAttribute('data-run-mode') === 'true') selectTab($('tab-run'), false);
}());
