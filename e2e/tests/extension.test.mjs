// The demo extension, unpacked (`cargo xtask ext`), in real Firefox ESR and Chromium: the Space
// tab, a CSV, Run, the exact /out/sums.csv, the Download button, the badge, the isolation mode
// auto chose, the network probe set run from inside the extension's den (the static server and
// the logging proxy must see none of it), and the IndexedDB den surviving a reopened tab.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { BROWSER, BASE, sleep, launch } from "../lib.mjs";
import { assertNoNetwork, assertNoNetworkFromJs, EXTERNAL } from "../probes.mjs";

const EXT_ROOT = process.env.FOXDEN_EXT_DIR;
const EXT_DIR = EXT_ROOT && join(EXT_ROOT, BROWSER === "firefox" ? "firefox" : "chromium");
const GECKO_ID = "space@foxden.example"; // extension/manifest.firefox.json

const CSV = 'region,amount,price,note\nnorth,10,1.5,a\nsouth,20,2.25,"b, c"\neast,-3,0.1,x\n';
const SUMS = "measure,value\nrows,3\nsum(amount),27\nsum(price),3.85\n";

let ctx, browser, profile, origin, extId, spaceUrl, firefoxMajor = 0;
const pageErrors = [];
// The probe test deliberately makes requests fail (e.g. a nested worker's fetch, which rejects
// unhandled); its errors are not page errors of the extension.
let probing = false;

async function launchWithExtension() {
  if (BROWSER === "firefox") {
    // Fix the moz-extension UUID up front so the test knows the extension's origin.
    const uuid = randomUUID();
    ctx = await launch({
      // WebDriver BiDi refuses to navigate a tab to a moz-extension: URL unless system access is
      // allowed; the test opens the Space tab by its URL (headless has no toolbar to click).
      firefoxArgs: ["--remote-allow-system-access"],
      firefoxPrefs: (dir) => ({
        "extensions.webextensions.uuids": JSON.stringify({ [GECKO_ID]: uuid }),
        // Downloads of the Download button land in the profile, without a dialog.
        "browser.download.folderList": 2,
        "browser.download.dir": join(dir, "downloads"),
        "browser.download.useDownloadDir": true,
      }),
    });
    ({ browser, profile } = ctx);
    extId = await browser.installExtension(EXT_DIR);
    assert.equal(extId, GECKO_ID);
    origin = `moz-extension://${uuid}`;
    firefoxMajor = Number((await browser.version()).match(/(\d+)\./)?.[1] || 0);
  } else {
    ctx = await launch({ chromium: { pipe: true, enableExtensions: true } });
    ({ browser, profile } = ctx);
    extId = await browser.installExtension(EXT_DIR);
    origin = `chrome-extension://${extId}`;
  }
  spaceUrl = `${origin}/space.html`;
}

/** Chromium: press the toolbar button the way the action does (its onClicked handler). */
async function openSpaceFromToolbar() {
  const sw = await browser.waitForTarget(
    (t) => t.type() === "service_worker" && t.url().startsWith(origin),
    { timeout: 15000 },
  );
  const worker = await sw.worker();
  const opened = browser.waitForTarget((t) => t.type() === "page" && t.url() === spaceUrl, { timeout: 15000 });
  await worker.evaluate(() => openSpace());
  const target = await opened;
  return watch(await target.page());
}

function watch(page) {
  page.on("pageerror", (e) => probing || pageErrors.push(`${page.url()}: ${e && e.message ? e.message : e}`));
  return page;
}

async function openSpaceTab() {
  if (BROWSER !== "firefox") {
    const page = watch(await browser.newPage());
    await page.goto(spaceUrl, { waitUntil: "load" });
    return page;
  }
  // Firefox moves the tab into the extension process; puppeteer's BiDi page then never sees the
  // load, and the document shows up as another page. Navigate, then find the tab by its document.
  const known = new Set(await browser.pages());
  const blank = await browser.newPage();
  blank.goto(spaceUrl, { timeout: 5000 }).catch(() => {});
  for (let i = 0; i < 150; i++) {
    await sleep(200);
    for (const p of await browser.pages()) {
      if (known.has(p)) continue;
      const href = await p.evaluate(() => location.href).catch(() => "");
      if (href === spaceUrl) return watch(p);
    }
  }
  throw new Error(`no tab shows ${spaceUrl}`);
}

async function waitReady(page) {
  await page.waitForFunction(() => ["ready", "error"].includes(document.body.dataset.state), { timeout: 90000 });
  const state = await page.evaluate(() => ({ state: document.body.dataset.state, status: document.getElementById("status").textContent }));
  assert.equal(state.state, "ready", `Space tab did not get ready: ${state.status}`);
}

