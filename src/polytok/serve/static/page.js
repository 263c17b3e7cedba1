// polytok serve: the page. Plain JavaScript, no build step, nothing loaded from elsewhere.
// It asks the server's JSON endpoints (/api/encode, /api/compare, /api/explain, /api/chat) and draws the answers.
"use strict";

const FLAG = { SPECIAL: 1, BYTE: 2, PARTIAL: 4, ADDED: 8, UNK: 16 };
const DEBOUNCE_MS = 250;
const MAX_EXPLAIN_ROWS = 1500;
const HOVER_HINT = "Hover a token to see its id, piece, bytes and offsets.";
const ROLES = ["system", "user", "assistant", "tool"];
const $ = (sel) => document.querySelector(sel);

const state = {
  view: "tokens", models: [], seq: 0, timer: 0, controller: null,
  messages: [
    { role: "system", content: "You are a concise assistant." },
    { role: "user", content: "What is a token? 🦙" },
    { role: "assistant", content: "A piece of text the model reads as one unit." },
  ],
};

function esc(s) {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

function visible(s) {
  // a newline or tab keeps its place in the layout and gets a mark you can see
  return esc(s).replace(/\n/g, "\u21b5\n").replace(/\t/g, "\u2192\t");
}

function quoted(s) { return JSON.stringify(s); }

async function api(path, body, signal) {
  const init = body === undefined ? { signal } :
    { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body), signal };
  const resp = await fetch(path, init);
  let data;
  try { data = await resp.json(); } catch (e) { data = { error: `HTTP ${resp.status}` }; }
  if (!resp.ok) { throw new Error(data.error || `HTTP ${resp.status}`); }
  return data;
}

function showError(message) {
  const box = $("#error");
  box.hidden = !message;
  box.textContent = message || "";
}

function setStatus(message) { $("#status").textContent = message; }

// -- choosers ---------------------------------------------------------------------------

function fillSelect(select, models, withNone) {
  const keep = select.value;
  const kept = new Set([...select.selectedOptions].map((o) => o.value));
  select.innerHTML = "";
  if (withNone) { select.append(new Option("(none)", "")); }
  for (const m of models) {
    const opt = new Option(`${m.label} \u2014 ${m.format}`, m.name);
    opt.title = `${m.name}\n${m.source} (${m.size} ids, ${m.origin})`;
    select.append(opt);
  }
  if (select.multiple) {
    for (const o of select.options) { o.selected = kept.has(o.value); }
  } else if ([...select.options].some((o) => o.value === keep)) { select.value = keep; }
}

async function loadModels() {
  const data = await api("/api/models");
  state.models = data.models;
  fillSelect($("#model-a"), data.models, false);
  fillSelect($("#model-b"), data.models, true);
  fillSelect($("#model-more"), data.models, false);
  $("#roots").textContent = data.roots.length ? `roots: ${data.roots.join(", ")}` : "(no --root: only the models above)";
  for (const id of ["#model-a", "#model-b"]) { showTitle($(id)); }
}

function labelOf(name) {
  const m = state.models.find((x) => x.name === name);
  return m ? m.label : name;
}

function showTitle(select) {
  // the full path of the chosen model on hover of the closed chooser
  const opt = select.selectedOptions[0];
  select.title = opt ? opt.title : "";
}

function side(which) {
  const model = $(`#model-${which}`).value;
  const special = $(`#special-${which}`).value || null;
  return model ? { model, special } : null;
}

// -- token spans ------------------------------------------------------------------------

