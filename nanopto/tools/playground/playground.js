// The nanopto playground page: editors, the run, and the views of its result.
// Every request carries the server's token (from the page's meta tag) in a header.
const token = document.querySelector('meta[name="nanopto-token"]').content;
const $ = (id) => document.getElementById(id);
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c]));

async function api(path, body) {
  const init = {headers: {'X-Nanopto-Token': token}};
  if (body !== undefined) {
    init.method = 'POST';
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  return response.json();
}

// ---- editors: CodeMirror (editor.js, bundled in the wheel), an error marked at its line ---------
const {createEditor} = await import(`/static/editor.js?token=${encodeURIComponent(token)}`);
let loading = false;  // true while a menu or a permalink fills an editor (the menu keeps its name)
const editors = {
  program: createEditor($('program-editor'), {onRun: () => run(), onChange: () => edited('program')}),
  rules: createEditor($('rules-editor'), {
    placeholder: '# a rules file: build Rulesets, end with PASSES = [passes.rewrite(...)]',
    onRun: () => run(), onChange: () => edited('rules'),
  }),
};
window.nanoptoEditors = editors;  // for tests and the browser console
function edited(name) {
  if (loading) return;
  // The text is no longer the example the menu names: the menu says so.
  if (name === 'program') $('example').value = '';
  else $('rules-example').value = '';
}
function setText(name, text) {
  loading = true;
  try { editors[name].text = text; } finally { loading = false; }
}
function showError(error) {
  for (const name of ['program', 'rules']) { $(`${name}-error`).hidden = true; editors[name].markError(null); }
  const banner = $('run-error');
  banner.hidden = !error;
  $('results').classList.toggle('stale', Boolean(error && last));
  $('stale').hidden = !(error && last);
  if (!error) return;
  const where = error.where === 'rules' ? 'rules' : (error.where === 'program' || error.line ? 'program' : 'run');
  const at = error.line ? `line ${error.line}${error.col ? ', column ' + error.col : ''}: ` : '';
  const file = where === 'rules' ? 'rules.py' : (where === 'program' ? 'program.py' : error.where);
  banner.textContent = `Error in ${file}: ${at}${error.message}`;
  banner.dataset.where = where;
  banner.dataset.line = error.line || '';
  if (where !== 'run') {
    const box = $(`${where}-error`);
    box.textContent = at + error.message;
    box.hidden = false;
    box.dataset.line = error.line || '';
    if (error.line) editors[where].markError(error.line, error.col, error.message);
  }
}
for (const name of ['program', 'rules']) {
  $(`${name}-error`).addEventListener('click', () => { const l = Number($(`${name}-error`).dataset.line); if (l) editors[name].selectLine(l); });
}
$('run-error').addEventListener('click', () => {
  const banner = $('run-error');
  if (banner.dataset.line && banner.dataset.where !== 'run') editors[banner.dataset.where].selectLine(Number(banner.dataset.line));
});

// ---- a permalink: program, rules and pipeline in the fragment (never sent to any server) -------
const b64 = {
  encode: (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''),
  decode: (text) => Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0)),
};
async function squeeze(bytes, how) {
  const stream = new Blob([bytes]).stream().pipeThrough(how === 'in' ? new CompressionStream('deflate-raw') : new DecompressionStream('deflate-raw'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
async function permalinkFragment() {
  const state = JSON.stringify({program: editors.program.text, rules: editors.rules.text, pipeline: $('pipeline').value});
  const bytes = new TextEncoder().encode(state);
  if (typeof CompressionStream === 'function') return `#z=${b64.encode(await squeeze(bytes, 'in'))}`;
  return `#p=${b64.encode(bytes)}`;
}
async function readPermalink() {
  const found = location.hash.match(/^#([zp])=([A-Za-z0-9_-]*)$/);
  if (!found) return false;
  let bytes = b64.decode(found[2]);
  if (found[1] === 'z') bytes = await squeeze(bytes, 'out');
  const state = JSON.parse(new TextDecoder().decode(bytes));
  setText('program', String(state.program || ''));
  setText('rules', String(state.rules || ''));
  $('pipeline').value = String(state.pipeline || '');
  return true;
}
$('permalink').addEventListener('click', async () => {
  const fragment = await permalinkFragment();
  history.replaceState(null, '', fragment);  // the address bar holds it; the token stays in the query
  const url = `${location.origin}/${fragment}`;  // to share: no token in it
  $('share').hidden = false;
  $('share-url').value = url;
  $('share-url').select();
  try { await navigator.clipboard.writeText(url); $('status').textContent = 'permalink copied'; } catch { $('status').textContent = 'permalink ready to copy'; }
});

// ---- tabs ---------------------------------------------------------------------------------
for (const button of document.querySelectorAll('#tabs button')) {
  button.addEventListener('click', () => {
    for (const b of document.querySelectorAll('#tabs button')) b.classList.toggle('on', b === button);
    for (const t of document.querySelectorAll('.tab')) t.classList.toggle('on', t.id === button.dataset.tab);
    if (button.dataset.tab === 'egraph') {
      $('tabs').scrollIntoView({block: 'start'});  // the picture is drawn where the user looks
      drawEgraph();
    }
    if (button.dataset.tab === 'sites') fillSites();
  });
}

// The sites table goes into the page when its tab is opened: for a large program it is
// megabytes of HTML (a table of 10,000 sites took the browser seconds) the run need not wait for.
// It is built here from the answer's site records, the ones `nanopto inline --json` writes (the
// static page's table, html_page.py's `_sites_table`, is the same table made in Python).
let sitesPending = null;
function fillSites() {
  if (sitesPending === null) return;
  $('sites').innerHTML = sitesTable(sitesPending.records, sitesPending.colours);
  sitesPending = null;
}
function sitesTable(records, colours) {
  if (!records.length) return '<p class="muted">No Inline call sites: the program is unchanged.</p>';
  const rows = records.map((site) => {
    const where = site.line == null ? 'line ?' : `<a href="#b-L${site.line}">line ${site.line}</a>`;
    const bindings = site.bindings.map((b) => {
      const how = b.bind_local
        ? `bound to fresh local <code>${esc(b.local || '?')}</code> = <code>${esc(b.actual)}</code>`
        : `replaced by <code>${esc(b.actual)}</code>`;
      return `<tr><td><code>${esc(b.param)}</code></td><td>${esc(b.row_text)}</td><td>${how}</td><td class="muted">${esc(b.reason)}</td></tr>`;
    }).concat(site.bound_returns.map((r) =>
      `<tr><td>returned value ${r.index}</td><td></td><td>bound to a fresh local at the call</td><td class="muted">${esc(r.reason)}</td></tr>`));
    const table = bindings.length
      ? `<table><tr><th>parameter</th><th>rebinding-table row</th><th>binding</th><th>why</th></tr>${bindings.join('')}</table>`
      : '<span class="muted">no parameters</span>';
    return `<tr><td class="site c${site.number % colours}"><b>${site.number}</b></td><td>${esc(site.caller)}, ${where}</td>` +
      `<td><code>${esc(site.statement)}</code></td><td><code>${esc(site.helper)}</code></td><td>${esc(site.form_text)}</td><td>${table}</td></tr>`;
  });
  return '<table><tr><th>site</th><th>caller</th><th>statement</th><th>helper</th><th>form</th><th>parameters</th></tr>' + rows.join('') + '</table>';
}

// ---- examples -------------------------------------------------------------------------------
async function loadExamples() {
  const listing = await api('/api/examples');
  $('pipeline').placeholder = `default: ${listing.default_pipeline}, then the rules file's passes`;
  for (const e of listing.programs) $('example').insertAdjacentHTML('beforeend', `<option value="${esc(e.name)}" title="${esc(e.summary)}">${esc(e.name)}</option>`);
  for (const e of listing.rules) $('rules-example').insertAdjacentHTML('beforeend', `<option value="rules/${esc(e.name)}" title="${esc(e.summary)}">${esc(e.name)}</option>`);
}
$('example').addEventListener('change', async () => {
  if (!$('example').value) return;
  const got = await api(`/api/example?name=${encodeURIComponent($('example').value)}`);
  if (got.source !== undefined) { setText('program', got.source); showError(null); run(); }
});
$('rules-example').addEventListener('change', async () => {
  if (!$('rules-example').value) { setText('rules', ''); showError(null); return; }
  const got = await api(`/api/example?name=${encodeURIComponent($('rules-example').value)}`);
  if (got.source !== undefined) { setText('rules', got.source); showError(null); }
});

// ---- a run ------------------------------------------------------------------------------------
let last = null;
async function run() {
  $('run').disabled = true;
  $('status').textContent = 'running…';
  const started = performance.now();
  try {
    const got = await api('/api/run', {program: editors.program.text, rules: editors.rules.text, pipeline: $('pipeline').value});
    if (!got.ok) {
      showError(got.error);
      $('status').textContent = 'error';
      document.body.dataset.state = 'error';
      return;
    }
    last = got;
    showError(null);
    render(got);
    $('status').textContent = `${got.pipeline.join(' → ')} · ${(got.seconds * 1000).toFixed(0)} ms in the passes, ${(performance.now() - started).toFixed(0)} ms in all`;
    document.body.dataset.state = 'done';
    document.body.dataset.runs = String(Number(document.body.dataset.runs || 0) + 1);
  } catch (err) {
    showError({where: 'run', message: String(err)});
    $('status').textContent = 'error';
    document.body.dataset.state = 'error';
  } finally {
    $('run').disabled = false;
  }
}
$('run').addEventListener('click', run);

function render(got) {
  if (!$('np-view-css')) document.head.insertAdjacentHTML('beforeend', `<style id="np-view-css">${got.html.css}</style>`);
  const warnings = got.passes.filter((p) => p.never_fired.length)
    .map((p) => `<div class="warn">pass <b>${esc(p.name)}</b>: ${p.never_fired.map((r) => `<code>${esc(r)}</code>`).join(', ')} never fired</div>`).join('');
  $('result').innerHTML = `<p class="muted">${esc(got.html.summary)}</p>${warnings}${got.html.chips}${got.html.panes}`;
  linkLines($('result'));
  sitesPending = {records: got.sites.slice(...got.shown_sites), colours: got.site_colours};
  $('sites').replaceChildren();
  if (document.querySelector('#sites.on')) fillSites();
  $('rules-tab').innerHTML = warnings + got.passes.map(passTable).join('') +
    `<h4>inline-functions: rule trace and phase times</h4>${got.html.inline_rules}`;
  const stage = $('eg-stage');
  const groups = [];  // one menu group per pass, the user's rewrite passes included
  got.egraphs.forEach((s, i) => {
    if (!groups.length || groups[groups.length - 1].name !== s.pass) groups.push({name: s.pass, options: []});
    groups[groups.length - 1].options.push(`<option value="${i}"${i === got.egraphs.length - 1 ? ' selected' : ''}>${esc(s.title)}</option>`);
  });
  stage.innerHTML = groups.map((g) => `<optgroup label="${esc(g.name)}">${g.options.join('')}</optgroup>`).join('');
  const ops = new Set(got.egraphs.flatMap((s) => s.ops));
  $('eg-legend').querySelector('div').innerHTML = '<table>' + [...ops].sort().map((op) => {
    const [group, doc] = got.legend[op] || ['other', ''];
    return `<tr><td><code>${esc(op)}</code></td><td>${esc(group)}</td><td>${esc(doc)}</td></tr>`;
  }).join('') + '</table>';
  $('eg-status').textContent = got.egraphs.length ? '' : 'nothing was saturated (no Inline call sites, no rewrite pass)';
  egraphDrawn = null;
  loadViewer();  // fetched now, so the tab draws at once when opened
  if (document.querySelector('#egraph.on')) drawEgraph();
}

function passTable(p) {
  const tag = p.user ? '<span class="tag user">your pass</span>' : '<span class="tag">built-in</span>';
  const changed = p.changed ? 'changed the program' : 'no change';
  if (!p.rules.length) return `<div class="pass"><h4>${esc(p.name)}${tag}</h4><span class="muted">${changed}; no rules fired or no rules to show</span></div>`;
  const rows = p.rules.map((r) => `<tr title="${esc(r.shape || '')}"><td><code>${esc(r.rule)}</code></td><td class="num${r.matches ? '' : ' zero'}">${r.matches}</td></tr>`).join('');
  return `<div class="pass"><h4>${esc(p.name)}${tag}</h4><span class="muted">${changed}</span><table><tr><th>rule</th><th>matches</th></tr>${rows}</table></div>`;
}

function linkLines(root) {  // hover an output line to light up the input line it came from
  for (const line of root.querySelectorAll('.line[data-from]')) {
    const origin = root.querySelector(`#${CSS.escape(line.dataset.from)}`);
    if (!origin) continue;
    line.addEventListener('mouseenter', () => origin.classList.add('hl'));
    line.addEventListener('mouseleave', () => origin.classList.remove('hl'));
  }
  for (const a of root.querySelectorAll('a[href^="#"]')) a.addEventListener('click', (e) => {
    e.preventDefault();
    const target = root.querySelector(a.getAttribute('href'));
    if (target) target.scrollIntoView({block: 'center'});
  });
}

// ---- the e-graph: egglog's viewer, loaded from the server (it ships in egglog's wheel) --------
let viewer = null;
let viewerModule = null;
let egraphDrawn = null;
function loadViewer() {
  if (!viewerModule) viewerModule = import(`/static/viewer.js?token=${encodeURIComponent(token)}`);
  return viewerModule;
}
async function drawEgraph() {
  if (!last || !last.egraphs.length) return;
  const stage = last.egraphs[Number($('eg-stage').value)];
  const key = `${$('eg-stage').value}/${$('eg-helpers').checked}/${document.body.dataset.runs}`;
  if (egraphDrawn === key) return;
  egraphDrawn = key;
  $('eg-wait').hidden = false;
  try {
    if (!viewer) viewer = (await loadViewer()).mount($('eg-view'));
    viewer.render([$('eg-helpers').checked ? stage.full : stage.folded]);
    const n = $('eg-helpers').checked ? stage.counts[1] : stage.counts[0];
    $('eg-status').textContent = `${n} e-nodes shown` + (stage.note ? ` (${stage.note})` : ` (${stage.counts[1]} in the e-graph)`);
    $('egraph').dataset.rendered = String(Number($('egraph').dataset.rendered || 0) + 1);
  } catch (err) {
    $('eg-status').textContent = `the e-graph viewer could not start: ${err}`;
  } finally {
    $('eg-wait').hidden = true;
  }
}
$('eg-stage').addEventListener('change', drawEgraph);
$('eg-helpers').addEventListener('change', drawEgraph);

// ---- stepping through saturation -------------------------------------------------------------
let steps = [];
let stepsBefore = '';
let current = 0;
$('steps-run').addEventListener('click', async () => {
  $('steps-run').disabled = true;
  $('step-label').textContent = 'running…';
  try {
    const got = await api('/api/steps', {program: editors.program.text, rules: editors.rules.text});
    if (!got.ok) { showError(got.error); return; }
    steps = got.steps;
    stepsBefore = got.before || '';
    document.querySelector('.steps-ui').hidden = false;
    $('step-list').innerHTML = steps.map((s, i) => `<div data-i="${i}">${s.number}. ${esc(s.description)}</div>`).join('') +
      (got.truncated ? '<div class="muted">(cut: the playground returns at most a few hundred steps)</div>' : '') +
      (steps.length ? '' : '<div class="muted">no Inline call sites and no rules: nothing to step through</div>');
    for (const d of $('step-list').querySelectorAll('div[data-i]')) d.addEventListener('click', () => showStep(Number(d.dataset.i)));
    showStep(0);
  } finally {
    $('steps-run').disabled = false;
  }
});
function showStep(i) {
  if (!steps.length) { $('step-label').textContent = ''; $('step-detail').innerHTML = ''; return; }
  current = Math.max(0, Math.min(steps.length - 1, i));
  const s = steps[current];
  for (const d of $('step-list').querySelectorAll('div[data-i]')) d.classList.toggle('on', Number(d.dataset.i) === current);
  $('step-label').textContent = `step ${current + 1} of ${steps.length}`;
  const matches = Object.entries(s.matches).map(([r, n]) => `<code>${esc(r)}</code> ${n}`).join(', ') || 'none';
  const iterations = s.iterations.map((it, k) => `<tr><td class="num">${k + 1}</td><td>${esc(it.ruleset)}</td><td>${Object.entries(it.matches).map(([r, n]) => `<code>${esc(r)}</code> ${n}`).join(', ') || '<span class="muted">no match</span>'}</td><td>${it.updated ? 'yes' : ''}</td><td>${it.function === null ? '<span class="muted">helper terms only</span>' : `<details><summary>function</summary><pre>${esc(it.function)}</pre></details>`}</td></tr>`).join('');
  const unfired = (s.never_fired || []).length
    ? `<div class="warn">${s.never_fired.map((r) => `<code>${esc(r)}</code>`).join(', ')} never fired</div>` : '';
  $('step-detail').innerHTML = `<h4>${esc(s.description)}</h4><p>rules: ${matches}</p>${unfired}` +
    (iterations ? `<details><summary>${s.iterations.length} egglog iterations</summary><table><tr><th>#</th><th>ruleset</th><th>matches</th><th>e-graph changed</th><th>as extraction sees it</th></tr>${iterations}</table></details>` : '') +
    `<p class="muted">the program after this step (changed lines marked)</p><pre>${changedLines(current > 0 ? steps[current - 1].program : stepsBefore, s.program)}</pre>`;
}

// The lines of `after` that are not in `before` (a longest common subsequence of lines), marked.
function changedLines(before, after) {
  const a = before.split('\n');
  const b = after.split('\n');
  const keep = new Set();
  if (a.length * b.length <= 4_000_000) {
    const rows = a.length + 1;
    const cols = b.length + 1;
    const table = new Uint32Array(rows * cols);
    for (let i = a.length - 1; i >= 0; i--) {
      for (let j = b.length - 1; j >= 0; j--) {
        table[i * cols + j] = a[i] === b[j] ? table[(i + 1) * cols + j + 1] + 1 : Math.max(table[(i + 1) * cols + j], table[i * cols + j + 1]);
      }
    }
    for (let i = 0, j = 0; i < a.length && j < b.length;) {
      if (a[i] === b[j]) { keep.add(j); i++; j++; } else if (table[(i + 1) * cols + j] >= table[i * cols + j + 1]) i++; else j++;
    }
  } else {  // too long to compare line by line: a line is unchanged when it occurs before at all
    const seen = new Set(a);
    b.forEach((line, j) => { if (seen.has(line)) keep.add(j); });
  }
  return b.map((line, j) => (keep.has(j) ? esc(line) : `<span class="chg">${esc(line)}</span>`)).join('\n');
}
$('step-prev').addEventListener('click', () => showStep(current - 1));
$('step-next').addEventListener('click', () => showStep(current + 1));

showError(null);
loadExamples().then(async () => {
  if (await readPermalink()) run();  // a shared case opens and runs
  document.body.dataset.ready = 'yes';
});
