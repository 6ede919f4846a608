// A headless chromium driven through the DevTools protocol over a pipe (`--remote-debugging-pipe`:
// the browser reads commands on its descriptor 3 and writes answers and events on 4, each a JSON
// message ended by a NUL byte), so tests can move the pointer, click, type and reload as a user
// does, with nothing but node and Debian's chromium. Used by board_drive.js.
"use strict";
const { spawn } = require("child_process");

// `promise`, or a rejection saying `what` once `ms` have passed without it settling.
function within(ms, what, promise) {
  let timer;
  const expired = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} after ${ms} ms`)), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

class Chromium {
  // Starts the browser on a blank page with downloads going to `downloads`.
  static async launch(downloads, size = "1400,900") {
    const browser = new Chromium();
    browser.process = spawn("chromium",
        ["--headless", "--no-sandbox", "--disable-gpu", `--window-size=${size}`,
         "--remote-debugging-pipe", "--no-first-run", "about:blank"],
        { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] });
    browser.process.stderr.on("data", d => process.env.CHROMIUM_LOG && process.stderr.write(d));
    browser.commands = browser.process.stdio[3];
    browser.process.stdio[4].on("data", chunk => browser.receive(chunk));
    browser.process.on("exit", code => browser.failAll(new Error(`chromium exited (${code})`)));
    // A context of its own: downloads are allowed per context (the default one cancels them).
    const { browserContextId } = await browser.send("Target.createBrowserContext");
    const { targetId } = await browser.send("Target.createTarget", { url: "about:blank", browserContextId });
    const { sessionId } = await browser.send("Target.attachToTarget", { targetId, flatten: true });
    browser.session = sessionId;
    await browser.send("Browser.setDownloadBehavior",
                       { behavior: "allow", browserContextId, downloadPath: downloads, eventsEnabled: true });
    await browser.page("Page.bringToFront");  // a visible page: its charts draw when on screen
    await browser.page("Page.enable");
    await browser.page("Runtime.enable");
    return browser;
  }

  constructor() {
    this.nextId = 1;
    this.waiting = new Map();
    this.listeners = [];
    this.buffer = Buffer.alloc(0);
  }

  receive(chunk) {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (let end = this.buffer.indexOf(0); end >= 0; end = this.buffer.indexOf(0)) {
      const message = JSON.parse(this.buffer.subarray(0, end).toString("utf8"));
      this.buffer = this.buffer.subarray(end + 1);
      if (message.id && this.waiting.has(message.id)) {
        const { resolve, reject, method } = this.waiting.get(message.id);
        this.waiting.delete(message.id);
        if (message.error) reject(new Error(`${method}: ${message.error.message}`));
        else resolve(message.result);
      } else if (message.method) {
        for (const listener of this.listeners) listener(message);
      }
    }
  }

  failAll(error) {
    for (const { reject } of this.waiting.values()) reject(error);
    this.waiting.clear();
  }

  // A browser-wide command. An answer that does not come within `ms` fails the command, naming
  // it, so that a stalled browser ends the test instead of hanging it.
  send(method, params = {}, sessionId = undefined, ms = 60000) {
    const id = this.nextId++;
    const message = { id, method, params };
    if (sessionId) message.sessionId = sessionId;
    return within(ms, `${method} unanswered`, new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject, method });
      this.commands.write(JSON.stringify(message) + "\0");
    }));
  }

  // A command to the page.
  page(method, params = {}) { return this.send(method, params, this.session); }

  // The next event `method` for which `accept(params)` holds, within `ms`.
  event(method, accept = () => true, ms = 60000) {
    return within(ms, `no ${method} event`, new Promise(resolve => {
      const listener = message => {
        if (message.method !== method || !accept(message.params)) return;
        this.listeners = this.listeners.filter(l => l !== listener);
        resolve(message.params);
      };
      this.listeners.push(listener);
    }));
  }

  async navigate(url) {
    const loaded = this.event("Page.loadEventFired");
    await this.page("Page.navigate", { url });
    await loaded;
  }

  async reload() {
    const loaded = this.event("Page.loadEventFired");
    await this.page("Page.reload");
    await loaded;
  }

  // The value of `expression` in the page (awaited where it is a promise).
  async evaluate(expression) {
    const { result, exceptionDetails } = await this.page("Runtime.evaluate",
        { expression, awaitPromise: true, returnByValue: true });
    if (exceptionDetails)
      throw new Error(`${expression}: ${exceptionDetails.exception?.description || exceptionDetails.text}`);
    return result.value;
  }

  // Waits, in the page, until `condition` (an expression) is true, at most `ms` of its time.
  async until(condition, ms = 10000) {
    const met = await this.evaluate(`(async () => {
      const deadline = performance.now() + ${ms};
      while (!(${condition})) {
        if (performance.now() > deadline) return false;
        await new Promise(r => setTimeout(r, 20));  // not an animation frame: none may come
      }
      return true; })()`);
    if (!met) throw new Error(`not met within ${ms} ms: ${condition}`);
  }

  // The centre of the element `selector` finds, in the page's pixels.
  async centreOf(selector) {
    const box = await this.evaluate(`(() => { const e = document.querySelector(${JSON.stringify(selector)});
      if (!e) return null; e.scrollIntoView({block: "center"}); const r = e.getBoundingClientRect();
      return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()`);
    if (!box) throw new Error(`no element ${selector}`);
    return box;
  }

  async movePointer(x, y) {
    await this.page("Input.dispatchMouseEvent", { type: "mouseMoved", x, y });
  }

  // A left click at the centre of `selector`, pressed and released as a mouse does.
  async click(selector) {
    const { x, y } = await this.centreOf(selector);
    await this.movePointer(x, y);
    for (const type of ["mousePressed", "mouseReleased"])
      await this.page("Input.dispatchMouseEvent", { type, x, y, button: "left", clickCount: 1 });
  }

  // Focuses `selector`, selects its text and types `text` over it.
  async type(selector, text) {
    await this.evaluate(`(() => { const e = document.querySelector(${JSON.stringify(selector)});
      e.focus(); e.select(); })()`);
    await this.page("Input.insertText", { text });
  }

  // Clicks `selector` and waits for the download it starts; returns the file's name as saved.
  // Progress is recorded from the click on: a small file's last progress event can arrive with
  // the one that says it began, before a listener made after that one would be there.
  async download(selector) {
    const progress = [];
    const record = message => {
      if (message.method === "Browser.downloadProgress") progress.push(message.params);
    };
    this.listeners.push(record);
    try {
      const begun = this.event("Browser.downloadWillBegin");
      await this.click(selector);
      const { guid, suggestedFilename } = await begun;
      const ended = p => p.guid === guid && p.state !== "inProgress";
      const done = progress.find(ended) || await this.event("Browser.downloadProgress", ended);
      if (done.state !== "completed") throw new Error(`the download of ${suggestedFilename} was ${done.state}`);
      return suggestedFilename;
    } finally {
      this.listeners = this.listeners.filter(l => l !== record);
    }
  }

  // Closes the browser; kills it when it has not exited 10 s later.
  async close() {
    const exited = new Promise(resolve => this.process.once("exit", resolve));
    this.send("Browser.close").catch(() => {});
    await within(10000, "chromium still running", exited).catch(() => this.process.kill("SIGKILL"));
  }
}

module.exports = { Chromium };