function spansHtml(view, cps, marks) {
  const out = [];
  let pos = 0;
  const n = view.ids.length;
  for (let k = 0; k < n; k++) {
    const [s, e] = view.offsets[k];
    const f = view.flags[k];
    const cls = ["tok", `c${k % 6}`];
    if (f & FLAG.SPECIAL) { cls.push("special"); }
    if (f & FLAG.BYTE) { cls.push("byte"); }
    if (f & FLAG.PARTIAL) { cls.push("partial"); }
    if (f & FLAG.UNK) { cls.push("unk"); }
    if (marks && marks[k]) { cls.push(marks[k] === 2 ? "diff first" : "diff"); }
    let body;
    if (f & FLAG.ADDED || s === e) {
      cls.push(f & FLAG.ADDED ? "added" : "zero");
      body = f & FLAG.ADDED ? esc(view.pieces[k]) : "\u25cc";
    } else {
      if (s > pos) { out.push(`<span class="gap" title="text no token covers">${visible(cps.slice(pos, s).join(""))}</span>`); }
      if (e <= pos) {
        cls.push("zero");
        body = "\u25cc"; // another piece of a character an earlier token already shows
      } else {
        body = visible(cps.slice(Math.max(s, pos), e).join(""));
        pos = e;
      }
    }
    out.push(`<span class="${cls.join(" ")}" data-k="${k}">${body}</span>`);
  }
  if (pos < cps.length) { out.push(`<span class="gap">${visible(cps.slice(pos).join(""))}</span>`); }
  return out.join("");
}

function flagNames(f) {
  const names = [];
  if (f & FLAG.ADDED) { names.push("added by the post-processor"); }
  else if (f & FLAG.SPECIAL) { names.push("special"); }
  if (f & FLAG.BYTE) { names.push("byte fallback"); }
  if (f & FLAG.PARTIAL) { names.push("part of a UTF-8 character"); }
  if (f & FLAG.UNK) { names.push("unknown token"); }
  return names;
}

function tokenInfo(view, k) {
  const hex = view.bytes[k].match(/../g) || [];
  const [s, e] = view.offsets[k];
  const extra = flagNames(view.flags[k]);
  if (view.role_masks) {
    const roles = Object.keys(view.role_masks).filter((r) => view.role_masks[r][k]);
    extra.push(roles.length ? `role: ${roles.join(", ")}` : "template text");
  }
  return `#${k}  id ${view.ids[k]}  piece ${quoted(view.pieces[k])}  bytes ${hex.join(" ") || "(none)"}` +
    `  offsets [${s}, ${e})` + (extra.length ? `  \u2014 ${extra.join(", ")}` : "");
}

function paneHtml(label, view, extra) {
  const m = view.model;
  return `<div class="pane" data-side="${label}">
    <h2><span class="name" title="${esc(m.name)}">${esc(label)}: ${esc(labelOf(m.name))}</span>
      <span class="meta">${esc(m.format)} \u00b7 ${view.special ? `special=${esc(view.special)}` : "chat template"}</span>
      ${extra || ""}<span class="count"><span class="n">${view.count}</span> tokens</span></h2>
    <div class="spans"></div>
    <div class="ids-row"><textarea class="ids" readonly aria-label="ids ${esc(label)}"></textarea>
      <button type="button" class="copy">Copy ids</button></div></div>`;
}

function fillPane(pane, view, text, marks) {
  const cps = Array.from(text);
  pane.querySelector(".spans").innerHTML = spansHtml(view, cps, marks);
  pane.querySelector(".ids").value = `[${view.ids.join(", ")}]`;
  pane._view = view;
}

function resetHover() { $("#hover-info").textContent = HOVER_HINT; }

function onHover(event) {
  const target = event.target.closest(".tok[data-k]");
  const pane = event.target.closest(".pane");
  if (!target || !pane || !pane._view) { return; }
  const info = tokenInfo(pane._view, Number(target.dataset.k));
  if (!target.title) { target.title = info.replace(/ {2}/g, "\n"); }
  $("#hover-info").textContent = `${pane.dataset.side}: ${info}`;
}

async function onCopy(event) {
  const button = event.target.closest("button.copy");
  if (!button) { return; }
  const area = button.parentElement.querySelector(".ids");
  try { await navigator.clipboard.writeText(area.value); }
  catch (e) { area.select(); document.execCommand("copy"); }
  button.textContent = "Copied";
  setTimeout(() => { button.textContent = "Copy ids"; }, 1200);
}

