// The status page: asks /api/state every 2 s and draws it. No library, nothing from another host.
"use strict";

const REFRESH_MS = 2000;
const ORDER = ["waiting", "copying", "copied", "verified", "mismatch", "refused"];
const COLORS = {};
let heatmap = { newest: "", states: "", legend: {} };

function $(id) { return document.getElementById(id); }
function num(n) { return n === undefined || n === null ? "-" : Number(n).toLocaleString("en-US"); }
function duration(seconds) {
  if (seconds === undefined || seconds === null || seconds < 0) return "-";
  const h = Math.floor(seconds / 3600), m = Math.floor((seconds % 3600) / 60), s = Math.floor(seconds % 60);
  return (h ? h + "h " : "") + (h || m ? m + "m " : "") + s + "s";
}
function text(parent, tag, value, cls) {
  const e = document.createElement(tag);
  e.textContent = value;
  if (cls) e.className = cls;
  parent.appendChild(e);
  return e;
}
function pairs(dl, entries) {
  dl.replaceChildren();
  for (const [k, v] of entries) { text(dl, "dt", k); text(dl, "dd", v).dataset.key = k; }
}
function rows(table, list, cells) {
  const body = table.tBodies[0];
  body.replaceChildren();
  for (const item of list) {
    const tr = document.createElement("tr");
    for (const c of cells(item)) text(tr, "td", c);
    body.appendChild(tr);
  }
  if (!list.length) text(text(body, "tr", ""), "td", "none", "muted").colSpan = table.tHead.rows[0].cells.length;
}

function drawHeatmap() {
  const canvas = $("heatmap");
  const states = heatmap.states;
  const width = canvas.clientWidth || 1200;
  const cell = states.length > 4000 ? 4 : states.length > 800 ? 8 : states.length > 200 ? 14 : 22;
  const perRow = Math.max(1, Math.floor(width / cell));
  canvas.width = perRow * cell;
  canvas.height = Math.max(cell, Math.ceil(states.length / perRow) * cell);
  canvas.style.height = (canvas.height * (canvas.clientWidth || canvas.width) / canvas.width) + "px";
  const g = canvas.getContext("2d");
  g.clearRect(0, 0, canvas.width, canvas.height);
  for (let i = 0; i < states.length; i++) {
    g.fillStyle = COLORS[states[i]] || "#000";
    g.fillRect((i % perRow) * cell, Math.floor(i / perRow) * cell, cell - (cell > 4 ? 1 : 0), cell - (cell > 4 ? 1 : 0));
  }
  canvas.dataset.cell = cell;
  canvas.dataset.perRow = perRow;
}

function slotName(index) {
  // key ranges, the last first: the index-th is that many ranges below it
  const r = /^r(\d{6})$/.exec(heatmap.newest);
  if (r) return "r" + String(+r[1] - index).padStart(6, "0");
  // slots are hours, newest first: the index-th is that many hours before the newest
  const m = /^(\d{4})(\d{2})(\d{2})\.(\d{2})$/.exec(heatmap.newest);
  if (!m) return "#" + index;
  const t = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4]) - index * 3600e3;
  const d = new Date(t);
  const p = (n) => String(n).padStart(2, "0");
  return d.getUTCFullYear() + p(d.getUTCMonth() + 1) + p(d.getUTCDate()) + "." + p(d.getUTCHours());
}

function legend(state) {
  const ul = $("legend");
  ul.replaceChildren();
  const counts = {};
  for (const c of heatmap.states) counts[c] = (counts[c] || 0) + 1;
  for (const name of ORDER) {
    const letter = Object.keys(state.heatmap.legend).find((k) => state.heatmap.legend[k] === name);
    const li = text(ul, "li", name + " " + num(counts[letter] || 0));
    li.dataset.state = name;
    li.dataset.count = counts[letter] || 0;
  }
}

