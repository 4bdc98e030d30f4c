// Faults and load, measured (issue 9 item 5). A fault is injected while a run's changes are
// being handed back or saved: the page reloaded during the IndexedDB save, close() during the
// save, the worker terminated mid-run, a timeout in the middle of writing. After each, the store
// must equal the state before or after one whole run, never a mix. Then 4 dens x 500 runs in one
// page: the host's heap and its listener and connection counts must stay flat.
import { test, before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { launch, openPage, openQuickDen, BROWSER, logNewErrors, sleep } from "../lib.mjs";

let ctx;
const B = BROWSER;
const FILES = 10;
const figures = [];

before(async () => {
  ctx = await launch();
});

after(async () => {
  for (const f of figures) console.log(`# ${B}: ${f}`);
  await ctx?.close();
});

/** The generation every /work/f*.txt holds, or throws when they disagree (a torn batch). */
function generationOf(files) {
  const gens = new Set(files.filter((f) => f.path.startsWith("/work/f")).map((f) => f.text));
  const count = files.filter((f) => f.path.startsWith("/work/f")).length;
  if (count === 0) return -1;
  assert.equal(count, FILES, `a batch of ${FILES} files was cut to ${count}`);
  assert.equal(gens.size, 1, `files from different runs: ${[...gens].join(", ")}`);
  return Number([...gens][0].slice(0, 8));
}

// A run whose reply carries FILES files of 64 KiB each, from the scripted den page (the host's
// commit is what is under test here: one IndexedDB transaction per run).
const batchRun = (g) => `
  const changed = [];
  for (let i = 0; i < ${FILES}; i++) changed.push({ path: "/work/f" + i + ".txt", data: new TextEncoder().encode(String(${g}).padStart(8, "0") + "x".repeat(65536)) });
  post(honest({ changed }));`;

async function openIdb(page) {
  return page.evaluate(async () => {
    const { openDen, iframeRuntime, idbStore } = window.foxden;
    window.den = await openDen({ name: "faults", store: idbStore("foxden-faults"), runtime: iframeRuntime({ denUrl: "/e2e/hostile-den.html" }) });
    const out = [];
    for (const f of await window.den.list()) out.push({ path: f.path, text: (await window.den.readFile(f.path, "utf-8")).slice(0, 8) });
    return out;
  });
}

test(`${B}: 80 faults during IndexedDB saves (60 page reloads, 20 close()): every store is a whole run's`, async () => {
  const { page } = await openPage(ctx.browser);
  let last = generationOf(await openIdb(page));
  let torn = 0, before = 0, afterRun = 0;
  for (let i = 0; i < 80; i++) {
    const g = 1000 + i;
    const delay = (i * 7) % 23; // spread the fault over the save
    if (i < 60) {
      await page.evaluate((code) => {
        window.den.run(code).catch(() => {});
      }, batchRun(g));
      await sleep(delay);
      await page.reload({ waitUntil: "load" });
      await page.waitForFunction(() => window.foxdenLoaded === true);
    } else {
      await page.evaluate(async (code, delay) => {
        const p = window.den.run(code).catch(() => {});
        await new Promise((r) => setTimeout(r, delay));
        await window.den.close();
        await p;
      }, batchRun(g), delay);
    }
    let gen;
    try {
      gen = generationOf(await openIdb(page));
    } catch (e) {
      torn++;
      throw e;
    }
    if (gen === g) afterRun++;
    else if (gen === last) before++;
    else assert.fail(`generation ${gen} is neither the one before (${last}) nor the run's (${g})`);
    last = gen;
    if (i >= 60) await page.evaluate(() => window.den.close());
  }
  figures.push(`IndexedDB faults: 80 injected, ${before} stores equal the state before the run, ${afterRun} after it, ${torn} torn`);
  // Faults fell on both sides of the commit (else the save was never cut short).
  assert.ok(before > 0 && afterRun > 0, `before ${before}, after ${afterRun}`);
  await page.close();
});

test(`${B}: 24 faults in a real worker (terminated mid-run, timeout mid-write, close() mid-run): the store never holds a partial run`, async () => {
  const { page, errors } = await openPage(ctx.browser);
  await openQuickDen(page, "wfaults");
  const write = (g, tail) => `
import os
for i in range(${FILES}):
    with open(f"/work/w{i}.txt", "w") as fh:
        fh.write("${g}" + "y" * 10000)
    ${"if i == 5:"}
        ${tail}
`;
  const state = () =>
    page.evaluate(async (den) => {
      const d = window.dens[den];
      const out = [];
      for (const f of await d.list()) out.push((await d.readFile(f.path, "utf-8")).slice(0, 4));
      return out;
    }, "wfaults");
  const seed = await page.evaluate((code) => window.dens.wfaults.run(code), write("g000", "pass"));
  assert.equal(seed.error, null);
  let faults = 0;
  let last = "g000";
  const outcomes = { before: 0, after: 0 };
  for (let i = 0; i < 12; i++) {
    // The worker closes itself half-way through writing (as if killed). Depending on when the
    // browser tears it down, the run's reply is lost (timeout, nothing kept) or still arrives
    // (everything kept): the store is one or the other, never a mix.
    const g = `k${String(i).padStart(3, "0")}`;
    const r = await page.evaluate((code) => window.dens.wfaults.run(code, { timeoutMs: 1500 }), write(g, "import js; js.close()"));
    const now = new Set(await state());
    assert.equal(now.size, 1, `a mix of runs: ${[...now].join(", ")}`);
    const [gen] = now;
    if (gen === g) outcomes.after++;
    else {
      assert.equal(gen, last);
      assert.ok(r.error, "a run whose files were not kept reports an error");
      outcomes.before++;
    }
    last = gen;
    faults++;
  }
  for (let i = 0; i < 10; i++) {
    // A timeout half-way through writing: nothing is kept.
    const r = await page.evaluate((code) => window.dens.wfaults.run(code, { timeoutMs: 400 }), write(`t${String(i).padStart(3, "0")}`, "while True: pass"));
    assert.equal(r.error?.kind, "timeout");
    assert.deepEqual(new Set(await state()), new Set([last]));
    faults++;
  }
  for (let i = 0; i < 2; i++) {
    // close() during a run that writes: the run ends as crashed, and the store (IndexedDB,
    // reopened after the close) holds the files as they were before it.
    const out = await page.evaluate(async (code, i) => {
      const { openDen, iframeRuntime, idbStore } = window.foxden;
      const open = () => openDen({ name: `closing${i}`, store: idbStore(`foxden-closing${i}`), runtime: iframeRuntime() });
      const d = await open();
      await d.run(`
for i in range(${10}):
    open(f"/work/c{i}.txt", "w").write("c000")`);
      const p = d.run(code, { timeoutMs: 5000 });
      await new Promise((r) => setTimeout(r, 50));
      await d.close();
      const r = await p;
      const again = await open();
      const files = [];
      for (const f of await again.list()) files.push(await again.readFile(f.path, "utf-8"));
      await again.close();
      return { r, files };
    }, write("c001", "import time; time.sleep(1)"), i);
    assert.equal(out.r.error.type, "DenClosed");
    assert.equal(out.files.length, 10, JSON.stringify(out.files));
    assert.deepEqual(new Set(out.files), new Set(["c000"]));
    faults++;
  }
  figures.push(`worker faults: ${faults} injected (12 worker closed mid-write: ${outcomes.before} stores as before the run, ${outcomes.after} as after; 10 timeouts mid-write and 2 close() mid-run: store as before), never a mix`);
  assert.deepEqual(errors.filter((e) => !/uncaught exception: undefined/.test(e)), []);
  await page.close();
});

test(`${B}: load: 4 dens x 500 runs in one page, host heap and listener counts flat`, async () => {
  const { page } = await openPage(ctx.browser);
  const out = await page.evaluate(async () => {
    const { openDen, iframeRuntime, memoryStore, liveCounts } = window.foxden;
    const dens = [];
    for (let i = 0; i < 4; i++) dens.push(await openDen({ name: `load${i}`, store: memoryStore(), runtime: iframeRuntime() }));
    // Measured after full garbage collections (Chromium is started with --expose-gc).
    const heap = () => {
      if (!performance.memory) return null;
      if (window.gc) for (let i = 0; i < 3; i++) window.gc();
      return performance.memory.usedJSHeapSize;
    };
    // Each den page keeps one memory snapshot (~30 MB) for restarts, made after it is ready:
    // wait for it, so that the figures compare like with like.
    for (const d of dens) {
      for (let i = 0; i < 60 && (await d.reset()).from !== "snapshot"; i++) await new Promise((r) => setTimeout(r, 500));
    }
    const round = (k) => Promise.all(dens.map((d, i) => d.run(`x = ${k}\nprint(x)\nopen("/work/n.txt", "w").write(str(x))\nx`)));
    for (let k = 0; k < 50; k++) await round(k);
    const base = { counts: liveCounts(), heap: heap() };
    let bad = 0;
    const t0 = performance.now();
    for (let k = 50; k < 500; k++) {
      const rs = await round(k);
      for (const r of rs) if (r.result !== String(k) || r.stdout !== `${k}\n`) bad++;
    }
    const ms = performance.now() - t0;
    await new Promise((r) => setTimeout(r, 200));
    const end = { counts: liveCounts(), heap: heap() };
    const text = await dens[3].readFile("/work/n.txt", "utf-8");
    for (const d of dens) await d.close();
    return { base, end, bad, ms, text, closed: liveCounts() };
  });
  assert.equal(out.bad, 0);
  assert.equal(out.text, "499");
  assert.deepEqual(out.end.counts, out.base.counts, "listeners and connections flat");
  assert.equal(out.closed.connections, 0);
  let heapNote = "no performance.memory in this browser";
  if (out.base.heap !== null) {
    const growth = out.end.heap - out.base.heap;
    heapNote = `JS heap ${(out.base.heap / 1048576).toFixed(1)} MiB after 50 rounds, ${(out.end.heap / 1048576).toFixed(1)} MiB after 500 (growth ${(growth / 1048576).toFixed(2)} MiB)`;
    assert.ok(growth < 4 * 1048576, heapNote);
  }
  figures.push(`load: 4 dens x 500 runs, ${(out.ms / 1800).toFixed(2)} ms per round of 4 parallel runs; listeners ${out.base.counts.listeners} -> ${out.end.counts.listeners}, connections ${out.base.counts.connections} -> ${out.end.counts.connections}; ${heapNote}`);
  await page.close();
});