// -- the three views --------------------------------------------------------------------

async function showTokens(text, signal, seq) {
  const more = [...$("#model-more").selectedOptions].map((o, i) => [String.fromCharCode(67 + i), { model: o.value, special: null }]);
  const sides = [["A", side("a")], ["B", side("b")], ...more].filter(([, s]) => s);
  const addSpecial = $("#add-special").checked;
  const views = await Promise.all(sides.map(([, s]) =>
    api("/api/encode", { ...s, text, add_special: addSpecial }, signal)));
  if (seq !== state.seq) { return; }
  const panes = $("#token-panes");
  panes.className = views.length > 1 ? "panes two" : "panes";
  panes.innerHTML = views.map((v, i) => paneHtml(sides[i][0], v)).join("");
  views.forEach((v, i) => fillPane(panes.children[i], v, text, null));
  setStatus(views.map((v, i) => `${sides[i][0]}: ${v.count} tokens in ${v.elapsed_ms} ms`).join(" \u00b7 "));
}

function firstRange(data) {
  // by ids: compare's first divergence; by bytes: the first region where the splits differ
  if (data.match === "bytes") { return data.regions.length ? data.regions[0] : null; }
  const r = data.first && data.first.region;
  return r ? [r.a_start, r.a_end, r.b_start, r.b_end] : null;
}

function marksFor(n, data, lo, hi) {
  const marks = new Uint8Array(n);
  for (const r of data.regions) { for (let k = r[lo]; k < r[hi]; k++) { marks[k] = 1; } }
  const first = firstRange(data);
  if (first) { for (let k = first[lo]; k < first[hi]; k++) { marks[k] = 2; } }
  return marks;
}

function regionText(view, text, lo, hi) {
  if (hi <= lo) { return ""; }
  return Array.from(text).slice(view.offsets[lo][0], view.offsets[hi - 1][1]).join("");
}

function splitLine(data, text) {
  if (data.match !== "bytes") { return ""; }
  const r = firstRange(data);
  if (!r) { return "<div><b>Same splits</b> on both sides (by bytes); the ids differ as below.</div>"; }
  const pieces = (v, lo, hi) => v.pieces.slice(lo, hi).map((p) => `<span class="chip hit">${esc(quoted(p))}</span>`).join("");
  return `<div>First split difference at A[${r[0]}:${r[1]}] / B[${r[2]}:${r[3]}] over
    <code>${esc(quoted(regionText(data.a, text, r[0], r[1]) || regionText(data.b, text, r[2], r[3])))}</code>:
    A ${pieces(data.a, r[0], r[1])} / B ${pieces(data.b, r[2], r[3])}</div>`;
}

function windowHtml(win) {
  return win.map(([id, piece, hit]) =>
    `<span class="chip${hit ? " hit" : ""}" title="id ${id}">${esc(quoted(piece))}=${id}</span>`).join("");
}