// "now" is the live figure the panels show (current, in the chart's unit), not the last sample: samples are 10 s
// apart, and none is written once a copy has ended, so the last one can be an hour old
function chart(id, samples, column, scale, unit, current, generatedMs) {
  const svg = $(id);
  svg.replaceChildren();
  const note = $(id + "-note");
  if (samples.length < 2) { note.textContent = "no samples yet"; return; }
  const t0 = samples[0][0], t1 = samples[samples.length - 1][0];
  const values = samples.map((s) => s[column] / scale);
  const max = Math.max(1e-9, ...values);
  const points = samples.map((s, i) =>
    ((s[0] - t0) / Math.max(1, t1 - t0) * 300).toFixed(1) + "," + (100 - (values[i] / max) * 95).toFixed(1));
  const line = document.createElementNS("http://www.w3.org/2000/svg", "polyline");
  line.setAttribute("points", points.join(" "));
  svg.appendChild(line);
  const now = current === undefined || current === null || isNaN(current) ? values[values.length - 1] : current;
  const age = (generatedMs - t1) / 1000;
  note.textContent = "now " + num(Math.round(now * 10) / 10) + unit
    + ", max " + num(Math.round(max * 10) / 10) + unit + " over " + duration((t1 - t0) / 1000)
    + (age > 30 ? "; last sample " + duration(age) + " ago" : "");
}

// the applications' shadow reads of a scope over the last hour (Router.read): empty while none is sampled or counted
function shadowReads(sc) {
  const r = sc.shadowReads;
  if (!r || !r.lastHour) return "";
  const h = r.lastHour, compared = h.match + h.mismatch;
  if (!r.sample && !compared && !h.error && !h.skipped) return "";
  const rest = (h.error ? ", " + num(h.error) + " errors" : "") + (h.skipped ? ", " + num(h.skipped) + " skipped" : "");
  return compared
    ? (100 * r.matchRate).toFixed(2) + "% match (" + num(h.match) + " of " + num(compared) + " in the last hour" + rest
        + ", sample " + r.sample + ")"
    : "none compared in the last hour (sample " + r.sample + rest + ")";
}

