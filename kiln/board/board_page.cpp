#include "kiln/board/board_page.h"

namespace kiln::board {
namespace {

// Plain HTML, CSS and JavaScript: no framework, nothing fetched from outside the server.
constexpr const char* kPage = R"PAGE(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>kiln board</title>
<style>
  body { font: 14px sans-serif; margin: 0; color: #222; }
  header { background: #2b2b2b; color: #eee; padding: 8px 16px; font-weight: bold; }
  main { display: grid; grid-template-columns: minmax(420px, 1fr) 1fr; gap: 12px; padding: 12px; }
  section { min-width: 0; overflow-x: auto; }
  table { border-collapse: collapse; width: 100%; font-size: 12px; }
  th, td { border-bottom: 1px solid #ddd; padding: 3px 6px; text-align: left; white-space: nowrap; }
  th { cursor: pointer; background: #f3f3f3; }
  tr.damaged td { color: #a33; }
  tr.chosen td { background: #eef4ff; }
  .controls { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin-bottom: 8px; }
  .controls input[type=text] { width: 260px; }
  #chart-box { position: relative; height: 360px; }
  pre { background: #f7f7f7; padding: 8px; max-height: 300px; overflow: auto; font-size: 12px; }
  #error, .problem { color: #a33; }
  #detail img { image-rendering: pixelated; max-width: 100%; }
  #studies { padding: 0 12px 12px; }
  .study-charts { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
  .study-box { position: relative; height: 280px; }
</style>
<script src="chart.js"></script>
</head>
<body>
<header>kiln board <span id="root-count"></span></header>
<main>
<section>
  <div class="controls">
    <label>filter <input id="filter" type="text" placeholder="status=finished val/accuracy>0.9"></label>
    <button id="apply">apply</button> <span id="error"></span>
  </div>
  <table id="runs"><thead></thead><tbody></tbody></table>
</section>
<section>
  <div class="controls">
    <label>value <select id="metric"></select></label>
    <label>x <select id="axis"><option>step</option><option>epoch</option><option value="wall">wall time</option></select></label>
    <label>smoothing <input id="smoothing" type="range" min="0" max="0.99" step="0.01" value="0"></label>
    <label><input id="log" type="checkbox"> log scale</label>
  </div>
  <div id="chart-box"><canvas id="chart"></canvas></div>
  <h3 id="detail-title"></h3>
  <div id="detail"></div>
</section>
</main>
<section id="studies"></section>
<script>
"use strict";
const state = { sort: "", ticked: new Set(), series: {}, offsets: {}, chosen: null, chart: null };
const colours = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
                 "#17becf", "#7f7f7f", "#bcbd22"];

// The report (kiln report) inlines its data as window.KILN_DATA; the board asks its server.
async function api(path, params) {
  params = params || {};
  if (window.KILN_DATA) return fromReport(path, params);
  const query = new URLSearchParams(params);
  const response = await fetch(path + "?" + query.toString());
  if (!response.ok) throw new Error((await response.json()).error || response.statusText);
  return path === "/api/text" ? response.text() : response.json();
}

function fromReport(path, params) {
  const data = window.KILN_DATA;
  if (path === "/api/runs") return sortedInPage(data.runs);
  if (path === "/api/text") return (data.texts[params.run] || {})[params.name] || null;
  if (path === "/api/images") return data.images[params.run] || { images: [], problems: [] };
  if (path === "/api/studies") return data.studies || { studies: [] };
  if (Number(params.from) > 0) return { rows: [], next: Number(params.from), restart: false };
  return data.metrics[params.run];
}

// The report has no server to sort for it: rows are sorted here, numbers as numbers.
function sortedInPage(payload) {
  if (!state.sort) return payload;
  const descending = state.sort.startsWith("-"), key = state.sort.replace(/^-/, "");
  const column = payload.columns.indexOf(key);
  const value = run => { const c = run.cells[column]; return c === "" || isNaN(c) ? c : Number(c); };
  const runs = [...payload.runs].sort((a, b) => {
    const x = value(a), y = value(b);
    if (x === "" || y === "") return x === "" ? 1 : -1;
    return (x < y ? -1 : x > y ? 1 : 0) * (descending ? -1 : 1);
  });
  return { ...payload, runs };
}

function filterParams() {
  const params = new URLSearchParams();
  for (const f of document.getElementById("filter").value.split(/\s+/).filter(Boolean))
    params.append("filter", f);
  if (state.sort) params.append("sort", state.sort);
  return params;
}

async function loadRuns() {
  let payload;
  try {
    payload = await api("/api/runs", filterParams());
    document.getElementById("error").textContent = "";
  } catch (e) {
    document.getElementById("error").textContent = e.message;
    return;
  }
  // Asked again every 2 s: the table is rebuilt only when a run, a step or a value changed, so a
  // reader's scroll and ticks stay as they are.
  const key = JSON.stringify(payload);
  if (state.runsKey === key) return;
  state.runsKey = key;
  const head = document.querySelector("#runs thead"), body = document.querySelector("#runs tbody");
  head.innerHTML = "<tr><th></th>" + payload.columns.map(c => `<th data-key="${c}">${c}</th>`).join("") + "</tr>";
  head.querySelectorAll("th[data-key]").forEach(th => th.onclick = () => {
    const key = th.dataset.key;
    state.sort = state.sort === key ? "-" + key : key;
    state.runsKey = null;
    loadRuns();
  });
  body.innerHTML = "";
  for (const run of payload.runs) {
    const row = document.createElement("tr");
    row.dataset.run = run.run;
    if (run.problems.length) { row.className = "damaged"; row.title = run.problems.join("\n"); }
    if (run.run === state.chosen) row.classList.add("chosen");
    const box = `<td><input type="checkbox" ${state.ticked.has(run.run) ? "checked" : ""}></td>`;
    row.innerHTML = box + run.cells.map(c => `<td>${escapeHtml(c)}</td>`).join("");
    row.querySelector("input").onchange = e => {
      if (e.target.checked) state.ticked.add(run.run); else state.ticked.delete(run.run);
      poll();
    };
    row.onclick = e => { if (e.target.tagName !== "INPUT") choose(run.run); };
    body.appendChild(row);
  }
  document.getElementById("root-count").textContent = `(${payload.runs.length} runs)`;
  if (!state.chosen && payload.runs.length) choose(payload.runs[0].run);
  if (state.ticked.size === 0 && payload.runs.length) {
    payload.runs.slice(0, 3).forEach(r => state.ticked.add(r.run));
    body.querySelectorAll("tr").forEach((tr, i) => { if (i < 3) tr.querySelector("input").checked = true; });
    poll();
  }
}

function escapeHtml(text) {
  return String(text).replace(/[&<>"]/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
}

// Fetches what metrics.csv gained since the last request, for every ticked run.
async function poll() {
  for (const run of state.ticked) {
    const from = state.offsets[run] || 0;
    let payload;
    try { payload = await api("/api/metrics", {run: run, from: from}); } catch (e) { continue; }
    if (!payload) continue;
    if (payload.restart || !state.series[run]) state.series[run] = {};
    for (const [step, epoch, tag, value, wall] of payload.rows)
      (state.series[run][tag] = state.series[run][tag] || []).push({step, epoch, wall, value});
    state.offsets[run] = payload.next;
  }
  updateMetrics();
  draw();
}

function updateMetrics() {
  const select = document.getElementById("metric"), tags = new Set();
  for (const run of state.ticked) Object.keys(state.series[run] || {}).forEach(t => tags.add(t));
  const sorted = [...tags].sort(), current = select.value;
  if (sorted.join() === [...select.options].map(o => o.value).join()) return;
  select.innerHTML = sorted.map(t => `<option>${t}</option>`).join("");
  select.value = sorted.includes(current) ? current
               : sorted.find(t => t === "val/loss") || sorted.find(t => t === "train/loss") || sorted[0];
}

// Exponential moving average as TensorBoard's smoothing slider does it, debiased at the start.
function smooth(values, weight) {
  let last = 0, count = 0;
  return values.map(v => {
    if (!isFinite(v)) return v;
    last = last * weight + (1 - weight) * v;
    count += 1;
    return weight > 0 ? last / (1 - Math.pow(weight, count)) : v;
  });
}

function draw() {
  const tag = document.getElementById("metric").value, axis = document.getElementById("axis").value;
  const weight = Number(document.getElementById("smoothing").value);
  const datasets = [...state.ticked].map((run, i) => {
    const points = (state.series[run] || {})[tag] || [];
    const ys = smooth(points.map(p => p.value), weight);
    const start = points.length ? points[0].wall : 0;
    const x = p => axis === "wall" ? (p.wall - start) / 60 : p[axis];
    return { label: run, data: points.map((p, j) => ({x: x(p), y: ys[j]})),
             borderColor: colours[i % colours.length], backgroundColor: colours[i % colours.length],
             // A line needs two points: a series of one is drawn as its point.
             borderWidth: 2, pointRadius: points.length === 1 ? 3 : 0, tension: 0 };
  });
  const scales = { x: { type: "linear", title: { display: true, text: axis === "wall" ? "minutes" : axis } },
                   y: { type: document.getElementById("log").checked ? "logarithmic" : "linear",
                        title: { display: true, text: tag } } };
  if (!state.chart) {
    state.chart = new Chart(document.getElementById("chart"),
      { type: "line", data: { datasets }, options: { animation: false, maintainAspectRatio: false, scales,
        plugins: { legend: { position: "bottom" } } } });
  } else {
    state.chart.data.datasets = datasets;
    state.chart.options.scales = scales;
    state.chart.update();
  }
  document.getElementById("chart").dataset.points =
      datasets.reduce((n, d) => n + d.data.length, 0);
}

async function choose(run) {
  state.chosen = run;
  document.querySelectorAll("#runs tbody tr").forEach(tr => tr.classList.toggle("chosen", tr.dataset.run === run));
  document.getElementById("detail-title").textContent = run;
  const parts = [];
  for (const name of ["notes.md", "summary.json", "config.yaml"]) {
    let text = null;
    try { text = await api("/api/text", {run: run, name: name}); } catch (e) { }
    if (text) parts.push(`<h4>${name}</h4><pre>${escapeHtml(text)}</pre>`);
  }
  let images = { images: [], problems: [] };
  try { images = await api("/api/images", {run: run}); } catch (e) { }
  for (const image of images.images)
    parts.push(`<h4>${escapeHtml(image.tag)} (step ${image.step})</h4>` +
               `<img alt="${escapeHtml(image.tag)}" src="data:image/png;base64,${image.png}">`);
  for (const problem of images.problems) parts.push(`<p class="problem">${escapeHtml(problem)}</p>`);
  document.getElementById("detail").innerHTML = parts.join("");
}

// Studies of `kiln tune`: each trial's value in the order the trials ran (with the best so far),
// and the trials' parameters and value as parallel coordinates (each axis scaled to its
// trials' range, on a log scale where the parameter is drawn on one; a choice's values evenly).
async function loadStudies() {
  let payload;
  try { payload = await api("/api/studies", {}); } catch (e) { return; }
  const key = JSON.stringify(payload);
  if (state.studiesKey === key) return;
  state.studiesKey = key;
  (state.studyCharts || []).forEach(c => c.destroy());
  state.studyCharts = [];
  const box = document.getElementById("studies");
  box.innerHTML = payload.studies.length ? "<h3>Studies</h3>" : "";
  payload.studies.forEach((study, i) => {
    const part = document.createElement("div");
    part.className = "study";
    part.dataset.study = study.study;
    if (study.problem) {
      part.innerHTML = `<h4>${escapeHtml(study.study)}</h4><p class="problem">${escapeHtml(study.problem)}</p>`;
      box.appendChild(part);
      return;
    }
    part.innerHTML = `<h4>${escapeHtml(study.study)}: ${escapeHtml(studySummary(study))}</h4>` +
        `<div class="study-charts"><div class="study-box"><canvas id="study-values-${i}"></canvas></div>` +
        `<div class="study-box"><canvas id="study-parallel-${i}"></canvas></div></div>`;
    box.appendChild(part);
    drawStudyValues(study, document.getElementById(`study-values-${i}`));
    drawStudyParallel(study, document.getElementById(`study-parallel-${i}`));
  });
}

function better(a, b, mode) { return mode === "max" ? a > b : a < b; }

function studySummary(study) {
  const counts = {};
  study.trials.forEach(t => counts[t.state] = (counts[t.state] || 0) + 1);
  let best = null;
  for (const t of study.trials)
    if (t.state === "complete" && t.value !== null && (!best || better(t.value, best.value, study.mode))) best = t;
  const states = Object.entries(counts).map(([s, n]) => `${n} ${s}`).join(", ");
  return `${study.metric} (${study.mode}), ${study.trials.length} trials (${states})` +
         (best ? `, best: trial ${best.number}, ${study.metric} ${best.value}` : "");
}

function drawStudyValues(study, canvas) {
  const valued = study.trials.filter(t => t.value !== null);
  const points = state => valued.filter(t => t.state === state).map(t => ({x: t.number, y: t.value}));
  let best = null;
  const bestSoFar = [];
  for (const t of study.trials.filter(t => t.state === "complete" && t.value !== null)) {
    if (best === null || better(t.value, best, study.mode)) best = t.value;
    bestSoFar.push({x: t.number, y: best});
  }
  const datasets = [
    { type: "scatter", label: "complete", data: points("complete"), backgroundColor: colours[0], pointRadius: 4 },
    { type: "scatter", label: "pruned", data: points("pruned"), backgroundColor: "#999", pointRadius: 4 },
    { type: "line", label: "best so far", data: bestSoFar, borderColor: colours[1], stepped: true,
      pointRadius: 0, borderWidth: 2 }];
  state.studyCharts.push(new Chart(canvas, { type: "scatter", data: { datasets },
    options: { animation: false, maintainAspectRatio: false,
      scales: { x: { title: { display: true, text: "trial" }, ticks: { precision: 0 } },
                y: { title: { display: true, text: study.metric } } },
      plugins: { legend: { position: "bottom" } } } }));
  canvas.dataset.points = valued.length;
}

// Where each value sits on its axis, from 0 to 1 (`at`), and what the axis spans (`span`).
function axisScale(values, log) {
  const numbers = values.filter(v => typeof v === "number");
  if (numbers.length === values.length && numbers.length) {
    const f = v => log && v > 0 ? Math.log10(v) : v;
    const low = Math.min(...numbers.map(f)), high = Math.max(...numbers.map(f));
    const show = v => Number((log ? Math.pow(10, v) : v).toPrecision(3));
    return { at: v => typeof v !== "number" ? null : high > low ? (f(v) - low) / (high - low) : 0.5,
             span: `${show(low)} to ${show(high)}${log ? " (log)" : ""}` };
  }
  const kinds = [...new Set(values.map(v => JSON.stringify(v)))].sort();
  return { at: v => v === undefined ? null : kinds.length > 1 ? kinds.indexOf(JSON.stringify(v)) / (kinds.length - 1) : 0.5,
           span: kinds.join(" | ") };
}

function drawStudyParallel(study, canvas) {
  const trials = study.trials.filter(t => t.value !== null);
  const names = study.parameters.map(p => p.name);
  const scales = study.parameters.map(p =>
      axisScale(trials.map(t => t.values[p.name]).filter(v => v !== undefined), p.log));
  const valueScale = axisScale(trials.map(t => t.value), false);
  const datasets = trials.map(t => {
    const quality = study.mode === "max" ? valueScale.at(t.value) : 1 - valueScale.at(t.value);
    const shade = Math.round(200 - 170 * quality);
    return { label: `trial ${t.number}`,
             data: [...scales.map((s, j) => s.at(t.values[names[j]])), valueScale.at(t.value)],
             borderColor: t.state === "pruned" ? "#bbb" : `rgb(${shade}, ${shade}, 230)`,
             borderWidth: 2, pointRadius: 2, spanGaps: false };
  });
  state.studyCharts.push(new Chart(canvas, { type: "line",
    data: { labels: [...names, study.metric].map((name, j) => [name, [...scales, valueScale][j].span]),
            datasets },
    options: { animation: false, maintainAspectRatio: false,
      scales: { y: { min: 0, max: 1, ticks: { display: false } } },
      plugins: { legend: { display: false } } } }));
  canvas.dataset.lines = datasets.length;
}

if (window.KILN_DATA) document.querySelector(".controls").style.display = "none";
document.getElementById("apply").onclick = loadRuns;
document.getElementById("filter").onkeydown = e => { if (e.key === "Enter") loadRuns(); };
for (const id of ["metric", "axis", "smoothing", "log"]) document.getElementById(id).oninput = draw;
loadRuns();
loadStudies();
if (!window.KILN_DATA) setInterval(() => { loadRuns(); poll(); loadStudies(); }, 2000);
</script>
</body>
</html>
)PAGE";

}  // namespace

const std::string& board_page() {
  static const std::string page = kPage;
  return page;
}

}  // namespace kiln::board
