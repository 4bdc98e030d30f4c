// The website demo (demo/, issue 6): load it, pick a CSV through the file input, Run, check
// /out/sums.csv, the live output, the progress bar, the download button and the badge.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launch, BROWSER, BASE, readLog, waitForDeep } from "../lib.mjs";

const B = BROWSER;
let ctx, page, dir;
const errors = [];
const CSV = "region,units,amount,note\nnorth,3,10.5,first\nsouth,4,20,second\neast,,7.25,third\n";

before(async () => {
  ctx = await launch();
  dir = mkdtempSync(join(tmpdir(), "foxden-demo-"));
  page = await ctx.browser.newPage();
  page.on("pageerror", (e) => errors.push(String(e && e.message ? e.message : e)));
  // Record what the page does from its first script on: progress and output events, and the
  // download the button starts (kept from reaching the browser's download manager).
  await page.evaluateOnNewDocument(() => {
    window.__seen = { progress: [], output: [], runEnds: [], downloads: [] };
    document.addEventListener("progress", (e) => {
      const bar = e.target.shadowRoot && e.target.shadowRoot.querySelector('[part~="progress"]');
      window.__seen.progress.push({ ...e.detail, barVisible: !!bar && !bar.hidden });
    });
    document.addEventListener("output", (e) => window.__seen.output.push({ ...e.detail, at: performance.now() }));
    document.addEventListener("run", (e) => {
      if (e.detail.phase === "end") window.__seen.runEnds.push({ at: performance.now(), result: e.detail.result });
    });
    const click = HTMLAnchorElement.prototype.click;
    HTMLAnchorElement.prototype.click = function () {
      if (this.download) {
        window.__seen.downloads.push(
          fetch(this.href)
            .then((r) => r.text())
            .then((text) => ({ name: this.download, text })),
        );
        return;
      }
      return click.call(this);
    };
  });
});

after(async () => {
  await ctx?.close();
  rmSync(dir, { recursive: true, force: true });
});

test(`${B}: the demo loads with a progress bar and the "Network: off" badge`, async () => {
  const proxyBefore = readLog("proxy").length;
  await page.goto(`${BASE}/demo/`, { waitUntil: "load" });
  const r = await page.evaluate(async () => {
    await customElements.whenDefined("foxden-den");
    const den = document.querySelector("foxden-den");
    const info = await den.ready;
    const bar = den.shadowRoot.querySelector('[part~="progress"]');
    return {
      info,
      badge: document.getElementById("network").textContent,
      progress: window.__seen.progress,
      bar: { hidden: bar.hidden, value: bar.value, max: bar.max },
      runLabel: den.shadowRoot.querySelector('[part~="run-button"]').textContent,
      runDisabled: den.shadowRoot.querySelector('[part~="run-button"]').disabled,
    };
  });
  assert.equal(r.info.isolation, "iframe-sandbox");
  assert.equal(r.badge, "Network: off");
  assert.ok(r.progress.length >= 3, `progress events: ${r.progress.length}`);
  const last = r.progress.at(-1);
  assert.ok(last.total > 5_000_000, `total ${last.total}`);
  assert.equal(last.loaded, last.total);
  assert.ok(r.progress.every((p) => p.barVisible), "the bar shows while loading");
  for (let i = 1; i < r.progress.length; i++) assert.ok(r.progress[i].loaded >= r.progress[i - 1].loaded, "loaded only grows");
  assert.deepEqual(r.bar, { hidden: true, value: last.total, max: last.total });
  assert.equal(r.runLabel, "Run");
  assert.equal(r.runDisabled, false);
  // The proxy also sees the browser's own background traffic; none of the page's may be there.
  const added = readLog("proxy").slice(proxyBefore);
  assert.doesNotMatch(added, /127\.0\.0\.1|pyodide|foxden|den\.html|sums|\.csv/i, "no request of the demo left for the network");
});

test(`${B}: a CSV picked with the file input gives the exact /out/sums.csv, with live output`, async () => {
  const file = join(dir, "demo-sales.csv");
  writeFileSync(file, CSV);
  const input = await waitForDeep(page, "foxden-den >>> input[type=file]");
  await input.uploadFile(file);
  await page.waitForFunction(
    async () => (await document.querySelector("foxden-den").list()).some((f) => f.path === "/drop/demo-sales.csv"),
    { timeout: 10000 },
  );
  assert.equal(await page.evaluate(() => document.getElementById("download").disabled), true);
  await page.click("foxden-den >>> [part~='run-button']");
  await page.waitForFunction(() => window.__seen.runEnds.length === 1, { timeout: 30000 });
  const r = await page.evaluate(async () => {
    const den = document.querySelector("foxden-den");
    await new Promise((res) => setTimeout(res, 50));
    return {
      sums: await den.readText("/out/sums.csv"),
      end: window.__seen.runEnds[0],
      output: window.__seen.output,
      pane: den.shadowRoot.querySelector('[part~="output"]').textContent,
      status: den.shadowRoot.querySelector('[part~="status"]').textContent,
      links: [...den.shadowRoot.querySelectorAll('[part~="file-link"]')].map((a) => a.textContent),
      downloadDisabled: document.getElementById("download").disabled,
    };
  });
  const expectedOut =
    "Reading demo-sales.csv\n3 rows, 4 columns, 2 numeric\n  sum of units: 7\n  sum of amount: 37.75\nWrote /out/sums.csv\n";
  assert.equal(r.end.result.error, null, JSON.stringify(r.end.result.error));
  assert.equal(r.sums, "rows,units,amount\n3,7,37.75\n");
  assert.equal(r.end.result.stdout, expectedOut);
  assert.equal(r.output.map((o) => o.text).join(""), expectedOut);
  assert.ok(r.output.every((o) => o.at <= r.end.at), "every output chunk came before the run ended");
  assert.equal(r.pane, expectedOut, "the live output pane shows the run's output");
  assert.match(r.status, /^Done in \d+ ms$/);
  assert.deepEqual(r.links, ["/drop/demo-sales.csv", "/out/sums.csv"]);
  assert.equal(r.downloadDisabled, false);

  // The download button hands the browser sums.csv with the same bytes.
  await page.click("#download");
  await page.waitForFunction(() => window.__seen.downloads.length === 1);
  const dl = await page.evaluate(() => window.__seen.downloads[0]);
  assert.deepEqual(dl, { name: "sums.csv", text: "rows,units,amount\n3,7,37.75\n" });
});

test(`${B}: the sample button and a second run work too; no page errors`, async () => {
  await page.click("#sample");
  await page.waitForFunction(async () => (await document.querySelector("foxden-den").list()).some((f) => f.path === "/drop/sample.csv"));
  await page.focus("foxden-den >>> [part~='run-button']");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => window.__seen.runEnds.length === 2, { timeout: 30000 });
  const sums = await page.evaluate(() => document.querySelector("foxden-den").readText("/out/sums.csv"));
  assert.equal(sums, "rows,units,amount\n3,7,37.75\n");
  assert.deepEqual(errors, []);
});