function render(s) {
  $("error").hidden = true;
  $("tables").textContent = s.sourceTable + " \u2192 " + s.targetTable + " (prefix " + s.prefix + ")";
  $("status").textContent = s.status;
  $("status").className = "badge " + s.status;
  $("updated").textContent = "updated " + new Date(s.generatedMs).toISOString().replace(".000", "");
  const r = s.rows || {}, sl = s.slots || {};
  pairs($("copy"), [
    ["rows copied", num(r.copied) + (r.estimatedTotal > 0 ? " of ~" + num(r.estimatedTotal) : "")],
    ["rows/s", num(r.perSecond)],
    ["ETA", duration(r.etaSeconds)],
    ["slots", num(sl.finished) + " finished, " + num(sl.inProgress) + " copying, " + num(sl.left) + " waiting of " + num(sl.total)],
    ["rate limit", s.rateLimit > 0 ? num(s.rateLimit) + " rows/s" : "none"],
    ["processes", num((s.processes || []).length)],
  ]);
  const t = s.tail || {};
  pairs($("tail"), [
    ["running", t.running ? "yes, " + (t.leaseHolder || "") : "no"],
    ["lag", t.lag_ms === undefined ? "-" : num(t.lag_ms) + " ms"],
    ["applied LSN", t.applied_lsn || "-"],
    ["events/s", num(t.events_per_sec)],
    ["retained WAL", t.retained_bytes === undefined ? "-" : num(Math.round(t.retained_bytes / 1048576)) + " MB"],
  ]);
  const scopes = (s.routing && s.routing.scopes) || [];
  const route = scopes[0] || {};
  // a table moved part by part has a scope per part: one line each
  const routeRows = scopes.length > 1
    ? scopes.map((sc) => [sc.scope, (sc.status || "-") + (sc.epoch === undefined ? "" : ", epoch " + num(sc.epoch))
        + (sc.exclusive ? ", locked by " + sc.exclusive : "")
        + (shadowReads(sc) ? "; shadow reads " + shadowReads(sc) : "")])
    : [
        ["scope", route.scope || "none"],
        ["route", route.status || "SOURCE (no cutover prepared)"],
        ["epoch", route.epoch === undefined ? "-" : num(route.epoch)],
        ["reads / writes", route.read ? route.read + " / " + route.write : "-"],
        ["exclusive lock", route.exclusive || "none"],
        ["shadow reads", shadowReads(route) || "off"],
      ];
  pairs($("route"), routeRows.concat([
    ["reverse stream", (s.routing && s.routing.reverseStream && s.routing.reverseStream.state) || "-"],
  ]));
  heatmap = s.heatmap;
  const n = heatmap.states.length;
  $("slot-range").textContent = !n
    ? "no plan yet"
    : /^r\d{6}$/.test(heatmap.newest)
      ? n + " key ranges, " + slotName(0) + " .. " + slotName(n - 1) + ", the last first"
      : n + " slots from " + heatmap.newest + ", newest first";
  legend(s);
  drawHeatmap();
  chart("chart-rate", s.history.copy, 2, 1, " rows/s", r.perSecond, s.generatedMs);
  chart("chart-lag", s.history.tail, 1, 1000, " s", t.running ? t.lag_ms / 1000 : undefined, s.generatedMs);
  chart("chart-wal", s.history.tail, 2, 1048576, " MB",
    t.retained_bytes === undefined ? undefined : t.retained_bytes / 1048576, s.generatedMs);
  const leases = (s.leases || []).map((l) => ["slot " + l.slot, l.holder, num(l.rows) + " rows, last id " + (l.lastId || "-")]);
  if (t.leaseHolder) leases.push(["tail", t.leaseHolder, t.applied_lsn || ""]);
  for (const sc of scopes) if (sc.exclusive) leases.push(["cutover " + sc.scope, sc.exclusive, ""]);
  rows($("leases"), leases, (x) => x);
  $("refused-count").textContent = num(s.refused.count);
  rows($("refused"), s.refused.rows.slice(0, 20), (x) => [x.id, x.slot, x.reason]);
  const c = s.cutover || {};
  $("cutover-summary").textContent = c.op ? c.op + " " + c.status + ", writes blocked " + num(c.blockedMs) + " ms" : "none yet";
  rows($("cutover"), c.steps || [], (x) => [x.step, num(x.ms)]);
  document.body.dataset.loaded = "true";
}

async function refresh() {
  try {
    const response = await fetch("api/state", { cache: "no-store" });
    const body = await response.json();
    if (!response.ok) throw new Error(body.error || response.status);
    render(body);
  } catch (e) {
    $("error").textContent = "cannot read the run's state: " + e.message;
    $("error").hidden = false;
  } finally {
    setTimeout(refresh, REFRESH_MS);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  const css = getComputedStyle(document.documentElement);
  for (const [letter, name] of [["w", "waiting"], ["c", "copying"], ["d", "copied"], ["v", "verified"], ["m", "mismatch"], ["r", "refused"]])
    COLORS[letter] = css.getPropertyValue("--" + name).trim();
  $("heatmap").addEventListener("mousemove", (e) => {
    const c = $("heatmap"), cell = +c.dataset.cell, perRow = +c.dataset.perRow;
    const scale = c.width / c.clientWidth;
    const i = Math.floor(e.offsetY * scale / cell) * perRow + Math.floor(e.offsetX * scale / cell);
    if (i >= 0 && i < heatmap.states.length) {
      const letter = heatmap.states[i];
      $("hovered").textContent = "slot " + slotName(i) + ": " + (heatmap.legend[letter] || letter);
    }
  });
  window.addEventListener("resize", drawHeatmap);
  refresh();
});