let space;
before(async () => {
  assert.ok(EXT_DIR && existsSync(join(EXT_DIR, "manifest.json")), "run through `cargo xtask e2e` (it writes the unpacked extension)");
  await launchWithExtension();
  space = BROWSER === "firefox" ? await openSpaceTab() : await openSpaceFromToolbar();
  await waitReady(space);
});
after(async () => {
  await ctx?.close();
});

test(`${BROWSER}: the Space tab runs the sample code on a CSV and writes the exact /out/sums.csv`, async () => {
  // A fresh profile: the den starts empty.
  assert.deepEqual(await space.evaluate(() => window.spaceDen.list().then((l) => l.map((f) => f.path))), []);
  // Pick the CSV with the file input (the keyboard-usable path).
  const file = join(profile, "sales.csv");
  writeFileSync(file, CSV);
  const input = await space.$("#pick");
  await input.uploadFile(file);
  await space.waitForFunction(() => !document.getElementById("run").disabled, { timeout: 15000 });
  assert.equal(await space.evaluate(() => window.spaceDen.readText("/drop/sales.csv")), CSV);
  await space.click("#run");
  await space.waitForFunction(() => window.spaceLastRun, { timeout: 60000 });
  const run = await space.evaluate(() => window.spaceLastRun);
  assert.equal(run.error, null, JSON.stringify(run.error));
  assert.deepEqual(run.files.created, ["/out/sums.csv"]);
  assert.equal(await space.evaluate(() => window.spaceDen.readText("/out/sums.csv")), SUMS);
  assert.match(await space.$eval("#output", (e) => e.textContent), /^3 rows; sums of 2 numeric column\(s\)/);
  // Download: the button hands the browser a sums.csv link with exactly that content.
  await space.waitForFunction(() => !document.getElementById("download").disabled);
  const downloaded = await space.evaluate(async () => {
    const clicked = new Promise((resolve) => {
      const real = HTMLAnchorElement.prototype.click;
      HTMLAnchorElement.prototype.click = function () {
        HTMLAnchorElement.prototype.click = real;
        resolve({ name: this.download, text: fetch(this.href).then((r) => r.text()) });
      };
    });
    document.getElementById("download").click();
    const { name, text } = await clicked;
    return { name, text: await text };
  });
  assert.deepEqual(downloaded, { name: "sums.csv", text: SUMS });
});

test(`${BROWSER}: the toolbar badge says "Network: off"`, async () => {
  const text = await space.evaluate(() => (globalThis.browser ?? globalThis.chrome).action.getBadgeText({}));
  assert.equal(text, "Network: off");
});

test(`${BROWSER}: auto isolation picks the mode this browser supports`, async () => {
  const info = await space.evaluate(() => window.spaceDen.info);
  // Chromium and Firefox 154+ support manifest sandbox pages; Firefox ESR 153 does not, and
  // auto falls back to a sandboxed iframe of the same den page.
  const expected = BROWSER === "firefox" && firefoxMajor < 154 ? "iframe-sandbox" : "manifest-sandbox";
  assert.equal(info.isolation, expected);
  console.log(`# ${BROWSER}${firefoxMajor ? ` ${firefoxMajor}` : ""}: den.info = ${JSON.stringify(info)}`);
  // The den iframe of a manifest sandbox page has no sandbox attribute (the browser sandboxes it).
  const attr = await space.evaluate(() => document.querySelector("iframe[data-foxden-den]").getAttribute("sandbox"));
  assert.equal(attr, expected === "iframe-sandbox" ? "allow-scripts" : null);
});