function bannerHtml(data, text) {
  const first = data.first;
  const nA = data.regions.reduce((t, r) => t + r[1] - r[0], 0);
  const nB = data.regions.reduce((t, r) => t + r[3] - r[2], 0);
  const counted = `${data.regions.length} differing region(s) highlighted by ${data.match}: ${nA} token(s) of A, ${nB} of B.`;
  if (!first) { return `<b>Identical ids</b> (${data.a.count} tokens). ${data.regions.length ? counted : ""}`; }
  const split = splitLine(data, text);
  if (first.error) { return `<span class="kind">error</span> ${esc(first.error)}`; }
  const r = first.region;
  const reasons = first.reasons.length ? first.reasons.map((x) => `<span class="reason">${esc(x)}</span>`).join("") :
    '<span class="note">no known reason matches</span>';
  const stage = first.stage ? `<div>first differing stage: <b class="stage-name">${esc(first.stage)}</b>` +
    (first.stage_detail ? ` \u2014 <code>${esc(first.stage_detail)}</code>` : "") + "</div>" :
    (first.stage_detail ? `<div class="note">${esc(first.stage_detail)}</div>` : "");
  const head = `First divergence${split ? " of the ids" : ""}: <span class="kind">${esc(first.kind || "?")}</span> at tokens
      A[${r.a_start}:${r.a_end}] / B[${r.b_start}:${r.b_end}], text A <code>${esc(quoted(r.text_a))}</code>
      / B <code>${esc(quoted(r.text_b))}</code>`;
  const detail = `<div>reasons: ${reasons}</div>${stage}
    <div>A: ${windowHtml(first.window_a)}</div><div>B: ${windowHtml(first.window_b)}</div>`;
  // by bytes (two vocabularies) the ids' divergence is secondary: folded away under the split difference
  const ids = split ? `<details class="ids-detail"><summary>${head}</summary>${detail}</details>` : `<div>${head}</div>${detail}`;
  return `${split}${ids}<div class="note">${counted}</div>`;
}

async function showCompare(text, signal, seq) {
  const a = side("a");
  const b = side("b");
  const panes = $("#compare-panes");
  if (!b) {
    $("#divergence").className = "banner";
    $("#divergence").textContent = "Choose tokenizer B (or the same tokenizer with another special-token mode) to compare.";
    panes.innerHTML = "";
    return;
  }
  const body = { a, b, text, add_special: $("#add-special").checked, match: $("#match").value };
  const data = await api("/api/compare", body, signal);
  if (seq !== state.seq) { return; }
  const banner = $("#divergence");
  banner.className = `banner ${data.first ? "differs" : "same"}`;
  banner.innerHTML = bannerHtml(data, text);
  const na = data.regions.reduce((t, r) => t + r[1] - r[0], 0);
  const nb = data.regions.reduce((t, r) => t + r[3] - r[2], 0);
  panes.innerHTML = paneHtml("A", data.a, `<span class="ndiff">${na} differ</span>`) +
    paneHtml("B", data.b, `<span class="ndiff">${nb} differ</span>`);
  fillPane(panes.children[0], data.a, text, marksFor(data.a.count, data, 0, 1));
  fillPane(panes.children[1], data.b, text, marksFor(data.b.count, data, 2, 3));
  setStatus(`compared in ${data.elapsed_ms} ms`);
}

function stageHtml(key, title, body) {
  return `<div class="stage" data-stage="${key}"><h3>${esc(title)}</h3><div class="body">${body}</div></div>`;
}

function chips(ids, pieces) {
  return ids.map((id, i) => `<span class="chip" title="id ${id}">${esc(quoted(pieces[i]))}=${id}</span>`).join("");
}

