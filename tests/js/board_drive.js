// Drives `kiln board` in headless chromium as a user does: ticks and unticks runs, types a tag
// filter, hovers over a chart, downloads it as PNG and CSV, opens each view by its button and
// reloads the page. Prints what it saw as one JSON object; tests/e2e/board_test.cpp checks it.
//
//   node board_drive.js BOARD_URL DOWNLOAD_DIR
"use strict";
const { Chromium } = require("./chromium_pipe.js");

const [url, downloads] = process.argv.slice(2);

const cardKeys = `[...document.querySelectorAll(".chart-card")].map(c => c.dataset.key)`;
const linesOf = key => `Number(document.querySelector('.chart-card[data-key="${key}"]')?.dataset.lines || 0)`;
const tickedRuns = `[...document.querySelectorAll("#runs tbody input:checked")].map(i => i.closest("tr").dataset.run)`;

async function drive(browser) {
  const seen = {};
  await browser.navigate(url);
  await browser.until(`document.querySelector('.chart-card[data-drawn]')`);
  seen.ticked = await browser.evaluate(tickedRuns);
  seen.lossLines = await browser.evaluate(linesOf("loss"));

  // Untick the first trained run: its lines leave every chart.
  const first = seen.ticked.find(run => run.startsWith("board/"));
  await browser.click(`#runs tbody tr[data-run="${first}"] input`);
  await browser.until(`${linesOf("loss")} === ${seen.lossLines - 2}`);
  seen.lossLinesUnticked = await browser.evaluate(linesOf("loss"));
  // And tick it again.
  await browser.click(`#runs tbody tr[data-run="${first}"] input`);
  await browser.until(`${linesOf("loss")} === ${seen.lossLines}`);

  // The pointer over the chart's middle: every line's value at that x, under the chart.
  await browser.until(`document.querySelector('.chart-card[data-key="loss"][data-drawn]')`);
  const centre = await browser.centreOf('.chart-card[data-key="loss"] canvas');
  await browser.movePointer(centre.x, centre.y);
  await browser.until(`document.querySelector('.chart-card[data-key="loss"] .readout').textContent !== ""`);
  seen.readout = await browser.evaluate(
      `document.querySelector('.chart-card[data-key="loss"] .readout').textContent`);

  seen.png = await browser.download('.chart-card[data-key="loss"] button.png');
  seen.csv = await browser.download('.chart-card[data-key="loss"] button.csv');

  // Each view by its button.
  await browser.click('#views button[data-view="compare"]');
  await browser.until(`document.querySelector("#config-diff")`);
  seen.compareKeys = await browser.evaluate(`[...document.querySelectorAll("#config-diff tr[data-key]")].map(r => r.dataset.key)`);
  await browser.click(`#runs tbody tr[data-run="${first}"] td:last-child`);
  await browser.click('#views button[data-view="images"]');
  await browser.until(`document.querySelector("#images-view figure.image img")`);
  seen.imageTags = await browser.evaluate(`[...document.querySelectorAll("#images-view figure.image")].map(f => f.dataset.tag)`);
  await browser.click('#views button[data-view="histograms"]');
  await browser.until(`document.querySelector("#histograms-view canvas.heatmap")`);
  seen.heatMaps = await browser.evaluate(`document.querySelectorAll("#histograms-view canvas.heatmap").length`);

  // Back to the scalars, then a reload: the address brings back the same view.
  await browser.click('#views button[data-view="scalars"]');
  await browser.until(`document.querySelector('.chart-card[data-key="loss"][data-drawn]')`);
  // A tag filter typed in: only the matching charts stay.
  await browser.type("#tags", "^(train|val)/accuracy$");
  await browser.until(`!document.querySelector('.chart-card[data-key="loss"]')`);
  seen.keysFiltered = await browser.evaluate(cardKeys);

  seen.address = await browser.evaluate("location.hash");
  await browser.reload();
  await browser.until(`document.querySelector('.chart-card[data-key="accuracy"][data-drawn]')`);
  seen.addressReloaded = await browser.evaluate("location.hash");
  seen.keysReloaded = await browser.evaluate(cardKeys);
  seen.tagsReloaded = await browser.evaluate(`document.getElementById("tags").value`);
  seen.tickedReloaded = await browser.evaluate(tickedRuns);
  seen.chosenReloaded = await browser.evaluate(`document.querySelector("#runs tbody tr.chosen")?.dataset.run`);
  seen.firstUnticked = first;
  return seen;
}

(async () => {
  const browser = await Chromium.launch(downloads);
  let code = 0;
  try {
    console.log(JSON.stringify(await drive(browser)));
  } catch (e) {
    console.error(`board_drive: ${e.message}`);
    code = 1;
  }
  await browser.close();
  process.exit(code);
})();
