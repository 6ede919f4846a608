"use strict";
// kiln board: the runs table and five views of the ticked runs (scalars as small multiples,
// compare, images, histograms, studies). Plain JavaScript over the board's JSON API; the report
// (kiln report) inlines the same answers as window.KILN_DATA. Every choice a reader makes lives
// in the address's #fragment, so a link reopens the same view.

const colours = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
                 "#17becf", "#7f7f7f", "#bcbd22"];
const dashes = { train: [], val: [6, 4], test: [2, 3] };
const POINTS_PER_TAG = 1000;  // the server thins longer series, keeping their spikes
const TABLE_ROWS = 200;       // rows of the runs table drawn before "show all"

const state = {
  view: "scalars", ticked: [], chosen: null, sort: "", filter: "", tags: "", axis: "step",
  smoothing: 0, log: false, metric: "",
  series: {}, offsets: {}, charts: {}, runsKey: null, runs: [], studiesKey: null, slots: {},
};

// ---- the address: the view's state in location.hash ----------------------------------------

function readAddress() {
  const params = new URLSearchParams(location.hash.replace(/^#/, ""));
  state.view = params.get("view") || "scalars";
  state.ticked = params.getAll("run");
  state.chosen = params.get("chosen");
  state.sort = params.get("sort") || "";
  state.filter = params.get("filter") || "";
  state.tags = params.get("tags") || "";
  state.axis = params.get("x") || "step";
  state.smoothing = Number(params.get("smooth") || 0);
  state.log = params.get("log") === "1";
  state.metric = params.get("metric") || "";
  state.fromAddress = params.has("run");
  state.slots = {};
}

function writeAddress() {
  // The runs in the order of their colours, so that a reload paints each as it was.
  state.slots = colourSlots(state.slots, state.ticked);
  state.ticked.sort((a, b) => state.slots[a] - state.slots[b]);
  const params = new URLSearchParams();
  params.set("view", state.view);
  state.ticked.forEach(run => params.append("run", run));
  if (state.chosen) params.set("chosen", state.chosen);
  for (const [key, value] of [["sort", state.sort], ["filter", state.filter], ["tags", state.tags],
                              ["metric", state.metric]])
    if (value) params.set(key, value);
  if (state.axis !== "step") params.set("x", state.axis);
  if (state.smoothing) params.set("smooth", state.smoothing);
  if (state.log) params.set("log", "1");
  history.replaceState(null, "", "#" + params.toString());
  document.getElementById("copy-link").href = "#" + params.toString();
}

// ---- the API, or the report's copy of its answers ----------------------------------------------

async function api(path, params) {
  if (window.KILN_DATA) return fromReport(path, params || {});
  const query = params instanceof URLSearchParams ? params : new URLSearchParams(params || {});
  const response = await fetch(path + "?" + query.toString());
  if (!response.ok) throw new Error((await response.json()).error || response.statusText);
  return path === "/api/text" ? response.text() : response.json();
}

function fromReport(path, params) {
  const data = window.KILN_DATA;
  const runs = params instanceof URLSearchParams ? params.getAll("run") : [params.run];
  if (path === "/api/runs") return sortedInPage(data.runs);
  if (path === "/api/text") return (data.texts[params.run] || {})[params.name] || null;
  if (path === "/api/images") return data.images[params.run] || { images: [], problems: [] };
  if (path === "/api/histograms") return data.histograms[params.run] || { histograms: [], problems: [] };
  if (path === "/api/details") return { runs: runs.map(r => data.details[r]).filter(Boolean) };
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

function escapeHtml(text) {
  return String(text).replace(/[&<>"]/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
}

function colourOf(run) {
  return colours[(state.slots[run] || 0) % colours.length];
}

// Each ticked run keeps its colour while it stays ticked (unticking another does not repaint
// it): a newly ticked run takes the first colour slot no ticked run holds. Returns run -> slot.
function colourSlots(previous, ticked) {
  const slots = {};
  for (const run of ticked) if (run in previous) slots[run] = previous[run];
  const taken = new Set(Object.values(slots));
  for (const run of ticked) {
    if (run in slots) continue;
    let slot = 0;
    while (taken.has(slot)) ++slot;
    slots[run] = slot;
    taken.add(slot);
  }
  return slots;
}

// ---- the runs table: asked again every 2 s, rebuilt only when something changed --------------

function runsQuery() {
  const params = new URLSearchParams();
  for (const f of state.filter.split(/\s+/).filter(Boolean)) params.append("filter", f);
  if (state.sort) params.append("sort", state.sort);
  return params;
}

// `work` run one at a time: a call while it runs makes it run once more afterwards, so that no
// two ask the server for the same thing at once (a poll from the same offset would add the same
// rows twice) and none asked for is lost.
function oneAtATime(work) {
  let running = false, again = false;
  return async function run() {
    if (running) { again = true; return; }
    running = true;
    try {
      await work();
    } finally {
      running = false;
    }
    if (again) { again = false; run(); }
  };
}

const loadRuns = oneAtATime(() => listRuns());

async function listRuns() {
  let payload;
  try {
    payload = await api("/api/runs", runsQuery());
    document.getElementById("error").textContent = "";
  } catch (e) {
    document.getElementById("error").textContent = e.message;
    return;
  }
  const key = JSON.stringify(payload) + state.ticked.join() + state.chosen;
  if (state.runsKey === key) return;
  state.runsKey = key;
  state.runs = payload.runs;
  drawRunsTable(payload);
  document.getElementById("root-count").textContent = `(${payload.runs.length} runs)`;
  if (!state.tableTimed) {
    state.tableTimed = true;
    console.log(`kiln board: ${payload.runs.length} runs listed ${Math.round(performance.now())} ms after the page was asked for`);
  }
  if (!state.fromAddress && state.ticked.length === 0 && payload.runs.length) {
    state.ticked = payload.runs.slice(0, 3).map(r => r.run);
    state.fromAddress = true;
    state.runsKey = null;
    writeAddress();
    drawRunsTable(payload);
    drawView();
  }
  if (!state.chosen && payload.runs.length) choose(payload.runs[0].run);
}

function drawRunsTable(payload) {
  const head = document.querySelector("#runs thead"), body = document.querySelector("#runs tbody");
  const sortKey = state.sort.replace(/^-/, "");
  head.innerHTML = "<tr><th></th>" + payload.columns.map(c => {
    const sorted = c === sortKey ? ` class="sorted${state.sort.startsWith("-") ? " descending" : ""}"` : "";
    return `<th data-key="${escapeHtml(c)}"${sorted}>${escapeHtml(c)}</th>`;
  }).join("") + "</tr>";
  head.querySelectorAll("th[data-key]").forEach(th => th.onclick = () => {
    state.sort = state.sort === th.dataset.key ? "-" + th.dataset.key : th.dataset.key;
    changed();
  });
  const statusColumn = payload.columns.indexOf("status");
  // A long table is drawn in part (the ticked and chosen runs always): a browser lays out two
  // thousand rows for longer than a reader waits.
  const shown = state.showAll ? payload.runs : payload.runs.filter((run, i) =>
      i < TABLE_ROWS || state.ticked.includes(run.run) || run.run === state.chosen);
  const rows = shown.map(run => {
    const ticked = state.ticked.includes(run.run);
    const classes = [run.problems.length ? "damaged" : "", run.run === state.chosen ? "chosen" : ""];
    const swatch = ticked ? `<span class="swatch" style="background:${colourOf(run.run)}"></span>` : "";
    const cells = run.cells.map((c, i) => i === statusColumn
        ? `<td class="status-${escapeHtml(String(c).split(" ")[0])}">${escapeHtml(c)}</td>`
        : `<td>${escapeHtml(c)}</td>`).join("");
    return `<tr data-run="${escapeHtml(run.run)}" class="${classes.join(" ").trim()}"` +
           (run.problems.length ? ` title="${escapeHtml(run.problems.join("\n"))}"` : "") +
           `><td>${swatch}<input type="checkbox" ${ticked ? "checked" : ""}></td>${cells}</tr>`;
  });
  const hidden = payload.runs.length - shown.length;
  if (hidden > 0)
    rows.push(`<tr class="more"><td colspan="${payload.columns.length + 1}">${hidden} more runs: ` +
              `filter or sort to bring them up, or <a href="#" id="show-all">show all</a></td></tr>`);
  body.innerHTML = rows.join("");
  const showAll = document.getElementById("show-all");
  if (showAll) showAll.onclick = e => { e.preventDefault(); state.showAll = true; state.runsKey = null; loadRuns(); };
  body.querySelectorAll("tr[data-run]").forEach(tr => {
    const run = tr.dataset.run;
    tr.querySelector("input").onchange = e => {
      state.ticked = e.target.checked ? [...state.ticked, run] : state.ticked.filter(r => r !== run);
      changed();
    };
    tr.onclick = e => { if (e.target.tagName !== "INPUT") choose(run); };
  });
}

function choose(run) {
  state.chosen = run;
  document.querySelectorAll("#runs tbody tr").forEach(tr => tr.classList.toggle("chosen", tr.dataset.run === run));
  writeAddress();
  if (state.view === "images" || state.view === "histograms") drawView();
}

// ---- scalars -----------------------------------------------------------------------------------

// Fetches what each ticked run's metrics.csv gained since the last request, and draws.
const poll = oneAtATime(async () => {
  await pollRuns();
  if (state.view === "scalars") drawScalars();
});

async function pollRuns(ask = api) {
  for (const run of state.ticked) {
    const from = state.offsets[run] || 0;
    let payload;
    try {
      payload = await ask("/api/metrics", {run, from, points: POINTS_PER_TAG});
    } catch (e) { continue; }
    // Unticked while this was asked (and so forgotten), the answer continues data no longer kept:
    // kept, a run ticked again would go on from the end of its file with no lines drawn.
    if (!payload || !state.ticked.includes(run) || (state.offsets[run] || 0) !== from) continue;
    if (payload.restart || !state.series[run]) state.series[run] = {};
    for (const [step, epoch, tag, value, wall] of payload.rows)
      (state.series[run][tag] = state.series[run][tag] || []).push({step, epoch, wall, value});
    state.offsets[run] = payload.next;
  }
}

const SPLITS = ["train", "val", "test"];

// "val/loss" -> {split: "val", key: "loss", group: "metrics"}; time/ and system/ tags form groups
// of their own, and a tag of no known split is its own key.
function describeTag(tag) {
  const slash = tag.indexOf("/");
  const head = slash < 0 ? "" : tag.slice(0, slash);
  const split = SPLITS.includes(head) ? head : "";
  const key = split ? tag.slice(slash + 1) : tag;
  const group = key.startsWith("time/") ? "time" : key.startsWith("system/") || head === "system"
              ? "system" : "train / validation";
  return { split: split || "train", key, group };
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

function xOf(point, start) {
  if (state.axis === "relative") return (point.wall - start) / 60;
  if (state.axis === "wall") return point.wall;
  return point[state.axis];
}

function axisTitle() {
  return { step: "step", epoch: "epoch", wall: "wall time", relative: "minutes since start" }[state.axis];
}

// The charts to draw: key -> {group, lines: [{run, split, tag, points}]}.
function chartsWanted() {
  let pattern = null;
  try { pattern = state.tags ? new RegExp(state.tags) : null; } catch (e) { pattern = null; }
  const charts = {};
  for (const run of state.ticked)
    for (const [tag, points] of Object.entries(state.series[run] || {})) {
      if (pattern && !pattern.test(tag)) continue;
      const { split, key, group } = describeTag(tag);
      const chart = charts[key] = charts[key] || { group, lines: [] };
      chart.lines.push({ run, split, tag, points });
    }
  return charts;
}

function datasetsOf(chart) {
  return chart.lines.map(line => {
    const ys = smooth(line.points.map(p => p.value), state.smoothing);
    const start = line.points.length ? line.points[0].wall : 0;
    const colour = colourOf(line.run);
    return { label: `${line.run} ${line.split}`, run: line.run, split: line.split,
             data: line.points.map((p, j) => ({ x: xOf(p, start), y: ys[j] })),
             borderColor: colour, backgroundColor: colour, borderDash: dashes[line.split] || [],
             // A line needs two points: a series of one is drawn as its point.
             borderWidth: 1.5, pointRadius: line.points.length === 1 ? 3 : 0, tension: 0 };
  });
}

function chartOptions(key) {
  const wall = state.axis === "wall";
  return { animation: false, maintainAspectRatio: false, parsing: false, normalized: true,
    // Chart.js draws at most a few points per pixel column, each column's extremes kept.
    plugins: { legend: { display: false }, tooltip: { enabled: false },
               decimation: { enabled: true, algorithm: "min-max" } },
    scales: { x: { type: "linear", title: { display: true, text: axisTitle() },
                   ticks: wall ? { callback: v => new Date(v * 1000).toLocaleTimeString() } : {} },
              y: { type: state.log ? "logarithmic" : "linear", title: { display: true, text: key } } } };
}

function drawScalars() {
  const box = document.getElementById("scalars-view");
  if (!box.querySelector(".line-key"))
    box.insertAdjacentHTML("afterbegin", '<p class="line-key axis-note">Each run in its colour: ' +
        'training solid, validation dashed, test dotted. Hover over a chart for every line\'s value.</p>');
  const wanted = chartsWanted();
  const keys = Object.keys(wanted).sort();
  // Charts of tags no longer wanted go; the others are updated in place.
  for (const key of Object.keys(state.charts))
    if (!wanted[key]) {
      if (state.charts[key].chart) state.charts[key].chart.destroy();
      state.charts[key].card.remove();
      delete state.charts[key];
    }
  const groups = {};
  for (const key of keys) (groups[wanted[key].group] = groups[wanted[key].group] || []).push(key);
  for (const name of ["train / validation", "time", "system"]) {
    let section = box.querySelector(`.group[data-group="${name}"]`);
    if (!groups[name]) { if (section) section.remove(); continue; }
    if (!section) {
      section = document.createElement("div");
      section.className = "group";
      section.dataset.group = name;
      section.innerHTML = `<h3>${name}</h3><div class="grid"></div>`;
      box.appendChild(section);
    }
    const grid = section.querySelector(".grid");
    for (const key of groups[name]) drawChart(key, wanted[key], grid);
  }
  box.dataset.charts = keys.length;
  if (!keys.length) box.dataset.empty = "1"; else delete box.dataset.empty;

}

// A chart's card at once; its Chart.js chart only once the card is on screen (a run logs dozens
// of values, and a browser draws a chart in tens of milliseconds), then kept up to date.
function drawChart(key, wanted, grid) {
  const datasets = datasetsOf(wanted);
  let entry = state.charts[key];
  if (!entry) {
    const card = document.createElement("div");
    card.className = "chart-card";
    card.dataset.key = key;
    card.innerHTML = `<header><span class="title">${escapeHtml(key)}</span>` +
        `<button class="png">PNG</button><button class="csv">CSV</button></header>` +
        `<div class="chart-box"><canvas></canvas></div><div class="readout"></div>`;
    grid.appendChild(card);
    entry = state.charts[key] = { card, chart: null, key };
    card.querySelector(".png").onclick = () => entry.chart && download(`${key}.png`, entry.chart.toBase64Image());
    card.querySelector(".csv").onclick = () => download(`${key}.csv`, csvUrl(entry.lines));
    card.querySelector("canvas").onmousemove = e => entry.chart && readout(entry, e);
    onScreen(card, () => { entry.visible = true; updateChart(entry); });
  }
  entry.lines = wanted.lines;
  entry.datasets = datasets;
  entry.card.dataset.points = datasets.reduce((n, d) => n + d.data.length, 0);
  entry.card.dataset.lines = datasets.length;
  updateChart(entry);
}

function updateChart(entry) {
  if (!entry.visible) return;
  if (!entry.chart) {
    entry.chart = new Chart(entry.card.querySelector("canvas"),
                            { type: "line", data: { datasets: entry.datasets }, options: chartOptions(entry.key) });
    entry.card.dataset.drawn = "1";
    // Once, after the first charts on screen are drawn: how long the page took
    // (benchmarks/board_scale.sh); the others on screen are drawn in the same task.
    if (!state.timed) {
      state.timed = true;
      setTimeout(() => console.log(
          `kiln board: charts drawn ${Math.round(performance.now())} ms after the page was asked for`));
    }
    return;
  }
  entry.chart.data.datasets = entry.datasets;
  entry.chart.options = chartOptions(entry.key);
  entry.chart.update();
}

// Calls `then` once `element` comes within a screen's height of the view (at once where the
// browser cannot tell).
function onScreen(element, then) {
  if (typeof IntersectionObserver === "undefined") return then();
  const observer = new IntersectionObserver(entries => {
    if (!entries.some(e => e.isIntersecting)) return;
    observer.disconnect();
    then();
  }, { rootMargin: "100% 0px" });
  observer.observe(element);
}

// Every line's value at the x under the pointer (its nearest point), as the hover shows it.
function readout(entry, event) {
  const chart = entry.chart, x = chart.scales.x.getValueForPixel(event.offsetX);
  const parts = chart.data.datasets.map(d => {
    if (!d.data.length) return "";
    let low = 0, high = d.data.length - 1;
    while (high - low > 1) { const mid = (low + high) >> 1; if (d.data[mid].x < x) low = mid; else high = mid; }
    const near = Math.abs(d.data[low].x - x) <= Math.abs(d.data[high].x - x) ? d.data[low] : d.data[high];
    return `<span style="color:${d.borderColor}">${escapeHtml(d.label)}: ${Number(near.y.toPrecision(5))}</span>`;
  });
  entry.card.querySelector(".readout").innerHTML =
      `${escapeHtml(axisTitle())} ${Number(x.toPrecision(5))}: ` + parts.filter(Boolean).join(" &nbsp; ");
}

// A chart's points as CSV, unsmoothed: a row per point of each line, cells quoted where needed.
function csvText(lines) {
  const rows = ["run,split,tag,step,epoch,wall_time,value"];
  for (const line of lines)
    for (const p of line.points)
      rows.push([line.run, line.split, line.tag, p.step, p.epoch, p.wall, p.value]
                .map(v => /[",\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : v).join(","));
  return rows.join("\n") + "\n";
}

function csvUrl(lines) {
  return "data:text/csv;charset=utf-8," + encodeURIComponent(csvText(lines));
}

function download(name, url) {
  const link = document.createElement("a");
  link.href = url;
  link.download = name.replace(/[\/\\]/g, "_");
  document.body.appendChild(link);
  link.click();
  link.remove();
}

// ---- compare: the ticked runs' configs where they differ, notes, parallel coordinates ---------

async function drawCompare() {
  const box = document.getElementById("compare-view");
  if (state.ticked.length === 0) { box.innerHTML = "<p>Tick runs in the table to compare them.</p>"; return; }
  const params = new URLSearchParams();
  state.ticked.forEach(r => params.append("run", r));
  let details;
  try { details = (await api("/api/details", params)).runs; } catch (e) { box.innerHTML = `<p class="problem">${escapeHtml(e.message)}</p>`; return; }
  // A run whose config cannot be read would make every key differ: it is named apart instead.
  const unreadable = details.filter(d => !Object.keys(d.hparams).length);
  const skipped = unreadable.map(d => `<p class="problem">${escapeHtml(d.run)} is left out: ` +
      `${escapeHtml(d.problems.join("; ") || "it has no config")}</p>`).join("");
  details = details.filter(d => Object.keys(d.hparams).length);
  const keys = [...new Set(details.flatMap(d => Object.keys(d.hparams)))].sort();
  const shown = v => v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v);
  const differing = keys.filter(k => new Set(details.map(d => shown(d.hparams[k]))).size > 1);
  const head = "<tr><th>config</th>" + details.map(d =>
      `<th><span class="swatch" style="background:${colourOf(d.run)}"></span>${escapeHtml(d.run)}</th>`).join("") + "</tr>";
  const rows = differing.map(k => `<tr data-key="${escapeHtml(k)}"><td>${escapeHtml(k)}</td>` +
      details.map(d => `<td class="differs">${escapeHtml(shown(d.hparams[k]))}</td>`).join("") + "</tr>");
  const metrics = [...new Set(details.flatMap(d => Object.keys(d.final)))].sort();
  if (!metrics.includes(state.metric))
    state.metric = metrics.find(m => m === "val/accuracy") || metrics.find(m => m === "val/loss") || metrics[0] || "";
  const notes = details.map(d => `<div><h4>${escapeHtml(d.run)}</h4>` +
      (d.notes ? `<pre>${escapeHtml(d.notes)}</pre>` : "<p>(no notes)</p>") + "</div>").join("");
  box.innerHTML =
      `<h3>Config: the ${differing.length} of ${keys.length} keys that differ</h3>` + skipped +
      `<table id="config-diff" class="diff">${head}${rows.join("")}</table>` +
      `<h3>Notes</h3><div class="notes">${notes}</div>` +
      `<h3>Hyper-parameters against <select id="parallel-metric">` +
      metrics.map(m => `<option${m === state.metric ? " selected" : ""}>${escapeHtml(m)}</option>`).join("") +
      `</select></h3><div class="parallel-box"><canvas id="parallel"></canvas></div>`;
  document.getElementById("parallel-metric").onchange = e => { state.metric = e.target.value; changed(); };
  drawParallel(details, differing, state.metric, document.getElementById("parallel"));
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

// One line per run across the differing hyper-parameters to the chosen metric, in its colour.
function drawParallel(details, keys, metric, canvas) {
  if (state.parallel) state.parallel.destroy();
  const runs = details.filter(d => d.final[metric] !== undefined);
  const scales = keys.map(k => {
    const values = runs.map(d => d.hparams[k]).filter(v => v !== undefined);
    const positive = values.every(v => typeof v === "number" && v > 0);
    const spread = positive && Math.max(...values) / Math.min(...values) >= 100;
    return axisScale(values, spread);
  });
  const valueScale = axisScale(runs.map(d => d.final[metric]), false);
  const datasets = runs.map(d => ({
    label: d.run, data: [...scales.map((s, j) => s.at(d.hparams[keys[j]])), valueScale.at(d.final[metric])],
    borderColor: colourOf(d.run), backgroundColor: colourOf(d.run), borderWidth: 2, pointRadius: 3 }));
  state.parallel = new Chart(canvas, { type: "line",
    data: { labels: [...keys, metric].map((name, j) => [name, [...scales, valueScale][j].span]), datasets },
    options: { animation: false, maintainAspectRatio: false,
      scales: { y: { min: 0, max: 1, ticks: { display: false } } },
      plugins: { legend: { position: "bottom" } } } });
  canvas.dataset.lines = datasets.length;
  canvas.dataset.axes = keys.length + 1;
}

// ---- images and histograms of the chosen run ---------------------------------------------------

async function drawImages() {
  const box = document.getElementById("images-view");
  if (!state.chosen) { box.innerHTML = "<p>Choose a run in the table.</p>"; return; }
  let images = { images: [], problems: [] };
  try { images = await api("/api/images", {run: state.chosen}); } catch (e) { images.problems.push(e.message); }
  const order = tag => tag.endsWith("confusion_matrix") ? 0 : tag.endsWith("misclassified") ? 1 : 2;
  const sorted = [...images.images].sort((a, b) => order(a.tag) - order(b.tag) || a.tag.localeCompare(b.tag));
  box.innerHTML = `<h3>${escapeHtml(state.chosen)}: its last validation's images</h3><div class="gallery">` +
      sorted.map(image => `<figure class="image" data-tag="${escapeHtml(image.tag)}">` +
        `<figcaption>${escapeHtml(image.tag)} (step ${image.step})</figcaption>` +
        `<img alt="${escapeHtml(image.tag)}" src="data:image/png;base64,${image.png}"></figure>`).join("") +
      "</div>" + images.problems.map(p => `<p class="problem">${escapeHtml(p)}</p>`).join("") +
      (sorted.length || images.problems.length ? "" : "<p>This run logged no images.</p>");
  await drawRunTexts(box);
}

async function drawRunTexts(box) {
  for (const name of ["notes.md", "summary.json", "config.yaml"]) {
    let text = null;
    try { text = await api("/api/text", {run: state.chosen, name}); } catch (e) { }
    if (!text) continue;
    const part = document.createElement("div");
    part.innerHTML = `<h4>${name}</h4><pre>${escapeHtml(text)}</pre>`;
    box.appendChild(part);
  }
}

async function drawHistograms() {
  const box = document.getElementById("histograms-view");
  if (!state.chosen) { box.innerHTML = "<p>Choose a run in the table.</p>"; return; }
  let payload = { histograms: [], problems: [] };
  try { payload = await api("/api/histograms", {run: state.chosen}); } catch (e) { payload.problems.push(e.message); }
  let pattern = null;
  try { pattern = state.tags ? new RegExp(state.tags) : null; } catch (e) { }
  const maps = payload.histograms.filter(h => !pattern || pattern.test(h.tag));
  box.innerHTML = `<h3>${escapeHtml(state.chosen)}: weights and gradients over steps</h3>` +
      `<p class="axis-note">Each column a step (left to right), each row a range of values (low at ` +
      `the bottom); darker: more of the tensor's values.</p><div class="heatmaps">` +
      maps.map((h, i) => `<div><div>${escapeHtml(h.tag)}</div><canvas class="heatmap" id="heat-${i}" ` +
        `data-tag="${escapeHtml(h.tag)}" data-steps="${h.steps.length}"></canvas><div class="axis-note">` +
        `steps ${h.steps[0]} to ${h.steps[h.steps.length - 1]}; values ${Number(h.low.toPrecision(3))} ` +
        `to ${Number(h.high.toPrecision(3))}</div></div>`).join("") + "</div>" +
      payload.problems.map(p => `<p class="problem">${escapeHtml(p)}</p>`).join("") +
      (maps.length || payload.problems.length ? "" : "<p>This run logged no histograms.</p>");
  maps.forEach((h, i) => drawHeatMap(h, document.getElementById(`heat-${i}`)));
}

// A heat map: one column per step, its counts shaded by their share of the step's largest.
function drawHeatMap(map, canvas) {
  canvas.width = 330;
  canvas.height = 160;
  const context = canvas.getContext("2d");
  context.fillStyle = "#fff";
  context.fillRect(0, 0, canvas.width, canvas.height);
  const columns = map.counts.length, bins = columns ? map.counts[0].length : 0;
  const w = canvas.width / Math.max(columns, 1), h = canvas.height / Math.max(bins, 1);
  map.counts.forEach((counts, x) => {
    const most = Math.max(...counts, 1e-12);
    counts.forEach((count, y) => {
      if (count <= 0) return;
      const share = Math.sqrt(count / most);
      context.fillStyle = `rgb(${Math.round(255 - 247 * share)}, ${Math.round(255 - 207 * share)}, ${Math.round(255 - 148 * share)})`;
      context.fillRect(x * w, canvas.height - (y + 1) * h, Math.ceil(w), Math.ceil(h));
    });
  });
}

// ---- studies of kiln tune: each trial's value in order, and their parallel coordinates --------

async function loadStudies() {
  let payload;
  try { payload = await api("/api/studies", {}); } catch (e) { return; }
  const key = JSON.stringify(payload);
  if (state.studiesKey === key) return;
  state.studiesKey = key;
  (state.studyCharts || []).forEach(c => c.destroy());
  state.studyCharts = [];
  const box = document.getElementById("studies");
  box.innerHTML = payload.studies.length ? "<h3>Studies</h3>" : "<p>No study of kiln tune under this root.</p>";
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
  const points = kind => valued.filter(t => t.state === kind).map(t => ({x: t.number, y: t.value}));
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

// ---- wiring --------------------------------------------------------------------------------------

function drawView() {
  document.querySelectorAll("#views button").forEach(b => b.classList.toggle("active", b.dataset.view === state.view));
  const parts = { scalars: "scalars-view", compare: "compare-view", images: "images-view",
                  histograms: "histograms-view", studies: "studies" };
  for (const [view, id] of Object.entries(parts))
    document.getElementById(id).classList.toggle("shown", view === state.view);
  document.getElementById("chart-controls").style.display =
      state.view === "scalars" || state.view === "histograms" ? "" : "none";
  document.body.dataset.view = state.view;
  if (state.view === "scalars") return poll();
  if (state.view === "compare") return drawCompare();
  if (state.view === "images") return drawImages();
  if (state.view === "histograms") return drawHistograms();
  return loadStudies();
}

function showControls() {
  document.getElementById("filter").value = state.filter;
  document.getElementById("tags").value = state.tags;
  document.getElementById("axis").value = state.axis;
  document.getElementById("smoothing").value = state.smoothing;
  document.getElementById("log").checked = state.log;
}

// Something the reader chose changed: the address first, then what it shows.
function changed() { refresh(); }

// Runs no longer ticked are forgotten; their data is asked again if ticked again.
function forgetUnticked() {
  for (const run of Object.keys(state.series))
    if (!state.ticked.includes(run)) { delete state.series[run]; delete state.offsets[run]; }
}

function refresh() {
  writeAddress();
  state.runsKey = null;
  forgetUnticked();
  loadRuns();
  drawView();
}

function wire() {
  document.querySelectorAll("#views button").forEach(b => b.onclick = () => { state.view = b.dataset.view; changed(); });
  document.getElementById("apply").onclick = () => { state.filter = document.getElementById("filter").value; changed(); };
  document.getElementById("filter").onkeydown = e => { if (e.key === "Enter") document.getElementById("apply").onclick(); };
  document.getElementById("tags").oninput = e => { state.tags = e.target.value; changed(); };
  document.getElementById("axis").oninput = e => { state.axis = e.target.value; changed(); };
  document.getElementById("smoothing").oninput = e => { state.smoothing = Number(e.target.value); changed(); };
  document.getElementById("log").oninput = e => { state.log = e.target.checked; changed(); };
  window.onhashchange = () => { readAddress(); showControls(); refresh(); };
}

function start() {
  console.log(`kiln board: script started ${Math.round(performance.now())} ms after the page was asked for`);
  readAddress();
  showControls();
  wire();
  if (window.KILN_DATA) document.querySelector("#runs-side .controls").style.display = "none";
  refresh();
  if (!window.KILN_DATA) setInterval(() => {
    loadRuns();
    if (state.view === "scalars") poll();
    if (state.view === "studies") loadStudies();
  }, 2000);
}

// In a page, the board starts; under node (tests/js/), its pure functions are what is wanted.
if (typeof document !== "undefined") start();
if (typeof module !== "undefined") module.exports = {
  describeTag, smooth, csvText, axisScale, colourSlots, state, pollRuns, forgetUnticked,
};