function explainHtml(ex) {
  const comps = Object.entries(ex.components).map(([k, v]) => `<tr><th>${esc(k)}</th><td>${esc(v)}</td></tr>`).join("");
  const segs = ex.segments.slice(0, MAX_EXPLAIN_ROWS);
  const split = segs.map((s) => `<tr><td>[${s.start}:${s.end}]</td><td>${s.token_id === null ? "text" :
    `<span class="chip special">special \u2192 ${s.token_id}</span>`}</td><td><code>${esc(quoted(s.text))}</code></td></tr>`).join("");
  const textSegs = segs.filter((s) => s.token_id === null);
  const norm = textSegs.map((s) => `<tr><td>[${s.start}:${s.end}]</td><td><code>${esc(quoted(s.normalized || ""))}</code></td></tr>`).join("");
  let rows = 0;
  const pre = [];
  const model = [];
  for (const s of textSegs) {
    for (const p of s.pre_tokens) {
      if (rows++ >= MAX_EXPLAIN_ROWS) { break; }
      pre.push(`<span class="chip pre" title="characters [${p.start}:${p.end}) of the text">${esc(quoted(p.text))}` +
        `<span class="at">${p.start}\u2013${p.end}</span></span>`);
      model.push(`<tr><td><code>${esc(quoted(p.text))}</code></td><td>${p.added !== null ? `(added token ${p.added}) ` : ""}${chips(p.ids, p.pieces)}</td></tr>`);
    }
  }
  const more = (rows > MAX_EXPLAIN_ROWS || ex.segments.length > MAX_EXPLAIN_ROWS) ?
    `<p class="note">Showing the first ${MAX_EXPLAIN_ROWS} rows; the JSON from /api/explain has all.</p>` : "";
  return [
    stageHtml("pipeline", `Pipeline (${ex.source}, add_special=${ex.add_special}, special=${ex.special})`, `<table>${comps}</table>`),
    stageHtml("split", `1. Special-token split: ${ex.segments.length} segment(s)`, `<table>${split}</table>${more}`),
    stageHtml("normalize", "2. Normalized text", norm ? `<table>${norm}</table>` : '<span class="note">no text segment</span>'),
    stageHtml("pre-tokenize", `3. Pre-tokens: ${pre.length}`, pre.join("") || '<span class="note">none</span>'),
    stageHtml("model", "4. Model: pieces = ids per pre-token", `<table>${model.join("")}</table>`),
    stageHtml("post-process", `5. Post-processor (${ex.components.post_processor})`, postHtml(ex)),
    stageHtml("ids", `ids (${ex.ids.length})`, `<textarea class="ids" readonly>[${ex.ids.join(", ")}]</textarea>` +
      `<div>${chips(ex.ids.slice(0, MAX_EXPLAIN_ROWS), ex.pieces)}</div>`),
  ].join("");
}

function postHtml(ex) {
  const nb = ex.added_before.length;
  const na = ex.added_after.length;
  const n = ex.sequence_ids.length;
  const added = (ids, pieces) => ids.map((id, i) =>
    `<span class="chip special added" title="id ${id}">${esc(quoted(pieces[i]))}=${id}</span>`).join("");
  let head;
  if (!ex.add_special) { head = "add_special is off: the post-processor adds nothing."; }
  else if (nb + na === 0 && ex.ids.length === n) { head = "It adds no token to this text."; }
  else if (nb + na === 0) { head = `It changes the sequence: ${n} ids in, ${ex.ids.length} out (see the ids below).`; }
  else { head = `It adds ${nb} token(s) before the text and ${na} after.`; }
  const seq = nb + na ? `<div class="post-seq">${added(ex.added_before, ex.added_before_pieces)}` +
    `<span class="chip text-run">\u2026 ${n} token(s) of the text \u2026</span>` +
    `${added(ex.added_after, ex.added_after_pieces)}</div>` : "";
  return `<div class="post-head">${esc(head)}</div>${seq}`;
}

async function showExplain(text, signal, seq) {
  const a = side("a");
  const ex = await api("/api/explain", { ...a, text, add_special: $("#add-special").checked }, signal);
  if (seq !== state.seq) { return; }
  $("#explain").innerHTML = explainHtml(ex);
  setStatus(`explained: ${ex.ids.length} ids`);
}

function messageHtml(m, k) {
  const options = [...new Set([...ROLES, m.role])].map((r) =>
    `<option value="${esc(r)}"${r === m.role ? " selected" : ""}>${esc(r)}</option>`).join("");
  return `<div class="msg role-${esc(roleClass(m.role))}" data-k="${k}">
    <select class="role" aria-label="role of message ${k + 1}">${options}</select>
    <textarea class="content" rows="2" spellcheck="false" aria-label="content of message ${k + 1}">${esc(m.content)}</textarea>
    <button type="button" class="remove" title="remove this message" aria-label="remove message ${k + 1}">\u00d7</button></div>`;
}

