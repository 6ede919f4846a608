// The board page's pure functions (kiln/board/web/board.js) under node: how tags are grouped into
// charts, TensorBoard's smoothing, the CSV a chart downloads, how parallel axes place values and
// which colour each ticked run keeps, and how an answer that arrives after its run was unticked
// is dropped.
// Run by ctest as board_js (node tests/js/board_logic_test.js BOARD_JS).
"use strict";
const assert = require("assert");
const board = require(process.argv[2]);

const checks = {
  "tags of a split share a chart; time/ and system/ are groups of their own"() {
    assert.deepStrictEqual(board.describeTag("val/loss"), { split: "val", key: "loss", group: "train / validation" });
    assert.deepStrictEqual(board.describeTag("train/time/data"), { split: "train", key: "time/data", group: "time" });
    assert.deepStrictEqual(board.describeTag("system/peak_rss_mb"),
                           { split: "train", key: "system/peak_rss_mb", group: "system" });
    assert.deepStrictEqual(board.describeTag("val/class/confusion_matrix/true_0/pred_1").key,
                           "class/confusion_matrix/true_0/pred_1");
  },
  "smoothing is TensorBoard's debiased moving average and leaves non-finite values"() {
    assert.deepStrictEqual(board.smooth([1, 2, 3], 0), [1, 2, 3]);
    const smoothed = board.smooth([1, 3], 0.5);
    assert.strictEqual(smoothed[0], 1);  // debiased: the first value is itself
    assert.ok(Math.abs(smoothed[1] - (0.5 * 0.5 + 0.5 * 3) / 0.75) < 1e-12);
    assert.ok(Number.isNaN(board.smooth([1, NaN, 2], 0.5)[1]));
  },
  "a chart's CSV has a row per point, quoting cells that need it"() {
    const text = board.csvText([{ run: "a,b", split: "val", tag: "val/loss",
                                  points: [{ step: 10, epoch: 1, wall: 5.5, value: 0.25 }] }]);
    assert.strictEqual(text, 'run,split,tag,step,epoch,wall_time,value\n"a,b",val,val/loss,10,1,5.5,0.25\n');
  },
  "parallel axes place numbers by value, on a log scale when asked, and choices evenly"() {
    const linear = board.axisScale([1, 3, 2], false);
    assert.strictEqual(linear.at(2), 0.5);
    const log = board.axisScale([0.001, 0.1], true);
    assert.strictEqual(log.at(0.01), 0.5);
    const choices = board.axisScale(["adam", "sgd", "adamw"], false);
    assert.deepStrictEqual(["adam", "adamw", "sgd"].map(choices.at), [0, 0.5, 1]);
    assert.strictEqual(choices.at(undefined), null);
  },
  "a run keeps its colour while ticked; a new one takes the first free colour"() {
    const first = board.colourSlots({}, ["a", "b", "c"]);
    assert.deepStrictEqual(first, { a: 0, b: 1, c: 2 });
    const unticked = board.colourSlots(first, ["b", "c"]);
    assert.deepStrictEqual(unticked, { b: 1, c: 2 });
    assert.deepStrictEqual(board.colourSlots(unticked, ["b", "c", "d", "e"]), { b: 1, c: 2, d: 0, e: 3 });
  },
  async "a run unticked while its data was asked and ticked again is asked from its start"() {
    const state = board.state;
    Object.assign(state, { ticked: ["a"], offsets: { a: 100 }, series: { a: { "val/loss": [{ step: 1, value: 1 }] } } });
    const asked = [];
    let answer;
    const polling = board.pollRuns((path, params) => {
      asked.push(params.from);
      return new Promise(resolve => answer = resolve);
    });
    state.ticked = [];  // the reader unticks it while the answer is on its way
    board.forgetUnticked();
    answer({ rows: [], next: 100 });
    await polling;
    assert.deepStrictEqual(state.series, {}, "the late answer is not kept");
    state.ticked = ["a"];
    await board.pollRuns((path, params) => {
      asked.push(params.from);
      return Promise.resolve({ rows: [[1, 0, "val/loss", 0.5, 7], [2, 0, "val/loss", 0.4, 8]], next: 130 });
    });
    assert.deepStrictEqual(asked, [100, 0]);
    assert.strictEqual(state.series.a["val/loss"].length, 2);
    assert.strictEqual(state.offsets.a, 130);
  },
};

(async () => {
let failed = 0;
for (const [name, check] of Object.entries(checks)) {
  try {
    await check();
    console.log(`ok   ${name}`);
  } catch (e) {
    failed += 1;
    console.log(`FAIL ${name}\n${e.stack}`);
  }
}
process.exit(failed ? 1 : 0);
})();