test(`${BROWSER}: explicit modes inside the extension`, async () => {
  const r = await space.evaluate(async () => {
    const { openDen, iframeRuntime, memoryStore } = await import("./foxden/api.js");
    const out = {};
    for (const isolation of ["manifest-sandbox", "iframe-sandbox"]) {
      try {
        const den = await openDen({
          name: `explicit-${isolation}`,
          store: memoryStore(),
          runtime: iframeRuntime({ denUrl: "foxden/den/den-ext.html", pyodideUrl: "foxden/pyodide/", isolation }),
        });
        const run = await den.run("1 + 1");
        out[isolation] = { ok: run.result, isolation: den.info.isolation };
        await den.close();
      } catch (e) {
        out[isolation] = { name: e.name, stage: e.stage, message: e.message };
      }
    }
    return out;
  });
  assert.deepEqual(r["iframe-sandbox"], { ok: "2", isolation: "iframe-sandbox" });
  if (BROWSER === "firefox" && firefoxMajor < 154) {
    // No manifest sandbox in Firefox ESR 153: the page is an ordinary extension page, and the
    // den page's check says so.
    assert.equal(r["manifest-sandbox"].name, "DenLoadError");
    assert.equal(r["manifest-sandbox"].stage, "isolation");
    assert.match(r["manifest-sandbox"].message, /isolation check failed \(manifest-sandbox\): the den page's origin is moz-extension:\/\/.*not opaque/);
  } else {
    assert.deepEqual(r["manifest-sandbox"], { ok: "2", isolation: "manifest-sandbox" });
  }
});

test(`${BROWSER}: every network probe from the extension's den fails and reaches no server`, async () => {
  probing = true;
  try {
    // "same": the static server (where a leaky script-src 'self' would point on a website);
    // "ext": a remote host (through the logging proxy); "self": the extension's own origin,
    // which is what 'self' means for this den page: packaged files only, nothing on the network.
    await assertNoNetwork({
      page: space,
      runInPage: (code, timeoutMs) => space.evaluate((code, timeoutMs) => window.spaceDen.run(code, { timeoutMs }), code, timeoutMs),
      targets: { same: BASE, ext: EXTERNAL, self: origin },
      packagedOnly: ["self"],
      minProbes: 40,
      label: `${BROWSER} extension`,
    });
  } finally {
    probing = false;
  }
});

test(`${BROWSER}: every network probe run from JavaScript in the extension's den fails and reaches no server`, async () => {
  probing = true;
  try {
    await assertNoNetworkFromJs({
      page: space,
      runInPage: (code, timeoutMs) => space.evaluate((code, timeoutMs) => window.spaceDen.run(code, { timeoutMs, lang: "javascript" }), code, timeoutMs),
      targets: { same: BASE, ext: EXTERNAL, self: origin },
      label: `${BROWSER} extension`,
    });
  } finally {
    probing = false;
  }
});

test(`${BROWSER}: the IndexedDB den survives closing and reopening the Space tab`, async () => {
  await space.close();
  space = await openSpaceTab();
  await waitReady(space);
  const state = await space.evaluate(async () => ({
    files: (await window.spaceDen.list()).map((f) => f.path).sort(),
    sums: await window.spaceDen.readText("/out/sums.csv"),
    listed: document.getElementById("files").textContent,
    runEnabled: !document.getElementById("run").disabled,
    code: document.getElementById("code").value.split("\n")[0],
  }));
  assert.deepEqual(state.files, ["/drop/sales.csv", "/out/sums.csv"]);
  assert.equal(state.sums, SUMS);
  assert.match(state.listed, /\/drop\/sales\.csv/);
  assert.ok(state.runEnabled, "Run is ready for the remembered CSV");
  assert.equal(state.code, 'path = "/drop/sales.csv"');
  // A drop (rather than the file input) adds a second file, and Run uses it.
  await space.evaluate(() => {
    const dt = new DataTransfer();
    dt.items.add(new File(["a,b\n1,2\n3,4\n"], "more.csv", { type: "text/csv" }));
    document.getElementById("drop").dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
  });
  await space.waitForFunction(() => document.getElementById("code").value.startsWith('path = "/drop/more.csv"'), { timeout: 15000 });
  await space.evaluate(() => (window.spaceLastRun = null));
  await space.click("#run");
  await space.waitForFunction(() => window.spaceLastRun, { timeout: 60000 });
  assert.equal(await space.evaluate(() => window.spaceDen.readText("/out/sums.csv")), "measure,value\nrows,2\nsum(a),4\nsum(b),6\n");
});

test(`${BROWSER}: no page errors in the extension`, () => {
  assert.deepEqual(pageErrors, []);
});

test(`${BROWSER}: the extension's den page refuses to run when a website serves it`, async () => {
  // On a website 'self' is the website's server, so den-ext.html (script-src 'self') must not be
  // used there; its den.js notices it was loaded by URL outside an extension and refuses.
  const page = await browser.newPage();
  await page.goto(`${BASE}/e2e/index.html`, { waitUntil: "load" });
  await page.waitForFunction(() => window.foxdenLoaded === true, { timeout: 30000 });
  const target = BROWSER === "firefox" ? "firefox" : "chromium";
  const err = await page.evaluate(async (denUrl) => {
    const { openDen, iframeRuntime } = window.foxden;
    try {
      await openDen({ name: "wrong-page", runtime: iframeRuntime({ denUrl, pyodideUrl: "/pyodide/" }) });
      return null;
    } catch (e) {
      return { name: e.name, stage: e.stage, message: e.message };
    }
  }, `/dist-ext/${target}/foxden/den/den-ext.html`);
  await page.close();
  assert.equal(err?.name, "DenLoadError", JSON.stringify(err));
  assert.equal(err.stage, "isolation");
  assert.match(err.message, /isolation check failed \(iframe-sandbox\): den-ext\.html is for extensions, but it was served from http:\/\/127\.0\.0\.1:\d+; a website must use den\.html/);
});