function roleClass(role) { return ROLES.includes(role) ? role : "other"; }

function drawMessages() {
  $("#messages").innerHTML = state.messages.map(messageHtml).join("");
}

function onMessageEdit(event) {
  const row = event.target.closest(".msg");
  if (!row) { return; }
  const m = state.messages[Number(row.dataset.k)];
  if (event.type === "input" && event.target.matches("textarea.content")) {
    m.content = event.target.value;
    resetHover();
    schedule();
  } else if (event.type === "change" && event.target.matches("select.role")) {
    m.role = event.target.value;
    row.className = `msg role-${roleClass(m.role)}`;
    resetHover();
    update();
  }
}

function onMessageClick(event) {
  const remove = event.target.closest(".msg button.remove");
  if (remove) {
    state.messages.splice(Number(remove.closest(".msg").dataset.k), 1);
    drawMessages();
    resetHover();
    update();
  }
}

function addMessage() {
  const last = state.messages[state.messages.length - 1];
  state.messages.push({ role: last && last.role === "user" ? "assistant" : "user", content: "" });
  drawMessages();
  const boxes = document.querySelectorAll("#messages textarea.content");
  boxes[boxes.length - 1].focus();
  update();
}

function chatSpansHtml(view) {
  const cps = Array.from(view.text);
  const roles = Object.keys(view.role_masks);
  const out = [];
  let pos = 0;
  for (let k = 0; k < view.ids.length; k++) {
    const [s, e] = view.offsets[k];
    const mine = roles.filter((r) => view.role_masks[r][k]);
    const cls = ["tok", mine.length ? `role-${roleClass(mine[0])}` : "tmpl", k % 2 ? "odd" : "even"];
    if (view.flags[k] & FLAG.SPECIAL) { cls.push("special"); }
    if (view.flags[k] & FLAG.PARTIAL) { cls.push("partial"); }
    let body;
    if (!view.aligned) { body = visible(view.pieces[k]); }
    else if (e <= pos || s === e) { cls.push("zero"); body = "\u25cc"; }
    else { body = visible(cps.slice(Math.max(s, pos), e).join("")); pos = e; }
    out.push(`<span class="${cls.join(" ")}" data-k="${k}" data-role="${esc(mine.join(" "))}">${body}</span>`);
  }
  return out.join("");
}

async function showChat(text, signal, seq) {
  const a = side("a");
  const out = $("#chat-out");
  if (!state.messages.length) {
    out.innerHTML = '<div class="banner">Add a message to render the conversation.</div>';
    setStatus("");
    return;
  }
  const body = { model: a.model, messages: state.messages, add_generation_prompt: $("#gen-prompt").checked,
    content_special: $("#content-parse").checked ? "parse" : "text" };
  let view;
  try { view = await api("/api/chat", body, signal); } catch (err) {
    if (seq === state.seq && err.name !== "AbortError") { out.innerHTML = ""; }
    if (/no chat template/.test(err.message)) {
      throw new Error(`${err.message}\nChoose as tokenizer A a model that has one: a folder with tokenizer_config.json ` +
        "or chat_template.jinja beside its tokenizer.json, or a GGUF that holds one.");
    }
    throw err;
  }
  if (seq !== state.seq) { return; }
  const counts = Object.entries(view.role_masks).map(([r, mask]) =>
    `<span class="tok role-${esc(roleClass(r))}">${esc(r)} ${mask.reduce((t, x) => t + x, 0)}</span>`).join(" ");
  const inRole = view.ids.filter((_, k) => Object.values(view.role_masks).some((mask) => mask[k])).length;
  out.innerHTML = paneHtml("A", view, `<span class="roles">${counts}
    <span class="tok tmpl">template ${view.count - inRole}</span></span>`);
  const pane = out.firstElementChild;
  pane.querySelector(".spans").innerHTML = chatSpansHtml(view);
  pane.querySelector(".ids").value = `[${view.ids.join(", ")}]`;
  pane._view = view;
  if (!view.aligned) { pane.querySelector(".spans").insertAdjacentHTML("beforebegin",
    '<div class="note pad">The tokens\' text spans are not known here: each token shows its piece.</div>'); }
  setStatus(`chat: ${view.count} tokens in ${view.elapsed_ms} ms`);
}

