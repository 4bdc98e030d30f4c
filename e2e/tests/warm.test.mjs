// The warm cache (issue 11): a later visit's den resumes from a snapshot of a fresh interpreter
// that the host page kept in its Cache Storage; a stale, corrupt or unloadable entry is dropped
// and rebuilt silently; warmStart: false / warm-start="off" turn it off.
import { test, before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { launch, openPage, BROWSER, logNewErrors, sleep } from "../lib.mjs";

let ctx, page, errors;
const B = BROWSER;

before(async () => {
  ctx = await launch();
  ({ page, errors } = await openPage(ctx.browser));
  await page.evaluate(() => window.foxden.clearWarmCache());
});

afterEach(logNewErrors(() => errors));

after(async () => {
  await ctx?.close();
});

/** Opens a den in a freshly loaded page; returns its info and a check that it works. */
async function visit(opts = {}) {
  await page.reload({ waitUntil: "load" });
  await page.waitForFunction(() => window.foxdenLoaded === true);
  return page.evaluate(async (opts) => {
    const { openDen, iframeRuntime } = window.foxden;
    window.den = await openDen({ name: "warm", runtime: iframeRuntime(opts) });
    const r = await window.den.run("import js, sys\nx = 6 * 7\n(x, 'marker' in globals(), round(js.performance.now()) >= 0, js.crypto.randomUUID().count('-'))");
    return { info: window.den.info, result: r.result, error: r.error };
  }, opts);
}

/** The warm cache's entries: [{url, hash, size}]. */
const entries = () =>
  page.evaluate(async () => {
    const c = await caches.open("foxden-warm-v2");
    const out = [];
    for (const req of await c.keys()) {
      const resp = await c.match(req);
      out.push({ url: req.url, hash: resp.headers.get("x-foxden-sha256"), size: (await resp.arrayBuffer()).byteLength });
    }
    return out;
  });

/** Waits until the den page made its snapshot and the host stored it. */
async function waitForEntry() {
  for (let i = 0; i < 80; i++) {
    const e = await entries();
    if (e.length === 1) return e[0];
    await sleep(250);
  }
  throw new Error("no warm cache entry within 20 s");
}

test(`${B}: a first visit boots and keeps a snapshot; a later visit resumes from it`, async () => {
  const first = await visit();
  assert.equal(first.info.warmStart, "miss");
  assert.equal(first.result, "(42, False, True, 4)", JSON.stringify(first.error));
  const entry = await waitForEntry();
  assert.match(entry.url, /^https:\/\/foxden\.invalid\/warm\/[0-9a-f]{64}$/);
  assert.match(entry.hash, /^[0-9a-f]{64}$/);
  assert.ok(entry.size > 1e6, `snapshot of ${entry.size} bytes`);
  const later = await visit();
  assert.equal(later.info.warmStart, "hit");
  assert.equal(later.result, "(42, False, True, 4)", JSON.stringify(later.error));
  console.log(`# ${B}: den ready ${first.info.loadMs.toFixed(0)} ms on the first visit, ${later.info.loadMs.toFixed(0)} ms on a later one (snapshot ${(entry.size / 1048576).toFixed(1)} MiB)`);
  assert.ok(later.info.loadMs < first.info.loadMs, "a later visit is faster");
  // info.stages says where the time went: every stage a duration within the load.
  for (const info of [first.info, later.info]) {
    const st = info.stages;
    assert.deepEqual(Object.keys(st).sort(), ["assets", "boot", "den", "hello", "ready", "warm"]);
    for (const [k, v] of Object.entries(st)) assert.ok(Number.isFinite(v) && v >= 0 && v <= info.loadMs + 1, `${k}: ${v}`);
    assert.ok(st.boot <= st.den + 1 && st.den <= st.ready + 1, JSON.stringify(st));
  }
  // The interpreter from the cache is fresh and complete: variables, timeouts and resets work.
  const more = await page.evaluate(async () => {
    const t = await window.den.run("while True: pass", { timeoutMs: 300 });
    const after = await window.den.run("'x' in globals()");
    const reset = await window.den.reset();
    return { kind: t.error.kind, after: after.result, from: reset.from };
  });
  assert.deepEqual(more, { kind: "timeout", after: "False", from: "snapshot" });
  assert.equal((await entries()).length, 1, "one entry, not one per visit");
});

test(`${B}: a corrupt entry is dropped and rebuilt; the den boots normally`, async () => {
  await waitForEntry();
  await page.evaluate(async () => {
    const c = await caches.open("foxden-warm-v2");
    const [req] = await c.keys();
    const resp = await c.match(req);
    const bytes = new Uint8Array(await resp.arrayBuffer());
    bytes[bytes.length >> 1] ^= 0xff; // one flipped byte, the recorded hash kept
    await c.put(req, new Response(bytes, { headers: { "x-foxden-sha256": resp.headers.get("x-foxden-sha256") } }));
  });
  const v = await visit();
  assert.equal(v.info.warmStart, "miss");
  assert.equal(v.result, "(42, False, True, 4)");
  const rebuilt = await waitForEntry();
  const again = await visit();
  assert.equal(again.info.warmStart, "hit", JSON.stringify(rebuilt));
});

test(`${B}: an entry Pyodide cannot load (right hash, wrong bytes) is rejected and replaced`, async () => {
  const url = (await waitForEntry()).url;
  await page.evaluate(async (url) => {
    // A well-formed packed entry (header, one run of one page) whose page is junk.
    const junk = new Uint8Array(24 + 8 + 4096).fill(7);
    const head = new DataView(junk.buffer);
    junk.set([70, 88, 90, 80, 1, 0, 0, 0]); // "FXZP", version 1
    head.setBigUint64(8, 4096n, true);
    head.setUint32(16, 4096, true);
    head.setUint32(20, 1, true);
    head.setUint32(24, 0, true);
    head.setUint32(28, 1, true);
    const h = new Uint8Array(await crypto.subtle.digest("SHA-256", junk));
    const hex = Array.from(h, (b) => b.toString(16).padStart(2, "0")).join("");
    const c = await caches.open("foxden-warm-v2");
    await c.put(url, new Response(junk, { headers: { "x-foxden-sha256": hex, "x-foxden-length": "4096" } }));
  }, url);
  const v = await visit();
  assert.equal(v.info.warmStart, "rejected");
  assert.equal(v.result, "(42, False, True, 4)", JSON.stringify(v.error));
  for (let i = 0; i < 80; i++) {
    const [e] = await entries();
    if (e && e.size > 1e6) break;
    await sleep(250);
  }
  const again = await visit();
  assert.equal(again.info.warmStart, "hit");
});

test(`${B}: a refused entry is dropped at once (the page may close before a new one is made); an entry of another key is neither read nor dropped by an opening`, async () => {
  if ((await entries()).length !== 1) await visit();
  const url = (await waitForEntry()).url;
  const junkHash = await page.evaluate(async (url) => {
    // As above: well formed, right hash, a junk page; Pyodide refuses it.
    const junk = new Uint8Array(24 + 8 + 4096).fill(7);
    const head = new DataView(junk.buffer);
    junk.set([70, 88, 90, 80, 1, 0, 0, 0]);
    head.setBigUint64(8, 4096n, true);
    head.setUint32(16, 4096, true);
    head.setUint32(20, 1, true);
    head.setUint32(24, 0, true);
    head.setUint32(28, 1, true);
    const hex = Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", junk)), (b) => b.toString(16).padStart(2, "0")).join("");
    const c = await caches.open("foxden-warm-v2");
    await c.put(url, new Response(junk, { headers: { "x-foxden-sha256": hex, "x-foxden-length": "4096" } }));
    return hex;
  }, url);
  const v = await visit({ standby: false });
  assert.equal(v.info.warmStart, "rejected");
  // The page goes away before its maker could offer a new snapshot.
  await sleep(300);
  await page.reload({ waitUntil: "load" });
  await page.waitForFunction(() => window.foxdenLoaded === true);
  const left = await entries();
  assert.ok(!left.some((e) => e.hash === junkHash), `the refused entry is still kept: ${JSON.stringify(left)}`);

  // Another foxden's entry (another key): an opening does not read it, use its length, or drop it.
  const other = "https://foxden.invalid/warm/" + "0".repeat(64);
  await page.evaluate(async (other) => {
    await window.foxden.clearWarmCache();
    const c = await caches.open("foxden-warm-v2");
    await c.put(other, new Response(new Uint8Array(100).fill(1), { headers: { "x-foxden-sha256": "00", "x-foxden-length": "123456789" } }));
  }, other);
  const miss = await visit({ standby: false });
  assert.equal(miss.info.warmStart, "miss");
  assert.equal(miss.result, "(42, False, True, 4)", JSON.stringify(miss.error));
  await page.reload({ waitUntil: "load" });
  await page.waitForFunction(() => window.foxdenLoaded === true);
  const kept = await entries();
  // (Storing this key's snapshot replaces other keys' entries: only that may have dropped it.)
  assert.ok(kept.some((e) => e.url === other || e.size > 1e6), `another key's entry was dropped on opening: ${JSON.stringify(kept)}`);
  // Back to a normal state for the tests after.
  await page.evaluate(() => window.foxden.clearWarmCache());
  await visit();
  await waitForEntry();
});

test(`${B}: after a hit, a snapshot the den page sends later is not kept (only a miss, or a refused entry, takes one)`, async () => {
  const before = await waitForEntry();
  const v = await visit();
  assert.equal(v.info.warmStart, "hit");
  // A den page taken over later (say, through a browser bug reached from user code) offers its
  // own "snapshot": the host must not keep it for later visits.
  let posted = 0;
  for (const f of page.frames()) {
    try {
      posted += await f.evaluate(() => {
        if (self.origin !== "null" || window === parent) return 0;
        parent.postMessage({ t: "snapshot", snapshot: new Uint8Array(2 << 20).fill(9) }, "*");
        return 1;
      });
    } catch (_) {
      /* not reachable */
    }
  }
  assert.equal(posted, 1, "the den page was reached");
  await sleep(3000);
  const [after] = await entries();
  assert.equal(after.hash, before.hash, "the entry was replaced by the den page's bytes");
  const again = await visit();
  assert.equal(again.info.warmStart, "hit");
});

/** Rewrites the entry: `edit` gets its bytes and headers and returns the new ones. */
async function rewrite(edit) {
  await page.evaluate(async (edit) => {
    const c = await caches.open("foxden-warm-v2");
    const [req] = await c.keys();
    const resp = await c.match(req);
    const bytes = new Uint8Array(await resp.arrayBuffer());
    const headers = Object.fromEntries(resp.headers.entries());
    const hex = async (b) => Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", b)), (x) => x.toString(16).padStart(2, "0")).join("");
    // eslint-disable-next-line no-new-func
    const out = await new Function("bytes", "headers", "hex", `return (${edit})(bytes, headers, hex)`)(bytes, headers, hex);
    await c.put(req, new Response(out.bytes, { headers: out.headers }));
  }, edit.toString());
}

test(`${B}: the entry is packed (zero pages left out); a wrong length header costs only time`, async () => {
  const entry = await waitForEntry();
  const info = await page.evaluate(async () => {
    const c = await caches.open("foxden-warm-v2");
    const [req] = await c.keys();
    const resp = await c.match(req);
    const b = new Uint8Array(await resp.arrayBuffer());
    return { magic: String.fromCharCode(...b.subarray(0, 4)), total: Number(new DataView(b.buffer).getBigUint64(8, true)), length: resp.headers.get("x-foxden-length") };
  });
  assert.equal(info.magic, "FXZP");
  assert.equal(String(info.total), info.length);
  assert.ok(entry.size < info.total * 0.8, `packed ${entry.size} of ${info.total} bytes`);
  // The length header is only a hint (the den page starts Pyodide for it before the entry is
  // checked): a wrong one still resumes from the checked snapshot.
  await rewrite(async (bytes, headers) => ({ bytes, headers: { ...headers, "x-foxden-length": String(Number(headers["x-foxden-length"]) + 65536) } }));
  const v = await visit();
  assert.equal(v.info.warmStart, "hit");
  assert.equal(v.result, "(42, False, True, 4)", JSON.stringify(v.error));
  // A packed form whose layout does not add up (right hash, one run cut short) is dropped.
  await rewrite(async (bytes, headers, hex) => {
    const cut = bytes.slice(0, bytes.length - 1);
    return { bytes: cut, headers: { ...headers, "x-foxden-sha256": await hex(cut) } };
  });
  const bad = await visit();
  assert.equal(bad.info.warmStart, "miss");
  assert.equal(bad.result, "(42, False, True, 4)", JSON.stringify(bad.error));
  await waitForEntry();
  const again = await visit();
  assert.equal(again.info.warmStart, "hit");
});

test(`${B}: warmStart: false and warm-start="off" keep nothing and use nothing`, async () => {
  await page.evaluate(() => window.foxden.clearWarmCache());
  const off = await visit({ warmStart: false });
  assert.equal(off.info.warmStart, "off");
  assert.equal(off.result, "(42, False, True, 4)");
  await page.evaluate(() => window.den.reset()); // the den page has made its snapshot by now or soon
  await sleep(3000);
  assert.deepEqual(await entries(), []);
  const el = await page.evaluate(async () => {
    const el = document.createElement("foxden-den");
    el.setAttribute("name", "warm-el");
    el.setAttribute("warm-start", "off");
    document.body.append(el);
    const info = await el.ready;
    const bad = document.createElement("foxden-den");
    bad.setAttribute("name", "warm-bad");
    bad.setAttribute("warm-start", "sometimes");
    const err = new Promise((r) => bad.addEventListener("error", (e) => r(e.detail.error), { once: true }));
    document.body.append(bad);
    const { option, message } = await err;
    el.remove();
    bad.remove();
    return { warm: info.warmStart, prop: el.warmStart, option, message };
  });
  // The message names the attribute and what an attribute takes (not warmStart's true or false).
  assert.deepEqual(el, {
    warm: "off",
    prop: "off",
    option: "warm-start",
    message: '<foxden-den> attribute warm-start: warm-start must be "on" or "off"',
  });
  assert.equal(await page.evaluate(() => window.foxden.clearWarmCache()), true);
});

test(`${B}: an entry the den page never becomes ready from is dropped at the load timeout`, async () => {
  await visit();
  const { url } = await waitForEntry();
  const hung = await page.evaluate(async () => {
    const { openDen, iframeRuntime } = window.foxden;
    try {
      await openDen({ name: "warm-hang", runtime: iframeRuntime({ denUrl: "/e2e/hostile-den.html?warm=hang", loadTimeoutMs: 10000 }) });
      return "opened";
    } catch (e) {
      return `${e.name}:${e.stage}`;
    }
  });
  assert.equal(hung, "DenLoadError:timeout");
  let left = [];
  for (let i = 0; i < 20; i++) {
    left = await entries();
    if (left.length === 0) break;
    await sleep(250);
  }
  assert.deepEqual(left, [], `the entry ${url} was kept`);
  // The next visit boots from scratch and keeps a new entry.
  const v = await visit();
  assert.equal(v.info.warmStart, "miss");
  assert.equal(v.result, "(42, False, True, 4)");
  await waitForEntry();
});

test(`${B}: a den page reloaded while the den opens (its container moved) fails the opening at once and keeps the warm entry`, async () => {
  if ((await entries()).length !== 1) await visit();
  const before = await waitForEntry();
  await page.reload({ waitUntil: "load" });
  await page.waitForFunction(() => window.foxdenLoaded === true);
  const r = await page.evaluate(async () => {
    const { openDen, iframeRuntime } = window.foxden;
    const panel = document.createElement("div");
    document.body.append(panel);
    const t0 = performance.now();
    // Moved just after the iframe's first load, in which the host posts `connect`: the page
    // that got it is replaced by a fresh load that was never connected.
    new MutationObserver((_, obs) => {
      const f = panel.querySelector("iframe");
      if (!f) return;
      obs.disconnect();
      f.addEventListener("load", () => setTimeout(() => document.body.prepend(panel), 30), { once: true });
    }).observe(panel, { childList: true });
    try {
      const den = await openDen({ name: "moved", runtime: iframeRuntime({ container: panel, loadTimeoutMs: 20000 }) });
      const ok = (await den.run("1 + 1")).result;
      await den.close();
      return { opened: true, ok, ms: performance.now() - t0 };
    } catch (e) {
      return { opened: false, name: e.name, stage: e.stage, message: e.message, ms: performance.now() - t0 };
    }
  });
  if (r.opened) {
    console.log(`# ${B}: the den page was ready before the move: the den opened`);
    assert.equal(r.ok, "2");
  } else {
    assert.deepEqual([r.name, r.stage], ["DenLoadError", "iframe"], JSON.stringify(r));
    assert.ok(r.ms < 10000, `it failed only after ${Math.round(r.ms)} ms`);
  }
  const after = await entries();
  assert.ok(after.some((e) => e.hash === before.hash), `the warm entry was dropped: ${JSON.stringify(after)}`);
});
