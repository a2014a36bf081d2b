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

// ---- editors: line numbers, an error marked at its line -------------------------------------
function gutter(name, errorLine) {
  const area = $(name);
  const lines = area.value.split('\n').length;
  let html = '';
  for (let i = 1; i <= lines; i++) html += `<span${i === errorLine ? ' class="err"' : ''}>${i}</span>`;
  const g = document.querySelector(`#${name}-editor .gutter`);
  g.innerHTML = html;
  g.scrollTop = area.scrollTop;
}
function selectLine(name, line) {
  const area = $(name);
  const lines = area.value.split('\n');
  let start = 0;
  for (let i = 0; i < line - 1 && i < lines.length; i++) start += lines[i].length + 1;
  area.focus();
  area.setSelectionRange(start, start + (lines[line - 1] || '').length);
  const lineHeight = parseFloat(getComputedStyle(area).lineHeight) || 19;
  area.scrollTop = Math.max(0, (line - 5) * lineHeight);
}
const marked = {program: null, rules: null};
function showError(error) {
  for (const name of ['program', 'rules', 'run']) { $(`${name}-error`).hidden = true; }
  marked.program = marked.rules = null;
  if (error) {
    const where = error.where === 'rules' ? 'rules' : (error.where === 'program' || error.line ? 'program' : 'run');
    const box = $(`${where}-error`);
    const at = error.line ? `line ${error.line}${error.col ? ', column ' + error.col : ''}: ` : '';
    box.textContent = (where === 'run' ? `${error.where}: ` : '') + at + error.message;
    box.hidden = false;
    box.dataset.line = error.line || '';
    if (where !== 'run' && error.line) { marked[where] = error.line; }
  }
  gutter('program', marked.program);
  gutter('rules', marked.rules);
}
for (const name of ['program', 'rules']) {
  const area = $(name);
  area.addEventListener('input', () => gutter(name, marked[name]));
  area.addEventListener('scroll', () => { document.querySelector(`#${name}-editor .gutter`).scrollTop = area.scrollTop; });
  area.addEventListener('keydown', (event) => {
    if (event.key === 'Tab') {  // indent with spaces, as pl source wants
      event.preventDefault();
      area.setRangeText('    ', area.selectionStart, area.selectionEnd, 'end');
      gutter(name, marked[name]);
    }
  });
  $(`${name}-error`).addEventListener('click', () => { const l = Number($(`${name}-error`).dataset.line); if (l) selectLine(name, l); });
}
document.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) { event.preventDefault(); run(); }
});

// ---- tabs ---------------------------------------------------------------------------------
for (const button of document.querySelectorAll('#tabs button')) {
  button.addEventListener('click', () => {
    for (const b of document.querySelectorAll('#tabs button')) b.classList.toggle('on', b === button);
    for (const t of document.querySelectorAll('.tab')) t.classList.toggle('on', t.id === button.dataset.tab);
    if (button.dataset.tab === 'egraph') drawEgraph();
  });
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
  if (got.source !== undefined) { $('program').value = got.source; showError(null); run(); }
});
$('rules-example').addEventListener('change', async () => {
  if (!$('rules-example').value) { $('rules').value = ''; showError(null); return; }
  const got = await api(`/api/example?name=${encodeURIComponent($('rules-example').value)}`);
  if (got.source !== undefined) { $('rules').value = got.source; showError(null); }
});

// ---- a run ------------------------------------------------------------------------------------
let last = null;
async function run() {
  $('run').disabled = true;
  $('status').textContent = 'running…';
  const started = performance.now();
  try {
    const got = await api('/api/run', {program: $('program').value, rules: $('rules').value, pipeline: $('pipeline').value});
    if (!got.ok) {
      showError(got.error);
      $('status').textContent = 'error';
      document.body.dataset.state = 'error';
      return;
    }
    showError(null);
    last = got;
    render(got);
    $('status').textContent = `${got.pipeline.join(' → ')} · ${(got.seconds * 1000).toFixed(0)} ms in the passes, ${(performance.now() - started).toFixed(0)} ms in all`;
    document.body.dataset.state = 'done';
    document.body.dataset.runs = String(Number(document.body.dataset.runs || 0) + 1);
  } catch (err) {
    showError({where: 'run', message: String(err)});
    $('status').textContent = 'error';
  } finally {
    $('run').disabled = false;
  }
}
$('run').addEventListener('click', run);

function render(got) {
  if (!$('np-view-css')) document.head.insertAdjacentHTML('beforeend', `<style id="np-view-css">${got.html.css}</style>`);
  const warnings = got.passes.filter((p) => p.never_fired.length)
    .map((p) => `<div class="warn">pass <b>${esc(p.name)}</b>: ${p.never_fired.map((r) => `<code>${esc(r)}</code>`).join(', ')} never fired</div>`).join('');
  $('result').innerHTML = `<p class="muted">${esc(got.html.summary)}</p>${warnings}<div class="legend">${got.html.chips}</div>${got.html.panes}`;
  linkLines($('result'));
  $('sites').innerHTML = got.html.sites;
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
let egraphDrawn = null;
async function drawEgraph() {
  if (!last || !last.egraphs.length) return;
  const stage = last.egraphs[Number($('eg-stage').value)];
  const key = `${$('eg-stage').value}/${$('eg-helpers').checked}/${document.body.dataset.runs}`;
  if (egraphDrawn === key) return;
  egraphDrawn = key;
  try {
    if (!viewer) viewer = (await import(`/static/viewer.js?token=${encodeURIComponent(token)}`)).mount($('eg-view'));
    viewer.render([$('eg-helpers').checked ? stage.full : stage.folded]);
    const n = $('eg-helpers').checked ? stage.counts[1] : stage.counts[0];
    $('eg-status').textContent = `${n} e-nodes shown (${stage.counts[1]} in the e-graph)`;
    $('egraph').dataset.rendered = String(Number($('egraph').dataset.rendered || 0) + 1);
  } catch (err) {
    $('eg-status').textContent = `the e-graph viewer could not start: ${err}`;
  }
}
$('eg-stage').addEventListener('change', drawEgraph);
$('eg-helpers').addEventListener('change', drawEgraph);

// ---- stepping through saturation -------------------------------------------------------------
let steps = [];
let current = 0;
$('steps-run').addEventListener('click', async () => {
  $('steps-run').disabled = true;
  $('step-label').textContent = 'running…';
  try {
    const got = await api('/api/steps', {program: $('program').value, rules: $('rules').value});
    if (!got.ok) { showError(got.error); return; }
    steps = got.steps;
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
    `<p class="muted">the program after this step</p><pre>${esc(s.program)}</pre>`;
}
$('step-prev').addEventListener('click', () => showStep(current - 1));
$('step-next').addEventListener('click', () => showStep(current + 1));

showError(null);
loadExamples().then(() => { document.body.dataset.ready = 'yes'; });