// -- updating ---------------------------------------------------------------------------

async function update() {
  const seq = ++state.seq;
  if (state.controller) { state.controller.abort(); }
  state.controller = new AbortController();
  const text = $("#text").value;
  for (const id of ["#model-a", "#model-b"]) { showTitle($(id)); }
  setStatus("\u2026");
  document.body.dataset.busy = "1";
  try {
    const show = { tokens: showTokens, compare: showCompare, explain: showExplain, chat: showChat }[state.view];
    await show(text, state.controller.signal, seq);
    if (seq === state.seq) { showError(""); }
  } catch (err) {
    if (err.name !== "AbortError" && seq === state.seq) { showError(err.message); setStatus(""); }
  } finally {
    if (seq === state.seq) { delete document.body.dataset.busy; document.body.dataset.updated = String(seq); }
  }
}

function onTextInput() {
  resetHover();  // the token under the pointer belonged to the text before
  schedule();
}

function schedule() {
  clearTimeout(state.timer);
  state.timer = setTimeout(update, DEBOUNCE_MS);
}

function selectView(name) {
  state.view = name;
  document.body.dataset.view = name;
  resetHover();
  for (const b of document.querySelectorAll("#tabs button")) {
    b.setAttribute("aria-selected", String(b.dataset.view === name));
  }
  for (const v of ["tokens", "compare", "explain", "chat"]) { $(`#view-${v}`).hidden = v !== name; }
  update();
}

async function onLoad(event) {
  event.preventDefault();
  const path = $("#load-path").value.trim();
  if (!path) { return; }
  try {
    const data = await api("/api/load", { path });
    await loadModels();
    $("#model-a").value = data.model.name;
    showError("");
    update();
  } catch (err) { showError(err.message); }
}

function applyQuery() {
  // ?a=MODEL&b=MODEL&sa=parse&sb=text&view=compare&text=... presets the page (links, screenshots)
  const q = new URLSearchParams(location.search);
  for (const [key, id] of [["a", "#model-a"], ["b", "#model-b"], ["sa", "#special-a"], ["sb", "#special-b"]]) {
    if (q.has(key)) { $(id).value = q.get(key); }
  }
  if (q.has("text")) { $("#text").value = q.get("text"); }
  if (["bytes", "ids", "auto"].includes(q.get("match"))) { $("#match").value = q.get("match"); }
  return q.get("view") || "tokens";
}

async function start() {
  $("#text").addEventListener("input", onTextInput);
  for (const id of ["#model-a", "#model-b", "#model-more", "#special-a", "#special-b", "#add-special", "#match",
    "#gen-prompt", "#content-parse"]) {
    $(id).addEventListener("change", update);
  }
  for (const id of ["#model-a", "#model-b"]) { $(id).addEventListener("change", (e) => showTitle(e.target)); }
  $("#messages").addEventListener("input", onMessageEdit);
  $("#messages").addEventListener("change", onMessageEdit);
  $("#messages").addEventListener("click", onMessageClick);
  $("#add-message").addEventListener("click", addMessage);
  drawMessages();
  resetHover();
  $("#tabs").addEventListener("click", (e) => { const b = e.target.closest("button"); if (b) { selectView(b.dataset.view); } });
  $("#load-form").addEventListener("submit", onLoad);
  document.addEventListener("mouseover", onHover);
  document.addEventListener("click", onCopy);
  try { await loadModels(); } catch (err) { showError(`cannot list the models: ${err.message}`); return; }
  selectView(applyQuery());
}

document.addEventListener("DOMContentLoaded", start);
